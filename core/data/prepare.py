"""Preparing the chosen columns for the mechanism: round, clip to public bounds, optional log,
scale to [0, 1] (docs/mathematics.md §2), and back to original units afterwards.
"""
from __future__ import annotations

import dataclasses
import math
import numbers
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
import pandas as pd

from .domain import CategoricalBase, GridBase, UniformBase
from ..validation import (
    check_integer,
    warn_bounds_from_data,
)
from .messages import _MISSING_CHOICES_TEXT, _ROW_ORIGIN, _TABLE_ENTRIES, _list_names, _records, _row_note, _rows
from .reading import _EXACT_FLOAT_INT, _INT_PATTERN
from .specs import ColumnSpec, normalise_specs
from .table import FrequencyTable, _exact_integer_array, _round_integers, frequency_table


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
    n_missing : int
        Records with a missing cell in this column. With ``spec.missing == 'value'``: the
        multiplicity of the missing atom among the records released from (after any
        dropping for another column). With ``'drop'``: the records dropped because of
        this column, counted before any dropping (a record missing in two dropped columns
        counts in both). ``0`` otherwise.
    """

    spec: ColumnSpec
    bounds: tuple[float, float] | None
    bounds_from_data: bool
    n_clipped: int
    base: UniformBase | CategoricalBase
    n_missing: int = 0
    # Sorted distinct transformed values and the original values they came from, so
    # that old atoms map back exactly instead of through exp/scale round-off.
    _lookup_transformed: np.ndarray | None = field(default=None, repr=False)
    _lookup_original: np.ndarray | None = field(default=None, repr=False)
    # Whole numbers beyond 2**53 prepared in exact arithmetic (see _prepare_exact_integers).
    _exact_integers: bool = field(default=False, repr=False)
    #: Decimals read off the data (the fewest to which every value of the column is rounded; 0
    #: for whole numbers), only when the spec asks for them (``precision_from_data``: a
    #: data-dependent choice, docs/mathematics.md §2.4); ``None`` otherwise.
    recorded_decimals: int | None = None

    @property
    def output_decimals(self) -> int | None:
        """Decimals new values are rounded to: the spec's public ``decimals``; else, with
        ``precision_from_data``, those read off the data; else ``None`` (full precision)."""
        return self.spec.decimals if self.spec.decimals is not None else self.recorded_decimals

    @property
    def name(self):
        return self.spec.name

    @property
    def kind(self) -> str:
        return self.spec.kind

    @property
    def missing(self) -> str | None:
        """What a missing cell means: ``'value'``, ``'drop'`` or ``None`` (:class:`ColumnSpec`)."""
        return self.spec.missing

    def transformed_bounds(self) -> tuple[float, float] | None:
        """``(g(lo), g(hi))``: the bounds after the log transform, before scaling."""
        if self.bounds is None:
            return None
        lo, hi = self.bounds
        return (math.log(lo), math.log(hi)) if self.spec.log else (float(lo), float(hi))

    def inverse(self, column) -> np.ndarray:
        """Map transformed values of this column back to original units.

        .. math:: x = \\mathrm{clip}\\big(\\mathrm{round}(g^{-1}(g(lo) + t\\,(g(hi) - g(lo))),\\ d),\\ lo,\\ hi\\big)

        Values equal to a transformed confidential value map back to that value
        exactly. Rounding (:attr:`output_decimals`) and clipping only touch the other
        (new) values; with public decimals and bounds they are data-independent
        post-processing (docs/mathematics.md §2.4). Clipping comes last so every output
        lies within the public bounds, even when ``lo``/``hi`` are not on the rounding
        grid. The form of the column depends on the values returned and nothing else
        (docs/mathematics.md §2.6): whole numbers (``int64``, or Python ints beyond it)
        when every one of them is whole, else ``float64``.

        The missing atom (``missing='value'``: NaN in transformed space, ``None`` in a
        categorical column) maps back to a missing cell, written as an empty cell in a
        CSV: NaN in a float column, ``<NA>`` in a column of whole numbers (pandas'
        nullable ``Int64``, so the other values keep their integer form).
        """
        if self.kind == "categorical":
            return np.asarray(column, dtype=object)
        t = np.asarray(column, dtype=float)
        missing = np.isnan(t)
        if not missing.any():
            return self._inverse_numbers(t)
        present = self._inverse_numbers(t[~missing])
        if present.dtype.kind == "i":
            values = np.zeros(t.size, dtype=np.int64)
            values[~missing] = present
            return pd.arrays.IntegerArray(values, missing.copy())
        out = np.full(t.size, np.nan, dtype=object if present.dtype == object else float)
        out[~missing] = present
        return out

    def _inverse_numbers(self, t: np.ndarray) -> np.ndarray:
        """:meth:`inverse` of transformed numbers (no missing atom)."""
        if self._exact_integers:
            return self._inverse_exact(t)
        x = self._new_numbers(t)
        table = self._lookup_transformed
        if table is not None and table.size and t.size:
            pos = np.minimum(np.searchsorted(table, t), table.size - 1)
            hit = table[pos] == t
            x = np.where(hit, self._lookup_original[pos], x)
        return released_numbers(x)

    def _new_numbers(self, t: np.ndarray) -> np.ndarray:
        """New values in original units, ``float64``: ``g⁻¹`` of the scaled-back ``t``, rounded
        to :attr:`output_decimals`, clipped to the bounds.

        One arithmetic for every column, whatever path its data took (floats, or exact whole
        numbers beyond 2**53), so the law of the new values depends on the public recipe
        only (docs/mathematics.md §2.6).
        """
        tlo, thi = self.transformed_bounds()
        if not self.spec.scale:
            u = t
        elif np.isfinite(thi - tlo):
            u = tlo + t * (thi - tlo)
        else:  # bounds wider than the float range, e.g. (-1e308, 1e308): lo < 0 < hi, no overflow
            u = (1.0 - t) * tlo + t * thi
        x = np.exp(u) if self.spec.log else np.asarray(u, dtype=float)
        if self.output_decimals is not None:
            x = np.round(x, self.output_decimals)
        return np.clip(x, float(self.bounds[0]), float(self.bounds[1]))

    def _inverse_exact(self, t: np.ndarray) -> np.ndarray:
        """:meth:`inverse` for a column of whole numbers beyond 2**53.

        Old values come back exactly (Python ints) from the lookup table. New values are
        :meth:`_new_numbers`, the same float64 arithmetic as any other column's, then
        clipped exactly to the bounds; they are whole when float64 has no fractional digits
        at their magnitude or ``decimals ≤ 0`` rounded them. Their form is
        :func:`released_numbers`'s rule: exact whole numbers when every value is whole.
        """
        lo, hi = self.bounds
        table = self._lookup_transformed
        pos = np.minimum(np.searchsorted(table, t), table.size - 1)
        hit = table[pos] == t
        out = np.empty(t.size, dtype=object)
        out[hit] = self._lookup_original[pos[hit]]
        new = np.flatnonzero(~hit)
        if new.size:  # only the new values (data-independent post-processing) take this loop
            values = [int(v) if v.is_integer() else v for v in self._new_numbers(t[new]).tolist()]
            out[new] = [lo if v < lo else hi if v > hi else v for v in values]   # exact int/float comparisons
        return released_numbers(out)


def released_numbers(values) -> np.ndarray:
    """The form of a released numeric column, read off the released values only.

    Every value whole: whole numbers, ``int64`` when they fit, else Python ints
    (``object``), so ``45`` prints as ``45`` and ``2**63`` exactly; otherwise ``float64``
    (``45.0``, ``12.3456…``). Never the dtype or the precision of the confidential data:
    two datasets that release the same values release the same bytes
    (docs/mathematics.md §2.6).

    Parameters
    ----------
    values : ndarray of float64, or of object (Python ints and floats)

    Returns
    -------
    ndarray of int64, float64 or object (Python ints)
    """
    arr = np.asarray(values)
    if arr.dtype != object:
        x = arr.astype(float, copy=False)
        if not np.all(np.isfinite(x)) or not np.all(x == np.round(x)):
            return x
        if np.all(np.abs(x) < 2.0**63):
            return x.astype(np.int64)
        items = [int(v) for v in x.tolist()]
    else:
        items = arr.tolist()
        if not all(isinstance(v, int) or (isinstance(v, float) and v.is_integer()) for v in items):
            return np.asarray([float(v) for v in items], dtype=float)
        items = [int(v) for v in items]
    if all(-(2**63) <= v < 2**63 for v in items):
        return np.asarray(items, dtype=np.int64)
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out


@dataclass(frozen=True, eq=False)
class PreparedData:
    """Confidential data ready for :func:`core.mechanisms.pypp_release`.

    Attributes
    ----------
    table : FrequencyTable
        ``frequency_table(values)``: the atoms and multiplicities the mechanism and the
        accounting use (docs/mathematics.md §1; after rounding and clipping, so ties created by them
        count). This is all a release needs.
    column_info : tuple of PreparedColumn
        Per column: spec, bounds used, ``bounds_from_data``, ``n_clipped``, base.
    row_values : ndarray or None
        The transformed rows in file order when :func:`prepare` saw the rows; ``None``
        when it was given a frequency table (``counts``; :func:`aggregate`), so that
        only the k distinct values are held.
    values : ndarray, shape (n,) or (n, d) (property)
        Transformed values: ``float64`` when every column is numeric, ``object`` if a
        column is categorical. Shape ``(n,)`` for a single column. ``row_values``, or
        the table's atoms repeated by their counts (sorted; an array of n rows is
        built on each access, so code that needs only a picture of the data should
        use :meth:`sample`).
    n_dropped : int
        Records removed before the mechanism because a column with
        ``missing='drop'`` had a missing cell in them (``n`` counts the records left;
        ``n + n_dropped`` the records read). A missing cell of a column with
        ``missing='value'`` is the missing atom: NaN in transformed space for a numeric
        column, ``None`` for a categorical one (docs/mathematics.md §2.5).

    Examples
    --------
    >>> prepared = prepare(frame, [ColumnSpec("earnings", log=True, bounds=(1, 100))])
    >>> release = pypp_release(prepared.table.atoms, prepared.table.counts, 0.0, 2.0, 500,
    ...                        rng, base=prepared.bases)
    >>> synthetic = prepared.to_original(release.values)
    """

    table: FrequencyTable
    column_info: tuple[PreparedColumn, ...]
    row_values: np.ndarray | None = field(default=None, repr=False)
    n_dropped: int = 0

    @property
    def values(self) -> np.ndarray:
        if self.row_values is not None:
            return self.row_values
        atoms = self.table.atoms
        return np.repeat(atoms, self.table.counts, axis=0)

    @property
    def from_table(self) -> bool:
        """Prepared from a frequency table (no rows held)."""
        return self.row_values is None

    def sample(self, size: int, rng: np.random.Generator) -> np.ndarray:
        """At most ``size`` rows drawn without replacement from the n records (all of
        them, in order, when ``n <= size``): a bounded picture of the data for plots.

        Drawn from the table (cost O(k + size)), so the rows need not be held.
        """
        size = check_integer("size", size, minimum=1)
        if self.n <= size:
            return self.values
        # Multivariate hypergeometric draw of how many records of each atom enter the sample.
        taken = rng.multivariate_hypergeometric(self.table.counts, size, method="marginals")
        return np.repeat(self.table.atoms, taken, axis=0)

    @property
    def n(self) -> int:
        return self.table.n

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
    def public_domain(self) -> int | None:
        """z, the size of the public domain of a row (the product of the columns' grid sizes and
        public category lists; docs/mathematics.md §3.3.1), or ``None`` if a column has none."""
        sizes = [c.spec.public_domain for c in self.column_info]
        return None if any(z is None for z in sizes) else math.prod(sizes)

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

    @property
    def dropped_columns(self) -> tuple:
        """Columns whose missing cells drop their record (``missing='drop'``)."""
        return tuple(c.name for c in self.column_info if c.missing == "drop")

    def describe(self) -> list[dict]:
        """JSON-ready description of each column's transforms (for reports and the UI),
        with what a missing cell means and how many records had one (curator only:
        counts of the confidential data)."""
        out = []
        for c in self.column_info:
            entry = {"column": c.name, "kind": c.kind, "missing": c.missing,
                     ("records_dropped" if c.missing == "drop" else "missing_records"): c.n_missing}
            if c.kind == "numeric" and c.spec.grid is not None:
                entry.update(
                    decimals=c.spec.decimals, log=bool(c.spec.log), bounds=[c.bounds[0], c.bounds[1]],
                    bounds_from_data=False, clipped=c.n_clipped, scaled_to_unit_interval=bool(c.spec.scale),
                    grid_step=c.spec.grid, grid_points=c.spec.public_grid.size,
                    base_measure=f"uniform over the {c.spec.public_grid.size:,} public grid points")
            elif c.kind == "numeric":
                entry.update(
                    decimals=c.spec.decimals, log=bool(c.spec.log),
                    # new values' decimals: typed, read off the data (precision_from_data), or None (full precision)
                    new_values_decimals=c.output_decimals, precision_from_data=c.spec.precision_from_data,
                    bounds=[c.bounds[0], c.bounds[1]], bounds_from_data=c.bounds_from_data,
                    clipped=c.n_clipped, scaled_to_unit_interval=bool(c.spec.scale),
                    base_measure=f"uniform on [{c.base.lo!r}, {c.base.hi!r}] in transformed units")
            else:
                entry.update(categories=None if c.spec.categories is None else list(c.spec.categories),
                             base_measure="new labels new_category_1, new_category_2, ..."
                             if c.spec.categories is None else
                             "uniform over the public category list (sigma >= 0); the unobserved public "
                             "categories, by name (sigma < 0)")
            out.append(entry)
        return out


def prepare(frame: pd.DataFrame, specs, counts=None) -> PreparedData:
    """Validate and transform the chosen columns (see the module docstring for the order).

    Parameters
    ----------
    frame : pandas.DataFrame
        The confidential data, e.g. from :func:`read_csv`; with ``counts``, a frequency
        table: each row stands for ``counts[i]`` records.
    specs : ColumnSpec, str, or sequence of them
        The columns to release, in order; a bare name means ``ColumnSpec(name)``
        (numeric, no transform, bounds from the data).
    counts : array_like of int ≥ 0, shape (len(frame),), or None
        Multiplicity of each row of ``frame``. The transforms are functions of a value,
        so preparing the distinct values with their counts gives exactly the table
        that preparing the rows gives (the same code path; :func:`aggregate` relies on
        it): rounding and clipping may merge rows, whose counts are then added; the
        clipped count is weighted; bounds from the data are the smallest and largest
        value with a positive count. Rows with count 0 are dropped first.

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
    specs = normalise_specs(specs)
    missing = [s.name for s in specs if s.name not in frame.columns]
    if missing:
        hint = ""
        if frame.shape[1] == 1 and any(ch in str(frame.columns[0]) for ch in ";\t|"):
            hint = " The file seems to use another separator than a comma: pass it explicitly (sep)."
        raise ValueError(f"no column named {missing[0]!r}; the columns are {_list_names(frame.columns)}.{hint}")
    na_text = frame.attrs.get("na_text", {}) if isinstance(frame.attrs.get("na_text"), dict) else {}
    weights = None
    if counts is not None:
        weights = _check_counts(counts, len(frame))
        if not weights.all():
            frame, weights = frame.iloc[np.flatnonzero(weights)].reset_index(drop=True), weights[weights > 0]
    frame, weights, dropped, origin = _drop_missing(frame, specs, weights)
    n_dropped = dropped.pop(None, 0)
    n_records = len(frame) if weights is None else int(weights.sum())
    if n_records < 2:
        unit = "row(s)" if weights is None else "record(s) (the sum of the counts)"
        after = (f" after dropping the {n_dropped:,} record(s) with a missing value in "
                 f"{_list_names([s.name for s in specs if s.missing == 'drop'])}" if n_dropped else "")
        raise ValueError(f"the data have {n_records} {unit}{after}; the mechanism needs at least 2 records")

    token = _TABLE_ENTRIES.set(weights is not None)
    origin_token = _ROW_ORIGIN.set(origin)
    try:
        prepared, transformed = [], []
        for spec in specs:  # loop over the d columns; each step is vectorised over the rows
            series = frame[spec.name]
            if isinstance(series, pd.DataFrame):
                raise ValueError(f"the data have several columns named {spec.name!r}; rename them")
            if spec.kind == "numeric":
                column, values = _prepare_numeric(series, spec, na_text.get(spec.name, 0), weights)
                if column.bounds_from_data:
                    warn_bounds_from_data(f"bounds of column {spec.name!r}")
            else:
                column, values = _prepare_categorical(series, spec, na_text.get(spec.name, 0), weights)
            if spec.missing == "drop":
                column = dataclasses.replace(column, n_missing=dropped[spec.name])
            prepared.append(column)
            transformed.append(values)
    finally:
        _ROW_ORIGIN.reset(origin_token)
        _TABLE_ENTRIES.reset(token)

    if len(transformed) == 1:
        values = transformed[0]
    elif all(s.kind == "numeric" for s in specs):
        values = np.column_stack(transformed)
    else:
        values = np.empty((len(frame), len(specs)), dtype=object)
        for j, column_values in enumerate(transformed):
            values[:, j] = column_values
    # The missing atom (NaN / None) is one more distinct value where the user said so.
    atom = any(s.missing == "value" for s in specs)
    if weights is not None:
        return PreparedData(table=frequency_table(values, weights, missing_atom=atom), column_info=tuple(prepared),
                            n_dropped=n_dropped)
    return PreparedData(table=frequency_table(values, missing_atom=atom), column_info=tuple(prepared),
                        row_values=values, n_dropped=n_dropped)


