"""The house style of figures with many mechanisms (issue 25): one colour per mechanism, small
multiples of at most five series per axis, readable log ticks, ε and audit numbers in words."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from core import formatting
from core.evaluation.compare import ALL_MECHANISMS, DEFAULT_MECHANISMS
from core.plots import audit as plots_audit
from core.plots import style, utility

#: Mechanisms announced but not built yet: they have their colour and family already.
COMING = ("opendp_laplace_histogram", "opendp_gaussian_histogram", "aim", "mst")


def test_every_mechanism_has_its_own_colour_and_none_is_the_confidential_data():
    names = set(ALL_MECHANISMS) | set(COMING)
    assert names <= set(style.MECHANISM_COLOURS)
    colours = [c.lower() for c in style.MECHANISM_COLOURS.values()]
    assert len(set(colours)) == len(colours)
    assert style.CONFIDENTIAL_COLOUR.lower() not in colours
    families = [n for _, members in style.MECHANISM_FAMILIES for n in members]
    assert sorted(families) == sorted(style.MECHANISM_COLOURS)        # each in exactly one family
    # unknown names get distinct spare colours, never a mechanism's
    spare = style.mechanism_colours(["a", "b", "c", "pypp"])
    assert len(set(spare.values())) == 4 and spare["pypp"] == style.MECHANISM_COLOURS["pypp"]
    assert not {spare["a"], spare["b"], spare["c"]} & set(style.MECHANISM_COLOURS.values())


@pytest.mark.parametrize("count", [0, 1, 4, 5, 12, 16, 23])
@pytest.mark.parametrize("references", [0, 1, 2])
def test_panels_hold_every_series_once_and_at_most_five_per_axis(count, references):
    keys = (list(DEFAULT_MECHANISMS) + list(COMING) + [f"other {i}" for i in range(10)])[:count]
    panels = style.mechanism_panels(keys, references=references)
    assert sorted(k for p in panels for k in p.keys) == sorted(keys)
    assert all(1 <= len(p.keys) <= style.MAX_SERIES_PER_AXIS - references for p in panels)
    # a family that fits one panel is never split across panels
    where = {k: i for i, p in enumerate(panels) for k in p.keys}
    for _, members in style.MECHANISM_FAMILIES:
        present = [k for k in members if k in where]
        if len(present) <= style.MAX_SERIES_PER_AXIS - references:
            assert len({where[k] for k in present}) <= 1, (present, panels)


def _series_per_axis(fig) -> dict:
    out: dict = {}
    for t in fig.data:
        if t.showlegend is False and t.name and t.name.endswith("quartiles"):
            continue                                   # a band belongs to its median line
        axis = (t.xaxis or "x", t.yaxis or "y")
        out.setdefault(axis, set()).add(t.legendgroup or t.name)
    return out


def test_mechanism_figures_draw_at_most_five_series_per_axis_in_the_mechanism_colours():
    names = list(DEFAULT_MECHANISMS) + list(COMING)
    rng = np.random.default_rng(0)
    runs = pd.DataFrame([{"mechanism": n, "label": n.upper(), "eps": e, "W1": rng.uniform(0.1, 1)}
                         for n in names for e in (0.5, 1.0, 2.0) for _ in range(3)])
    x = rng.normal(size=50)
    samples = {"confidential": x, **{n.upper(): x + i for i, n in enumerate(names)}}
    label_names = {n.upper(): n for n in names}
    grid = np.linspace(-3, 20, 30)
    figures = [
        utility.w1_boxplot_figure(runs, by="label", ceiling="BOOTSTRAP"),
        utility.w1_frontier_figure(runs, by="label", ceiling="BOOTSTRAP"),
        utility.distribution_overlay_figure(samples, kde_grid=grid, kde={k: np.ones(30) for k in samples},
                                            names=label_names, histograms="reference"),
        utility.category_shares_figure(["a", "b"], {k: [0.5, 0.5] for k in samples}, names=label_names),
        plots_audit.tradeoff_figure({n.upper(): ([0.0, 1.0], [1.0, 0.0]) for n in names}, mu_gdp=1.0,
                                    names=label_names),
    ]
    for fig in figures:
        per_axis = _series_per_axis(fig)
        assert len(per_axis) > 1 and max(len(s) for s in per_axis.values()) <= style.MAX_SERIES_PER_AXIS, per_axis
        for t in fig.data:
            name = label_names.get(str(t.legendgroup or t.name))
            if name is not None and t.type in ("box", "bar"):
                assert t.marker.color == style.MECHANISM_COLOURS[name]
            elif name is not None and t.type == "scatter":
                colour = t.line.color if t.fill is None else t.fillcolor     # a line, or its quartile band
                assert colour == style.MECHANISM_COLOURS[name]
    # the confidential data are the reference of every overlay panel
    overlay = figures[2]
    assert len({t.xaxis for t in overlay.data if t.name == "confidential"}) == len(_series_per_axis(overlay))


@pytest.mark.parametrize("lo, hi, ticks, text", [
    (1e-4, 0.3, [1e-4, 1e-3, 1e-2, 1e-1], ["10⁻⁴", "10⁻³", "10⁻²", "10⁻¹"]),
    (0.012, 0.9, [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1], ["0.01", "0.02", "0.05", "0.1", "0.2", "0.5", "1"]),
    (3, 40, [5, 10, 20, 50], ["5", "10", "20", "50"]),
    (100, 1e6, [1e2, 1e3, 1e4, 1e5, 1e6], ["10²", "10³", "10⁴", "10⁵", "10⁶"]),
    (0.002, 0.003, [0.002, 0.003], ["2×10⁻³", "3×10⁻³"]),
])
def test_log_ticks_label_decades_or_steps_with_their_exponents(lo, hi, ticks, text):
    vals, labels = style.log_ticks([lo, 0.0, -1.0, math.nan, hi])
    np.testing.assert_allclose(vals, ticks)
    assert labels == text


def test_log_ticks_thin_many_decades_and_leave_narrow_ranges_to_plotly():
    vals, labels = style.log_ticks([1e-300, 1.0])
    assert len(vals) <= 8 and labels[-1] == "1" and all(v > 0 for v in vals)
    assert style.log_ticks([0.011, 0.018]) is None and style.log_ticks([0.0, -1.0]) is None
    assert style.log_axis([]) == {"type": "log", "exponentformat": "power"}


# ----------------------------------------------------------------------------- numbers in words
@pytest.mark.parametrize("value, text", [(math.inf, "∞"), (0.0, "0"), (2.00001, "2.01"), (0.0123401, "0.0124")])
def test_format_eps_rounds_up_and_writes_infinity(value, text):
    assert formatting.format_eps(value) == text


def test_format_lower_never_above_the_value():
    rng = np.random.default_rng(1)
    for v in 10.0 ** rng.uniform(-12, 3, size=300):
        assert float(formatting.format_lower(v)) <= v
    assert formatting.format_lower(0.0123499) == "0.0123" and formatting.format_lower(2.0) == "2"


def test_zero_and_infinite_epsilon_and_empty_certificates_are_explained():
    assert formatting.composed_eps_note(1.3, 1e-3, 5) == ""
    assert formatting.composed_eps_note(math.inf, 1e-3, 5).startswith("No finite ε: after 5 releases")
    assert formatting.composed_eps_note(0.0, 1e-3).startswith("After one release, δ(0)")
    assert formatting.format_certified_eps(-0.2) == "0" and formatting.format_certified_eps(1.23456, 3) == "1.23"
    assert "ε ≥ 0" in formatting.certified_eps_note(0.0) and formatting.certified_eps_note(0.4) == ""


def test_negative_residual_risk_is_noise_and_intervals_are_clipped():
    assert formatting.format_risk(-0.0034) == "≤ 0 (noise)"
    assert formatting.format_risk(0.01231) == "0.0124" and formatting.format_risk(math.nan) == "n/a"
    assert formatting.format_risk_interval(-0.02, 0.0123) == "[0, 0.0123]"
    assert formatting.risk_note([0.1, -0.0034]) and formatting.risk_note([0.1, 0.0]) == ""
