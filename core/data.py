"""The data layer: read a CSV, prepare columns for the mechanism, reduce to a frequency table.

Implements the data side of SPEC §1–2 (issue 2, item 2):

* :func:`read_csv` reads a path, bytes or an uploaded file into a ``pandas.DataFrame``,
  turning every failure into a :class:`ValueError` a user can act on;
* :func:`prepare` validates the chosen columns and applies the public transforms of a
  numeric column, in this order and in these units:

  .. math::

      x \\xrightarrow{\\ \\text{round}(x,\\,d)\\ } x_d
        \\xrightarrow{\\ \\text{clip to }[lo,\\,hi]\\ } x_c
        \\xrightarrow{\\ \\log\\ (\\text{optional})\\ } u
        \\xrightarrow{\\ (u - g(lo)) / (g(hi) - g(lo))\\ } t \\in [0, 1],

  where ``d`` (decimals), ``lo``, ``hi`` are given in the column's original units and
  :math:`g` is ``log`` or the identity. The base measure of SPEC §2 is then
  ``H = Uniform[0, 1]`` per scaled numeric column (``Uniform[g(lo), g(hi)]`` without
  scaling) and :class:`~core.mechanisms.CategoricalBase` per categorical column; ``H``
  is their product. :meth:`PreparedData.to_original` maps synthetic values back;
* :func:`frequency_table` reduces values (a row is one atom, SPEC §2 "multi-column
  data") to the distinct values :math:`x^*_1..x^*_k` and multiplicities
  :math:`n_1..n_k` of SPEC §1, with the singleton count :math:`k_1` and the spectrum
  :math:`r \\mapsto \\#\\{i : n_i = r\\}` used by the accounting of SPEC §3;
* :func:`rounding_profile` tabulates how rounding changes the distinct and singleton
  counts (singletons set the plateau of δ in SPEC §3.1).

Bounds are public knowledge by assumption (SPEC §2). When they are missing they are read
off the data, with a :class:`~core.validation.PrivacyLeakWarning` and a per-column
``bounds_from_data`` flag so that a user interface can say the guarantee is weakened.
"""

from __future__ import annotations

import io
import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from .mechanisms import CategoricalBase, UniformBase
from .validation import (
    check_bounds,
    check_integer,
    check_multiplicities,
    warn_bounds_from_data,
)

__all__ = [
    "DEFAULT_MAX_BYTES",
    "ColumnSpec",
    "FrequencyTable",
    "PreparedColumn",
    "PreparedData",
    "frequency_table",
    "prepare",
    "read_csv",
    "rounding_profile",
]

#: Default upload limit of :func:`read_csv` (200 MiB, Streamlit's default upload limit).
DEFAULT_MAX_BYTES = 200 * 2**20

_KINDS = ("numeric", "categorical")
_SHOW = 5  # how many offending rows an error message lists


# --------------------------------------------------------------------------- reading