def _drop_missing(frame: pd.DataFrame, specs: list[ColumnSpec], weights: np.ndarray | None):
    """Remove the records with a missing cell in a column whose ``missing`` is ``'drop'``.

    Returns ``(frame, weights, dropped, origin)``: the rows kept (re-indexed) and their
    weights; ``dropped`` maps each such column to the records with a missing cell in it
    (before dropping) and ``None`` to the records removed in all; ``origin`` holds the
    file position of each kept row (``None`` when nothing was removed or ``frame`` is a
    frequency table), so that later messages name the file's rows. Vectorised: one
    ``isna`` per dropped column, cost O(d n) (O(d k) on a frequency table).
    """
    names = [s.name for s in specs if s.missing == "drop"]
    if not names:
        return frame, weights, {None: 0}, None
    masks = {}
    for name in names:
        column = frame[name]
        if isinstance(column, pd.DataFrame):
            raise ValueError(f"the data have several columns named {name!r}; rename them")
        masks[name] = column.isna().to_numpy()
    gone = np.logical_or.reduce(list(masks.values()))
    dropped = {name: _records(np.flatnonzero(mask), weights) for name, mask in masks.items()}
    dropped[None] = _records(np.flatnonzero(gone), weights)
    if not gone.any():
        return frame, weights, dropped, None
    kept = np.flatnonzero(~gone)
    frame = frame.iloc[kept].reset_index(drop=True)
    if weights is not None:
        return frame, weights[kept], dropped, None
    return frame, None, dropped, kept


