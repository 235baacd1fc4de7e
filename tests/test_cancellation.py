"""Long runs stop when their session ends: core's loops report progress often enough, and the
dashboard's progress callback (ui.compute.cancellable) stops the run at a report once the
session is gone."""
from __future__ import annotations

import numpy as np
import pytest

from core.evaluation import audit as core_audit
from core.evaluation.compare import calibrate, run_comparison
from ui import compute


class Cancelled(BaseException):
    """What a caller's progress callback raises to stop a run (Streamlit's StopException is one)."""


def _stopping_after(calls: int):
    seen = []

    def progress(fraction, message):
        seen.append(message)
        if len(seen) > calls:
            raise Cancelled

    return progress, seen


def test_comparison_stops_at_the_first_report_refused():
    rng = np.random.default_rng(0)
    x = rng.random((400, 2))
    cal = calibrate(400, 1.0, 0.05, 50, theta=1.0, d=2, bins=10)
    progress, seen = _stopping_after(1)
    with pytest.raises(Cancelled):
        run_comparison(x, cal, runs=3, rng=np.random.default_rng(1), progress=progress, yardsticks=True)
    assert len(seen) == 2   # no work after the refused report


def test_comparison_reports_inside_its_long_stages():
    rng = np.random.default_rng(0)
    x = rng.random((300, 2))
    cal = calibrate(300, 1.0, 0.05, 40, theta=1.0, d=2, bins=10, mechanisms=["smoothed_histogram", "pypp"])
    seen = []
    run_comparison(x, cal, runs=2, rng=np.random.default_rng(1), progress=lambda f, m: seen.append(m),
                   yardsticks=True)
    assert any(m.startswith("utility metrics: column") for m in seen)
    assert sum(m.startswith("yardsticks:") for m in seen) == 2


def test_audit_simulation_stops_when_the_callback_says_so():
    progress, seen = _stopping_after(0)
    with pytest.raises(Cancelled):
        core_audit.pypp_audit_samples(np.array([3, 2, 1, 1]), 0.0, 1.0, 5, 10**6, np.random.default_rng(0),
                                      progress=progress)
    assert len(seen) == 1


def test_cancellable_stops_the_run_once_the_session_ended(monkeypatch):
    stopped = []

    def stop():
        stopped.append(True)
        raise Cancelled

    monkeypatch.setattr(compute.st, "stop", stop)
    shown = []
    ended = [False]
    report = compute.cancellable(lambda f, m: shown.append((f, m)), ended=lambda: ended[0], interval=3600.0)
    report(0.1, "first")
    report(0.2, "throttled")      # within the interval: not shown
    report(1.0, "done")           # the end is always shown
    assert shown == [(0.1, "first"), (1.0, "done")] and not stopped
    ended[0] = True
    with pytest.raises(Cancelled):
        report(0.5, "after the tab closed")
    assert stopped == [True] and len(shown) == 2


def test_session_ended_is_false_outside_a_script_run():
    assert compute.session_ended() is False
