"""The house style of every figure: palette, layout and the helpers the builders share.

Public within :mod:`core.plots` (the figure modules import these names); not part of the
package's public face.
"""

from __future__ import annotations

import html
import math
from typing import Iterable, Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio

from ..formatting import format_upper

__all__ = ["CONFIDENTIAL_COLOUR", "CURATOR_ONLY", "LAYOUT", "MAX_SERIES_PER_AXIS", "MECHANISM_COLOURS",
           "MECHANISM_FAMILIES", "PALETTE", "Panel", "PanelGrid", "as_1d", "fit_legend", "log_axis", "log_ticks",
           "mechanism_colours", "mechanism_panels", "plot_text", "positive_or_nan", "same_length", "series_colour",
           "upper_labels"]


def plot_text(value) -> str:
    """``value`` as plain text in a figure: plotly reads a subset of HTML in titles, axis titles,
    tick labels and trace names (``<b>``, ``<a href>``, ``<br>``), so ``&``, ``<`` and ``>`` of
    user text (column and category names) are written as entities, which plotly shows as the
    characters themselves."""
    return html.escape(str(value), quote=False)

#: Subtitle of every figure that shows confidential data.
CURATOR_ONLY = "curator-only view: shows confidential data, not itself private"

#: Colours of series that are not mechanisms (curves of one quantity, attacks, metrics), by position.
PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b",
           "#e377c2", "#7f7f7f", "#bcbd22", "#17becf")

# ----------------------------------------------------------------------------- mechanisms
#: Families of mechanisms, in the order their panels are drawn (docs/mathematics.md §4,
#: docs/bayesian_family.md): a figure of many mechanisms is a set of small multiples, one
#: family (or a few small ones) per panel (:func:`mechanism_panels`).
MECHANISM_FAMILIES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("PYPP", ("pypp", "pypp_old_values")),
    ("Bayesian family", ("truncated_dirichlet_posterior", "pseudo_posterior", "pseudo_posterior_scalar")),
    ("perturbed histograms", ("laplace_histogram", "gaussian_histogram", "smoothed_histogram")),
    ("Dirichlet histograms", ("dirichlet_multinomial", "dirichlet_multinomial_data_dependent",
                              "dirichlet_posterior_sampling")),
    ("peers (OpenDP, AIM, MST)", ("opendp_laplace_histogram", "opendp_gaussian_histogram", "aim", "mst")),
    ("no privacy", ("bootstrap",)),
)

#: One colour per mechanism name, the same in every figure (overlays, boxplots, the ε sweep,
#: trade-off curves), never shared by two mechanisms nor with the confidential data. Drawn
#: from the colour-blind-safe palettes of Okabe & Ito (2008) and Tol (2021, "muted" and
#: "bright"); within a family the colours differ in hue *and* lightness, so the at most five
#: series of one panel stay apart for every common colour-vision deficiency.
MECHANISM_COLOURS: dict[str, str] = {
    "pypp": "#0072B2",                                  # Okabe–Ito blue
    "pypp_old_values": "#E69F00",                       # Okabe–Ito orange
    "truncated_dirichlet_posterior": "#009E73",         # Okabe–Ito bluish green
    "pseudo_posterior": "#CC79A7",                      # Okabe–Ito reddish purple
    "pseudo_posterior_scalar": "#D55E00",               # Okabe–Ito vermillion
    "laplace_histogram": "#332288",                     # Tol indigo
    "gaussian_histogram": "#88CCEE",                    # Tol cyan
    "smoothed_histogram": "#999933",                    # Tol olive
    "dirichlet_multinomial": "#882255",                 # Tol wine
    "dirichlet_multinomial_data_dependent": "#DDCC77",  # Tol sand
    "dirichlet_posterior_sampling": "#44AA99",          # Tol teal
    "opendp_laplace_histogram": "#117733",              # Tol green
    "opendp_gaussian_histogram": "#AA4499",             # Tol purple
    "aim": "#CC6677",                                   # Tol rose
    "mst": "#CCBB44",                                   # Tol bright yellow
    "bootstrap": "#777777",                             # mid grey: the non-private ceiling
}
#: The confidential data, drawn as the reference of every panel it appears in (black lines,
#: its bars translucent black, hence grey).
CONFIDENTIAL_COLOUR = "#000000"
#: Colours of series whose mechanism is unknown here (a caller's own names), in order of
#: appearance in one figure; none is a mechanism's colour.
_SPARE_COLOURS = ("#4477AA", "#EE6677", "#228833", "#66CCEE", "#AA3377", "#8c564b", "#bcbd22", "#17becf")
#: At most this many series share one axis (reference included); more go to further panels.
MAX_SERIES_PER_AXIS = 5
# Every figure of the package is drawn on plotly's "plotly_white" template, set as plotly's default
# here rather than in each layout: a template named in a layout is validated property by property
# when the figure is built (about 15 ms a figure, a third of a small figure's cost), while the
# default is merged when the figure is serialised, at a fraction of that — the same JSON.
pio.templates.default = "plotly_white"
#: Legend under the plot: above it, long series names collide with the title.
LAYOUT = dict(margin=dict(l=60, r=20, t=60, b=60),
              legend=dict(orientation="h", yanchor="top", y=-0.2, x=0))


