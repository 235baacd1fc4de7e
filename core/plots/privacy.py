"""Figures of the privacy accounting: δ(ε) curves, the ε-vs-m curve and the feasible region (docs/mathematics.md §2–3)."""

from __future__ import annotations

import math
from typing import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from ..formatting import format_upper
from .style import LAYOUT, as_1d, log_axis, series_colour, positive_or_nan, same_length, upper_labels

__all__ = ["delta_curves_figure", "feasible_region_figure", "max_m_figure"]


def delta_curves_figure(eps, series: Mapping[str, Sequence[float]], *,
                        plateau: float | None = None, plateau_label: str = "singleton plateau",
                        bands: Mapping[str, tuple[Sequence[float], Sequence[float]]] | None = None,
                        delta_target: float | None = None, eps_selected: float | None = None,
                        title: str = "δ(ε): probability that the privacy loss exceeds ε") -> go.Figure:
    """δ(ε) curves on a log-δ axis (docs/mathematics.md §3).

    Parameters
    ----------
    eps : array_like of float, shape (E,)
        Grid of ε > 0.
    series : mapping label → array of shape (E,)
        One curve per label, e.g. instance-level δ_x(ε), tight profile, global δ*(ε),
        simple bound. Values ≤ 0 are not drawable on a log axis and are left as gaps
        (``NaN``): for σ = 0 the paper's δ is exactly 0 once (e^ε − 1)(r − 1) ≥ m.
    plateau : float, optional
        The singleton term :math:`T_1 = m/(m+\\theta+n-1)` (docs/mathematics.md §3.1), drawn as a
        labelled horizontal line across the ε range: no ε brings δ below it when the
        data contain a singleton.
    plateau_label : str
        Legend name of the plateau trace.
    bands : mapping label → (lower, upper), optional
        Shaded interval around a series (the Monte Carlo interval for σ ∈ (0, 1)).
    delta_target : float, optional
        Horizontal line at the δ the user targets.
    eps_selected : float, optional
        Vertical line at the ε currently selected.
    """
    x = as_1d("eps", eps)
    # Traces and layout as plain dicts, validated once by go.Figure: add_trace / add_vline /
    # update_layout validate on every call (three times the cost of this figure).
    traces, shapes, annotations = [], [], []
    for i, (label, values) in enumerate(series.items()):
        y = positive_or_nan(same_length(f"series[{label!r}]", values, x, "eps"))
        colour = series_colour(i)
        if bands and label in bands:
            lower, upper = bands[label]
            lo = positive_or_nan(same_length(f"bands[{label!r}] lower", lower, x, "eps"))
            hi = positive_or_nan(same_length(f"bands[{label!r}] upper", upper, x, "eps"))
            traces.append(dict(type="scatter", x=x, y=hi, mode="lines", line=dict(width=0), showlegend=False,
                               name=f"{label} upper", hoverinfo="skip"))
            traces.append(dict(type="scatter", x=x, y=lo, mode="lines", line=dict(width=0), fill="tonexty",
                               fillcolor="rgba(31,119,180,0.2)", name=f"{label} interval", hoverinfo="skip"))
        # Hover text rounds δ up (format_upper); plotly's d3 formats round to nearest.
        traces.append(dict(type="scatter", x=x, y=y, mode="lines", name=label, line=dict(color=colour),
                           customdata=upper_labels(y),
                           hovertemplate="ε=%{x:.3g}<br>δ ≤ %{customdata}<extra>" + label + "</extra>"))
    if plateau is not None:
        traces.append(dict(type="scatter", x=[x.min(), x.max()], y=[plateau, plateau], mode="lines",
                           name=plateau_label, line=dict(color="black", dash="dash"),
                           hovertemplate=f"{plateau_label}: {format_upper(plateau)}<extra></extra>"))
        annotations.append(dict(x=x.max(), y=math.log10(plateau) if plateau > 0 else 0,
                                text=f"{plateau_label} = {format_upper(plateau)}",
                                showarrow=False, xanchor="right", yanchor="bottom"))
    if delta_target is not None:
        traces.append(dict(type="scatter", x=[x.min(), x.max()], y=[delta_target, delta_target], mode="lines",
                           name="δ target", line=dict(color="grey", dash="dot")))
    if eps_selected is not None:
        # what fig.add_vline(..., annotation_position="top left") draws
        shapes.append(dict(type="line", x0=eps_selected, x1=eps_selected, xref="x", y0=0, y1=1, yref="y domain",
                           line=dict(color="grey", dash="dot")))
        annotations.append(dict(x=eps_selected, y=1, xref="x", yref="y domain", text=f"ε = {eps_selected:g}",
                                showarrow=False, xanchor="right", yanchor="top"))
    # One tick per decade reads well over a few decades; over a hundred (δ can reach 1e-300)
    # it costs the browser ~0.4 s per redraw, so plotly then picks its own ticks.
    positive = np.concatenate([np.asarray(v, dtype=float).ravel() for v in series.values()] + [np.ones(1)])
    positive = positive[np.isfinite(positive) & (positive > 0)]
    decades = math.log10(positive.max()) - math.log10(positive.min()) if positive.size else 0.0
    layout = dict(title=dict(text=title), xaxis=dict(title=dict(text="ε")),
                  yaxis=dict(title=dict(text="δ (log scale)"), type="log", exponentformat="power",
                             **({"dtick": 1} if decades <= 12 else {})),
                  shapes=shapes, annotations=annotations, **LAYOUT)
    return go.Figure(data=traces, layout=layout)


