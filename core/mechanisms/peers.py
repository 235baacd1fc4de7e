"""The field's peer mechanisms, calibrated by OpenDP's accounting (docs/peers.md).

Four mechanisms that established libraries offer, at the same (ε, δ) as the project's
mechanisms, behind the common :class:`~core.mechanisms.Mechanism` interface and on the same
public cells as the histogram baselines (numeric columns binned on their public bounds,
categorical columns on their public categories; docs/mathematics.md §4.7):

* :class:`OpenDPLaplaceHistogram` — OpenDP's Laplace measurement on the cell counts, its
  scale found by ``opendp.mod.binary_search_param`` on the measurement's own privacy map
  (L1 distance 2 under replacement): pure ε-DP;
* :class:`OpenDPGaussianHistogram` — OpenDP's Gaussian measurement, calibrated through
  OpenDP's zCDP accounting (``make_zCDP_to_approxDP``, ``make_fix_delta``; L2 distance √2):
  (ε, δ)-DP. OpenDP converts zCDP with the bound of Canonne, Kamath & Steinke (2020),
  valid for any ρ-zCDP mechanism, so its noise is 6–15 % above the project's analytic
  Gaussian (Balle & Wang 2018), which uses the Gaussian's exact profile;
* :class:`MSTMechanism` and :class:`AIMMechanism` — MST (McKenna, Miklau & Sheldon 2021) and
  AIM (McKenna et al. 2022) on the product of the cells (:mod:`core.mechanisms.pgm`), with the
  ρ of the budget from OpenDP's conversion of zCDP to (ε, δ)-DP.

**Sampling.** AIM and MST release m records by **controlled rounding** of their fitted
table (:func:`core.mechanisms.pgm.controlled_rounding`: column after column, each group's
counts rounded systematically; what Private-PGM's ``synthetic_data(rows)`` intends, without the
lockstep of ``mbi`` 1.1.0's ``method="round"``, which fills columns the model does not join in
row order and so makes them dependent: issue 23 measured a wage × region TV of 0.29 at m = n
with it). ``sampler="iid"`` draws m i.i.d. records from the fitted table instead (the
histogram baselines' sampler, which the OpenDP histograms keep). Then a uniform point inside
each numeric cell. Releases of any ``m`` are post-processing; the ``*_at_n`` entries release
m = n records, the peers' natural size.

**Randomness.** Every draw — the noise, the selections, the sample — comes from the
``numpy.random.Generator`` passed in, so a release replays byte for byte from its seed.
OpenDP itself samples from the operating system's CSPRNG and cannot be seeded: its
measurements are built and their privacy maps calibrate the noise, and noise of that law is
drawn from the Generator — the Gaussian for OpenDP's Gaussian histogram and for AIM and MST;
for OpenDP's Laplace histogram the **integer** Laplace that OpenDP's ``make_laplace`` adds to
integer counts (the discrete Laplace, P(k) ∝ exp(−|k|/s); Canonne, Kamath & Steinke 2020), drawn
exactly as the difference of two i.i.d. geometric variables (:func:`discrete_laplace`).
Private-PGM (``mbi``) solves its estimation with JAX, which compiles anew for every fit (3–10 s
each on the 2-core test machine, and AIM fits once per round); :mod:`core.mechanisms.pgm`
solves the same problem on the dense table in NumPy.

OpenDP is a dependency of the project (``pip install -e .`` installs it; the extra ``peers``
adds Private-PGM for the estimator's cross-check). An environment that lacks it anyway makes
:func:`peers_available` false and :func:`require_peers` raise a ValueError that says how to
install it.
"""
from __future__ import annotations

import functools
import importlib.util
import math
import types

import numpy as np

from ..privacy import Guarantee
from ..validation import check_delta, check_finite_eps, check_integer, check_positive
from .base import (
    HistogramMechanism,
    Knob,
    _normalise_rows,
    axis_sizes,
    cells_to_points,
    check_release_arguments,
    histogram_counts,
)
from .pgm import CHECK_EVERY, MAX_ITERS, MAX_MODEL_CELLS, ROUND_MAX_ITERS, TOL, aim_table, controlled_rounding, mst_table