def _check_counts(counts, length: int) -> np.ndarray:
    """Counts of a frequency table: whole numbers ≥ 0, one per row, as int64."""
    arr = counts.to_numpy() if isinstance(counts, pd.Series) else np.asarray(counts)
    if arr.ndim != 1 or arr.shape[0] != length:
        raise ValueError(f"counts must have one entry per row ({length}), got shape {arr.shape}")
    if arr.dtype.kind == "b" or arr.dtype.kind not in "iuf":
        raise ValueError(f"counts must be whole numbers >= 0, got dtype {arr.dtype}")
    if arr.dtype.kind == "f":
        bad = ~np.isfinite(arr) | (arr != np.round(arr))
        if bad.any():
            raise ValueError(f"counts must be whole numbers >= 0, got {arr[bad][0]!r}")
    if arr.size and arr.min() < 0:
        raise ValueError(f"counts must be whole numbers >= 0, got {arr.min()!r}")
    if arr.size and arr.max() >= 2**62:
        raise ValueError(f"counts must be below 2**62, got {arr.max()!r}")
    return arr.astype(np.int64)


def _numeric_values(series: pd.Series, name: str, na_text: int = 0,
                    weights: np.ndarray | None = None) -> np.ndarray:
    """The column as numbers: ``float64``, or exact integers (``int64`` / Python ``int``
    objects) when every value is a whole number and some is beyond :math:`2^{53}`.

    Raises ValueError naming the rows of non-numeric, missing or infinite cells.
    """
    if series.dtype.kind == "b":
        return series.to_numpy(dtype=float)
    if series.dtype.kind in "iu" and series.hasnans:   # a nullable integer column (Int64) with <NA>
        series = series.astype("float64")               # NaN marks them: refused below, named by row
    raw = series.to_numpy()
    if series.dtype.kind in "iu":
        return raw.astype(np.int64) if series.dtype.kind == "i" or raw.max() < 2**63 else raw.astype(object)
    present = series.notna().to_numpy()
    if series.dtype.kind == "f":
        x = raw.astype(float)
    else:
        exact = _exact_integer_array(raw) if present.all() and series.dtype == object else None
        if exact is not None:  # Python ints (read exactly from the file)
            codes, uniques = exact
            if -(2**63) <= uniques[0] and uniques[-1] < 2**63:
                return np.asarray(uniques, dtype=np.int64)[codes]
            out = np.empty(len(uniques), dtype=object)
            out[:] = uniques
            return out[codes]
        try:
            numbers_ = pd.to_numeric(series, errors="coerce")
        except OverflowError:  # whole numbers beyond the float range among missing cells
            numbers_ = pd.to_numeric(pd.Series(
                [math.copysign(math.inf, v) if isinstance(v, numbers.Integral) and abs(v) >= 2**1023 else v
                 for v in raw], dtype=object), errors="coerce")
        not_numeric = np.flatnonzero(numbers_.isna().to_numpy() & present)
        if not_numeric.size:
            first = series.iloc[not_numeric[0]]
            raise ValueError(
                f"column {name!r} has {_records(not_numeric, weights)} non-numeric value(s), e.g. {first!r} at "
                f"{_rows(not_numeric)}{_row_note()}. Fix those cells, or treat "
                "the column as categorical.")
        x = numbers_.to_numpy(dtype=float)
        if present.all() and np.abs(x).max(initial=0.0) >= _EXACT_FLOAT_INT and _all_integer_text(raw):
            # Whole numbers beyond 2**53 (identifiers, amounts in cents): exact, not via float.
            ints = [int(v) if not isinstance(v, str) else int(v.strip()) for v in raw]
            if min(ints) >= -(2**63) and max(ints) < 2**63:
                return np.asarray(ints, dtype=np.int64)
            out = np.empty(len(ints), dtype=object)
            out[:] = ints
            return out
    nan = np.flatnonzero(~present | np.isnan(x))
    if nan.size:
        hint = (f" {na_text} of the cells were spelled like 'NA': if that is a real label, read the file with "
                "keep_na_text=True and treat the column as categorical." if na_text else "")
        raise ValueError(f"column {name!r} has {_records(nan, weights)} missing value(s) (empty or NaN) at "
                         f"{_rows(nan)}{_row_note()}. {_MISSING_CHOICES_TEXT}" + hint)
    infinite = np.flatnonzero(np.isinf(x))
    if infinite.size:
        raise ValueError(f"column {name!r} has {_records(infinite, weights)} infinite value(s) at {_rows(infinite)}: 'inf', or "
                         "numbers beyond ±1.797e308 (the float64 range). Replace them with finite numbers.")
    return x


