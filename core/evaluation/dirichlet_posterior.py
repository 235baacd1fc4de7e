"""The analyst's posterior from a σ < 0 release: a Dirichlet over the public domain (docs/quality.md §10).

With σ < 0 the PYPP release is the posterior predictive of the Dirichlet–multinomial model: a
prior Dir(α, …, α) with α = |σ| on the probabilities of the z public cells (θ = zα), updated by
the data's cell counts (docs/mathematics.md §3.3). An analyst who receives only the release
Z = (Z₁, …, Z_m) and puts the mechanism's own prior on the cells gets, by conjugacy,

.. math:: p \\mid Z \\sim \\mathrm{Dir}(\\alpha + c_1(Z), \\dots, \\alpha + c_z(Z)),

the finite-dimensional form of the Dirichlet-process posterior of paper §4.1 (a DP whose base
measure is uniform on z atoms is this Dirichlet). One column's law is an aggregate of cells: by the
aggregation property its probabilities over its own public values v (z_j of them) are
Dir(α z / z_j + c_v(Z)), with c_v(Z) the released rows whose column value is v. Posterior means
and equal-tailed credible intervals of the mean, the quartiles, P(X > t) and the category shares
follow from draws of that Dirichlet.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..validation import check_integer, check_real, check_rng

__all__ = ["dirichlet_column_posterior", "domain_codes"]


def domain_codes(domain, values, *, numeric: bool, missing: bool = False) -> np.ndarray:
    """The index in ``domain`` of each value: the nearest public point of a numeric column
    (``domain`` increasing; a released value is a grid point up to its printed precision), the
    equal label of a categorical one (a missing value — None or NaN — is the label ``None``).
    A missing number (NaN) is the cell after the points, ``len(domain)``, when the column keeps
    missing cells as a value (``missing``), and a ValueError otherwise. Cost O((m + z_j) log z_j).
    Raises ValueError for a label outside the domain."""
    values = np.asarray(values, dtype=object if not numeric else np.float64).ravel()
    if numeric:
        points = np.asarray(domain, dtype=np.float64)
        absent = np.isnan(values)
        if absent.any() and not missing:
            raise ValueError("a missing value is not in the column's public domain (missing cells are not a value)")
        right = np.clip(np.searchsorted(points, values), 1, max(points.size - 1, 1))
        left = right - 1
        if points.size == 1:
            codes = np.zeros(values.size, dtype=np.int64)
        else:
            codes = np.where(np.abs(values - points[left]) <= np.abs(points[right] - values), left, right)
        return np.where(absent, points.size, codes).astype(np.int64)
    index = {label: c for c, label in enumerate(domain)}
    out = np.empty(values.size, dtype=np.int64)
    for i, v in enumerate(values.tolist()):   # a column's labels: a dictionary look-up each, no arithmetic over m
        key = None if v is None or (isinstance(v, float) and v != v) else v
        if key not in index:
            raise ValueError(f"value {v!r} is not in the column's public domain")
        out[i] = index[key]
    return out


def _quantile(points: np.ndarray, probs: np.ndarray, q: float) -> np.ndarray:
    """The q-quantile (the first point whose cumulative probability reaches q) of each row of ``probs``."""
    cdf = np.cumsum(probs, axis=-1)
    return points[np.minimum((cdf < q - 1e-12).sum(axis=-1), points.size - 1)]


def dirichlet_column_posterior(domain, released_codes, prior_weight: float, *, numeric: bool, draws: int,
                               rng: np.random.Generator, level: float = 0.95, threshold: float | None = None,
                               confidential_codes=None, confidential_counts=None, labels=None,
                               missing: bool = False) -> pd.DataFrame:
    """Posterior summaries of one column from a σ < 0 release (see the module docstring).

    Parameters
    ----------
    domain : array_like, shape (z_j,)
        The column's public values: increasing numbers (a public grid, original units) or labels.
    released_codes : array_like of int in [0, z_j), shape (m,)
        The index in ``domain`` of each released row's value.
    prior_weight : float > 0
        α z / z_j, the prior weight of each public value of the column.
    numeric : bool
        Summaries of a number (mean, quartiles, P(X > t)) or of a category (shares).
    draws : int ≥ 10
        Posterior draws.
    rng : numpy.random.Generator
    level : float in (0, 1)
        Credible level of the equal-tailed intervals.
    threshold : float, optional
        t of P(X > t) (numeric).
    confidential_codes, confidential_counts : array_like, optional
        The confidential column as a frequency table of codes (curator only): its value of each
        quantity, and whether the interval contains it.
    labels : sequence of str, optional
        Names of the categories (categorical; default: the domain as text).
    missing : bool
        A numeric column keeps missing cells as a value: one more public cell after the points
        (code ``len(domain)``; docs/mathematics.md §2.5). The numeric summaries are then those of
        the present values (each draw's weights on the points renormalised), and ``P(missing)``
        is one more row. (A categorical column's list holds its missing label itself.)

    Returns
    -------
    pandas.DataFrame
        ``quantity, posterior mean, lower, upper`` (and ``confidential, covered``).
    """
    domain = np.asarray(domain)
    points_count = check_integer("domain size", domain.size, minimum=1)
    cell_for_missing = bool(missing) and numeric
    z = points_count + cell_for_missing
    codes = np.asarray(released_codes, dtype=np.int64).ravel()
    if codes.size and (codes.min() < 0 or codes.max() >= z):
        raise ValueError(f"released_codes must index the {z} public values")
    prior_weight = check_real("prior_weight", prior_weight, low=0.0, low_open=True)
    draws = check_integer("draws", draws, minimum=10, maximum=100_000)
    level = check_real("level", level, low=0.0, high=1.0, low_open=True, high_open=True)
    rng = check_rng(rng)
    posterior = prior_weight + np.bincount(codes, minlength=z).astype(np.float64)
    p = rng.dirichlet(posterior, size=draws)          # (draws, z_j): cost O(draws · z_j), no loop over m
    truth = None
    if confidential_codes is not None:
        w = np.bincount(np.asarray(confidential_codes, dtype=np.int64), weights=np.asarray(confidential_counts, float),
                        minlength=z)
        truth = w / w.sum()
    rows = []

    def add(name, values, true_value):
        lo, hi = np.quantile(values, [(1 - level) / 2, (1 + level) / 2])
        row = {"quantity": name, "posterior mean": float(np.mean(values)), "lower": float(lo), "upper": float(hi)}
        if true_value is not None:
            row.update(confidential=float(true_value), covered=bool(lo <= true_value <= hi))
        rows.append(row)

    if numeric:
        points = domain.astype(np.float64)
        # the present values' law: each draw's weights on the points, renormalised (the missing cell apart)
        present = p[:, :points_count] / p[:, :points_count].sum(axis=1, keepdims=True)
        shown = None
        if truth is not None and truth[:points_count].sum() > 0:
            shown = truth[:points_count] / truth[:points_count].sum()
        add("mean", present @ points, None if shown is None else float(shown @ points))
        for q, name in ((0.25, "Q1"), (0.5, "median"), (0.75, "Q3")):
            add(name, _quantile(points, present, q), None if shown is None else float(_quantile(points, shown, q)))
        if threshold is not None:
            above = points > float(threshold)
            add(f"P(X > {threshold:g})", present[:, above].sum(axis=1),
                None if shown is None else float(shown[above].sum()))
        if cell_for_missing:
            add("P(missing)", p[:, -1], None if truth is None else float(truth[-1]))
    else:
        names = [str(v) for v in (labels if labels is not None else domain)]
        for c, name in enumerate(names):
            add(f"P(X = {name})", p[:, c], None if truth is None else float(truth[c]))
    return pd.DataFrame(rows)
