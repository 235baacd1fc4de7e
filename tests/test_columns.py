"""Tests of core.evaluation.columns and the comparison of mixed numeric and categorical columns
(docs/mathematics.md §4.7, docs/quality.md §8): the table on the unit box, the calibration on the
product domain, W1 in original units, TV of categorical marginals, skipped baselines, bad input."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from core import data as core_data
from core.evaluation import OTHER_CATEGORY, ComparisonTable, comparison_table
from core.evaluation.compare import (
    DEFAULT_MECHANISMS,
    HISTOGRAM_MECHANISMS,
    calibrate,
    comparison_summary,
    quality_by_mechanism,
    run_comparison,
    sweep_comparison,
)
from core.mechanisms import category_positions, smoothed_histogram_lambda

REGIONS = ("north", "south", "east", "west", "islands")   # "islands": public, never observed


@pytest.fixture(scope="module")
def frame():
    rng = np.random.default_rng(44)
    n = 400
    out = pd.DataFrame({"wage": np.round(rng.lognormal(7.0, 0.5, n), 2),
                        "exper": rng.integers(0, 45, n),
                        "region": rng.choice(["north", "south", "east", "west"], n, p=[0.4, 0.3, 0.2, 0.1])})
    return out


def _specs(categories=REGIONS, log=False):
    return [core_data.ColumnSpec("wage", bounds=(1.0, 20_000.0), log=log),
            core_data.ColumnSpec("exper", bounds=(0, 50)),
            core_data.ColumnSpec("region", kind="categorical", categories=categories)]


def test_comparison_table_puts_every_column_on_the_unit_box(frame):
    prepared = core_data.prepare(frame, _specs())
    table = comparison_table(prepared)
    assert isinstance(table, ComparisonTable)
    assert table.names == ("wage", "exper", "region") and table.n == len(frame) and table.k == prepared.table.k
    assert table.levels == (None, None, len(REGIONS)) and table.unlisted == ()
    assert np.all((table.atoms >= 0) & (table.atoms <= 1))
    region = table.columns[2]
    assert region.labels == REGIONS and region.public
    # categories at their positions, in the public list's order, and back to their labels
    np.testing.assert_array_equal(region.category_labels(table.atoms[:, 2]), prepared.table.atoms[:, 2])
    assert set(table.atoms[:, 2]) <= set(category_positions(np.arange(len(REGIONS)), len(REGIONS)))
    # numeric columns back to original units exactly (old values through the lookup)
    np.testing.assert_array_equal(table.columns[0].original(table.atoms[:, 0]),
                                  prepared.to_original(prepared.table.atoms)["wage"].to_numpy(float))
    assert table.columns[2].shares(table.atoms[:, 2], table.counts)[-2:].tolist() == [0.0, 0.0]   # islands, new
    # without a public list: the observed categories, sorted, and the column is named as unlisted
    unlisted = comparison_table(core_data.prepare(frame, _specs(categories=None)))
    assert unlisted.columns[2].labels == ("east", "north", "south", "west") and unlisted.unlisted == ("region",)
    # numeric only: no levels (the histograms are the all-numeric ones)
    assert comparison_table(core_data.prepare(frame, _specs()[:2])).levels is None
    with pytest.raises(ValueError, match="'wage' is not scaled"):
        comparison_table(core_data.prepare(frame, [core_data.ColumnSpec("wage", bounds=(1.0, 2e4), scale=False)]))


def test_calibration_on_the_product_domain(frame):
    table = comparison_table(core_data.prepare(frame, _specs()))
    n, m, eps, bins = table.n, 100, 1.0, 6
    cal = calibrate(n, eps, 1e-3, m, theta=2.0, d=3, bins=bins, levels=table.levels)
    cells = bins * bins * len(REGIONS)
    smoothed = cal.mechanism("smoothed_histogram")
    assert smoothed.cells(3) == cells
    row = cal.table[(cal.table.mechanism == "smoothed_histogram") & (cal.table.parameter == "lambda")]
    assert float(row["value"].iloc[0]) == pytest.approx(smoothed_histogram_lambda(n, cells, m, eps))
    assert cal.skipped == {} and cal.levels == table.levels


def test_mixed_comparison_metrics_in_each_columns_own_terms(frame):
    prepared = core_data.prepare(frame, _specs(log=True))
    table = comparison_table(prepared)
    m, runs = 150, 6
    cal = calibrate(table.n, 2.0, 1e-3, m, theta=3.0, d=3, bins=8, levels=table.levels)
    res = run_comparison(table, cal, runs=runs, rng=np.random.default_rng(3))
    assert set(res.column) == {"wage", "exper", "region", "(joint)"}
    assert set(res.mechanism) == set(DEFAULT_MECHANISMS)
    num, cat = res[res.column.isin(["wage", "exper"])], res[res.column == "region"]
    assert num.W1.notna().all() and num.TV.isna().all() and (num.W1_method == "exact-1d").all()
    assert cat.W1.isna().all() and cat["mean"].isna().all() and cat.TV.between(0, 1).all()
    assert res[res.column == "(joint)"].W1.notna().all()

    # the same releases, recomputed literally: W1 between the original-unit values and TV of the labels
    releases = {}
    root = np.random.default_rng(3)
    import zlib
    seed = int(root.integers(0, 2**63 - 1))
    for mech in cal.mechanisms:
        rng = np.random.default_rng([seed, zlib.crc32(mech.name.encode())])
        releases[mech.name] = mech.release_runs(table.atoms, m, runs, rng, counts=table.counts)
    confidential = prepared.to_original(prepared.table.atoms)
    for name in ("pypp", "laplace_histogram", "bootstrap"):
        z = releases[name]
        rows = res[res.mechanism == name]
        for r in range(runs):
            wage = prepared.column_info[0].inverse(z[r, :, 0]).astype(float)
            expected = stats.wasserstein_distance(wage, confidential["wage"].to_numpy(float),
                                                  v_weights=prepared.table.counts)
            got = rows[(rows.column == "wage") & (rows.run == r)].W1.iloc[0]
            assert got == pytest.approx(expected, rel=1e-9, abs=1e-9)
            labels = table.columns[2].category_labels(z[r, :, 2])
            q = pd.Series(labels).value_counts(normalize=True)
            p = pd.Series(prepared.table.counts).groupby(confidential["region"].to_numpy()).sum() / table.n
            tv = 0.5 * (q.reindex(p.index, fill_value=0) - p).abs().sum() + 0.5 * q.drop(p.index, errors="ignore").sum()
            assert rows[(rows.column == "region") & (rows.run == r)].TV.iloc[0] == pytest.approx(tv, abs=1e-12)
    # the histogram baselines release the public categories only; PYPP may add new labels
    for name in HISTOGRAM_MECHANISMS:
        if name in releases:
            assert OTHER_CATEGORY not in set(table.columns[2].category_labels(releases[name][..., 2].ravel()))

    summary = comparison_summary(res)
    conf = summary[summary.mechanism == "confidential"].set_index("column")
    assert conf.loc["wage", "mean"] == pytest.approx(np.average(confidential["wage"], weights=prepared.table.counts))
    assert conf.loc["region", "TV"] == 0.0 and np.isnan(conf.loc["region", "W1"])
    quality, reports = quality_by_mechanism(table, None, {k: v[0] for k, v in releases.items()})
    assert set(quality.columns) >= {"wage", "exper", "region"} and quality.region.between(0, 1).all()
    assert set(reports["bootstrap"].columns.metric) == {"KSComplement", "TVComplement"}


def test_unlisted_categories_skip_the_histogram_baselines_and_say_why(frame):
    table = comparison_table(core_data.prepare(frame, _specs(categories=None)))
    cal = calibrate(table.n, 1.0, 1e-3, 80, theta=2.0, d=3, levels=table.levels, unlisted=table.unlisted)
    assert [mech.name for mech in cal.mechanisms] == ["pypp", "pypp_old_values", "bootstrap"]
    assert set(cal.skipped) == set(HISTOGRAM_MECHANISMS) - {"dirichlet_multinomial_data_dependent"}
    assert all("'region'" in reason and "public category list" in reason for reason in cal.skipped.values())
    res = run_comparison(table, cal, runs=3, rng=np.random.default_rng(1))
    assert set(res.mechanism) == {"pypp", "pypp_old_values", "bootstrap"}
    with pytest.raises(ValueError, match="'region'.*public category list"):
        calibrate(table.n, 1.0, 1e-3, 80, theta=2.0, d=3, levels=table.levels, unlisted=table.unlisted,
                  mechanisms=["laplace_histogram"])
    # a calibration for other column domains is refused, not silently used
    numeric = calibrate(table.n, 1.0, 1e-3, 80, theta=2.0, d=3)
    with pytest.raises(ValueError, match="levels"):
        run_comparison(table, numeric, runs=2, rng=np.random.default_rng(1))
    with pytest.raises(ValueError, match="counts"):
        run_comparison(table, cal, counts=table.counts, runs=2, rng=np.random.default_rng(1))


def test_sweep_on_a_mixed_table(frame):
    table = comparison_table(core_data.prepare(frame, _specs()))
    out = sweep_comparison(table, [0.5, 4.0], 1e-3, 60, theta=2.0, runs=3, rng=np.random.default_rng(2), bins=4,
                           mechanisms=["pypp", "laplace_histogram"])
    assert set(out.target_eps) == {0.5, 4.0} and set(out.column) == {"wage", "exper", "region", "(joint)"}
    assert out[out.column == "region"].TV.between(0, 1).all()
    # without a public list the sweep runs what can run at every ε
    unlisted = comparison_table(core_data.prepare(frame, _specs(categories=None)))
    out = sweep_comparison(unlisted, [0.5, 4.0], 1e-3, 60, theta=2.0, runs=2, rng=np.random.default_rng(2),
                           mechanisms=["pypp", "laplace_histogram"])
    assert set(out.mechanism) == {"pypp"}
