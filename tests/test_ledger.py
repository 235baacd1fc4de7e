"""The privacy ledger (docs/audit.md §8): exact accounting, budgets, refusals, reservations
under concurrency and crashes, SQLite and a real PostgreSQL giving the same ledger."""

from __future__ import annotations

import math
import multiprocessing
import os
import shutil
import signal
import sqlite3
import subprocess
import tempfile
from fractions import Fraction
from pathlib import Path

import pytest

from core import ledger as L
from core.privacy import DIRICHLET_PROCESS, ReleaseSpec
from core.privacy.verdict import composed_singleton_exact, round_up

FP, FP2 = "a" * 64, "b" * 64
SHA = "c" * 64
N, THETA = 100, 2.0


def dp_charge(m: int, theta: float = THETA, n: int = N) -> L.Charge:
    return L.charge_of_spec(ReleaseSpec(0.0, theta, m, n, eps=1.0, delta=0.5))


def dm_charge(m: int, alpha: float = 2.0, z: int = 4) -> L.Charge:
    return L.charge_of_spec(ReleaseSpec(-alpha, z * alpha, m, N, eps=50.0))


@pytest.fixture
def ledger(tmp_path):
    with L.open_ledger(tmp_path / "ledger.sqlite") as opened:
        yield opened


def _release(ledger, name, charge, fp=FP, **kw):
    reservation = ledger.reserve(name, charge, fingerprint=fp, n=N, by="tester", spec={"m": 1}, **kw)
    reservation.complete(SHA)
    return reservation.entry


# ---------------------------------------------------------------------- accounting
def test_a_sigma0_charge_is_zero_eps_and_the_exact_singleton_term():
    charge = dp_charge(10)
    assert charge.kind == "singleton" and charge.eps == 0
    assert charge.delta == composed_singleton_exact(10, THETA, N, 1) == Fraction(10, 10 + 2 + N - 1)
    # the planned releases of a spec are not charged: the ledger counts releases made
    assert L.charge_of_spec(ReleaseSpec(0.0, THETA, 10, N, eps=1.0, delta=0.5, releases=7)) == charge


def test_equal_sigma0_releases_compose_to_the_k_release_profile():
    for k in (1, 2, 5):
        spend = L.compose([dp_charge(7)] * k)
        assert spend.delta == composed_singleton_exact(7, THETA, N, k)
        assert spend.delta_up == round_up(composed_singleton_exact(7, THETA, N, k)) and spend.eps == 0


def test_mixtures_add_eps_and_multiply_survivals():
    a, b, c = dp_charge(3), dm_charge(5), dp_charge(9, theta=0.5)
    spend = L.compose([a, b, c])
    assert spend.eps == b.eps and b.kind == "pure" and b.eps >= Fraction(math.log1p(5 / 2.0))
    assert spend.delta == 1 - (1 - a.delta) * (1 - c.delta)
    guarantee = L.charge_of_guarantee(DIRICHLET_PROCESS.release_guarantee(ReleaseSpec(0.0, THETA, 3, N, eps=1.0,
                                                                                      delta=0.5)))
    assert guarantee.kind == "approximate" and guarantee.delta >= a.delta and guarantee.eps == 1


def test_a_release_without_a_global_guarantee_cannot_be_charged():
    with pytest.raises(ValueError, match="global"):
        L.charge_of_spec(ReleaseSpec(0.5, 1.0, 10, N, eps=1.0, delta=0.1))


# ---------------------------------------------------------------------- budgets
def test_sigma0_budget_is_exhausted_exactly(ledger):
    delta_budget, m = 0.05, 2
    ledger.set_budget("d", 1.0, delta_budget, by="board")
    made = 0
    with pytest.raises(L.BudgetExceeded) as refused:
        while True:
            _release(ledger, "d", dp_charge(m))
            made += 1
    # exactly the largest k with 1 − (1 − T₁)^k ≤ δ: the exact profile of k releases
    k = made
    assert composed_singleton_exact(m, THETA, N, k) <= Fraction(delta_budget) < composed_singleton_exact(m, THETA, N, k + 1)
    entry = ledger.dataset("d")
    assert entry.cumulative == (0.0, round_up(composed_singleton_exact(m, THETA, N, k)))
    assert [r.index for r in entry.releases] == list(range(1, k + 1))
    eps_left, delta_left = refused.value.remaining
    assert eps_left == 1.0 and 0 <= delta_left < float(dp_charge(m).delta)
    assert "Remaining" in str(refused.value) and "Nothing was recorded" in str(refused.value)
    # a smaller release is admitted exactly when its δ is within what remains
    one = dp_charge(1)
    if one.delta <= Fraction(delta_left):
        assert _release(ledger, "d", one).index == k + 1
    else:
        with pytest.raises(L.BudgetExceeded):
            _release(ledger, "d", one)


