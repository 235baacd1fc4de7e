"""Quality report of a multi-column release, as SDMetrics defines it (docs/quality.md).

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
* **The yardsticks** (:mod:`core.evaluation.yardsticks`, docs/peers.md §4, docs/quality.md §9): the
  project's 3-way marginal score with its subsample reference (``marginal3``,
  ``marginal3_reference``), unique exact match, row match share (``row_match``) and logistic pMSE
  (``pMSE_logistic``), and NIST SDNist's own k-marginal and pMSE (``SDNist_k_marginal``,
  ``SDNist_pMSE``), in the report's ``yardsticks`` and in its CSV.

**Missing cells** (a column released with ``missing='value'``, docs/mathematics.md §2.5)
are compared as SDMetrics compares them: a missing cell is one more category of a
categorical column (in TVComplement and in contingency tables, where a numeric column's
missing cells also form a bin of their own); KSComplement compares the numbers of a
numeric column (its missing cells left out on both sides) and CorrelationSimilarity the
rows where both columns hold a number.

Every function takes optional weights of the real rows (``real_weights``; ``real_counts`` in
:func:`quality_report`): with the counts of a frequency table the scores equal those of the
rows repeated by their counts, at a cost in the k distinct rows instead of n.

These scores are computed from the confidential data: they are for the curator and are
not covered by the release's privacy guarantee (:meth:`QualityReport.to_csv` marks its
first line CONFIDENTIAL).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Mapping

import numpy as np
import pandas as pd
from scipy import stats

from ..formatting import CONFIDENTIAL_MARK, formula_safe
from ..validation import check_choice, check_integer, check_sample_weights
from .yardsticks import Yardsticks, frame_yardsticks

__all__ = [
    "QualityReport",
    "contingency_similarity",
    "correlation_similarity",
    "ks_complement",
    "quality_report",
    "tv_complement",
]

#: SDMetrics' number of bins when a numeric column enters a contingency table.
DEFAULT_BINS = 10
#: First line of the report's CSV: the scores describe the confidential data (curator only).
CONFIDENTIAL_LINE = f"# {CONFIDENTIAL_MARK}"
_KS_DECIMALS = 14
_BINNINGS = ("real", "sdmetrics-report")


def _column(values, name: str) -> pd.Series:
    """A categorical column; its missing cells (None, NaN, pd.NA) become NaN, one category."""
    s = pd.Series(np.asarray(values, dtype=object) if not isinstance(values, pd.Series) else values)
    if s.size == 0:
        raise ValueError(f"{name} is empty")
    s = s.reset_index(drop=True)
    missing = s.isna()
    return s.astype(object).where(~missing, np.nan) if missing.any() else s


def _numeric_column(values, name: str, *, missing: bool = False) -> np.ndarray:
    """A numeric column as floats; with ``missing``, missing cells (pd.NA, None) are NaN."""
    if missing:
        values = pd.Series(values).astype(object)
        values = values.where(values.notna(), np.nan)
    try:
        x = np.asarray(values, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be numeric") from None
    if x.size == 0 or not np.all(np.isfinite(x) | (missing & np.isnan(x))):
        raise ValueError(f"{name} must be a non-empty numeric column without missing or infinite values")
    return x


def _weights(weights, size: int, name: str = "real_weights") -> np.ndarray | None:
    """Normalised weights of the real rows (``None``: every row counts once)."""
    return None if weights is None else check_sample_weights(weights, size, name)


def ks_complement(real, synthetic, *, real_weights=None) -> float:
    """SDMetrics KSComplement: :math:`1 - \\sup_t|F_R(t) - F_S(t)|` (numeric column).

    Values are first rounded to 14 decimals, as SDMetrics does (``sys.float_info.dig - 1``),
    so float noise such as 0.1 + 0.2 vs 0.3 does not count as a difference.

    Parameters
    ----------
    real : array_like, shape (n,)
    synthetic : array_like, shape (m,)
    real_weights : array_like, shape (n,), optional
        Non-negative weights of the real values, e.g. the counts of a frequency table
        (then the result equals that of the rows repeated by their counts).

    Missing cells are left out on both sides (the numbers are compared); NaN when a side
    holds no number.
    """
    r = np.round(_numeric_column(real, "real", missing=True), _KS_DECIMALS)
    s = np.round(_numeric_column(synthetic, "synthetic", missing=True), _KS_DECIMALS)
    w = _weights(real_weights, r.size)
    r_present, s_present = ~np.isnan(r), ~np.isnan(s)
    if not r_present.all() or not s_present.all():
        if not r_present.any() or not s_present.any() or (w is not None and not w[r_present].sum() > 0):
            return math.nan
        r, s = r[r_present], s[s_present]
        w = None if w is None else w[r_present] / w[r_present].sum()
    # D directly (the statistic of scipy.stats.ks_2samp, which SDMetrics calls, without the
    # p-value it would also compute): both ECDFs at every jump, O((n + m) log(n + m)).
    order = np.argsort(r, kind="stable")
    r = r[order]
    cum_r = np.arange(1, r.size + 1) / r.size if w is None else np.cumsum(w[order])
    s.sort()
    t = np.concatenate([r, s])
    i = np.searchsorted(r, t, side="right")
    f_r = np.where(i > 0, cum_r[np.maximum(i - 1, 0)], 0.0)
    d = np.max(np.abs(f_r - np.searchsorted(s, t, side="right") / s.size))
    return float(1.0 - min(d, 1.0))


def _frequencies(frame: pd.Series | pd.DataFrame, weights: np.ndarray | None) -> pd.Series:
    """Relative frequency of each value (each row of a DataFrame: joint cells), optionally weighted."""
    if weights is None:
        return frame.value_counts(normalize=True, dropna=False)
    keys = frame if isinstance(frame, pd.Series) else [frame[c] for c in frame.columns]
    freq = pd.Series(weights).groupby(keys, sort=False, dropna=False).sum()
    return freq / freq.sum()


def _tv(real: pd.Series | pd.DataFrame, synthetic, real_weights: np.ndarray | None = None) -> float:
    """½ Σ |R − S| over the union of observed cells (rows of a DataFrame: joint cells)."""
    p = _frequencies(real, real_weights)
    q = _frequencies(synthetic, None)
    if isinstance(real, pd.DataFrame):   # the same cell index on both sides for the alignment
        p.index = p.index.set_names(list(real.columns))
        q.index = q.index.set_names(list(real.columns))
    p, q = p.align(q, fill_value=0.0)
    return float(min(1.0, 0.5 * np.abs(p.to_numpy() - q.to_numpy()).sum()))


def tv_complement(real, synthetic, *, real_weights=None) -> float:
    """SDMetrics TVComplement: :math:`1 - \\tfrac12\\sum_\\omega|R_\\omega - S_\\omega|` (categorical column).

    ``real_weights``: optional non-negative weights of the real values (e.g. counts).
    """
    r = _column(real, "real")
    return 1.0 - _tv(r, _column(synthetic, "synthetic"), _weights(real_weights, r.size))


def _midranks(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Average ranks of weighted values, up to a constant: :math:`W(<v) + w(v)/2`.

    With integer counts this is ``scipy.stats.rankdata`` of the repeated values divided
    by n, minus 1/(2n) — Pearson's coefficient of the ranks is unaffected by the shift.
    """
    atoms, inverse = np.unique(values, return_inverse=True)
    w = np.bincount(inverse, weights=weights, minlength=atoms.size)
    return (np.cumsum(w) - w / 2.0)[inverse]