def read_csv(source, *, max_bytes: int | None = DEFAULT_MAX_BYTES, sep: str = ",") -> pd.DataFrame:
    """Read a CSV file with a header row into a DataFrame.

    Parameters
    ----------
    source : str, os.PathLike, bytes or file-like
        A path to a file (a ``str`` is always a path, never CSV text), the raw bytes of
        a file, or an object with ``read()`` (an open file, ``io.BytesIO``,
        ``io.StringIO``, Streamlit's ``UploadedFile``). A seekable file-like is read
        from its start.
    max_bytes : int ≥ 1 or None
        Size limit; ``None`` means no limit (command line, large files).
    sep : str
        Field separator.

    Returns
    -------
    pandas.DataFrame
        At least one column and one data row. Values are parsed by pandas (numbers
        become ``int64``/``float64``; empty cells and ``NA``/``nan`` become missing).

    Raises
    ------
    ValueError
        No such file, a file over ``max_bytes``, an empty file (no header), a header
        without data rows, text that is not UTF-8, or malformed CSV (rows with more
        fields than the header, an unterminated quote); the message says what to fix.
    """
    if max_bytes is not None:
        max_bytes = check_integer("max_bytes", max_bytes, minimum=1)
    name, payload = _open_source(source, max_bytes)
    with warnings.catch_warnings():
        # With index_col=False pandas drops the surplus fields of a long row with a mere
        # warning; a silently truncated confidential dataset is worse than an error.
        warnings.simplefilter("error", pd.errors.ParserWarning)
        try:
            frame = pd.read_csv(payload, sep=sep, index_col=False, encoding="utf-8-sig")
        except pd.errors.EmptyDataError:
            raise ValueError(f"{name} is empty: it has no header row and no data. Provide a CSV file "
                             "whose first line names the columns.") from None
        except pd.errors.ParserWarning:
            raise ValueError(f"{name} is not a valid CSV file: some rows have more fields than the header "
                             "row. Check the separator (pass the right one if it is not a comma) and "
                             "quote fields that contain it.") from None
        except pd.errors.ParserError as exc:
            detail = str(exc).strip().replace("Error tokenizing data. C error: ", "")
            raise ValueError(f"{name} is not a valid CSV file: {detail}. Check that every row has as many "
                             "fields as the header and that every quote is closed.") from None
        except UnicodeDecodeError as exc:
            raise ValueError(f"{name} is not UTF-8 text (byte {exc.start} cannot be decoded): is it a "
                             "spreadsheet or another binary file? Export it as 'CSV UTF-8'.") from None
    if frame.shape[1] == 0:
        raise ValueError(f"{name} has no columns. Provide a CSV file whose first line names the columns.")
    if frame.shape[0] == 0:
        raise ValueError(f"{name} has a header ({_list_names(frame.columns)}) but no data rows.")
    return frame


def _open_source(source, max_bytes: int | None):
    """Return a display name and something ``pandas.read_csv`` reads, after the size check."""
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if not path.is_file():
            raise ValueError(f"cannot read {str(path)!r}: no such file")
        _check_size(repr(path.name), path.stat().st_size, max_bytes)
        return repr(path.name), path
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
        _check_size("the uploaded data", len(data), max_bytes)
        return "the uploaded data", io.BytesIO(data)
    if hasattr(source, "read"):
        name = getattr(source, "name", None)
        name = repr(os.path.basename(name)) if isinstance(name, str) and name else "the uploaded file"
        if getattr(source, "seekable", lambda: False)():
            source.seek(0)  # a re-run of the app would otherwise find the stream exhausted
        data = source.read() if max_bytes is None else source.read(max_bytes + 1)
        if isinstance(data, str):
            data = data.encode("utf-8")
        if not isinstance(data, (bytes, bytearray)):
            raise ValueError(f"source.read() must return bytes or str, got {type(data).__name__}")
        # A stream is read to max_bytes + 1 only: the true size may be larger.
        _check_size(name, len(data), max_bytes, at_least=True)
        return name, io.BytesIO(data)
    raise ValueError(f"source must be a path, bytes or a file-like object with read(), got {type(source).__name__}")


def _check_size(name: str, size: int, max_bytes: int | None, *, at_least: bool = False) -> None:
    if max_bytes is not None and size > max_bytes:
        more = "more than " if at_least else ""
        raise ValueError(f"{name} is {more}{size / 2**20:.1f} MiB, above the limit of {max_bytes / 2**20:.1f} MiB "
                         f"(max_bytes={max_bytes}). Keep only the columns you need, or use the command line "
                         "(python -m core release), which has no size limit.")


# --------------------------------------------------------------------------- column specs


