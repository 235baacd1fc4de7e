"""PYPP against the histogram baselines at one privacy level (docs/mathematics.md §4, §5).

* :func:`calibrate` sets every mechanism's knobs for a common target (ε, δ) and release
  size ``m`` and returns a :class:`Calibration` whose ``table`` says what was chosen and
  why, what each mechanism actually guarantees (pure / approximate, global / instance)
  and whether that meets the target.
* :func:`run_comparison` runs every calibrated mechanism ``R`` times (default 100) on
  the same confidential data and returns a tidy DataFrame — one row per
  (mechanism, run, column) with W1, KDE-L2 and the summaries — ready for boxplots.
  Releases are generated run-vectorised where the mechanism allows it (all histogram
  baselines and the bootstrap); W1 and KDE-L2 are computed for all runs at once.
* :func:`sweep_comparison` repeats the comparison over a grid of ε (frontier).
* The tables (:mod:`core.evaluation.compare_tables`, re-exported here): :func:`comparison_summary`
  averages the runs per mechanism next to the confidential values, :func:`mechanism_table` gives one
  row per mechanism (guarantee, m, seconds per release, yardsticks) and :func:`quality_by_mechanism`
  the quality report (docs/quality.md) of one release per mechanism.

A mechanism that cannot run — PYPP when no m is admissible at the target δ (its singleton limit is
0), a histogram or peer when a categorical column has no public category list — is skipped with the
reason (``Calibration.skipped``) unless it is ``required``, then :func:`calibrate` raises naming what
is missing. At σ = 0 PYPP's m is capped by its singleton limit whatever ε: the calibration says so
in words (``Calibration.notes``).

Issue 23 adds the field's peers (:mod:`core.mechanisms.peers`, docs/peers.md): OpenDP's Laplace
and Gaussian histograms, AIM and MST, calibrated by OpenDP's accounting, at the common m and
(``*_at_n``) at m = n (:attr:`~core.mechanisms.Mechanism.release_size`), and, with
``yardsticks=True``, the yardsticks of every run (:mod:`core.evaluation.yardsticks`: the
project's 3-way marginal score, row match share and logistic pMSE with its null reference, and
SDNist's own k-marginal and pMSE).

Issue 11 adds the Bayesian family (docs/bayesian_family.md): the old-values-only PYPP
(thesis Algorithm 3, :class:`OldValuesPYPPMechanism`), truncated-Dirichlet posterior
sampling and the pseudo-posterior mechanism with record and scalar weights (from
:mod:`core.mechanisms`). The pseudo-posterior's guarantee is local (computed from the data):
it is labelled so and never reported as meeting the target.

The PYPP mechanism is compared at σ = 0 on the data scaled to :math:`[0,1]^d` with base
measure Uniform[0, 1] per column; its privacy is the exact global guarantee the release's
verdict reads (the regime's hook: δ = T₁ = m/(m + θ + n − 1) at every ε, docs/verdicts.md §2),
and the "largest admissible m" is the regime's ``largest_m`` (the singleton limit).
"""

from __future__ import annotations

import math
import time
import zlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from ..mechanisms import (
    Bootstrap,
    DirichletMultinomialHistogram,
    DirichletPosteriorSampling,
    GaussianHistogram,
    Guarantee,
    HistogramMechanism,
    Knob,
    LaplaceHistogram,
    Mechanism,
    PEER_MECHANISMS,
    PseudoPosteriorMechanism,
    SmoothedHistogram,
    TruncatedDirichletPosteriorSampling,
    check_release_arguments,
    distinct_rows,
    peer_mechanism,
)
from ..data import UniformBase
from ..mechanisms import categorical_draws, pypp_release
from ..formatting import format_upper
from ..privacy import DIRICHLET_PROCESS, ReleaseSpec
from .yardsticks import yardstick_runs
from .columns import ComparisonTable
from .compare_tables import (
    MECHANISM_COLUMNS,
    YARDSTICK_COLUMNS,
    _comparison_table,
    calibration_table,
    comparison_summary,
    mechanism_table,
    quality_by_mechanism,
)
from .distances import (
    DEFAULT_MAX_COST_BYTES,
    MAX_COST_BYTES,
    MAX_PROJECTIONS,
    joint_w1_runs,
    total_variation_runs,
    wasserstein1_runs,
)
from .density import binned_kde_runs, kde_grid, kde_l2_runs, scott_bandwidth
from .summaries import column_summary, summary_runs
from ..validation import (
    MAX_RELEASE_SIZE,
    check_bins,
    check_delta,
    check_finite_eps,
    check_integer,
    check_levels,
    check_py_parameters,
    check_real,
    check_release_budget,
    check_release_size,
    check_rng,
    check_row_counts,
    check_unit_data,
)

__all__ = [
    "ALL_MECHANISMS",
    "BAYESIAN_FAMILY",
    "DEFAULT_MECHANISMS",
    "HISTOGRAM_MECHANISMS",
    "KNOWN_MECHANISMS",
    "MECHANISM_COLUMNS",
    "PEER_MECHANISMS",
    "YARDSTICK_COLUMNS",
    "Calibration",
    "OldValuesPYPPMechanism",
    "PYPPMechanism",
    "calibrate",
    "calibration_table",
    "comparison_summary",
    "mechanism_table",
    "quality_by_mechanism",
    "run_comparison",
    "sweep_comparison",
]

#: The Bayesian family (docs/bayesian_family.md): old-values-only PYPP,
#: truncated-Dirichlet posterior sampling, pseudo-posterior with record and scalar weights.
BAYESIAN_FAMILY = ("pypp_old_values", "truncated_dirichlet_posterior", "pseudo_posterior",
                   "pseudo_posterior_scalar")
#: Keys of the mechanisms compared by default (the Compare page, the ε sweep, the command
#: line): PYPP, the docs/mathematics.md §4 baselines and the Bayesian family, with the bootstrap last.
DEFAULT_MECHANISMS = ("pypp", "laplace_histogram", "gaussian_histogram", "smoothed_histogram",
                      "dirichlet_multinomial", "dirichlet_posterior_sampling") + BAYESIAN_FAMILY + ("bootstrap",)
#: Every key :func:`calibrate` accepts (the data-dependent Dirichlet–multinomial is not DP).
ALL_MECHANISMS = DEFAULT_MECHANISMS + ("dirichlet_multinomial_data_dependent",)
#: The mechanisms that are histograms over public cells (docs/mathematics.md §4.7): with a
#: categorical column they need its public category list; PYPP and the bootstrap need none.
HISTOGRAM_MECHANISMS = ("laplace_histogram", "gaussian_histogram", "smoothed_histogram", "dirichlet_multinomial",
                        "dirichlet_multinomial_data_dependent", "dirichlet_posterior_sampling",
                        "truncated_dirichlet_posterior", "pseudo_posterior", "pseudo_posterior_scalar")
