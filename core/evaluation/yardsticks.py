"""The field's yardsticks of a synthetic release (docs/quality.md §9, docs/peers.md §4).

Computed against the confidential data, so they are for the curator only (like the quality
report, docs/quality.md). Two families:

**SDNist's own, exactly** (NIST SDNist v2.5, github.com/usnistgov/SDNist commit f048b1c:
``sdnist/metrics/kmarginal.py``, ``unique_exact_matches.py``, ``apparent_match_dist.py``,
``propensity.py``, ``sdnist/report/dataset/binning.py``; checked against SDNist's own outputs,
``tests/sdnist_fixtures.json``):

* :func:`sdnist_k_marginal` — every pair of columns (fewer than 30 columns; else 200 pairs drawn
  with ``default_rng(0)``), 1000·(1 − mean TV) of the 2-way tables, on :func:`sdnist_bin`'s
  binning (20 percentile bins of the target per continuous column);
* :func:`sdnist_unique_exact_match` — the target's unique records found in the release;
* :func:`sdnist_apparent_match` — records unique on the quasi-identifiers in both tables and
  equal on them, with the share of the other columns that agree;
* :func:`sdnist_pmse` — pMSE of a depth-6 CART (scikit-learn's ``DecisionTreeClassifier``
  grown here in NumPy).

**The project's own** (under their own names; not comparable with SDNist reports):

* **3-way marginal score** (0–1000; key ``marginal3``, its reference ``marginal3_reference``): for every set of k columns
  (k = 3, or all columns when fewer), numeric columns binned in the same public bins for
  data and release, the total variation :math:`TV = \\tfrac12\\sum|p_\\text{data} -
  p_\\text{release}|` of the normalised k-way tables; score = 1000·(1 − mean TV). Every set is
  used up to :data:`MAX_COLUMN_SETS` sets, and beyond that (wide tables: 200 columns hold
  1 313 400 triples) a uniform sample of that many distinct sets, drawn with the caller's
  ``numpy.random.Generator``, so that the score is an unbiased estimate of the all-sets score at
  a bounded cost (the counts are in the result). The **reference** is the score of a uniform
  subsample of the data (without replacement) of the release's size m: what m true records
  would score (1000 at m = n).
* **Unique exact match (UEM)**: among the records that are unique in the data (on the
  released columns), the share that appears exactly in the release (SDNist's number as a
  share, NaN rather than 0 when no record is unique).
* **Row match share** (key ``row_match``): the share of release rows equal to
  some data record — not SDNist's apparent match (:func:`sdnist_apparent_match`).
* **Logistic pMSE** (key ``pMSE_logistic``; Woo et al. 2009, Snoke et al. 2018): stack data and
  release with a label, fit a logistic regression of the label on the columns (numeric
  columns as they are, categorical ones one-hot, an intercept), p̂ the fitted propensities,
  c = m/(n + m): :math:`pMSE = \\operatorname{mean}_i(\\hat p_i - c)^2` over the n + m rows, from
  0 (the model cannot tell them apart) to c(1 − c) (it separates them perfectly). SDNist's
  is :func:`sdnist_pmse` (a depth-6 tree). The fit is Newton's method (IRLS) in NumPy. Its
  cost grows with the cube of the design's width, so the width is capped: a categorical
  column enters with at most :data:`MAX_LEVELS` indicators (its most frequent categories in
  the data; the rest share the baseline), and when the columns' widths add up past
  :data:`MAX_DESIGN_WIDTH`, the fit uses a uniformly drawn subset of whole columns that fits
  (the count is in the result). Its **null reference** (key ``pMSE_null``, :func:`pmse_null`) is
  its expected value when data and release come from one distribution, (p − 1)(1 − c)²c/(n + m)
  for a model of p parameters (Snoke et al. 2018): pMSE grows with c and with the model's
  width, so releases of different m are compared by the **pMSE ratio** (key ``pMSE_ratio``,
  pMSE/null: about 1 = indistinguishable, larger = the model tells them apart).

Every function takes the data as a frequency table (rows and their counts), so the cost
grows with the k distinct rows, not with n.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Mapping

import numpy as np
import pandas as pd

from ..mechanisms import category_codes, distinct_rows
from ..validation import check_integer, check_rng, check_row_counts, check_unit_data

__all__ = [
    "SDNIST_BINS",
    "SDNIST_PAIR_LIMIT",
    "SDNIST_SAMPLED_PAIRS",
    "SDNIST_TREE_DEPTH",
    "SDNistApparentMatch",
    "Yardsticks",
    "apparent_match",
    "frame_yardsticks",
    "k_marginal_score",
    "pmse_null",
    "propensity_mse",
    "sdnist_apparent_match",
    "sdnist_bin",
    "sdnist_k_marginal",
    "sdnist_marginal_pairs",
    "sdnist_pmse",
    "sdnist_unique_exact_match",
    "subsample_k_marginal_score",
    "unique_exact_match",
    "yardstick_runs",
    "yardstick_table",
]

#: Order of the project's 3-way marginal score (SDNist's own k-marginal uses pairs: :func:`sdnist_k_marginal`).
DEFAULT_K = 3
_NEWTON_STEPS = 60
#: Column sets the 3-way marginal score scores at most; beyond, a uniform sample of this many distinct
#: sets (SDNist draws 50). 200 keeps every triple of up to 11 columns.
MAX_COLUMN_SETS = 200
#: Indicators of one categorical column in pMSE's design at most.
MAX_LEVELS = 50
#: Width of pMSE's design (numeric columns, indicators) at most; beyond, a uniform subset of columns.
MAX_DESIGN_WIDTH = 200


@dataclass(frozen=True)
class Yardsticks:
    """The yardsticks of one release (see the module docstring).

    Attributes
    ----------
    k : int
        The order of the 3-way marginal score's tables.
    k_marginal, k_marginal_reference : float
        The 3-way marginal score in [0, 1000] and its reference (a uniform subsample of the data
        of size m); not SDNist's k-marginal (``sdnist_k_marginal``).
    unique_exact_match : float
        Share in [0, 1] (NaN when the data hold no unique record).
    unique_records : int
        How many records are unique in the data.
    apparent_match : float
        The row match share: release rows equal to a data record (not SDNist's apparent match).
    pmse : float
        The logistic pMSE (the project's; SDNist's tree pMSE is ``sdnist_pmse``).
    k_marginal_sets, k_marginal_sets_total : int
        Column sets scored, and how many there are (fewer scored: a uniform sample of them).
    pmse_columns, pmse_columns_total : int
        Columns in pMSE's design, and how many there are (fewer: a uniform sample of them).
    sdnist_k_marginal, sdnist_pmse : float
        SDNist's own k-marginal score (every pair, its binning) and pMSE (its depth-6 tree):
        :func:`sdnist_k_marginal`, :func:`sdnist_pmse` (docs/quality.md §9).
    """

    k: int
    k_marginal: float
    k_marginal_reference: float
    unique_exact_match: float
    unique_records: int
    apparent_match: float
    pmse: float
    k_marginal_sets: int = 0
    k_marginal_sets_total: int = 0
    pmse_columns: int = 0
    pmse_columns_total: int = 0
    sdnist_k_marginal: float = math.nan
    sdnist_pmse: float = math.nan

    def to_dict(self) -> dict:
        return {"k": self.k, "marginal3": self.k_marginal, "marginal3_reference": self.k_marginal_reference,
                "k_marginal_sets": self.k_marginal_sets, "k_marginal_sets_total": self.k_marginal_sets_total,
                "unique_exact_match": self.unique_exact_match, "unique_records": self.unique_records,
                "row_match": self.apparent_match, "pMSE_logistic": self.pmse, "pMSE_columns": self.pmse_columns,
                "pMSE_columns_total": self.pmse_columns_total, "SDNist_k_marginal": self.sdnist_k_marginal,
                "SDNist_pMSE": self.sdnist_pmse}


# ================================================================ 3-way marginal score
def _subsets(d: int, k: int, rng: np.random.Generator | None) -> tuple[list[tuple[int, ...]], int]:
    """Every set of min(k, d) of the d columns, or, past :data:`MAX_COLUMN_SETS` of them, a
    uniform sample without replacement of that many (distinct sets drawn uniformly, repeats
    redrawn); with the number of all sets."""
    k = min(k, d)
    total = math.comb(d, k)
    if total <= MAX_COLUMN_SETS:
        return list(itertools.combinations(range(d), k)), total
    if rng is None:
        raise ValueError(f"rng must be a numpy Generator when the {total} sets of {k} columns are sampled")
    chosen: set[tuple[int, ...]] = set()
    while len(chosen) < MAX_COLUMN_SETS:
        chosen.add(tuple(sorted(int(a) for a in rng.choice(d, size=k, replace=False))))
    return sorted(chosen), total


#: A k-way table with more cells than this is kept sparse (its occupied cells only).
_DENSE_CELLS = 2 ** 20


def _table(codes: np.ndarray, weights: np.ndarray | None, subset, sizes):
    """The normalised k-way table of ``subset``: dense, or ``(cells, shares)`` of the occupied
    cells (sorted exact keys) when the product of the sizes passes :data:`_DENSE_CELLS`
    (high-cardinality columns), so that memory follows the rows, not the cells."""
    shape = tuple(int(sizes[a]) for a in subset)
    if math.prod(shape) > _DENSE_CELLS:
        cells = np.ascontiguousarray(codes[:, list(subset)])
        keys = cells.view(np.dtype((np.void, cells.dtype.itemsize * cells.shape[1]))).ravel()
        distinct, inverse = np.unique(keys, return_inverse=True)
        t = np.bincount(inverse.ravel(), weights=weights, minlength=distinct.size).astype(np.float64)
        return distinct, t / t.sum()
    flat = np.ravel_multi_index(tuple(codes[:, a] for a in subset), shape)
    t = np.bincount(flat, weights=weights, minlength=math.prod(shape)).astype(np.float64)
    return t / t.sum()


def _tv(a, b) -> float:
    """Total variation between two tables of :func:`_table` (both dense or both sparse)."""
    if not isinstance(a, tuple):
        return float(0.5 * np.abs(a - b).sum())
    cells = np.unique(np.concatenate([a[0], b[0]]))
    p, q = np.zeros(cells.size), np.zeros(cells.size)
    p[np.searchsorted(cells, a[0])] = a[1]
    q[np.searchsorted(cells, b[0])] = b[1]
    return float(0.5 * np.abs(p - q).sum())


class _KMarginal:
    """The data's k-way tables, computed once, against which releases are scored."""

    def __init__(self, codes, sizes, counts, k, rng=None):
        self.codes = np.asarray(codes, dtype=np.int64).reshape(len(codes), -1)
        self.sizes = [int(v) for v in sizes]
        self.counts = None if counts is None else np.asarray(counts, dtype=np.float64)
        rng = None if rng is None else check_rng(rng)
        self.subsets, self.total = _subsets(self.codes.shape[1], check_integer("k", k, minimum=1), rng)
        self.tables = [_table(self.codes, self.counts, sub, self.sizes) for sub in self.subsets]

    def score(self, codes, weights=None) -> float:
        z = np.asarray(codes, dtype=np.int64).reshape(len(codes), -1)
        w = None if weights is None else np.asarray(weights, dtype=np.float64)
        tvs = [_tv(t, _table(z, w, sub, self.sizes)) for t, sub in zip(self.tables, self.subsets)]
        return float(1000.0 * (1.0 - np.mean(tvs)))

    def reference(self, m: int, rng: np.random.Generator) -> float:
        """Score of ``min(m, n)`` records drawn uniformly without replacement."""
        counts = np.ones(self.codes.shape[0]) if self.counts is None else self.counts
        n = int(counts.sum())
        size = min(int(m), n)
        picked = rng.choice(n, size=size, replace=False)
        rows = np.searchsorted(np.cumsum(counts), picked, side="right")
        return self.score(self.codes, np.bincount(rows, minlength=self.codes.shape[0]))


def k_marginal_score(data_codes, release_codes, sizes, *, data_counts=None, release_counts=None,
                     k: int = DEFAULT_K, rng: np.random.Generator | None = None) -> float:
    """The project's 3-way marginal score (not SDNist's: :func:`sdnist_k_marginal`), 1000·(1 − mean TV)
    over every set of min(k, d) columns (a uniform sample of :data:`MAX_COLUMN_SETS` of them when
    there are more).

    Parameters
    ----------
    data_codes, release_codes : array_like of int, shape (rows, d)
        Each column's cell (bin or category) in ``0 .. sizes[j] − 1``.
    sizes : sequence of int, length d
    data_counts, release_counts : array_like of int ≥ 0, optional
        Multiplicities of the rows (frequency tables).
    k : int ≥ 1
    rng : numpy.random.Generator, optional
        Draws the sampled column sets; needed only when there are more than :data:`MAX_COLUMN_SETS`.

    Returns
    -------
    float in [0, 1000]
    """
    return _KMarginal(data_codes, sizes, data_counts, k, rng).score(release_codes, release_counts)


def subsample_k_marginal_score(data_codes, sizes, m: int, rng: np.random.Generator, *, data_counts=None,
                               k: int = DEFAULT_K) -> float:
    """The 3-way marginal score of a uniform subsample of ``min(m, n)`` data records (without
    replacement): the reference of a release of size ``m`` (``rng`` also draws the column sets
    when they are sampled)."""
    rng = check_rng(rng)
    return _KMarginal(data_codes, sizes, data_counts, k, rng).reference(check_integer("m", m, minimum=1), rng)


# ================================================================ matches
class _Rows:
    """Exact keys of the data's distinct rows: an int64 per row (each column's value by its rank
    among the data's values, −1 when a release value is not one of them), bytes when the
    product of the columns' distinct counts passes 2^62."""

    def __init__(self, rows, counts):
        r = np.asarray(rows, dtype=np.float64).reshape(len(rows), -1) + 0.0
        self.values = [np.unique(r[:, j]) for j in range(r.shape[1])]
        self.sizes = [v.size for v in self.values]
        self.exact = math.prod(self.sizes) >= 2 ** 62 or any(np.isnan(v).any() for v in self.values)
        keys = self.keys(r)
        weights = np.ones(keys.size, dtype=np.int64) if counts is None else np.asarray(counts, dtype=np.int64)
        self.distinct, inverse = np.unique(keys, return_inverse=True)
        self.counts = np.bincount(inverse.ravel(), weights=weights, minlength=self.distinct.size).astype(np.int64)
        self.unique = self.distinct[self.counts == 1]

    def keys(self, rows) -> np.ndarray:
        r = np.ascontiguousarray(np.asarray(rows, dtype=np.float64).reshape(len(rows), -1) + 0.0)
        if self.exact:
            return r.view(np.dtype((np.void, r.dtype.itemsize * r.shape[1]))).ravel()
        key = np.zeros(r.shape[0], dtype=np.int64)
        found = np.ones(r.shape[0], dtype=bool)
        for j, values in enumerate(self.values):
            pos = np.minimum(np.searchsorted(values, r[:, j]), values.size - 1)
            found &= values[pos] == r[:, j]
            key = key * self.sizes[j] + pos
        return np.where(found, key, -1)

    def unique_exact_match(self, release) -> float:
        return math.nan if self.unique.size == 0 else float(np.isin(self.unique, self.keys(release)).mean())

    def apparent_match(self, release) -> float:
        return float(np.isin(self.keys(release), self.distinct).mean())


def unique_exact_match(data_rows, release_rows, *, data_counts=None) -> tuple[float, int]:
    """Share of the data's unique records (count 1 among the n) that appear exactly in the release.

    Returns
    -------
    (share, unique_records) : share NaN when no record is unique.
    """
    rows = _Rows(data_rows, data_counts)
    return rows.unique_exact_match(release_rows), int(rows.unique.size)


def apparent_match(data_rows, release_rows) -> float:
    """The row match share: the share of the release rows equal to some data record (not SDNist's
    apparent match: :func:`sdnist_apparent_match`)."""
    return _Rows(data_rows, None).apparent_match(release_rows)


# ================================================================ pMSE
def _logistic_fit(X: np.ndarray, y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Fitted probabilities of the weighted logistic regression of ``y`` on ``X`` (with an
    intercept), by Newton's method with step halving; a separable design converges to the
    limiting 0/1 propensities."""
    A = np.column_stack([np.ones(X.shape[0]), X])
    beta = np.zeros(A.shape[1])

    def loss(eta):
        return float(np.sum(w * (np.logaddexp(0.0, eta) - y * eta)))

    eta = A @ beta
    current = loss(eta)
    for _ in range(_NEWTON_STEPS):
        p = 0.5 * (1.0 + np.tanh(0.5 * eta))
        grad = A.T @ (w * (p - y))
        hess = (A * (w * p * (1.0 - p))[:, None]).T @ A
        step = np.linalg.lstsq(hess + 1e-12 * np.eye(A.shape[1]) * max(1.0, float(np.trace(hess))), grad,
                               rcond=None)[0]
        t = 1.0
        while t > 1e-10:
            trial = A @ (beta - t * step)
            value = loss(trial)
            if value <= current:
                break
            t *= 0.5
        if t <= 1e-10:
            break
        beta, eta = beta - t * step, trial
        gain, current = current - value, value
        if gain <= 1e-13 * max(1.0, abs(current)):
            break
    return 0.5 * (1.0 + np.tanh(0.5 * eta))


def propensity_mse(data_design, release_design, *, data_counts=None) -> float:
    """pMSE of a release: mean over the n + m stacked rows of :math:`(\\hat p_i - c)^2`,
    c = m/(n + m), p̂ from a logistic regression of "is a release row" on the design columns.

    Parameters
    ----------
    data_design : array_like, shape (k, p)
        The data's rows as regression inputs (numeric columns, one-hot categories; no intercept).
    release_design : array_like, shape (m, p)
    data_counts : array_like of int ≥ 1, shape (k,), optional
        Multiplicities of the data rows.
    """
    X0 = np.asarray(data_design, dtype=np.float64).reshape(len(data_design), -1)
    X1 = np.asarray(release_design, dtype=np.float64).reshape(len(release_design), -1)
    w0 = np.ones(X0.shape[0]) if data_counts is None else np.asarray(data_counts, dtype=np.float64)
    n, m = float(w0.sum()), float(X1.shape[0])
    X = np.vstack([X0, X1])
    y = np.concatenate([np.zeros(X0.shape[0]), np.ones(X1.shape[0])])
    w = np.concatenate([w0, np.ones(X1.shape[0])])
    spread = X.std(axis=0)
    keep = spread > 0
    X = (X[:, keep] - X[:, keep].mean(axis=0)) / spread[keep]
    p = _logistic_fit(X, y, w)
    c = m / (n + m)
    return float(np.sum(w * (p - c) ** 2) / (n + m))


def pmse_null(parameters: int, n: int, m: int) -> float:
    """The expected pMSE of a logistic model with ``parameters`` coefficients (the intercept
    included) when data and release come from one distribution: :math:`(p - 1)(1 - c)^2 c/N`,
    N = n + m, c = m/N (Snoke et al. 2018; docs/peers.md §4). The pMSE ratio,
    pMSE over this, compares releases of different m (about 1: indistinguishable).

    Parameters
    ----------
    parameters : int ≥ 1
    n, m : int ≥ 1
        Records of the data and of the release.
    """
    p = check_integer("parameters", parameters, minimum=1)
    n = check_integer("n", n, minimum=1)
    m = check_integer("m", m, minimum=1)
    total = n + m
    c = m / total
    return (p - 1) * (1.0 - c) ** 2 * c / total


# ================================================================ adapters
def _kept_levels(codes: np.ndarray, size: int, counts=None) -> np.ndarray:
    """The categories of a column that get an indicator in pMSE's design: 1 .. size − 1 (the
    first category is the baseline), or the :data:`MAX_LEVELS` most frequent of them in the
    data (``codes`` with multiplicities ``counts``) when there are more."""
    levels = np.arange(1, size)
    if levels.size <= MAX_LEVELS:
        return levels
    freq = np.bincount(codes, weights=counts, minlength=size)[1:]
    return np.sort(levels[np.argsort(-freq, kind="stable")[:MAX_LEVELS]])


def _one_hot(codes: np.ndarray, kept: np.ndarray) -> np.ndarray:
    return (codes[:, None] == kept[None, :]).astype(np.float64)


def _design_columns(widths, rng: np.random.Generator) -> list[int]:
    """Every column of pMSE's design, or, when their widths add up past
    :data:`MAX_DESIGN_WIDTH`, the columns of a uniform random order that fit in it."""
    if sum(widths) <= MAX_DESIGN_WIDTH:
        return list(range(len(widths)))
    chosen, used = [], 0
    for j in rng.permutation(len(widths)):
        if used + widths[j] <= MAX_DESIGN_WIDTH:
            chosen.append(int(j))
            used += widths[j]
    return sorted(chosen)


def _unit_box_codes(rows: np.ndarray, bins: int, levels) -> tuple[np.ndarray, list[int]]:
    """Cell of each value (bins on numeric axes, category codes with K for a new one)."""
    codes = np.empty(rows.shape, dtype=np.int64)
    sizes = []
    for j in range(rows.shape[1]):
        size = None if levels is None else levels[j]
        if size is None:
            codes[:, j] = np.minimum((rows[:, j] * bins).astype(np.int64), bins - 1)
            sizes.append(bins)
        else:
            codes[:, j] = category_codes(rows[:, j], size)
            sizes.append(size + 1)
    return codes, sizes


def _unit_box_design(rows: np.ndarray, codes: np.ndarray, kept, columns) -> np.ndarray:
    """pMSE's design of the chosen ``columns``: a numeric column (``kept[j]`` None) as it is,
    a categorical one by the indicators of its ``kept[j]`` categories."""
    parts = [rows[:, j:j + 1] if kept[j] is None else _one_hot(codes[:, j], kept[j]) for j in columns]
    return np.hstack(parts) if parts else np.empty((rows.shape[0], 0))


def yardstick_runs(atoms, counts, releases, *, bins: int, levels=None, rng: np.random.Generator,
                   k: int = DEFAULT_K) -> pd.DataFrame:
    """The yardsticks of every run of a comparison, on the unit box (docs/quality.md §8).

    Parameters
    ----------
    atoms : array_like, shape (k,) or (k, d), values in [0, 1]
        The data's rows (a frequency table with ``counts``); categorical columns at their
        category positions (:func:`core.mechanisms.category_positions`).
    counts : array_like of int ≥ 1, shape (k,)
    releases : array_like, shape (runs, m) or (runs, m, d)
    bins : int ≥ 1
        Public bins of each numeric column (the histograms' cells).
    levels : sequence of (None or int), optional
        Per column ``None`` (numeric) or its number of categories.
    rng : numpy.random.Generator
        Draws the reference subsample of each run.
    k : int

    Returns
    -------
    pandas.DataFrame
        One row per run: ``marginal3, marginal3_reference`` (the 3-way marginal score and its
        reference), ``UEM, row_match, pMSE_logistic, pMSE_null, pMSE_ratio`` (the project's; the
        logistic pMSE, its null reference :func:`pmse_null` and their ratio), ``SDNist_k_marginal,
        SDNist_pMSE`` (SDNist's own, :func:`sdnist_k_marginal`, :func:`sdnist_pmse`);
        ``attrs`` holds ``k_marginal_sets`` / ``k_marginal_sets_total`` (column sets scored, of
        how many: fewer is a uniform sample drawn with ``rng``) and ``pMSE_columns`` /
        ``pMSE_columns_total`` (the same for pMSE's design).
    """
    x = check_unit_data(atoms)
    x = x.reshape(x.shape[0], -1)
    c = check_row_counts(counts, x.shape[0], minimum=1)
    x, c = distinct_rows(x if x.shape[1] > 1 else x[:, 0], c)
    x = x.reshape(x.shape[0], -1)
    rng = check_rng(rng)
    d = x.shape[1]
    z_all = np.asarray(releases, dtype=np.float64)
    z_all = z_all.reshape(z_all.shape[0], z_all.shape[1], d)
    x_codes, sizes = _unit_box_codes(x, bins, levels)
    tables, matches = _KMarginal(x_codes, sizes, c, k, rng), _Rows(x, c)
    kept = [None if levels is None or levels[j] is None else _kept_levels(x_codes[:, j], sizes[j], c)
            for j in range(d)]
    columns = _design_columns([1 if v is None else v.size for v in kept], rng)
    x_design = _unit_box_design(x, x_codes, kept, columns)
    rows = []
    # SDNist's own yardsticks: numeric columns continuous (binned: the unit box's range 1 would
    # otherwise pass SDNist's "range ≤ 20 bins: leave it" test), categories by their positions.
    names = [f"c{j}" for j in range(d)]
    continuous = [names[j] for j in range(d) if levels is None or levels[j] is None]
    target = pd.DataFrame(x, columns=names)
    for z in z_all:
        z_codes, _ = _unit_box_codes(z, bins, levels)
        deid = pd.DataFrame(z, columns=names)
        tb, db = sdnist_bin(target, deid, continuous, ranges={j: (0.0, math.inf) for j in continuous},
                            target_counts=c)
        z_design = _unit_box_design(z, z_codes, kept, columns)
        pmse = propensity_mse(x_design, z_design, data_counts=c)
        # the null reference counts the design columns the fit keeps (those that vary), and the intercept
        null = pmse_null(1 + int(np.count_nonzero(np.vstack([x_design, z_design]).std(axis=0) > 0)),
                         int(c.sum()), z.shape[0])
        rows.append({"marginal3": tables.score(z_codes), "marginal3_reference": tables.reference(z.shape[0], rng),
                     "UEM": matches.unique_exact_match(z), "row_match": matches.apparent_match(z),
                     "pMSE_logistic": pmse, "pMSE_null": null, "pMSE_ratio": pmse / null if null > 0 else math.nan,
                     "SDNist_k_marginal": sdnist_k_marginal(tb, db, target_counts=c),
                     "SDNist_pMSE": sdnist_pmse(target, deid, target_counts=c)})
    out = pd.DataFrame(rows, columns=["marginal3", "marginal3_reference", "UEM", "row_match", "pMSE_logistic",
                                      "pMSE_null", "pMSE_ratio", "SDNist_k_marginal", "SDNist_pMSE"])
    out.attrs.update(k_marginal_sets=len(tables.subsets), k_marginal_sets_total=tables.total,
                     pMSE_columns=len(columns), pMSE_columns_total=d)
    return out


def frame_yardsticks(real: pd.DataFrame, synthetic: pd.DataFrame, kinds: Mapping[str, str], *, real_counts=None,
                     bins: int = 10, bounds: Mapping | None = None, rng: np.random.Generator | None = None,
                     k: int = DEFAULT_K) -> Yardsticks:
    """The yardsticks of a release given as tables (the quality report's inputs, docs/quality.md).

    Parameters
    ----------
    real, synthetic : pandas.DataFrame with every column of ``kinds``
        ``real`` may be a frequency table (its distinct rows) with ``real_counts``.
    kinds : mapping column → 'numeric' | 'categorical'
    real_counts : array_like of int ≥ 1, optional
    bins : int ≥ 1
        Equal bins of each numeric column on its bounds (3-way marginal score); a missing cell is a bin of its own.
    bounds : mapping column → (lo, hi), optional
        The public bounds of the numeric columns (default: the range of the real column,
        itself a statistic of the data: the yardsticks are for the curator only).
    rng : numpy.random.Generator, optional
        Draws the reference subsample (default ``numpy.random.default_rng(0)``: a fixed reference).
    k : int
    """
    bins = check_integer("bins", bins, minimum=1)
    rng = np.random.default_rng(0) if rng is None else check_rng(rng)
    names = list(kinds)
    both = pd.concat([real[names], synthetic[names]], ignore_index=True)
    n_rows = len(real)
    exact = np.empty((len(both), len(names)), dtype=np.float64)
    codes = np.empty((len(both), len(names)), dtype=np.int64)
    sizes, parts = [], []
    c = None if real_counts is None else np.asarray(real_counts, dtype=np.int64)
    for j, name in enumerate(names):
        col = both[name]
        exact[:, j] = pd.factorize(col.astype(object), use_na_sentinel=False)[0]
        if kinds[name] == "numeric":
            v = pd.to_numeric(col, errors="coerce").to_numpy(dtype=np.float64)
            lo, hi = (bounds or {}).get(name, (np.nanmin(v[:n_rows]), np.nanmax(v[:n_rows])))
            span = (hi - lo) or 1.0
            missing = np.isnan(v)
            codes[:, j] = np.where(missing, bins, np.clip(np.floor((np.nan_to_num(v) - lo) / span * bins), 0, bins - 1))
            sizes.append(bins + 1)
            parts.append((np.column_stack([np.nan_to_num(v), missing]) if missing.any() else v[:, None], None))
        else:
            codes[:, j] = exact[:, j]
            sizes.append(int(exact[:, j].max()) + 1)
            parts.append((None, _kept_levels(codes[:n_rows, j], sizes[-1], c)))
    m = len(synthetic)
    tables = _KMarginal(codes[:n_rows], sizes, c, k, rng)
    k_marginal = tables.score(codes[n_rows:])
    reference = tables.reference(check_integer("m", m, minimum=1), rng)
    columns = _design_columns([part.shape[1] if kept is None else kept.size for part, kept in parts], rng)
    design = np.hstack([parts[j][0] if parts[j][1] is None else _one_hot(codes[:, j], parts[j][1]) for j in columns])
    uem, unique = unique_exact_match(exact[:n_rows], exact[n_rows:], data_counts=c)
    sd_k, sd_p = _frame_sdnist(real[names], synthetic[names], kinds, c, bounds)
    return Yardsticks(
        sdnist_k_marginal=sd_k, sdnist_pmse=sd_p,
        k=min(k, len(names)), k_marginal=k_marginal, k_marginal_reference=reference,
        unique_exact_match=uem, unique_records=unique, apparent_match=apparent_match(exact[:n_rows], exact[n_rows:]),
        pmse=propensity_mse(design[:n_rows], design[n_rows:], data_counts=c),
        k_marginal_sets=len(tables.subsets), k_marginal_sets_total=tables.total,
        pmse_columns=len(columns), pmse_columns_total=len(names))


#: Columns of :func:`yardstick_table`.
_TABLE_COLUMNS = ["label", "guarantee", "m", "marginal3", "marginal3_reference", "UEM", "row_match", "pMSE_logistic"]


def yardstick_table(summary: pd.DataFrame) -> pd.DataFrame:
    """One row per mechanism with its guarantee, m and mean yardsticks, from the summary of a
    comparison run with ``yardsticks=True`` (:func:`core.evaluation.compare.comparison_summary`).

    Raises
    ------
    ValueError
        The summary has no yardsticks.
    """
    if not isinstance(summary, pd.DataFrame) or "marginal3" not in summary.columns:
        raise ValueError("summary must be comparison_summary of a comparison run with yardsticks=True")
    rows = summary[summary["mechanism"] != "confidential"].drop_duplicates("mechanism")
    # SDNist's own columns when the comparison kept them (yardstick_runs computes them)
    extra = [c for c in ("pMSE_null", "pMSE_ratio", "SDNist_k_marginal", "SDNist_pMSE") if c in summary.columns]
    return rows[_TABLE_COLUMNS + extra].reset_index(drop=True)


# ================================================================ SDNist v2, exactly
# The functions below follow NIST SDNist v2.5 line by line (github.com/usnistgov/SDNist, commit
# f048b1c, 2025-07-14; PyPI's latest, 2.4, has no 30-feature rule and bins by percentile ranks),
# docs/quality.md §9. They take the target (confidential) and deidentified tables as
# pandas.DataFrames over the same columns; ``target_counts`` makes the target a frequency table.

#: Bins of a continuous feature (``bin_data(..., n_bins=20)``, sdnist/report/dataset/binning.py).
SDNIST_BINS = 20
#: Below this many features the k-marginal scores every pair (``get_marginal_pairs``, kmarginal.py).
SDNIST_PAIR_LIMIT = 30
#: Pairs drawn at or past :data:`SDNIST_PAIR_LIMIT` features (``KMarginal.N_PERMUTATIONS``).
SDNIST_SAMPLED_PAIRS = 200
#: Depth of pMSE's classification tree (``DecisionTreeClassifier(max_depth=6)``, propensity.py).
SDNIST_TREE_DEPTH = 6
#: scikit-learn's tree: values closer than this are one value (``FEATURE_THRESHOLD``, _splitter.pyx).
_FEATURE_THRESHOLD = 1e-7
#: Cells (columns × rows) of one block of pMSE's tree search.
_TREE_BLOCK = 2 ** 21
#: The code of a missing value in SDNist's binned tables (below every bin, as its null codes are).
SDNIST_NULL_CODE = -1


def _sdnist_frames(target, deid, target_counts):
    if not isinstance(target, pd.DataFrame) or not isinstance(deid, pd.DataFrame):
        raise ValueError("target and deid must be pandas DataFrames")
    names = list(target.columns)
    if not names or sorted(map(str, names)) != sorted(map(str, deid.columns)) or len(set(names)) != len(names):
        raise ValueError("target and deid must have the same, distinct, columns (at least one)")
    if len(target) == 0 or len(deid) == 0:
        raise ValueError("target and deid must have rows")
    w = (np.ones(len(target), dtype=np.int64) if target_counts is None
         else check_row_counts(target_counts, len(target), minimum=1).astype(np.int64))
    return names, target.reset_index(drop=True), deid[names].reset_index(drop=True), w


def _higher_percentiles(values: np.ndarray, counts: np.ndarray, q: list[float]) -> np.ndarray:
    """``np.percentile(np.repeat(values, counts), q, method='higher')`` without the repeat."""
    order = np.argsort(values, kind="stable")
    v, c = values[order], counts[order]
    # Positions in the repeated sorted array: numpy's own virtual index for n records.
    pos = np.percentile(np.arange(int(c.sum())), q, method="higher").astype(np.int64)
    return v[np.searchsorted(np.cumsum(c), pos, side="right")]


def sdnist_bin(target: pd.DataFrame, deid: pd.DataFrame, continuous, *, ranges: Mapping | None = None,
               target_counts=None, n_bins: int = SDNIST_BINS) -> tuple[pd.DataFrame, pd.DataFrame]:
    """SDNist's binning of the tables its k-marginal compares (``bin_continuous_feature``,
    sdnist/report/dataset/binning.py; docs/quality.md §9).

    A continuous column whose range ``max − min`` (``ranges``, SDNist's data dictionary;
    default the target's) is at most ``n_bins`` is left as it is. Otherwise, with b = n_bins,
    one bin fewer when the column has missing values (SDNist's null code), one fewer when the
    deidentified maximum exceeds the target's, one fewer when its minimum is below the target's:
    the edges are the target's percentiles 0, 100/b, …, 100(b − 1)/b (``method='higher'``,
    distinct), the target's maximum and those deidentified extremes; cells
    ``pandas.cut(include_lowest=True)`` numbered 0, 1, … Missing values get
    :data:`SDNIST_NULL_CODE`. Other columns: their categories coded 0, 1, … (sorted; missing
    values coded :data:`SDNIST_NULL_CODE`).

    Returns
    -------
    (target_codes, deid_codes) : pandas.DataFrame of int64
    """
    names, t, d, w = _sdnist_frames(target, deid, target_counts)
    n_bins = check_integer("n_bins", n_bins, minimum=2)
    continuous = set(continuous)
    if not continuous <= set(names):
        raise ValueError("continuous must name columns of target")
    tb, db = {}, {}
    for name in names:
        if name not in continuous:
            both = pd.concat([t[name], d[name]], ignore_index=True)
            codes = _sorted_codes(both)
            tb[name], db[name] = codes[:len(t)], codes[len(t):]
            continue
        tv = pd.to_numeric(t[name], errors="raise").to_numpy(dtype=np.float64)
        dv = pd.to_numeric(d[name], errors="raise").to_numpy(dtype=np.float64)
        tn, dn = np.isnan(tv), np.isnan(dv)
        if tn.all():
            raise ValueError(f"continuous column {name!r} has no value in target")
        lo, hi = (ranges or {}).get(name, (np.nanmin(tv), np.nanmax(tv)))
        tc = np.full(tv.size, SDNIST_NULL_CODE, dtype=np.int64)
        dc = np.full(dv.size, SDNIST_NULL_CODE, dtype=np.int64)
        if hi - lo <= n_bins:             # SDNist leaves a short-ranged column unbinned
            tc[~tn], dc[~dn] = tv[~tn], dv[~dn]
            tb[name], db[name] = tc, dc
            continue
        b = n_bins - int(tn.any() or dn.any())
        t_min, t_max = tv[~tn].min(), tv[~tn].max()
        d_min = dv[~dn].min() if (~dn).any() else t_min
        d_max = dv[~dn].max() if (~dn).any() else t_max
        extra = [t_max]
        if d_max > t_max:
            b -= 1
            extra.append(d_max)
        if d_min < t_min:
            extra = [d_min] + extra
            b -= 1
        q = [i * (100 / b) for i in range(b)]
        edges = list(np.unique(_higher_percentiles(tv[~tn], w[~tn], q))) + extra
        if edges[-1] == edges[-2]:
            edges = edges[:-1]
        edges = sorted(edges)
        # pandas.cut(bins=edges, labels=False, include_lowest=True, duplicates='drop'): cells
        # [e0, e1], (e1, e2], … of the distinct edges; every value lies in [e0, e_last] by construction.
        e = np.unique(edges)
        tc[~tn] = np.maximum(np.searchsorted(e, tv[~tn], side="left") - 1, 0)
        dc[~dn] = np.maximum(np.searchsorted(e, dv[~dn], side="left") - 1, 0)
        tb[name], db[name] = tc, dc
    return pd.DataFrame(tb, columns=names), pd.DataFrame(db, columns=names)


def _sorted_codes(values: pd.Series) -> np.ndarray:
    """Codes 0, 1, … of the sorted categories (in order of appearance when they do not sort),
    missing values −1 (:data:`SDNIST_NULL_CODE`)."""
    try:
        return pd.factorize(values, sort=True)[0].astype(np.int64)
    except TypeError:
        return pd.factorize(values)[0].astype(np.int64)


def sdnist_marginal_pairs(names, *, seed: int = 0) -> list[tuple]:
    """The column pairs of SDNist's k-marginal (``get_marginal_pairs``, kmarginal.py): the
    names sorted; one name: itself twice; fewer than :data:`SDNIST_PAIR_LIMIT`: every pair
    (i < j); else :data:`SDNIST_SAMPLED_PAIRS` pairs drawn with replacement by
    ``numpy.random.default_rng(seed).choice(names, size=2)`` (a pair may repeat a name)."""
    names = sorted(names)
    if len(names) == 1:
        return [(names[0], names[0])]
    if len(names) < SDNIST_PAIR_LIMIT:
        return list(itertools.combinations(names, 2))
    rng = np.random.default_rng(seed=seed)
    return [tuple(names[i] for i in rng.choice(len(names), size=2)) for _ in range(SDNIST_SAMPLED_PAIRS)]


def sdnist_k_marginal(target: pd.DataFrame, deid: pd.DataFrame, *, target_counts=None, deid_counts=None,
                      seed: int = 0) -> float:
    """SDNist's k-marginal score (``KMarginal._compute_score``, kmarginal.py; docs/quality.md §9):
    over the pairs of :func:`sdnist_marginal_pairs`, the L1 distance Σ|t − s| of the target's
    and the deidentified table's normalised 2-way tables (cells their values: pass binned
    tables, :func:`sdnist_bin`); score = (2 − mean L1)·500 = 1000·(1 − mean TV). SDNist's
    report prints ``int(score)``. (Without a group feature, as SDNist runs on data without one.)

    Returns
    -------
    float in [0, 1000]
    """
    names, t, d, w = _sdnist_frames(target, deid, target_counts)
    v = (np.ones(len(d), dtype=np.int64) if deid_counts is None
         else check_row_counts(deid_counts, len(d), minimum=0).astype(np.int64))
    if v.sum() == 0:
        raise ValueError("deid_counts must not all be 0")
    both = pd.concat([t, d], ignore_index=True)
    codes = np.column_stack([pd.factorize(both[c], use_na_sentinel=False)[0] for c in names]).astype(np.int64)
    sizes = [int(codes[:, j].max()) + 1 for j in range(len(names))]
    index = {c: j for j, c in enumerate(names)}
    l1 = []
    for a, b in sdnist_marginal_pairs(names, seed=seed):
        subset = (index[a],) if a == b else (index[a], index[b])
        l1.append(2.0 * _tv(_table(codes[:len(t)], w, subset, sizes), _table(codes[len(t):], v, subset, sizes)))
    return float((2.0 - np.mean(l1)) * 500.0)


def sdnist_unique_exact_match(target: pd.DataFrame, deid: pd.DataFrame, *, target_counts=None
                              ) -> tuple[int, float, int, float]:
    """SDNist's unique exact matches (``unique_exact_matches``, unique_exact_matches.py):
    the target records unique on all columns, and how many of them appear in the
    deidentified table (missing values equal to each other, as pandas matches them).

    Returns
    -------
    (matched, percent_matched, unique, percent_unique) : percents rounded to 2 decimals as
        SDNist reports them; percent_matched 0 when no record is unique.
    """
    names, t, d, w = _sdnist_frames(target, deid, target_counts)
    grouped = t.assign(_w=w).groupby(names, dropna=False, sort=False)["_w"].sum().reset_index()
    unique = grouped[grouped["_w"] == 1][names]
    matched = len(unique.merge(d.drop_duplicates(subset=names), how="inner", on=names))
    n_unique = len(unique)
    pct = round(matched / n_unique * 100, 2) if n_unique else 0
    return matched, pct, n_unique, round(n_unique / int(w.sum()) * 100, 2)


@dataclass(frozen=True)
class SDNistApparentMatch:
    """SDNist's apparent match distribution (see :func:`sdnist_apparent_match`).

    Attributes
    ----------
    matched : int
        Records unique on the quasi-identifiers in both tables and equal on them.
    percent : float
        ``round(100·matched/n, 2)``, n the target's records.
    similarity : numpy.ndarray
        Per matched record, the percentage of the other columns on which the two agree.
    """

    matched: int
    percent: float
    similarity: np.ndarray


def sdnist_apparent_match(target: pd.DataFrame, deid: pd.DataFrame, quasi_identifiers, *, exclude=(),
                          target_counts=None) -> SDNistApparentMatch:
    """SDNist's apparent match distribution (``cellchange``, apparent_match_dist.py, run by
    sdnist/report/score/privacy.py on the deidentified and target tables): the deidentified
    rows unique on the quasi-identifiers among the deidentified rows, joined on them to the
    target records unique on them among the target's; for each pair, 100 × the share of the
    other columns (not quasi-identifiers, not ``exclude``) with equal values (pandas ``==``: a
    missing value equals nothing; NaN when no column is left). SDNist's quasi-identifiers on
    the ACS excerpts: SEX, MSP, RAC1P, OWN_RENT, EDU, PUMA, INDP_CAT, HISP.
    """
    names, t, d, w = _sdnist_frames(target, deid, target_counts)
    quasi = list(quasi_identifiers)
    if not quasi or not set(quasi) <= set(names):
        raise ValueError("quasi_identifiers must name columns of target")
    syn = d.drop_duplicates(subset=quasi, keep=False)
    per_group = t.assign(_w=w).groupby(quasi, dropna=False, sort=False)["_w"].transform("sum")
    tar = t[per_group.to_numpy() == 1]
    matched = syn.merge(tar, how="inner", on=quasi)
    others = [c for c in names if c not in set(quasi) | set(exclude)]
    agree = np.zeros(len(matched))
    for c in others:
        agree += (matched[f"{c}_x"] == matched[f"{c}_y"]).to_numpy(dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        similarity = agree / len(others) * 100 if others else np.full(len(matched), np.nan)
    return SDNistApparentMatch(len(matched), round(len(matched) / int(w.sum()) * 100, 2), similarity)


def _tree_propensities(X: np.ndarray, w0: np.ndarray, w1: np.ndarray, depth: int) -> np.ndarray:
    """The leaf probabilities P(deid) of scikit-learn's ``DecisionTreeClassifier(max_depth=depth)``
    (Gini, best splitter, every feature, split while a node is impure, has ≥ 2 records and is
    above ``depth``) grown on distinct rows ``X`` carrying w0 target and w1 deidentified records."""
    p = np.empty(X.shape[0])
    eps = np.finfo(np.float64).eps
    d = X.shape[1]
    # Each column's order of the rows, once; a node's rows in that order are a mask of it.
    orders = np.argsort(X, axis=0, kind="stable").T.astype(np.int32)   # (d, rows); rows < 2^31

    def grow(rows: np.ndarray, level: int) -> None:
        a, b = w0[rows].sum(), w1[rows].sum()
        total = a + b
        gini = 1.0 - ((a / total) ** 2 + (b / total) ** 2)
        if level >= depth or total < 2 or gini <= eps or rows.size < 2:
            p[rows] = b / total
            return
        inside = np.zeros(X.shape[0], dtype=bool)
        inside[rows] = True
        best, split = -np.inf, None
        # Columns in blocks of about _TREE_BLOCK cells (memory follows the block, not d × rows).
        step = max(1, _TREE_BLOCK // rows.size)
        for lo in range(0, d, step):
            block = orders[lo:lo + step]
            node = block[inside[block]].reshape(block.shape[0], rows.size)   # each column's order
            x = X[node, np.arange(lo, lo + block.shape[0])[:, None]]
            valid = x[:, 1:] > x[:, :-1] + _FEATURE_THRESHOLD    # a split after position i
            if not valid.any():
                continue
            la, lb = np.cumsum(w0[node], axis=1)[:, :-1], np.cumsum(w1[node], axis=1)[:, :-1]
            ra, rb = a - la, b - lb
            nl, nr = la + lb, ra + rb
            # scikit-learn's proxy −n_R·gini_R − n_L·gini_L, in its floating-point order (near-equal
            # splits are then ranked alike)
            with np.errstate(invalid="ignore", divide="ignore"):
                proxy = (-nr * (1.0 - (ra * ra + rb * rb) / (nr * nr))
                         - nl * (1.0 - (la * la + lb * lb) / (nl * nl)))
            proxy = np.where(valid, proxy, -np.inf)
            at = np.argmax(proxy, axis=1)                          # each column's first best split
            j = int(np.argmax(proxy[np.arange(block.shape[0]), at]))   # ties: the first column
            if proxy[j, at[j]] > best:
                best, split = proxy[j, at[j]], (node[j, :at[j] + 1], node[j, at[j] + 1:])
        if split is None:
            p[rows] = b / total
            return
        grow(split[0], level + 1)
        grow(split[1], level + 1)

    grow(np.arange(X.shape[0]), 0)
    return p


def sdnist_pmse(target: pd.DataFrame, deid: pd.DataFrame, *, target_counts=None,
                depth: int = SDNIST_TREE_DEPTH) -> float:
    """SDNist's pMSE (``PropensityMSE.pmse``, propensity.py; docs/quality.md §9): stack target
    (label 0) and deidentified rows (label 1), fit scikit-learn's
    ``DecisionTreeClassifier(max_depth=6)`` (Gini, defaults) on the columns as numbers (the
    values cast to float32, as scikit-learn does), p̂ its predicted P(label 1) of each row,
    c = m/(n + m): pMSE = (1/(n + m)) Σ (p̂ᵢ − c)². Columns must be numeric (SDNist's
    transformed tables: category codes, null codes); NaN is refused. The tree is grown here in
    NumPy, equal to scikit-learn's except where two splits improve the Gini impurity equally:
    scikit-learn visits the columns in a random order (SDNist sets no ``random_state``), here
    the first column wins.
    """
    names, t, d, w = _sdnist_frames(target, deid, target_counts)
    X = np.vstack([t[names].to_numpy(dtype=np.float64), d[names].to_numpy(dtype=np.float64)])
    if np.isnan(X).any():
        raise ValueError("target and deid must be numeric without NaN (SDNist codes missing values)")
    X = X.astype(np.float32).astype(np.float64)
    key = np.ascontiguousarray(X).view(np.dtype((np.void, 8 * X.shape[1]))).ravel()
    distinct, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    inverse = inverse.ravel()
    n, m = int(w.sum()), len(d)
    label = np.r_[np.zeros(len(t)), np.ones(len(d))]
    weight = np.r_[w, np.ones(len(d))]
    w0 = np.bincount(inverse, weights=weight * (1 - label), minlength=distinct.size)
    w1 = np.bincount(inverse, weights=weight * label, minlength=distinct.size)
    p = _tree_propensities(X[first], w0, w1, check_integer("depth", depth, minimum=1))
    c = m / (n + m)
    return float(np.sum((w0 + w1) * (p - c) ** 2) / (n + m))


def _frame_sdnist(real: pd.DataFrame, synthetic: pd.DataFrame, kinds, counts, bounds) -> tuple[float, float]:
    """SDNist's k-marginal and pMSE of a release given as tables (:func:`frame_yardsticks`):
    numeric columns continuous on their public ``bounds`` (SDNist's data dictionary range;
    default the data's), categorical ones by their categories; for pMSE numeric values as they
    are (a missing one at min(0, lower bound) − 1, below every value, as SDNist codes nulls) and
    categories by their sorted codes (missing −1)."""
    continuous = [name for name in kinds if kinds[name] == "numeric"]
    real, synthetic = real.copy(), synthetic.copy()
    ranges = {}
    for name in continuous:
        real[name] = pd.to_numeric(real[name], errors="coerce")
        synthetic[name] = pd.to_numeric(synthetic[name], errors="coerce")
        if real[name].isna().all():
            return math.nan, math.nan
        lo, hi = (bounds or {}).get(name, (real[name].min(), real[name].max()))
        ranges[name] = (float(lo), float(hi))
    tb, db = sdnist_bin(real, synthetic, continuous, ranges=ranges, target_counts=counts)
    score = sdnist_k_marginal(tb, db, target_counts=counts)
    t, d = tb.copy(), db.copy()
    for name in continuous:
        null = min(0.0, ranges[name][0]) - 1.0
        t[name], d[name] = real[name].fillna(null).to_numpy(), synthetic[name].fillna(null).to_numpy()
    return score, sdnist_pmse(t, d, target_counts=counts)