def _correlation(data, name: str, method: str, weights: np.ndarray | None = None) -> float:
    """The correlation of the rows where both columns hold a number (missing cells: NaN)."""
    if isinstance(data, pd.DataFrame) and data.isna().to_numpy().any():
        data = data.astype(object).where(data.notna(), np.nan)
    try:
        arr = np.asarray(data, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be numeric") from None
    if arr.ndim == 2 and arr.shape[1] == 2 and np.isnan(arr).any():
        complete = ~np.isnan(arr).any(axis=1)
        arr = arr[complete]
        if weights is not None:
            weights = weights[complete] / weights[complete].sum() if weights[complete].sum() > 0 else None
            if weights is None:
                return math.nan
        if arr.shape[0] < 2:
            return math.nan
    if arr.ndim != 2 or arr.shape[1] != 2 or arr.shape[0] < 2 or not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must have shape (n, 2) with n >= 2 finite rows, got shape {arr.shape}")
    if np.ptp(arr[:, 0]) == 0 or np.ptp(arr[:, 1]) == 0:
        return math.nan  # a constant column has no correlation
    if weights is None:
        fn = stats.pearsonr if method == "pearson" else stats.spearmanr
        return float(fn(arr[:, 0], arr[:, 1])[0])
    # Weighted (counts): the coefficient of the rows repeated by their weights.
    if method == "spearman":
        arr = np.column_stack([_midranks(arr[:, 0], weights), _midranks(arr[:, 1], weights)])
    centred = arr - weights @ arr
    cov = (centred * weights[:, None]).T @ centred
    return float(np.clip(cov[0, 1] / math.sqrt(cov[0, 0] * cov[1, 1]), -1.0, 1.0))


def correlation_similarity(real, synthetic, *, method: str = "pearson", real_weights=None) -> float:
    """SDMetrics CorrelationSimilarity: :math:`1 - |S_{A,B} - R_{A,B}|/2`.

    ``real``, ``synthetic``: array_like, shape (n, 2) / (m, 2), numeric. NaN when a
    correlation is undefined (a constant column). ``real_weights``: optional
    non-negative weights of the real rows, shape (n,) (e.g. counts).
    """
    method = check_choice("method", method, ("pearson", "spearman"))
    n = np.shape(real)[0] if np.ndim(real) else 0
    w = None if real_weights is None else _weights(real_weights, n)
    return 1.0 - abs(_correlation(synthetic, "synthetic", method) - _correlation(real, "real", method, w)) / 2.0


def _discretise(real: np.ndarray, synthetic: np.ndarray, bins: int, binning: str) -> tuple[np.ndarray, np.ndarray]:
    """Bin indices of a numeric column in the real and the synthetic data.

    ``"real"`` (SDMetrics' ``ContingencySimilarity(continuous_column_names=...)``):
    ``bins`` equal-width edges from the real column, outer edges opened to ±∞, applied to
    both. ``"sdmetrics-report"`` (what SDMetrics' Quality Report code does): each table
    binned by its own ``bins`` equal-width edges (``numpy.digitize``, so each table's
    maximum gets a bin of its own) — kept only to reproduce SDMetrics' numbers.
    Equal-width edges depend on the minimum and maximum only, so weights (counts) of the
    real values do not change them. Missing cells (NaN) get a bin of their own, ``-1``,
    and the edges come from the numbers.
    """
    r_missing, s_missing = np.isnan(real), np.isnan(synthetic)
    if r_missing.any() or s_missing.any():
        present_r = real[~r_missing] if (~r_missing).any() else np.zeros(1)
        present_s = synthetic[~s_missing] if (~s_missing).any() else np.zeros(1)
        binned_r, binned_s = _discretise(present_r, present_s, bins, binning)
        out_r, out_s = np.full(real.size, -1), np.full(synthetic.size, -1)
        out_r[~r_missing] = binned_r[:int((~r_missing).sum())]
        out_s[~s_missing] = binned_s[:int((~s_missing).sum())]
        return out_r, out_s
    if binning == "sdmetrics-report":
        return (np.digitize(real, np.histogram_bin_edges(real, bins=bins)),
                np.digitize(synthetic, np.histogram_bin_edges(synthetic, bins=bins)))
    edges = np.histogram_bin_edges(real, bins=bins)
    edges[0], edges[-1] = -np.inf, np.inf
    return np.digitize(real, edges), np.digitize(synthetic, edges)


def contingency_similarity(real: pd.DataFrame, synthetic: pd.DataFrame, *, continuous=(),
                           bins: int = DEFAULT_BINS, binning: str = "real", real_weights=None) -> float:
    """SDMetrics ContingencySimilarity, :math:`1 - \\tfrac12\\sum_{\\alpha\\beta}|R_{\\alpha\\beta}-S_{\\alpha\\beta}|`.

    Parameters
    ----------
    real, synthetic : pandas.DataFrame with the same two columns
    continuous : names of columns to discretise first
    bins : int ≥ 1
    binning : ``"real"`` (default: edges from the real column) or ``"sdmetrics-report"``
        (see :func:`_discretise`)
    real_weights : array_like, shape (len(real),), optional
        Non-negative weights of the real rows (e.g. the counts of a frequency table).
    """
    binning = check_choice("binning", binning, _BINNINGS)
    if not (isinstance(real, pd.DataFrame) and isinstance(synthetic, pd.DataFrame)
            and real.shape[1] == 2 and list(real.columns) == list(synthetic.columns)):
        raise ValueError("real and synthetic must be DataFrames with the same two columns")
    bins = check_integer("bins", bins, minimum=1, maximum=10**4)
    w = _weights(real_weights, len(real))
    r, s = {}, {}
    for col in real.columns:
        if col in continuous:
            r[col], s[col] = _discretise(_numeric_column(real[col], f"real[{col!r}]", missing=True),
                                         _numeric_column(synthetic[col], f"synthetic[{col!r}]", missing=True),
                                         bins, binning)
        else:
            r[col] = _column(real[col], f"real[{col!r}]").to_numpy()
            s[col] = _column(synthetic[col], f"synthetic[{col!r}]").to_numpy()
    return 1.0 - _tv(pd.DataFrame(r), pd.DataFrame(s), w)


@dataclass(frozen=True)
class QualityReport:
    """SDMetrics-style quality report of one release.

    Attributes
    ----------
    columns : DataFrame — ``column, kind, metric, score``
    pairs : DataFrame — ``column_1, column_2, metric, score, real_correlation, synthetic_correlation``
    column_shapes, column_pair_trends, overall : float (NaN when there is nothing to average)
    yardsticks : Yardsticks or None
        NIST SDNist's yardsticks of the release (docs/peers.md §4).
    """

    columns: pd.DataFrame
    pairs: pd.DataFrame
    column_shapes: float
    column_pair_trends: float
    overall: float
    note: str = "computed from the confidential data: for the curator, not covered by the privacy guarantee"
    yardsticks: Yardsticks | None = None

    def to_frame(self) -> pd.DataFrame:
        """One long table (property, column_1, column_2, metric, score) ready for CSV."""
        rows = [{"property": "Column Shapes", "column_1": r.column, "column_2": "", "metric": r.metric,
                 "score": r.score} for r in self.columns.itertuples()]
        rows += [{"property": "Column Pair Trends", "column_1": r.column_1, "column_2": r.column_2,
                  "metric": r.metric, "score": r.score} for r in self.pairs.itertuples()]
        rows += [{"property": name, "column_1": "", "column_2": "", "metric": "mean", "score": value}
                 for name, value in (("Column Shapes", self.column_shapes),
                                     ("Column Pair Trends", self.column_pair_trends), ("Overall", self.overall))]
        if self.yardsticks is not None:
            rows += [{"property": "Yardsticks (NIST SDNist)", "column_1": "", "column_2": "", "metric": name,
                      "score": value} for name, value in self.yardsticks.to_dict().items()]
        return pd.DataFrame(rows, columns=["property", "column_1", "column_2", "metric", "score"])

    def to_csv(self, *, confidential: bool = True) -> bytes:
        """The long table as UTF-8 CSV.

        The scores are statistics of the confidential data, so by default the first line
        is ``# CONFIDENTIAL — …`` (the curator record's mark, :data:`CONFIDENTIAL_LINE`);
        read it back with ``pandas.read_csv(..., comment="#")``. ``confidential=False``
        leaves the mark out (for a caller that adds its own).
        """
        body = formula_safe(self.to_frame()).to_csv(index=False)   # column names: text a spreadsheet could run
        return ((CONFIDENTIAL_LINE + "\n" if confidential else "") + body).encode("utf-8")

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
                   bins: int = DEFAULT_BINS, correlation: str = "pearson", binning: str = "real",
                   real_counts=None, yardsticks: bool = True, bounds: Mapping | None = None,
                   rng: np.random.Generator | None = None) -> QualityReport:
    """Column Shapes, Column Pair Trends and the overall score (SDMetrics definitions).

    Parameters
    ----------
    real, synthetic : pandas.DataFrame containing every column of ``kinds``
    kinds : mapping column -> 'numeric' | 'categorical'
    bins : int — bins of a numeric column in a contingency table (SDMetrics: 10)
    correlation : 'pearson' (the report's) or 'spearman'
    binning : 'real' or 'sdmetrics-report' (how numeric columns enter contingency tables)
    real_counts : array_like of int ≥ 0, shape (len(real),), optional
        Multiplicity of each row of ``real`` when ``real`` is a frequency table (its
        distinct rows): every score then equals the score of the rows repeated by their
        counts, at a cost in the k distinct rows instead of n.
    yardsticks : bool
        Add the field's yardsticks (:func:`core.evaluation.yardsticks.frame_yardsticks`: numeric
        columns in ``bins`` equal bins on ``bounds``, the reference subsample drawn with ``rng``).
    bounds : mapping column → (lo, hi), optional
        Public bounds of the numeric columns (default: the real column's range).
    rng : numpy.random.Generator, optional
        Default ``numpy.random.default_rng(0)`` (a fixed reference).

    Cost: O(d n log n) for the shapes plus O(d² n) for the pairs (n: rows of ``real``).
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
    w = None if real_counts is None else check_sample_weights(real_counts, len(real), "real_counts")
    real = real.reset_index(drop=True)
    col_rows = []
    for c, k in kinds.items():
        if k == "numeric":
            col_rows.append({"column": c, "kind": k, "metric": "KSComplement",
                             "score": ks_complement(real[c], synthetic[c], real_weights=w)})
        else:
            col_rows.append({"column": c, "kind": k, "metric": "TVComplement",
                             "score": tv_complement(real[c], synthetic[c], real_weights=w)})
    pair_rows = []
    for a, b in itertools.combinations(list(kinds), 2):
        if kinds[a] == kinds[b] == "numeric":
            r_ab = _correlation(real[[a, b]], "real", correlation, w)
            s_ab = _correlation(synthetic[[a, b]], "synthetic", correlation)
            score = 1.0 - abs(s_ab - r_ab) / 2.0
            pair_rows.append({"column_1": a, "column_2": b, "metric": "CorrelationSimilarity", "score": score,
                              "real_correlation": r_ab, "synthetic_correlation": s_ab})
        else:
            cont = [c for c in (a, b) if kinds[c] == "numeric"]
            score = contingency_similarity(real[[a, b]], synthetic[[a, b]], continuous=cont, bins=bins,
                                           binning=binning, real_weights=w)
            pair_rows.append({"column_1": a, "column_2": b, "metric": "ContingencySimilarity", "score": score,
                              "real_correlation": math.nan, "synthetic_correlation": math.nan})
    columns = pd.DataFrame(col_rows, columns=["column", "kind", "metric", "score"])
    pairs = pd.DataFrame(pair_rows, columns=["column_1", "column_2", "metric", "score", "real_correlation",
                                             "synthetic_correlation"])
    shapes = _mean(columns["score"])
    trends = _mean(pairs["score"])
    overall = _mean([shapes, trends])
    marks = (frame_yardsticks(real, synthetic, kinds, real_counts=real_counts, bins=bins, bounds=bounds, rng=rng)
             if yardsticks else None)
    return QualityReport(columns, pairs, shapes, trends, overall, yardsticks=marks)
