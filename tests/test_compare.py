"""Tests of core.evaluation.compare: calibration to a common (ε, δ, m), the R-run comparison, bad input."""

from __future__ import annotations

import io
import math
import time
import zlib

import numpy as np
import ot
import pandas as pd
import pytest
from scipy import stats
from scipy.spatial import distance

from core import privacy
from core.privacy import (
    dirichlet_multinomial_alpha,
    dirichlet_sampling_alpha,
    gaussian_sigma,
    smoothed_histogram_lambda,
    truncated_dirichlet_p_min,
)
from core.evaluation.compare import (
    ALL_MECHANISMS,
    DEFAULT_MECHANISMS,
    MECHANISM_COLUMNS,
    YARDSTICK_COLUMNS,
    OldValuesPYPPMechanism,
    PYPPMechanism,
    _joint_w1,
    calibrate,
    comparison_summary,
    mechanism_table,
    quality_by_mechanism,
    run_comparison,
    sweep_comparison,
)
from core.evaluation import kde_grid, kde_l2
from core.evaluation.yardsticks import pmse_null
from guards import HANG_GUARD_S


@pytest.fixture(scope="module")
def income():
    """Rounded log-normal 'incomes', log then min–max scaled (ties and singletons)."""
    rng = np.random.default_rng(2026)
    logged = np.log(np.round(np.exp(rng.normal(10.5, 0.8, size=3000)), -2))
    return (logged - logged.min()) / (logged.max() - logged.min())


def _value(table, mechanism, parameter):
    row = table[(table.mechanism == mechanism) & (table.parameter == parameter)]
    assert len(row) == 1, (mechanism, parameter)
    return float(row["value"].iloc[0])


# ------------------------------------------------------------------ calibration
def test_calibration_table_states_what_was_chosen():
    n, eps, delta, m, bins = 3000, 2.5, 0.05, 100, 25
    cal = calibrate(n, eps, delta, m, theta=2.0, bins=bins, mechanisms=ALL_MECHANISMS)
    t = cal.table
    assert _value(t, "all", "m") == m
    assert _value(t, "laplace_histogram", "laplace_scale") == 2 / eps
    assert _value(t, "gaussian_histogram", "gaussian_sd") == gaussian_sigma(eps, delta, math.sqrt(2))
    assert _value(t, "smoothed_histogram", "lambda") == smoothed_histogram_lambda(n, bins, m, eps)
    assert _value(t, "dirichlet_multinomial", "alpha") == dirichlet_multinomial_alpha(eps, m)
    assert _value(t, "dirichlet_posterior_sampling", "alpha") == dirichlet_sampling_alpha(eps, delta)
    assert _value(t, "pypp", "theta") == 2.0
    # the exact global profile the release's verdict reads: T₁ at every ε (docs/verdicts.md §2)
    t1 = privacy.DIRICHLET_PROCESS.release_guarantee(privacy.ReleaseSpec(0.0, 2.0, m, n, eps=eps, delta=delta)).delta
    assert _value(t, "pypp", "delta_global") == t1
    assert t.reason.str.len().min() > 0
    by_mech = t.drop_duplicates("mechanism").set_index("mechanism")
    assert by_mech.loc["laplace_histogram", "kind"] == "pure"
    assert by_mech.loc["gaussian_histogram", "kind"] == "approximate"
    assert by_mech.loc["pypp", "scope"] == "global"
    assert not by_mech.loc["bootstrap", "meets_target"]
    assert not by_mech.loc["dirichlet_multinomial_data_dependent", "meets_target"]
    assert "not DP" in by_mech.loc["dirichlet_multinomial_data_dependent", "label"]
    for key in ("pypp", "laplace_histogram", "gaussian_histogram", "smoothed_histogram",
                "dirichlet_multinomial", "dirichlet_posterior_sampling"):
        assert by_mech.loc[key, "meets_target"], key
        assert by_mech.loc[key, "eps"] <= eps * (1 + 1e-9)
        assert by_mech.loc[key, "delta"] <= delta
    local = t.scope == "local"
    assert (t.caveat[~local] == "").all()
    # issue 11: the Bayesian family joins the table, each with its guarantee kind in words
    assert set(t.mechanism[local]) == {"pseudo_posterior", "pseudo_posterior_scalar"}
    assert t.caveat[local].str.contains("LOCAL").all() and not t.meets_target[local].any()
    assert by_mech.loc["truncated_dirichlet_posterior", "kind"] == "pure"
    assert by_mech.loc["truncated_dirichlet_posterior", "scope"] == "global"
    assert by_mech.loc["truncated_dirichlet_posterior", "meets_target"]
    assert _value(t, "truncated_dirichlet_posterior", "p_min") == truncated_dirichlet_p_min(eps, bins)
    assert by_mech.loc["pypp_old_values", "delta"] == t1
    assert by_mech.loc["pypp_old_values", "meets_target"]
    assert _value(t, "pseudo_posterior", "delta_alpha") == eps / 2
    assert "local, data-dependent" in by_mech.loc["pseudo_posterior", "guarantee"]


