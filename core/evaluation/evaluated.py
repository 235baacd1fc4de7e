"""The release a page evaluates, in words and as a mechanism of the comparison (docs/quality.md §10).

The Compare, Inference and Audit pages evaluate one release: the one the Synthetic data page drew
last, or else the current settings. This module holds what they share, so that every page says
the same thing in the same words:

* :func:`describe_release` — the release in one line: mechanism, regime and parameters, m, the
  target and the verdict of its composed global guarantee;
* :class:`RegimePYPPMechanism` — PYPP in any regime (σ = 0, σ ∈ (0, 1), σ < 0: the
  Dirichlet–multinomial over the public domain) as a :class:`core.mechanisms.Mechanism` on the
  comparison's unit box, with :func:`comparison_bases`, its base measure there;
* :func:`evaluated_mechanism` — the comparison's mechanism of the evaluated release: PYPP's for a
  :class:`core.privacy.ReleaseSpec`, else the one its registry entry builds
  (:meth:`core.release.mechanisms.HistogramRelease.build`, passed in: a hook, not a name);
* :func:`estimate_seconds` — what a comparison run will cost, from per-mechanism constants measured
  on the development machine (benchmarks/bench_compare_defaults.py).
"""

from __future__ import annotations

import math

import numpy as np

from ..data import CategoricalBase, GridBase, UniformBase, public_domain_size
from ..formatting import format_upper
from ..mechanisms import Mechanism, Knob, category_positions, check_release_arguments, distinct_rows, pypp_release
from ..privacy import Guarantee, ReleaseSpec
from ..validation import check_integer, check_real, check_release_size
from .columns import ComparisonTable

__all__ = ["RegimePYPPMechanism", "comparison_bases", "describe_release",
           "estimate_seconds", "evaluated_mechanism", "runs_within", "COST_PER_RELEASE", "METRIC_SECONDS_PER_VALUE"]

def describe_release(spec, guarantee: Guarantee, *, label: str | None = None, bins: int | None = None) -> str:
    """The release in one line (Markdown-safe: numbers and the app's own words only).

    Parameters
    ----------
    spec : core.privacy.ReleaseSpec or core.release.mechanisms.MechanismSpec
        A PYPP release (any regime) or another mechanism's (``label``, ``m``, ``eps``, ``delta``).
    guarantee : core.privacy.Guarantee
        Its composed global guarantee with its verdict.
    label : str, optional
        The mechanism's label (default: PYPP's regime label, or ``spec.label``).
    bins : int, optional
        Bins per numeric axis of a histogram mechanism.

    Returns
    -------
    str
        E.g. ``"PYPP — Dirichlet–multinomial (σ < 0, z public categories), σ = −0.5, θ = 12,
        m = 500, target ε = 1, δ = 0 — verdict pure"``.
    """
    if isinstance(spec, ReleaseSpec):
        what = f"PYPP — {spec.regime.label}, σ = {spec.sigma:g}, θ = {spec.theta:g}"
    else:
        what = f"{label or spec.label}" + ("" if bins is None else f", {int(bins)} bins per numeric axis")
    delta = "none (pure)" if spec.delta is None else format_upper(spec.delta)
    times = "" if spec.releases == 1 else f" over {spec.releases} planned releases"
    return (f"{what}, m = {int(spec.m):,}, target ε = {spec.eps:g}, δ = {delta}{times} — verdict "
            f"**{guarantee.verdict}**")