__all__ = [
    "PEER_LABELS",
    "PEER_MECHANISMS",
    "PEERS_MISSING",
    "AIMMechanism",
    "MSTMechanism",
    "OpenDPGaussianHistogram",
    "OpenDPLaplaceHistogram",
    "SAMPLERS",
    "discrete_laplace",
    "opendp_gaussian_scale",
    "opendp_integer_laplace_scale",
    "opendp_laplace_scale",
    "opendp_zcdp_rho",
    "peer_entries",
    "peer_mechanism",
    "peers_available",
    "require_peers",
]

#: Suffix of the entries that release the peers' natural size m = n.
AT_N = "_at_n"
#: The peers at the comparison's m, then at m = n.
_PEER_BASES = ("opendp_laplace_histogram", "opendp_gaussian_histogram", "aim", "mst")
PEER_MECHANISMS = _PEER_BASES + tuple(name + AT_N for name in _PEER_BASES)
#: Display names of the peers (the selection on the Compare page).
PEER_LABELS = {"opendp_laplace_histogram": "OpenDP Laplace histogram", "opendp_gaussian_histogram":
               "OpenDP Gaussian histogram", "aim": "AIM", "mst": "MST"}
#: What the app and the command line say when OpenDP is missing.
PEERS_MISSING = ("the peer mechanisms (OpenDP histograms, AIM, MST) need OpenDP, a dependency of the project "
                 "that this environment lacks: pip install -e . in the project's checkout (it installs opendp)")


def _module_available(name: str) -> bool:
    return importlib.util.find_spec(name) is not None


def peers_available() -> bool:
    """Whether OpenDP is installed (a dependency: false only in an environment installed without it)."""
    return _module_available("opendp")


def require_peers() -> None:
    """Raise ``ValueError(PEERS_MISSING)`` unless OpenDP is installed."""
    if not peers_available():
        raise ValueError(PEERS_MISSING)


def _opendp():
    """OpenDP's core modules with its ``contrib`` features on, as one namespace (imported on first
    use: the command line's other commands start faster; ``opendp.prelude`` would also load its scikit-learn and polars
    extras, two seconds more)."""
    require_peers()
    import opendp.combinators as combinators
    import opendp.domains as domains
    import opendp.measurements as measurements
    import opendp.metrics as metrics
    import opendp.mod as mod

    mod.enable_features("contrib")
    return types.SimpleNamespace(m=measurements, c=combinators, binary_search_param=mod.binary_search_param,
                                 vector_domain=domains.vector_domain, atom_domain=domains.atom_domain,
                                 l1_distance=metrics.l1_distance, l2_distance=metrics.l2_distance)


# ======================================================================= OpenDP's calibrations
@functools.lru_cache(maxsize=256)
def opendp_laplace_scale(eps: float, l1_sensitivity: float = 2.0) -> float:
    """Smallest scale of OpenDP's Laplace measurement on a vector of counts whose privacy map
    gives at most ``eps`` at L1 distance ``l1_sensitivity`` (2 under replacement): 2/ε."""
    eps = check_finite_eps(eps)
    dp = _opendp()
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l1_distance(T=float)
    return float(dp.binary_search_param(lambda s: dp.m.make_laplace(*space, scale=s),
                                        d_in=float(l1_sensitivity), d_out=eps))


@functools.lru_cache(maxsize=256)
def opendp_integer_laplace_scale(eps: float, l1_sensitivity: int = 2) -> float:
    """Smallest scale of OpenDP's Laplace measurement on a vector of **integer** counts (the
    discrete Laplace) whose privacy map gives at most ``eps`` at L1 distance ``l1_sensitivity``
    (2 under replacement): 2/ε, as for the continuous Laplace."""
    eps = check_finite_eps(eps)
    dp = _opendp()
    space = dp.vector_domain(dp.atom_domain(T=int)), dp.l1_distance(T=int)
    return float(dp.binary_search_param(lambda s: dp.m.make_laplace(*space, scale=s),
                                        d_in=int(l1_sensitivity), d_out=eps))


