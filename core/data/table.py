"""The frequency table: distinct values x*_1..x*_k with multiplicities n_1..n_k, the
singleton count and the spectrum r ↦ #{i : n_i = r} the accounting reads
(docs/mathematics.md §1).
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Iterable

import numpy as np
import pandas as pd

from ..validation import (
    check_integer,
    check_multiplicities,
)
from .messages import _rows
from .reading import _EXACT_FLOAT_INT


@dataclass(frozen=True, eq=False)
class FrequencyTable:
    """Distinct values and their multiplicities (docs/mathematics.md §1).

    Attributes
    ----------
    atoms : ndarray, shape (k,) or (k, d)
        The distinct values :math:`x^*_1..x^*_k` (distinct rows for multi-column data).
        Sorted (lexicographically by column) when the values are orderable.
    counts : ndarray of int64, shape (k,)
        Multiplicities :math:`n_1..n_k \\ge 1`, aligned with ``atoms``.
    """

    atoms: np.ndarray
    counts: np.ndarray

    def __post_init__(self):
        atoms = np.asarray(self.atoms)
        counts = check_multiplicities(self.counts, "counts")
        if atoms.ndim not in (1, 2) or atoms.shape[0] != counts.size:
            raise ValueError(f"atoms must have shape (k,) or (k, d) with k = len(counts) = {counts.size}, "
                             f"got {atoms.shape}")
        object.__setattr__(self, "atoms", atoms)
        object.__setattr__(self, "counts", counts)

    @property
    def n(self) -> int:
        """Number of records :math:`n = \\sum_i n_i`."""
        return int(self.counts.sum())

    @property
    def k(self) -> int:
        """Number of distinct values."""
        return int(self.counts.size)

    @property
    def singletons(self) -> int:
        """:math:`k_1 = \\#\\{i : n_i = 1\\}`."""
        return int(np.count_nonzero(self.counts == 1))

    def spectrum(self) -> tuple[np.ndarray, np.ndarray]:
        """Multiplicity spectrum.

        Returns
        -------
        r : ndarray of int64, shape (J,)
            The multiplicities present, increasing.
        distinct : ndarray of int64, shape (J,)
            :math:`\\#\\{i : n_i = r\\}` for each ``r``; ``(r * distinct).sum() == n``.
        """
        r, distinct = np.unique(self.counts, return_counts=True)
        return r.astype(np.int64), distinct.astype(np.int64)


def frequency_table(values, counts=None, *, missing_atom: bool = False) -> FrequencyTable:
    """Reduce values to distinct values and multiplicities (docs/mathematics.md §1).

    Parameters
    ----------
    values : array_like, shape (n,) or (n, d)
        Numbers or labels (object arrays may mix types); for ``d`` columns a row is one
        atom (ties are whole-row ties, docs/mathematics.md §2). Missing values are rejected.
    counts : array_like of int ≥ 1, shape (n,), or None
        How many records each row of ``values`` stands for (a table that repeats a
        value has its counts added); ``None``: one each.

    Returns
    -------
    FrequencyTable
        With :math:`\\sum_i n_i = n`.

    Notes
    -----
    Vectorised: ``np.unique`` for a numeric column; otherwise each column is
    factorised and the codes are combined row-wise into one integer key, re-compressed
    after each column so the key stays below ``n**2``. Cost :math:`O(d\\, n\\log n)`.
    """
    arr = values.to_numpy() if isinstance(values, (pd.Series, pd.DataFrame)) else np.asarray(values)
    if arr.ndim not in (1, 2):
        raise ValueError(f"values must have shape (n,) or (n, d), got shape {arr.shape}")
    if arr.shape[0] == 0 or (arr.ndim == 2 and arr.shape[1] == 0):
        raise ValueError(f"values are empty (shape {arr.shape}): the data must have at least one record")
    weights = None if counts is None else check_multiplicities(counts, "counts")
    if weights is not None and weights.size != arr.shape[0]:
        raise ValueError(f"counts must have one entry per row of values ({arr.shape[0]}), got {weights.size}")
    if arr.ndim == 1 and arr.dtype.kind in "biuf":
        if not missing_atom:
            _reject_missing(arr)
        if weights is None:
            atoms, counts = np.unique(arr, return_counts=True)
            return FrequencyTable(atoms, counts)
        atoms, inverse = np.unique(arr, return_inverse=True)
        return FrequencyTable(atoms, _summed(inverse.reshape(-1), weights, atoms.size))
    columns = [arr] if arr.ndim == 1 else [arr[:, j] for j in range(arr.shape[1])]
    key = _column_codes(columns[0], missing_atom)
    for column in columns[1:]:
        codes = _column_codes(column, missing_atom)
        # key < n and codes < n after compression, so key * width + codes < n**2 fits int64.
        key = key * (int(codes.max()) + 1) + codes
        _, key = np.unique(key, return_inverse=True)
    _, first, inverse, counts = np.unique(key, return_index=True, return_inverse=True, return_counts=True)
    if weights is not None:
        counts = _summed(inverse.reshape(-1), weights, first.size)
    return FrequencyTable(arr[first], counts)


def _summed(groups: np.ndarray, weights: np.ndarray, size: int) -> np.ndarray:
    """Exact int64 sums of ``weights`` per group (``np.bincount`` would sum in float64)."""
    out = np.zeros(size, dtype=np.int64)
    np.add.at(out, groups, weights)
    return out


def _reject_missing(column: np.ndarray) -> None:
    missing = np.isnan(column) if column.dtype.kind == "f" else pd.isna(column)
    if np.any(missing):
        rows = np.flatnonzero(missing)
        raise ValueError(f"values contain {rows.size} missing value(s) (NaN), at "
                         f"{_rows(rows)}: remove or impute them first")


def _column_codes(column: np.ndarray, missing_atom: bool = False) -> np.ndarray:
    """Integer codes 0..u-1 of one column, in sorted order of the values when orderable;
    with ``missing_atom`` every missing cell (NaN, ``None``) shares one code of its own."""
    column = np.asarray(column)
    if not missing_atom:
        _reject_missing(column)
    if column.dtype.kind in "biuf":
        _, codes = np.unique(column, return_inverse=True)   # NaNs are one value (equal_nan)
        return codes.reshape(-1).astype(np.int64)
    try:
        codes, uniques = pd.factorize(column, sort=True)
    except TypeError:  # unorderable mix of types: order of appearance instead
        codes, uniques = pd.factorize(column, sort=False)
    # The missing atom sorts last, whatever the file's row order (sorting the values with
    # it would silently fall back to the order of appearance).
    return np.where(codes < 0, len(uniques), codes).astype(np.int64)


def rounding_profile(values, decimals: Iterable[int | None]) -> pd.DataFrame:
    """How rounding to a coarser recorded precision changes the ties.

    For each entry ``d`` of ``decimals`` the values are rounded with
    ``numpy.round(values, d)`` (``None``: as recorded) and reduced with
    :func:`frequency_table`. Coarser rounding merges values, so it removes singletons,
    which lowers the δ plateau :math:`m/(m + \\theta + n - 1)` of docs/mathematics.md §3.1 only when
    no singleton is left.

    Parameters
    ----------
    values : array_like of float, shape (n,) or (n, d)
        Numeric values in original units (every column is rounded alike).
    decimals : iterable of int or None

    Returns
    -------
    pandas.DataFrame
        One row per entry of ``decimals``: columns ``decimals`` (nullable int),
        ``distinct`` (k), ``singletons`` (k_1), ``max_multiplicity``.
    """
    arr = values.to_numpy() if isinstance(values, (pd.Series, pd.DataFrame)) else np.asarray(values)
    decimals = [None if d is None else check_integer("decimals", d, minimum=-15, maximum=15) for d in decimals]
    if not decimals:
        raise ValueError("decimals must list at least one precision (an int, or None for as recorded)")
    exact = _exact_integer_array(arr)
    if exact is None and arr.dtype.kind not in "biuf":
        raise ValueError(f"values must be numeric to be rounded, got dtype {arr.dtype} (text, or numbers mixed with "
                         "text or missing cells); rounding applies to numeric columns")
    if exact is None:
        arr = arr.astype(float)
    rows = []
    for d in decimals:  # a handful of precisions; each step is vectorised over n
        if exact is not None:  # whole numbers beyond 2**53: round exactly, on the distinct values
            codes, uniques = exact
            rounded = _round_integers(uniques, d)
            counts = pd.Series(np.bincount(codes, minlength=len(uniques))).groupby(
                pd.factorize(np.asarray(rounded, dtype=object))[0]).sum().to_numpy()
            table = FrequencyTable(np.arange(counts.size), counts)
        else:
            table = frequency_table(arr if d is None else np.round(arr, d))
        rows.append((d, table.k, table.singletons, int(table.counts.max())))
    frame = pd.DataFrame(rows, columns=["decimals", "distinct", "singletons", "max_multiplicity"])
    frame["decimals"] = frame["decimals"].astype("Int64")
    return frame


def _exact_integer_array(arr: np.ndarray):
    """``(codes, distinct Python ints)`` for whole numbers that float64 cannot all hold, else None."""
    if arr.ndim != 1 or arr.size == 0:
        return None
    if arr.dtype.kind in "iu":
        if np.abs(arr.astype(float)).max() < _EXACT_FLOAT_INT:
            return None
    elif arr.dtype != object or not all(isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_))
                                        for v in arr):
        return None
    codes, uniques = pd.factorize(arr, sort=True)
    return codes, [int(v) for v in uniques]


def _round_integers(values: list[int], decimals: int | None) -> list[int]:
    """Exact round-half-to-even of whole numbers to ``10**-decimals`` (a no-op for ``decimals >= 0``)."""
    if decimals is None or decimals >= 0:
        return values
    p = 10 ** (-decimals)
    out = []
    for v in values:  # the distinct values of a rare exact-integer column
        q, r = divmod(v, p)
        out.append((q + (2 * r > p or (2 * r == p and q % 2 == 1))) * p)
    return out
