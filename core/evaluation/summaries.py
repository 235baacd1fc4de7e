"""Per-column summaries of a release against the data: mean, SD, quartiles, W1 and KDE-L2
(docs/mathematics.md §5).
"""
from __future__ import annotations

import math
from typing import Mapping

import numpy as np
import pandas as pd

from ..validation import (
    check_integer,
    check_metric_sample,
)
from .density import MAX_KDE_GRID, _counted_moments, _kde_l2_degenerate_aware, _kde_or_point_masses, kde_grid
from .distances import _counts, _metric_sample, wasserstein1


# ==================================================================== summaries
def column_summary(values, counts=None) -> dict[str, float]:
    """Mean, SD (ddof = 1; 0 for one value), Q1, median and Q3 of one numeric column.

    Quantiles use numpy's default (linear interpolation). Values within ±MAX_ABS_VALUE.
    ``counts`` (positive integers, one per value): the summary of the values repeated by
    their counts (a frequency table), at a cost in the distinct values only.
    """
    x = _metric_sample(values, "values")
    if x.ndim == 2:
        if x.shape[1] != 1:
            raise ValueError(f"values must be one column, got shape {x.shape}")
        x = x[:, 0]
    if counts is None:
        q1, med, q3 = np.quantile(x, [0.25, 0.5, 0.75])
        return {"mean": float(x.mean()), "sd": float(x.std(ddof=1)) if x.size > 1 else 0.0,
                "q1": float(q1), "median": float(med), "q3": float(q3)}
    c = _counts(counts, x.shape)
    mean, sd = _counted_moments(x, c)
    order = np.argsort(x, kind="stable")
    q1, med, q3 = repeated_quantiles(x[order], np.cumsum(c[order]))
    return {"mean": mean, "sd": sd, "q1": q1, "median": med, "q3": q3}


def repeated_quantiles(sorted_values: np.ndarray, cumulative_counts: np.ndarray,
                       probabilities=(0.25, 0.5, 0.75)) -> list[float]:
    """``numpy.quantile`` (linear) of sorted values repeated by their counts, without repeating them.

    numpy's position of probability q among n order statistics is :math:`h = (n-1)q`;
    the result is :math:`x_{(\\lfloor h\\rfloor)} + (h-\\lfloor h\\rfloor)(x_{(\\lfloor h\\rfloor+1)} - x_{(\\lfloor h\\rfloor)})`
    and the j-th order statistic (from 0) is the value whose cumulative count first exceeds j.

    Parameters
    ----------
    sorted_values : ndarray, shape (k,), non-decreasing
    cumulative_counts : ndarray of int, shape (k,)
        ``cumsum`` of the counts (counts ≥ 0; a zero count is a value absent from the sample);
        n = ``cumulative_counts[-1]`` ≥ 1.
    probabilities : sequence of float in [0, 1]

    Returns
    -------
    list of float, one per probability
    """
    cum = np.asarray(cumulative_counts)
    n = int(cum[-1])
    out = []
    for q in probabilities:
        h = (n - 1) * q
        j = math.floor(h)
        lo = sorted_values[np.searchsorted(cum, j, side="right")]
        hi = sorted_values[np.searchsorted(cum, min(j + 1, n - 1), side="right")]
        out.append(float(lo + (h - j) * (hi - lo)))
    return out


def summary_runs(samples) -> dict[str, np.ndarray]:
    """:func:`column_summary` of each row of ``samples`` (shape (R, m)), vectorised."""
    z = check_metric_sample(samples, "samples", ndim=2, min_size=1)
    q1, med, q3 = np.quantile(z, [0.25, 0.5, 0.75], axis=1)
    sd = z.std(axis=1, ddof=1) if z.shape[1] > 1 else np.zeros(z.shape[0])
    return {"mean": z.mean(axis=1), "sd": sd, "q1": q1, "median": med, "q3": q3}


def _columns_of(data, columns) -> tuple[list[str], np.ndarray]:
    if isinstance(data, pd.DataFrame):
        names = list(data.columns) if columns is None else list(columns)
        missing = [c for c in names if c not in data.columns]
        if missing:
            raise ValueError(f"columns {missing} are not in the data (columns: {list(data.columns)})")
        non_numeric = [c for c in names if not pd.api.types.is_numeric_dtype(data[c])]
        if non_numeric:
            raise ValueError(f"columns {non_numeric} are not numeric")
        return [str(c) for c in names], _metric_sample(data[names].to_numpy(dtype=np.float64), "data")
    arr = _metric_sample(data, "data")
    arr = arr.reshape(arr.shape[0], -1)
    names = [f"x{j}" for j in range(arr.shape[1])] if columns is None else [str(c) for c in columns]
    if len(names) != arr.shape[1]:
        raise ValueError(f"columns must name the {arr.shape[1]} columns, got {len(names)} names")
    return names, arr