def series_colour(i: int) -> str:
    """The ``i``-th colour of :data:`PALETTE` (cycling), for series that are not mechanisms."""
    return PALETTE[i % len(PALETTE)]


def mechanism_colours(keys: Iterable, names: Mapping | None = None) -> dict:
    """The colour of each series key of one figure.

    Parameters
    ----------
    keys : iterable of hashable
        The series (e.g. mechanism labels), in drawing order.
    names : mapping key → mechanism name, optional
        The mechanism of each key (``"pypp"``, ``"bootstrap"``, …); a key missing from it is
        its own name.

    Returns
    -------
    dict key → colour
        A known mechanism gets its :data:`MECHANISM_COLOURS` entry; other keys get the
        spare colours in order of appearance (distinct while they last, then cycling), so
        two keys of one figure share a colour only beyond eight unknown mechanisms.
    """
    names = names or {}
    out, spare = {}, 0
    for key in keys:
        if key in out:
            continue
        known = MECHANISM_COLOURS.get(str(names.get(key, key)))
        if known is None:
            known = _SPARE_COLOURS[spare % len(_SPARE_COLOURS)]
            spare += 1
        out[key] = known
    return out


class Panel(tuple):
    """One panel of small multiples: ``(title, keys)``, the series it draws besides its references."""

    __slots__ = ()

    def __new__(cls, title: str, keys: Sequence):
        return super().__new__(cls, (title, tuple(keys)))

    @property
    def title(self) -> str:
        return self[0]

    @property
    def keys(self) -> tuple:
        return self[1]


def _family(name: str) -> int:
    for i, (_, members) in enumerate(MECHANISM_FAMILIES):
        if name in members:
            return i
    return len(MECHANISM_FAMILIES)


def mechanism_panels(keys: Sequence, names: Mapping | None = None, *, references: int = 0,
                     max_series: int = MAX_SERIES_PER_AXIS) -> list[Panel]:
    """Group the series of one figure into panels of at most ``max_series`` series each.

    Series go family by family (:data:`MECHANISM_FAMILIES` order, unknown mechanisms last
    as "other mechanisms"), keeping their order within a family. Whole families share a
    panel while they fit; a family larger than a panel is split into near-equal parts
    ("PYPP (1/2)", …). Every panel also draws the figure's ``references`` (e.g. the
    confidential data), so it holds at most ``max_series − references`` of ``keys``.

    Parameters
    ----------
    keys : sequence of hashable, distinct
    names : mapping key → mechanism name, optional (a key missing from it is its own name)
    references : int ≥ 0
        Series repeated in every panel.
    max_series : int > references

    Returns
    -------
    list of Panel
        Each ``(title, keys)``; together they hold every key exactly once. Empty for no keys.
    """
    capacity = int(max_series) - int(references)
    if capacity < 1:
        raise ValueError(f"max_series ({max_series}) must exceed references ({references})")
    names = names or {}
    groups: dict[int, list] = {}
    for key in dict.fromkeys(keys):
        groups.setdefault(_family(str(names.get(key, key))), []).append(key)
    titles = [title for title, _ in MECHANISM_FAMILIES] + ["other mechanisms"]
    panels: list[Panel] = []
    current: list = []
    current_titles: list[str] = []

    def close():
        if current:
            panels.append(Panel(" · ".join(current_titles), current.copy()))
            current.clear()
            current_titles.clear()

    for family in sorted(groups):
        members = groups[family]
        if len(members) > capacity:
            close()
            parts = math.ceil(len(members) / capacity)
            for i, chunk in enumerate(np.array_split(np.arange(len(members)), parts)):
                panels.append(Panel(f"{titles[family]} ({i + 1}/{parts})", [members[j] for j in chunk]))
            continue
        if len(current) + len(members) > capacity:
            close()
        current.extend(members)
        current_titles.append(titles[family])
    close()
    return panels


