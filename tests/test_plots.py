"""Tests of core/plots.py: every figure carries exactly the numbers it was given."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from core import plots
from core.plots.profile import multiplicity_bins


def _trace(fig: go.Figure, name: str):
    found = [t for t in fig.data if t.name == name]
    assert len(found) == 1, f"expected one trace named {name!r}, got {[t.name for t in fig.data]}"
    return found[0]


# ---------------------------------------------------------------- format_upper

@pytest.mark.parametrize("value, text", [
    (0.0123401, "0.0124"),
    (0.0124, "0.0124"),
    (0.1, "0.1"),
    (3.1e-9, "3.1e-09"),
    (0.9996, "1"),
    (123456.0, "1.24e+05"),
    (0.0, "0"),
])
def test_format_upper_rounds_up(value, text):
    assert plots.format_upper(value) == text


def test_format_upper_never_below_value():
    rng = np.random.default_rng(0)
    for v in 10.0 ** rng.uniform(-15, 2, size=500):
        for digits in (1, 2, 3, 4):
            shown = float(plots.format_upper(v, digits))
            assert shown >= v * (1 - 1e-12)
            # and not more than one unit in the last shown digit above
            assert shown <= v + 10.0 ** (math.floor(math.log10(v)) - digits + 1) * (1 + 1e-9)


def test_format_upper_rejects_negative():
    with pytest.raises(ValueError, match="value"):
        plots.format_upper(-1e-3)


# ---------------------------------------------------------------- spectrum

def test_spectrum_bars_carry_the_spectrum():
    r = np.array([1, 2, 3, 7])
    counts = np.array([1436, 500, 20, 1])
    fig = plots.spectrum_figure(r, counts)
    (bar,) = fig.data
    assert isinstance(bar, go.Bar)
    # log-spaced bins 1 | 2 | 3–4 | 5–6 | 7–9 | …, empty ones left out
    assert list(bar.x) == ["1", "2", "3–4", "7–9"]
    np.testing.assert_array_equal(bar.y, counts)
    np.testing.assert_array_equal(np.asarray(bar.customdata)[:, 0], counts * r)   # records per bin
    assert fig.layout.yaxis.type == "log"
    # the singleton bar stands out
    assert bar.marker.color[0] != bar.marker.color[1]
    assert plots.spectrum_figure(r, counts, log_y=False).layout.yaxis.type in (None, "linear", "-")
    # 'auto' (the default): log only when the bars span two decades, so a bar of 1 never looks empty
    assert plots.spectrum_figure([1, 2, 9], [5, 3, 1]).layout.yaxis.type in (None, "linear", "-")


def test_spectrum_of_thousands_of_multiplicities_is_a_few_dozen_bars():
    r = np.arange(1, 2372) ** 2                     # 2 371 distinct multiplicities up to 5.6 million
    counts = np.full(r.size, 3)
    edges = multiplicity_bins(int(r.max()))
    assert edges[0] == 1 and list(edges[:4]) == [1, 2, 3, 5] and edges[-1] > r.max()
    assert np.all(np.diff(edges) >= 1) and np.all(edges[1:] <= np.ceil(1.4 * edges[:-1]) + 1)
    (bar,) = plots.spectrum_figure(r, counts).data
    assert len(bar.x) <= 50
    assert bar.y.sum() == counts.sum() and np.asarray(bar.customdata)[:, 0].sum() == (counts * r).sum()
    with pytest.raises(ValueError, match="whole numbers"):
        plots.spectrum_figure([0.5, 2], [1, 1])


def test_spectrum_length_mismatch_names_parameter():
    with pytest.raises(ValueError, match="number_of_values"):
        plots.spectrum_figure([1, 2], [3])


def test_singletons_by_rounding():
    fig = plots.singletons_by_rounding_figure([0, 1, 2], [10, 40, 90], distinct=[50, 120, 200], current=1)
    np.testing.assert_array_equal(_trace(fig, "singletons k₁").y, [10, 40, 90])
    np.testing.assert_array_equal(_trace(fig, "distinct values k").y, [50, 120, 200])
    assert fig.layout.shapes[0].x0 == 1


# ---------------------------------------------------------------- δ(ε)

def test_delta_curves_series_plateau_and_gaps():
    eps = np.array([0.5, 1.0, 2.0, 4.0])
    inst = np.array([0.3, 0.1, 0.02, 0.0])  # exact zero: a gap on the log axis
    tight = np.array([0.2, 0.05, 0.01, 0.0])
    fig = plots.delta_curves_figure(eps, {"instance-level": inst, "tight": tight},
                                    plateau=0.015, delta_target=1e-3, eps_selected=2.0)
    assert fig.layout.yaxis.type == "log"
    t = _trace(fig, "instance-level")
    np.testing.assert_array_equal(t.x, eps)
    np.testing.assert_array_equal(t.y[:3], inst[:3])
    assert np.isnan(t.y[3])
    np.testing.assert_array_equal(_trace(fig, "tight").y[:3], tight[:3])
    plateau = _trace(fig, "singleton plateau")
    assert list(plateau.y) == [0.015, 0.015]
    assert list(plateau.x) == [0.5, 4.0]
    assert list(_trace(fig, "δ target").y) == [1e-3, 1e-3]
    # the plateau is labelled on the chart, value rounded up; annotation y is log10 on a log axis
    texts = [a.text for a in fig.layout.annotations]
    assert any("singleton plateau = 0.015" in s for s in texts)
    ann = [a for a in fig.layout.annotations if "singleton plateau" in a.text][0]
    assert ann.y == pytest.approx(math.log10(0.015))
    assert any(s.x0 == 2.0 for s in fig.layout.shapes)


def test_delta_curves_band():
    eps = np.array([1.0, 2.0])
    fig = plots.delta_curves_figure(eps, {"MC": [0.2, 0.1]}, bands={"MC": ([0.15, 0.08], [0.25, 0.12])})
    np.testing.assert_array_equal(_trace(fig, "MC interval").y, [0.15, 0.08])
    np.testing.assert_array_equal(_trace(fig, "MC upper").y, [0.25, 0.12])
    assert _trace(fig, "MC interval").fill == "tonexty"


def test_delta_curves_length_mismatch():
    with pytest.raises(ValueError, match="series"):
        plots.delta_curves_figure([1.0, 2.0], {"a": [0.1]})


# ---------------------------------------------------------------- m*(ε)

def test_max_m_figure_has_plateau_line_and_annotation():
    eps = np.array([0.5, 1, 2, 5, 10])
    mstar = np.array([3, 10, 40, 89, 89])
    fig = plots.max_m_figure(eps, {"global (Theorem 2)": mstar}, m_sing=89, selected=(2.0, 40), delta=1e-3)
    np.testing.assert_array_equal(_trace(fig, "global (Theorem 2)").y, mstar)
    line = _trace(fig, "singleton limit m_sing")
    assert list(line.y) == [89, 89]
    assert list(line.x) == [0.5, 10]
    assert any("plateau" in a.text and "89" in a.text for a in fig.layout.annotations)
    sel = _trace(fig, "selected (ε, m)")
    assert (sel.x[0], sel.y[0]) == (2.0, 40)
    assert "0.001" in fig.layout.title.text
    ann = [a for a in fig.layout.annotations if "plateau" in a.text][0]
    assert ann.x == 10 and ann.y == 89
    # on a log ε axis annotation coordinates are log10 of the value
    fig_log = plots.max_m_figure(eps, {"g": mstar}, m_sing=89, log_x=True)
    ann = [a for a in fig_log.layout.annotations if "plateau" in a.text][0]
    assert ann.x == pytest.approx(1.0) and fig_log.layout.xaxis.type == "log"


# ---------------------------------------------------------------- feasible region

def test_feasible_region_binary_grid_matches_m_star():
    theta = np.array([1.0, 2.0, 4.0])
    m_star = np.array([10, 20, 40])
    m_grid = np.array([5, 15, 25, 45])
    fig = plots.feasible_region_figure(theta, m_star, m_grid=m_grid, delta_target=1e-3, eps_target=1.0)
    heat = _trace(fig, "feasibility")
    z = np.asarray(heat.z)
    expected = np.array([[1, 1, 1], [0, 1, 1], [0, 0, 1], [0, 0, 0]], dtype=float)
    np.testing.assert_array_equal(z, expected)
    np.testing.assert_array_equal(_trace(fig, "m*(θ)").y, m_star)
    star = _trace(fig, "largest admissible m")
    assert (star.x[0], star.y[0]) == (4.0, 40)
    star2 = _trace(plots.feasible_region_figure(theta, m_star, selected_theta=2.1), "largest admissible m")
    assert (star2.x[0], star2.y[0]) == (2.0, 20)
    assert "ε = 1" in fig.layout.title.text and "δ = 0.001" in fig.layout.title.text


def test_feasible_region_delta_heatmap():
    theta = np.array([1.0, 2.0])
    m_grid = np.array([1, 2, 3])
    delta = np.array([[1e-4, 1e-5], [1e-3, 1e-4], [0.0, 1e-3]])
    fig = plots.feasible_region_figure(theta, [2, 3], m_grid=m_grid, delta_grid=delta, delta_target=1e-3)
    z = np.asarray(_trace(fig, "feasibility").z, dtype=float)
    np.testing.assert_allclose(z[:2], np.log10(delta[:2]))
    assert np.isnan(z[2, 0])
    assert fig.data[0].zmid == pytest.approx(-3)
    with pytest.raises(ValueError, match="delta_grid"):
        plots.feasible_region_figure(theta, [2, 3], m_grid=m_grid, delta_grid=delta.T)


# ---------------------------------------------------------------- overlays

def test_distribution_overlay_shares_bins_and_kde():
    rng = np.random.default_rng(1)
    x = rng.normal(size=200)
    z = rng.normal(0.5, 1, size=100)
    grid = np.linspace(-4, 4, 50)
    fig = plots.distribution_overlay_figure({"confidential": x, "synthetic": z}, kde_grid=grid,
                                            kde={"confidential": np.ones(50), "synthetic": np.zeros(50)},
                                            bins=20)
    hx, hz = _trace(fig, "confidential"), _trace(fig, "synthetic")
    # binned in core on one set of edges over the pooled range: the densities of np.histogram
    edges = np.linspace(min(x.min(), z.min()), max(x.max(), z.max()), 21)
    for trace, sample in ((hx, x), (hz, z)):
        assert trace.type == "bar"
        density, _ = np.histogram(sample, bins=edges, density=True)
        np.testing.assert_allclose(trace.y, density, rtol=1e-12)
        np.testing.assert_allclose(trace.x, (edges[:-1] + edges[1:]) / 2, rtol=1e-12)
        assert trace.width == pytest.approx(edges[1] - edges[0])
    kx = _trace(fig, "confidential KDE")
    np.testing.assert_array_equal(kx.x, grid)
    np.testing.assert_array_equal(kx.y, np.ones(50))
    assert kx.line.color == hx.marker.color
    assert plots.CURATOR_ONLY in fig.layout.title.text
    with pytest.raises(ValueError, match="kde_grid"):
        plots.distribution_overlay_figure({"a": x}, kde={"a": np.ones(3)})


# ---------------------------------------------------------------- comparison

def _runs():
    rows = []
    for mech, base in [("PYPP", 0.01), ("Laplace histogram", 0.05), ("bootstrap", 0.005)]:
        for eps in (0.5, 1.0, 2.0):
            for run in range(5):
                rows.append({"mechanism": mech, "eps": eps, "run": run, "W1": base / eps * (1 + run)})
    return pd.DataFrame(rows)


def test_w1_boxplot_one_box_per_mechanism():
    runs = _runs()
    runs1 = runs[runs.eps == 1.0]
    fig = plots.w1_boxplot_figure(runs1)
    assert [t.name for t in fig.data] == ["PYPP", "Laplace histogram", "bootstrap (no privacy)"]
    np.testing.assert_allclose(fig.data[0].x, 0.01 * np.arange(1, 6))     # horizontal boxes: values on x
    grey = plots.style.MECHANISM_COLOURS["bootstrap"]
    assert fig.data[2].marker.color == grey
    # a ceiling whose name already says so is not labelled twice
    relabelled = runs1.replace({"mechanism": {"bootstrap": "Bootstrap (no privacy)"}})
    fig2 = plots.w1_boxplot_figure(relabelled, ceiling="Bootstrap (no privacy)")
    assert fig2.data[2].name == "Bootstrap (no privacy)" and fig2.data[2].marker.color == grey
    with pytest.raises(ValueError, match="W2"):
        plots.w1_boxplot_figure(runs1, value="W2")


def test_w1_frontier_median_and_quartiles():
    runs = _runs()
    fig = plots.w1_frontier_figure(runs)
    med = _trace(fig, "Laplace histogram")
    np.testing.assert_array_equal(med.x, [0.5, 1.0, 2.0])
    # runs are base/eps * (1..5): median 3, quartiles 2 and 4
    np.testing.assert_allclose(med.y, 0.05 / np.array([0.5, 1.0, 2.0]) * 3)
    band = _trace(fig, "Laplace histogram quartiles")
    np.testing.assert_allclose(band.y, np.concatenate([0.05 / np.array([0.5, 1, 2]) * 4,
                                                       (0.05 / np.array([0.5, 1, 2]) * 2)[::-1]]))
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    _trace(fig, "bootstrap (no privacy)")


# ---------------------------------------------------------------- informativity

def test_informativity_reference_line_has_slope_minus_half():
    n = np.array([100, 1000, 10000])
    curves = pd.DataFrame({"n": n, "mean": [0.1, 0.03, 0.01], "lower": [0.08, 0.025, 0.009],
                           "upper": [0.12, 0.035, 0.011], "series": "PYPP"})
    fig = plots.informativity_figure(curves, slopes={"PYPP": -0.5})
    main = _trace(fig, "PYPP (slope -0.50)")
    np.testing.assert_array_equal(main.y, [0.1, 0.03, 0.01])
    band = _trace(fig, "PYPP (slope -0.50) 95% band")
    np.testing.assert_allclose(band.y, [0.12, 0.035, 0.011, 0.009, 0.025, 0.08])
    ref = _trace(fig, "reference n^-0.5")
    x, y = np.asarray(ref.x, float), np.asarray(ref.y, float)
    assert y[0] == pytest.approx(0.1)
    assert np.log(y[1] / y[0]) / np.log(x[1] / x[0]) == pytest.approx(-0.5)
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"


# ---------------------------------------------------- format_upper is exact (issue 8)
@pytest.mark.parametrize("value, digits, text", [
    (8.29344e-319, 4, "8.294e-319"),   # was rounded down to 8.293e-319
    (1e-322, 3, "1e-322"),             # was a ZeroDivisionError (subnormal)
    (5e-324, 3, "5e-324"),
    (1.5e-323, 1, "2e-323"),           # the float is 1.48e-323: rounded up, not to "1e-323"
    (0.029112, 3, "0.0292"),           # the Compare label printed 0.0291
    (0.199005, 3, "0.2"),
    (0.00153711, 4, "0.001538"),
    (2.70805, 4, "2.709"),             # log 15, an ε threshold
    (math.log(15), 4, "2.709"),
    (float("inf"), 3, "inf"),
    (1.7976931348623157e308, 3, "1.8e+308"),
])
def test_format_upper_exact_cases(value, digits, text):
    assert plots.format_upper(value, digits) == text
    assert float(text) >= value


def test_format_upper_validates():
    for bad in (float("nan"), -5e-324):
        with pytest.raises(ValueError, match="value"):
            plots.format_upper(bad)
    for bad in (0, 18, 2.5):
        with pytest.raises(ValueError, match="digits"):
            plots.format_upper(0.5, bad)
    with pytest.raises(TypeError):
        plots.format_upper("0.5")


def test_delta_hover_text_rounds_up():
    fig = plots.delta_curves_figure([1.0, 2.0], {"δ": [0.029112, 0.0]}, plateau=0.199005)
    trace = _trace(fig, "δ")
    assert list(trace.customdata) == ["0.0292", ""]  # δ = 0 is a gap on the log axis
    assert "0.2" in _trace(fig, "singleton plateau").hovertemplate


def test_category_shares_figure_groups_the_largest_categories_and_shows_labels_as_text():
    categories = ["north", "<b>south</b>", "east", "west"]
    shares = {"confidential": [0.4, 0.3, 0.2, 0.1], "PYPP": [0.35, 0.35, 0.1, 0.2]}
    fig = plots.category_shares_figure(categories, shares, max_categories=2, title="region")
    assert [t.name for t in fig.data] == ["confidential", "PYPP"]
    # the two largest confidential categories, in list order, then the rest summed
    assert list(fig.data[0].x) == ["north", "&lt;b&gt;south&lt;/b&gt;", "(other categories)"]
    np.testing.assert_allclose(fig.data[1].y, [0.35, 0.35, 0.3])
    assert plots.CURATOR_ONLY in fig.layout.title.text and fig.layout.barmode == "group"
    with pytest.raises(ValueError, match="categories"):
        plots.category_shares_figure(categories, {"x": [0.5, 0.5]})


def test_user_text_in_figures_is_shown_as_text():
    """Plotly reads a subset of HTML in titles, axis titles and labels: column and category names
    go in as entities (shown as the characters themselves), never as markup."""
    from core.plots.utility import category_shares_figure, distribution_overlay_figure
    hostile = '<b>wage</b> <a href="http://127.0.0.1:9/">x</a>'
    fig = distribution_overlay_figure({"confidential": np.arange(5.0)}, title=f"{hostile} — overlay",
                                      x_title=hostile)
    text = json.dumps(fig.to_plotly_json()["layout"], ensure_ascii=False)
    assert "<b>" not in text and "<a " not in text and "&lt;b&gt;wage&lt;/b&gt;" in text
    shares = category_shares_figure([hostile, "b"], {"confidential": np.array([0.5, 0.5])}, x_title=hostile)
    blob = json.dumps(shares.to_plotly_json(), ensure_ascii=False)
    assert "<b>" not in blob and "<a " not in blob