def summary_table(data, releases: Mapping[str, object], *, columns=None, grid_size: int = 512,
                  reference_name: str = "confidential", counts=None) -> pd.DataFrame:
    """Per-column summary of the confidential data and of each release (docs/mathematics.md §5).

    One row per (mechanism, column) with mean, SD, Q1, median, Q3, W1 (exact 1-D, per
    column) and KDE-L2 (``gaussian_kde`` on a common grid per column); the confidential
    data itself is the first row of each column, with W1 = KDE-L2 = 0.

    **Samples without a density.** A column with a single distinct value v (one record, or
    all equal) has Scott bandwidth :math:`h = s\\,n^{-1/5} = 0`: its Gaussian KDE
    :math:`\\hat f_h = \\frac1n\\sum_i\\varphi_h(\\cdot - x_i)` is the point mass
    :math:`\\delta_v`, the limit h → 0, which has no density. KDE-L2 is then the limit of its
    definition (:func:`_kde_l2_degenerate_aware`): since
    :math:`\\lVert\\varphi_h\\rVert_2 = (2\\sqrt\\pi\\,h)^{-1/2} \\to \\infty`,

    .. math:: \\mathrm{KDE\\text{-}L2} = \\begin{cases} 0 & \\text{both samples are the same point mass,}\\\\
              +\\infty & \\text{otherwise (against a density, or another point mass).}\\end{cases}

    A sample with several values whose Scott bandwidth is below ``KDE_MIN_BANDWIDTH``
    (values within ~1e-139 of each other, e.g. subnormals) has a KDE that double precision
    cannot evaluate (its peak exceeds 1e139, its L2 norm grows like :math:`h^{-1/2}`); it is
    taken at the same limit: 0 against the very same values with the same multiplicities
    (identical KDEs), +∞ otherwise. So KDE-L2 is never NaN and the call never fails on
    such a column; W1 (always finite) is the distance to read for it, and the summaries are
    always defined. Values must lie within ±MAX_ABS_VALUE.

    Parameters
    ----------
    data : pandas.DataFrame or array_like, shape (n,) or (n, d)
        Confidential data (numeric columns).
    releases : mapping of str to DataFrame or array_like, shape (m,) or (m, d)
        One synthetic release per mechanism, with the data's columns.
    columns : sequence of str, optional
        Columns to summarise (DataFrame) or names of the array's columns.
    grid_size : int in [2, MAX_KDE_GRID]
    counts : array_like of int ≥ 1, shape (n,), optional
        Multiplicities of the rows of ``data`` when it is a frequency table (its distinct
        rows): every number is then that of the rows repeated by their counts (the same
        grid, bandwidths, quantiles and W1), at a cost in the distinct rows only.

    Returns
    -------
    pandas.DataFrame with columns ``mechanism, column, mean, sd, q1, median, q3, W1, KDE_L2``
    """
    names, x = _columns_of(data, columns)
    c = None if counts is None else _counts(counts, (x.shape[0],))
    grid_size = check_integer("grid_size", grid_size, minimum=2, maximum=MAX_KDE_GRID)
    if not isinstance(releases, Mapping):
        raise ValueError(f"releases must be a mapping of mechanism name to release, got {type(releases).__name__}")
    released = {}
    for key, value in releases.items():
        if isinstance(value, pd.DataFrame):
            missing = [c for c in names if c not in value.columns]
            if missing:
                raise ValueError(f"release {key!r} lacks columns {missing}")
            non_numeric = [c for c in names if not pd.api.types.is_numeric_dtype(value[c])]
            if non_numeric:
                raise ValueError(f"release {key!r}: columns {non_numeric} are not numeric")
            z = _metric_sample(value[names].to_numpy(dtype=np.float64), f"release {key!r}")
        else:
            z = _metric_sample(value, f"release {key!r}")
        z = z.reshape(z.shape[0], -1)
        if z.shape[1] != x.shape[1]:
            raise ValueError(f"release {key!r} has {z.shape[1]} columns, the data has {x.shape[1]}")
        released[str(key)] = z
    rows = []
    for j, col in enumerate(names):
        xs = kde_x = x[:, j]
        kde_c = c
        if c is not None:
            # the KDE from the column's own frequency table: the distinct rows of several
            # columns repeat a column's values, and merging them (the same KDE) makes it cost O(k_j)
            kde_x, inverse = np.unique(xs, return_inverse=True)
            kde_c = np.bincount(inverse.ravel(), weights=c).astype(np.int64)
        grid = kde_grid(kde_x, *[z[:, j] for z in released.values()], size=grid_size, first_counts=kde_c)
        fx = _kde_or_point_masses(kde_x, grid, kde_c)
        rows.append({"mechanism": reference_name, "column": col, **column_summary(xs, c), "W1": 0.0,
                     "KDE_L2": 0.0})
        for key, z in released.items():
            zs = z[:, j]
            # the release's KDE from its own frequency table too (a release repeats values)
            z_values, z_counts = np.unique(zs, return_counts=True)
            rows.append({"mechanism": key, "column": col, **column_summary(zs),
                         "W1": float(wasserstein1(xs, zs, a_weights=c)),
                         "KDE_L2": _kde_l2_degenerate_aware(fx, _kde_or_point_masses(z_values, grid, z_counts), grid)})
    return pd.DataFrame(rows, columns=["mechanism", "column", "mean", "sd", "q1", "median", "q3", "W1", "KDE_L2"])
