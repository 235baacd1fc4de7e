"""Missing values first-class everywhere, and every number once, every green true (issue 36).

Cheap regression tests of each root fix: a grid column keeps "missing is a value"; the pure
pointer's cost counts the missing category; the comparison's table takes a missing category and
leaves out the records without a number; the Inference page's frequency table keeps the missing
cells; no green verdict without a public domain, on a weak release or for the audit; the
calibration table prints a δ rounded up with the guarantee's digits; a composed ε of 0 is never
printed alone. Expected values come from the data the tests write, not from ``core``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core import data as core_data
from core import formatting, privacy
from core.evaluation import comparison_table
from core.evaluation.compare import calibration_table
from core.mechanisms import pypp_release
from ui import compute, widgets


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    """age: numbers with 5 missing; region: three public categories with 4 missing."""
    rng = np.random.default_rng(5)
    age = rng.integers(18, 80, 200).astype(float)
    age[[3, 30, 60, 90, 120]] = np.nan
    region = pd.Series(rng.choice(["north", "south", "east"], 200), dtype=object)
    region[[1, 2, 50, 51]] = None
    return pd.DataFrame({"age": age, "region": region})


REGION = core_data.ColumnSpec("region", kind="categorical", categories=("north", "south", "east"), missing="value")


def test_grid_column_keeps_missing_as_a_value(frame):
    spec = core_data.ColumnSpec("age", bounds=(0, 100), grid=5, missing="value")   # refused before
    prepared = core_data.prepare_frame(frame, [spec])
    assert prepared.n == 200
    # the missing cell is one more public category: 21 grid points + 1
    assert spec.public_domain == 22 and prepared.public_domain == 22
    release = pypp_release(prepared.table.atoms, prepared.table.counts, 0.0, 50.0, 300, np.random.default_rng(1),
                           base=prepared.bases)
    ages = prepared.to_original(release.values)["age"]
    assert ages.isna().any()                                          # released as empty cells
    assert set(ages.dropna() % 5) == {0}                              # grid points only
    # σ < 0 names the unobserved cells, the missing one among them when the data have none
    pure = pypp_release(prepared.table.atoms, prepared.table.counts, -1.0, 22.0, 60, np.random.default_rng(1),
                        base=prepared.bases)
    released = prepared.to_original(pure.values)["age"]
    assert set(released.dropna() % 5) == {0} and len(released) == 60
    full = core_data.prepare_frame(frame.dropna(subset=["age"]), [spec])
    assert full.public_domain == 22                                   # the domain is the same without missing cells
    # the missing cell is one of the 22 − k unobserved cells a new block is named from: it appears (P ≈ 0.65 a
    # draw; twenty draws all without it have probability below 1e-9) and nothing outside the domain does
    named_missing = False
    for seed in range(20):
        draw = pypp_release(full.table.atoms, full.table.counts, -1.0, 22.0, 400, np.random.default_rng(seed),
                            base=full.bases)
        assert draw.new_counts.size <= 22 - full.table.k
        ages = full.to_original(draw.values)["age"]
        assert set(ages.dropna() % 5) == {0}
        if ages.isna().any():
            named_missing = True
            break
    assert named_missing
    drop = core_data.ColumnSpec("age", bounds=(0, 100), grid=5, missing="drop")
    assert drop.public_domain == 21


def test_pure_pointer_cost_counts_the_missing_category(frame):
    """The stand-in label makes the planner count a missing cell as the extra public category."""
    stand_in, categories = compute._missing_as_category(frame, {"region": ("north", "south", "east", None)})
    assert categories["region"] == ("north", "south", "east", "(missing)")
    assert (stand_in["region"] == "(missing)").sum() == frame["region"].isna().sum() == 4
    assert frame["region"].isna().sum() == 4                            # the caller's frame is untouched
    clash, labels = compute._missing_as_category(frame, {"region": ("(missing)", None)})
    assert labels["region"] == ("(missing)", "(missing)'")


def test_comparison_table_takes_a_missing_category_and_leaves_out_missing_numbers(frame):
    prepared = core_data.prepare_frame(frame, [REGION])
    table = comparison_table(prepared)                                   # KeyError: None before
    assert table.columns[0].labels == ("north", "south", "east", None)
    shares = table.columns[0].shares(table.atoms, table.counts)
    assert shares[3] == pytest.approx(4 / 200)
    both = core_data.prepare_frame(frame, [core_data.ColumnSpec("age", bounds=(0, 100), missing="value"), REGION])
    table = comparison_table(both)
    assert table.missing_left_out == 5 and table.n == 195
    assert np.isfinite(table.atoms).all()


def test_inference_frequency_table_keeps_the_missing_cells(frame):
    prepared = core_data.prepare_frame(frame, [REGION])
    values, counts = compute.column_table(prepared, "region")
    assert values[-1] is None and counts[-1] == 4 and counts.sum() == 200
    numeric = core_data.prepare_frame(frame, [core_data.ColumnSpec("age", bounds=(0, 100), missing="value")])
    values, counts = compute.column_table(numeric, "age")
    assert np.isnan(values[-1]) and counts[-1] == 5 and counts.sum() == 200


def _spec(regime: str, **kw) -> privacy.ReleaseSpec:
    args = dict(sigma=0.0, theta=2.0, m=100, n=7_000, eps=2.5, delta=0.1, releases=1)
    if regime == "dm":
        args.update(sigma=-1.0, theta=11.0, m=5)
    return privacy.ReleaseSpec(**{**args, **kw})


def test_no_green_without_a_public_domain_or_on_a_weak_release():
    dm = _spec("dm")
    guarantee = dm.regime.release_guarantee(dm)
    assert guarantee.verdict == "pure"
    blocked = widgets.public_domain_gap(dm, None)
    assert blocked and "Not releasable yet" in blocked and "z = 11" in blocked
    assert widgets.public_domain_gap(dm, 11) is None
    assert not widgets.green_verdict(guarantee, (), blocked) and widgets.green_verdict(guarantee)
    weak = _spec("dp")
    weak_guarantee = weak.regime.release_guarantee(weak)
    assert weak_guarantee.verdict == "weak" and not widgets.green_verdict(weak_guarantee)
    assert widgets.public_domain_gap(weak, None) is None
    assert not widgets.green_verdict(guarantee, ["the bounds were read off the confidential data"])


def test_calibration_table_prints_delta_rounded_up_as_the_guarantee():
    table = pd.DataFrame({"label": ["PYPP"] * 2, "parameter": ["theta", "delta_global"], "value": [2.0, 0.0016299],
                          "reason": ["", ""], "guarantee": ["approximate (ε, δ)-DP, global (ε = 2.5, δ = 0.00163)"] * 2,
                          "meets_target": [True, True], "caveat": ["", ""], "mechanism": ["pypp"] * 2})
    shown = calibration_table(table)
    assert list(shown["value"]) == ["2", "0.00163"]
    assert float(shown["value"][1]) >= 0.0016299 and shown["value"][1] in shown["guarantee"][1]


def test_a_composed_eps_of_zero_is_never_printed_alone():
    assert formatting.format_composed(0.0, 0.0141) == "(ε, δ) = (0, 0.0141): all of the loss in δ"
    assert formatting.format_composed(1.23456, 0.01) == "total ε = 1.24"


def test_the_reading_record_states_the_files_size_not_the_heads():
    # issue 36: the curator report's file size was the head's on the lean path
    content = ("x\n" + "\n".join(str(i) for i in range(400_000))).encode()
    assert len(content) > core_data.HEAD_BYTES
    assert core_data.read_file_head(content, name="a.csv").decisions.size_bytes == len(content)