@dataclass(frozen=True)
class ColumnSpec:
    """How to prepare one column for the mechanism.

    Parameters
    ----------
    name : str
        Column name in the DataFrame.
    kind : {'numeric', 'categorical'}
        A categorical column keeps its values as labels; new values drawn from ``H``
        are ``new_category_1``, ``new_category_2``, … (SPEC §2).
    log : bool
        Numeric only: work with :math:`\\log x` (values must be > 0).
    bounds : (lo, hi) or None
        Numeric only: *public* bounds in the column's original units (before log).
        Values outside are clipped to them. ``None`` takes them from the data, which is
        not private (:class:`~core.validation.PrivacyLeakWarning`).
    decimals : int or None
        Numeric only: round to this recorded precision, in original units, before any
        other transform (``2`` -> cents, ``0`` -> units, ``-2`` -> hundreds; numpy's
        round-half-to-even). Also applied to new synthetic values by
        :meth:`PreparedData.to_original` (data-independent post-processing, SPEC §2).
    scale : bool
        Numeric only: map ``[g(lo), g(hi)]`` affinely to ``[0, 1]`` (``g`` = log or
        identity), as the histogram baselines of SPEC §4 need; otherwise ``H`` is
        uniform on ``[g(lo), g(hi)]``.
    categories : sequence or None
        Categorical only: the public list of categories (SPEC §2–3.3: with σ < 0,
        ``z = len(categories)``). Observed values must belong to it.
    """

    name: str
    kind: str = "numeric"
    log: bool = False
    bounds: tuple[float, float] | None = None
    decimals: int | None = None
    scale: bool = True
    categories: tuple | None = None

    def __post_init__(self):
        if self.name is None:
            raise ValueError("name must be a column name, got None")
        if self.kind not in _KINDS:
            raise ValueError(f"kind of column {self.name!r} must be 'numeric' or 'categorical', got {self.kind!r}")
        if self.kind == "categorical":
            numeric_only = [opt for opt, on in (("log", self.log), ("bounds", self.bounds is not None),
                                                ("decimals", self.decimals is not None)) if on]
            if numeric_only:
                raise ValueError(f"column {self.name!r} is categorical: {', '.join(numeric_only)} apply to "
                                 "numeric columns only")
            if self.categories is not None:
                categories = tuple(self.categories)
                if len(categories) == 0 or len(set(categories)) != len(categories):
                    raise ValueError(f"categories of column {self.name!r} must be a non-empty list without "
                                     f"repeats, got {self.categories!r}")
                object.__setattr__(self, "categories", categories)
            return
        if self.categories is not None:
            raise ValueError(f"column {self.name!r} is numeric: categories apply to categorical columns only")
        if self.bounds is not None:
            object.__setattr__(self, "bounds", check_bounds(self.bounds, f"bounds of column {self.name!r}",
                                                            positive=bool(self.log)))
        if self.decimals is not None:
            object.__setattr__(self, "decimals", check_integer(f"decimals of column {self.name!r}",
                                                               self.decimals, minimum=-15, maximum=15))


# --------------------------------------------------------------------------- frequency table


@dataclass(frozen=True, eq=False)
class FrequencyTable:
    """Distinct values and their multiplicities (SPEC §1).

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


def frequency_table(values) -> FrequencyTable:
    """Reduce values to distinct values and multiplicities (SPEC §1).

    Parameters
    ----------
    values : array_like, shape (n,) or (n, d)
        Numbers or labels (object arrays may mix types); for ``d`` columns a row is one
        atom (ties are whole-row ties, SPEC §2). Missing values are rejected.

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
    if arr.ndim == 1 and arr.dtype.kind in "biuf":
        _reject_missing(arr)
        atoms, counts = np.unique(arr, return_counts=True)
        return FrequencyTable(atoms, counts)
    columns = [arr] if arr.ndim == 1 else [arr[:, j] for j in range(arr.shape[1])]
    key = _column_codes(columns[0])
    for column in columns[1:]:
        codes = _column_codes(column)
        # key < n and codes < n after compression, so key * width + codes < n**2 fits int64.
        key = key * (int(codes.max()) + 1) + codes
        _, key = np.unique(key, return_inverse=True)
    _, first, counts = np.unique(key, return_index=True, return_counts=True)
    return FrequencyTable(arr[first], counts)


def _reject_missing(column: np.ndarray) -> None:
    missing = np.isnan(column) if column.dtype.kind == "f" else pd.isna(column)
    if np.any(missing):
        rows = np.flatnonzero(missing)
        raise ValueError(f"values contain {rows.size} missing value(s) (NaN), at "
                         f"{_rows(rows)}: remove or impute them first")