#: Every key :func:`calibrate` accepts: the project's mechanisms and the field's peers
#: (optional extra ``peers``; over public cells too, so skipped like the histograms).
KNOWN_MECHANISMS = ALL_MECHANISMS + PEER_MECHANISMS
_NEEDS_CELLS = HISTOGRAM_MECHANISMS + PEER_MECHANISMS
#: The mechanisms whose release size is capped by PYPP's singleton limit.
_PYPP_KEYS = ("pypp", "pypp_old_values")

Progress = Callable[[float, str], None]

#: The per-column summaries of :func:`run_comparison` (NaN for a categorical column).
_SUMMARY_NAMES = ("mean", "sd", "q1", "median", "q3")


class PYPPMechanism(Mechanism):
    """The Pitman–Yor posterior-predictive mechanism at σ = 0 in the comparison (docs/mathematics.md §2, §3.1).

    Data on :math:`[0,1]^d`; a row is one atom; new values are drawn from the base measure
    Uniform[0, 1] per column. The guarantee is the exact global profile of one release,
    (ε, T₁)-DP at every ε with :math:`T_1 = m/(m + \\theta + n - 1)` (docs/verdicts.md §2, read
    from the regime as the release's verdict reads it), so it is fixed at construction for one
    ``n`` and ``m``.

    Parameters
    ----------
    eps : float in (0, ∞)
    theta : float > 0
    n : int ≥ 1
    m : int ≥ 1
    """

    name = "pypp"
    label = "PYPP (σ = 0)"

    def __init__(self, eps, theta, n, m):
        self.eps = check_finite_eps(eps)
        _, self.theta, _ = check_py_parameters(0.0, theta)
        self.n = check_integer("n", n, minimum=1)
        self.m = check_release_size(m)
        # the one global δ of a σ = 0 release (the regime's hook): flat in ε
        spec = ReleaseSpec(0.0, self.theta, self.m, self.n)
        self.delta = float(DIRICHLET_PROCESS.global_delta_curve(spec, np.array([self.eps]))[0])

    #: How the guarantee is obtained, for the UI.
    notion = "(ε, δ)-DP for every dataset of size n, exact global profile (δ = T₁ at every ε)"

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee("approximate", "global", self.eps, self.delta, self.notion)

    def knobs(self, n, m, d: int = 1):
        return [Knob("theta", self.theta, "strength of the DP prior (σ = 0), chosen by the user"),
                Knob("delta_global", self.delta,
                     f"δ = T₁ = m/(m + θ + n − 1) ≤ {format_upper(self.delta)} at every ε: the exact global "
                     "privacy profile, the probability that a record whose value is unique appears verbatim "
                     "(docs/verdicts.md §2)")]

    def _release_arguments(self, data, m, runs, rng, counts):
        """Validated (atoms, counts, m, runs, rng, d): the frequency table of the data (the
        same from records as from their table) and the calibrated n and m."""
        x, weights, m, runs, rng, d = check_release_arguments(data, m, runs, rng, counts)
        atoms, counts = distinct_rows(x, weights)
        n = int(counts.sum())
        if n != self.n or m != self.m:
            raise ValueError(f"this PYPP mechanism was calibrated for n = {self.n} and m = {self.m}; "
                             f"got n = {n} and m = {m}")
        return atoms, counts, m, runs, rng, d

    def release_runs(self, data, m, runs, rng, *, counts=None) -> np.ndarray:
        # The mechanism is a function of the frequency table (docs/mathematics.md §2): cost O(k + m) per run.
        atoms, counts, m, runs, rng, d = self._release_arguments(data, m, runs, rng, counts)
        base = UniformBase(0.0, 1.0) if atoms.ndim == 1 else [UniformBase(0.0, 1.0)] * d
        # One exact posterior-predictive draw per run: the sampler's cost is O(k + m) per
        # run, with no loop over m or n.
        out = np.empty((runs,) + ((m,) if atoms.ndim == 1 else (m, d)))
        for r in range(runs):
            out[r] = pypp_release(atoms, counts, 0.0, self.theta, m, rng, base=base).values
        return out


class OldValuesPYPPMechanism(PYPPMechanism):
    """PYPP releasing only the draws equal to confidential values (thesis Algorithm 3), σ = 0.

    ``m`` predictive steps are run; the released values are the old-value draws, of random
    number h (mean m·n/(θ + n)), in uniformly random order (docs/bayesian_family.md §3).
    At σ = 0 its likelihood ratios are those of full PYPP, so its global guarantee is the
    same exact global profile (δ = T₁): suppressing new values buys nothing under this accounting.

    The comparison needs m values per run: the h released values are topped up to m by
    resampling them with replacement (post-processing of the release, no privacy cost;
    E[m − h] = mθ/(θ + n)); a run that releases nothing is filled with uniform points
    (data-independent).

    Parameters
    ----------
    eps : float in (0, ∞)
    theta : float > 0
    n : int ≥ 1
    m : int ≥ 1
        Iterations of the predictive.
    """

    name = "pypp_old_values"
    label = "PYPP, old values only (Alg. 3, σ = 0)"

    notion = ("(ε, δ)-DP for every dataset of size n: the exact global profile of full PYPP (δ = T₁), "
              "as the likelihood ratios coincide at σ = 0; release size random, ≤ m")

    def knobs(self, n, m, d: int = 1):
        return super().knobs(n, m, d) + [
            Knob("expected_release", m * n / (self.theta + n),
                 "E[released values] = m·n/(θ + n) (Algorithm 3 keeps only old values); topped up to m by "
                 "resampling the release for the comparison (post-processing)")]

    def release_runs(self, data, m, runs, rng, *, counts=None) -> np.ndarray:
        atoms, counts, m, runs, rng, d = self._release_arguments(data, m, runs, rng, counts)
        k = counts.size
        out = np.empty((runs, m) + (() if atoms.ndim == 1 else (d,)))
        for r in range(runs):
            # the m predictive draws given the posterior weights Dir(n_1, …, n_k, θ) are
            # independent (core.mechanisms.categorical_draws, index k: a new value); the old ones,
            # kept in their order, are in uniformly random order (docs/bayesian_family.md §3)
            draws = categorical_draws(rng.dirichlet(np.append(counts, self.theta)), m, rng)
            released = draws[draws < k]
            h = released.size
            if h == 0:
                out[r] = rng.random(out.shape[1:])      # nothing released: data-independent points
                continue
            topped = np.concatenate([released, released[np.floor(rng.random(m - h) * h).astype(np.int64)]])
            out[r] = atoms[rng.permutation(topped)]
        return out


