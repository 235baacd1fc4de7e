"""Static figures as SVG text: pictures that open in any browser, with no script and no
plotly.js — for files kept on disk, such as the curator record's overlays (docs/verdicts.md §4).

A page of plotly carries its 4.8 MB library (1.5 MB deflated); an SVG of a histogram and a
few curves is a few tens of kilobytes, and it shows the same picture anywhere, offline.
"""

from __future__ import annotations

import math
from html import escape
from typing import Mapping, Sequence

import numpy as np

from ..formatting import CONFIDENTIAL_MARK
from .style import CURATOR_ONLY, as_1d, same_length, series_colour

__all__ = ["overlay_svg"]

_FONT = "font-family:sans-serif;font-size:12px"


def _ticks(lo: float, hi: float, count: int = 6) -> np.ndarray:
    """About ``count`` round tick values in [lo, hi] (steps of 1, 2 or 5 times a power of ten)."""
    ends = np.array([v for v in (lo, hi) if math.isfinite(v)])
    if not hi > lo:
        return ends[:1]
    raw = (hi - lo) / count
    if not (math.isfinite(raw) and raw > 0):        # a span beyond the float range, or a subnormal one
        return ends
    power = 10.0 ** math.floor(math.log10(raw))
    step = next((f * power for f in (1, 2, 5, 10) if f * power >= raw), math.inf)
    with np.errstate(all="ignore"):
        first = math.ceil(lo / step) * step if math.isfinite(lo / step) else math.nan
        ticks = np.arange(first, hi + step * 1e-9, step) if math.isfinite(first) and step > 0 else ends
    if ticks.size > 4 * count or not np.all(np.isfinite(ticks)):
        return ends
    return ticks


def _text(x: float, y: float, value: str, anchor: str = "middle", extra: str = "") -> str:
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}"{extra}>{escape(value)}</text>'


def overlay_svg(edges, bars: Mapping[str, Sequence[float]], *, grid=None,
                curves: Mapping[str, Sequence[float]] | None = None, title: str = "Confidential vs synthetic",
                x_title: str = "value", y_title: str = "density", curator_only: bool = True,
                width: int = 760, height: int = 440) -> str:
    """Overlaid histograms and curves of one column as an SVG document (the picture of
    :func:`core.plots.distribution_overlay_figure`, drawn without plotly).

    Parameters
    ----------
    edges : array_like of float, shape (B + 1,), increasing
        The bins shared by every histogram.
    bars : mapping label → array of shape (B,)
        Each histogram's height per bin (e.g. densities), drawn as translucent bars.
    grid : array_like of float, shape (G,), optional
        Where ``curves`` are evaluated.
    curves : mapping label → array of shape (G,), optional
        Lines (e.g. KDEs), in the colour of the histogram with the same label.
    title, x_title, y_title : str
        User text (column names) is written as text, never as markup.
    curator_only : bool
        Mark the figure as showing confidential data (a red line above the title).

    Returns
    -------
    str
        ``<svg …>…</svg>``.
    """
    e = as_1d("edges", edges)
    if e.size < 2 or not np.all(np.isfinite(e)) or not np.all(np.diff(e) > 0):
        raise ValueError("edges must be at least two finite, increasing numbers")
    heights = {str(label): same_length(f"bars[{label!r}]", v, e[1:], "edges[1:]") for label, v in bars.items()}
    lines = {}
    if curves:
        if grid is None:
            raise ValueError("grid is required when curves are given")
        g = as_1d("grid", grid)
        lines = {str(label): same_length(f"curves[{label!r}]", v, g, "grid") for label, v in curves.items()}
    tops = [np.nanmax(v) for v in list(heights.values()) + list(lines.values()) if np.isfinite(v).any()]
    y_hi = max([t for t in tops if t > 0], default=1.0) * 1.05
    x_lo, x_hi = float(e[0]), float(e[-1])
    if lines:
        x_lo, x_hi = min(x_lo, float(g.min())), max(x_hi, float(g.max()))
    labels = list(dict.fromkeys(list(heights) + list(lines)))
    colours = {label: series_colour(i) for i, label in enumerate(labels)}
    legend_rows = math.ceil(len(labels) / 3)
    left, right, top, bottom = 70, 20, 70 if curator_only else 50, 60 + 18 * legend_rows
    plot_w, plot_h = width - left - right, height - top - bottom

    def px(x):
        return left + (np.asarray(x, dtype=float) - x_lo) / ((x_hi - x_lo) or 1.0) * plot_w

    def py(y):
        return top + (1.0 - np.asarray(y, dtype=float) / y_hi) * plot_h

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}" style="{_FONT}">',
             f'<rect width="{width}" height="{height}" fill="white"/>']
    if curator_only:
        parts += [f'<rect width="{width}" height="22" fill="#b00020"/>',
                  _text(8, 15, CONFIDENTIAL_MARK, "start", ' fill="white" font-weight="bold" font-size="10.5"'),
                  _text(left, top - 14, CURATOR_ONLY, "start", ' fill="#666"')]
    parts.append(_text(left, top - 30 if curator_only else top - 20, title, "start",
                       ' font-size="15" font-weight="bold"'))
    for v in _ticks(0.0, y_hi / 1.05, 5):
        y = float(py(v))
        parts += [f'<line x1="{left}" x2="{left + plot_w}" y1="{y:.1f}" y2="{y:.1f}" stroke="#eee"/>',
                  _text(left - 6, y + 4, f"{v:.3g}", "end")]
    for v in _ticks(x_lo, x_hi):
        x = float(px(v))
        parts += [f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{top + plot_h}" y2="{top + plot_h + 5}" stroke="#444"/>',
                  _text(x, top + plot_h + 18, f"{v:.6g}")]
    for label, h in heights.items():
        x0, x1, y = px(e[:-1]), px(e[1:]), py(np.where(np.isfinite(h), np.maximum(h, 0.0), 0.0))
        parts += [f'<rect x="{a:.1f}" y="{b:.1f}" width="{max(c - a, 0.5):.1f}" height="{top + plot_h - b:.1f}" '
                  f'fill="{colours[label]}" fill-opacity="0.45"/>'
                  for a, c, b in zip(x0, x1, y) if top + plot_h - b > 0.05]
    for label, values in lines.items():
        ok = np.isfinite(values)
        points = " ".join(f"{a:.1f},{b:.1f}" for a, b in zip(px(g[ok]), py(values[ok])))
        parts.append(f'<polyline fill="none" stroke="{colours[label]}" stroke-width="2" points="{points}"/>')
    parts += [f'<line x1="{left}" x2="{left + plot_w}" y1="{top + plot_h}" y2="{top + plot_h}" stroke="#444"/>',
              f'<line x1="{left}" x2="{left}" y1="{top}" y2="{top + plot_h}" stroke="#444"/>',
              _text(left + plot_w / 2, top + plot_h + 38, x_title),
              _text(18, top + plot_h / 2, y_title, "middle", f' transform="rotate(-90 18 {top + plot_h / 2:.1f})"')]
    for i, label in enumerate(labels):
        x, y = left + (i % 3) * (plot_w / 3), top + plot_h + 56 + 18 * (i // 3)
        kind = ("histogram" if label in heights else "") + (" and curve" if label in lines and label in heights
                                                            else "curve" if label in lines else "")
        parts += [f'<rect x="{x:.1f}" y="{y - 10:.1f}" width="12" height="12" fill="{colours[label]}"/>',
                  _text(x + 18, y, f"{label} ({kind})", "start")]
    parts.append("</svg>")
    return "\n".join(parts)
