"""AppTest (streamlit.testing.v1) of the Informativity and Inference pages (issue 5).

The checks compare what the pages *show* with independent computations: grid points and
release sizes from one line of arithmetic (⌈c·n⌉, the singleton limit of SPEC §3.1),
the log–log slope refitted with numpy from the table shown, confidential functionals
straight from pandas/numpy, and the closed-form posterior expectations of SPEC §6
(E p̃(A) = (θH(A) + #{Z_i ∈ A})/(θ + m)) computed from the release the page offers for
download. Where a value is Monte Carlo, the page's number is also checked to be the
``core`` result for the seed the page shows.

On the bundled sample the base measure H is uniform on the sample's public bounds
(``sample_data/public_bounds.json``, read here from the file), not on the data's range.
"""

from __future__ import annotations

import base64
import io
import json
import math
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import streamlit as st
from scipy import stats
from streamlit.testing.v1 import AppTest

from core import evaluation as inference, privacy
from core.evaluation import informativity, simulation
from core.plots import experiments as pe
from core.release import ReleaseRecipe, run_recipe
from test_app import media_fetcher
from ui.text import shown

REPO = Path(__file__).resolve().parents[1]
APP = str(REPO / "app.py")
SAMPLE = REPO / "sample_data" / "cps_earnings.csv"
PUBLIC_BOUNDS_FILE = REPO / "sample_data" / "public_bounds.json"
LEAK = "read off the"
INFORMATIVITY = "app_pages/informativity.py"
INFERENCE = "app_pages/inference.py"
TIMEOUT = 120
RUN_INFORMATIVITY = "FormSubmitter:informativity_settings-Run experiment"
RUN_REPEATED = "FormSubmitter:repeated_release_settings-Run repeated releases"


@pytest.fixture(scope="module")
def earnings() -> np.ndarray:
    return pd.read_csv(SAMPLE)["earnings"].to_numpy(float)


@pytest.fixture(scope="module")
def public_bounds() -> tuple[float, float]:
    """Public bounds of the sample's earnings column, read from the shipped file (not from the app)."""
    lo, hi = json.loads(PUBLIC_BOUNDS_FILE.read_text())["cps_earnings.csv"]["earnings"]
    return float(lo), float(hi)


def _page(page: str, **state) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    for key, value in state.items():
        at.session_state[key] = value
    at.switch_page(page).run()
    _no_exception(at)
    return at