class PanelGrid:
    """Small multiples built as plain dicts: one subplot per :class:`Panel`, traces added per
    panel, one :class:`plotly.graph_objects.Figure` at the end (plotly's ``make_subplots`` and
    ``add_trace(row=, col=)`` cost about ten times more, per redraw).

    Panels fill a grid of ``cols`` columns row by row (one column for a single panel), titled
    by :attr:`Panel.title` (no title for a single panel: the figure's title says it all),
    with shared axes when asked (every panel then reads on the same scale). The height grows
    with the rows: ``panel_height`` pixels each, or ``row_heights`` for a one-column grid.

    Parameters
    ----------
    panels : sequence of Panel (an empty sequence: one untitled panel)
    cols : int ≥ 1
    shared_x, shared_y : bool
    row_heights : sequence of float, optional
    panel_height : int
    """

    def __init__(self, panels: Sequence[Panel], *, cols: int = 2, shared_x: bool = True, shared_y: bool = True,
                 row_heights: Sequence[float] | None = None, panel_height: int = 260):
        count = max(1, len(panels))
        cols = max(1, min(int(cols), count))
        rows = math.ceil(count / cols)
        given = row_heights is not None and cols == 1 and len(row_heights) == rows
        heights = [max(1.0, float(h)) for h in row_heights] if given else [float(panel_height)] * rows
        total = sum(heights)
        gap_x = 0.08 if cols > 1 else 0.0
        gap_y = min(0.3, 70.0 / (total + 70.0 * rows)) if rows > 1 else 0.0
        width = (1.0 - gap_x * (cols - 1)) / cols
        usable = 1.0 - gap_y * (rows - 1)
        self.single = len(panels) <= 1
        self.layout: dict = {} if self.single else {"height": int(total + 70 * rows + 150)}
        self.traces: list[dict] = []
        self.cells: list[dict] = []
        titles = []
        top = 1.0
        tops = []
        for h in heights:
            tops.append(top)
            top -= h / total * usable + gap_y
        for i in range(count):
            row, col = i // cols + 1, i % cols + 1
            suffix = "" if i == 0 else str(i + 1)
            x0 = (col - 1) * (width + gap_x)
            y1 = tops[row - 1]
            y0 = max(0.0, y1 - heights[row - 1] / total * usable)
            self.layout[f"xaxis{suffix}"] = dict(domain=[x0, x0 + width], anchor=f"y{suffix}",
                                                 **({"matches": "x"} if shared_x and i else {}))
            self.layout[f"yaxis{suffix}"] = dict(domain=[y0, y1], anchor=f"x{suffix}",
                                                 **({"matches": "y"} if shared_y and i else {}))
            self.cells.append(dict(row=row, col=col, xaxis=f"x{suffix}", yaxis=f"y{suffix}",
                                   x_key=f"xaxis{suffix}", y_key=f"yaxis{suffix}"))
            if not self.single:
                titles.append(dict(text=plot_text(panels[i].title), x=x0 + width / 2, y=y1, xref="paper",
                                   yref="paper", xanchor="center", yanchor="bottom", showarrow=False,
                                   font=dict(size=14)))
        if titles:
            self.layout["annotations"] = titles

    def add(self, i: int, trace: dict) -> None:
        """Add ``trace`` (a plotly trace as a dict, with its ``type``) to panel ``i``."""
        self.traces.append(dict(trace, xaxis=self.cells[i]["xaxis"], yaxis=self.cells[i]["yaxis"]))

    def axes(self, which: str, i: int | None = None, **props) -> None:
        """Set ``props`` on the ``which`` ("x" or "y") axis of panel ``i`` (every panel when ``None``)."""
        for cell in (self.cells if i is None else [self.cells[i]]):
            self.layout[cell[f"{which}_key"]].update(props)

    def title_axes(self, *, x_title: str | None = None, y_title: str | None = None) -> None:
        """The y title on the first column, the x title on the lowest panel of each column."""
        lowest: dict[int, int] = {}
        for cell in self.cells:
            lowest[cell["col"]] = max(lowest.get(cell["col"], 0), cell["row"])
        for i, cell in enumerate(self.cells):
            if y_title is not None and cell["col"] == 1:
                self.axes("y", i, title=dict(text=y_title))
            if x_title is not None and lowest[cell["col"]] == cell["row"]:
                self.axes("x", i, title=dict(text=x_title))

    def figure(self, **layout) -> go.Figure:
        """The figure: the traces, the grid, :data:`LAYOUT` and ``layout`` (e.g. ``title``); a tall
        figure's legend at its foot (:func:`fit_legend`)."""
        full = dict(self.layout, **LAYOUT)
        full.update(layout)
        if not self.single:
            full.update(fit_legend(self.traces))
        return go.Figure(data=self.traces, layout=full)


