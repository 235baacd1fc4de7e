"""Evaluating a release: utility metrics, downstream inference and the experiments
(docs/mathematics.md §5–6, docs/quality.md, docs/audit.md).

The package exports the metrics and the inference; the heavier evaluations are modules:

* :mod:`.columns` — the data as the comparison sees them: numeric and categorical columns on the unit box;
* :mod:`.distances` — Wasserstein distances (POT): exact in 1-D, exact or sliced on rows; total variation;
* :mod:`.density` — kernel density estimates and their L2 distance (thesis §7);
* :mod:`.summaries` — per-column summaries: mean, SD, quartiles, W1, KDE-L2;
* :mod:`.posterior` — Dirichlet-process posterior functionals of a release (paper §4.1);
* :mod:`.discovery` — the probability that a release shows a value the data do not have;
* :mod:`.quality` — the release quality report (marginals, pairs, correlations);
* :mod:`.compare` — the comparison of mechanisms at the same privacy level;
* :mod:`.informativity` — the informativity experiment (paper §4.2);
* :mod:`.simulation` — the simulated data of the paper's experiments;
* :mod:`.audit` — empirical privacy audits and the disclosure risk;
* :mod:`.yardsticks` — the field's yardsticks: SDNist's own (exported here) and the project's.
"""

from .columns import OTHER_CATEGORY, ComparisonColumn, ComparisonTable, comparison_table
from .density import (
    MAX_KDE_GRID,
    binned_kde_runs,
    kde_curves,
    kde_grid,
    kde_l2,
    kde_l2_runs,
    kde_on_grid,
    scott_bandwidth,
)
from .discovery import confidential_discovery_probability, discovery_probability
from .distances import (
    MAX_COST_BYTES,
    MAX_PROJECTIONS,
    MAX_SLICED_WORK,
    W1Distance,
    batched_wasserstein1,
    joint_w1_runs,
    random_directions,
    signed_wasserstein1,
    sliced_wasserstein1_runs,
    total_variation_runs,
    wasserstein1,
    wasserstein1_runs,
)
from .posterior import (
    DEFAULT_QUANTILE_LEVELS,
    MAX_POSTERIOR_DRAWS,
    MAX_STICK_ENTRIES,
    PosteriorFunctionals,
    RepeatedReleaseResult,
    coverage_notes,
    dp_posterior_functionals,
    dp_posterior_shares,
    empirical_functionals,
    empirical_shares,
    functional_names,
    measure_functionals,
    repeated_release_experiment,
    repeated_share_experiment,
    share_names,
    stick_breaking_dp,
)
from .summaries import column_summary, repeated_quantiles, summary_runs, summary_table
from .yardsticks import (
    SDNistApparentMatch,
    sdnist_apparent_match,
    sdnist_bin,
    sdnist_k_marginal,
    sdnist_marginal_pairs,
    sdnist_pmse,
    sdnist_unique_exact_match,
)

__all__ = [
    "ComparisonColumn", "ComparisonTable", "OTHER_CATEGORY", "comparison_table", "total_variation_runs",
    "DEFAULT_QUANTILE_LEVELS", "MAX_COST_BYTES", "MAX_KDE_GRID", "MAX_POSTERIOR_DRAWS", "MAX_PROJECTIONS",
    "MAX_SLICED_WORK", "MAX_STICK_ENTRIES", "PosteriorFunctionals", "RepeatedReleaseResult", "SDNistApparentMatch",
    "W1Distance",
    "batched_wasserstein1", "binned_kde_runs", "column_summary", "confidential_discovery_probability", "coverage_notes",
    "discovery_probability", "dp_posterior_functionals", "dp_posterior_shares", "empirical_functionals",
    "empirical_shares", "functional_names",
    "joint_w1_runs", "kde_curves", "kde_grid", "kde_l2", "kde_l2_runs", "kde_on_grid", "measure_functionals",
    "random_directions", "repeated_quantiles", "repeated_release_experiment", "repeated_share_experiment",
    "scott_bandwidth", "sdnist_apparent_match", "sdnist_bin", "sdnist_k_marginal", "sdnist_marginal_pairs",
    "sdnist_pmse", "sdnist_unique_exact_match", "share_names",
    "signed_wasserstein1", "sliced_wasserstein1_runs", "stick_breaking_dp", "summary_runs", "summary_table",
    "wasserstein1", "wasserstein1_runs",
]