def _no_exception(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def _metrics(at: AppTest) -> dict:
    return {m.label: m.value for m in at.metric}


def _texts(elements) -> str:
    """The elements' texts as the user reads them (core's messages are shown as text: ui.text)."""
    return "\n".join(shown(str(e.value)) for e in elements)


def _figures(at: AppTest) -> list[dict]:
    """Plotly specs on the page (trace arrays decoded from plotly's base64)."""
    out = []
    for el in at.get("plotly_chart"):
        spec = json.loads(el.proto.spec)
        for trace in spec["data"]:
            for axis in ("x", "y"):
                v = trace.get(axis)
                if isinstance(v, dict) and "bdata" in v:
                    trace[axis] = np.frombuffer(base64.b64decode(v["bdata"]), dtype=np.dtype(v["dtype"]))
        out.append(spec)
    return out


def _trace(at: AppTest, name: str) -> dict:
    for spec in _figures(at):
        for t in spec["data"]:
            if t.get("name") == name:
                return t
    raise AssertionError(f"no chart trace named {name!r}")


@pytest.fixture
def downloads(monkeypatch):
    """Fetch the table behind the download button labelled ``label`` of an AppTest run
    (:func:`test_app.media_fetcher`: a confidential table is built on the click, as in the app)."""
    fetch_bytes = media_fetcher(monkeypatch)

    def fetch(at: AppTest, label: str) -> pd.DataFrame:
        button = {b.proto.label: b.proto for b in at.get("download_button")}[label]
        # curator-only tables start with a "# CONFIDENTIAL" line (ui/widgets.confidential_csv_bytes)
        return pd.read_csv(io.BytesIO(fetch_bytes(button)), comment="#")

    fetch.bytes = fetch_bytes
    return fetch


def _generate(at: AppTest) -> None:
    """Switch to the Synthetic data page and press "Generate release" (a fresh secret seed)."""
    at.switch_page("app_pages/synthetic_data.py").run()
    next(b for b in at.button if b.proto.label == "Generate release").click().run()
    _no_exception(at)


@pytest.fixture
def inference_page(downloads):
    """``open(**state) -> (at, release)``: the Inference page analysing a release drawn on the
    Synthetic data page with the settings ``state``. The page offers no file of the release
    (the gated downloads of the Synthetic data page are the only way out), so ``release`` is the
    release as its CONFIDENTIAL curator record states it: the record's recipe, secret seed
    included, run by core."""

    def open_page(**state) -> tuple[AppTest, pd.DataFrame]:
        at = _page("app_pages/data.py", **state)
        _generate(at)
        button = next(b.proto for b in at.get("download_button") if "CONFIDENTIAL curator" in b.proto.label)
        with zipfile.ZipFile(io.BytesIO(downloads.bytes(button))) as zf:
            recipe = ReleaseRecipe.from_json(zf.read("CONFIDENTIAL_recipe.json").decode())
        at.switch_page(INFERENCE).run()
        _no_exception(at)
        assert not any("release Z" in b.proto.label for b in at.get("download_button"))
        return at, run_recipe(recipe).synthetic

    return open_page


def _assert_same_table(shown: pd.DataFrame, expected: pd.DataFrame, exclude=()) -> None:
    cols = [c for c in expected.columns if c not in exclude]
    pd.testing.assert_frame_equal(shown[cols].reset_index(drop=True), expected[cols].reset_index(drop=True),
                                  check_dtype=False, rtol=1e-12, atol=0)


# =========================================================================== informativity

def test_informativity_defaults_theorem2_rule(downloads, monkeypatch):
    """Dyadic population, m = m*(ε, δ) by Theorem 2: grid, release sizes, slope, band, plot, download."""
    progress_calls = []
    real = informativity.informativity_experiment

    def recording(*args, progress=None, **kwargs):
        assert callable(progress), "the page must pass a progress callback"

        def spy(fraction, message):
            progress_calls.append(fraction)
            progress(fraction, message)

        return real(*args, progress=spy, **kwargs)

    monkeypatch.setattr(informativity, "informativity_experiment", recording)
    # st.cache_data lives for the whole process: a default run cached by an earlier test would
    # never reach the spy, so start from empty caches.
    st.cache_data.clear()
    at = _page(INFORMATIVITY)
    s = at.session_state
    assert (s["inf_source"], s["inf_rule"], s["inf_p"], s["inf_theta"]) == ("dyadic", "privacy", 0.1, 1.0)
    eps, delta, theta = s["inf_eps"], s["inf_delta"], 1.0
    assert (eps, delta) == (s["eps"], s["delta"])   # started from the Privacy page's settings
    table = at.dataframe[0].value

    # grid: integers log-spaced from 100 to 10 000
    n = np.unique(np.rint(np.geomspace(100, 10_000, 6)).astype(int))
    assert table["n"].tolist() == n.tolist()
    assert (table["runs"] == 200).all()
    # release sizes: m*(ε, δ), never above the singleton limit ⌊δ(θ + n − 1)/(1 − δ)⌋
    assert table["m"].tolist() == [privacy.max_synthetic_size(int(v), theta, eps, delta) for v in n]
    assert (table["m"] <= np.floor(delta * (theta + n - 1) / (1 - delta))).all()
    assert (table["lower"] < table["mean"]).all() and (table["mean"] < table["upper"]).all()

    # the slope shown is the least-squares slope of the table's log mean against log n
    slope = np.polyfit(np.log(table["n"]), np.log(table["mean"]), 1)[0]
    assert _metrics(at)["fitted log–log slope"] == f"{slope:.3f}"
    assert -0.7 < slope < -0.35   # m* grows linearly here: the n^(-1/2) regime

    # the same numbers as core for the population and experiment seeds shown
    population = simulation.sample_dyadic_geometric(100_000, 0.1, np.random.default_rng(1))
    expected = real(population, n, informativity.PrivacySizeRule(eps, delta), theta, 200,
                    np.random.default_rng(2024)).table()
    _assert_same_table(table, expected)

    # progress bar driven by core's callback, up to completion
    assert progress_calls and progress_calls[-1] == pytest.approx(1.0)
    assert all(b >= a for a, b in zip(progress_calls, progress_calls[1:]))

    # log–log plot: the curve, its band and the n^(-1/2) reference line
    label = expected["series"].iloc[0]
    curve = _trace(at, f"{label} (slope {slope:.2f})")
    np.testing.assert_allclose(curve["x"], table["n"])
    np.testing.assert_allclose(curve["y"], table["mean"], rtol=1e-12)
    band = _trace(at, f"{label} (slope {slope:.2f}) 95% band")
    np.testing.assert_allclose(np.sort(band["y"]), np.sort(np.r_[table["lower"], table["upper"]]), rtol=1e-12)
    ref = _trace(at, "reference n^-0.5")
    ref_slope = np.diff(np.log(ref["y"])) / np.diff(np.log(ref["x"]))
    assert ref_slope[0] == pytest.approx(-0.5)
    spec = _figures(at)[0]
    assert spec["layout"]["xaxis"]["type"] == "log" and spec["layout"]["yaxis"]["type"] == "log"
    assert "Theorem 2" in _texts(at.markdown) and "globally" in _texts(at.markdown)

    # the download is the table shown
    _assert_same_table(downloads(at, "Download the table (CSV)"), table)


def test_informativity_power_rule_slope_is_minus_one_half():
    """m = ⌈n/10⌉, p = 0.1, θ = 1, n from 10² to 10⁵: slope within 0.1 of −1/2 (issue 5)."""
    at = _page(INFORMATIVITY)
    at.radio(key="_w_inf_rule").set_value("power").run()
    _no_exception(at)
    at.number_input(key="_w_inf_population").set_value(200_000)
    at.number_input(key="_w_inf_n_max").set_value(100_000)
    at.number_input(key="_w_inf_points").set_value(7)
    at.number_input(key="_w_inf_runs").set_value(60)
    at.number_input(key="_w_inf_c").set_value(0.1)
    at.number_input(key="_w_inf_a").set_value(1.0)
    at.button(key=RUN_INFORMATIVITY).click().run()
    _no_exception(at)
    table = at.dataframe[0].value
    n = table["n"].to_numpy()
    assert n[0] == 100 and n[-1] == 100_000 and len(n) == 7
    assert table["m"].tolist() == [-(-int(v) // 10) for v in n]   # ⌈n/10⌉ in integers
    assert (table["runs"] == 60).all()
    slope = float(_metrics(at)["fitted log–log slope"])
    assert slope == pytest.approx(np.polyfit(np.log(n), np.log(table["mean"]), 1)[0], abs=5e-4)
    assert abs(slope + 0.5) < 0.1
    assert "m = ⌈0.1·n^1⌉" in _texts(at.markdown)
    # the settings persist when the user leaves the page and comes back
    at.switch_page("app_pages/privacy.py").run()
    at.switch_page(INFORMATIVITY).run()
    _no_exception(at)
    assert at.session_state["inf_runs"] == 60 and at.number_input(key="_w_inf_runs").value == 60
    assert at.dataframe[0].value["n"].max() == 100_000


def test_informativity_on_the_current_data(earnings, public_bounds):
    at = _page(INFORMATIVITY)
    at.radio(key="_w_inf_source").set_value("data").run()
    _no_exception(at)
    # the default largest n fits the 13 501 earnings; a larger one is core's message (the
    # admissible range, up to the population size, and the value given), not a traceback
    at.number_input(key="_w_inf_n_max").set_value(20_000)
    at.button(key=RUN_INFORMATIVITY).click().run()
    _no_exception(at)
    message = _texts(at.error)
    assert message.startswith("These settings cannot be run:") and "13501" in message and "20000" in message
    assert not at.dataframe

    at.number_input(key="_w_inf_n_max").set_value(5_000)
    at.number_input(key="_w_inf_runs").set_value(40)
    at.button(key=RUN_INFORMATIVITY).click().run()
    _no_exception(at)
    assert not at.error
    table = at.dataframe[0].value
    assert table["n"].iloc[-1] == 5_000 and (table["runs"] == 40).all()
    assert "13,501 records of **earnings**" in _texts(at.caption)
    assert LEAK not in _texts(at.warning)   # the sample's default bounds are public
    # same numbers as core on the column in its original units (clipped to the public bounds), W1 in
    # those units (issue 25), and as a fraction of the bounds' width
    lo, hi = public_bounds
    s = at.session_state
    expected = informativity.informativity_experiment(
        np.clip(earnings, lo, hi), table["n"].to_numpy(), informativity.PrivacySizeRule(s["inf_eps"], s["inf_delta"]),
        1.0, 40, np.random.default_rng(2024), bounds=(lo, hi)).table(width=hi - lo)
    _assert_same_table(table, expected, exclude=("mean", "sd", "lower", "upper", "mean / (hi − lo)"))
    np.testing.assert_allclose(table["mean"], expected["mean"], rtol=1e-9)
    np.testing.assert_allclose(table["mean / (hi − lo)"], expected["mean"] / (hi - lo), rtol=1e-9)
    assert math.isfinite(float(_metrics(at)["fitted log–log slope"]))


@pytest.mark.parametrize("field, value, message", [
    ("_w_inf_n_min", 50_000, "n_max must be an integer in [50000, "),
    ("_w_inf_population", 5_000, "n_values must be integers in [1, 5000], got 10000"),
])
def test_informativity_bad_settings_show_a_message(field, value, message):
    at = _page(INFORMATIVITY)
    at.number_input(key=field).set_value(value)
    at.button(key=RUN_INFORMATIVITY).click().run()
    _no_exception(at)
    errors = _texts(at.error)
    assert "cannot be run" in errors and message in errors, errors
    assert not at.get("plotly_chart")


def test_informativity_inadmissible_points_are_reported():
    """A tiny δ leaves the small n without any admissible release: said, not plotted."""
    at = _page(INFORMATIVITY)
    at.number_input(key="_w_inf_delta").set_value(1e-3)
    at.number_input(key="_w_inf_runs").set_value(20)
    at.button(key=RUN_INFORMATIVITY).click().run()
    _no_exception(at)
    table = at.dataframe[0].value
    zero = table["n"][table["m"] == 0].tolist()
    # m* ≤ m_sing = ⌊δ(θ + n − 1)/(1 − δ)⌋ = 0 below n ≈ 1/δ
    assert zero and all(math.floor(1e-3 * v / (1 - 1e-3)) == 0 for v in zero)
    assert (table["m"] > 0).sum() >= 2
    assert "No synthetic value can be released" in _texts(at.warning)
    slope = float(_metrics(at)["fitted log–log slope"])
    ok = table[table["m"] > 0]
    assert slope == pytest.approx(np.polyfit(np.log(ok["n"]), np.log(ok["mean"]), 1)[0], abs=5e-4)
    curve = _trace(at, f"{table['series'].iloc[0]} (slope {slope:.2f})")
    np.testing.assert_allclose(curve["x"], ok["n"])


# =========================================================================== inference

def _functional_names(t: float) -> list[str]:
    return ["mean", "Q1 (25%)", "median", "Q3 (75%)", f"P(X > {t:g})"]


def test_inference_posterior_matches_closed_forms(earnings, public_bounds, downloads, inference_page):
    at, release = inference_page()
    s = at.session_state
    theta, m = s["theta"], s["m"]
    assert (s["regime"], theta, m) == ("dp", 2.0, 100)
    lo, hi = public_bounds                         # default bounds on the sample: the public ones
    t = (lo + hi) / 2
    assert s["post_threshold"] == pytest.approx(t)
    assert LEAK not in _texts(at.warning)
    assert f"H is uniform on [{lo:.6g}, {hi:.6g}]" in _texts(at.caption)
    assert str(s["release_params"].seed) not in _texts(at.caption)    # the secret seed is shown nowhere

    z = release["earnings"].to_numpy(float)
    assert len(release) == m and lo <= z.min() and z.max() <= hi
    assert _metrics(at)["released values m"] == f"{m:,}"
    assert _metrics(at)["distinct values in Z"] == f"{np.unique(z).size:,}"

    analyst, curator = at.dataframe[0].value, at.dataframe[1].value
    assert analyst["functional"].tolist() == _functional_names(t)
    assert "confidential" not in analyst.columns
    _assert_same_table(curator, analyst)
    # confidential values straight from numpy
    truth = [earnings.mean(), *np.quantile(earnings, [0.25, 0.5, 0.75], method="inverted_cdf"),
             (earnings > t).mean()]
    np.testing.assert_allclose(curator["confidential"], truth, rtol=1e-12)

    # posterior expectations in closed form from the release (SPEC §6): base G = (θH + Σδ_Z)/(θ + m)
    D = s["post_draws"]
    w = theta / (theta + m)
    g_mean = w * (lo + hi) / 2 + (1 - w) * z.mean()
    g_var = w * (lo * lo + lo * hi + hi * hi) / 3 + (1 - w) * np.mean(z ** 2) - g_mean ** 2
    sd_mean = math.sqrt(g_var / (theta + m + 1))                 # Var ∫x dp̃ = Var_G(X)/(θ + m + 1)
    row = analyst.set_index("functional")
    assert row.loc["mean", "posterior_mean"] == pytest.approx(g_mean, abs=4 * sd_mean / math.sqrt(D))
    tail = w * (hi - t) / (hi - lo) + (1 - w) * np.mean(z > t)
    sd_tail = math.sqrt(tail * (1 - tail) / (theta + m + 1))
    assert row.loc[f"P(X > {t:g})", "posterior_mean"] == pytest.approx(tail, abs=4 * sd_tail / math.sqrt(D))
    # the mean's 95% interval is about ±1.96 posterior SD (near-normal linear functional at m = 100)
    width = row.loc["mean", "upper"] - row.loc["mean", "lower"]
    assert width == pytest.approx(2 * 1.96 * sd_mean, rel=0.15)
    assert (analyst["lower"] <= analyst["posterior_mean"]).all()
    assert (analyst["posterior_mean"] <= analyst["upper"]).all()

    # and it is core's posterior for the seeds shown
    expected = inference.dp_posterior_functionals(z, theta, (lo, hi), D, np.random.default_rng(s["post_seed"]),
                                                  thresholds=(t,)).summary()
    pd.testing.assert_frame_equal(analyst, expected, rtol=1e-9, check_dtype=False)

    # the curator-only view: labelled, with both markers in the plot
    assert "Curator-only" in _texts(at.warning)
    post = _trace(at, pe.interval_trace_name())
    assert list(post["y"]) == _functional_names(t)[:4]
    np.testing.assert_allclose(post["x"], analyst["posterior_mean"][:4], rtol=1e-12)
    np.testing.assert_allclose(_trace(at, pe.CONFIDENTIAL_TRACE)["x"], truth[:4], rtol=1e-12)
    np.testing.assert_allclose(_trace(at, pe.PROBABILITY_PREFIX + pe.CONFIDENTIAL_TRACE)["x"], truth[4:])
    assert any("curator-only" in str(spec["layout"]["title"]) for spec in _figures(at))

    # downloads: the analyst's table, and the curator's with the confidential values
    _assert_same_table(downloads(at, "Download the posterior summary (CSV)"), analyst)
    assert "confidential" not in downloads(at, "Download the posterior summary (CSV)").columns
    _assert_same_table(downloads(at, "Download the posterior summary with the confidential values (CSV, curator only)"),
                       curator)


def test_inference_seed_threshold_and_draws_are_explicit(earnings, public_bounds, downloads, inference_page):
    at, release = inference_page()
    # no release seed here: the page analyses the Synthetic data page's release; its seeds are its own
    assert {n.key for n in at.number_input} >= {"_w_post_draws", "_w_post_seed"}
    assert "_w_seed" not in {n.key for n in at.number_input}

    # a user-chosen t: P(X > 15) next to its confidential value
    at.number_input(key="_w_post_threshold").set_value(15.0).run()
    _no_exception(at)
    curator = at.dataframe[1].value.set_index("functional")
    assert curator.loc["P(X > 15)", "confidential"] == pytest.approx((earnings > 15).mean(), rel=1e-12)
    # fewer draws, another posterior seed: a different Monte Carlo answer for the same release
    at.number_input(key="_w_post_draws").set_value(500).run()
    at.number_input(key="_w_post_seed").set_value(3).run()
    _no_exception(at)
    shown = at.dataframe[0].value
    z = release["earnings"].to_numpy(float)
    expected = inference.dp_posterior_functionals(z, 2.0, public_bounds, 500,
                                                  np.random.default_rng(3), thresholds=(15.0,)).summary()
    pd.testing.assert_frame_equal(shown, expected, rtol=1e-9, check_dtype=False)

    # another press of "Generate release" (a fresh secret seed): another release, another analysis
    _generate(at)
    at.switch_page(INFERENCE).run()
    _no_exception(at)
    assert not at.dataframe[0].value.equals(shown)


def test_inference_repeated_release_table(earnings, public_bounds, downloads, inference_page):
    at, _ = inference_page()
    at.number_input(key="_w_rep_replicates").set_value(60)
    at.number_input(key="_w_rep_draws").set_value(300)
    at.number_input(key="_w_rep_seed").set_value(3)
    at.button(key=RUN_REPEATED).click().run()
    _no_exception(at)
    table = at.dataframe[2].value
    lo, hi = public_bounds
    t = (lo + hi) / 2
    assert table["functional"].tolist() == _functional_names(t)
    truth = [earnings.mean(), *np.quantile(earnings, [0.25, 0.5, 0.75], method="inverted_cdf"),
             (earnings > t).mean()]
    np.testing.assert_allclose(table["confidential"], truth, rtol=1e-12)
    assert ((table["coverage"] >= 0) & (table["coverage"] <= 1)).all()
    assert (table["rmse"] >= table["bias"].abs() - 1e-12).all()
    assert (table["ci_length"] > 0).all()
    assert table.set_index("functional").loc["mean", "coverage"] >= 0.8
    # core's table for the seed shown (timings aside)
    expected = inference.repeated_release_experiment(earnings, 2.0, 100, (lo, hi), np.random.default_rng(3),
                                                     replicates=60, n_draws=300, thresholds=(t,)).table()
    _assert_same_table(table, expected, exclude=("seconds",))
    bars = _trace(at, pe.COVERAGE_TRACE)
    np.testing.assert_allclose(bars["y"], table["coverage"])
    assert "60 releases" in _texts(at.caption)
    # no earnings record exceeds t = 50: P(X > t) is exactly 0 and no interval contains it; the page says why
    assert table.set_index("functional").loc[_functional_names(t)[-1], "coverage"] == 0
    assert "degenerate" in _texts(at.warning) and "Coverage below nominal" in _texts(at.warning)
    _assert_same_table(downloads(at, "Download the repeated-release table (CSV, curator only)"), table)


def test_inference_needs_a_release_and_the_dirichlet_process(inference_page):
    at = _page(INFERENCE)
    assert "Generate a release on the **Synthetic data** page first" in _texts(at.info)
    assert not at.dataframe and not at.get("download_button")
    at, _ = inference_page(regime="py")
    # σ ∈ (0, 1): no conjugate posterior, said in words (issue 36: never an error)
    assert not at.error, _texts(at.error)
    infos = _texts(at.info)
    assert "No conjugate posterior for σ = 0.25" in infos and "Pitman 1996" in infos, infos
    assert not at.dataframe and not at.get("download_button")


def test_inference_on_a_categorical_column_shows_the_posterior_of_each_share(inference_page):
    # P(X = c) | Z ~ Beta(n_c, θ + m − n_c): the analyst's table from the release alone, the
    # confidential shares next to it, and the repeated-release table, with no error
    at, release = inference_page(columns=["degree"], rep_replicates=20, rep_draws=200)
    assert not at.error, _texts(at.error)
    analyst, summary, repeated = (df.value for df in at.dataframe[:3])
    assert analyst["functional"].str.startswith("P(X = ").all() and len(analyst) >= 1
    theta, m = float(at.session_state["theta"]), int(at.session_state["m"])
    release = release["degree"]
    for row in analyst.itertuples():
        n_c = int((release.astype(str) == row.functional[len("P(X = "):-1]).sum())
        beta = stats.beta(n_c, theta + m - n_c)
        assert row.posterior_mean == pytest.approx(beta.mean(), abs=5 * beta.std() / math.sqrt(2000))
    degrees = pd.read_csv(SAMPLE)["degree"].astype(str)
    for row in summary.itertuples():
        assert row.confidential == pytest.approx((degrees == row.functional[len("P(X = "):-1]).mean(), abs=1e-12)
    assert list(repeated["functional"]) == list(analyst["functional"])


def test_inference_on_the_log_scale(earnings, public_bounds):
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    _no_exception(at)
    lo, hi = public_bounds
    transforms = dict(at.session_state["transforms"])
    transforms["earnings"] = {**transforms["earnings"], "log": True}
    at.session_state["transforms"] = transforms
    at.switch_page(INFERENCE).run()
    _no_exception(at)
    if lo <= 0:
        # a public lower bound of 0 has no logarithm: a message naming the bound, not a traceback
        errors = _texts(at.error)
        assert "bounds of column 'earnings'" in errors and "lo > 0" in errors, errors
        assert not at.dataframe
        # the sample README's suggestion for the log scale: public bounds (1, 100) dollars
        lo = 1.0
        transforms = dict(at.session_state["transforms"])
        transforms["earnings"] = {**transforms["earnings"], "lo": lo}
        at.session_state["transforms"] = transforms
        at.run()
        _no_exception(at)
    _generate(at)
    at.switch_page(INFERENCE).run()
    _no_exception(at)
    assert not at.error and LEAK not in _texts(at.warning)
    assert lo < earnings.min() and earnings.max() < hi          # nothing clipped
    # H is uniform on [log lo, log hi]; t starts at its middle
    log_lo, log_hi = math.log(lo), math.log(hi)
    t = (log_lo + log_hi) / 2
    assert at.session_state["post_threshold"] == pytest.approx(t)
    assert f"H is uniform on [{log_lo:.6g}, {log_hi:.6g}] on the scale of log(earnings)" in _texts(at.caption)
    log_x = np.log(earnings)
    curator = at.dataframe[1].value
    truth = [log_x.mean(), *np.quantile(log_x, [0.25, 0.5, 0.75], method="inverted_cdf"), (log_x > t).mean()]
    np.testing.assert_allclose(curator["confidential"], truth, rtol=1e-9)


def test_inference_page_shows_the_discovery_probability_next_to_the_curator_only_value(inference_page):
    at, _ = inference_page()
    metrics = {m.label: m.value for m in at.metric}
    estimate = [v for k, v in metrics.items() if k.startswith("analyst's estimate")]
    confidential = [v for k, v in metrics.items() if "curator only" in k]
    assert estimate and confidential
    assert 0 < float(estimate[0]) < 1 and 0 < float(confidential[0]) < 1