def comparison_bases(table: ComparisonTable, sigma: float) -> list:
    """PYPP's base measure H on the comparison's unit box, one factor per column.

    A numeric column keeps its prepared base (uniform on [0, 1], or its public grid's points, both
    in the scaled units the table holds; a grid's missing cell is left out, as the comparison
    leaves out the records without a number). A categorical column with a public list draws its
    categories' positions :math:`(c + 1/2)/K` (docs/mathematics.md §4.7): for σ < 0 every listed
    category, the missing marker included (the Dirichlet–multinomial's domain, §3.3), for σ ≥ 0
    the listed categories without it (H draws categories only, as ``CategoricalBase.sample``). A
    column without a public list gets Uniform[0, 1]: a new label lands on no category's position,
    so the metrics count it as "another category", as the release's fresh label would be.
    """
    bases = []
    for column in table.columns:
        if column.kind == "numeric":
            base = column.info.base
            if isinstance(base, GridBase) and base.missing:
                # the comparison runs on the records with a number (a missing cell leaves with its record):
                # the grid's points are its domain here, without the release's missing cell
                base = GridBase(base.categories)
            bases.append(base)
        elif not column.public:
            bases.append(UniformBase(0.0, 1.0))
        else:
            keep = [c for c, label in enumerate(column.labels) if sigma < 0 or label is not None]
            bases.append(CategoricalBase(tuple(float(p) for p in category_positions(keep, len(column.labels)))))
    return bases


class RegimePYPPMechanism(Mechanism):
    """PYPP at a release's own settings, in any regime, on the comparison's unit box.

    The draw is :func:`core.mechanisms.pypp_release` on the table's atoms and counts with
    :func:`comparison_bases` as H: σ = 0 and σ ∈ (0, 1) draw old values and new ones from H,
    σ < 0 is the Dirichlet–multinomial over the public domain of z = θ/|σ| cells (docs/mathematics.md
    §2, §3). Its guarantee is the regime's global guarantee of one release at the release's target
    (``spec.regime.release_guarantee``, the verdict the Synthetic data page shows for k = 1).

    Parameters
    ----------
    spec : core.privacy.ReleaseSpec
        The release (σ, θ, m, n and the target).
    table : ComparisonTable
        The data as the comparison sees them (its columns give H).
    """

    # PYPP's key: its family and colour in the figures, and the default σ = 0 row it replaces
    name = cost_key = replaces = "pypp"

    def __init__(self, spec: ReleaseSpec, table: ComparisonTable):
        if not isinstance(spec, ReleaseSpec):
            raise ValueError(f"spec must be a core.privacy.ReleaseSpec, got {type(spec).__name__}")
        self.spec = ReleaseSpec(spec.sigma, spec.theta, check_release_size(spec.m), check_integer("n", spec.n, minimum=1),
                                eps=spec.eps, delta=spec.delta, releases=1)
        self.bases = comparison_bases(table, spec.sigma)
        self.theta = spec.theta
        if spec.sigma < 0:
            z_release, z_compared = round(spec.theta / -spec.sigma), public_domain_size(self.bases)
            # a grid column's missing cell is in the release's domain, not in the comparison's (its records are
            # left out): the same prior α = |σ| per cell over the cells compared
            z_full = None if z_compared is None else math.prod(
                len(b.categories) + (isinstance(b, GridBase) and c.info.base.missing)
                for b, c in zip(self.bases, table.columns))
            if z_compared is None or z_full != z_release:
                # checked here, not at the first draw: the comparison says so before it runs
                raise ValueError(f"the release's Dirichlet–multinomial domain (z = θ/|σ| = {z_release:,} public cells) "
                                 "is not the comparison's: every column needs its public grid or category list")
            self.theta = z_compared * -spec.sigma
        self.d = table.d
        self.release_size = self.spec.m   # the release's own m, whatever the comparison's common m
        # σ = 0 keeps the comparison's own label; another regime names itself
        self.label = ("PYPP (σ = 0)" if spec.sigma == 0 else
                      f"PYPP ({spec.regime.label.split(' (')[0]}, σ = {spec.sigma:g})")
        self._guarantee = spec.regime.release_guarantee(self.spec)

    @property
    def guarantee(self) -> Guarantee:
        g = self._guarantee
        return Guarantee(g.kind, "global", float(g.eps), float(g.delta or 0.0), g.notion)

    def knobs(self, n, m, d: int = 1):
        s = self.spec
        return [Knob("sigma", s.sigma, f"the release's regime: {s.regime.label}"),
                Knob("theta", self.theta, "the release's strength θ = z·|σ| over the cells compared (a grid's "
                                          "missing cell is left out with its records)" if s.sigma < 0 else
                     "the release's strength θ (Privacy page)"),
                Knob("m_release", s.m, "the release's own size m")]

    def release_runs(self, data, m, runs, rng, *, counts=None) -> np.ndarray:
        x, weights, m, runs, rng, d = check_release_arguments(data, m, runs, rng, counts)
        atoms, counts = distinct_rows(x, weights)
        base = list(self.bases)   # one factor per column (a list also for one column: a GridBase is no sequence)
        out = np.empty((runs,) + ((m,) if atoms.ndim == 1 else (m, d)))
        for r in range(runs):   # one exact draw per run: O(k + m) each, no loop over m or n
            out[r] = np.asarray(pypp_release(atoms, counts, self.spec.sigma, self.theta, m, rng,
                                             base=base).values, dtype=np.float64)
        return out