def _column_codes(column: np.ndarray) -> np.ndarray:
    """Integer codes 0..u-1 of one column, in sorted order of the values when orderable."""
    column = np.asarray(column)
    if column.dtype.kind in "biuf":
        _reject_missing(column)
        _, codes = np.unique(column, return_inverse=True)
        return codes.reshape(-1).astype(np.int64)
    _reject_missing(column)
    try:
        codes, _ = pd.factorize(column, sort=True)
    except TypeError:  # unorderable mix of types: order of appearance instead
        codes, _ = pd.factorize(column, sort=False)
    return codes.astype(np.int64)


def rounding_profile(values, decimals: Iterable[int | None]) -> pd.DataFrame:
    """How rounding to a coarser recorded precision changes the ties.

    For each entry ``d`` of ``decimals`` the values are rounded with
    ``numpy.round(values, d)`` (``None``: as recorded) and reduced with
    :func:`frequency_table`. Coarser rounding merges values, so it removes singletons,
    which lowers the δ plateau :math:`m/(m + \\theta + n - 1)` of SPEC §3.1 only when
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
    if arr.dtype.kind not in "biuf":
        raise ValueError(f"values must be numeric to be rounded, got dtype {arr.dtype}")
    arr = arr.astype(float)
    decimals = [None if d is None else check_integer("decimals", d, minimum=-15, maximum=15) for d in decimals]
    if not decimals:
        raise ValueError("decimals must list at least one precision (an int, or None for as recorded)")
    rows = []
    for d in decimals:  # a handful of precisions; each step is vectorised over n
        table = frequency_table(arr if d is None else np.round(arr, d))
        rows.append((d, table.k, table.singletons, int(table.counts.max())))
    frame = pd.DataFrame(rows, columns=["decimals", "distinct", "singletons", "max_multiplicity"])
    frame["decimals"] = frame["decimals"].astype("Int64")
    return frame


# --------------------------------------------------------------------------- preparing


@dataclass(frozen=True, eq=False)
class PreparedColumn:
    """One prepared column: its spec, the bounds actually used and the inverse map.

    Attributes
    ----------
    spec : ColumnSpec
    bounds : (lo, hi) or None
        Bounds in original units used for clipping and scaling (``None`` for a
        categorical column).
    bounds_from_data : bool
        The bounds were read off the confidential data (not private).
    n_clipped : int
        Number of values outside the public bounds, clipped to them.
    base : UniformBase or CategoricalBase
        This column's factor of the base measure ``H``, in transformed space.
    """

    spec: ColumnSpec
    bounds: tuple[float, float] | None
    bounds_from_data: bool
    n_clipped: int
    base: UniformBase | CategoricalBase
    # Sorted distinct transformed values and the original values they came from, so
    # that old atoms map back exactly instead of through exp/scale round-off.
    _lookup_transformed: np.ndarray | None = field(default=None, repr=False)
    _lookup_original: np.ndarray | None = field(default=None, repr=False)

    @property
    def name(self):
        return self.spec.name

    @property
    def kind(self) -> str:
        return self.spec.kind

    def transformed_bounds(self) -> tuple[float, float] | None:
        """``(g(lo), g(hi))``: the bounds after the log transform, before scaling."""
        if self.bounds is None:
            return None
        lo, hi = self.bounds
        return (float(np.log(lo)), float(np.log(hi))) if self.spec.log else (lo, hi)

    def inverse(self, column) -> np.ndarray:
        """Map transformed values of this column back to original units.

        .. math:: x = \\mathrm{clip}\\big(\\mathrm{round}(g^{-1}(g(lo) + t\\,(g(hi) - g(lo))),\\ d),\\ lo,\\ hi\\big)

        Values equal to a transformed confidential value map back to that value
        exactly. Rounding (``decimals``) and clipping only touch the other (new) values;
        they are data-independent post-processing (SPEC §2). Clipping comes last so
        every output lies within the public bounds, even when ``lo``/``hi`` are not on
        the rounding grid. With ``decimals <= 0`` the result is ``int64``.
        """
        if self.kind == "categorical":
            return np.asarray(column, dtype=object)
        t = np.asarray(column, dtype=float)
        tlo, thi = self.transformed_bounds()
        u = tlo + t * (thi - tlo) if self.spec.scale else t
        x = np.exp(u) if self.spec.log else u
        if self.spec.decimals is not None:
            x = np.round(x, self.spec.decimals)
        x = np.clip(x, *self.bounds)
        table = self._lookup_transformed
        if table is not None and table.size and t.size:
            pos = np.minimum(np.searchsorted(table, t), table.size - 1)
            hit = table[pos] == t
            x = np.where(hit, self._lookup_original[pos], x)
        if self.spec.decimals is not None and self.spec.decimals <= 0 and np.all(np.abs(x) < 2.0**53):
            x = x.astype(np.int64)
        return x


@dataclass(frozen=True, eq=False)
class PreparedData:
    """Confidential data ready for :func:`core.mechanisms.pypp_release`.

    Attributes
    ----------
    values : ndarray, shape (n,) or (n, d)
        Transformed values: ``float64`` when every column is numeric, ``object`` if a
        column is categorical. Shape ``(n,)`` for a single column.
    table : FrequencyTable
        ``frequency_table(values)``: the atoms and multiplicities the mechanism and the
        accounting use (SPEC §1; after rounding and clipping, so ties created by them
        count).
    column_info : tuple of PreparedColumn
        Per column: spec, bounds used, ``bounds_from_data``, ``n_clipped``, base.

    Examples
    --------
    >>> prepared = prepare(frame, [ColumnSpec("earnings", log=True, bounds=(1, 100))])
    >>> release = pypp_release(prepared.table.atoms, prepared.table.counts, 0.0, 2.0, 500,
    ...                        rng, base=prepared.bases)
    >>> synthetic = prepared.to_original(release.values)
    """

    values: np.ndarray
    table: FrequencyTable
    column_info: tuple[PreparedColumn, ...]

    @property
    def n(self) -> int:
        return int(self.values.shape[0])

    @property
    def d(self) -> int:
        return len(self.column_info)

    @property
    def columns(self) -> tuple:
        return tuple(c.name for c in self.column_info)

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(c.kind for c in self.column_info)

    @property
    def bases(self) -> list:
        """Base measure of each column in transformed space (the ``base`` of ``pypp_release``)."""
        return [c.base for c in self.column_info]

    @property
    def bounds_from_data(self) -> tuple[bool, ...]:
        return tuple(c.bounds_from_data for c in self.column_info)

    @property
    def any_bounds_from_data(self) -> bool:
        """Whether some bound was read off the data, so the guarantee does not cover it."""
        return any(self.bounds_from_data)

    @property
    def n_clipped(self) -> tuple[int, ...]:
        return tuple(c.n_clipped for c in self.column_info)

    def to_original(self, values) -> pd.DataFrame:
        """Map values in transformed space (e.g. a release) back to original units.

        Parameters
        ----------
        values : array_like, shape (m,) or (m, d)
            ``(m,)`` is accepted for one column.

        Returns
        -------
        pandas.DataFrame
            Shape ``(m, d)``, the original column names; see :meth:`PreparedColumn.inverse`.
        """
        arr = np.asarray(values)
        if arr.ndim == 1 and self.d == 1:
            arr = arr.reshape(-1, 1)
        if arr.ndim != 2 or arr.shape[1] != self.d:
            raise ValueError(f"values must have shape (m, {self.d})" + (" or (m,)" if self.d == 1 else "")
                             + f" to match the prepared columns, got shape {arr.shape}")
        return pd.DataFrame({c.name: c.inverse(arr[:, j]) for j, c in enumerate(self.column_info)})

    def describe(self) -> list[dict]:
        """JSON-ready description of each column's transforms (for reports and the UI)."""
        out = []
        for c in self.column_info:
            entry = {"column": c.name, "kind": c.kind}
            if c.kind == "numeric":
                entry.update(
                    decimals=c.spec.decimals, log=bool(c.spec.log),
                    bounds=[c.bounds[0], c.bounds[1]], bounds_from_data=c.bounds_from_data,
                    clipped=c.n_clipped, scaled_to_unit_interval=bool(c.spec.scale),
                    base_measure=f"uniform on [{c.base.lo!r}, {c.base.hi!r}] in transformed units")
            else:
                entry.update(categories=None if c.spec.categories is None else list(c.spec.categories),
                             base_measure="new labels new_category_1, new_category_2, ..."
                             if c.spec.categories is None else "unobserved public categories")
            out.append(entry)
        return out