def fit_legend(traces: Sequence[dict], width: float = 1000.0) -> dict:
    """Layout that keeps a tall figure's legend just under its plots. :data:`LAYOUT` puts it
    at 20% of the plot height below them, a gap that grows with a figure of many panels;
    here the legend sits at the foot of the figure itself (``yref="container"``), under a
    bottom margin sized for the x-axis title and the legend's rows (estimated from the
    legend entries of ``traces`` for a figure ``width`` pixels wide; plotly grows the margin
    when the figure is narrower, e.g. drawn in a tab that was hidden), so the two never overlap."""
    entries = [str(t.get("name")) for t in traces if t.get("name") and t.get("showlegend", True) is not False]
    rows = max(1, math.ceil(sum(45 + 6.5 * len(name) for name in entries) / (0.85 * width)))
    return dict(legend=dict(LAYOUT["legend"], yref="container", y=0, yanchor="bottom"),
                margin=dict(LAYOUT["margin"], b=90 + 24 * rows))


# ----------------------------------------------------------------------------- log axes
_SUPERSCRIPTS = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
#: Ticks whose exponents all lie here are written as plain decimals (0.01, 0.5, 2000).
_PLAIN_EXPONENTS = (-2, 3)
_MAX_TICKS = 8


def _tick_value(mantissa: int, exponent: int) -> float:
    """mantissa·10^exponent as a float: ``inf`` or ``0.0`` beyond the float range, never an OverflowError."""
    return float(f"{mantissa}e{exponent}")


def _tick_text(mantissa: int, exponent: int, plain: bool) -> str:
    if plain:
        return f"{mantissa * 10.0 ** exponent:.{max(0, -exponent)}f}"
    power = {0: "1", 1: "10"}.get(exponent) or "10" + str(exponent).translate(_SUPERSCRIPTS)
    if exponent == 0:
        return str(mantissa)
    return power if mantissa == 1 else f"{mantissa}×{power}"


def log_ticks(values) -> tuple[list[float], list[str]] | None:
    """Readable ticks of a log axis spanning the positive finite ``values``.

    Decades only (1, 10, 100 …; thinned to at most eight) when at least four lie in the
    range; else 1-2-5 steps (…, 0.1, 0.2, 0.5, 1, …) when they give two or more ticks;
    else every integer mantissa (1–9). Each tick is labelled with its full value: plain
    decimals while every exponent lies in [−2, 3] ("0.05", "2000"), otherwise powers of ten
    with explicit exponents ("10⁻³", "2×10⁻³") — never a bare "2" or "5" between decades.

    Parameters
    ----------
    values : array_like of float
        The data on the axis; zeros, negatives and non-finite values are ignored.

    Returns
    -------
    (tickvals, ticktext) or None
        ``None`` when there are no positive values or the range is too narrow for two of
        these ticks (plotly's own ticks then read well: they are all on one decade).
    """
    v = np.asarray(values, dtype=float).ravel()
    v = v[np.isfinite(v) & (v > 0)]
    if v.size == 0:
        return None
    lo, hi = float(v.min()), float(v.max())
    slack = 1e-9
    e_lo, e_hi = math.floor(math.log10(lo)) - 1, math.ceil(math.log10(hi)) + 1
    for mantissas, least in (((1,), 4), ((1, 2, 5), 2), (tuple(range(1, 10)), 2)):
        candidates = [(mant, e) for e in range(e_lo, e_hi + 1) for mant in mantissas]
        inside = [t for t in candidates if lo * (1 - slack) <= _tick_value(*t) <= hi * (1 + slack)]
        if len(inside) >= least:
            # and one step beyond each end: plotly pads the range, so a tick just outside the data shows
            ticks = [t for t in candidates if lo / 1.25 <= _tick_value(*t) <= hi * 1.25]
            break
    else:
        return None
    if len(ticks) > _MAX_TICKS:
        # keep every step-th decade counted from 10⁰, so 1 stays a tick whenever it is in range
        step = math.ceil(len(ticks) / _MAX_TICKS)
        kept = [t for t in ticks if t[1] % step == 0 and t[0] == 1]
        ticks = kept if len(kept) >= 2 else ticks[::step]
    plain = all(_PLAIN_EXPONENTS[0] <= e + math.log10(mant) < _PLAIN_EXPONENTS[1] + 1 for mant, e in ticks)
    return [_tick_value(mant, e) for mant, e in ticks], [_tick_text(mant, e, plain) for mant, e in ticks]


def log_axis(values) -> dict:
    """Properties of a log axis with :func:`log_ticks` over ``values``, for
    ``fig.update_xaxes(**log_axis(x))`` / ``update_yaxes``: ``type="log"`` and, where the
    range allows, explicit tick values and labels; otherwise powers of ten with explicit
    exponents (``exponentformat="power"``) from plotly's own ticks."""
    ticks = log_ticks(values)
    if ticks is None:
        return dict(type="log", exponentformat="power")
    return dict(type="log", tickmode="array", tickvals=ticks[0], ticktext=ticks[1])


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