def discrete_laplace(scale: float, size, rng: np.random.Generator) -> np.ndarray:
    """Draws of the discrete Laplace law P(k) ∝ exp(−|k|/scale) on the integers, the noise of
    OpenDP's ``make_laplace`` on integer counts: the difference of two i.i.d. geometric
    variables with success probability 1 − exp(−1/scale) (Inusah & Kozubowski 2006), from ``rng``.

    Returns
    -------
    ndarray of int64, shape ``size``
    """
    scale = check_positive("scale", scale)
    p = -math.expm1(-1.0 / scale)
    return rng.geometric(p, size=size).astype(np.int64) - rng.geometric(p, size=size).astype(np.int64)


def _gaussian_approx(dp, scale: float, delta: float):
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l2_distance(T=float)
    return dp.c.make_fix_delta(dp.c.make_zCDP_to_approxDP(dp.m.make_gaussian(*space, scale=scale)), delta)


@functools.lru_cache(maxsize=256)
def opendp_gaussian_scale(eps: float, delta: float, l2_sensitivity: float = math.sqrt(2.0)) -> float:
    """Smallest noise SD of OpenDP's Gaussian measurement whose map, through zCDP and
    ``make_fix_delta``, gives at most (ε, δ) at L2 distance ``l2_sensitivity`` (√2 under
    replacement). Equals :func:`core.privacy.zcdp.zcdp_gaussian_sigma` (docs/peers.md §2)."""
    eps, delta = check_finite_eps(eps), check_delta(delta)
    dp = _opendp()
    return float(dp.binary_search_param(lambda s: _gaussian_approx(dp, s, delta),
                                        d_in=float(l2_sensitivity), d_out=(eps, delta)))


@functools.lru_cache(maxsize=256)
def opendp_zcdp_rho(eps: float, delta: float) -> float:
    """The ρ-zCDP budget that OpenDP's accounting converts to (ε, δ)-DP: ρ of its Gaussian
    measurement calibrated at L2 distance 1, as its map states it."""
    eps, delta = check_finite_eps(eps), check_delta(delta)
    dp = _opendp()
    scale = opendp_gaussian_scale(eps, delta, 1.0)
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l2_distance(T=float)
    return float(dp.m.make_gaussian(*space, scale=scale).map(1.0))


# ======================================================================= mechanisms
class _Peer(HistogramMechanism):
    """A peer on the histogram cells; ``natural_size``: release m = n (``release_size``)."""

    base_name = ""
    base_label = ""

    def __init__(self, eps, bins, *, levels=None, natural_size: int | None = None):
        super().__init__(bins, levels)
        self.eps = check_finite_eps(eps)
        if natural_size is None:
            self.name, self.label = self.base_name, self.base_label
        else:
            self.release_size = check_integer("natural_size", natural_size, minimum=1)
            self.name, self.label = self.base_name + AT_N, f"{self.base_label} (m = n)"

    def _size_knob(self) -> list[Knob]:
        if self.release_size is None:
            return []
        return [Knob("release_size", float(self.release_size),
                     "m = n, the peer's natural size (any m is post-processing of its DP model)")]


class OpenDPLaplaceHistogram(_Peer):
    """OpenDP's Laplace measurement on the cell counts (pure ε-DP; see the module docstring).

    Parameters
    ----------
    eps : float in (0, ∞)
    bins : int ≥ 1
    levels : sequence of (None or int ≥ 1), optional
    natural_size : int ≥ 1, optional
        Release this many records (m = n) instead of the comparison's m.
    """

    base_name = "opendp_laplace_histogram"
    base_label = "OpenDP Laplace histogram"

    def __init__(self, eps, bins, *, levels=None, natural_size=None):
        super().__init__(eps, bins, levels=levels, natural_size=natural_size)
        self.scale = opendp_integer_laplace_scale(self.eps)

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee("pure", "global", self.eps, 0.0,
                         "OpenDP make_laplace on the integer counts (discrete Laplace), scale from its map; any m")

    def knobs(self, n, m, d: int = 1):
        self.cells(d)
        reason = ("smallest scale whose OpenDP privacy map for integer counts (discrete Laplace) at L1 "
                  "distance 2 (replacement) is ≤ ε (binary_search_param)")
        return [Knob("laplace_scale", self.scale, reason)] + self._size_knob()

    def cell_probabilities(self, counts, m, runs, rng):
        # Integer noise on integer counts: an empty cell stays exactly empty with probability
        # tanh(1/(2s)) (0.76 at ε = 4), where continuous noise puts mass in half of them.
        noisy = counts + discrete_laplace(self.scale, (runs, counts.size), rng)
        return _normalise_rows(np.maximum(noisy, 0).astype(np.float64))