@dataclass(frozen=True, eq=False)
class Calibration:
    """Mechanisms calibrated to a common (ε, δ) and ``m`` (see :func:`calibrate`).

    Attributes
    ----------
    eps, delta : float
        The target.
    m : int
        The common release size.
    m_rule : str
        ``"given"`` or ``"largest admissible for PYPP (exact global profile)"``.
    n, d, bins : int
    theta : float
    mechanisms : tuple of Mechanism
    table : pandas.DataFrame
        One row per (mechanism, calibrated parameter): ``mechanism, label, parameter,
        value, reason, guarantee, kind, scope, eps, delta, meets_target, m, caveat``.
    bounds_from_data : bool
    levels : tuple or None
        Per column ``None`` (numeric) or the number of categories (categorical); ``None``
        when every column is numeric (docs/mathematics.md §4.7).
    skipped : dict
        Mechanism key → why it was not calibrated (a histogram-type baseline and a
        categorical column without a public category list; PYPP without an admissible m; a
        peer at the common m when that m is n and it also runs as its ``*_at_n`` twin).
    notes : tuple of str
        Sentences for the reader: PYPP's singleton cap and whether it binds (at σ = 0 the same
        m, and so the same release, at every ε), and what runs instead when PYPP cannot.
    """

    eps: float
    delta: float
    m: int
    m_rule: str
    n: int
    d: int
    bins: int
    theta: float
    mechanisms: tuple
    table: pd.DataFrame = field(repr=False)
    bounds_from_data: bool = False
    levels: tuple | None = None
    skipped: dict = field(default_factory=dict)
    notes: tuple = ()

    def mechanism(self, name: str) -> Mechanism:
        for mech in self.mechanisms:
            if mech.name == name:
                return mech
        raise ValueError(f"no mechanism {name!r}; calibrated: {[m.name for m in self.mechanisms]}")


def _meets(g: Guarantee, eps: float, delta: float) -> bool:
    # A local (data-dependent) guarantee is not DP for this n: it never meets a target.
    if g.kind == "none" or g.scope == "local":
        return False
    # A relative 1e-9 slack: each calibration rounds toward safety at ~1e-12, and a
    # comparison at exactly the target must not flip on the last bit.
    return g.eps <= eps * (1 + 1e-9) and g.delta <= delta * (1 + 1e-9)


#: Caveat of every local guarantee in the calibration table.
LOCAL_CAVEAT = ("LOCAL guarantee computed from the confidential data (seed 004): not differentially private "
                "for this n, so it never meets the target")


def _caveat(g: Guarantee, bounds_caveat: str) -> str:
    if g.scope == "local":
        return LOCAL_CAVEAT + ("; " + bounds_caveat if bounds_caveat else "")
    return bounds_caveat if g.is_private else ""