def test_pure_budget_is_exhausted_by_adding_eps(ledger):
    charge = dm_charge(3)                    # ε = log(1 + 3/2) ≈ 0.916, rounded up
    ledger.set_budget("p", 3.0, by="board")   # δ = 0: pure releases only
    made = 0
    with pytest.raises(L.BudgetExceeded):
        while True:
            _release(ledger, "p", charge)
            made += 1
    assert made == 3 and ledger.dataset("p").cumulative[1] == 0.0
    with pytest.raises(L.BudgetExceeded):     # a σ = 0 release costs δ > 0: refused by a pure budget
        _release(ledger, "p", dp_charge(1))


def test_refusal_writes_nothing(ledger):
    ledger.set_budget("d", 1.0, 1e-6, by="board")
    with pytest.raises(L.BudgetExceeded):
        ledger.reserve("d", dp_charge(5), fingerprint=FP, n=N, by="x")
    assert ledger.release_count() == 0
    entry = ledger.dataset("d")
    assert entry.fingerprint is None and entry.n is None and entry.releases == ()
    with pytest.raises(L.UnknownDataset, match="no budget"):
        ledger.reserve("other", dp_charge(1), fingerprint=FP, n=N, by="x")
    assert ledger.release_count() == 0


def test_changed_data_are_refused_unless_accepted_then_flagged(ledger):
    ledger.set_budget("d", 1.0, 0.5, by="board")
    _release(ledger, "d", dp_charge(1))
    with pytest.raises(L.DataChanged):
        ledger.reserve("d", dp_charge(1), fingerprint=FP2, n=N, by="x")
    assert ledger.release_count() == 1
    assert ledger.preview("d", dp_charge(1), fingerprint=FP2, n=N).data_changed
    entry = _release(ledger, "d", dp_charge(1), fp=FP2, accept_changed_data=True)
    assert entry.data_changed and ledger.dataset("d").fingerprint == FP2
    assert not _release(ledger, "d", dp_charge(1), fp=FP2).data_changed


def test_reservation_states_preview_and_block(ledger):
    ledger.set_budget("d", 2.0, 0.5, by="board")
    preview = ledger.preview("d", dp_charge(4))
    assert preview.fits and preview.after.delta == dp_charge(4).delta
    reservation = ledger.reserve("d", dp_charge(4), fingerprint=FP, n=N, by="x")
    assert ledger.dataset("d").releases[0].state == "incomplete"      # pending: counted, not confirmed
    assert reservation.block == {"dataset": "d", "release_index": 1,
                                 "cumulative": {"eps": 0.0, "delta": round_up(dp_charge(4).delta)},
                                 "budget": {"eps": 2.0, "delta": 0.5}}
    with pytest.raises(ValueError, match="bundle_sha256"):
        reservation.complete("not a hash")
    assert reservation.complete(SHA).state == "complete"
    with pytest.raises(L.LedgerError, match="already complete"):
        reservation.complete(SHA)
    with pytest.raises(RuntimeError):
        with ledger.reserve("d", dp_charge(4), fingerprint=FP, n=N, by="x"):
            raise RuntimeError("disk full")
    last = ledger.dataset("d").releases[-1]
    assert last.status == "incomplete" and last.index == 2 and ledger.dataset("d").spend.releases == 2


def test_bad_budgets_and_names_are_refused(ledger):
    for eps, delta in ((-1, 0), (float("nan"), 0), (1, 1.0), (1, -0.1), (float("inf"), 0)):
        with pytest.raises(ValueError):
            ledger.set_budget("d", eps, delta, by="b")
    with pytest.raises(ValueError, match="dataset"):
        ledger.set_budget(" ", 1, by="b")
    with pytest.raises(ValueError, match="in-memory"):
        L.open_ledger("sqlite://")