def prepare(frame: pd.DataFrame, specs) -> PreparedData:
    """Validate and transform the chosen columns (see the module docstring for the order).

    Parameters
    ----------
    frame : pandas.DataFrame
        The confidential data, e.g. from :func:`read_csv`.
    specs : ColumnSpec, str, or sequence of them
        The columns to release, in order; a bare name means ``ColumnSpec(name)``
        (numeric, no transform, bounds from the data).

    Returns
    -------
    PreparedData

    Raises
    ------
    ValueError
        No column chosen or chosen twice; no such column; fewer than 2 rows; a
        non-numeric value in a numeric column (row and value named); missing values
        (how many, which rows); infinite values; a value ≤ 0 under log; a constant
        column without public bounds.

    Warns
    -----
    PrivacyLeakWarning
        Once per numeric column whose bounds are taken from the data.
    """
    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"frame must be a pandas DataFrame, got {type(frame).__name__}")
    specs = _normalise_specs(specs)
    missing = [s.name for s in specs if s.name not in frame.columns]
    if missing:
        hint = ""
        if frame.shape[1] == 1 and any(ch in str(frame.columns[0]) for ch in ";\t|"):
            hint = " The file seems to use another separator than a comma: pass it explicitly (sep)."
        raise ValueError(f"no column named {missing[0]!r}; the columns are {_list_names(frame.columns)}.{hint}")
    if len(frame) < 2:
        raise ValueError(f"the data have {len(frame)} row(s); the mechanism needs at least 2 records")

    prepared, transformed = [], []
    for spec in specs:  # loop over the d columns; each step is vectorised over n
        series = frame[spec.name]
        if isinstance(series, pd.DataFrame):
            raise ValueError(f"the data have several columns named {spec.name!r}; rename them")
        if spec.kind == "numeric":
            column, values = _prepare_numeric(series, spec)
            if column.bounds_from_data:
                warn_bounds_from_data(f"bounds of column {spec.name!r}")
        else:
            column, values = _prepare_categorical(series, spec)
        prepared.append(column)
        transformed.append(values)

    if len(transformed) == 1:
        values = transformed[0]
    elif all(s.kind == "numeric" for s in specs):
        values = np.column_stack(transformed)
    else:
        values = np.empty((len(frame), len(specs)), dtype=object)
        for j, column_values in enumerate(transformed):
            values[:, j] = column_values
    return PreparedData(values=values, table=frequency_table(values), column_info=tuple(prepared))