class OpenDPGaussianHistogram(_Peer):
    """OpenDP's Gaussian measurement on the cell counts, calibrated through zCDP ((ε, δ)-DP).

    Parameters
    ----------
    eps : float in (0, ∞)
    delta : float in (0, 1)
    bins, levels, natural_size
        As in :class:`OpenDPLaplaceHistogram`.
    """

    base_name = "opendp_gaussian_histogram"
    base_label = "OpenDP Gaussian histogram"

    def __init__(self, eps, delta, bins, *, levels=None, natural_size=None):
        super().__init__(eps, bins, levels=levels, natural_size=natural_size)
        self.delta = check_delta(delta)
        self.sigma = opendp_gaussian_scale(self.eps, self.delta)

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee("approximate", "global", self.eps, self.delta,
                         "OpenDP make_gaussian on the counts, zCDP converted to (ε, δ) (CKS 2020); any m")

    def knobs(self, n, m, d: int = 1):
        self.cells(d)
        return [Knob("gaussian_sd", self.sigma, "smallest SD whose OpenDP map (ρ = Δ²/2s², Δ = √2, converted by "
                     "Canonne–Kamath–Steinke) is ≤ (ε, δ); above the analytic Gaussian's")] + self._size_knob()

    def cell_probabilities(self, counts, m, runs, rng):
        noisy = counts + rng.normal(0.0, self.sigma, size=(runs, counts.size))
        return _normalise_rows(np.maximum(noisy, 0.0))


#: The release samplers of AIM and MST: controlled rounding of the fitted table (default), or
#: m i.i.d. draws from it.
SAMPLERS = ("round", "iid")


class _MarginalPeer(_Peer):
    """AIM or MST: a ρ-zCDP select–measure–estimate model of the cell table (:mod:`core.mechanisms.pgm`),
    released by ``sampler`` (one of :data:`SAMPLERS`; see the module docstring)."""

    def __init__(self, eps, delta, bins, *, levels=None, natural_size=None, sampler: str = "round"):
        super().__init__(eps, bins, levels=levels, natural_size=natural_size)
        self.delta = check_delta(delta)
        self.rho = opendp_zcdp_rho(self.eps, self.delta)
        if sampler not in SAMPLERS:
            raise ValueError(f"sampler must be one of {list(SAMPLERS)}, got {sampler!r}")
        self.sampler = sampler

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee("approximate", "global", self.eps, self.delta,
                         f"{self.base_label}: ρ-zCDP (Gaussian measurements, exponential-mechanism selection), "
                         "converted to (ε, δ) by OpenDP's accounting; any m")

    def _table_shape(self, cells: int) -> tuple[int, ...]:
        """Cells per column of a flat cell vector of ``cells`` entries (C order, as histogram_counts)."""
        if self.levels is not None:
            return axis_sizes(self.bins, len(self.levels), self.levels)
        d = 1
        while self.bins ** d < cells:
            d += 1
        return (self.bins,) * d

    def knobs(self, n, m, d: int = 1):
        cells = self.cells(d)
        if cells > MAX_MODEL_CELLS:
            raise ValueError(f"{self.base_label} needs the domain below MAX_MODEL_CELLS = {MAX_MODEL_CELLS} cells, got "
                             f"{cells}: use fewer bins, fewer columns or coarser categories")
        sampler = ("controlled rounding of the fitted table" if self.sampler == "round"
                   else "i.i.d. draws from the fitted table")
        return ([Knob("rho", self.rho, "ρ-zCDP budget: the largest ρ that OpenDP's conversion "
                     f"(make_zCDP_to_approxDP, fix δ) turns into (ε, δ); {self.settings}; "
                     f"the estimator stops when its objective falls by < {TOL:g} of itself (or of the measured "
                     f"cells) over {CHECK_EVERY} iterations, at most {MAX_ITERS}; release by {sampler}")]
                + self._size_knob())

    def cell_probabilities(self, counts, m, runs, rng):
        shape = self._table_shape(counts.size)
        table = counts.reshape(shape)
        return np.stack([self.fit(table, rng).ravel() for _ in range(runs)])

    def release_runs(self, data, m, runs, rng, *, counts=None) -> np.ndarray:
        if self.sampler == "iid":
            return super().release_runs(data, m, runs, rng, counts=counts)
        x, weights, m, runs, rng, d = check_release_arguments(data, m, runs, rng, counts)
        # The mechanism sees the cell counts only: from records or from a table they are equal.
        cell_counts = histogram_counts(x, self.bins, counts=weights, levels=self.levels)
        table = cell_counts.reshape(self._table_shape(cell_counts.size))
        parts = []
        for _ in range(runs):
            q = self.fit(table, rng)
            rounded = controlled_rounding(q, m, rng).reshape(1, -1)
            parts.append(cells_to_points(rounded, self.bins, d, rng, squeeze=x.ndim == 1, levels=self.levels))
        return parts[0] if runs == 1 else np.concatenate(parts)