def _all_integer_text(raw: np.ndarray) -> bool:
    """Every cell is a string spelling a whole number (no point, no exponent)."""
    return bool(len(raw)) and all(isinstance(v, str) for v in raw) and \
        bool(pd.Series(raw, dtype=object).str.strip().str.fullmatch(_INT_PATTERN).all())


def _column_bounds(spec: ColumnSpec, data_lo, data_hi, convert) -> tuple:
    """``(lo, hi, bounds_from_data)``: the public bounds (through ``convert``), else the data's range."""
    if spec.bounds is not None:
        return convert(spec.bounds[0]), convert(spec.bounds[1]), False
    if not data_lo < data_hi:
        raise ValueError(f"column {spec.name!r} takes the single value {data_lo!r}, so bounds cannot be read off "
                         "the data; supply public bounds (lo, hi) for it")
    return data_lo, data_hi, True


def _exact_bound(b):
    """A public bound as an exact number: int if integral, else the float itself."""
    return int(b) if float(b).is_integer() else b


def _prepare_numeric(series: pd.Series, spec: ColumnSpec, na_text: int = 0,
                     weights: np.ndarray | None = None) -> tuple[PreparedColumn, np.ndarray]:
    missing = series.isna().to_numpy() if spec.missing == "value" else None
    if missing is None or not missing.any():
        return _prepare_numbers(series, spec, na_text, weights)
    # Missing is a value: prepare the numbers alone, then give the missing cells the missing
    # atom, NaN, outside every numeric value. The missing cells hold a stand-in number of
    # weight 0 meanwhile (a present value, or the public lower bound), so that row
    # numbers in messages, the bounds read off the data and the clipped count are those
    # of the numbers.
    present = np.flatnonzero(~missing)
    if present.size:
        stand_in = series.iloc[int(present[0])]
    elif spec.bounds is not None:
        stand_in = spec.bounds[0]
    else:
        raise ValueError(f"column {spec.name!r} has only missing values: there is no number to release. Release it "
                         "as categorical, or give it public bounds")
    filled = series.astype(object).where(~missing, stand_in) if series.dtype.kind not in "fc" else \
        series.where(~missing, stand_in)
    numbers_weights = np.ones(len(series), dtype=np.int64) if weights is None else weights.copy()
    numbers_weights[missing] = 0
    column, t = _prepare_numbers(filled.infer_objects() if filled.dtype == object else filled, spec, na_text,
                                 numbers_weights)
    t = np.asarray(t, dtype=float).copy()
    t[missing] = np.nan
    return dataclasses.replace(column, n_missing=_records(np.flatnonzero(missing), weights)), t