def _normalise_specs(specs) -> list[ColumnSpec]:
    if isinstance(specs, (ColumnSpec, str)):
        specs = [specs]
    try:
        specs = [s if isinstance(s, ColumnSpec) else ColumnSpec(s) for s in specs]
    except TypeError:
        raise ValueError(f"specs must be a ColumnSpec, a column name or a list of them, got {specs!r}") from None
    if not specs:
        raise ValueError("choose at least one column to release")
    names = [s.name for s in specs]
    repeated = sorted({n for n in names if names.count(n) > 1}, key=names.index)
    if repeated:
        raise ValueError(f"column {repeated[0]!r} is chosen more than once; choose each column once")
    return specs


def _prepare_numeric(series: pd.Series, spec: ColumnSpec) -> tuple[PreparedColumn, np.ndarray]:
    name = spec.name
    if series.dtype.kind == "b":
        series = series.astype(float)
    numbers = pd.to_numeric(series, errors="coerce")
    present = series.notna().to_numpy()
    not_numeric = np.flatnonzero(numbers.isna().to_numpy() & present)
    if not_numeric.size:
        first = series.iloc[not_numeric[0]]
        raise ValueError(
            f"column {name!r} has {not_numeric.size} non-numeric value(s), e.g. {first!r} at "
            f"{_rows(not_numeric)} (rows counted from 1 after the header). Fix those cells, or treat "
            "the column as categorical.")
    x = numbers.to_numpy(dtype=float)
    nan = np.flatnonzero(~present)
    if nan.size:
        raise ValueError(f"column {name!r} has {nan.size} missing value(s) (empty or NaN) at "
                         f"{_rows(nan)} (rows counted from 1 after the header). Remove or impute them "
                         "before releasing.")
    infinite = np.flatnonzero(np.isinf(x))
    if infinite.size:
        raise ValueError(f"column {name!r} has {infinite.size} infinite value(s) at {_rows(infinite)}; "
                         "replace them with finite numbers")
    if spec.decimals is not None:
        x = np.round(x, spec.decimals)
    if spec.log:
        bad = np.flatnonzero(x <= 0)
        if bad.size:
            rounded = f" after rounding to {spec.decimals} decimals" if spec.decimals is not None else ""
            raise ValueError(
                f"column {name!r} has {bad.size} value(s) <= 0{rounded} (smallest {float(x[bad].min())!r}, at "
                f"{_rows(bad)}), but log needs positive values. Turn off log, or remove those rows.")

    if spec.bounds is None:
        lo, hi = float(x.min()), float(x.max())
        if not lo < hi:
            raise ValueError(f"column {name!r} takes the single value {lo!r}, so bounds cannot be read off "
                             "the data; supply public bounds (lo, hi) for it")
        from_data = True
    else:
        lo, hi = spec.bounds
        from_data = False
    n_clipped = int(np.count_nonzero((x < lo) | (x > hi)))
    x = np.clip(x, lo, hi)

    tlo, thi = (float(np.log(lo)), float(np.log(hi))) if spec.log else (lo, hi)
    t = np.log(x) if spec.log else x
    if spec.scale:
        # Clip again: log is not guaranteed monotone to the last ulp across platforms.
        t = np.clip((t - tlo) / (thi - tlo), 0.0, 1.0)
        base = UniformBase(0.0, 1.0)
    else:
        base = UniformBase(tlo, thi)
    lookup_t, first = np.unique(t, return_index=True)
    column = PreparedColumn(spec=spec, bounds=(lo, hi), bounds_from_data=from_data, n_clipped=n_clipped,
                            base=base, _lookup_transformed=lookup_t, _lookup_original=x[first])
    return column, t


