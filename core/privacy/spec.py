"""The frozen description of one release that the accounting reads (docs/mathematics.md §3).
"""
from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass, field

from ..validation import check_delta, check_eps, check_integer, check_m, check_py_parameters
from .regimes import Regime, regime_of

__all__ = ["ReleaseSpec"]


@dataclass(frozen=True)
class ReleaseSpec:
    """A PYPP release: what accounting, reports, caches and pages need to know about it.

    One frozen value travels from the settings to every computation that depends on them,
    so two pages showing the same release compute from the same spec, and a cache keyed by
    the spec is keyed by everything the result depends on.

    Parameters
    ----------
    sigma, theta : float
        PY parameters (docs/mathematics.md §2); the sign of σ picks the :attr:`regime`.
    m : int ≥ 1
        Released synthetic sample size.
    n : int ≥ 1
        Size of the confidential dataset.
    eps : float > 0 or None
        The ε at which the guarantees are stated (``inf`` allowed); ``None`` for a spec that
        only describes the mechanism (e.g. the key of a δ(ε) curve over many ε).
    delta : float in (0, 1) or None
        The δ target the guarantees are compared with; ``None`` as for ``eps``.
    releases : int in [1, 1000]
        How many independent releases of this kind are planned from the same data.
    mechanism : str
        Always ``"pypp"`` here; baselines describe themselves in :mod:`core.mechanisms`.
    """

    sigma: float
    theta: float
    m: int
    n: int
    eps: float | None = None
    delta: float | None = None
    releases: int = 1
    mechanism: str = field(default="pypp")

    def __post_init__(self):
        sigma, theta, _ = check_py_parameters(self.sigma, self.theta)
        object.__setattr__(self, "sigma", sigma)
        object.__setattr__(self, "theta", theta)
        object.__setattr__(self, "m", check_m(self.m))
        object.__setattr__(self, "n", check_integer("n", self.n, minimum=1))
        if self.eps is not None:
            eps, scalar = check_eps(self.eps)
            if not scalar:
                raise ValueError(f"eps must be a scalar in a release spec, got an array of shape {eps.shape}")
            object.__setattr__(self, "eps", float(eps[0]))
        if self.delta is not None:
            object.__setattr__(self, "delta", check_delta(self.delta))
        object.__setattr__(self, "releases", check_integer("releases", self.releases, minimum=1, maximum=1000))

    @property
    def regime(self) -> Regime:
        """The regime of σ (:mod:`core.privacy.regimes`)."""
        return regime_of(self.sigma)

    @property
    def categories(self) -> int | None:
        """``z`` for σ < 0, else ``None``."""
        return check_py_parameters(self.sigma, self.theta)[2]

    @property
    def monte_carlo_seed(self) -> int:
        """The seed of the Monte Carlo accounting of this release (σ ∈ (0, 1)), derived from the
        mechanism itself (σ, θ, m, n): the page and the curator record compute the same δ for
        the same release, and the ε at which it is stated is not part of it, so every ε reads
        the same replicates (common random numbers; a move of ε draws nothing new)."""
        key = repr((self.sigma, self.theta, self.m, self.n)).encode("utf-8")
        return int.from_bytes(hashlib.sha256(key).digest()[:4], "big")

    def without_target(self) -> "ReleaseSpec":
        """The same release without ε, δ target and planned releases: the key of a result that
        does not depend on them (a δ(ε) curve over many ε, a largest-m curve)."""
        return dataclasses.replace(self, eps=None, delta=None, releases=1)