def _prepare_numbers(series: pd.Series, spec: ColumnSpec, na_text: int = 0,
                     weights: np.ndarray | None = None) -> tuple[PreparedColumn, np.ndarray]:
    name = spec.name
    x = _numeric_values(series, name, na_text, weights)
    if x.dtype == object or (x.dtype.kind == "i" and np.abs(x).max(initial=0) >= _EXACT_FLOAT_INT):
        if spec.grid is None:
            return _prepare_exact_integers(x, spec, weights)
        x = x.astype(float)    # on a grid each value becomes a grid point: float64 is exact enough
    integer_column = x.dtype.kind == "i"
    x = x.astype(float)
    if spec.decimals is not None:
        x = np.round(x, spec.decimals)
    if spec.log:
        bad = np.flatnonzero(x <= 0)
        if bad.size:
            rounded = f" after rounding to {spec.decimals} decimals" if spec.decimals is not None else ""
            raise ValueError(
                f"column {name!r} has {_records(bad, weights)} value(s) <= 0{rounded} (smallest {float(x[bad].min())!r}, at "
                f"{_rows(bad)}), but log needs positive values. Turn off log, or remove those rows.")

    lo, hi, from_data = _column_bounds(spec, float(x.min()), float(x.max()), float)
    outside = (x < lo) | (x > hi)
    n_clipped = int(np.count_nonzero(outside) if weights is None else weights[outside].sum())
    x = np.clip(x, lo, hi)

    tlo, thi = (float(np.log(lo)), float(np.log(hi))) if spec.log else (lo, hi)
    t = np.log(x) if spec.log else x
    if spec.scale:
        t = _to_unit_interval(t, tlo, thi)
        base = UniformBase(0.0, 1.0)
    else:
        if not np.isfinite(thi - tlo):
            raise ValueError(f"bounds of column {name!r} ({lo!r}, {hi!r}) span more than the float64 range "
                             "(1.797e308), so new values cannot be drawn uniformly between them; use narrower "
                             "public bounds, or scale the column to [0, 1]")
        base = UniformBase(tlo, thi)
    if spec.grid is not None:
        return _prepare_grid(x, spec, n_clipped, tlo, thi)
    lookup_t, first = np.unique(t, return_index=True)
    _check_distinct_kept(name, np.unique(x).size, lookup_t.size, (lo, hi), spec)
    column = PreparedColumn(spec=spec, bounds=(lo, hi), bounds_from_data=from_data, n_clipped=n_clipped,
                            base=base, _lookup_transformed=lookup_t, _lookup_original=x[first],
                            # read off the data only when asked: a data-dependent choice (§2.4)
                            recorded_decimals=(0 if integer_column else recorded_precision(x[first]))
                            if spec.precision_from_data else None)
    return column, t


