"""Quality report of a multi-column release, as SDMetrics defines it, and a fast joint W1 (issue 14 §2, §4).

Metrics (definitions of the SDMetrics single-table Quality Report, docs.sdv.dev/sdmetrics;
implemented with scipy/pandas because installing SDMetrics downgrades pandas here). Each
is a similarity in [0, 1], 1 = identical:

* **KSComplement** (numeric column): :math:`1 - D`, with
  :math:`D = \\sup_t |F_R(t) - F_S(t)|` the two-sample Kolmogorov–Smirnov statistic
  (the statistic of ``scipy.stats.ks_2samp``, computed directly).
* **TVComplement** (categorical column): :math:`1 - \\tfrac12\\sum_\\omega |R_\\omega - S_\\omega|`
  over the union of categories, :math:`R_\\omega, S_\\omega` the relative frequencies.
* **CorrelationSimilarity** (numeric × numeric): :math:`1 - |S_{A,B} - R_{A,B}|/2` with
  Pearson's (default, as in the report) or Spearman's coefficient.
* **ContingencySimilarity** (any pair with a categorical column):
  :math:`1 - \\tfrac12\\sum_{\\alpha,\\beta}|R_{\\alpha\\beta} - S_{\\alpha\\beta}|` over the
  normalised contingency tables; a numeric column is first discretised into 10 equal-width
  bins whose edges come from the real column (``numpy.histogram_bin_edges``), the outer
  edges opened to ±∞, and applied to both columns (the metric's own discretisation). The
  SDMetrics Quality Report code instead bins each table by its own edges;
  ``binning="sdmetrics-report"`` reproduces that.
* **Overall score**: the mean of the two property scores, *Column Shapes* (mean over
  columns) and *Column Pair Trends* (mean over pairs).

These scores are computed from the confidential data: they are for the curator and are
not covered by the release's privacy guarantee.

:func:`joint_w1_runs` — the multi-column W1 of R releases against the data, exact when it
fits a time budget: W1 depends only on :math:`\\mu - \\nu` (Kantorovich–Rubinstein
duality), so mass a release puts exactly on a data row cancels and the linear program runs
on the residual measures only, which are small for releases that copy confidential rows
(PYPP). Otherwise the sliced W1 (a lower bound) with one set of directions for all runs.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Mapping

import numpy as np
import ot
import pandas as pd
from scipy import stats
from scipy.spatial import distance

from .utility import sliced_wasserstein1_runs
from .validation import check_choice, check_integer, check_metric_sample, check_real

__all__ = [
    "QualityReport",
    "contingency_similarity",
    "correlation_similarity",
    "joint_w1_runs",
    "ks_complement",
    "quality_report",
    "tv_complement",
]

#: SDMetrics' number of bins when a numeric column enters a contingency table.
DEFAULT_BINS = 10
#: Default budget of the exact joint W1, in cost-matrix entries summed over runs (~0.1 µs each).
DEFAULT_MAX_EXACT_ENTRIES = 1.5e7
_KS_DECIMALS = 14
_BINNINGS = ("real", "sdmetrics-report")


def _column(values, name: str) -> pd.Series:
    s = pd.Series(np.asarray(values, dtype=object) if not isinstance(values, pd.Series) else values)
    if s.size == 0:
        raise ValueError(f"{name} is empty")
    if s.isna().any():
        raise ValueError(f"{name} has missing values: remove or impute them first")
    return s.reset_index(drop=True)


def _numeric_column(values, name: str) -> np.ndarray:
    try:
        x = np.asarray(values, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be numeric") from None
    if x.size == 0 or not np.all(np.isfinite(x)):
        raise ValueError(f"{name} must be a non-empty numeric column without missing or infinite values")
    return x


def ks_complement(real, synthetic) -> float:
    """SDMetrics KSComplement: :math:`1 - \\sup_t|F_R(t) - F_S(t)|` (numeric column).

    Values are first rounded to 14 decimals, as SDMetrics does (``sys.float_info.dig - 1``),
    so float noise such as 0.1 + 0.2 vs 0.3 does not count as a difference.
    """
    r = np.round(_numeric_column(real, "real"), _KS_DECIMALS)
    s = np.round(_numeric_column(synthetic, "synthetic"), _KS_DECIMALS)
    # D directly (the statistic of scipy.stats.ks_2samp, which SDMetrics calls, without the
    # p-value it would also compute): both ECDFs at every jump, O((n + m) log(n + m)).
    r.sort()
    s.sort()
    t = np.concatenate([r, s])
    d = np.max(np.abs(np.searchsorted(r, t, side="right") / r.size - np.searchsorted(s, t, side="right") / s.size))
    return float(1.0 - d)


def _tv(real: pd.Series | pd.DataFrame, synthetic) -> float:
    """½ Σ |R − S| over the union of observed cells (rows of a DataFrame: joint cells)."""
    p = real.value_counts(normalize=True)
    q = synthetic.value_counts(normalize=True)
    p, q = p.align(q, fill_value=0.0)
    return float(0.5 * np.abs(p.to_numpy() - q.to_numpy()).sum())


def tv_complement(real, synthetic) -> float:
    """SDMetrics TVComplement: :math:`1 - \\tfrac12\\sum_\\omega|R_\\omega - S_\\omega|` (categorical column)."""
    return 1.0 - _tv(_column(real, "real"), _column(synthetic, "synthetic"))


def _correlation(data, name: str, method: str) -> float:
    try:
        arr = np.asarray(data, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be numeric") from None
    if arr.ndim != 2 or arr.shape[1] != 2 or arr.shape[0] < 2 or not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must have shape (n, 2) with n >= 2 finite rows, got shape {arr.shape}")
    if np.ptp(arr[:, 0]) == 0 or np.ptp(arr[:, 1]) == 0:
        return math.nan  # a constant column has no correlation
    fn = stats.pearsonr if method == "pearson" else stats.spearmanr
    return float(fn(arr[:, 0], arr[:, 1])[0])


def correlation_similarity(real, synthetic, *, method: str = "pearson") -> float:
    """SDMetrics CorrelationSimilarity: :math:`1 - |S_{A,B} - R_{A,B}|/2`.

    ``real``, ``synthetic``: array_like, shape (n, 2) / (m, 2), numeric. NaN when a
    correlation is undefined (a constant column).
    """
    method = check_choice("method", method, ("pearson", "spearman"))
    return 1.0 - abs(_correlation(synthetic, "synthetic", method) - _correlation(real, "real", method)) / 2.0


def _discretise(real: np.ndarray, synthetic: np.ndarray, bins: int, binning: str) -> tuple[np.ndarray, np.ndarray]:
    """Bin indices of a numeric column in the real and the synthetic data.

    ``"real"`` (SDMetrics' ``ContingencySimilarity(continuous_column_names=...)``):
    ``bins`` equal-width edges from the real column, outer edges opened to ±∞, applied to
    both. ``"sdmetrics-report"`` (what SDMetrics' Quality Report code does): each table
    binned by its own ``bins`` equal-width edges (``numpy.digitize``, so each table's
    maximum gets a bin of its own) — kept only to reproduce SDMetrics' numbers.
    """
    if binning == "sdmetrics-report":
        return (np.digitize(real, np.histogram_bin_edges(real, bins=bins)),
                np.digitize(synthetic, np.histogram_bin_edges(synthetic, bins=bins)))
    edges = np.histogram_bin_edges(real, bins=bins)
    edges[0], edges[-1] = -np.inf, np.inf
    return np.digitize(real, edges), np.digitize(synthetic, edges)


def contingency_similarity(real: pd.DataFrame, synthetic: pd.DataFrame, *, continuous=(),
                           bins: int = DEFAULT_BINS, binning: str = "real") -> float:
    """SDMetrics ContingencySimilarity, :math:`1 - \\tfrac12\\sum_{\\alpha\\beta}|R_{\\alpha\\beta}-S_{\\alpha\\beta}|`.

    Parameters
    ----------
    real, synthetic : pandas.DataFrame with the same two columns
    continuous : names of columns to discretise first
    bins : int ≥ 1
    binning : ``"real"`` (default: edges from the real column) or ``"sdmetrics-report"``
        (see :func:`_discretise`)
    """
    binning = check_choice("binning", binning, _BINNINGS)
    if not (isinstance(real, pd.DataFrame) and isinstance(synthetic, pd.DataFrame)
            and real.shape[1] == 2 and list(real.columns) == list(synthetic.columns)):
        raise ValueError("real and synthetic must be DataFrames with the same two columns")
    bins = check_integer("bins", bins, minimum=1, maximum=10**4)
    r, s = {}, {}
    for col in real.columns:
        if col in continuous:
            r[col], s[col] = _discretise(_numeric_column(real[col], f"real[{col!r}]"),
                                         _numeric_column(synthetic[col], f"synthetic[{col!r}]"), bins,
                                         binning)
        else:
            r[col] = _column(real[col], f"real[{col!r}]").to_numpy()
            s[col] = _column(synthetic[col], f"synthetic[{col!r}]").to_numpy()
    return 1.0 - _tv(pd.DataFrame(r), pd.DataFrame(s))


@dataclass(frozen=True)
class QualityReport:
    """SDMetrics-style quality report of one release.

    Attributes
    ----------
    columns : DataFrame — ``column, kind, metric, score``
    pairs : DataFrame — ``column_1, column_2, metric, score, real_correlation, synthetic_correlation``
    column_shapes, column_pair_trends, overall : float (NaN when there is nothing to average)
    """

    columns: pd.DataFrame
    pairs: pd.DataFrame
    column_shapes: float
    column_pair_trends: float
    overall: float
    note: str = "computed from the confidential data: for the curator, not covered by the privacy guarantee"

    def to_frame(self) -> pd.DataFrame:
        """One long table (property, column_1, column_2, metric, score) ready for CSV."""
        rows = [{"property": "Column Shapes", "column_1": r.column, "column_2": "", "metric": r.metric,
                 "score": r.score} for r in self.columns.itertuples()]
        rows += [{"property": "Column Pair Trends", "column_1": r.column_1, "column_2": r.column_2,
                  "metric": r.metric, "score": r.score} for r in self.pairs.itertuples()]
        rows += [{"property": name, "column_1": "", "column_2": "", "metric": "mean", "score": value}
                 for name, value in (("Column Shapes", self.column_shapes),
                                     ("Column Pair Trends", self.column_pair_trends), ("Overall", self.overall))]
        return pd.DataFrame(rows, columns=["property", "column_1", "column_2", "metric", "score"])

    def to_csv(self) -> bytes:
        return self.to_frame().to_csv(index=False).encode("utf-8")

    def pair_matrix(self) -> pd.DataFrame:
        """Symmetric column × column matrix of the pair scores (diagonal 1), for a heatmap."""
        names = list(self.columns["column"])
        mat = pd.DataFrame(np.eye(len(names)), index=names, columns=names)
        for r in self.pairs.itertuples():
            mat.loc[r.column_1, r.column_2] = mat.loc[r.column_2, r.column_1] = r.score
        return mat


def _mean(values) -> float:
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    return float(v.mean()) if v.size else math.nan


def quality_report(real: pd.DataFrame, synthetic: pd.DataFrame, kinds: Mapping[str, str], *,
                   bins: int = DEFAULT_BINS, correlation: str = "pearson", binning: str = "real") -> QualityReport:
    """Column Shapes, Column Pair Trends and the overall score (SDMetrics definitions).

    Parameters
    ----------
    real, synthetic : pandas.DataFrame containing every column of ``kinds``
    kinds : mapping column -> 'numeric' | 'categorical'
    bins : int — bins of a numeric column in a contingency table (SDMetrics: 10)
    correlation : 'pearson' (the report's) or 'spearman'
    binning : 'real' or 'sdmetrics-report' (how numeric columns enter contingency tables)

    Cost: O(d n log n) for the shapes plus O(d² n) for the pairs.
    """
    correlation = check_choice("correlation", correlation, ("pearson", "spearman"))
    kinds = {c: check_choice(f"kind of column {c!r}", k, ("numeric", "categorical")) for c, k in kinds.items()}
    if not kinds:
        raise ValueError("kinds must name at least one column")
    for name, frame in (("real", real), ("synthetic", synthetic)):
        if not isinstance(frame, pd.DataFrame):
            raise ValueError(f"{name} must be a pandas DataFrame")
        missing = [c for c in kinds if c not in frame.columns]
        if missing:
            raise ValueError(f"{name} lacks column(s) {missing}")
    col_rows = []
    for c, k in kinds.items():
        if k == "numeric":
            col_rows.append({"column": c, "kind": k, "metric": "KSComplement",
                             "score": ks_complement(real[c], synthetic[c])})
        else:
            col_rows.append({"column": c, "kind": k, "metric": "TVComplement",
                             "score": tv_complement(real[c], synthetic[c])})
    pair_rows = []
    for a, b in itertools.combinations(list(kinds), 2):
        if kinds[a] == kinds[b] == "numeric":
            r_ab = _correlation(real[[a, b]], "real", correlation)
            s_ab = _correlation(synthetic[[a, b]], "synthetic", correlation)
            score = 1.0 - abs(s_ab - r_ab) / 2.0
            pair_rows.append({"column_1": a, "column_2": b, "metric": "CorrelationSimilarity", "score": score,
                              "real_correlation": r_ab, "synthetic_correlation": s_ab})
        else:
            cont = [c for c in (a, b) if kinds[c] == "numeric"]
            score = contingency_similarity(real[[a, b]], synthetic[[a, b]], continuous=cont, bins=bins,
                                           binning=binning)
            pair_rows.append({"column_1": a, "column_2": b, "metric": "ContingencySimilarity", "score": score,
                              "real_correlation": math.nan, "synthetic_correlation": math.nan})
    columns = pd.DataFrame(col_rows, columns=["column", "kind", "metric", "score"])
    pairs = pd.DataFrame(pair_rows, columns=["column_1", "column_2", "metric", "score", "real_correlation",
                                             "synthetic_correlation"])
    shapes = _mean(columns["score"])
    trends = _mean(pairs["score"])
    overall = _mean([shapes, trends])
    return QualityReport(columns, pairs, shapes, trends, overall)


# ======================================================================== joint W1
def _row_ids(rows: np.ndarray) -> np.ndarray:
    """Integer id per row, equal ids for equal rows (bytes of the float64 row)."""
    view = np.ascontiguousarray(rows).view(np.dtype((np.void, rows.dtype.itemsize * rows.shape[1]))).ravel()
    return pd.factorize(view)[0].astype(np.int64)


def joint_w1_runs(samples, reference, *, max_exact_entries: float = DEFAULT_MAX_EXACT_ENTRIES,
                  n_projections: int = 50, rng: np.random.Generator) -> tuple[np.ndarray, str]:
    """Multi-column W1 of each release against the data, exact when it fits the budget.

    .. math:: W_1(\\mu_x, \\mu_{Z_r}) = W_1\\big((\\mu_x-\\mu_{Z_r})_+, (\\mu_x-\\mu_{Z_r})_-\\big)

    (Kantorovich–Rubinstein: W1 depends on the signed difference only), so for each run
    the exact linear program (``ot.emd2``, Euclidean cost) runs on the rows where the
    two empirical measures differ, with weights computed exactly in integers
    (:math:`n_x(u)\\,m - n_Z(u)\\,n`). When the residual cost matrices of all runs exceed
    ``max_exact_entries`` entries in total (or one solve stops early), every run gets the
    sliced W1 with one set of ``n_projections`` directions shared by all runs
    (:func:`core.utility.sliced_wasserstein1_runs`).

    Parameters
    ----------
    samples : array_like, shape (R, m, d)
    reference : array_like, shape (n, d)
    max_exact_entries : float ≥ 0
    n_projections : int
    rng : numpy.random.Generator (directions of the sliced fallback)

    Returns
    -------
    values : ndarray, shape (R,)
    method : str — ``"exact-emd (residual)"`` or ``"sliced (P directions)"``
    """
    z = check_metric_sample(samples, "samples", ndim=3, min_size=1)
    x = check_metric_sample(reference, "reference", ndim=2, min_size=1)
    if z.shape[2] != x.shape[1]:
        raise ValueError(f"samples must have shape (R, m, {x.shape[1]}), got {z.shape}")
    max_exact_entries = check_real("max_exact_entries", max_exact_entries, low=0.0, high=1e12)
    R, m, d = z.shape
    n = x.shape[0]
    ids = _row_ids(np.concatenate([x, z.reshape(R * m, d)]))
    rows_of = np.empty(int(ids.max()) + 1, dtype=np.int64)
    rows_of[ids] = np.arange(ids.size)          # one row index per id, to read the point back
    points = np.concatenate([x, z.reshape(R * m, d)])
    x_ids, x_counts = np.unique(ids[:n], return_counts=True)
    z_ids = ids[n:].reshape(R, m)
    problems, entries = [], 0.0
    for r in range(R):  # one run at a time: O(m log m) each, loop over runs only
        u, c = np.unique(z_ids[r], return_counts=True)
        all_ids, inverse = np.unique(np.concatenate([x_ids, u]), return_inverse=True)
        net = np.zeros(all_ids.size, dtype=np.int64)
        np.add.at(net, inverse[:x_ids.size], x_counts * m)
        np.add.at(net, inverse[x_ids.size:], -c * n)
        pos, neg = net > 0, net < 0
        problems.append((all_ids[pos], net[pos], all_ids[neg], -net[neg]))
        entries += float(pos.sum()) * float(neg.sum())
        if entries > max_exact_entries:
            break
    if entries <= max_exact_entries:
        out = np.zeros(R)
        for r, (a_ids, a_w, b_ids, b_w) in enumerate(problems):
            if a_ids.size == 0:
                continue
            total = float(a_w.sum())            # = b_w.sum(), in units of 1/(n m)
            cost = distance.cdist(points[rows_of[a_ids]], points[rows_of[b_ids]])
            value, log = ot.emd2(a_w / total, b_w / total, cost,
                                 numItermax=int(max(100_000, 50 * cost.size)), log=True)
            if log.get("warning") is not None:
                break
            out[r] = value * total / (float(n) * float(m))
        else:
            return out, "exact-emd (residual)"
    values = sliced_wasserstein1_runs(z, x, n_projections=n_projections, rng=rng)
    return values, f"sliced ({n_projections} directions)"
