"""Select–measure–estimate on a small public domain: MST and AIM with the Private-PGM
estimator on the dense joint table (docs/peers.md §3).

The domain is the product of the histogram cells of every column (numeric bins on the
public bounds, public categories), held as one dense array of shape ``sizes``. Each
algorithm releases noisy marginals (Gaussian noise) chosen by private selection
(exponential mechanism), then estimates a distribution over the whole domain consistent
with them:

* **Estimation** (McKenna, Sheldon & Miklau 2019, "Graphical-model based estimation and
  inference for differential privacy", Algorithm 1 — the estimator of Private-PGM, the
  ``mbi`` package): minimise

  .. math:: L(q) = \\sum_r \\frac{1}{\\sigma_r^2}\\,\\big\\|\\hat N\\,M_r q - y_r\\big\\|_2^2

  over distributions q on the domain by entropic mirror descent (multiplicative updates,
  Armijo step as in ``mbi.estimation.mirror_descent``), from the uniform distribution or
  a warm start; :math:`\\hat N` is the minimum-variance estimate of the record count from the
  measurements, :math:`M_r q` the marginal of q on the columns r. Here q is the full table
  (the domains are small, at most :data:`MAX_MODEL_CELLS` cells), so no junction tree is
  needed; the optimum is the one the graphical model reaches.
* **MST** (McKenna, Miklau & Sheldon 2021, "Winning the NIST contest"): a third of the
  budget measures every one-way marginal; a third selects the d − 1 pairs of a maximum
  spanning tree, one exponential mechanism per edge over the pairs that join two
  components, scored by the L1 error of the one-way model on that pair; a third measures
  the chosen pairs. (With d ≤ 2 there is nothing to select: half on the one-way, half on the
  pair. The domain compression of the original is not applied: the cells are public.)
* **AIM** (McKenna, Mullins, Sheldon & Miklau 2022, Algorithm 2): workload = every set of
  min(3, d) columns, candidates its subsets, weights :math:`w_r = \\sum_{s\\in W}|r\\cap s|`;
  the one-way marginals first, then rounds that select a candidate by the exponential
  mechanism on :math:`w_r(\\|M_r x - \\hat N M_r q\\|_1 - \\sqrt{2/\\pi}\\,\\sigma\\,n_r)`, measure it,
  refit, and halve σ (double the selection ε) when the refit moved that marginal by less
  than its noise; 90 % of each round's budget measures, 10 % selects; the last round spends
  what is left; at most ``max_rounds`` rounds (16 d in the paper). The model-size limit of
  the original is not needed on a dense table below :data:`MAX_MODEL_CELLS` cells.

Privacy (zCDP, :mod:`core.privacy.zcdp`): neighbours differ by the replacement of one record,
so a marginal's count vector has L2 sensitivity √2 (a measurement with noise σ costs
:math:`\\rho = 2/(2\\sigma^2)`) and an L1 score moves by at most 2 (times its weight), so an
exponential mechanism with parameter ε₀ costs :math:`\\varepsilon_0^2/8`. Each algorithm
spends exactly its budget ρ; every random draw comes from the ``numpy.random.Generator``.
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from ..validation import check_integer, check_positive, check_rng

__all__ = ["MAX_MODEL_CELLS", "aim_table", "fit_marginals", "mst_table"]

#: Largest domain (product of the cells of every column) the dense estimator accepts.
MAX_MODEL_CELLS = 250_000
#: Squared L2 sensitivity of one marginal under replacement of a record.
_L2_SQ = 2.0
#: L1 sensitivity of one marginal (its score's sensitivity, per unit weight) under replacement.
_L1 = 2.0
#: Mirror-descent iterations of a fit from scratch, and of a warm-started refit (AIM rounds).
FIT_ITERS = 300
REFIT_ITERS = 60


# ====================================================================== estimation
def _marginal(q: np.ndarray, clique: tuple[int, ...]) -> np.ndarray:
    """Marginal of the table ``q`` on the axes ``clique`` (sorted), shape of those axes."""
    other = tuple(a for a in range(q.ndim) if a not in clique)
    return q.sum(axis=other) if other else q


def _expand(values: np.ndarray, clique: tuple[int, ...], ndim: int) -> np.ndarray:
    """``values`` (shape of the axes ``clique``) broadcastable against the full table."""
    shape = [1] * ndim
    for a, size in zip(clique, values.shape):
        shape[a] = size
    return values.reshape(shape)


def _total_estimate(measurements) -> float:
    """Minimum-variance unbiased estimate of the record count from the measured marginals
    (each sums to n plus noise of variance σ²·cells), at least 1."""
    num = den = 0.0
    for _, y, sigma in measurements:
        var = sigma * sigma * y.size
        num += float(y.sum()) / var
        den += 1.0 / var
    return max(1.0, num / den)


def fit_marginals(sizes, measurements, *, total: float | None = None, iters: int = FIT_ITERS,
                  start: np.ndarray | None = None) -> np.ndarray:
    """The Private-PGM estimate on the dense domain (see the module docstring).

    Parameters
    ----------
    sizes : tuple of int
        Cells per column.
    measurements : list of (clique, y, sigma)
        ``clique`` a sorted tuple of axes, ``y`` the noisy counts of that marginal (shape of
        those axes), ``sigma`` > 0 its noise SD.
    total : float, optional
        The record count (default: its minimum-variance estimate from the measurements).
    iters : int ≥ 1
    start : ndarray, optional
        A distribution on the domain to start from (warm start); default uniform.

    Returns
    -------
    ndarray of shape ``sizes``, non-negative, summing to one.
    """
    sizes = tuple(int(s) for s in sizes)
    iters = check_integer("iters", iters, minimum=1)
    total = _total_estimate(measurements) if total is None else check_positive("total", total)
    ndim = len(sizes)
    targets = [(clique, np.asarray(y, dtype=np.float64) / total, 1.0 / (sigma * sigma))
               for clique, y, sigma in measurements]
    scale = total * total

    def loss_and_grad(q):
        loss = 0.0
        grad = np.zeros(sizes)
        for clique, y, w in targets:
            diff = _marginal(q, clique) - y
            loss += w * scale * float(np.dot(diff.ravel(), diff.ravel()))
            grad = grad + _expand(2.0 * w * scale * diff, clique, ndim)
        return loss, grad

    def softmax(theta):
        e = np.exp(theta - theta.max())
        return e / e.sum()

    theta = np.zeros(sizes) if start is None else np.log(np.maximum(start, 1e-300))
    q = softmax(theta)
    loss, grad = loss_and_grad(q)
    alpha = 1.0 / (scale * sum(w for _, _, w in targets))
    for _ in range(iters):
        theta2 = theta - alpha * grad
        q2 = softmax(theta2)
        loss2, grad2 = loss_and_grad(q2)
        if loss - loss2 >= 0.5 * alpha * float(np.sum(grad * (q - q2))):
            theta, q, loss, grad = theta2, q2, loss2, grad2
            alpha *= 1.01
        else:
            alpha *= 0.5
    return q


# ====================================================================== selection and noise
def _exponential_mechanism(scores: np.ndarray, eps0: float, sensitivity: float, rng) -> int:
    """Index drawn with probability ∝ exp(ε₀·score/(2·sensitivity)) (ε₀-DP; ε₀²/8-zCDP)."""
    logits = eps0 * (scores - scores.max()) / (2.0 * sensitivity)
    p = np.exp(logits)
    return int(rng.choice(scores.size, p=p / p.sum()))


def _measure(counts: np.ndarray, clique: tuple[int, ...], sigma: float, rng) -> tuple:
    """One Gaussian measurement of the marginal ``clique`` of the count table."""
    x = _marginal(counts, clique)
    return clique, x + rng.normal(0.0, sigma, size=x.shape), sigma


def _check_table(counts, rho, rng) -> tuple[np.ndarray, float, np.random.Generator]:
    counts = np.asarray(counts, dtype=np.float64)
    if counts.size > MAX_MODEL_CELLS:
        raise ValueError(f"the domain has {counts.size} cells, more than MAX_MODEL_CELLS = {MAX_MODEL_CELLS} for AIM "
                         "and MST: use fewer bins, fewer columns or coarser categories")
    return counts, check_positive("rho", rho), check_rng(rng)


# ====================================================================== MST
def mst_table(counts, rho, rng, *, iters: int = FIT_ITERS) -> np.ndarray:
    """MST's estimate of the distribution of the count table ``counts`` under a ρ-zCDP budget.

    Parameters
    ----------
    counts : ndarray of int ≥ 0, shape ``sizes`` (one axis per column)
    rho : float > 0
    rng : numpy.random.Generator
    iters : int
        Mirror-descent iterations of each fit.

    Returns
    -------
    ndarray of shape ``sizes``: cell probabilities.
    """
    counts, rho, rng = _check_table(counts, rho, rng)
    sizes, d = counts.shape, counts.ndim
    one_way = [(a,) for a in range(d)]
    if d == 1:
        sigma = math.sqrt(_L2_SQ / (2.0 * rho))
        return fit_marginals(sizes, [_measure(counts, (0,), sigma, rng)], iters=iters)
    part = rho / 2.0 if d == 2 else rho / 3.0
    sigma1 = math.sqrt(_L2_SQ * d / (2.0 * part))
    log = [_measure(counts, c, sigma1, rng) for c in one_way]
    if d == 2:
        edges = [(0, 1)]
    else:
        model = fit_marginals(sizes, log, iters=iters)
        total = _total_estimate(log)
        pairs = list(itertools.combinations(range(d), 2))
        errors = np.array([np.abs(_marginal(counts, p) - total * _marginal(model, p)).sum() for p in pairs])
        eps0 = math.sqrt(8.0 * part / (d - 1))
        component = list(range(d))
        edges = []
        for _ in range(d - 1):
            allowed = [i for i, (a, b) in enumerate(pairs) if component[a] != component[b]]
            pick = allowed[_exponential_mechanism(errors[allowed], eps0, _L1, rng)]
            a, b = pairs[pick]
            old, new = component[b], component[a]
            component = [new if c == old else c for c in component]
            edges.append(pairs[pick])
    sigma2 = math.sqrt(_L2_SQ * len(edges) / (2.0 * part))
    log += [_measure(counts, e, sigma2, rng) for e in edges]
    return fit_marginals(sizes, log, iters=iters)


# ====================================================================== AIM
def aim_table(counts, rho, rng, *, max_rounds: int | None = None, iters: int = FIT_ITERS,
              refit_iters: int = REFIT_ITERS, measure_share: float = 0.9) -> np.ndarray:
    """AIM's estimate of the distribution of the count table ``counts`` under a ρ-zCDP budget.

    Parameters
    ----------
    counts : ndarray of int ≥ 0, shape ``sizes``
    rho : float > 0
    rng : numpy.random.Generator
    max_rounds : int ≥ max(2, d), optional
        T, the most rounds (default 16 d, the paper's); the initial σ and ε₀ spread the
        budget over T rounds.
    iters, refit_iters : int
        Mirror-descent iterations of the first and last fits, and of each round's warm refit.
    measure_share : float in (0, 1)
        The share of a round's budget spent measuring (0.9 in the paper).

    Returns
    -------
    ndarray of shape ``sizes``: cell probabilities.
    """
    counts, rho, rng = _check_table(counts, rho, rng)
    sizes, d = counts.shape, counts.ndim
    rounds = check_integer("max_rounds", 16 * d if max_rounds is None else max_rounds, minimum=max(2, d))
    share = float(measure_share)
    width = min(3, d)
    workload = list(itertools.combinations(range(d), width))
    candidates = sorted({c for w in workload for k in range(1, width + 1) for c in itertools.combinations(w, k)})
    weights = np.array([sum(len(set(c) & set(w)) for w in workload) for c in candidates], dtype=np.float64)
    cells = np.array([int(np.prod([sizes[a] for a in c])) for c in candidates], dtype=np.float64)
    true_marginals = [_marginal(counts, c) for c in candidates]

    sigma = math.sqrt(rounds * _L2_SQ / (2.0 * share * rho))
    eps0 = math.sqrt(8.0 * (1.0 - share) * rho / rounds)
    log = [_measure(counts, (a,), sigma, rng) for a in range(d)]
    used = d * _L2_SQ / (2.0 * sigma * sigma)
    model = fit_marginals(sizes, log, iters=iters)
    t = 0
    while used < rho * (1.0 - 1e-12):
        t += 1
        remaining = rho - used
        step_cost = _L2_SQ / (2.0 * sigma * sigma) + eps0 * eps0 / 8.0
        if remaining < 2.0 * step_cost or t >= rounds:     # the last round spends what is left
            sigma = math.sqrt(_L2_SQ / (2.0 * share * remaining))
            eps0 = math.sqrt(8.0 * (1.0 - share) * remaining)
            step_cost = remaining
        used += step_cost
        total = _total_estimate(log)
        noise = math.sqrt(2.0 / math.pi) * sigma * cells
        errors = np.array([np.abs(x - total * _marginal(model, c)).sum() for x, c in zip(true_marginals, candidates)])
        pick = _exponential_mechanism(weights * (errors - noise), eps0, _L1 * float(weights.max()), rng)
        clique = candidates[pick]
        before = _marginal(model, clique)
        log.append(_measure(counts, clique, sigma, rng))
        model = fit_marginals(sizes, log, iters=refit_iters, start=model)
        moved = _total_estimate(log) * np.abs(_marginal(model, clique) - before).sum()
        if moved <= noise[pick]:
            sigma /= 2.0
            eps0 *= 2.0
    return fit_marginals(sizes, log, iters=iters, start=model)
