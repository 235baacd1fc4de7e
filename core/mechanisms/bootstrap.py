"""The non-private bootstrap: m draws with replacement from the data (a reference, no privacy).
"""
from __future__ import annotations

import math

import numpy as np

from ..privacy import Guarantee
from .base import Knob, Mechanism, check_release_arguments


class Bootstrap(Mechanism):
    """Non-private bootstrap: ``m`` draws with replacement from the confidential data.

    The utility ceiling of the comparison (docs/mathematics.md §4); it releases confidential records
    verbatim and has **no privacy**.
    """

    name = "bootstrap"
    label = "Bootstrap (no privacy)"

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee("none", "none", math.inf, 1.0, "no privacy: resamples the confidential records")

    def knobs(self, n, m, d: int = 1):
        return [Knob("m", float(m), "utility ceiling: m draws with replacement from the data, no privacy")]

    def release_runs(self, data, m, runs, rng, *, counts=None) -> np.ndarray:
        x, counts, m, runs, rng, _ = check_release_arguments(data, m, runs, rng, counts)
        if counts is None:
            return x[rng.integers(0, x.shape[0], size=(runs, m))]
        # Record i of the repeated rows is row j of the table for cum[j-1] <= i < cum[j]: the
        # same uniform record indices give exactly numpy.repeat(x, counts, axis=0)[index], at
        # cost O(k + runs·m·log k) instead of O(n).
        cumulative = np.cumsum(counts)
        index = rng.integers(0, int(cumulative[-1]), size=(runs, m))
        return x[np.searchsorted(cumulative, index, side="right")]
