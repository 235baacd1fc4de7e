"""The field's yardsticks of a synthetic release, as NIST's SDNist defines them (docs/peers.md §4).

Computed against the confidential data, so they are for the curator only (like the quality
report, docs/quality.md). Definitions (SDNist v2, ``sdnist/metrics``: ``kmarginal.py``,
``unique_exact_matches.py``, ``apparent_match_dist.py``, ``propensity.py``; Task et al.,
*SDNist: Synthetic Data Report Tool*, NIST CRC Data and Metrics Archive):

* **k-marginal score** (0–1000): for every set of k columns (k = 3, or all columns when
  fewer), numeric columns binned in the same public bins for data and release, the total
  variation :math:`TV = \\tfrac12\\sum|p_\\text{data} - p_\\text{release}|` of the
  normalised k-way tables; score = 1000·(1 − mean TV). SDNist draws 50 random column sets
  of its rank; here every set is used up to :data:`MAX_COLUMN_SETS` sets, and beyond that
  (wide tables: 200 columns hold 1 313 400 triples) a uniform sample of that many distinct
  sets, drawn with the caller's ``numpy.random.Generator``, so that the score is an unbiased
  estimate of the all-sets score at a bounded cost (the counts are in the result). The **reference** is the
  score of a uniform subsample of the data (without replacement) of the release's size m:
  what m true records would score (1000 at m = n).
* **Unique exact match (UEM)**: among the records that are unique in the data (on the
  released columns), the share that appears exactly in the release. A release that copies
  records (PYPP, the bootstrap) scores above 0; draws inside numeric cells almost never
  match a record exactly.
* **Apparent match**: the share of release rows equal to some data record (SDNist's
  apparent-match report works on quasi-identifiers; here every released column is one).
* **pMSE** (propensity mean squared error; Woo et al. 2009, Snoke et al. 2018): stack
  data and release with a label, fit a logistic regression of the label on the columns
  (numeric columns as they are, categorical ones one-hot, an intercept), p̂ the fitted
  propensities, c = m/(n + m): :math:`pMSE = \\operatorname{mean}_i(\\hat p_i - c)^2`
  over the n + m rows, from 0 (the model cannot tell them apart) to c(1 − c) (it separates
  them perfectly). (SDNist fits a depth-5 decision tree; the logistic
  model is the one of the pMSE literature.) The fit is Newton's method (IRLS) in NumPy.
  Its cost grows with the cube of the design's width, so the width is capped: a categorical
  column enters with at most :data:`MAX_LEVELS` indicators (its most frequent categories in
  the data; the rest share the baseline), and when the columns' widths add up past
  :data:`MAX_DESIGN_WIDTH`, the fit uses a uniformly drawn subset of whole columns that fits
  (the count is in the result).

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
    "Yardsticks",
    "apparent_match",
    "frame_yardsticks",
    "k_marginal_score",
    "propensity_mse",
    "subsample_k_marginal_score",
    "unique_exact_match",
    "yardstick_runs",
    "yardstick_table",
]

#: Order of the k-marginal score (SDNist's k-marginal uses 3-way tables).
DEFAULT_K = 3
_NEWTON_STEPS = 60
#: Column sets the k-marginal score scores at most; beyond, a uniform sample of this many distinct
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
        The order of the k-marginal tables.
    k_marginal, k_marginal_reference : float
        Scores in [0, 1000]; the reference is a uniform subsample of the data of size m.
    unique_exact_match : float
        Share in [0, 1] (NaN when the data hold no unique record).
    unique_records : int
        How many records are unique in the data.
    apparent_match : float
        Share of release rows equal to a data record.
    pmse : float
    k_marginal_sets, k_marginal_sets_total : int
        Column sets scored, and how many there are (fewer scored: a uniform sample of them).
    pmse_columns, pmse_columns_total : int
        Columns in pMSE's design, and how many there are (fewer: a uniform sample of them).
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

    def to_dict(self) -> dict:
        return {"k": self.k, "k_marginal": self.k_marginal, "k_marginal_reference": self.k_marginal_reference,
                "k_marginal_sets": self.k_marginal_sets, "k_marginal_sets_total": self.k_marginal_sets_total,
                "unique_exact_match": self.unique_exact_match, "unique_records": self.unique_records,
                "apparent_match": self.apparent_match, "pMSE": self.pmse, "pMSE_columns": self.pmse_columns,
                "pMSE_columns_total": self.pmse_columns_total}


# ================================================================ k-marginal
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
    """SDNist's k-marginal score, 1000·(1 − mean TV) over every set of min(k, d) columns
    (a uniform sample of :data:`MAX_COLUMN_SETS` of them when there are more).

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
    """The k-marginal score of a uniform subsample of ``min(m, n)`` data records (without
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
    """Share of the release rows equal to some data record."""
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
        One row per run: ``k_marginal, k_marginal_reference, UEM, apparent_match, pMSE``;
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
    for z in z_all:
        z_codes, _ = _unit_box_codes(z, bins, levels)
        rows.append({"k_marginal": tables.score(z_codes), "k_marginal_reference": tables.reference(z.shape[0], rng),
                     "UEM": matches.unique_exact_match(z), "apparent_match": matches.apparent_match(z),
                     "pMSE": propensity_mse(x_design, _unit_box_design(z, z_codes, kept, columns), data_counts=c)})
    out = pd.DataFrame(rows, columns=["k_marginal", "k_marginal_reference", "UEM", "apparent_match", "pMSE"])
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
        Equal bins of each numeric column on its bounds (k-marginal); a missing cell is a bin of its own.
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
    return Yardsticks(
        k=min(k, len(names)), k_marginal=k_marginal, k_marginal_reference=reference,
        unique_exact_match=uem, unique_records=unique, apparent_match=apparent_match(exact[:n_rows], exact[n_rows:]),
        pmse=propensity_mse(design[:n_rows], design[n_rows:], data_counts=c),
        k_marginal_sets=len(tables.subsets), k_marginal_sets_total=tables.total,
        pmse_columns=len(columns), pmse_columns_total=len(names))


#: Columns of :func:`yardstick_table`.
_TABLE_COLUMNS = ["label", "guarantee", "m", "k_marginal", "k_marginal_reference", "UEM", "apparent_match", "pMSE"]


def yardstick_table(summary: pd.DataFrame) -> pd.DataFrame:
    """One row per mechanism with its guarantee, m and mean yardsticks, from the summary of a
    comparison run with ``yardsticks=True`` (:func:`core.evaluation.compare.comparison_summary`).

    Raises
    ------
    ValueError
        The summary has no yardsticks.
    """
    if not isinstance(summary, pd.DataFrame) or "k_marginal" not in summary.columns:
        raise ValueError("summary must be comparison_summary of a comparison run with yardsticks=True")
    rows = summary[summary["mechanism"] != "confidential"].drop_duplicates("mechanism")
    return rows[_TABLE_COLUMNS].reset_index(drop=True)