def test_largest_admissible_m_is_the_exact_global_profile():
    n, eps, delta, theta = 3000, 2.0, 0.05, 2.0
    cal = calibrate(n, eps, delta, "largest", theta=theta)
    m_star = privacy.singleton_limit(n, theta, delta)     # T₁ ≤ δ, at every ε
    assert cal.m == m_star and cal.m_rule.startswith("largest")
    assert m_star / (m_star + theta + n - 1) <= delta < (m_star + 1) / (m_star + theta + n)
    assert calibrate(n, 0.3, delta, "largest", theta=theta).m == m_star   # ε does not enter
    assert cal.mechanism("pypp").guarantee.delta <= delta
    # A fixed m above m* is accepted but flagged: PYPP does not meet the target.
    over = calibrate(n, eps, delta, m_star + 50, theta=theta)
    row = over.table[over.table.mechanism == "pypp"].iloc[0]
    assert not row["meets_target"] and row["delta"] > delta


def test_bounds_from_data_caveat():
    cal = calibrate(100, 1.0, 0.1, 5, theta=1.0, bounds_from_data=True)
    private = cal.table[cal.table.kind.isin(["pure", "approximate"])]
    assert private.caveat.str.contains("bounds").all()
    assert (cal.table[cal.table.mechanism == "bootstrap"].caveat == "").all()


# ------------------------------------------------------------------ the experiment
def test_run_comparison_tidy_frame_and_metrics(income):
    n, m, runs = income.size, 150, 12
    cal = calibrate(n, 2.5, 0.05, m, theta=2.0, bins=20)
    seen = []
    df = run_comparison(income, cal, runs=runs, rng=np.random.default_rng(7),
                        progress=lambda f, msg: seen.append((f, msg)))
    assert list(df.columns) == ["mechanism", "label", "run", "column", "W1", "W1_method", "KDE_L2", "TV", "mean", "sd",
                                "q1", "median", "q3", "eps", "delta", "guarantee", "m"]
    assert len(df) == runs * len(DEFAULT_MECHANISMS)
    assert set(df.mechanism) == set(DEFAULT_MECHANISMS)
    assert (df.W1_method == "exact-1d").all() and (df.m == m).all()
    assert df.groupby("mechanism").run.apply(lambda r: sorted(r) == list(range(runs))).all()
    assert np.all(np.isfinite(df[["W1", "KDE_L2", "mean", "sd"]].to_numpy()))
    fractions = [f for f, _ in seen]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0 and 0 <= fractions[0] < 1
    assert all(isinstance(msg, str) and msg for _, msg in seen)
    assert df.attrs["confidential"]["x0"]["mean"] == pytest.approx(income.mean())

    # Recompute the metrics from the same releases (each mechanism's generator is seeded
    # by one draw of rng and its name; the comparison releases from the data's frequency table).
    root = int(np.random.default_rng(7).integers(0, 2**63 - 1))
    atoms, counts = np.unique(income, return_counts=True)
    grid_samples = []
    releases = {}
    for mech in cal.mechanisms:
        child = np.random.default_rng([root, zlib.crc32(mech.name.encode())])
        releases[mech.name] = mech.release_runs(atoms, m, runs, child, counts=counts)
        grid_samples.append(releases[mech.name])
    grid = kde_grid(income, *grid_samples, size=1024)
    for name, z in releases.items():
        rows = df[df.mechanism == name].sort_values("run")
        want_w1 = [stats.wasserstein_distance(income, zr) for zr in z]
        assert np.allclose(rows.W1, want_w1, rtol=1e-10, atol=1e-14), name
        assert np.allclose(rows["mean"], z.mean(axis=1), rtol=1e-12)
        assert np.allclose(rows["median"], np.median(z, axis=1), rtol=1e-12)
        want_l2 = [kde_l2(income, zr, grid) for zr in z[:3]]
        assert np.allclose(rows.KDE_L2.to_numpy()[:3], want_l2, rtol=2e-3), name


def test_run_comparison_is_reproducible_and_mechanism_independent(income):
    cal_all = calibrate(income.size, 1.0, 0.05, 80, theta=1.0)
    cal_two = calibrate(income.size, 1.0, 0.05, 80, theta=1.0, mechanisms=["smoothed_histogram", "pypp"])
    a = run_comparison(income, cal_all, runs=5, rng=np.random.default_rng(3))
    b = run_comparison(income, cal_all, runs=5, rng=np.random.default_rng(3))
    c = run_comparison(income, cal_two, runs=5, rng=np.random.default_rng(3))
    pd.testing.assert_frame_equal(a, b)
    for name in ("smoothed_histogram", "pypp"):
        assert np.array_equal(a[a.mechanism == name].W1.to_numpy(), c[c.mechanism == name].W1.to_numpy())


