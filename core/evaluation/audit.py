"""Empirical privacy audit and disclosure risk of a release (docs/audit.md §5–§6).

**Audit.** The mechanism is run many times on the confidential data ``x`` and on its
worst neighbour ``y`` (vectorised); two attacks try to tell them apart:

* the **likelihood-ratio** attack: decide "x" when the privacy loss
  :math:`\\log q_x(Z)/q_y(Z)` is at least a threshold (the Neyman–Pearson test, the best
  possible);
* a **black-box** attack a real adversary could run: decide "x" when the release
  contains the target's value (for the histograms: when at least ``t`` released points
  fall in the target's cell).

Every test satisfies ``TPR ≤ e^ε·FPR + δ`` under (ε, δ)-DP (TPR = P_x(decide x),
FPR = P_y(decide x)), so one-sided Clopper–Pearson bounds ``TPR_lo``, ``FPR_hi`` certify

.. math:: \\varepsilon \\ge \\hat\\varepsilon_{\\mathrm{lb}} = \\log\\frac{TPR_{lo} - \\delta}{FPR_{hi}}

with the stated confidence. The threshold is chosen on one half of the simulations and
the bound computed on the other half, so choosing it costs no confidence. If the larger
of the two certified bounds exceeds the stated ε, the stated guarantee is contradicted
(:attr:`AuditResult.contradicts_stated`) — a bug detector. Taking the larger of two is
testing twice, so each attack is certified at confidence :math:`1-(1-c)/2` and each of
its two Clopper–Pearson bounds at :math:`1-(1-c)/4` (Bonferroni): a correct mechanism
raises a false alarm with probability at most :math:`1-c` (docs/audit.md §5.3).

**Disclosure risk.** The counts a custodian asks first (:func:`exact_match_counts`) and
the three attacks of Anonymeter (Giomi et al. 2023) — singling out, linkability,
inference — each run against the records used for the release and against a held-out
control set, with the residual risk ``(r_train − r_control)/(1 − r_control)``
(:func:`disclosure_risk`). Anonymeter itself pins ``numpy < 1.27``, which this project's
numpy 2 environment cannot satisfy; the attacks are re-implemented here following its
paper and documentation (docs/audit.md §6).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pandas as pd
from scipy import stats

from ..mechanisms import GaussianHistogram, LaplaceHistogram, histogram_counts
from ..privacy import crp_tables, regime_of
from ..validation import (
    check_delta,
    check_integer,
    check_multiplicities,
    check_positive,
    check_py_parameters,
    check_real,
    check_release_size,
    check_rng,
)

__all__ = [
    "AttackResult",
    "AuditResult",
    "RiskEstimate",
    "AUDITABLE_WORDS",
    "audit_histogram",
    "audit_pypp",
    "auditable",
    "clopper_pearson",
    "disclosure_risk",
    "attack_confidence",
    "evaluate_attack",
    "evaluate_attacks",
    "exact_match_counts",
    "holdout_split",
    "pypp_audit_samples",
]

#: Largest number of simulated releases per side (memory ~ 40 bytes each per attack).
MAX_SIMULATIONS = 2_000_000
Progress = Callable[[float, str], None]


# ----------------------------------------------------------------------------- statistics
def clopper_pearson(successes, trials, confidence: float = 0.95, *, side: str = "two-sided"):
    """Clopper–Pearson interval of a binomial proportion (exact, conservative).

    Parameters
    ----------
    successes, trials : array_like of int, 0 ≤ successes ≤ trials, trials ≥ 1
    confidence : float in (0, 1)
    side : {"two-sided", "lower", "upper"}
        One-sided bounds put all of ``1 − confidence`` on one side.

    Returns
    -------
    (lower, upper) : ndarrays (``side="lower"``: upper = 1; ``"upper"``: lower = 0)
    """
    k = np.asarray(successes, dtype=float)
    n = np.asarray(trials, dtype=float)
    if np.any(n < 1) or np.any(k < 0) or np.any(k > n):
        raise ValueError("successes must be in [0, trials] and trials >= 1")
    confidence = check_real("confidence", confidence, low=0.0, high=1.0, low_open=True, high_open=True)
    tail = (1 - confidence) / (2 if side == "two-sided" else 1)
    if side not in ("two-sided", "lower", "upper"):
        raise ValueError(f"side must be 'two-sided', 'lower' or 'upper', got {side!r}")
    with np.errstate(invalid="ignore"):
        lo = np.where(k > 0, stats.beta.ppf(tail, k, n - k + 1), 0.0)
        hi = np.where(k < n, stats.beta.ppf(1 - tail, k + 1, n - k), 1.0)
    if side == "lower":
        hi = np.ones_like(hi)
    elif side == "upper":
        lo = np.zeros_like(lo)
    # beta.ppf is accurate to ~1e-12 relative: widen by 1e-10 so the interval stays exact-or-wider
    return np.maximum(0.0, lo * (1 - 1e-10)), np.minimum(1.0, hi * (1 + 1e-10))


@dataclass(frozen=True)
class AttackResult:
    """One attack of an audit: its operating point and what it certifies.

    Attributes
    ----------
    name : str
    threshold : float
        Decide "x" when the attack's score is ≥ this (chosen on the selection half).
    tpr, fpr : float
        On the evaluation half: P_x(decide x), P_y(decide x).
    tpr_interval, fpr_interval : (float, float)
        Two-sided Clopper–Pearson intervals at the attack's confidence (for the plot).
    eps_lower : float
        ε the attack certifies at the audit's δ with the attack's confidence:
        ``log((TPR_lo − δ)/FPR_hi)`` from one-sided bounds (Bonferroni over the two); 0
        when nothing is certified. In an audit the attack's confidence is
        :math:`1-(1-c)/2` for the audit's confidence c (:func:`evaluate_attacks`).
    roc_fpr, roc_tpr : ndarray
        The attack's ROC on the evaluation half (for the plot).
    n_eval : int
        Simulations per side in the evaluation half.
    """

    name: str
    threshold: float
    tpr: float
    fpr: float
    tpr_interval: tuple
    fpr_interval: tuple
    eps_lower: float
    roc_fpr: np.ndarray = field(repr=False)
    roc_tpr: np.ndarray = field(repr=False)
    n_eval: int = 0


def _eps_lower(tp, fp, n, delta, confidence):
    """Certified ε lower bound from counts: one-sided CP at (1 − (1 − c)/2) each.

    Both bounds hold together with probability ≥ c (Bonferroni), and then
    :math:`\\log((TPR_{lo}-\\delta)/FPR_{hi}) \\le \\log((TPR-\\delta)/FPR) \\le \\varepsilon`.
    """
    level = 1 - (1 - confidence) / 2
    tpr_lo, _ = clopper_pearson(tp, n, level, side="lower")
    _, fpr_hi = clopper_pearson(fp, n, level, side="upper")
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log((tpr_lo - delta) / fpr_hi)
    return np.where(tpr_lo > delta, np.maximum(out, 0.0), 0.0)


def _thresholds(scores: np.ndarray, cap: int = 256) -> np.ndarray:
    finite = np.unique(scores)
    if finite.size > cap:
        finite = np.unique(np.quantile(finite, np.linspace(0, 1, cap), method="nearest"))
    return finite


def evaluate_attack(name: str, score_x, score_y, delta: float, *, confidence: float = 0.95) -> AttackResult:
    """Operating point and certified ε of an attack from its scores on x and on y.

    The attack decides "x" when ``score ≥ t``. The first half of each sample chooses the
    threshold ``t`` maximising the certified bound; the second half, independent of that
    choice, gives (FPR, TPR), their Clopper–Pearson intervals and the certified
    :math:`\\log((TPR_{lo} − δ)/FPR_{hi})` (docs/audit.md §5.3).

    Parameters
    ----------
    name : str
    score_x, score_y : array_like of float, shape (N,), N ≥ 20
        Scores of releases from x and from y (±inf allowed).
    delta : float in [0, 1)
    confidence : float in (0, 1)
    """
    sx = np.asarray(score_x, dtype=float)
    sy = np.asarray(score_y, dtype=float)
    if sx.ndim != 1 or sy.shape != sx.shape or sx.size < 20 or np.isnan(sx).any() or np.isnan(sy).any():
        raise ValueError("score_x and score_y must be 1-D arrays of the same length >= 20 without NaN")
    delta = float(delta)
    if not 0.0 <= delta < 1.0:
        raise ValueError(f"delta must be in [0, 1), got {delta!r}")
    half = sx.size // 2
    sel_x, sel_y = np.sort(sx[:half]), np.sort(sy[:half])
    ev_x, ev_y = np.sort(sx[half:]), np.sort(sy[half:])
    n_sel, n_ev = sel_x.size, ev_x.size
    cand = _thresholds(np.concatenate([sel_x, sel_y]))
    tp = n_sel - np.searchsorted(sel_x, cand, side="left")
    fp = n_sel - np.searchsorted(sel_y, cand, side="left")
    best = int(np.argmax(_eps_lower(tp, fp, n_sel, delta, confidence) + 1e-12 * (tp - fp) / n_sel))
    t = float(cand[best])
    tp_e = int(n_ev - np.searchsorted(ev_x, t, side="left"))
    fp_e = int(n_ev - np.searchsorted(ev_y, t, side="left"))
    tpr_ci = clopper_pearson(tp_e, n_ev, confidence)
    fpr_ci = clopper_pearson(fp_e, n_ev, confidence)
    eps_lb = float(_eps_lower(tp_e, fp_e, n_ev, delta, confidence))
    roc_t = _thresholds(np.concatenate([ev_x, ev_y]), cap=200)
    roc_tpr = (n_ev - np.searchsorted(ev_x, roc_t, side="left")) / n_ev
    roc_fpr = (n_ev - np.searchsorted(ev_y, roc_t, side="left")) / n_ev
    return AttackResult(name, t, tp_e / n_ev, fp_e / n_ev, (float(tpr_ci[0]), float(tpr_ci[1])),
                        (float(fpr_ci[0]), float(fpr_ci[1])), eps_lb,
                        np.concatenate([[1.0], roc_fpr, [0.0]]), np.concatenate([[1.0], roc_tpr, [0.0]]), n_ev)


def attack_confidence(confidence: float, attacks: int) -> float:
    """Confidence of each of ``attacks`` certificates so that all hold together with ``confidence``.

    Bonferroni: if each certificate fails with probability at most
    :math:`(1-c)/J`, then some certificate fails — in particular the largest certified ε
    overstates the truth — with probability at most :math:`1-c` (docs/audit.md §5.3).

    Parameters
    ----------
    confidence : float in (0, 1)
        The family-wise confidence c.
    attacks : int ≥ 1
        The number J of attacks whose largest bound is reported.

    Returns
    -------
    float :math:`1-(1-c)/J`
    """
    confidence = check_real("confidence", confidence, low=0.0, high=1.0, low_open=True, high_open=True)
    attacks = check_integer("attacks", attacks, minimum=1)
    return 1.0 - (1.0 - confidence) / attacks


def evaluate_attacks(scores: dict, delta: float, *, confidence: float = 0.95) -> tuple:
    """Evaluate several attacks of one audit so that their largest certified ε holds with ``confidence``.

    The audit reports :math:`\\max_j \\hat\\varepsilon_{\\mathrm{lb},j}` and flags a
    contradiction when it exceeds the stated ε. Each bound holds with its own confidence,
    and the maximum is wrong as soon as one of them is, so each of the J attacks is
    certified at :func:`attack_confidence` :math:`1-(1-c)/J` (and each of its two
    Clopper–Pearson bounds at :math:`1-(1-c)/(2J)`): by the union bound the false-alarm
    probability of a correct mechanism is at most :math:`1-c`.

    Parameters
    ----------
    scores : dict name → (score_x, score_y)
        In the order the attacks are reported; see :func:`evaluate_attack`.
    delta : float in [0, 1)
    confidence : float in (0, 1)
        Family-wise confidence c of the audit.

    Returns
    -------
    tuple of AttackResult
    """
    if not scores:
        raise ValueError("scores must name at least one attack")
    level = attack_confidence(confidence, len(scores))
    return tuple(evaluate_attack(name, sx, sy, delta, confidence=level) for name, (sx, sy) in scores.items())


@dataclass(frozen=True)
class AuditResult:
    """An empirical audit of one mechanism at a stated (ε, δ).

    Attributes
    ----------
    mechanism : str
    target : str
        The neighbour pair simulated, in words.
    stated_eps, stated_delta : float
        The guarantee under test.
    theory_eps : float or None
        The smallest ε with δ(ε) ≤ stated δ from the mechanism's exact PLD, when known:
        no correct audit certifies more.
    attacks : tuple of AttackResult
    n_simulations : int
        Releases simulated per side.
    confidence : float
        Family-wise: :attr:`certified_eps` (the largest bound of all attacks) holds with
        this confidence; each attack is certified at :attr:`attack_confidence`.
    """

    mechanism: str
    target: str
    stated_eps: float
    stated_delta: float
    theory_eps: float | None
    attacks: tuple
    n_simulations: int
    confidence: float

    @property
    def attack_confidence(self) -> float:
        """Confidence of each attack's certificate: :math:`1-(1-c)/J` for J attacks (Bonferroni)."""
        return attack_confidence(self.confidence, len(self.attacks))

    @property
    def certified_eps(self) -> float:
        """The largest ε lower bound any attack certifies (valid with :attr:`confidence`)."""
        return max(a.eps_lower for a in self.attacks)

    @property
    def contradicts_stated(self) -> bool:
        """The audit certifies more than the stated ε: the stated guarantee is false, or one
        of the audit's bounds failed — for a correct mechanism a false alarm, with probability
        at most 1 − confidence (a bound; the simulated rate is far lower, docs/audit.md §5.3)."""
        return self.certified_eps > self.stated_eps

    @property
    def contradicts_theory(self) -> bool:
        """The audit certifies more than the exact PLD allows (a bug detector)."""
        return self.theory_eps is not None and self.certified_eps > self.theory_eps