def max_m_figure(eps, series: Mapping[str, Sequence[float]], *, m_sing: float | None = None,
                 selected: tuple[float, float] | None = None, delta: float | None = None,
                 log_x: bool = False) -> go.Figure:
    """Largest admissible release size m*(ε, δ) against ε, with the singleton limit.

    Parameters
    ----------
    eps : array_like of float, shape (E,)
    series : mapping label → array of shape (E,)
        m*(ε, δ) per guarantee (e.g. the global exact profile, the paper's Theorem 2, instance-level).
    m_sing : float, optional
        The singleton limit :math:`m_{\\text{sing}}(\\delta)=\\lfloor\\delta(\\theta+n-1)/(1-\\delta)\\rfloor`
        (docs/mathematics.md §3.1), drawn as a horizontal line annotated "plateau": no ε, however
        large, admits a bigger release.
    selected : (ε, m), optional
        The current setting, marked.
    delta : float, optional
        Shown in the title.
    """
    x = as_1d("eps", eps)
    fig = go.Figure()
    for i, (label, values) in enumerate(series.items()):
        y = same_length(f"series[{label!r}]", values, x, "eps")
        fig.add_trace(go.Scatter(x=x, y=y, mode="lines+markers", name=label,
                                 line=dict(color=series_colour(i), shape="hv"), marker=dict(size=4),
                                 hovertemplate="ε=%{x:.3g}<br>m*=%{y:,.0f}<extra>" + label + "</extra>"))
    if m_sing is not None:
        fig.add_trace(go.Scatter(x=[x.min(), x.max()], y=[m_sing, m_sing], mode="lines",
                                 name="singleton limit m_sing", line=dict(color="black", dash="dash")))
        # Annotation coordinates on a log axis are log10 of the data value.
        fig.add_annotation(x=math.log10(x.max()) if log_x else x.max(), y=m_sing,
                           text=f"plateau: m_sing = {int(m_sing):,}",
                           showarrow=False, xanchor="right", yanchor="bottom")
    if selected is not None:
        fig.add_trace(go.Scatter(x=[selected[0]], y=[selected[1]], mode="markers", name="selected (ε, m)",
                                 marker=dict(symbol="x", size=12, color="black")))
    title = "Largest admissible release size m*(ε" + (f", δ = {delta:g})" if delta is not None else ")")
    fig.update_layout(title=title, xaxis_title="ε", yaxis_title="m*", **LAYOUT)
    if log_x:
        fig.update_xaxes(**log_axis(x))
    return fig