def evaluated_mechanism(release, table: ComparisonTable, entry=None) -> Mechanism:
    """The comparison's mechanism of the evaluated release (the first row of the comparison).

    Parameters
    ----------
    release : core.privacy.ReleaseSpec, or a recipe-like object
        A PYPP release (:class:`RegimePYPPMechanism`), or another mechanism's release with
        ``eps``, ``delta`` and ``bins`` (its public recipe); it releases m = n = ``table.n`` rows.
    table : ComparisonTable
    entry : core.release.mechanisms.HistogramRelease, optional
        The release's registry entry (``core.release.RELEASE_MECHANISMS[key]``): its ``build``
        makes the calibrated mechanism on the table's cells. Required unless ``release`` is PYPP's.

    Returns
    -------
    core.mechanisms.Mechanism
        Named by its registry key (``"pypp"`` for PYPP: it ``replaces`` that default row),
        releasing its own m (m = n for a mechanism other than PYPP: its release size).
    """
    if isinstance(release, ReleaseSpec):
        return RegimePYPPMechanism(release, table)
    if entry is None or not hasattr(entry, "build"):
        raise ValueError("entry must be the release's registry entry (core.release.RELEASE_MECHANISMS[key]) "
                         "for a mechanism other than PYPP")
    mech = entry.build(release, table.levels)
    # its registry key: its family and colour in the figures; the same mechanism's default rows are left out
    mech.name = mech.cost_key = mech.replaces = entry.key
    mech.label = f"{entry.label}, the evaluated release (m = n)"
    mech.release_size = table.n
    return mech


# --------------------------------------------------------------------------- cost model
#: Seconds per release of each mechanism of the comparison: (fixed, per released value), one value
#: being one row × column; measured on the 2-core development machine by
#: benchmarks/bench_compare_defaults.py (60 000 rows × 5 columns, 20 bins, m = 100; rounded up).
#: AIM and MST are dominated by their graphical model on the cells: (fixed, per cell) below.
COST_PER_RELEASE = {
    "pypp": (0.004, 2e-7), "pypp_old_values": (0.002, 2e-7),
    "laplace_histogram": (0.012, 2e-7), "gaussian_histogram": (0.010, 2e-7), "smoothed_histogram": (0.008, 2e-7),
    "dirichlet_multinomial": (0.012, 2e-7), "dirichlet_posterior_sampling": (0.012, 2e-7),
    "truncated_dirichlet_posterior": (0.025, 2e-7), "pseudo_posterior": (0.020, 2e-7),
    "pseudo_posterior_scalar": (0.022, 2e-7), "bootstrap": (0.0005, 2e-7),
    "opendp_laplace_histogram": (0.05, 2e-7), "opendp_gaussian_histogram": (0.05, 2e-7),
}
#: AIM and MST: seconds per release ≈ fixed + per cell × cells (bench_compare_defaults.py --peer: MST 40 s
#: alone, AIM 212 s beside another run, at 144 000 cells and m = n = 60 000; bench_peers.py: 0.1–1.7 s on
#: 300–2 000 cells, AIM 2.4–6.4 s and MST 1.0–2.5 s on CPS's 4 000 cells, on a busy machine).
MODEL_COST = {"mst": (0.1, 2.8e-4), "aim": (0.5, 1.2e-3)}
#: Seconds of the utility metrics (W1, KDE, summaries, joint W1) per released value per run.
METRIC_SECONDS_PER_VALUE = 3e-6


