"""Privacy accounting: what a release guarantees, in every regime (docs/mathematics.md §3).

Neighbouring datasets differ by the replacement of one record (``n`` fixed). For a
confidential dataset ``x`` with multiplicities ``n_1..n_k`` the instance-level
probabilistic-DP curve is

.. math::

    \\delta_x(\\varepsilon) = \\max_{y\\sim x}
        P_{Z\\sim Q(\\cdot\\mid x)}\\Big(\\tfrac{q_x(Z)}{q_y(Z)} > e^{\\varepsilon}
        \\ \\text{or}\\ Z \\text{ singular for } y\\Big),

(Menicucci, Beraha, Favaro, Lazzarini 2026, Theorem 1). The modules:

* :mod:`.dirichlet_process` and :mod:`.global_accounting` — σ = 0, exact closed forms
  (§3.1): :func:`tight_instance_delta`, :func:`global_delta` (Theorem 2, the exact maximum
  over multiplicities: the paper's probabilistic curve, which no verdict reads), :func:`global_delta_simple_bound`, :func:`singleton_limit`,
  :func:`max_synthetic_size`, :func:`max_instance_synthetic_size`,
  :func:`synthetic_size_curve` and the exact verdict :func:`global_delta_at_most`;
* :mod:`.monte_carlo` — σ ∈ (0, 1), Monte Carlo with a Clopper–Pearson upper bound (§3.2): one
  set of replicates (:func:`monte_carlo_replicates`) serves every ε and the old-values-only release;
* :mod:`.dirichlet_multinomial` — σ < 0 over ``z`` public categories (§3.3), with the exact
  pure-ε conditions;
* :mod:`.regimes` — the three regimes as one type with hooks (:class:`Regime`,
  :func:`regime_of`): instance δ, exact verdicts, report statements, public guarantee,
  largest m;
* :mod:`.guarantee` — :class:`Guarantee`, the one type of every privacy statement;
* :mod:`.spec` — :class:`ReleaseSpec`, the frozen description of a release;
* :mod:`.verdict` — the four verdicts (pure, strong, weak, missed; strong needs n·δ_k ≤ 0.01),
  the exact global profile of σ = 0, 1 − (1 − T₁)^k at every ε ≥ 0 (docs/audit.md §1.3), the
  verbatim risk and the attack terms of a release's composed global guarantee (docs/verdicts.md);
* :mod:`.copying` — the public scale of copying of a σ = 0 release: each row is a confidential
  record with probability n/(n + θ) (:func:`copy_probability`, :func:`copy_scale`,
  docs/verdicts.md §2.1), and the largest strong m (:func:`largest_strong_m`);
* :mod:`.instance` — :func:`instance_delta` and :func:`instance_delta_at_most` for every regime;
* :mod:`.old_values` — the old-values-only PYPP (thesis Algorithm 3);
* :mod:`.calibration` — the noise of the baselines and the Bayesian family (§4, §9);
* :mod:`.crp` — table counts of the Chinese restaurant (the law of new values);
* :mod:`.betabinom` — beta-binomial tails with a proven error bound (docs/accuracy.md);
* :mod:`.pld` — privacy-loss distributions and their composition (dp_accounting; import it
  as ``core.privacy.pld``, it is not loaded with the package).

**Rounding to the safe side** (docs/accuracy.md). Every tail comes with a proven relative
error bound; a returned δ is the computed value times (1 + that bound), so it is never below
the exact value, and a positive exact δ is never returned as 0. Every yes/no — meets a
target, largest admissible m, pure ε-DP — is exact: decided in floating point outside the
error band, by an mpmath recheck inside it.
"""

from .calibration import (
    DIRICHLET_ALPHA_RANGE,
    MAX_CELLS,
    SENSITIVITY_RANGE,
    dirichlet_multinomial_alpha,
    dirichlet_sampling_alpha,
    dirichlet_sampling_epsilon,
    gaussian_delta,
    gaussian_sigma,
    smoothed_histogram_epsilon,
    smoothed_histogram_lambda,
    truncated_dirichlet_epsilon,
    truncated_dirichlet_p_min,
)
from .common import MAX_ACCOUNTING_M, beta_binomial_log_tail
from .copying import (
    CopyScale,
    copy_probability,
    copy_scale,
    expected_copied_rows,
    largest_strong_m,
    no_new_row_probability,
    old_value_probability,
)
from .crp import MAX_CRP_TABLES, crp_table_counts, crp_tables
from .dirichlet_multinomial import dirichlet_multinomial_is_pure, dirichlet_multinomial_pure_epsilon
from .dirichlet_process import tight_instance_delta
from .global_accounting import (
    global_delta,
    global_delta_at_most,
    global_delta_simple_bound,
    max_instance_synthetic_size,
    max_synthetic_size,
    singleton_limit,
    synthetic_size_curve,
)
from .instance import instance_delta, instance_delta_at_most
from .monte_carlo import MonteCarloDelta, MonteCarloReplicates, monte_carlo_delta, monte_carlo_replicates, simulate_replicates
from .old_values import expected_release_size, old_values_counts, old_values_delta, old_values_monte_carlo
from .guarantee import GUARANTEE_KINDS, GUARANTEE_SCOPES, Guarantee
from .regimes import DIRICHLET_MULTINOMIAL, DIRICHLET_PROCESS, PITMAN_YOR, REGIMES, Regime, regime_of, regime_of_key
from .spec import ReleaseSpec
from .verdict import ATTACK_FPRS, RECORDS_EXPOSED_WORDS, VERDICT_WORDS, VERDICTS, AttackTerms

__all__ = [
    "DIRICHLET_MULTINOMIAL", "DIRICHLET_PROCESS", "GUARANTEE_KINDS", "GUARANTEE_SCOPES", "Guarantee",
    "PITMAN_YOR", "REGIMES", "Regime", "regime_of", "regime_of_key",
    "ATTACK_FPRS", "RECORDS_EXPOSED_WORDS", "VERDICTS", "VERDICT_WORDS", "AttackTerms",
    "DIRICHLET_ALPHA_RANGE", "MAX_ACCOUNTING_M", "MAX_CELLS", "MAX_CRP_TABLES", "SENSITIVITY_RANGE", "MonteCarloDelta",
    "MonteCarloReplicates",
    "CopyScale", "copy_probability", "copy_scale", "expected_copied_rows", "largest_strong_m",
    "no_new_row_probability", "old_value_probability",
    "ReleaseSpec", "beta_binomial_log_tail", "crp_table_counts", "crp_tables", "dirichlet_multinomial_alpha",
    "dirichlet_multinomial_is_pure", "dirichlet_multinomial_pure_epsilon", "dirichlet_sampling_alpha",
    "dirichlet_sampling_epsilon", "expected_release_size", "gaussian_delta", "gaussian_sigma", "global_delta",
    "global_delta_at_most", "global_delta_simple_bound", "instance_delta", "instance_delta_at_most",
    "max_instance_synthetic_size", "max_synthetic_size", "monte_carlo_delta", "monte_carlo_replicates", "old_values_counts",
    "old_values_delta", "old_values_monte_carlo", "simulate_replicates", "singleton_limit", "smoothed_histogram_epsilon",
    "smoothed_histogram_lambda", "synthetic_size_curve", "tight_instance_delta", "truncated_dirichlet_epsilon",
    "truncated_dirichlet_p_min",
]
