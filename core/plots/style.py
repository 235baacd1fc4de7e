"""The house style of every figure: palette, layout and the helpers the builders share.

Public within :mod:`core.plots` (the figure modules import these names); not part of the
package's public face.
"""

from __future__ import annotations

import html

import numpy as np

from ..formatting import format_upper

__all__ = ["CURATOR_ONLY", "LAYOUT", "PALETTE", "as_1d", "plot_text", "positive_or_nan", "same_length",
           "series_colour", "upper_labels"]


def plot_text(value) -> str:
    """``value`` as plain text in a figure: plotly reads a subset of HTML in titles, axis titles,
    tick labels and trace names (``<b>``, ``<a href>``, ``<br>``), so ``&``, ``<`` and ``>`` of
    user text (column and category names) are written as entities, which plotly shows as the
    characters themselves."""
    return html.escape(str(value), quote=False)

#: Subtitle of every figure that shows confidential data.
CURATOR_ONLY = "curator-only view: shows confidential data, not itself private"

#: A fixed palette so a mechanism keeps its colour across every chart of a session.
PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b",
           "#e377c2", "#7f7f7f", "#bcbd22", "#17becf")
#: Legend under the plot: above it, long series names collide with the title.
LAYOUT = dict(template="plotly_white", margin=dict(l=60, r=20, t=60, b=60),
              legend=dict(orientation="h", yanchor="top", y=-0.2, x=0))


def series_colour(i: int) -> str:
    """The ``i``-th colour of :data:`PALETTE` (cycling)."""
    return PALETTE[i % len(PALETTE)]


def as_1d(name: str, values) -> np.ndarray:
    """``values`` as a 1-D float array; ``ValueError`` naming ``name`` otherwise."""
    arr = np.atleast_1d(np.asarray(values, dtype=float))
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    return arr


def same_length(name: str, values, reference: np.ndarray, ref_name: str) -> np.ndarray:
    """:func:`as_1d` of ``values``, which must have as many values as ``reference``."""
    arr = as_1d(name, values)
    if arr.size != reference.size:
        raise ValueError(f"{name} has {arr.size} values but {ref_name} has {reference.size}")
    return arr


def upper_labels(values: np.ndarray) -> list[str]:
    """:func:`~core.formatting.format_upper` of each drawable value (empty text for the gaps)."""
    return [format_upper(float(v)) if np.isfinite(v) and v >= 0 else "" for v in values]


def positive_or_nan(values: np.ndarray) -> np.ndarray:
    """Zeros (and negatives) cannot be drawn on a log axis: leave a gap rather than
    invent a floor value, so the plot never shows a δ that was not computed."""
    out = values.astype(float).copy()
    out[~(out > 0)] = np.nan
    return out
