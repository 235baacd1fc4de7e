"""Utility metrics under the path of the API contract (``core.utility.wasserstein1``).

The metrics live in :mod:`core.evaluation` (:mod:`~core.evaluation.distances`,
:mod:`~core.evaluation.density`, :mod:`~core.evaluation.summaries`); this module keeps the
contract's import path for programs that call them (docs/mathematics.md §5 and §7).
"""

from .evaluation import (
    MAX_COST_BYTES,
    MAX_KDE_GRID,
    MAX_PROJECTIONS,
    MAX_SLICED_WORK,
    W1Distance,
    batched_wasserstein1,
    binned_kde_runs,
    column_summary,
    joint_w1_runs,
    kde_grid,
    kde_l2,
    kde_l2_runs,
    kde_on_grid,
    random_directions,
    repeated_quantiles,
    scott_bandwidth,
    signed_wasserstein1,
    sliced_wasserstein1_runs,
    summary_runs,
    summary_table,
    wasserstein1,
    wasserstein1_runs,
)

__all__ = [
    "MAX_COST_BYTES", "MAX_KDE_GRID", "MAX_PROJECTIONS", "MAX_SLICED_WORK", "W1Distance", "batched_wasserstein1",
    "binned_kde_runs", "column_summary", "joint_w1_runs", "kde_grid", "kde_l2", "kde_l2_runs", "kde_on_grid",
    "random_directions", "repeated_quantiles", "scott_bandwidth", "signed_wasserstein1", "sliced_wasserstein1_runs",
    "summary_runs", "summary_table", "wasserstein1", "wasserstein1_runs",
]