def test_the_default_location_env_and_config(tmp_path, monkeypatch):
    monkeypatch.delenv(L.LEDGER_ENV, raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv(L.CONFIG_ENV, str(tmp_path / "missing.toml"))
    assert L.resolve_location() == str(tmp_path / "data" / "bnp-synth" / "ledger.sqlite") == str(L.default_path())
    config = tmp_path / "config.toml"
    config.write_text('[ledger]\nlocation = "/srv/team.sqlite"\n')
    monkeypatch.setenv(L.CONFIG_ENV, str(config))
    assert L.resolve_location("default") == "/srv/team.sqlite"
    assert L.resolve_location(config={"location": "postgresql+psycopg://u@h/db"}) == "postgresql+psycopg://u@h/db"
    monkeypatch.setenv(L.LEDGER_ENV, str(tmp_path / "env.sqlite"))
    assert L.resolve_location() == str(tmp_path / "env.sqlite")
    assert L.resolve_location(tmp_path / "x.sqlite") == str(tmp_path / "x.sqlite")
    assert L.display_location("postgresql+psycopg://u:secret@h/db") == "postgresql+psycopg://u:***@h/db"
    with L.open_ledger() as opened:
        assert opened.location == str(tmp_path / "env.sqlite")
    assert (tmp_path / "env.sqlite").stat().st_mode & 0o777 == 0o600


# ---------------------------------------------------------------------- concurrency and crashes
def _worker(path: str, attempts: int, queue) -> None:
    made = 0
    with L.open_ledger(path) as ledger:
        for _ in range(attempts):
            try:
                ledger.reserve("d", dp_charge(3), fingerprint=FP, n=N, by=f"p{os.getpid()}").complete(SHA)
                made += 1
            except L.BudgetExceeded:
                pass
    queue.put(made)


def test_concurrent_processes_never_overspend(tmp_path):
    path = str(tmp_path / "ledger.sqlite")
    with L.open_ledger(path) as ledger:
        # room for exactly 5 releases of T₁ = 3/104
        budget = round_up(composed_singleton_exact(3, THETA, N, 5))
        ledger.set_budget("d", 1.0, budget, by="board")
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    workers = [context.Process(target=_worker, args=(path, 3, queue)) for _ in range(3)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(60)
        assert w.exitcode == 0
    assert sum(queue.get(timeout=5) for _ in workers) == 5     # 9 attempts, 5 fit: never a sixth
    with L.open_ledger(path) as ledger:
        entry = ledger.dataset("d")
        assert [r.index for r in entry.releases] == list(range(1, 6))
        assert entry.spend.delta == composed_singleton_exact(3, THETA, N, 5) and entry.spend.delta <= Fraction(budget)
        assert all(r.state == "complete" for r in entry.releases)


def _killed(path: str) -> None:
    ledger = L.open_ledger(path)
    ledger.reserve("d", dp_charge(2), fingerprint=FP, n=N, by="doomed")
    os.kill(os.getpid(), signal.SIGKILL)     # between the record and the public bytes


def test_a_process_killed_mid_release_leaves_an_incomplete_record(tmp_path):
    path = str(tmp_path / "ledger.sqlite")
    with L.open_ledger(path) as ledger:
        ledger.set_budget("d", 1.0, 0.5, by="board")
    process = multiprocessing.get_context("fork").Process(target=_killed, args=(path,))
    process.start()
    process.join(60)
    assert process.exitcode == -signal.SIGKILL
    with sqlite3.connect(path) as raw:
        assert raw.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    with L.open_ledger(path) as ledger:
        entry = ledger.dataset("d")
        assert [(r.status, r.state, r.by) for r in entry.releases] == [("pending", "incomplete", "doomed")]
        assert entry.spend.delta == dp_charge(2).delta and entry.incomplete == 1      # counted as spent
        assert _release(ledger, "d", dp_charge(2)).index == 2


# ---------------------------------------------------------------------- PostgreSQL
PG_BIN = Path("/usr/local/bin")


@pytest.fixture(scope="module")
def postgres_url():
    """A real PostgreSQL on a Unix socket in a temporary directory, run as an unprivileged user
    (the server refuses root)."""
    pytest.importorskip("psycopg", reason="the PostgreSQL driver psycopg is not installed (test extra)")
    binaries = [PG_BIN / b for b in ("initdb", "pg_ctl", "postgres")]
    if not all(b.exists() for b in binaries):
        pytest.skip(f"PostgreSQL server binaries not found at {PG_BIN} (initdb, pg_ctl, postgres)")
    run_as = ["runuser", "-u", "nobody", "--"] if os.geteuid() == 0 else []
    if run_as and shutil.which("runuser") is None:
        pytest.skip("running as root and runuser is absent: PostgreSQL refuses to run as root")
    base = tempfile.mkdtemp(prefix="pg", dir="/tmp")
    if run_as:
        shutil.chown(base, "nobody", "nogroup")
    data, port = os.path.join(base, "data"), 54000 + os.getpid() % 1000
    try:
        subprocess.run(run_as + [str(PG_BIN / "initdb"), "-D", data, "-A", "trust", "-U", "postgres", "--no-sync",
                                 "-E", "UTF8"], check=True, capture_output=True, timeout=60)
        subprocess.run(run_as + [str(PG_BIN / "pg_ctl"), "-D", data, "-w", "-l", os.path.join(base, "log"),
                                 "-o", f"-k {base} -c listen_addresses= -p {port} -F", "start"],
                       check=True, capture_output=True, timeout=60)
        yield f"postgresql+psycopg://postgres@/postgres?host={base}&port={port}"
    finally:
        subprocess.run(run_as + [str(PG_BIN / "pg_ctl"), "-D", data, "-m", "immediate", "-w", "stop"],
                       capture_output=True, timeout=60)
        shutil.rmtree(base, ignore_errors=True)


def _session(ledger) -> list[dict]:
    """The same session of budgets, releases and refusals; the ledger as dicts without times."""
    ledger.set_budget("cps", 2.0, 0.03, by="board")
    ledger.set_budget("pure", 1.0, by="board")
    outcomes = []
    for charge in (dp_charge(1), dm_charge(1), dp_charge(2), dp_charge(3), dm_charge(2), dp_charge(4)):
        try:
            outcomes.append(_release(ledger, "cps", charge).index)
        except L.BudgetExceeded as exc:
            outcomes.append(("refused", exc.remaining))
    for charge in (dm_charge(1), dm_charge(1), dm_charge(1)):
        try:
            outcomes.append(_release(ledger, "pure", charge).index)
        except L.BudgetExceeded as exc:
            outcomes.append(("refused", exc.remaining))
    with pytest.raises(L.DataChanged):
        ledger.reserve("cps", dp_charge(1), fingerprint=FP2, n=N, by="x")
    out = []
    for d in ledger.datasets():
        d = d.to_dict()
        d["budget"].pop("set_at")
        for r in d["releases"]:
            r.pop("at"), r.pop("completed_at")
        out.append(d)
    return [outcomes, out]


def test_postgresql_and_sqlite_give_the_same_ledger(tmp_path, postgres_url):
    with L.open_ledger(tmp_path / "ledger.sqlite") as lite, L.open_ledger(postgres_url) as server:
        assert server.engine.dialect.name == "postgresql"
        same = _session(lite)
        assert _session(server) == same
    assert same[0][:3] == [1, 2, 3] and same[0][-1][0] == "refused"
    with L.open_ledger(postgres_url) as again:           # reopened: migrated once, data kept
        assert [d.name for d in again.datasets()] == ["cps", "pure"]


def test_postgresql_concurrent_processes_never_overspend(postgres_url):
    with L.open_ledger(postgres_url) as ledger:
        ledger.set_budget("d", 1.0, round_up(composed_singleton_exact(3, THETA, N, 5)), by="board")
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    workers = [context.Process(target=_worker, args=(postgres_url, 3, queue)) for _ in range(3)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(60)
        assert w.exitcode == 0
    assert sum(queue.get(timeout=5) for _ in workers) == 5
    with L.open_ledger(postgres_url) as ledger:
        assert [r.index for r in ledger.dataset("d").releases] == [1, 2, 3, 4, 5]


def test_the_ledger_fingerprint_is_the_file_not_the_view(tmp_path):
    # releases of other columns of one file (or with missing values dropped) are one dataset;
    # another file under the same name is flagged
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    a.write_text("x,y\n1,2\n3,4\n")
    b.write_text("x,y\n1,2\n3,5\n")
    assert L.source_fingerprint(str(a)) == L.source_fingerprint(str(a))
    assert L.source_fingerprint(str(a)) != L.source_fingerprint(str(b))
    assert L.source_fingerprint(str(tmp_path / "*.csv")) not in (L.source_fingerprint(str(a)),
                                                                  L.source_fingerprint(str(b)))
    assert L.source_fingerprint("sample:cps_earnings.csv") != L.source_fingerprint("upload:" + "0" * 64)
    for bad in (str(tmp_path / "missing.csv"), "", None):
        with pytest.raises(ValueError, match="source"):
            L.source_fingerprint(bad)
