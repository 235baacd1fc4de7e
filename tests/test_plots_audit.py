"""Figures of the Audit page (core.plots.audit)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from core.evaluation import audit
from core.privacy import pld
from core.plots import audit as plots_audit


def names(fig):
    return [t.name for t in fig.data]


def test_tradeoff_figure_has_one_trace_per_mechanism_and_gdp():
    alpha = np.linspace(0, 1, 51)
    lap = pld.laplace_histogram_loss(1.0)
    gau = pld.gaussian_histogram_loss(2.0)
    fig = plots_audit.tradeoff_figure({"Laplace": (alpha, lap.tradeoff(alpha)),
                                       "Gaussian": (alpha, gau.tradeoff(alpha))}, mu_gdp=gau.mu_gdp)
    assert names(fig)[0].startswith("random guessing")
    assert "Laplace" in names(fig) and "Gaussian" in names(fig)
    gdp = [t for t in fig.data if t.name.startswith("μ-GDP")][0]
    assert f"{gau.mu_gdp:.4g}" in gdp.name
    # every curve lies on or below the diagonal 1 − α
    for t in fig.data:
        if t.name in ("Laplace", "Gaussian"):
            assert np.all(np.asarray(t.y) <= 1 - np.asarray(t.x) + 1e-12)


def test_composition_figure_log_axis_and_gaps():
    eps = np.linspace(0, 5, 11)
    composed = np.r_[np.full(5, 0.1), np.zeros(6)]
    fig = plots_audit.composition_figure(eps, composed, composed * 3, releases=4, single=composed / 2,
                                         delta_target=0.01)
    assert names(fig) == ["PLD composition (4 releases)", "naive composition (kε, kδ), k = 4", "one release",
                          "δ target"]
    assert fig.layout.yaxis.type == "log"
    y = np.asarray(fig.data[0].y, dtype=float)
    assert np.isnan(y[5:]).all()          # zeros are gaps on a log axis, never a made-up floor
    assert fig.data[0].customdata[0] == "0.1"


def test_audit_figure_points_and_theory():
    res = audit.audit_pypp([2, 2, 3], 0.0, 1.0, 50, 1.0, 1e-3, n_simulations=2000, rng=np.random.default_rng(0))
    alpha = np.linspace(0, 1, 21)
    theory = (alpha, pld.pypp_instance_loss([2, 2, 3], 1.0, 50).tradeoff(alpha))
    fig = plots_audit.audit_figure(res, theory)
    n = names(fig)
    assert "theory (exact trade-off)" in n and "likelihood ratio operating point" in n
    assert "black box ROC" in n
    point = [t for t in fig.data if t.name == "likelihood ratio operating point"][0]
    assert point.x[0] == res.attacks[0].fpr and point.y[0] == res.attacks[0].tpr
    th = [t for t in fig.data if t.name.startswith("theory")][0]
    np.testing.assert_allclose(th.x, theory[1])
    np.testing.assert_allclose(th.y, 1 - alpha)


def test_risk_figure():
    r = [audit.RiskEstimate("singling out", 100, 0.3, 0.2, 0.125, (0.05, 0.2), ""),
         audit.RiskEstimate("inference", 100, 0.1, 1.0, math.nan, (math.nan, math.nan), "")]
    fig = plots_audit.risk_figure(r)
    assert names(fig) == ["residual risk"]
    assert list(fig.data[0].y) == [0.125, 0.0]


@pytest.mark.parametrize("call", [
    lambda: plots_audit.tradeoff_figure({"a": ([0, 0.5], [1.0])}),
    lambda: plots_audit.tradeoff_figure({"a": ([0, 1.5], [1.0, 0.0])}),
    lambda: plots_audit.composition_figure([0, 1], [0.1], [0.1, 0.2], releases=2),
])
def test_bad_input(call):
    with pytest.raises(ValueError):
        call()