#: Most decimals :func:`recorded_precision` looks for (float64 holds about 16 significant digits).
MAX_RECORDED_DECIMALS = 10


def recorded_precision(values: np.ndarray) -> int | None:
    """The fewest decimals ``d ≤ 10`` to which every value is already rounded, or ``None``.

    The precision the column was recorded with (``2`` for cents). New values of a release
    are rounded to it only when the column asks for it (``ColumnSpec.precision_from_data``):
    a statistic of the confidential data, so a data-dependent choice no guarantee covers
    (docs/mathematics.md §2.4, §2.6). One vectorised pass per candidate ``d`` over the
    distinct values.
    """
    x = np.asarray(values, dtype=float)
    x = x[np.isfinite(x)]
    for d in range(MAX_RECORDED_DECIMALS + 1):
        if np.array_equal(np.round(x, d), x):
            return d
    return None


def _prepare_grid(x: np.ndarray, spec: ColumnSpec, n_clipped: int, tlo: float,
                  thi: float) -> tuple[PreparedColumn, np.ndarray]:
    """A numeric column on its public grid (docs/mathematics.md §3.3.1): each value (clipped)
    becomes its nearest grid point, in the column's transformed units.

    The base measure is uniform over the ``z`` grid points (:class:`GridBase`), and every
    grid point maps back to itself exactly (the lookup holds the whole grid), so a release —
    old values and new ones alike — holds grid points only, never a confidential value.
    """
    grid = spec.public_grid
    points = grid.points()
    if spec.decimals is not None and points.dtype.kind == "f":   # e.g. a log grid's points, to cents
        points = np.round(points, spec.decimals)
        if spec.decimals <= 0 and np.all(np.abs(points) < 2.0**53):
            points = points.astype(np.int64)
    g = np.log(points.astype(float)) if spec.log else points.astype(float)
    grid_t = _to_unit_interval(g, tlo, thi) if spec.scale else g
    if grid.size > 1 and not np.all(np.diff(grid_t) > 0):
        raise ValueError(f"grid of column {spec.name!r}: its {grid.size:,} points do not stay distinct after "
                         "rounding to the column's decimals and the transforms; choose a coarser step, fewer "
                         "decimals rounded away, or narrower bounds")
    column = PreparedColumn(spec=spec, bounds=(spec.bounds[0], spec.bounds[1]), bounds_from_data=False,
                            n_clipped=n_clipped, base=GridBase(grid_t, missing=spec.missing == "value"),
                            _lookup_transformed=grid_t,
                            _lookup_original=points)
    return column, grid_t[grid.index_of(x)]


