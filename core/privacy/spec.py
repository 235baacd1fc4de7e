"""The frozen description of one release that the accounting reads (docs/mathematics.md §3).
"""
from __future__ import annotations

from dataclasses import dataclass, field


from ..validation import (
    check_integer,
    check_m,
    check_py_parameters,
)



# --------------------------------------------------------------------- release spec
@dataclass(frozen=True)
class ReleaseSpec:
    """A PYPP release: what accounting needs to know about it.

    Parameters
    ----------
    sigma, theta : float
        PY parameters (docs/mathematics.md §2).
    m : int ≥ 1
        Released synthetic sample size.
    n : int ≥ 1
        Size of the confidential dataset.
    mechanism : str
        Always ``"pypp"`` here; baselines describe themselves in :mod:`core.mechanisms`.
    """

    sigma: float
    theta: float
    m: int
    n: int
    mechanism: str = field(default="pypp")

    def __post_init__(self):
        check_py_parameters(self.sigma, self.theta)
        check_m(self.m)
        check_integer("n", self.n, minimum=1)

    @property
    def regime(self) -> str:
        if self.sigma == 0:
            return "dirichlet-process"
        return "pitman-yor" if self.sigma > 0 else "dirichlet-multinomial"

    @property
    def categories(self) -> int | None:
        """``z`` for σ < 0, else ``None``."""
        return check_py_parameters(self.sigma, self.theta)[2]
