"""Planning a release from the confidential data (curator-only; docs/mathematics.md §3.4–3.6).

* :mod:`.advisor` — the singleton-aware coarsening advisor (:func:`advise`, :func:`frontier`);
* :mod:`.planner` — the release planner (:func:`plan_release`, :func:`predict_utility`), with the
  pure ε-DP options over public grids (:class:`PureSearch`, :func:`predict_pure_utility`,
  :func:`pure_utility_cost`);
* :mod:`.candidates` — the candidates side by side (PYPP's best σ = 0 and pure releases, AIM,
  MST: :func:`candidates_side_by_side`, :func:`peer_candidates`) and which to release
  (:func:`recommend`, docs/verdicts.md §7).

All read the confidential data, so following their advice is a data-dependent choice that
no privacy guarantee covers (:data:`SELECTION_CAVEAT`).
"""

from .advisor import (
    MAX_CANDIDATES,
    SELECTION_CAVEAT,
    AdvisorResult,
    CoarseningCandidate,
    advise,
    apply_candidate,
    candidate_grid,
    default_grid_steps,
    default_transforms,
    frontier,
    transform_cost,
)
from .candidates import (
    PEER_CANDIDATES,
    Candidate,
    Recommendation,
    candidates_side_by_side,
    peer_candidates,
    recommend,
    size_in_words,
)
from .planner import (
    DEFAULT_ALPHAS,
    GuaranteeTarget,
    Plan,
    PlanOption,
    PureSearch,
    UtilityTarget,
    plan_release,
    predict_pure_utility,
    predict_utility,
    public_domain_gaps,
    pure_utility_cost,
)

__all__ = [
    "PEER_CANDIDATES", "Candidate", "Recommendation", "candidates_side_by_side", "peer_candidates", "recommend",
    "size_in_words",
    "DEFAULT_ALPHAS", "MAX_CANDIDATES", "SELECTION_CAVEAT", "AdvisorResult", "CoarseningCandidate", "GuaranteeTarget",
    "Plan", "PlanOption", "PureSearch", "UtilityTarget", "advise", "apply_candidate", "candidate_grid",
    "default_grid_steps", "default_transforms", "frontier", "plan_release", "predict_pure_utility",
    "predict_utility", "public_domain_gaps", "pure_utility_cost", "transform_cost",
]