def calibrate(n, eps, delta, m, *, theta, d: int = 1, bins: int = 25,
              mechanisms: Sequence[str] = DEFAULT_MECHANISMS, bounds_from_data: bool = False,
              levels=None, unlisted: Sequence[str] = (), required: Sequence[str] = (),
              evaluated: Mechanism | None = None) -> Calibration:
    """Set every mechanism's knobs for a common (ε, δ) and release size ``m`` (docs/mathematics.md §4).

    ===============================  ==============================================================
    mechanism                        knob and rule
    ===============================  ==============================================================
    PYPP (σ = 0)                     θ as given; δ = T₁ = m/(m + θ + n − 1) (exact global
                                     profile); meets the target iff δ ≤ δ target
    perturbed histogram, Laplace     scale 2/ε (L1 sensitivity 2); pure ε-DP
    perturbed histogram, Gaussian    s = ``gaussian_sigma(ε, δ, √2)`` (analytic, exact)
    smoothed histogram               λ = ``smoothed_histogram_lambda(n, B^d, m, ε)``
    Dirichlet–multinomial            α = m/(e^ε − 1) per cell (global pure ε-DP)
    Dirichlet posterior sampling     smallest α with ``dirichlet_sampling_epsilon(α, δ) ≤ ε``
    PYPP, old values only (Alg. 3)   θ as given; δ of full PYPP (the likelihood ratios coincide at
                                     σ = 0); approximate, global
    truncated-Dirichlet posterior    p_min = 1/(B^d − 1 + e^(ε/2)); pure ε-DP, global
    pseudo-posterior (vector/scalar) Δ_α = ε/2; LOCAL, data-dependent: never meets the target
    bootstrap                        none (no privacy: the utility ceiling)
    ===============================  ==============================================================

    Pure-DP baselines ignore δ (their δ is 0 ≤ δ). With categorical columns (``levels``) the
    histogram-type mechanisms work on the product of ``bins`` bins per numeric axis and the
    public categories of each categorical axis, and :math:`B^d` above is that number of
    cells, :math:`k_B` (docs/mathematics.md §4.7). They need every categorical column to
    have a public category list: with a column in ``unlisted`` they are skipped (listed in
    ``Calibration.skipped``) and PYPP, its old-values variant and the bootstrap still run.

    With ``m = "largest"`` and no admissible m for PYPP (its singleton limit is 0, e.g. δ = 10⁻⁹),
    PYPP and its old-values variant are skipped and the others run at m = n (at most
    ``MAX_RELEASE_SIZE``); a peer asked for at the common m and at m = n then runs once.
    A mechanism in ``required`` that cannot run is an error naming what is missing.

    Parameters
    ----------
    n : int ≥ 1
        Number of confidential records.
    eps : float in (0, ∞)
    delta : float in (0, 1)
    m : int in [1, MAX_RELEASE_SIZE], or "largest"
        Common release size. ``"largest"``: the largest m admissible for PYPP under its
        exact global profile (``DIRICHLET_PROCESS.largest_m``: the singleton limit
        ⌊δ(θ + n − 1)/(1 − δ)⌋ at every ε), used by every mechanism.
    theta : float > 0
        PYPP strength.
    d : int ≥ 1
        Number of columns.
    bins : int ≥ 1
        Histogram bins per numeric axis (``bins**d`` cells when every column is numeric).
    mechanisms : sequence of str
        Keys from :data:`KNOWN_MECHANISMS` (:data:`ALL_MECHANISMS` and the peers,
        :data:`PEER_MECHANISMS`, which need the optional extra ``peers``; a ``*_at_n`` peer
        releases n records, at most ``MAX_RELEASE_SIZE``).
    bounds_from_data : bool
        The scaling bounds were read off the data: every guarantee is then weakened,
        and the table says so.
    levels : sequence of (None or int ≥ 1), length d, optional
        Per column ``None`` (numeric) or its number K of categories (categorical;
        :attr:`core.evaluation.ComparisonTable.levels`).
    unlisted : sequence of str
        Categorical columns without a public category list
        (:attr:`core.evaluation.ComparisonTable.unlisted`).
    required : sequence of str
        Keys of ``mechanisms`` that must run (e.g. those a user named): one that cannot is an
        error instead of a skip.
    evaluated : core.mechanisms.Mechanism, optional
        The evaluated release's mechanism (:func:`core.evaluation.evaluated.evaluated_mechanism`),
        already calibrated: the first row; the key it ``replaces`` (PYPP's, or the same
        mechanism's default entry) is left out of ``mechanisms`` (docs/quality.md §10).

    Raises
    ------
    ValueError
        Bad parameters; a required mechanism cannot run (the message names what is missing:
        the columns without a public category list, or PYPP's admissible m); nothing asked for
        can run.

    Returns
    -------
    Calibration
    """
    n = check_integer("n", n, minimum=1)
    eps = check_finite_eps(eps)
    delta = check_delta(delta)
    _, theta, _ = check_py_parameters(0.0, theta)
    d = check_integer("d", d, minimum=1)
    bins = check_bins(bins)
    levels = check_levels(levels, d)
    if isinstance(unlisted, str):
        unlisted = (unlisted,)
    unlisted = tuple(str(c) for c in unlisted)
    replaced = getattr(evaluated, "replaces", None)   # the evaluated release's own default row(s)
    names = [key for key in mechanisms if replaced is None or str(key).removesuffix("_at_n") != replaced]
    if not names and evaluated is None:
        raise ValueError(f"mechanisms must name at least one of {list(KNOWN_MECHANISMS)}")
    unknown = [k for k in names if k not in KNOWN_MECHANISMS]
    if unknown:
        raise ValueError(f"mechanisms {unknown} are unknown; choose from {list(KNOWN_MECHANISMS)}")
    required = {str(k) for k in ([required] if isinstance(required, str) else required)}
    stray = sorted(required - set(mechanisms))   # before the evaluated release replaced its default row
    if stray:
        raise ValueError(f"required: {stray} are not among the mechanisms asked for")
    skipped: dict[str, str] = {}
    notes: list[str] = []
    # PYPP's singleton limit: the largest m with m/(m + θ + n − 1) ≤ δ, the same at every ε (σ = 0)
    limit = DIRICHLET_PROCESS.largest_m(n, 0.0, theta, eps, delta, m_cap=MAX_RELEASE_SIZE + 1)
    pypp_keys = [key for key in names if key in _PYPP_KEYS]
    if isinstance(m, str):
        if m != "largest":
            raise ValueError(f"m must be an integer >= 1 or 'largest', got {m!r}")
        if limit > MAX_RELEASE_SIZE:
            raise ValueError(f"m: the largest admissible m for PYPP, {limit}, exceeds MAX_RELEASE_SIZE = "
                             f"{MAX_RELEASE_SIZE}; give m explicitly")
        if limit >= 1:
            m_val = limit
            m_rule = "largest admissible for PYPP (exact global profile)"
            m_reason = (f"m = max{{m : m/(m + θ + n − 1) ≤ δ}} = {m_val} for PYPP with θ = {theta:g} (exact global "
                        "profile: the singleton limit, the same at every ε), used by every mechanism")
        else:
            why = (f"no admissible m for PYPP at delta={delta!r}, theta={theta!r}, n={n}: its singleton limit "
                   "⌊δ(θ + n − 1)/(1 − δ)⌋ is 0 (raise delta or theta, or give m)")
            if required & set(pypp_keys):
                raise ValueError(f"m: {', '.join(sorted(required & set(pypp_keys)))} cannot run: {why}")
            names = [key for key in names if key not in _PYPP_KEYS]
            if not names and evaluated is None:
                raise ValueError(f"m: no synthetic value can be released by PYPP at eps={eps!r}, delta={delta!r}, "
                                 f"theta={theta!r}, n={n} (the singleton limit is 0); raise delta or theta, or give "
                                 "m, or add mechanisms that do not need it")
            skipped.update({key: why for key in pypp_keys})
            m_val = min(n, MAX_RELEASE_SIZE)
            m_rule = "m = n: PYPP has no admissible m"
            m_reason = (f"m = n = {m_val:,}" + (" (capped at MAX_RELEASE_SIZE)" if n > MAX_RELEASE_SIZE else "")
                        + ": PYPP's singleton limit is 0 at this δ, so the other mechanisms release as many "
                        "records as the data hold")
            if pypp_keys:
                notes.append(f"PYPP cannot release anything at δ = {delta:g}: its singleton limit "
                             f"⌊δ(θ + n − 1)/(1 − δ)⌋ is 0 with θ = {theta:g} and n = {n:,}, at every ε. It is "
                             f"skipped; the other mechanisms run at m = n = {m_val:,}.")
            # a peer at the common m is now its own *_at_n twin: run it once
            for key in list(names):
                if key in PEER_MECHANISMS and key + "_at_n" in names:
                    names.remove(key)
                    skipped[key] = f"runs as {key}_at_n: the common m is n"
    else:
        m_val = check_release_size(m)
        m_rule = "given"
        m_reason = "common release size, given by the user"
    if pypp_keys and not set(pypp_keys) <= set(skipped):
        cap = f"⌊δ(θ + n − 1)/(1 − δ)⌋ = {limit:,} at δ = {delta:g}, θ = {theta:g}, n = {n:,}"
        if m_rule != "given":
            notes.append(f"The singleton cap binds: PYPP's m = {m_val:,} is its singleton limit {cap}, the same at "
                         f"every ε. PYPP's release at ε = {eps:g} is the one it makes at any ε (σ = 0: only δ, θ "
                         "and n set m; a larger ε buys PYPP nothing).")
        elif m_val > limit:
            notes.append(f"The singleton cap binds: m = {m_val:,} is above PYPP's singleton limit {cap}, so PYPP's "
                         "δ = T₁ exceeds the target at every ε (σ = 0); no ε makes it meet the target at this m.")
        else:
            notes.append(f"PYPP's release does not depend on ε (σ = 0: δ = T₁ at every ε); m = {m_val:,} is within "
                         f"its singleton limit {cap}.")

    if unlisted and any(key in _NEEDS_CELLS for key in names):
        reason = ("needs the public cells of every column: " + ", ".join(repr(c) for c in unlisted)
                  + (" has" if len(unlisted) == 1 else " have") + " no public category list")
        wanted = [key for key in names if key in _NEEDS_CELLS and key in required]
        if wanted:
            raise ValueError(f"mechanisms {', '.join(wanted)} cannot run: a histogram over public cells {reason} "
                             "(give the list)")
        skipped.update({key: reason for key in names if key in _NEEDS_CELLS})
        names = [key for key in names if key not in _NEEDS_CELLS]
        if not names and evaluated is None:
            raise ValueError(f"mechanisms: every mechanism asked for is a histogram over public cells, and "
                             f"categorical column(s) {', '.join(repr(c) for c in unlisted)} have no public "
                             "category list; give one, or add pypp, pypp_old_values or bootstrap")
    built: list[Mechanism] = []
    for key in names:
        if key == "pypp":
            built.append(PYPPMechanism(eps, theta, n, m_val))
        elif key == "laplace_histogram":
            built.append(LaplaceHistogram(eps, bins, levels=levels))
        elif key == "gaussian_histogram":
            built.append(GaussianHistogram(eps, delta, bins, levels=levels))
        elif key == "smoothed_histogram":
            built.append(SmoothedHistogram(eps, bins, levels=levels))
        elif key == "dirichlet_multinomial":
            built.append(DirichletMultinomialHistogram(eps, bins, levels=levels))
        elif key == "dirichlet_multinomial_data_dependent":
            built.append(DirichletMultinomialHistogram(eps, bins, alpha_rule="data-dependent", levels=levels))
        elif key == "dirichlet_posterior_sampling":
            built.append(DirichletPosteriorSampling(eps, delta, bins, levels=levels))
        elif key == "pypp_old_values":
            built.append(OldValuesPYPPMechanism(eps, theta, n, m_val))
        elif key == "truncated_dirichlet_posterior":
            built.append(TruncatedDirichletPosteriorSampling(eps, bins, levels=levels))
        elif key == "pseudo_posterior":
            built.append(PseudoPosteriorMechanism(eps, bins, levels=levels))
        elif key == "pseudo_posterior_scalar":
            built.append(PseudoPosteriorMechanism(eps, bins, weighting="scalar", levels=levels))
        elif key in PEER_MECHANISMS:
            built.append(peer_mechanism(key, eps, delta, bins, levels=levels, n=min(n, MAX_RELEASE_SIZE)))
        else:
            built.append(Bootstrap())
    if evaluated is not None:
        if not isinstance(evaluated, Mechanism):
            raise ValueError(f"evaluated must be a core.mechanisms.Mechanism, got {type(evaluated).__name__}")
        built.insert(0, evaluated)
    for mech in built:
        if isinstance(mech, HistogramMechanism):
            mech.knobs(n, m_val, d)  # raises ValueError early when the domain has too many cells

    caveat = ("scaling bounds read from the data: the guarantee does not cover them"
              if bounds_from_data else "")
    rows = [{"mechanism": "all", "label": "all mechanisms", "parameter": "m", "value": float(m_val),
             "reason": m_reason, "guarantee": "", "kind": "", "scope": "", "eps": math.nan,
             "delta": math.nan, "meets_target": True, "m": m_val, "caveat": ""}]
    for mech in built:
        g = mech.guarantee
        for knob in mech.knobs(n, m_val, d):
            rows.append({"mechanism": mech.name, "label": mech.label, "parameter": knob.parameter,
                         "value": float(knob.value), "reason": knob.reason, "guarantee": g.label,
                         "kind": g.kind, "scope": g.scope, "eps": g.eps, "delta": g.delta,
                         "meets_target": _meets(g, eps, delta), "m": mech.release_size or m_val,
                         "caveat": _caveat(g, caveat)})
    table = pd.DataFrame(rows)
    return Calibration(eps=eps, delta=delta, m=m_val, m_rule=m_rule, n=n, d=d, bins=bins, theta=theta,
                       mechanisms=tuple(built), table=table, bounds_from_data=bool(bounds_from_data),
                       levels=levels, skipped=skipped, notes=tuple(notes))