def _to_unit_interval(t: np.ndarray, tlo: float, thi: float) -> np.ndarray:
    """``(t - tlo) / (thi - tlo)`` clipped to [0, 1], without overflow when the span exceeds 1.797e308."""
    span = thi - tlo
    if np.isfinite(span):
        u = (t - tlo) / span
    else:  # e.g. bounds (-1e308, 1e308): halve everything (exact for normal floats) so nothing overflows
        u = (t / 2 - tlo / 2) / (thi / 2 - tlo / 2)
    # Clip again: log is not guaranteed monotone to the last ulp across platforms.
    return np.clip(u, 0.0, 1.0)


def _check_distinct_kept(name, n_distinct: int, n_transformed: int, bounds, spec: ColumnSpec) -> None:
    """Refuse a transform that merges distinct values (float64 keeps about 16 digits)."""
    if n_transformed == n_distinct:
        return
    try:
        wide_ok = not spec.log and math.isfinite(float(bounds[1]) - float(bounds[0]))
    except OverflowError:
        wide_ok = False
    what = ("log and scaling to [0, 1]" if spec.log and spec.scale else "the log transform" if spec.log
            else "scaling to [0, 1]")
    raise ValueError(
        f"column {name!r}: {what} with bounds ({bounds[0]!r}, {bounds[1]!r}) would merge its {n_distinct} distinct "
        f"values into {n_transformed}: float64 keeps about 16 significant digits, so values closer than about "
        "1e-16 times the width of the bounds become equal, and the release would be of other data. Use "
        "narrower public bounds" + (", or turn off scaling to [0, 1]" if spec.scale and wide_ok else "")
        + ", or release the column as categorical (identifiers and codes are labels).")


def _prepare_exact_integers(x: np.ndarray, spec: ColumnSpec,
                            weights: np.ndarray | None = None) -> tuple[PreparedColumn, np.ndarray]:
    """Numeric whole numbers beyond 2**53: every step on the distinct values, in exact arithmetic.

    Rounding (negative ``decimals``), clipping and ``(x - lo) / (hi - lo)`` are computed
    with Python integers (fractions for non-integral bounds), and only the result in
    [0, 1] is a float — so values that differ by 1 near 2**63 stay distinct as long as
    float64 can tell their scaled positions apart (checked; otherwise a ValueError).
    Old values map back exactly through the lookup table.
    """
    name = spec.name
    codes, uniques = pd.factorize(x, sort=True)
    if max(abs(int(uniques[0])), abs(int(uniques[-1]))) > 2**1023:
        raise ValueError(f"column {name!r} has whole numbers beyond ±1.797e308 (e.g. {int(uniques[-1])!r:.40}...), "
                         "outside the range of float64 in which new values are drawn; release it as categorical "
                         "(numbers this long are identifiers or codes)")
    counts = np.bincount(codes, weights=weights, minlength=len(uniques)).astype(np.int64)
    distinct = _round_integers([int(v) for v in uniques], spec.decimals)
    if spec.log and min(distinct) <= 0:
        bad = np.flatnonzero(np.asarray([v <= 0 for v in distinct])[codes])
        raise ValueError(f"column {name!r} has {_records(bad, weights)} value(s) <= 0 (smallest {min(distinct)!r}, at "
                         f"{_rows(bad)}), but log needs positive values. Turn off log, or remove those rows.")
    lo, hi, from_data = _column_bounds(spec, min(distinct), max(distinct), _exact_bound)
    clipped = [lo if v < lo else hi if v > hi else v for v in distinct]  # exact int/float comparisons
    n_clipped = int(sum(c for v, c in zip(distinct, counts.tolist()) if v < lo or v > hi))
    if spec.log:
        tlo, thi = math.log(lo), math.log(hi)
        t_distinct = np.array([math.log(v) for v in clipped])
        t_distinct = _to_unit_interval(t_distinct, tlo, thi) if spec.scale else t_distinct
    elif spec.scale:
        flo, span = Fraction(lo), Fraction(hi) - Fraction(lo)
        if isinstance(lo, int) and isinstance(hi, int):
            t_distinct = np.array([(v - lo) / (hi - lo) for v in clipped])  # int / int: correctly rounded
        else:
            t_distinct = np.array([float((Fraction(v) - flo) / span) for v in clipped])
        t_distinct = np.clip(t_distinct, 0.0, 1.0)
    else:
        tlo, thi = float(lo), float(hi)
        t_distinct = np.array([float(v) for v in clipped])
    if spec.scale:
        base = UniformBase(0.0, 1.0)
    else:
        tlo, thi = (math.log(lo), math.log(hi)) if spec.log else (float(lo), float(hi))
        base = UniformBase(tlo, thi)
    t = t_distinct[codes]
    lookup_t, first = np.unique(t_distinct, return_index=True)
    _check_distinct_kept(name, len(set(clipped)), lookup_t.size, (lo, hi), spec)
    originals = np.empty(lookup_t.size, dtype=object)
    originals[:] = [clipped[i] for i in first]
    column = PreparedColumn(spec=spec, bounds=(lo, hi), bounds_from_data=from_data, n_clipped=n_clipped,
                            base=base, _lookup_transformed=lookup_t, _lookup_original=originals,
                            _exact_integers=True,
                            # whole numbers: the precision read off them is 0 (only when asked, §2.4)
                            recorded_decimals=0 if spec.precision_from_data else None)
    return column, t


