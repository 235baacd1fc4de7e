"""Select–measure–estimate on a small public domain: MST and AIM with the Private-PGM
estimator on the dense joint table, and the release sampler (docs/peers.md §3).

The domain is the product of the histogram cells of every column (numeric bins on the
public bounds, public categories), held as one dense array of shape ``sizes``. Each
algorithm releases noisy marginals (Gaussian noise) chosen by private selection
(exponential mechanism), then estimates a distribution over the whole domain consistent
with them:

* **Estimation** (McKenna, Sheldon & Miklau 2019, "Graphical-model based estimation and
  inference for differential privacy", Algorithm 1 — the estimator of Private-PGM, the
  ``mbi`` package): minimise

  .. math:: L(q) = \\sum_r \\big\\|(\\hat N\\,M_r q - y_r)/\\sigma_r\\big\\|_2^2

  over distributions q on the domain by entropic mirror descent (multiplicative updates,
  Armijo step as in ``mbi.estimation.mirror_descent``), from the uniform distribution or
  a warm start; :math:`\\hat N` is the minimum-variance estimate of the record count from the
  measurements, :math:`M_r q` the marginal of q on the columns r, :math:`\\sigma_r` the noise SD
  of each cell of :math:`y_r`. Here q is the full table (the domains are small, at most
  :data:`MAX_MODEL_CELLS` cells), so no junction tree is needed; the optimum is the one the
  graphical model reaches. **Stopping rule**: the fit runs until the objective decreased, over
  the last :data:`CHECK_EVERY` iterations, by less than :data:`TOL` times the larger of the
  objective and the number of measured cells (its value at the truth, in noise units), with at
  most :data:`MAX_ITERS` iterations as a guard (docs/peers.md §3).
* **MST** (McKenna, Miklau & Sheldon 2021, "Winning the NIST contest", and Private-PGM's
  ``mechanisms/mst.py``): a third of the budget measures every one-way marginal; the
  **domain compression** of the original then merges, on each column, the cells whose noisy
  count is below 3σ into one cell (its measurement the sum of theirs, noise SD σ·√k); on the
  compressed domain a third selects the d − 1 pairs of a maximum spanning tree, one
  exponential mechanism per edge over the pairs that join two components, scored by the L1
  error of the one-way model on that pair, and a third measures the chosen pairs. The fitted
  table is expanded back by spreading each merged cell's mass uniformly over its cells (the
  original draws a uniform member). With d ≤ 2 there is nothing to select: half on the
  one-way, half on the pair.
* **AIM** (McKenna, Mullins, Sheldon & Miklau 2022, Algorithm 2): workload = every set of
  min(3, d) columns, candidates its subsets, weights :math:`w_r = \\sum_{s\\in W}|r\\cap s|`;
  the one-way marginals first, then rounds that select a candidate by the exponential
  mechanism on :math:`w_r(\\|M_r x - \\hat N M_r q\\|_1 - \\sqrt{2/\\pi}\\,\\sigma\\,n_r)`, measure it,
  refit, and halve σ (double the selection ε) when the refit moved that marginal by less
  than its noise; 90 % of each round's budget measures, 10 % selects; the last round spends
  what is left; at most ``max_rounds`` rounds (16 d in the paper). The model-size limit of
  the original is not needed on a dense table below :data:`MAX_MODEL_CELLS` cells.
* **Release** (:func:`controlled_rounding`): m records from the fitted table by rounding, as
  Private-PGM's ``synthetic_data`` intends, column after column: the first column's counts
  are m·q rounded, each further column's counts within each group of the columns before it
  the group's count times the conditional distribution, rounded — every rounding systematic
  (one uniform offset per group: each cell gets ⌊e⌋ or ⌈e⌉ of its expected count e, with
  expectation e, the group's total exact). Cells are filled, never rows in order, so columns
  the model holds independent stay independent (up to the rounding), where ``mbi`` 1.1.0's
  ``synthetic_data(method="round")`` puts them in lockstep.

Privacy (zCDP, :mod:`core.privacy.zcdp`): neighbours differ by the replacement of one record,
so a marginal's count vector has L2 sensitivity √2 (a measurement with noise σ costs
:math:`\\rho = 2/(2\\sigma^2)`) and an L1 score moves by at most 2 (times its weight), so an
exponential mechanism with parameter ε₀ costs :math:`\\varepsilon_0^2/8`. Each algorithm
spends exactly its budget ρ; the compression reads only the noisy one-way measurements
(post-processing); every random draw comes from the ``numpy.random.Generator``.
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from ..validation import check_integer, check_positive, check_rng

__all__ = ["CHECK_EVERY", "MAX_ITERS", "MAX_MODEL_CELLS", "ROUND_MAX_ITERS", "TOL", "aim_table", "controlled_rounding",
           "fit_marginals", "mst_table"]

#: Largest domain (product of the cells of every column) the dense estimator accepts.
MAX_MODEL_CELLS = 250_000
#: Squared L2 sensitivity of one marginal under replacement of a record.
_L2_SQ = 2.0
#: L1 sensitivity of one marginal (its score's sensitivity, per unit weight) under replacement.
_L1 = 2.0
#: The stopping rule of the estimator: stop once the objective fell by less than TOL times the
#: larger of itself and the number of measured cells over the last CHECK_EVERY iterations;
#: MAX_ITERS is a hang guard (Private-PGM's MST runs a fixed 10 000, its AIM 1 000 per round).
#: 10⁻⁴: each measured cell's squared residual moves by less than 10⁻⁴ σ² per 100 iterations;
#: against 10⁻⁵ the fit moves by a total variation of about 0.002 (AIM) and 0.0003 (MST), far
#: inside a release's noise, at half the time (docs/peers.md §3).
TOL = 1e-4
CHECK_EVERY = 100
MAX_ITERS = 10_000
#: Iterations at most of each refit between AIM's rounds (Private-PGM's AIM runs 1 000 per round);
#: its last fit, the released model, runs to the stopping rule.
ROUND_MAX_ITERS = 1_000
#: MST's compression threshold: a cell whose noisy one-way count is below 3σ is merged.
COMPRESS_SIGMAS = 3.0


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


def _variances(y: np.ndarray, sigma) -> np.ndarray:
    """Noise variance of each cell of a measurement (``sigma`` a scalar or per cell)."""
    return np.broadcast_to(np.asarray(sigma, dtype=np.float64) ** 2, np.shape(y))


def _total_estimate(measurements) -> float:
    """Minimum-variance unbiased estimate of the record count from the measured marginals
    (each sums to n plus noise of variance Σ σ² over its cells), at least 1."""
    num = den = 0.0
    for _, y, sigma in measurements:
        var = float(_variances(y, sigma).sum())
        num += float(np.sum(y)) / var
        den += 1.0 / var
    return max(1.0, num / den)


def fit_marginals(sizes, measurements, *, total: float | None = None, iters: int | None = None,
                  tol: float = TOL, max_iters: int = MAX_ITERS, start: np.ndarray | None = None,
                  info: dict | None = None) -> np.ndarray:
    """The Private-PGM estimate on the dense domain (see the module docstring).

    Parameters
    ----------
    sizes : tuple of int
        Cells per column.
    measurements : list of (clique, y, sigma)
        ``clique`` a sorted tuple of axes, ``y`` the noisy counts of that marginal (shape of
        those axes), ``sigma`` > 0 its noise SD (a scalar, or one per cell of ``y``).
    total : float, optional
        The record count (default: its minimum-variance estimate from the measurements).
    iters : int ≥ 1, optional
        Run exactly this many iterations (a cross-check with another solver); default: the
        stopping rule.
    tol : float > 0
        The fit stops once the objective fell by less than ``tol`` times the larger of the
        objective and the number of measured cells over :data:`CHECK_EVERY` iterations.
    max_iters : int ≥ 1
        Hang guard of the stopping rule.
    start : ndarray, optional
        A distribution on the domain to start from (warm start); default uniform.
    info : dict, optional
        Filled with ``iterations``, ``converged`` (the stopping rule was met) and ``loss``.

    Returns
    -------
    ndarray of shape ``sizes``, non-negative, summing to one.
    """
    sizes = tuple(int(s) for s in sizes)
    fixed = iters is not None
    limit = check_integer("iters", iters, minimum=1) if fixed else check_integer("max_iters", max_iters, minimum=1)
    tol = check_positive("tol", tol)
    total = _total_estimate(measurements) if total is None else check_positive("total", total)
    ndim = len(sizes)
    # Measurements of the same clique combine into one weighted target (same gradient; the
    # constant keeps the objective's value, which the stopping rule reads).
    grouped: dict[tuple, list] = {}
    for clique, y, sigma in measurements:
        y = np.asarray(y, dtype=np.float64) / total
        w = 1.0 / _variances(y, sigma)
        entry = grouped.setdefault(tuple(clique), [np.zeros(y.shape), np.zeros(y.shape), 0.0])
        entry[0] = entry[0] + w
        entry[1] = entry[1] + w * y
        entry[2] += float(np.sum(w * y * y))
    scale = total * total
    targets, constant = [], 0.0
    for clique, (w, wy, wyy) in grouped.items():
        ybar = wy / w
        targets.append((clique, ybar, w))
        constant += scale * (wyy - float(np.sum(w * ybar * ybar)))

    def loss_and_grad(q):
        loss = constant
        grad = np.zeros(sizes)
        for clique, y, w in targets:
            diff = _marginal(q, clique) - y
            loss += scale * float(np.sum(w * diff * diff))
            grad = grad + _expand(2.0 * scale * w * diff, clique, ndim)
        return loss, grad

    def softmax(theta):
        e = np.exp(theta - theta.max())
        return e / e.sum()

    theta = np.zeros(sizes) if start is None else np.log(np.maximum(start, 1e-300))
    q = softmax(theta)
    loss, grad = loss_and_grad(q)
    # Step 1/L for the objective's curvature along the simplex (mbi's 2/(L·total) in its units).
    alpha = 1.0 / (scale * sum(float(np.max(w)) for _, _, w in targets))
    # The objective is a sum of squared residuals in noise units: about one per measured cell at
    # the truth, so the rule is relative to the larger of the objective and that count.
    measured = float(sum(np.size(y) for _, y, _ in targets))
    checkpoint, converged, done = loss, False, 0
    for done in range(1, limit + 1):
        theta2 = theta - alpha * grad
        q2 = softmax(theta2)
        loss2, grad2 = loss_and_grad(q2)
        if loss - loss2 >= 0.5 * alpha * float(np.sum(grad * (q - q2))):
            theta, q, loss, grad = theta2, q2, loss2, grad2
            alpha *= 1.01
        else:
            alpha *= 0.5
        if not fixed and done % CHECK_EVERY == 0:
            if checkpoint - loss <= tol * max(loss, measured):
                converged = True
                break
            checkpoint = loss
    if info is not None:
        info.update(iterations=done, converged=converged or fixed, loss=loss)
    return q


# ====================================================================== release sampler
def controlled_rounding(q, m, rng) -> np.ndarray:
    """``m`` records from the table ``q`` by controlled rounding (see the module docstring).

    Parameters
    ----------
    q : ndarray ≥ 0 with a positive sum, shape ``sizes``
        Cell probabilities (normalised here).
    m : int ≥ 1
    rng : numpy.random.Generator

    Returns
    -------
    ndarray of int64, shape ``sizes``, summing to ``m``: each first-column count is ⌊m·q⌋ or
    ⌈m·q⌉ of its marginal, and so on down the columns within each group; unbiased.
    """
    q = np.asarray(q, dtype=np.float64)
    if q.size == 0 or not np.all(np.isfinite(q)) or np.any(q < 0) or q.sum() <= 0:
        raise ValueError("q must be a non-empty table of finite non-negative probabilities with a positive sum")
    m = check_integer("m", m, minimum=1)
    rng = check_rng(rng)
    q = q / q.sum()
    d = q.ndim
    counts = np.array([m], dtype=np.int64)       # one group (the empty prefix)
    for j in range(d):
        prefix = q.sum(axis=tuple(range(j + 1, d))) if j + 1 < d else q
        prefix = prefix.reshape(-1, q.shape[j])   # groups × cells of column j
        parent = prefix.sum(axis=1, keepdims=True)
        cond = np.divide(prefix, parent, out=np.full(prefix.shape, 1.0 / q.shape[j]), where=parent > 0)
        expected = counts[:, None] * cond
        # Systematic rounding in each group: cumulative expected counts, one uniform offset;
        # the last cumulative value is the group's integer total, so the total is exact.
        cum = np.cumsum(expected, axis=1)
        cum = np.minimum(np.maximum.accumulate(cum, axis=1), counts[:, None].astype(np.float64))
        cum[:, -1] = counts
        u = rng.random((cum.shape[0], 1))
        edges = np.floor(cum + u).astype(np.int64)
        counts = np.diff(edges, axis=1, prepend=np.zeros((cum.shape[0], 1), dtype=np.int64)).ravel()
    return counts.reshape(q.shape)


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


# ====================================================================== MST's domain compression
def _compression(log, sigma: float) -> list[np.ndarray]:
    """Per column, the compressed cell of each original cell: the cells whose noisy one-way
    count is at least 3σ keep a cell each (in order), the others share one last cell."""
    groups = []
    for _, y, _ in log:
        keep = np.asarray(y) >= COMPRESS_SIGMAS * sigma
        index = np.full(keep.size, int(keep.sum()), dtype=np.int64)
        index[keep] = np.arange(int(keep.sum()))
        groups.append(index)
    return groups


def _compress_table(counts: np.ndarray, groups) -> np.ndarray:
    """The count table on the compressed domain (merged cells summed)."""
    out = counts
    for axis, index in enumerate(groups):
        onehot = np.zeros((index.size, int(index.max()) + 1))
        onehot[np.arange(index.size), index] = 1.0
        out = np.moveaxis(np.tensordot(out, onehot, axes=([axis], [0])), -1, axis)
    return out


def _compress_one_way(measurement, index: np.ndarray, sigma: float) -> tuple:
    """A one-way measurement re-expressed on the compressed column: the merged cells' noisy
    counts summed, with noise SD σ·√k for k merged cells."""
    axis, y = measurement[0], np.asarray(measurement[1])
    size = int(index.max()) + 1
    y2 = np.bincount(index, weights=y, minlength=size)
    merged = np.bincount(index, minlength=size)
    return axis, y2, sigma * np.sqrt(merged.astype(np.float64))


def _expand_table(q: np.ndarray, groups) -> np.ndarray:
    """The compressed table ``q`` on the original domain: a merged cell's mass spread
    uniformly over its cells."""
    out = q
    for axis, index in enumerate(groups):
        share = np.bincount(index)[index].astype(np.float64)
        out = np.take(out, index, axis=axis) / _expand(share, (axis,), q.ndim)
    return out


# ====================================================================== MST
def mst_table(counts, rho, rng, *, compress: bool = True, tol: float = TOL, max_iters: int = MAX_ITERS,
              info: dict | None = None) -> np.ndarray:
    """MST's estimate of the distribution of the count table ``counts`` under a ρ-zCDP budget.

    Parameters
    ----------
    counts : ndarray of int ≥ 0, shape ``sizes`` (one axis per column)
    rho : float > 0
    rng : numpy.random.Generator
    compress : bool
        Apply MST's domain compression (the original's; default).
    tol, max_iters
        The estimator's stopping rule (:func:`fit_marginals`).
    info : dict, optional
        Filled with ``fits`` (the :func:`fit_marginals` info of each fit), ``compressed`` (cells
        per column after compression) and ``edges``.

    Returns
    -------
    ndarray of shape ``sizes``: cell probabilities.
    """
    counts, rho, rng = _check_table(counts, rho, rng)
    sizes, d = counts.shape, counts.ndim
    fits: list[dict] = []

    def fit(shape, log):
        fits.append({})
        return fit_marginals(shape, log, tol=tol, max_iters=max_iters, info=fits[-1])

    if d == 1:
        sigma = math.sqrt(_L2_SQ / (2.0 * rho))
        q = fit(sizes, [_measure(counts, (0,), sigma, rng)])
        if info is not None:
            info.update(fits=fits, compressed=sizes, edges=[])
        return q
    part = rho / 2.0 if d == 2 else rho / 3.0
    sigma1 = math.sqrt(_L2_SQ * d / (2.0 * part))
    log = [_measure(counts, (a,), sigma1, rng) for a in range(d)]
    groups = None
    if compress:
        groups = _compression(log, sigma1)
        log = [_compress_one_way(meas, index, sigma1) for meas, index in zip(log, groups)]
        counts = _compress_table(counts, groups)
    shape = counts.shape
    if d == 2:
        edges = [(0, 1)]
    else:
        model = fit(shape, log)
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
    q = fit(shape, log)
    if info is not None:
        info.update(fits=fits, compressed=shape, edges=edges)
    return q if groups is None else _expand_table(q, groups)


# ====================================================================== AIM
def aim_table(counts, rho, rng, *, max_rounds: int | None = None, measure_share: float = 0.9,
              tol: float = TOL, max_iters: int = MAX_ITERS, info: dict | None = None) -> np.ndarray:
    """AIM's estimate of the distribution of the count table ``counts`` under a ρ-zCDP budget.

    Parameters
    ----------
    counts : ndarray of int ≥ 0, shape ``sizes``
    rho : float > 0
    rng : numpy.random.Generator
    max_rounds : int ≥ max(2, d), optional
        T, the most rounds (default 16 d, the paper's); the initial σ and ε₀ spread the
        budget over T rounds.
    measure_share : float in (0, 1)
        The share of a round's budget spent measuring (0.9 in the paper).
    tol, max_iters
        The estimator's stopping rule (:func:`fit_marginals`), for every fit (each round's
        refit starts from the previous fit).
    info : dict, optional
        Filled with ``fits`` (the :func:`fit_marginals` info of each fit) and ``cliques`` (the
        measured marginals in order).

    Returns
    -------
    ndarray of shape ``sizes``: cell probabilities.
    """
    counts, rho, rng = _check_table(counts, rho, rng)
    sizes, d = counts.shape, counts.ndim
    rounds = check_integer("max_rounds", 16 * d if max_rounds is None else max_rounds, minimum=max(2, d))
    share = float(measure_share)
    if not 0.0 < share < 1.0:
        raise ValueError(f"measure_share must be in (0, 1), got {measure_share!r}")
    width = min(3, d)
    workload = list(itertools.combinations(range(d), width))
    candidates = sorted({c for w in workload for k in range(1, width + 1) for c in itertools.combinations(w, k)})
    weights = np.array([sum(len(set(c) & set(w)) for w in workload) for c in candidates], dtype=np.float64)
    cells = np.array([int(np.prod([sizes[a] for a in c])) for c in candidates], dtype=np.float64)
    true_marginals = [_marginal(counts, c) for c in candidates]
    fits: list[dict] = []

    def fit(log, start, limit=min(max_iters, ROUND_MAX_ITERS)):
        fits.append({})
        return fit_marginals(sizes, log, tol=tol, max_iters=limit, start=start, info=fits[-1])

    sigma = math.sqrt(rounds * _L2_SQ / (2.0 * share * rho))
    eps0 = math.sqrt(8.0 * (1.0 - share) * rho / rounds)
    log = [_measure(counts, (a,), sigma, rng) for a in range(d)]
    used = d * _L2_SQ / (2.0 * sigma * sigma)
    model = fit(log, None)
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
        model = fit(log, model)
        moved = _total_estimate(log) * np.abs(_marginal(model, clique) - before).sum()
        if moved <= noise[pick]:
            sigma /= 2.0
            eps0 *= 2.0
    model = fit(log, model, max_iters)
    if info is not None:
        info.update(fits=fits, cliques=[m[0] for m in log])
    return model