def _joint_w1(x: np.ndarray, releases: list[np.ndarray], max_cost_bytes: float, n_projections: int,
              rng: np.random.Generator, counts: np.ndarray | None = None,
              levels: tuple | None = None) -> tuple[list[np.ndarray], str]:
    """Multi-column W1 of every run of every mechanism, one method for all of them.

    :func:`core.evaluation.joint_w1_runs` on all runs at once: exact (``ot.emd2`` on the
    residual of data and release) while the residual problems fit its time budget and
    ``max_cost_bytes`` each; otherwise the sliced W1 with one set of random directions
    shared by every run and mechanism (common random numbers). One method for all, so
    the mechanisms' boxplots stay comparable; the label says which. ``counts``: the
    multiplicities of the rows of ``x`` (a frequency table); ``levels``: the categorical
    columns, holding category codes (:func:`core.evaluation.joint_w1_runs`).
    """
    values, method = joint_w1_runs(np.concatenate(releases), x, max_cost_bytes=max_cost_bytes,
                                   n_projections=n_projections, rng=rng, reference_counts=counts, levels=levels)
    return np.split(values, np.cumsum([z.shape[0] for z in releases])[:-1]), method



def _joint_w1_by_size(x: np.ndarray, releases: list[np.ndarray], sizes, max_cost_bytes: float, n_projections: int,
                      rng: np.random.Generator, *, counts, levels) -> tuple[list, list[str]]:
    """:func:`_joint_w1` once per release size (the releases of one call share m; a peer at
    m = n has another size than the rest): the runs' values and the method, per release."""
    values: list = [None] * len(releases)
    methods = [""] * len(releases)
    for size in sorted(set(sizes)):
        group = [i for i, s in enumerate(sizes) if s == size]
        got, how = _joint_w1(x, [releases[i] for i in group], max_cost_bytes, n_projections, rng,
                             counts=counts, levels=levels)
        for i, v in zip(group, got):
            values[i], methods[i] = v, how
    return values, methods

def _grid_points(requested: int, x: np.ndarray, counts: np.ndarray, samples: list[np.ndarray],
                 cap: int = 1 << 14) -> int:
    """Grid size with a step at most a third of the smallest positive bandwidth (capped).

    The binned KDE and the trapezoidal KDE-L2 are accurate only when the grid resolves
    the narrowest kernel; very concentrated columns need more than the default points.
    ``x`` with ``counts`` is the data's column as a frequency table.
    """
    bandwidths = np.concatenate([np.atleast_1d(scott_bandwidth(x, counts))]
                                + [scott_bandwidth(z) for z in samples if z.shape[-1] >= 2])   # a KDE needs 2 values
    positive = bandwidths[bandwidths > 0]
    if positive.size == 0:
        return requested
    lo = min(float(x.min()), min(float(z.min()) for z in samples))
    hi = max(float(x.max()), max(float(z.max()) for z in samples))
    span = hi - lo + 8.0 * positive.max()  # kde_grid pads 4 bandwidths on each side
    return int(min(cap, max(requested, math.ceil(3.0 * span / positive.min()) + 1)))


