"""Downstream inference under the path of the API contract (``core.inference.discovery_probability``).

The computations live in :mod:`core.evaluation` (:mod:`~core.evaluation.posterior`,
:mod:`~core.evaluation.discovery`); this module keeps the contract's import path for
programs that call them (docs/mathematics.md §6 and §7).
"""

from .evaluation import (
    DEFAULT_QUANTILE_LEVELS,
    MAX_POSTERIOR_DRAWS,
    MAX_STICK_ENTRIES,
    PosteriorFunctionals,
    RepeatedReleaseResult,
    confidential_discovery_probability,
    discovery_probability,
    dp_posterior_functionals,
    empirical_functionals,
    functional_names,
    measure_functionals,
    repeated_release_experiment,
    stick_breaking_dp,
)

__all__ = [
    "DEFAULT_QUANTILE_LEVELS", "MAX_POSTERIOR_DRAWS", "MAX_STICK_ENTRIES", "PosteriorFunctionals",
    "RepeatedReleaseResult", "confidential_discovery_probability", "discovery_probability",
    "dp_posterior_functionals", "empirical_functionals", "functional_names", "measure_functionals",
    "repeated_release_experiment", "stick_breaking_dp",
]