def test_pypp_in_the_comparison_follows_the_predictive_law():
    # E[L]/m = θ/(θ + n) new values from Uniform[0, 1]; the rest are confidential atoms.
    rng = np.random.default_rng(11)
    x = np.round(rng.random(40), 1)
    theta, m, runs = 10.0, 200, 400
    mech = PYPPMechanism(2.0, theta, x.size, m)
    z = mech.release_runs(x, m, runs, rng)
    new = ~np.isin(z, np.unique(x))
    share = new.mean(axis=1)
    expected = theta / (theta + x.size)
    assert abs(share.mean() - expected) < 4 * share.std(ddof=1) / math.sqrt(runs)
    # New values repeat within a run (one CRP table = one value); the distinct ones are iid H.
    distinct_new = np.concatenate([np.unique(zr[nr]) for zr, nr in zip(z, new)])
    assert stats.kstest(distinct_new, "uniform").pvalue > 1e-3
    assert mech.guarantee.delta == privacy.DIRICHLET_PROCESS.global_delta_curve(
        privacy.ReleaseSpec(0.0, theta, m, x.size), np.array([2.0]))[0]
    with pytest.raises(ValueError, match="calibrated"):
        mech.release_runs(x, m + 1, 1, rng)


def test_two_columns_joint_w1_exact_or_sliced_and_labelled():
    rng = np.random.default_rng(12)
    x = np.round(rng.random((200, 2)), 1)
    cal = calibrate(200, 2.0, 0.1, 30, theta=1.0, d=2, bins=5)
    df = run_comparison(x, cal, runs=4, rng=rng, columns=["a", "b"])
    assert set(df.column) == {"a", "b", "(joint)"}
    joint = df[df.column == "(joint)"]
    assert (joint.W1_method == "exact-emd").all() and joint.KDE_L2.isna().all()
    assert len(joint) == 4 * len(DEFAULT_MECHANISMS)
    sliced = run_comparison(x, cal, runs=4, rng=rng, max_cost_bytes=100, n_projections=16)
    js = sliced[sliced.column == "(joint)"]
    assert (js.W1_method == "sliced (16 directions)").all() and np.all(js.W1 > 0)
    # the marginal W1 never exceeds the joint exact W1 (projection on an axis is 1-Lipschitz)
    for name in DEFAULT_MECHANISMS:
        sub = df[df.mechanism == name].set_index(["run", "column"]).W1
        for r in range(4):
            assert max(sub[(r, "a")], sub[(r, "b")]) <= sub[(r, "(joint)")] + 1e-12


def test_comparison_summary(income):
    cal = calibrate(income.size, 2.0, 0.05, 60, theta=2.0, mechanisms=["pypp", "bootstrap"])
    df = run_comparison(income, cal, runs=6, rng=np.random.default_rng(4))
    summ = comparison_summary(df)
    assert list(summ.mechanism) == ["confidential", "pypp", "bootstrap"]
    conf = summ.iloc[0]
    assert conf["mean"] == pytest.approx(income.mean()) and conf["W1"] == 0
    pypp = summ[summ.mechanism == "pypp"].iloc[0]
    assert pypp["W1"] == pytest.approx(df[df.mechanism == "pypp"].W1.mean())
    assert pypp["runs"] == 6