_COLUMNS = ["mechanism", "label", "run", "column", "W1", "W1_method", "KDE_L2", "TV", "mean", "sd", "q1",
            "median", "q3", "eps", "delta", "guarantee", "m"]


def run_comparison(data, calibration: Calibration, *, counts=None, runs: int = 100, rng: np.random.Generator,
                   progress: Progress | None = None, columns: Sequence[str] | None = None,
                   grid_size: int = 1024, max_cost_bytes: float = DEFAULT_MAX_COST_BYTES,
                   n_projections: int = 50, yardsticks: bool = False) -> pd.DataFrame:
    """R independent runs of every calibrated mechanism on the same data (docs/mathematics.md §5).

    Each mechanism gets its own generator, seeded by one draw from ``rng`` and the
    mechanism's name, so adding or removing a mechanism does not change the others' draws.

    Everything runs on the frequency table of the data (the distinct rows and their
    counts): records are reduced to it once (:func:`core.data.frequency_table`), and a table
    (``counts``) is used as given, so the records and their table give identical results
    for the same ``rng``, at a cost in k, m and runs, never in n. For each run and each column:

    * ``W1``: exact 1-D W1 between the column of the release and of the data
      (:func:`core.evaluation.wasserstein1_runs`); with ``d > 1`` there is also one row per
      run with ``column = "(joint)"`` holding the multi-column W1 of
      :func:`core.evaluation.joint_w1_runs` — exact (``ot.emd2`` on the residual of data and
      release) while it fits a time budget and ``max_cost_bytes``, sliced otherwise, one
      method for every mechanism and run (``W1_method`` says which);
    * ``KDE_L2``: :math:`(\\int(\\hat f_x-\\hat f_Z)^2)^{1/2}` with Gaussian KDEs (Scott
      bandwidth) on one grid per column common to all mechanisms and runs, evaluated by
      linear binning + FFT (:func:`core.evaluation.binned_kde_runs`, within ~1e-3 of
      ``gaussian_kde``); NaN for a run whose column has a single distinct value;
    * ``mean, sd, q1, median, q3`` of the release;
    * with ``yardsticks``, the yardsticks of the run's release, the same on every row of the run
      (:func:`core.evaluation.yardsticks.yardstick_runs`: numeric columns in the calibration's
      bins; :data:`YARDSTICK_COLUMNS`): the project's ``marginal3`` (3-way marginal score) and
      ``marginal3_reference`` (a uniform subsample of the data of the same size), ``UEM``,
      ``row_match``, ``pMSE_logistic`` with its null reference ``pMSE_null`` and ``pMSE_ratio``
      (comparable across m), and SDNist's own ``SDNist_k_marginal``, ``SDNist_pMSE``.

    A mechanism with a release size of its own (a peer at m = n,
    :attr:`~core.mechanisms.Mechanism.release_size`) draws that many records; the column ``m``
    says which size each row has, and the joint W1 is computed per release size.

    Given a :class:`core.evaluation.ComparisonTable` (:func:`core.evaluation.comparison_table`),
    the columns are read in their own terms (docs/quality.md §8): a numeric column's W1,
    KDE-L2 and summaries are in its **original units** (release and data mapped back by
    :meth:`~core.evaluation.ComparisonColumn.original`), a categorical column gets the total
    variation ``TV`` of its marginal (:func:`core.evaluation.total_variation_runs`; W1,
    KDE-L2 and the summaries are NaN), and the joint W1 stays on the unit box with the
    discrete metric on categorical columns (:func:`core.evaluation.joint_w1_runs` with
    ``levels``). Plain arrays keep every metric in scaled units.

    Parameters
    ----------
    data : ComparisonTable, or array_like, shape (n,) or (n, d), values in [0, 1]
        The confidential data scaled with public bounds (e.g. :func:`core.data.prepare`), or
        the rows of its frequency table (with ``counts``); or their ComparisonTable (its
        counts and column names are used).
    calibration : Calibration
        From :func:`calibrate` with the same ``n`` and ``d``.
    counts : array_like of int ≥ 1, shape (k,), optional
        Multiplicities of the rows of ``data`` (e.g. ``prepared.table.counts``): the data are
        then those rows repeated by their counts, :math:`n = \\sum` counts.
    runs : int ≥ 1
    rng : numpy.random.Generator
    progress : callable ``progress(fraction: float, message: str)``, optional
    columns : sequence of str, optional
        Column names (default ``x0, x1, …``).
    grid_size : int in [16, 16 384]
        Minimum KDE grid points per column; more are used when a bandwidth is smaller
        than three grid steps (up to 16 384).
    max_cost_bytes : float in (0, MAX_COST_BYTES]
        Memory budget of one residual cost matrix of the exact multi-column W1 (8 bytes per entry).
    n_projections : int in [1, MAX_PROJECTIONS]
        Random directions of the sliced W1 when the budget is exceeded (shared by all runs).
    yardsticks : bool
        Add the yardsticks columns (docs/peers.md §4; curator only, like every metric here).

    All releases are held at once: ``runs × d ×`` the sum of the mechanisms' release sizes
    must not exceed ``MAX_RELEASE_VALUES``.

    Returns
    -------
    pandas.DataFrame
        Columns ``mechanism, label, run, column, W1, W1_method, KDE_L2, TV, mean, sd, q1,
        median, q3, eps, delta, guarantee, m`` (and the yardsticks); ``attrs["confidential"]`` holds the
        data's own summaries per column (a dict of dicts of floats) and ``attrs["seconds"]`` each
        mechanism's wall-clock seconds per release (key → float; in ``attrs``, not a column, so
        that equal draws give equal frames).
    """
    return _run_comparison(data, calibration, counts=counts, runs=runs, rng=rng, progress=progress, columns=columns,
                           grid_size=grid_size, max_cost_bytes=max_cost_bytes, n_projections=n_projections,
                           yardsticks=yardsticks)[0]