def _canonical_label(value):
    """A categorical label as its cell alone decides: a whole float below 2**53 becomes the int it
    spells (``1.0`` -> ``1``), so a cell's label does not depend on how the other cells made the
    reader type the column; any other value is returned as is."""
    if isinstance(value, (float, np.floating)) and math.isfinite(value) and float(value).is_integer() \
            and abs(value) < _EXACT_FLOAT_INT:
        return int(value)
    return value


def _prepare_categorical(series: pd.Series, spec: ColumnSpec, na_text: int = 0,
                         weights: np.ndarray | None = None) -> tuple[PreparedColumn, np.ndarray]:
    name = spec.name
    is_missing = series.isna().to_numpy()
    missing = np.flatnonzero(is_missing)
    if missing.size and spec.missing != "value":
        hint = (f" {na_text} of them were cells spelled like 'NA': if 'NA' is a real category label, read the "
                "file with keep_na_text=True to keep it." if na_text else "")
        raise ValueError(f"column {name!r} has {_records(missing, weights)} missing value(s) (empty or NaN) at "
                         f"{_rows(missing)}{_row_note()}. {_MISSING_CHOICES_TEXT}" + hint)
    # A label is a function of its own cell: a whole number read as a float (1.0, because another
    # cell of the column has a fraction) is the label 1, as it is when the column is read as integers
    # (docs/mathematics.md §2.6).
    values = series.to_numpy(dtype=object)
    if series.dtype.kind == "f" or pd.api.types.infer_dtype(series, skipna=True) in ("floating", "mixed-integer-float",
                                                                                      "mixed", "decimal"):
        values = values.copy()
        values[:] = [_canonical_label(v) for v in values.tolist()]
    if missing.size:   # the missing atom: None (one value whatever the cell held: '', NaN, pd.NA)
        values = values.copy()
        values[missing] = None
    if spec.categories is not None:
        # Matched by their text: a typed list ("1, 2, 3") names the codes a reader may have parsed as numbers
        # (as written, else as its canonical label: 1.0 read as a float matches "1").
        # Each value becomes its public category, so new and old values share one representation.
        by_text = {str(c): c for c in spec.categories}
        text = series.astype(str)
        unmatched = np.flatnonzero(~text.isin(list(by_text)).to_numpy())
        if unmatched.size:
            text = text.copy()
            text.iloc[unmatched] = [str(v) for v in values[unmatched]]
        unknown = np.flatnonzero(~text.isin(list(by_text)).to_numpy() & ~is_missing)
        if unknown.size:
            raise ValueError(f"column {name!r} has {_records(unknown, weights)} value(s) outside its public category list, "
                             f"e.g. {values[unknown[0]]!r} at {_rows(unknown)}; add them to the list if they are "
                             "public categories (the list must not be read off the data)")
        values = text.map(by_text).to_numpy(dtype=object)
        values[missing] = None
    # Missing is a value: with a public list it is one more public category (z + 1), whether
    # or not the data hold a missing cell (the public domain cannot depend on the data).
    categories = spec.categories
    if categories is not None and spec.missing == "value":
        categories = (*categories, None)
    column = PreparedColumn(spec=spec, bounds=None, bounds_from_data=False, n_clipped=0,
                            base=CategoricalBase(categories), n_missing=_records(missing, weights))
    return column, values
