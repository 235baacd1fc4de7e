"""Planning a release from the confidential data (curator-only; docs/mathematics.md §3.4–3.6).

* :mod:`.advisor` — the singleton-aware coarsening advisor (:func:`advise`, :func:`frontier`);
* :mod:`.planner` — the release planner (:func:`plan_release`, :func:`predict_utility`).

Both read the confidential data, so following their advice is a data-dependent choice that
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
    default_transforms,
    frontier,
    transform_cost,
)
from .planner import GuaranteeTarget, Plan, PlanOption, UtilityTarget, plan_release, predict_utility

__all__ = [
    "MAX_CANDIDATES", "SELECTION_CAVEAT", "AdvisorResult", "CoarseningCandidate", "GuaranteeTarget", "Plan",
    "PlanOption", "UtilityTarget", "advise", "apply_candidate", "candidate_grid", "default_transforms",
    "frontier", "plan_release", "predict_utility", "transform_cost",
]