def _run_comparison(data, calibration: Calibration, *, counts, runs: int, rng: np.random.Generator,
                    progress: Progress | None, columns: Sequence[str] | None, grid_size: int,
                    max_cost_bytes: float, n_projections: int, joint: bool = True,
                    yardsticks: bool = False) -> tuple[pd.DataFrame, tuple | None]:
    """:func:`run_comparison`, and with ``joint=False`` and several columns its multi-column W1
    left to the caller: those rows hold NaN, and the second value is what
    :func:`_joint_w1` needs, ``(x, releases, counts, levels)`` (the ε sweep computes it for
    every ε at once)."""
    if not isinstance(calibration, Calibration):
        raise ValueError(f"calibration must be a Calibration from calibrate(), got {type(calibration).__name__}")
    runs = check_integer("runs", runs, minimum=1)
    rng = check_rng(rng)
    grid_size = check_integer("grid_size", grid_size, minimum=16, maximum=1 << 14)
    max_cost_bytes = check_real("max_cost_bytes", max_cost_bytes, low=0.0, high=MAX_COST_BYTES, low_open=True)
    n_projections = check_integer("n_projections", n_projections, minimum=1, maximum=MAX_PROJECTIONS)
    table = data if isinstance(data, ComparisonTable) else None
    x, c = _comparison_table(data, counts)
    x2 = x.reshape(x.shape[0], -1)
    n, d = int(c.sum()), x2.shape[1]
    sizes = [mech.release_size or calibration.m for mech in calibration.mechanisms]
    check_release_budget(runs, sum(sizes), d)
    if n != calibration.n or d != calibration.d:
        raise ValueError(f"data has n = {n}, d = {d} but the calibration is for n = {calibration.n}, "
                         f"d = {calibration.d}")
    levels = None if table is None else table.levels
    if levels != calibration.levels:
        raise ValueError(f"the calibration's column domains (levels = {calibration.levels}) are not the data's "
                         f"({levels}); calibrate with the table's levels")
    if columns is None and table is not None:
        columns = table.names
    names = [f"x{j}" for j in range(d)] if columns is None else [str(c) for c in columns]
    if len(names) != d:
        raise ValueError(f"columns must name the {d} columns, got {len(names)} names")
    report = progress if progress is not None else (lambda fraction, message: None)
    mechs = calibration.mechanisms
    # One child generator per mechanism, keyed by its name: adding or removing a
    # mechanism leaves the others' draws unchanged for the same rng.
    root = int(rng.integers(0, 2**63 - 1))
    children = [np.random.default_rng([root, zlib.crc32(mech.name.encode())]) for mech in mechs]
    children.append(np.random.default_rng([root, zlib.crc32(b"(joint W1)")]))
    measures = [np.random.default_rng([root, zlib.crc32(mech.name.encode()), 1]) for mech in mechs]
    total_steps = len(mechs) + 1

    releases, seconds = [], {}
    for i, mech in enumerate(mechs):
        report(i / total_steps, f"{mech.label}: {runs} releases of m = {sizes[i]}")
        start = time.perf_counter()
        z = mech.release_runs(x, sizes[i], runs, children[i], counts=c)
        seconds[mech.name] = (time.perf_counter() - start) / runs
        releases.append(z.reshape(runs, sizes[i], d))
    report(len(mechs) / total_steps, "utility metrics (W1, KDE-L2, summaries)")

    frames = []
    confidential = {}
    per_mech: list[dict[str, tuple]] = [dict() for _ in mechs]
    joint_x = x2.copy()     # the joint W1: numeric columns on [0, 1], categorical ones as codes
    joint_z = [z.copy() for z in releases] if levels is not None else releases
    # With numeric columns only, the joint W1 needs nothing the column metrics compute: it runs on
    # a second thread meanwhile (its sorts and searches release the GIL; its generator is its own,
    # so the values are those of a sequential run). With categorical columns it waits for their codes.
    pool = joint_future = None
    if d > 1 and joint and (levels is None or all(size is None for size in levels)):
        report((len(mechs) + 0.5) / total_steps, "utility metrics and the multi-column W1")
        pool = ThreadPoolExecutor(max_workers=1)
        joint_future = pool.submit(_joint_w1_by_size, joint_x, joint_z, sizes, max_cost_bytes, n_projections,
                                   children[-1], counts=c, levels=levels)
    try:
        _column_metrics(names, table, x2, c, releases, joint_x, joint_z, per_mech, confidential, runs, grid_size,
                        lambda col: report((len(mechs) + 0.5) / total_steps, f"utility metrics: column {col}"))
    except BaseException:
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)
        raise
    joint_parts = None
    if d > 1 and not joint:
        joint_parts = (joint_x, joint_z, c, levels)
        joint_w1, method = [np.full(runs, np.nan) for _ in mechs], [""] * len(mechs)
    elif joint_future is not None:
        try:
            joint_w1, method = joint_future.result()
        finally:
            pool.shutdown()
    elif d > 1:
        report((len(mechs) + 0.5) / total_steps, "multi-column W1")
        joint_w1, method = _joint_w1_by_size(joint_x, joint_z, sizes, max_cost_bytes, n_projections, children[-1],
                                             counts=c, levels=levels)
    extra = [{} for _ in mechs]
    if yardsticks:
        report((len(mechs) + 0.75) / total_steps, "yardsticks (3-way marginal, UEM, pMSE; SDNist's k-marginal, pMSE)")
        for i, z in enumerate(releases):
            # A report per mechanism is also where a caller may stop the run (its session ended).
            report((len(mechs) + 0.75 + 0.25 * i / len(mechs)) / total_steps, f"yardsticks: {mechs[i].label}")
            table_i = yardstick_runs(x2, c, z, bins=calibration.bins, levels=levels, rng=measures[i])
            extra[i] = {col: table_i[col].to_numpy() for col in table_i.columns}
    for i, mech in enumerate(mechs):
        g = mech.guarantee
        for j, col in enumerate(names):
            w1, l2, tv, summ = per_mech[i][col]
            categorical = table is not None and table.columns[j].kind == "categorical"
            frames.append(pd.DataFrame({
                "mechanism": mech.name, "label": mech.label, "run": np.arange(runs), "column": col,
                "W1": w1, "W1_method": "" if categorical else "exact-1d", "KDE_L2": l2, "TV": tv, **summ,
                "eps": g.eps, "delta": g.delta, "guarantee": g.label, "m": sizes[i], **extra[i]}))
        if d > 1:
            w1j = joint_w1[i]
            frames.append(pd.DataFrame({
                "mechanism": mech.name, "label": mech.label, "run": np.arange(runs), "column": "(joint)",
                "W1": w1j, "W1_method": method[i], "KDE_L2": np.nan, "TV": np.nan, "mean": np.nan, "sd": np.nan,
                "q1": np.nan, "median": np.nan, "q3": np.nan,
                "eps": g.eps, "delta": g.delta, "guarantee": g.label, "m": sizes[i], **extra[i]}))
    out = pd.concat(frames, ignore_index=True)[_COLUMNS + (list(YARDSTICK_COLUMNS) if yardsticks else [])]
    out.attrs["confidential"] = confidential
    out.attrs["seconds"] = seconds
    report(1.0, "done")
    return out, joint_parts