class MSTMechanism(_MarginalPeer):
    """MST (McKenna, Miklau & Sheldon 2021) on the cells (see :func:`core.mechanisms.pgm.mst_table`).

    Parameters
    ----------
    eps : float in (0, ∞)
    delta : float in (0, 1)
    bins, levels, natural_size
        As in :class:`OpenDPLaplaceHistogram`.
    sampler : {"round", "iid"}
        Controlled rounding of the fitted table (default) or i.i.d. draws.
    """

    base_name = "mst"
    base_label = "MST"
    settings = ("1/3 one-way, then the domain compression (cells below 3σ merged), 1/3 spanning-tree "
                "selection, 1/3 pairs")

    def fit(self, table, rng):
        return mst_table(table, self.rho, rng)


class AIMMechanism(_MarginalPeer):
    """AIM (McKenna, Mullins, Sheldon & Miklau 2022) on the cells (:func:`core.mechanisms.pgm.aim_table`).

    Parameters
    ----------
    eps : float in (0, ∞)
    delta : float in (0, 1)
    bins, levels, natural_size
        As in :class:`OpenDPLaplaceHistogram`.
    sampler : {"round", "iid"}
        Controlled rounding of the fitted table (default) or i.i.d. draws.
    """

    base_name = "aim"
    base_label = "AIM"
    settings = ("workload: all min(3, d)-way marginals; at most 16·d rounds; 90 % measure, 10 % select; "
                f"refits between rounds warm-started, at most {ROUND_MAX_ITERS} iterations each")

    def fit(self, table, rng):
        return aim_table(table, self.rho, rng)


def peer_mechanism(key: str, eps, delta, bins, *, levels=None, n: int | None = None) -> HistogramMechanism:
    """The peer named ``key`` (one of :data:`PEER_MECHANISMS`); a ``*_at_n`` key releases ``n`` records.

    Raises
    ------
    ValueError
        An unknown key, a missing ``n`` for an ``*_at_n`` key, or OpenDP missing.
    """
    if key not in PEER_MECHANISMS:
        raise ValueError(f"mechanism {key!r} is not a peer; choose from {list(PEER_MECHANISMS)}")
    require_peers()
    base = key[:-len(AT_N)] if key.endswith(AT_N) else key
    size = None
    if key.endswith(AT_N):
        if n is None:
            raise ValueError(f"n: the mechanism {key!r} releases n records; give n")
        size = n
    if base == "opendp_laplace_histogram":
        return OpenDPLaplaceHistogram(eps, bins, levels=levels, natural_size=size)
    if base == "opendp_gaussian_histogram":
        return OpenDPGaussianHistogram(eps, delta, bins, levels=levels, natural_size=size)
    cls = AIMMechanism if base == "aim" else MSTMechanism
    return cls(eps, delta, bins, levels=levels, natural_size=size)


def peer_entries(names, size: str = "both") -> tuple[str, ...]:
    """The mechanism keys for ``names``: each peer named without ``_at_n`` at the common m
    (``size="m"``), at m = n (``"n"``) or both (default); other names unchanged, order kept."""
    if size not in ("m", "n", "both"):
        raise ValueError(f"size must be 'm', 'n' or 'both', got {size!r}")
    out = []
    for name in names:
        if name in _PEER_BASES:
            out += [name] * (size != "n") + [name + AT_N] * (size != "m")
        else:
            out.append(name)
    return tuple(dict.fromkeys(out))
