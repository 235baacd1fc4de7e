"""Plotly figures of the Audit page (docs/audit.md).

Builders take numbers computed by :mod:`core.privacy.pld` and :mod:`core.evaluation.audit` and return a
:class:`plotly.graph_objects.Figure`; the only arithmetic is presentation (mapping a
trade-off curve to ROC coordinates, hiding zeros on a log axis, rounding a displayed δ
up). Trace names are stable so that tests can find a series:

* trade-off plots: one trace per mechanism label, ``"no privacy"`` diagonal reference
  ``"random guessing"``, ``"μ-GDP"`` when given;
* composition plots: ``"PLD composition (k releases)"``, ``"naive composition (kε, kδ)"``,
  ``"one release"``, ``"δ target"``;
* audit plots: ``"theory (exact trade-off)"``, ``"stated (ε, δ)"``, ``"<attack> ROC"`` and
  ``"<attack> operating point"`` per attack;
* risk plots: one bar trace ``"residual risk"``.

Mechanisms keep their colour of every figure (:data:`core.plots.style.MECHANISM_COLOURS`), and
many trade-off curves are drawn as small multiples of at most five series per axis, the
diagonal of random guessing in each (:func:`core.plots.style.mechanism_panels`).
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from scipy import stats

from ..formatting import format_certified_eps, format_risk
from .style import (LAYOUT, PanelGrid, log_axis, mechanism_colours, mechanism_panels, plot_text, positive_or_nan,
                    series_colour, upper_labels)

__all__ = [
    "audit_figure",
    "composition_figure",
    "risk_figure",
    "tradeoff_figure",
]


_DASHES = ("solid", "dash", "dot", "dashdot")


def _curve(name: str, alpha, beta) -> tuple[np.ndarray, np.ndarray]:
    a = np.atleast_1d(np.asarray(alpha, dtype=float))
    b = np.atleast_1d(np.asarray(beta, dtype=float))
    if a.ndim != 1 or a.shape != b.shape:
        raise ValueError(f"{name}: alpha and beta must be 1-D arrays of the same length")
    if not (np.all((a >= 0) & (a <= 1)) and np.all((b >= 0) & (b <= 1))):
        raise ValueError(f"{name}: alpha and beta must lie in [0, 1]")
    return a, b


def tradeoff_figure(curves: Mapping[str, tuple[Sequence[float], Sequence[float]]], *,
                    mu_gdp: float | None = None, names: Mapping[str, str] | None = None,
                    title: str = "Trade-off curves: type II error β against type I error α") -> go.Figure:
    """Trade-off (f-DP) curves β(α) of several mechanisms, as small multiples (docs/audit.md §3).

    Parameters
    ----------
    curves : mapping label → (alpha, beta), arrays in [0, 1] of equal length
        The best test between x and its worst neighbour has type-I error α and type-II
        error β(α); the higher the curve, the harder the two are to tell apart.
    mu_gdp : float, optional
        Draws the μ-GDP curve :math:`\\Phi(\\Phi^{-1}(1-\\alpha) - \\mu)` for reference, in
        the panel of the Gaussian histogram (the one mechanism it describes), else the first.
    names : mapping label → mechanism name, optional
        Each curve's mechanism: its colour and family panel (a label missing here is its own name).

    Returns
    -------
    plotly.graph_objects.Figure
        One panel per family of mechanisms, each with the diagonal ``"random guessing
        (perfect privacy)"`` and at most five series; one trace per curve, named by its label.
    """
    names = dict(names or {})
    checked = {label: _curve(label, alpha, beta) for label, (alpha, beta) in curves.items()}
    grid_alpha = np.linspace(0.0, 1.0, 201)
    colours = mechanism_colours(list(checked), names)
    panels = mechanism_panels(list(checked), names, references=1 + (mu_gdp is not None))
    grid = PanelGrid(panels, cols=2, panel_height=300)
    gaussian = next((i for i, p in enumerate(panels) if any(names.get(k, k) == "gaussian_histogram" for k in p.keys)), 0)
    for i, panel in enumerate(panels or [None]):
        grid.add(i, dict(type="scatter", x=grid_alpha, y=1 - grid_alpha, mode="lines",
                         name="random guessing (perfect privacy)", line=dict(color="lightgrey", dash="dash"),
                         legendgroup="random guessing", showlegend=i == 0))
        for j, label in enumerate(panel.keys if panel is not None else ()):
            a, b = checked[label]
            # a dash pattern per curve of a panel as well: equal curves (the same stated (ε, δ)) stay apart
            grid.add(i, dict(type="scatter", x=a, y=b, mode="lines", name=plot_text(label),
                             line=dict(color=colours[label], dash=_DASHES[j % len(_DASHES)], width=2),
                             hovertemplate="α=%{x:.3g}<br>β=%{y:.3g}<extra>" + plot_text(label) + "</extra>"))
        if mu_gdp is not None and i == gaussian:
            with np.errstate(divide="ignore"):
                g = stats.norm.cdf(stats.norm.ppf(1 - grid_alpha) - mu_gdp)
            grid.add(i, dict(type="scatter", x=grid_alpha, y=g, mode="lines", name=f"μ-GDP, μ = {mu_gdp:.4g}",
                             line=dict(color="black", dash="dot")))
    grid.title_axes(x_title="type I error α = P_x(decide y)", y_title="type II error β = P_y(decide x)")
    grid.axes("x", range=[0, 1])
    grid.axes("y", range=[0, 1])
    return grid.figure(title=title)


def composition_figure(eps, composed, naive, *, releases: int, single=None, delta_target: float | None = None,
                       title: str | None = None) -> go.Figure:
    """δ(ε) after ``releases`` independent releases: PLD composition next to naive (kε, kδ).

    Parameters
    ----------
    eps : array_like of float ≥ 0, shape (E,)
    composed, naive : array_like, shape (E,)
        δ(ε) by PLD composition and by naive composition.
    releases : int ≥ 1
    single : array_like, shape (E,), optional
        δ(ε) of one release, for reference.
    delta_target : float, optional
    """
    x = np.atleast_1d(np.asarray(eps, dtype=float))
    series = {f"PLD composition ({releases} release{'s' if releases > 1 else ''})": composed,
              f"naive composition (kε, kδ), k = {releases}": naive}
    if single is not None:
        series["one release"] = single
    fig = go.Figure()
    dashes = ("solid", "dash", "dot")
    for i, (label, values) in enumerate(series.items()):
        y = np.atleast_1d(np.asarray(values, dtype=float))
        if y.shape != x.shape:
            raise ValueError(f"{label} has {y.size} values but eps has {x.size}")
        y = positive_or_nan(y)
        fig.add_trace(go.Scatter(x=x, y=y, mode="lines", name=label, line=dict(color=series_colour(i), dash=dashes[i]),
                                 customdata=upper_labels(y),
                                 hovertemplate="ε=%{x:.3g}<br>δ ≤ %{customdata}<extra>" + label + "</extra>"))
    if delta_target is not None:
        fig.add_trace(go.Scatter(x=[x.min(), x.max()], y=[delta_target, delta_target], mode="lines",
                                 name="δ target", line=dict(color="grey", dash="dot")))
    fig.update_layout(title=title or f"δ(ε) after {releases} release(s) from the same data",
                      xaxis_title="total ε", yaxis_title="δ (log scale)", **LAYOUT)
    drawn = [np.asarray(t.y, dtype=float) for t in fig.data]
    fig.update_yaxes(**log_axis(np.concatenate(drawn) if drawn else []))
    return fig


def audit_figure(audit, theory: tuple[Sequence[float], Sequence[float]] | None = None) -> go.Figure:
    """The audit in ROC coordinates: every attack's ROC and operating point (with its
    Clopper–Pearson box, at the attack's confidence :math:`1-(1-c)/2`) under the theoretical
    boundary (docs/audit.md §5.3).

    Parameters
    ----------
    audit : core.evaluation.audit.AuditResult
    theory : (alpha, beta), optional
        The exact trade-off curve of the mechanism; drawn as the ROC boundary
        (FPR, TPR) = (β(α), 1 − α): no test lies above it.
    """
    fig = go.Figure()
    if theory is not None:
        a, b = _curve("theory", *theory)
        fig.add_trace(go.Scatter(x=b, y=1 - a, mode="lines", name="theory (exact trade-off)",
                                 line=dict(color="black")))
    eps, delta = audit.stated_eps, audit.stated_delta
    grid = np.linspace(0, 1, 201)
    fig.add_trace(go.Scatter(x=grid, y=np.minimum(1.0, np.exp(min(eps, 700.0)) * grid + delta), mode="lines",
                             name="stated (ε, δ): TPR ≤ e^ε FPR + δ", line=dict(color="grey", dash="dash")))
    for i, att in enumerate(audit.attacks):
        colour = series_colour(i + 1)
        fig.add_trace(go.Scatter(x=att.roc_fpr, y=att.roc_tpr, mode="lines", name=f"{att.name} ROC",
                                 line=dict(color=colour, width=1)))
        lo_f, hi_f = att.fpr_interval
        lo_t, hi_t = att.tpr_interval
        fig.add_trace(go.Scatter(
            x=[att.fpr], y=[att.tpr], mode="markers", name=f"{att.name} operating point",
            marker=dict(color=colour, size=10),
            error_x=dict(type="data", symmetric=False, array=[hi_f - att.fpr], arrayminus=[att.fpr - lo_f]),
            error_y=dict(type="data", symmetric=False, array=[hi_t - att.tpr], arrayminus=[att.tpr - lo_t]),
            hovertemplate=(f"FPR=%{{x:.4g}}, TPR=%{{y:.4g}}<br>certifies ε ≥ {format_certified_eps(att.eps_lower)}"
                           f"<extra>{att.name}</extra>")))
    fig.update_layout(title=f"Audit: {audit.n_simulations:,} releases per side",
                      xaxis_title="FPR = P_y(decide x)", yaxis_title="TPR = P_x(decide x)", **LAYOUT)
    fig.update_xaxes(range=[0, 1])
    fig.update_yaxes(range=[0, 1])
    return fig


def risk_figure(risks) -> go.Figure:
    """Residual disclosure risks (singling out, linkability, inference) with their intervals.

    A negative estimate is Monte Carlo noise around 0: its bar is drawn at 0 and labelled
    "≤ 0 (noise)" (:func:`core.formatting.format_risk`); interval ends are clipped to [0, 1].

    Parameters
    ----------
    risks : sequence of core.evaluation.audit.RiskEstimate
    """
    names = [r.attack for r in risks]
    vals = [0.0 if math.isnan(r.risk) else max(0.0, r.risk) for r in risks]
    up = [0.0 if math.isnan(r.risk) else max(0.0, min(1.0, r.risk_interval[1]) - v) for r, v in zip(risks, vals)]
    down = [0.0 if math.isnan(r.risk) else max(0.0, v - max(0.0, r.risk_interval[0])) for r, v in zip(risks, vals)]
    shown = [format_risk(r.risk) for r in risks]
    fig = go.Figure(go.Bar(x=names, y=vals, name="residual risk", marker_color=series_colour(0),
                           error_y=dict(type="data", symmetric=False, array=up, arrayminus=down),
                           text=shown, textposition="outside",
                           customdata=[[r.train_rate, r.control_rate, text] for r, text in zip(risks, shown)],
                           hovertemplate=("risk %{customdata[2]}<br>success on training %{customdata[0]:.3g}, "
                                          "on control %{customdata[1]:.3g}<extra></extra>")))
    fig.update_layout(title="Disclosure risk: attack success beyond the held-out control",
                      yaxis_title="(r_train − r_control)/(1 − r_control)", **LAYOUT)
    fig.update_yaxes(range=[0, 1])
    return fig