def _prepare_categorical(series: pd.Series, spec: ColumnSpec) -> tuple[PreparedColumn, np.ndarray]:
    name = spec.name
    missing = np.flatnonzero(series.isna().to_numpy())
    if missing.size:
        raise ValueError(f"column {name!r} has {missing.size} missing value(s) (empty or NaN) at "
                         f"{_rows(missing)} (rows counted from 1 after the header). Remove them, or "
                         "replace them with an explicit label such as 'missing'.")
    values = series.to_numpy(dtype=object)
    if spec.categories is not None:
        unknown = np.flatnonzero(~series.isin(spec.categories).to_numpy())
        if unknown.size:
            raise ValueError(f"column {name!r} has {unknown.size} value(s) outside its public category list, "
                             f"e.g. {values[unknown[0]]!r} at {_rows(unknown)}; add them to the list")
    column = PreparedColumn(spec=spec, bounds=None, bounds_from_data=False, n_clipped=0,
                            base=CategoricalBase(spec.categories))
    return column, values


def _rows(positions: np.ndarray) -> str:
    """'row 3' or 'rows 3, 8, 10, 11, 12 and 4 more': 1-based row numbers for messages."""
    shown = ", ".join(str(int(p) + 1) for p in positions[:_SHOW])
    if positions.size > _SHOW:
        shown += f" and {positions.size - _SHOW} more"
    return f"row {shown}" if positions.size == 1 else f"rows {shown}"


def _list_names(names: Sequence, limit: int = 20) -> str:
    names = [repr(n) for n in names]
    text = ", ".join(names[:limit])
    return text + (f", ... ({len(names) - limit} more)" if len(names) > limit else "")