def feasible_region_figure(theta, m_star, *, m_grid=None, delta_grid=None,
                           delta_target: float | None = None, eps_target: float | None = None,
                           selected_theta: float | None = None, log_x: bool = False,
                           rule: str = "global exact profile") -> go.Figure:
    """Feasible (θ, m) region for a target (ε, δ) (inverse calibration, docs/mathematics.md §3.1).

    A setting (θ, m) is feasible when m ≤ m*(ε, δ; θ), because the global δ grows with m.

    Parameters
    ----------
    theta : array_like of float, shape (T,)
        Grid of θ > 0.
    m_star : array_like of int, shape (T,)
        Largest admissible m at each θ (``core.privacy.DIRICHLET_PROCESS.largest_m``: the exact
        global profile, T₁ ≤ δ at any ε; or the paper's ``core.privacy.max_synthetic_size``).
    m_grid : array_like of int, shape (M,), optional
        Release sizes for the heatmap rows; by default 60 values up to 1.2·max m*.
    delta_grid : array_like of float, shape (M, T), optional
        δ*(ε; θ, m) on the grid; if given the heatmap shows log10 δ* (with the target as
        the colour midpoint), otherwise it shows feasibility (1 = feasible, 0 = not).
    delta_target, eps_target : float, optional
        The target, shown in the title.
    selected_theta : float, optional
        θ whose largest admissible m is marked (the nearest grid point; default: the θ
        of the grid with the largest m*).
    log_x : bool
        Log scale for θ (for a geometric θ grid).
    rule : str
        The guarantee ``m_star`` comes from, named in the title.
    """
    t = as_1d("theta", theta)
    ms = same_length("m_star", m_star, t, "theta")
    if m_grid is None:
        top = max(1.0, 1.2 * float(np.nanmax(ms)))
        m_grid = np.unique(np.linspace(1, top, 60).round())
    mg = as_1d("m_grid", m_grid)
    if delta_grid is not None:
        z = np.asarray(delta_grid, dtype=float)
        if z.shape != (mg.size, t.size):
            raise ValueError(f"delta_grid must have shape (len(m_grid), len(theta)) = "
                             f"{(mg.size, t.size)}, got {z.shape}")
        with np.errstate(divide="ignore"):
            zlog = np.log10(np.where(z > 0, z, np.nan))
        heat = go.Heatmap(x=t, y=mg, z=zlog, name="feasibility", colorscale="RdBu_r",
                          zmid=math.log10(delta_target) if delta_target else None,
                          colorbar=dict(title="log10 δ*"),
                          customdata=np.array([upper_labels(row) for row in z], dtype=object),
                          hovertemplate="θ=%{x:.3g}<br>m=%{y:,.0f}<br>δ* ≤ %{customdata}<extra></extra>")
    else:
        feasible = (mg[:, None] <= ms[None, :]).astype(float)
        heat = go.Heatmap(x=t, y=mg, z=feasible, name="feasibility", zmin=0, zmax=1,
                          colorscale=[[0, "#f4cccc"], [0.5, "#f4cccc"], [0.5, "#b6d7a8"], [1, "#b6d7a8"]],
                          showscale=False,
                          hovertemplate="θ=%{x:.3g}<br>m=%{y:,.0f}<br>feasible=%{z}<extra></extra>")
    fig = go.Figure(heat)
    fig.add_trace(go.Scatter(x=t, y=ms, mode="lines", name="m*(θ)", line=dict(color="black", shape="hv")))
    if selected_theta is None:
        idx = int(np.nanargmax(ms))
    else:
        idx = int(np.argmin(np.abs(t - selected_theta)))
    fig.add_trace(go.Scatter(x=[t[idx]], y=[ms[idx]], mode="markers+text", name="largest admissible m",
                             marker=dict(symbol="star", size=14, color="gold", line=dict(color="black", width=1)),
                             text=[f"m* = {int(ms[idx]):,}"], textposition="top center"))
    target = ""
    if eps_target is not None and delta_target is not None:
        target = f" for ε = {eps_target:g}, δ = {delta_target:g}"
    fig.update_layout(title="Feasible (θ, m)" + target + f" (σ = 0, {rule})",
                      xaxis_title="θ", yaxis_title="m", **LAYOUT)
    if log_x:
        fig.update_xaxes(**log_axis(t))
    return fig