def test_sweep_comparison(income):
    seen = []
    df = sweep_comparison(income, [0.5, 5.0], 0.05, 50, theta=2.0, runs=3, rng=np.random.default_rng(5),
                          mechanisms=["laplace_histogram", "bootstrap"], progress=lambda f, m: seen.append(f))
    assert sorted(df.target_eps.unique()) == [0.5, 5.0]
    assert len(df) == 2 * 2 * 3
    assert seen == sorted(seen) and seen[-1] == 1.0
    lap = df[df.mechanism == "laplace_histogram"]
    assert set(lap.eps) == {0.5, 5.0}


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize("call,name", [
    (lambda: calibrate(100, 0.0, 0.1, 5, theta=1.0), "eps"),
    (lambda: calibrate(100, 1.0, 1.0, 5, theta=1.0), "delta"),
    (lambda: calibrate(100, 1.0, 0.0, 5, theta=1.0), "delta"),
    (lambda: calibrate(100, 1.0, 0.1, 0, theta=1.0), "m"),
    (lambda: calibrate(100, 1.0, 0.1, "biggest", theta=1.0), "m"),
    (lambda: calibrate(100, 1.0, 1e-6, "largest", theta=1.0, mechanisms=["pypp", "pypp_old_values"]), "m"),
    (lambda: calibrate(100, 1.0, 0.1, 5, theta=1.0, bins=0), "bins"),
    (lambda: calibrate(0, 1.0, 0.1, 5, theta=1.0), "n"),
    (lambda: calibrate(100, 1.0, 0.1, 5, theta=0.0), "theta"),
    (lambda: calibrate(100, 1.0, 0.1, 5, theta=1.0, mechanisms=["magic"]), "mechanisms"),
    (lambda: calibrate(100, 1.0, 0.1, 5, theta=1.0, d=4, bins=100), "bins"),
    (lambda: run_comparison(np.array([]), calibrate(100, 1.0, 0.1, 5, theta=1.0), rng=np.random.default_rng()),
     "data"),
    (lambda: run_comparison(np.full(50, 0.5), calibrate(100, 1.0, 0.1, 5, theta=1.0), rng=np.random.default_rng()),
     "calibration"),
    (lambda: run_comparison(np.full(100, 0.5), calibrate(100, 1.0, 0.1, 5, theta=1.0), runs=0,
                            rng=np.random.default_rng()), "runs"),
    (lambda: run_comparison(np.full(100, 0.5), "table", rng=np.random.default_rng()), "calibration"),
    (lambda: run_comparison(np.full(100, 0.5), calibrate(100, 1.0, 0.1, 5, theta=1.0), rng=1), "rng"),
])
def test_bad_input_raises_value_error_naming_it(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_calibration_labels_round_delta_and_eps_up():
    """Every printed δ and ε in the Compare table reads back ≥ the computed one (issue 8)."""
    import re

    cal = calibrate(5000, 1.0, 0.05, 300, theta=2.0)
    rows = cal.table[cal.table["kind"] == "approximate"]
    assert len(rows) >= 2
    for _, row in rows.iterrows():
        shown = dict(re.findall(r"(ε|δ) = ([0-9.e+-]+)", row["guarantee"]))
        assert float(shown["δ"]) >= row["delta"] and float(shown["ε"]) >= row["eps"]


def test_calibrate_and_run_comparison_state_their_limits():
    with pytest.raises(ValueError, match="MAX_RELEASE_SIZE"):
        calibrate(100, 1.0, 0.05, 10**8, theta=2.0)
    x = np.random.default_rng(0).random(50)
    cal = calibrate(50, 1.0, 0.05, 10**6, theta=2.0, mechanisms=("bootstrap", "laplace_histogram"))
    with pytest.raises(ValueError, match="MAX_RELEASE_VALUES"):
        run_comparison(x, cal, runs=100, rng=np.random.default_rng(1))
    with pytest.raises(ValueError, match="results must be the DataFrame"):
        comparison_summary(None)


# ------------------------------------------------- issue 11: the Bayesian family in the comparison
def test_local_guarantee_never_meets_a_target(income):
    for eps in (0.5, 5.0, 50.0):
        cal = calibrate(income.size, eps, 0.5, 50, theta=2.0, mechanisms=["pseudo_posterior", "pseudo_posterior_scalar"])
        rows = cal.table[cal.table.mechanism != "all"]
        assert not rows.meets_target.any() and (rows.scope == "local").all()
        assert rows.guarantee.str.contains("not a DP guarantee").all()


def test_every_mechanism_runs_in_the_comparison(income):
    m, runs = 120, 6
    cal = calibrate(income.size, 2.0, 0.05, m, theta=2.0, bins=15, mechanisms=ALL_MECHANISMS)
    df = run_comparison(income, cal, runs=runs, rng=np.random.default_rng(3))
    assert set(df.mechanism) == set(ALL_MECHANISMS)
    assert np.all(np.isfinite(df.W1)) and len(df) == runs * len(ALL_MECHANISMS)
    summary = comparison_summary(df)
    assert np.all(np.isfinite(summary.W1))
    # two columns too (joint W1 rows for every mechanism)
    rng = np.random.default_rng(4)
    x2 = np.column_stack([income, rng.random(income.size)])
    cal2 = calibrate(income.size, 2.0, 0.05, 40, theta=2.0, d=2, bins=5, mechanisms=ALL_MECHANISMS)
    df2 = run_comparison(x2, cal2, runs=2, rng=rng, max_cost_bytes=1e4)
    assert set(df2[df2.column == "(joint)"].mechanism) == set(ALL_MECHANISMS)


def test_old_values_release_holds_only_confidential_values(income):
    cal = calibrate(income.size, 2.0, 0.05, 300, theta=50.0, mechanisms=["pypp_old_values"])
    mech = cal.mechanism("pypp_old_values")
    assert isinstance(mech, OldValuesPYPPMechanism)
    z = mech.release_runs(income, 300, 20, np.random.default_rng(5))
    assert z.shape == (20, 300) and np.isin(z, income).all()
    # Algorithm 3 at σ = 0 has the likelihood ratios of full PYPP: the same exact global δ = T₁
    assert mech.guarantee.delta == cal.table.loc[cal.table.parameter == "delta_global", "value"].iloc[0]
    assert mech.guarantee.delta == privacy.DIRICHLET_PROCESS.global_delta_curve(
        privacy.ReleaseSpec(0.0, 50.0, 300, income.size), np.array([2.0]))[0]
    # a dataset so small that a run may release nothing is filled with uniform points (post-processing)
    tiny = np.array([0.25, 0.75])
    cal_t = calibrate(2, 2.0, 0.5, 30, theta=1e4, mechanisms=["pypp_old_values"])
    zt = cal_t.mechanism("pypp_old_values").release_runs(tiny, 30, 50, np.random.default_rng(6))
    assert zt.shape == (50, 30) and np.all((zt >= 0) & (zt <= 1))


def test_sweep_includes_the_new_mechanisms(income):
    names = ("pypp_old_values", "truncated_dirichlet_posterior", "pseudo_posterior", "pseudo_posterior_scalar")
    out = sweep_comparison(income, [0.5, 3.0], 0.05, 60, theta=2.0, runs=3, rng=np.random.default_rng(7),
                           mechanisms=names)
    assert set(out.mechanism) == set(names) and set(out.target_eps) == {0.5, 3.0}
    # more privacy budget, better truncated-Dirichlet utility (p_min falls with ε)
    w1 = out[out.mechanism == "truncated_dirichlet_posterior"].groupby("target_eps").W1.mean()
    assert w1[3.0] < w1[0.5]


def test_command_line_compare_with_named_mechanisms(tmp_path, capsys):
    """``python -m core compare ... --mechanism NAME``: the calibration in words on stderr (local
    guarantees flagged), the summary table as CSV; a bad name is a usage error, not a traceback."""
    from core import cli

    rng = np.random.default_rng(8)
    path = tmp_path / "incomes.csv"
    pd.DataFrame({"v": np.round(rng.lognormal(3.0, 0.5, size=800), 1)}).to_csv(path, index=False)
    out = tmp_path / "summary.csv"
    names = ["pypp_old_values", "truncated_dirichlet_posterior", "pseudo_posterior", "pseudo_posterior_scalar"]
    argv = ["compare", str(path), "--column", "v", "--bounds", "1", "200", "--log", "--theta", "2", "--eps", "2",
            "--delta", "0.05", "--m", "60", "--runs", "4", "--seed", "3", "--out", str(out)]
    for name in names:
        argv += ["--mechanism", name]
    assert cli.main(argv) == 0
    summary = pd.read_csv(out)
    assert set(summary.mechanism) == {"confidential", *names} and (summary.runs[1:] == 4).all()
    err = capsys.readouterr().err
    assert "truncated_dirichlet_posterior: pure ε-DP, global (ε = 2) -- meets the target" in err
    assert "pseudo_posterior: local, data-dependent" in err and "does NOT meet the target (LOCAL" in err
    # default: every mechanism of DEFAULT_MECHANISMS; the summary goes to stdout
    assert cli.main(argv[:-2 - 2 * len(names)] + ["--runs", "2"]) == 0
    printed = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert set(printed.mechanism) == {"confidential", *DEFAULT_MECHANISMS}
    for bad, word in ((["--mechanism", "nope"], "--mechanism"), (["--m", "many"], "--m")):
        with pytest.raises(SystemExit) as exc:
            cli.main(argv[:-2 - 2 * len(names)] + bad)
        assert exc.value.code == 2 and word in capsys.readouterr().err


def test_command_line_compare_with_categorical_columns(tmp_path, capsys):
    """``compare --column wage --categorical region --public-categories region LIST``: the numeric
    column by W1 in original units, the categorical one by TV; without a public list a histogram
    named with --mechanism is an error naming the column, one of the default list is skipped with a
    note naming it; bad lists are usage errors."""
    from core import cli

    rng = np.random.default_rng(12)
    n = 500
    path = tmp_path / "mixed.csv"
    pd.DataFrame({"wage": np.round(rng.lognormal(9.0, 0.7, n)), "exper": rng.integers(0, 40, n),
                  "region": rng.choice(["north", "south", "east", "west"], n),
                  "code": rng.integers(1, 4, n)}).to_csv(path, index=False)
    base = ["compare", str(path), "--column", "wage", "--bounds", "0", "1e6", "--theta", "3", "--eps", "1",
            "--delta", "1e-3", "--m", "100", "--runs", "3", "--bins", "10", "--mechanism", "pypp",
            "--mechanism", "laplace_histogram", "--mechanism", "bootstrap"]
    assert cli.main(base + ["--categorical", "region", "--public-categories", "region", "north,south,east,west"]) == 0
    captured = capsys.readouterr()
    summary = pd.read_csv(io.StringIO(captured.out))
    assert set(summary.mechanism) == {"confidential", "pypp", "laplace_histogram", "bootstrap"}
    region = summary[summary.column == "region"]
    assert region.TV.between(0, 1).all() and region.W1.isna().all()
    wage = summary[(summary.column == "wage") & (summary.mechanism == "pypp")]
    assert wage.W1.iloc[0] > 1.0                    # original units (the scaled W1 is at most 1)
    assert "skipped" not in captured.err
    # no public list: a histogram named with --mechanism cannot run — exit 2 naming the column and the flag
    with pytest.raises(SystemExit) as exc:
        cli.main(base + ["--categorical", "region"])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "laplace_histogram cannot run" in err and "'region'" in err
    assert "--public-categories region" in err
    # of the default list it is skipped, said on stderr with the flag that fixes it
    default = [a for i, a in enumerate(base) if a != "--mechanism" and (i == 0 or base[i - 1] != "--mechanism")]
    assert cli.main(default + ["--categorical", "region", "--runs", "2"]) == 0
    captured = capsys.readouterr()
    assert "laplace_histogram" not in set(pd.read_csv(io.StringIO(captured.out)).mechanism)
    assert "skipped laplace_histogram" in captured.err and "--public-categories region LIST" in captured.err
    # a column of numbers treated as categories: its public list matches the numbers
    assert cli.main(base[:2] + ["--categorical", "code", "--public-categories", "code", "1,2,3"] + base[7:]) == 0
    codes = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert set(codes.mechanism) == {"confidential", "pypp", "laplace_histogram", "bootstrap"}
    for bad, words in (
            (["--public-categories", "region", "north,south"], "not a --categorical column"),
            (["--categorical", "region", "--public-categories", "region", "north,south"], "outside its public"),
    ):
        with pytest.raises(SystemExit) as exc:
            cli.main(base + bad)
        assert exc.value.code == 2 and words in capsys.readouterr().err


def test_joint_w1_exact_equals_pot_emd2_on_a_small_case():
    # Two mechanisms, three runs each: the comparison's joint W1 is POT's full linear
    # program between the data and each release (uniform weights, Euclidean cost).
    rng = np.random.default_rng(21)
    x = np.round(rng.random((12, 2)), 1)
    releases = [np.concatenate([x[rng.integers(0, 12, (3, 6))], rng.random((3, 2, 2))], axis=1),
                np.round(rng.random((3, 8, 2)), 1)]
    values, method = _joint_w1(x, releases, max_cost_bytes=2**20, n_projections=10, rng=rng)
    assert method == "exact-emd"
    for z, v in zip(releases, values):
        ref = [ot.emd2(np.full(12, 1 / 12), np.full(zr.shape[0], 1 / zr.shape[0]), distance.cdist(x, zr))
               for zr in z]
        assert np.allclose(v, ref, rtol=1e-9, atol=1e-12)


def test_joint_w1_sliced_above_the_budget_for_every_mechanism_and_labelled():
    rng = np.random.default_rng(22)
    x = rng.random((40, 2))
    releases = [rng.random((3, 30, 2)), x[rng.integers(0, 40, (3, 30))]]
    # one residual matrix of up to 40 × 30 entries does not fit 800 bytes: sliced for all runs
    values, method = _joint_w1(x, releases, max_cost_bytes=800, n_projections=12, rng=rng)
    assert method == "sliced (12 directions)"
    assert [v.shape for v in values] == [(3,), (3,)] and all(np.all(v > 0) for v in values)


@pytest.mark.slow
def test_comparison_joint_w1_of_all_distinct_data():
    # every mechanism, R = 100, n = m = 1000 distinct rows in 2 columns. The speed target
    # (2 s) is benchmarks/bench_microdata.py's; this test keeps a hang guard only.
    rng = np.random.default_rng(23)
    x = rng.random((1000, 2))
    cal = calibrate(1000, 1.0, 1e-3, 1000, theta=5.0, d=2, bins=10)
    releases = [mech.release_runs(x, 1000, 100, rng).reshape(100, 1000, 2) for mech in cal.mechanisms]
    start = time.perf_counter()
    values, method = _joint_w1(x, releases, max_cost_bytes=32 * 2**20, n_projections=50, rng=rng)
    elapsed = time.perf_counter() - start
    assert method in ("exact-emd", "sliced (50 directions)")
    assert len(values) == len(cal.mechanisms) and all(np.all(np.isfinite(v)) for v in values)
    assert elapsed < HANG_GUARD_S, elapsed


def test_quality_by_mechanism_from_the_table_equals_the_rows():
    from core.evaluation.quality import quality_report

    rng = np.random.default_rng(24)
    x = np.round(rng.random((300, 2)), 1)
    atoms, counts = np.unique(x, axis=0, return_counts=True)
    releases = {"A": rng.random((80, 2)), "B": x[rng.integers(0, 300, 80)]}
    seen = []
    table, reports = quality_by_mechanism(atoms, counts, releases, columns=["u", "v"],
                                          progress=lambda f, msg: seen.append(f))
    assert list(table.columns) == ["label", "overall", "column_shapes", "column_pair_trends", "u", "v"]
    assert list(table["label"]) == ["A", "B"] and seen[-1] == 1.0
    for label, z in releases.items():
        rows = quality_report(pd.DataFrame(x, columns=["u", "v"]), pd.DataFrame(z, columns=["u", "v"]),
                              {"u": "numeric", "v": "numeric"})
        assert reports[label].overall == pytest.approx(rows.overall, rel=1e-12)
        row = table[table["label"] == label].iloc[0]
        assert row["u"] == pytest.approx(rows.columns["score"].iloc[0], rel=1e-12)
    # the bootstrap-like release copies rows: closer to the data than uniform noise
    assert reports["B"].overall > reports["A"].overall
    with pytest.raises(ValueError, match="columns"):
        quality_by_mechanism(atoms, counts, {"A": rng.random((5, 3))})


# ------------------------------------------------------------------ the comparison from a frequency table (issue 13)
def test_run_comparison_from_the_table_equals_the_records(income):
    # Records are reduced to their table once, so both inputs run one implementation:
    # the same numbers, bit for bit, for the same generator.
    atoms, counts = np.unique(income, return_counts=True)
    cal = calibrate(income.size, 2.0, 0.05, 120, theta=2.0, bins=15)
    a = run_comparison(income, cal, runs=6, rng=np.random.default_rng(31))
    b = run_comparison(atoms, cal, counts=counts, runs=6, rng=np.random.default_rng(31))
    pd.testing.assert_frame_equal(a, b)
    assert a.attrs["confidential"] == b.attrs["confidential"]
    # the confidential summaries are those of the records (numpy on the n values)
    summary = b.attrs["confidential"]["x0"]
    assert summary["mean"] == pytest.approx(income.mean(), rel=1e-12)
    assert summary["sd"] == pytest.approx(income.std(ddof=1), rel=1e-12)
    assert [summary["q1"], summary["median"], summary["q3"]] == pytest.approx(
        np.quantile(income, [0.25, 0.5, 0.75]), rel=1e-12)
    # a sweep too
    s_rows = sweep_comparison(income, [0.5, 4.0], 0.05, 60, theta=2.0, runs=3, rng=np.random.default_rng(32),
                              bins=10, mechanisms=["pypp", "laplace_histogram", "bootstrap"])
    s_table = sweep_comparison(atoms, [0.5, 4.0], 0.05, 60, theta=2.0, counts=counts, runs=3,
                               rng=np.random.default_rng(32), bins=10,
                               mechanisms=["pypp", "laplace_histogram", "bootstrap"])
    pd.testing.assert_frame_equal(s_rows, s_table)


@pytest.mark.parametrize("max_cost_bytes, method", [(2**25, "exact-emd"), (100, "sliced (8 directions)")])
def test_two_column_comparison_from_the_table_equals_the_records(max_cost_bytes, method):
    rng = np.random.default_rng(33)
    x = np.round(rng.random((400, 2)), 1)
    atoms, counts = np.unique(x, axis=0, return_counts=True)
    cal = calibrate(400, 2.0, 0.1, 40, theta=1.0, d=2, bins=5)
    kwargs = {"runs": 3, "max_cost_bytes": max_cost_bytes, "n_projections": 8, "columns": ["a", "b"]}
    a = run_comparison(x, cal, rng=np.random.default_rng(34), **kwargs)
    b = run_comparison(atoms, cal, counts=counts, rng=np.random.default_rng(34), **kwargs)
    pd.testing.assert_frame_equal(a, b)
    joint = b[b.column == "(joint)"]
    assert (joint.W1_method == method).all()
    if method == "exact-emd":   # the joint W1 against the weighted table is POT's on the records
        root = int(np.random.default_rng(34).integers(0, 2**63 - 1))
        mech = cal.mechanism("laplace_histogram")
        z = mech.release_runs(atoms, 40, 3, np.random.default_rng([root, zlib.crc32(mech.name.encode())]),
                              counts=counts)
        want = [ot.emd2(counts / 400, np.full(40, 1 / 40), distance.cdist(atoms, zr)) for zr in z]
        got = joint[joint.mechanism == "laplace_histogram"].sort_values("run").W1.to_numpy()
        assert np.allclose(got, want, rtol=1e-9, atol=1e-12)


def test_pypp_mechanisms_release_the_same_from_the_table():
    rng = np.random.default_rng(35)
    x = np.round(rng.random((300, 2)), 1)
    atoms, counts = np.unique(x, axis=0, return_counts=True)
    for mech in (PYPPMechanism(2.0, 3.0, 300, 50), OldValuesPYPPMechanism(2.0, 3.0, 300, 50)):
        want = mech.release_runs(x, 50, 4, np.random.default_rng(36))
        assert np.array_equal(mech.release_runs(atoms, 50, 4, np.random.default_rng(36), counts=counts), want)
        # rows repeated in a table add their counts (the mechanism sees the same table)
        tied = counts > 1
        split_atoms = np.concatenate([atoms, atoms[tied]])
        split_counts = np.concatenate([np.where(tied, counts - 1, counts), np.ones(int(tied.sum()), dtype=int)])
        assert np.array_equal(mech.release_runs(split_atoms, 50, 4, np.random.default_rng(36), counts=split_counts),
                              want)
        with pytest.raises(ValueError, match="calibrated for n = 300"):
            mech.release_runs(atoms, 50, 1, np.random.default_rng(0), counts=counts + 1)


def test_comparison_of_a_billion_records_from_their_table():
    # n = 10**9 records in 2000 distinct values: every mechanism and metric in k, never n.
    atoms = np.linspace(0.0, 1.0, 2000)
    counts = np.random.default_rng(37).integers(1, 10**5, 2000)
    counts[-1] += 10**9 - int(counts.sum())
    cal = calibrate(10**9, 1.0, 1e-3, 200, theta=5.0, bins=10)
    start = time.perf_counter()
    df = run_comparison(atoms, cal, counts=counts, runs=5, rng=np.random.default_rng(38))
    # a hang guard: the target (10 s) is benchmarks/bench_compare.py's "billion_records_table"
    assert time.perf_counter() - start < 10 * HANG_GUARD_S
    assert np.all(np.isfinite(df[["W1", "KDE_L2", "mean"]].to_numpy()))
    repeated_mean = float(counts @ atoms) / 10**9
    assert df.attrs["confidential"]["x0"]["mean"] == pytest.approx(repeated_mean, rel=1e-12)
    with pytest.raises(ValueError, match="counts must have one entry per row"):
        run_comparison(atoms, cal, counts=counts[:-1], runs=1, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="calibration is for n"):
        run_comparison(atoms, cal, counts=counts + 1, runs=1, rng=np.random.default_rng(0))


# ------------------------------------------------------------------ issue 35 item 5
def test_without_an_admissible_m_for_pypp_the_others_run_at_m_equal_n(income):
    """δ = 10⁻⁹: PYPP's singleton limit is 0. It is skipped (said why, in words) and the others run
    at m = n; asked for by name it is an error naming the missing m."""
    n = income.size
    cal = calibrate(n, 1.0, 1e-9, "largest", theta=2.0, bins=10,
                    mechanisms=["pypp", "pypp_old_values", "laplace_histogram", "bootstrap"])
    assert [mech.name for mech in cal.mechanisms] == ["laplace_histogram", "bootstrap"]
    assert cal.m == n and cal.m_rule == "m = n: PYPP has no admissible m"
    assert set(cal.skipped) == {"pypp", "pypp_old_values"}
    assert all("singleton limit" in why and "is 0" in why for why in cal.skipped.values())
    assert any("PYPP cannot release anything" in note and f"m = n = {n:,}" in note for note in cal.notes)
    res = run_comparison(income, cal, runs=2, rng=np.random.default_rng(1))
    assert set(res.mechanism) == {"laplace_histogram", "bootstrap"} and (res.m == n).all()
    with pytest.raises(ValueError, match=r"pypp cannot run: no admissible m.*singleton limit"):
        calibrate(n, 1.0, 1e-9, "largest", theta=2.0, mechanisms=["pypp", "bootstrap"], required=["pypp"])
    with pytest.raises(ValueError, match="required"):
        calibrate(n, 1.0, 0.05, 10, theta=2.0, mechanisms=["bootstrap"], required=["pypp"])


def test_the_singleton_cap_is_said_in_words():
    n, delta, theta = 3000, 0.01, 2.0
    m_star = privacy.singleton_limit(n, theta, delta)
    cal = calibrate(n, 4.0, delta, "largest", theta=theta, mechanisms=["pypp", "bootstrap"])
    (note,) = cal.notes
    assert note.startswith("The singleton cap binds") and f"m = {m_star:,}" in note and "ε = 4" in note
    assert "the same at every ε" in note
    over = calibrate(n, 4.0, delta, m_star + 5, theta=theta, mechanisms=["pypp"])
    assert "above PYPP's singleton limit" in over.notes[0] and f"= {m_star:,}" in over.notes[0]
    within = calibrate(n, 4.0, delta, max(1, m_star - 1), theta=theta, mechanisms=["pypp"])
    assert "does not depend on ε" in within.notes[0]
    assert calibrate(n, 4.0, delta, 10, theta=theta, mechanisms=["bootstrap"]).notes == ()


def test_summary_and_mechanism_table_carry_seconds_and_the_pmse_ratio(income):
    cal = calibrate(income.size, 1.0, 0.05, 40, theta=1.0, bins=10, mechanisms=["pypp", "bootstrap"])
    res = run_comparison(income, cal, runs=3, rng=np.random.default_rng(4), yardsticks=True)
    assert set(res.attrs["seconds"]) == {"pypp", "bootstrap"} and min(res.attrs["seconds"].values()) > 0
    # the ratio is the logistic pMSE over its null reference, run by run
    assert np.allclose(res.pMSE_ratio, res.pMSE_logistic / res.pMSE_null)
    summary = comparison_summary(res)
    table = mechanism_table(summary)
    assert list(table.columns) == [*MECHANISM_COLUMNS, *YARDSTICK_COLUMNS]
    assert list(table.label) == ["PYPP (σ = 0)", "Bootstrap (no privacy)"]
    assert (table.seconds > 0).all() and (table.m == 40).all()
    assert summary.loc[summary.mechanism == "confidential", "seconds"].isna().all()
    # without yardsticks: guarantee, m and seconds only
    plain = mechanism_table(comparison_summary(run_comparison(income, cal, runs=2, rng=np.random.default_rng(4))))
    assert list(plain.columns) == list(MECHANISM_COLUMNS)


def test_pmse_null_by_hand():
    # p = 3 parameters, n = 6, m = 2: c = 1/4, (p − 1)(1 − c)²c/N = 2 · 9/16 · 1/4 / 8
    assert pmse_null(3, 6, 2) == pytest.approx(2 * 9 / 16 / 4 / 8)
    assert pmse_null(1, 6, 2) == 0.0          # the intercept alone fits c exactly
    with pytest.raises(ValueError, match="parameters"):
        pmse_null(0, 6, 2)