def _cells(mech, d: int) -> int:
    """Cells of a histogram mechanism's domain (0 for one without cells)."""
    cells = getattr(mech, "cells", None)
    try:
        return int(cells(d)) if callable(cells) else 0
    except (TypeError, ValueError):
        return 0


def estimate_seconds(mechanisms, m: int, runs: int, d: int, *, cells: int | None = None) -> dict[str, float]:
    """Seconds a comparison run is expected to take, per mechanism and in total (a planning figure).

    For each mechanism :math:`(R + 1)(a + b\\,m_i d) + c\\,R\\,m_i d` seconds (R runs and one
    release for the overlays), with :math:`(a, b)` of
    :data:`COST_PER_RELEASE` (AIM and MST: :math:`a + b \\cdot` cells, :data:`MODEL_COST`),
    :math:`c` = :data:`METRIC_SECONDS_PER_VALUE`, and :math:`m_i` the mechanism's release size
    (its own, e.g. m = n for a peer, else ``m``). An unknown mechanism counts as the slowest
    histogram. The constants were measured on the 2-core development machine; another machine
    scales them.

    Parameters
    ----------
    mechanisms : sequence of core.mechanisms.Mechanism
        The calibrated mechanisms (``Calibration.mechanisms``).
    m : int ≥ 1
        The common release size.
    runs : int ≥ 1
    d : int ≥ 1
    cells : int, optional
        Cells of the histograms' domain (bins per numeric axis × public categories), for AIM and MST.

    Returns
    -------
    dict
        Mechanism label → seconds, and ``"total"``.
    """
    m = check_integer("m", m, minimum=1)
    runs = check_integer("runs", runs, minimum=1)
    d = check_integer("d", d, minimum=1)
    out = {}
    for mech in mechanisms:
        size = int(getattr(mech, "release_size", None) or m)
        # the evaluated release's mechanism is costed as the mechanism it is (its cost_key)
        base = str(getattr(mech, "cost_key", mech.name)).removesuffix("_at_n")
        if base in MODEL_COST:
            fixed, per_cell = MODEL_COST[base]
            one = fixed + per_cell * float(cells or _cells(mech, d))
        else:
            fixed, per_value = COST_PER_RELEASE.get(base, (0.05, 2e-7))
            one = fixed + per_value * size * d
        # R runs with their metrics, and one more release for the page's overlays
        out[mech.label] = runs * (one + METRIC_SECONDS_PER_VALUE * size * d) + one
    out["total"] = float(sum(out.values()))
    return out


def runs_within(seconds: float, mechanisms, m: int, d: int, *, choices, cells: int | None = None) -> int | None:
    """The largest number of repetitions among ``choices`` whose :func:`estimate_seconds` total is
    at most ``seconds``, or ``None`` when even the smallest takes longer (the estimate grows with
    R, so the choices are tried from the largest down)."""
    seconds = check_real("seconds", seconds, low=0.0, low_open=True)
    for runs in sorted({int(r) for r in choices}, reverse=True):
        if estimate_seconds(mechanisms, m, runs, d, cells=cells)["total"] <= seconds:
            return runs
    return None