def _check_simulations(n_sim) -> int:
    return check_integer("n_simulations", n_sim, minimum=100, maximum=MAX_SIMULATIONS)


def _dirichlet(alpha: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
    g = rng.standard_gamma(np.broadcast_to(alpha, (size, alpha.size)))
    return g / g.sum(axis=1, keepdims=True)


# ----------------------------------------------------------------------------- PYPP
def pypp_audit_samples(multiplicities, sigma, theta, m, n_simulations, rng, *, r=None,
                       progress: Progress | None = None) -> dict:
    """Scores of the two attacks on PYPP releases from x and from its worst neighbour y.

    ``y`` replaces one record of a value ``u`` with ``r`` copies (default: the smallest
    multiplicity of x, a singleton if there is one) by a new value ``v``. The attacks
    read three statistics of a release: ``S_u`` (copies of u), ``S_v`` (copies of v) and
    ``K`` (distinct new values; σ > 0 only). By the aggregation property of the
    Dirichlet–multinomial their joint law under each dataset is that of the grouped
    counts (u, v, other observed values, new values) — the same law as in the full
    release (docs/audit.md §5.1), drawn here for all releases at once; K from the
    Chinese restaurant of :func:`core.privacy.crp_tables`.

    The likelihood-ratio score is the x-side privacy loss (docs/mathematics.md §3)
    :math:`\\log\\frac{r-1+S_u-\\sigma}{r-1-\\sigma} + \\log\\frac{\\theta+k\\sigma}{\\theta+(k+K)\\sigma}`
    (r ≥ 2), +∞ if r = 1 and S_u ≥ 1, 0 if r = 1 and S_u = 0, and −∞ whenever S_v ≥ 1
    (impossible under x). The black-box score is ``S_u``: "the release contains the
    target's value u (at least t times)".

    Returns
    -------
    dict with ``"likelihood ratio"`` and ``"black box"``: each ``(score_x, score_y)``;
    ``"r"``: the multiplicity used.
    """
    counts = check_multiplicities(multiplicities)
    sigma, theta, z = check_py_parameters(sigma, theta, counts.size)
    if z is not None:
        raise ValueError("sigma must be in [0, 1) for the audit (the σ < 0 family is audited as the "
                         "Dirichlet–multinomial baseline)")
    m = check_release_size(m)
    n_sim = _check_simulations(n_simulations)
    rng = check_rng(rng)
    n, k = int(counts.sum()), counts.size
    values = np.unique(counts)
    r = int(values[0]) if r is None else check_integer("r", r, minimum=1)
    if r not in values:
        raise ValueError(f"r = {r} is not a multiplicity of the data; choose one of {values[:10].tolist()}")
    new_x = theta + k * sigma
    others_x = n - r - (k - 1) * sigma
    k_y = k if r == 1 else k + 1
    new_y = theta + k_y * sigma
    others_y = n - r - (k - 1) * sigma          # the other observed values, unchanged
    u_y = r - 1 - sigma                           # only when r ≥ 2
    out_x = np.empty((3, n_sim))
    out_y = np.empty((3, n_sim))
    block = 50_000
    for lo in range(0, n_sim, block):
        size = min(block, n_sim - lo)
        # x: (u, other old, new)
        p = _dirichlet(np.array([r - sigma, others_x, new_x]), size, rng)
        c = rng.multinomial(m, p)
        out_x[0, lo:lo + size] = c[:, 0]
        out_x[1, lo:lo + size] = 0
        out_x[2, lo:lo + size] = crp_tables(c[:, 2], sigma, new_x, rng) if sigma > 0 else 0
        # y: (u, v, other old, new); for r = 1 the value u is gone from y
        if r >= 2:
            c = rng.multinomial(m, _dirichlet(np.array([u_y, 1 - sigma, others_y, new_y]), size, rng))
        else:
            c = rng.multinomial(m, _dirichlet(np.array([1 - sigma, others_y, new_y]), size, rng))
            c = np.column_stack([np.zeros(size, dtype=c.dtype), c])
        out_y[0, lo:lo + size] = c[:, 0]
        out_y[1, lo:lo + size] = c[:, 1]
        # the x-side loss counts v among the new values only where it is absent (else −∞)
        out_y[2, lo:lo + size] = crp_tables(c[:, 3], sigma, new_y, rng) if sigma > 0 else 0
        if progress is not None:
            progress(min(1.0, (lo + size) / n_sim), f"Simulated {lo + size:,} of {n_sim:,} releases per side")

    def loss(su, sv, kk):
        with np.errstate(divide="ignore"):
            if r == 1:   # case (d): singular if S_u ≥ 1, else the ratio is 1
                out = np.where(su >= 1, np.inf, 0.0)
            else:
                out = np.log(r - 1 + su - sigma) - math.log(r - 1 - sigma)
                if sigma > 0:
                    out = out + math.log(new_x) - np.log(theta + (k + kk) * sigma)
        return np.where(sv >= 1, -np.inf, out)

    return {"likelihood ratio": (loss(*out_x), loss(*out_y)),
            "black box": (out_x[0].copy(), out_y[0].copy()), "r": r}


def audit_pypp(multiplicities, sigma, theta, m, eps, delta, *, n_simulations: int = 100_000,
               rng: np.random.Generator, confidence: float = 0.95, r=None,
               progress: Progress | None = None) -> AuditResult:
    """Empirical audit of the PYPP release at x against a stated (ε, δ) (docs/audit.md §5).

    Parameters
    ----------
    multiplicities : array_like of int ≥ 1
    sigma : float in [0, 1)
    theta : float
    m : int ≥ 1
    eps : float > 0
        The stated ε.
    delta : float in (0, 1)
        The stated δ at that ε (e.g. :func:`core.privacy.instance_delta`).
    n_simulations : int in [100, 2·10^6]
        Releases simulated on each of x and y.
    rng : numpy.random.Generator
    confidence : float in (0, 1)
        Family-wise: the larger of the two attacks' bounds holds with this confidence
        (each attack at :math:`1-(1-c)/2`, :func:`evaluate_attacks`).
    r : int, optional
        Multiplicity of the target value (default: the smallest in x).

    Returns
    -------
    AuditResult
        ``theory_eps`` is the exact instance-level ε at δ from :mod:`core.privacy.pld` (σ = 0);
        ``None`` for σ > 0.
    """
    eps = check_positive("eps", eps)
    delta = check_delta(delta)
    samples = pypp_audit_samples(multiplicities, sigma, theta, m, n_simulations, rng, r=r, progress=progress)
    attacks = evaluate_attacks({name: samples[name] for name in ("likelihood ratio", "black box")}, delta,
                               confidence=confidence)
    theory = None
    if regime_of(sigma).exact_loss_distribution:
        from ..privacy.pld import pypp_instance_loss   # dp_accounting is loaded only when it is needed

        theory = pypp_instance_loss(multiplicities, theta, m).epsilon(delta)
    rr = samples["r"]
    target = (f"y replaces one record of a value with {rr} cop{'y' if rr == 1 else 'ies'} in x "
              "by a new value")
    return AuditResult(f"PYPP (σ = {sigma:g}, θ = {theta:g}, m = {m:,})", target, eps, delta, theory, attacks,
                       int(n_simulations), confidence)


# ----------------------------------------------------------------------------- histograms
#: What the empirical audit can simulate, in words (the pages say it of a mechanism it cannot).
AUDITABLE_WORDS = ("the empirical audit simulates PYPP with σ ≥ 0 and the perturbed histograms (Laplace, "
                   "Gaussian), whose worst neighbour is known in closed form")


def auditable(mechanism) -> bool:
    """Whether :func:`audit_histogram` can audit ``mechanism`` (a :class:`core.mechanisms.Mechanism`):
    the perturbed histograms, Laplace or Gaussian, whose noisy counts it simulates on the data and on
    its worst neighbour (docs/audit.md §4)."""
    return isinstance(mechanism, (LaplaceHistogram, GaussianHistogram))


def audit_histogram(data, mechanism, m, *, counts=None, n_simulations: int = 100_000, rng: np.random.Generator,
                    confidence: float = 0.95, progress: Progress | None = None) -> AuditResult:
    """Empirical audit of the Laplace or Gaussian perturbed histogram (docs/mathematics.md §4.1–4.2).

    ``y`` moves one record from the least-populated non-empty cell ``a`` to the
    least-populated other cell ``b``. The likelihood-ratio attack uses the two noisy
    counts; the black-box attack counts the released points in cell ``a`` (``m``
    uniform-in-cell draws from the noisy histogram).

    Parameters
    ----------
    data : ndarray, shape (n,) or (n, d), values in [0, 1]
        Categorical columns at their category positions when the mechanism's domain has
        categorical axes (``mechanism.levels``; e.g. :func:`core.evaluation.comparison_table`).
    mechanism : LaplaceHistogram or GaussianHistogram
    m : int ≥ 1
    counts : array of int, shape (len(data),), optional
        Records per row of ``data`` (a frequency table); the audit reads only the cell
        counts, so a table gives the same audit as its records.
    n_simulations : int in [100, 2·10^6]
    rng : numpy.random.Generator
    confidence : float in (0, 1)
        Family-wise, as in :func:`audit_pypp`.
    """
    if not isinstance(mechanism, (LaplaceHistogram, GaussianHistogram)):
        raise ValueError("mechanism must be a LaplaceHistogram or a GaussianHistogram")
    m = check_release_size(m)
    n_sim = _check_simulations(n_simulations)
    rng = check_rng(rng)
    cells = histogram_counts(data, mechanism.bins, counts=counts, levels=mechanism.levels).astype(float)
    if cells.size < 2:
        raise ValueError("bins must give at least two cells for a neighbour to differ")
    nonempty = np.flatnonzero(cells > 0)
    a = int(nonempty[np.argmin(cells[nonempty])])
    rest = np.delete(np.arange(cells.size), a)
    b = int(rest[np.argmin(cells[rest])])
    x_counts = cells
    y_counts = cells.copy()
    y_counts[a] -= 1
    y_counts[b] += 1
    laplace = isinstance(mechanism, LaplaceHistogram)
    scale = mechanism.scale if laplace else mechanism.sigma
    scores = {"likelihood ratio": [np.empty(n_sim), np.empty(n_sim)], "black box": [np.empty(n_sim), np.empty(n_sim)]}
    block = max(1, min(50_000, (1 << 22) // cells.size))
    for lo in range(0, n_sim, block):
        size = min(block, n_sim - lo)
        for side, base in enumerate((x_counts, y_counts)):
            noise = (rng.laplace(0.0, scale, size=(size, cells.size)) if laplace
                     else rng.normal(0.0, scale, size=(size, cells.size)))
            noisy = base + noise
            da, db = noisy[:, a], noisy[:, b]
            if laplace:
                lr = (np.abs(da - y_counts[a]) - np.abs(da - x_counts[a])
                      + np.abs(db - y_counts[b]) - np.abs(db - x_counts[b])) / scale
            else:
                lr = ((da - y_counts[a]) ** 2 - (da - x_counts[a]) ** 2
                      + (db - y_counts[b]) ** 2 - (db - x_counts[b]) ** 2) / (2 * scale ** 2)
            # The statistic is rounded to 9 decimals: computed in floating point, the
            # log-ratio's last bits depend on whether a count was c + noise or (c + 1) + noise,
            # and an attack on those bits breaks ε-DP of *published* noisy counts (Mironov
            # 2012; docs/audit.md §5.2). The release here is the m synthetic points, which
            # never expose those bits, so the audit tests the mechanism's mathematics.
            lr = np.round(lr, 9)
            w = np.maximum(noisy, 0.0)
            tot = w.sum(axis=1)
            qa = np.where(tot > 0, w[:, a] / np.where(tot > 0, tot, 1.0), 1.0 / cells.size)
            scores["likelihood ratio"][side][lo:lo + size] = lr
            scores["black box"][side][lo:lo + size] = rng.binomial(m, qa)
        if progress is not None:
            progress(min(1.0, (lo + size) / n_sim), f"Simulated {lo + size:,} of {n_sim:,} releases per side")
    g = mechanism.guarantee
    attacks = evaluate_attacks({name: scores[name] for name in ("likelihood ratio", "black box")}, g.delta,
                               confidence=confidence)
    from ..privacy.pld import gaussian_histogram_loss

    theory = g.eps if laplace else gaussian_histogram_loss(mechanism.sigma).epsilon(g.delta)
    return AuditResult(mechanism.label, "y moves one record from the smallest non-empty cell to the "
                       "smallest other cell", g.eps, g.delta, theory, attacks, n_sim, confidence)


# ----------------------------------------------------------------------------- disclosure
def _row_keys(rows) -> list:
    arr = rows.to_numpy() if isinstance(rows, pd.DataFrame) else np.asarray(rows, dtype=object)
    if arr.ndim == 1:
        return [(v,) for v in arr.tolist()]
    return [tuple(r) for r in arr.tolist()]


def exact_match_counts(confidential_rows, released_rows) -> dict:
    """Released rows equal to a confidential row, and how many of those are confidential singletons.

    Curator-only numbers: they are computed from the confidential data and are not private.

    Parameters
    ----------
    confidential_rows, released_rows : array_like, shape (n,) or (n, d) / (m,) or (m, d)

    Returns
    -------
    dict with ``released``, ``equal_to_confidential``, ``equal_to_singleton`` (rows of the
    release, counted with repetition) and ``distinct_singletons_released`` (distinct
    confidential singletons that appear in the release).
    """
    conf = _row_keys(confidential_rows)
    rel = _row_keys(released_rows)
    if not conf or not rel:
        raise ValueError("confidential_rows and released_rows must be non-empty")
    table: dict = {}
    for key in conf:
        table[key] = table.get(key, 0) + 1
    equal = [key for key in rel if key in table]
    single = [key for key in equal if table[key] == 1]
    return {"released": len(rel), "equal_to_confidential": len(equal), "equal_to_singleton": len(single),
            "distinct_singletons_released": len(set(single))}


def holdout_split(n_rows: int, control_fraction: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Random split of record indices into (training, control): the control records are
    held out of the release and measure what an attack achieves on people not in it."""
    n_rows = check_integer("n_rows", n_rows, minimum=4)
    control_fraction = check_real("control_fraction", control_fraction, low=0.05, high=0.5)
    rng = check_rng(rng)
    perm = rng.permutation(n_rows)
    n_control = max(2, int(round(control_fraction * n_rows)))
    return np.sort(perm[n_control:]), np.sort(perm[:n_control])


@dataclass(frozen=True)
class RiskEstimate:
    """One Anonymeter-style attack: success rates on training and control, residual risk.

    ``risk = (r_train − r_control)/(1 − r_control)`` with a normal-approximation interval
    propagated from Wilson intervals of the two rates (Giomi et al. 2023, as Anonymeter).
    """

    attack: str
    n_attacks: int
    train_rate: float
    control_rate: float
    risk: float
    risk_interval: tuple
    note: str


def _wilson(success: float, total: int, confidence: float):
    z = stats.norm.ppf(0.5 * (1 + confidence))
    var = success * (total - success) / total
    den = total + z * z
    return (success + 0.5 * z * z) / den, (z / den) * math.sqrt(var + 0.25 * z * z)


def _risk(attack, n, s_train, s_control, confidence, note) -> RiskEstimate:
    a, ea = _wilson(s_train, n, confidence)
    c, ec = _wilson(s_control, n, confidence)
    if c >= 1:
        return RiskEstimate(attack, n, a, c, float("nan"), (float("nan"), float("nan")),
                            note + " (control attack always succeeds: no residual risk measurable)")
    risk = (a - c) / (1 - c)
    err = math.hypot(ea / abs(1 - c), ec * (a - 1) / (1 - c) ** 2)
    return RiskEstimate(attack, n, s_train / n, s_control / n, risk,
                        (max(0.0, risk - err), min(1.0, risk + err)), note)


class _Encoded:
    """Columns as numbers for Gower distances: numeric scaled by their range, categorical codes."""

    def __init__(self, frames: list[pd.DataFrame]):
        joined = pd.concat(frames, ignore_index=True)
        self.sizes = [len(f) for f in frames]
        self.numeric = []
        cols = []
        for c in joined.columns:
            col = joined[c]
            if pd.api.types.is_numeric_dtype(col) and not pd.api.types.is_bool_dtype(col):
                v = col.to_numpy(dtype=float)
                span = np.nanmax(v) - np.nanmin(v)
                cols.append((v - np.nanmin(v)) / (span if span > 0 else 1.0))
                self.numeric.append(True)
            else:
                cols.append(pd.factorize(col.astype(str))[0].astype(float))
                self.numeric.append(False)
        self.values = np.column_stack(cols)
        self.numeric = np.array(self.numeric)
        ends = np.cumsum(self.sizes)
        self.parts = np.split(self.values, ends[:-1])


def _nearest(targets: np.ndarray, pool: np.ndarray, numeric: np.ndarray, cols) -> np.ndarray:
    """Index in ``pool`` of each target's nearest row (Gower distance over ``cols``)."""
    out = np.empty(targets.shape[0], dtype=np.int64)
    cols = np.asarray(cols)
    per = max(1, (1 << 22) // max(1, pool.shape[0] * cols.size))
    for lo in range(0, targets.shape[0], per):
        t = targets[lo:lo + per][:, None, cols]
        p = pool[None, :, cols]
        diff = np.abs(t - p)
        diff = np.where(numeric[cols][None, None, :], diff, (diff > 0).astype(float))
        out[lo:lo + per] = np.argmin(diff.sum(axis=2), axis=1)
    return out


def disclosure_risk(train: pd.DataFrame, control: pd.DataFrame, synthetic: pd.DataFrame, *,
                    rng: np.random.Generator, n_attacks: int = 500, secret: str | None = None,
                    confidence: float = 0.95) -> list[RiskEstimate]:
    """Singling-out, linkability and inference risk with a holdout control (Anonymeter's method).

    * **Singling out** (univariate): predicates built from the release — ``col == v`` for
      a value that occurs once in the release, ``col ≤ min`` / ``col ≥ max`` for numeric
      columns; success when a predicate matches exactly one record. Evaluated on a random
      subset of the training records of the control set's size (so both sets are equally
      large) and on the control set.
    * **Linkability** (needs ≥ 2 columns): the columns are split into two halves; a target
      is linked when its nearest released row (Gower distance) is the same for both halves.
    * **Inference** (needs ≥ 2 columns): from the other columns, guess the ``secret``
      column as that of the nearest released row; success when equal (categorical) or
      within 5% relative (numeric).

    Each risk is ``(r_train − r_control)/(1 − r_control)`` (Giomi et al. 2023).

    Parameters
    ----------
    train : DataFrame
        The records the release was made from.
    control : DataFrame
        Held-out records of the same population (same columns), not used by the release.
    synthetic : DataFrame
        The release (same columns).
    rng : numpy.random.Generator
    n_attacks : int in [10, 5000]
    secret : str, optional
        Column to infer (default: the last one).
    """
    rng = check_rng(rng)
    n_attacks = check_integer("n_attacks", n_attacks, minimum=10, maximum=5000)
    cols = list(train.columns)
    if list(control.columns) != cols or list(synthetic.columns) != cols:
        raise ValueError("train, control and synthetic must have the same columns")
    if len(control) < 10 or len(train) < len(control) or len(synthetic) < 1:
        raise ValueError("need at least 10 control records, no more control than training records, "
                         "and a non-empty release")
    n_targets = min(n_attacks, len(control))
    train_sub = train.iloc[rng.choice(len(train), size=len(control), replace=False)].reset_index(drop=True)
    control = control.reset_index(drop=True)
    out = []

    # singling out
    queries = []
    for c in cols:
        col = synthetic[c]
        vc = col.value_counts()
        queries += [(c, "==", v) for v in vc.index[vc.to_numpy() == 1]]
        if pd.api.types.is_numeric_dtype(col) and not pd.api.types.is_bool_dtype(col):
            queries += [(c, "<=", col.min()), (c, ">=", col.max())]
    if queries:
        pick = rng.choice(len(queries), size=min(n_attacks, len(queries)), replace=False)
        queries = [queries[i] for i in pick]

        def singles_out(frame):
            hits = 0
            for c, op, v in queries:
                col = frame[c]
                mask = col == v if op == "==" else (col <= v if op == "<=" else col >= v)
                hits += int(mask.sum()) == 1
            return hits

        out.append(_risk("singling out", len(queries), singles_out(train_sub), singles_out(control),
                         confidence, f"{len(queries)} univariate predicates built from the release"))
    if len(cols) >= 2:
        enc = _Encoded([train_sub, control, synthetic])
        tr, co, sy = enc.parts
        t_idx = rng.choice(len(tr), size=n_targets, replace=False)
        c_idx = rng.choice(len(co), size=n_targets, replace=False)
        half = len(cols) // 2
        a_cols, b_cols = list(range(half)), list(range(half, len(cols)))

        def links(targets):
            return int(np.sum(_nearest(targets, sy, enc.numeric, a_cols) == _nearest(targets, sy, enc.numeric, b_cols)))

        out.append(_risk("linkability", n_targets, links(tr[t_idx]), links(co[c_idx]), confidence,
                         f"columns {cols[:half]} linked to {cols[half:]} through the nearest released row"))
        secret = cols[-1] if secret is None else secret
        if secret not in cols:
            raise ValueError(f"secret must be one of the columns {cols}, got {secret!r}")
        s = cols.index(secret)
        aux = [j for j in range(len(cols)) if j != s]
        syn_secret = synthetic[secret].to_numpy()

        def infers(frame, idx, encoded):
            guess = syn_secret[_nearest(encoded[idx], sy, enc.numeric, aux)]
            truth = frame[secret].to_numpy()[idx]
            if enc.numeric[s]:
                g, t = guess.astype(float), truth.astype(float)
                return int(np.sum(np.abs(g - t) <= 0.05 * np.abs(t)))
            return int(np.sum(guess.astype(str) == truth.astype(str)))

        out.append(_risk("inference", n_targets, infers(train_sub, t_idx, tr), infers(control, c_idx, co),
                         confidence, f"guess {secret!r} from the other columns (nearest released row)"))
    return out