def _column_metrics(names, table, x2, c, releases, joint_x, joint_z, per_mech, confidential, runs, grid_size,
                    report=lambda col: None) -> None:
    """The per-column metrics of :func:`_run_comparison` (W1 and KDE-L2 in original units for a numeric
    column, TV for a categorical one, the summaries), written into ``per_mech`` and ``confidential``;
    a categorical column's codes also go into ``joint_x`` and ``joint_z`` for the joint W1.
    ``report(column)`` is called before each column (progress; a caller's point to stop the run)."""
    for j, col in enumerate(names):
        report(col)
        kind = "numeric" if table is None else table.columns[j].kind
        if kind == "categorical":
            column = table.columns[j]
            xj = column.codes(x2[:, j])
            confidential[col] = dict.fromkeys(_SUMMARY_NAMES, math.nan)
            joint_x[:, j] = xj
            for i, z in enumerate(releases):
                zj = column.codes(z[:, :, j])
                joint_z[i][:, :, j] = zj
                tv = total_variation_runs(zj, xj, column.size, reference_counts=c)
                per_mech[i][col] = (np.full(runs, np.nan), np.full(runs, np.nan), tv,
                                    {k: np.full(runs, np.nan) for k in _SUMMARY_NAMES})
            continue
        # the column's values in the table, each standing for c of them; original units with a table
        xj = x2[:, j] if table is None else table.columns[j].original(x2[:, j])
        zs = [z[:, :, j] if table is None else table.columns[j].original(z[:, :, j]) for z in releases]
        confidential[col] = column_summary(xj, c)
        grid = kde_grid(xj, *zs, size=_grid_points(grid_size, xj, c, zs), first_counts=c)
        fx = binned_kde_runs(xj[None, :], grid, counts=c)[0] if np.ptp(xj) > 0 else None
        for i, zj in enumerate(zs):
            w1 = wasserstein1_runs(zj, xj, reference_weights=c)
            if fx is None or zj.shape[1] < 2:
                l2 = np.full(runs, np.nan)
            else:
                l2 = kde_l2_runs(zj, fx, grid)
            per_mech[i][col] = (w1, l2, np.full(runs, np.nan), summary_runs(zj))


def sweep_comparison(data, eps_values, delta, m, *, theta, counts=None, runs: int = 100, rng: np.random.Generator,
                     bins: int = 25, mechanisms: Sequence[str] = DEFAULT_MECHANISMS,
                     progress: Progress | None = None, **kwargs) -> pd.DataFrame:
    """:func:`run_comparison` at each ε of a grid (the W1-vs-ε frontier); adds a column ``target_eps``.

    Parameters
    ----------
    data : ComparisonTable, or array_like, shape (n,) or (n, d), values in [0, 1]
        Records, or the rows of a frequency table (with ``counts``), or their
        ComparisonTable (mixed columns; calibrated with its ``levels`` and ``unlisted``).
    eps_values : array_like of float in (0, ∞), shape (E,)
    delta, m, theta, bins, mechanisms
        As in :func:`calibrate` (``m`` may be ``"largest"``, then it varies with ε).
    counts : array_like of int ≥ 1, shape (k,), optional
        Multiplicities of the rows of ``data``, as in :func:`run_comparison` (records are
        reduced to their table once, for every ε).
    runs : int
    rng : numpy.random.Generator
    progress : callable, optional
    **kwargs
        Passed to :func:`run_comparison` (``grid_size``, ``max_cost_bytes``, ``n_projections``,
        ``columns``).

    With several columns the multi-column W1 of every run at every ε is computed at once,
    after the runs (:func:`core.evaluation.joint_w1_runs`): one method for all of them, and
    when sliced, one set of directions for every ε (common random numbers: the frontier's
    points differ by their releases, not by their directions).

    Returns
    -------
    pandas.DataFrame
        The concatenated tidy results with ``target_eps``.
    """
    x, c = _comparison_table(data, counts)
    table = data if isinstance(data, ComparisonTable) else None
    rng = check_rng(rng)
    try:
        eps_arr = np.atleast_1d(np.asarray(eps_values, dtype=float))
    except (TypeError, ValueError):
        raise ValueError(f"eps_values must be an array of numbers in (0, ∞), got {eps_values!r}") from None
    if eps_arr.ndim != 1 or not 1 <= eps_arr.size <= 1000:
        raise ValueError(f"eps_values must be a 1-D array of 1 to 1000 values, got shape {eps_arr.shape}")
    eps_list = [check_finite_eps(float(e)) for e in eps_arr]
    x2 = x.reshape(x.shape[0], -1)
    # one child per ε (as many as before: the ε's draws do not depend on the sweep's length),
    # and one for the directions of a sliced joint W1, shared by every ε
    children = rng.spawn(len(eps_list) + 1)
    options = {"grid_size": 1024, "max_cost_bytes": DEFAULT_MAX_COST_BYTES, "n_projections": 50,
               "columns": None, **kwargs}
    share = 0.9 if x2.shape[1] > 1 else 1.0          # of the progress bar, before the joint W1
    frames, joint = [], []
    for i, e in enumerate(eps_list):
        def sub(fraction, message, i=i, e=e):
            if progress is not None:
                progress(share * (i + fraction) / len(eps_list), f"ε = {e:g}: {message}")
        cal = calibrate(int(c.sum()), e, delta, m, theta=theta, d=x2.shape[1], bins=bins, mechanisms=mechanisms,
                        levels=None if table is None else table.levels,
                        unlisted=() if table is None else table.unlisted)
        frame, parts = _run_comparison(x if table is None else table, cal, counts=c if table is None else None,
                                       runs=runs, rng=children[i], progress=sub, joint=False, **options)
        # the timings differ by ε: dropped, so that the concatenation keeps the common attrs
        frame.attrs.pop("seconds", None)
        frames.append(frame.assign(target_eps=e))
        joint.append((cal, parts))
    if x2.shape[1] > 1:
        # the multi-column W1 of every run at every ε at once: one method for all of them, and
        # one set of sliced directions (common random numbers across ε), drawn once
        if progress is not None:
            progress(share, "multi-column W1 of every ε")
        ref, _, ref_counts, levels = joint[0][1]
        releases = [z for _, parts in joint for z in parts[1]]
        values, methods = _joint_w1_by_size(ref, releases, [z.shape[1] for z in releases], options["max_cost_bytes"],
                                            options["n_projections"], children[-1], counts=ref_counts, levels=levels)
        results = iter(zip(values, methods))
        for frame, (cal, _) in zip(frames, joint):
            for mech in cal.mechanisms:
                rows = (frame["mechanism"] == mech.name) & (frame["column"] == "(joint)")
                value, method = next(results)
                frame.loc[rows, "W1"] = value
                frame.loc[rows, "W1_method"] = method
        if progress is not None:
            progress(1.0, "done")
    return pd.concat(frames, ignore_index=True)
