"""Files of any size reduced to the frequency table of the released columns by DuckDB, Dask
or pandas, read as :func:`core.data.read_table` reads them (docs/scale.md).
"""
from __future__ import annotations

import csv
import io
import math
import numbers
import dataclasses
import os
import re
import shutil
import tempfile
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd

from ..validation import (
    check_choice,
    check_flag,
    check_integer,
)
from .messages import _list_names
from .prepare import PreparedData, _check_counts, prepare
from .reading import (
    ReadDecisions,
    ReadResult,
    _cell_masks,
    _check_sep,
    _field_counts,
    _open_source,
    _read_column,
    check_display_name,
    read_table,
)
from .specs import ColumnSpec, normalise_specs
from .table import FrequencyTable
from .coarsening import apply_coarsening


#: Aggregation engines: DuckDB (embedded, the default), Dask (a cluster) and pandas
#: (the reader above on the whole file, in memory: the reference).
ENGINES = ("duckdb", "dask", "pandas")


#: File formats :func:`aggregate` reads.
FORMATS = ("csv", "parquet")


#: How much of a CSV file :func:`read_table` sees to decide the delimiter, encoding and
#: header (the whole file when it is smaller): a file this small is also checked
#: cell by cell with read_table's messages before it is aggregated.
HEAD_BYTES = 1 << 18


_GLOB_CHARS = "*?["


#: Settings of every DuckDB connection the project opens (:func:`_duckdb_connection`).
_DUCKDB_CONFIG = {"memory_limit": "1GB", "preserve_insertion_order": False}


@contextmanager
def _duckdb_connection(**config):
    """A DuckDB connection that spills only to a private temporary directory, removed when
    it closes (docs/serving.md §2).

    DuckDB's default spill directory is ``./.tmp`` in the working directory, created with
    the umask's mode (0644 files) and left behind when the process is killed: the cells of
    a confidential file, readable by anyone on the machine. Here every connection gets its
    own :func:`tempfile.mkdtemp` directory (mode 0700) as ``temp_directory``, removed in
    ``finally`` whatever happens to the query.

    Parameters
    ----------
    **config
        DuckDB settings that replace those of ``_DUCKDB_CONFIG`` (``temp_directory``
        cannot be replaced).

    Yields
    ------
    duckdb.DuckDBPyConnection
        The open connection; it is closed, and its directory removed, on leaving the block.
    """
    import duckdb

    spill = tempfile.mkdtemp(prefix="bnp-duckdb-")  # 0700: only this user reads the spilled cells
    try:
        con = duckdb.connect(config={**_DUCKDB_CONFIG, **config, "temp_directory": spill})
        try:
            yield con
        finally:
            con.close()
    finally:
        shutil.rmtree(spill, ignore_errors=True)


_DUCKDB_ENCODINGS = {"utf-8": "utf-8", "utf-8-sig": "utf-8", "latin-1": "latin-1", "utf-16": "utf-16"}


_EXTRA = "__extra_field"


@dataclass(frozen=True, eq=False)
class Aggregated:
    """The frequency table of a file (or files) and how it was read: :func:`aggregate`.

    Attributes
    ----------
    prepared : PreparedData
        Prepared from the table (``prepared.from_table``): the transforms applied to the
        distinct values, the atoms and counts of docs/mathematics.md §1.
    decisions : ReadDecisions or None
        For CSV input: what the reader decided (delimiter, encoding, header from the
        file's first :data:`HEAD_BYTES`; ``n_rows`` and the released columns' readings
        from every row). ``None`` for Parquet (typed columns: nothing to decide).
    engine : {'duckdb', 'dask', 'pandas'}
    file_format : {'csv', 'parquet'}
    files : tuple of str
        Display names of the files read (one for bytes or a single path).
    counts_column : str or None
        The column of counts when the input was a frequency table.
    notes : tuple of str
        Sentences for the user (engine, files, transcoding, a frequency table as input).
    """

    prepared: PreparedData
    decisions: ReadDecisions | None
    engine: str
    file_format: str
    files: tuple[str, ...]
    counts_column: str | None = None
    notes: tuple[str, ...] = ()

    @property
    def table(self) -> FrequencyTable:
        return self.prepared.table

    def reading(self) -> dict:
        """JSON-ready record of how the input was read, for the curator's report."""
        out = {} if self.decisions is None else self.decisions.to_dict()
        out.update(engine=self.engine, format=self.file_format, files=list(self.files),
                   counts_column=self.counts_column,
                   notes=list(out.get("notes", [])) + [n for n in self.notes if n not in out.get("notes", [])])
        return out


def aggregate(source, specs, *, engine: str = "duckdb", counts_column: str | None = None,
              sep: str | None = None, header: bool | None = None, encoding: str | None = None,
              thousands: str | None = None, keep_na_text: bool = False, scheduler: str | None = None,
              file_format: str | None = None, coarsening=(), name: str | None = None,
              max_distinct: int | None = None) -> Aggregated:
    """The frequency table of the chosen columns of a CSV or Parquet input, streaming.

    Parameters
    ----------
    source : str, os.PathLike, sequence of them, bytes or file-like
        A path (``.csv``, ``.csv.gz``, ``.parquet``), a glob of paths (``'part-*.parquet'``;
        every file must have the same columns), a list of paths, or the bytes of one
        file (an upload). The format is taken from ``file_format``, else from the file's
        first bytes (gzip, Parquet) and its name.
    specs : ColumnSpec, str or sequence of them
        The released columns and their transforms, as for :func:`prepare`.
    engine : {'duckdb', 'dask', 'pandas'}
        ``'duckdb'`` (default): DuckDB reads the file in a streaming ``GROUP BY``, in
        bounded memory, without materialising the rows in Python. ``'dask'``:
        ``dask.dataframe`` computes the same grouping on a Dask cluster
        (``scheduler``), for data that outgrow one machine. ``'pandas'``:
        :func:`read_table` of the whole file in memory (the reference).
    counts_column : str or None
        The input is a frequency table: each row holds value(s) and, in this column,
        how many records have them (whole numbers ≥ 0). A custodian can aggregate
        inside their own systems and hand over only ``value(s), count``.
    sep, header, encoding, thousands, keep_na_text
        CSV reading options, as for :func:`read_table` (ignored for Parquet).
    scheduler : str or None
        Dask only: the address of a running Dask scheduler (``'tcp://host:8786'``);
        ``None`` computes on this machine with Dask's threads.
    file_format : {'csv', 'parquet'} or None
        Overrides the detection.
    coarsening : sequence of core.data.ColumnTransform
        Applied to the distinct values (weighted by their counts) before ``specs``, as
        :func:`core.data.apply_coarsening` applies it to rows (the recipe's
        ``coarsening``); default none.
    name : str or None
        How error messages call ``source`` when it is bytes or a file-like object (an
        upload's file name); default "the uploaded data", or the object's file name. The
        reading record and the notes keep the default: they depend on the content only.
    max_distinct : int ≥ 1 or None
        The most distinct rows of the released columns (as read) the input may have, as
        for :func:`distinct_values`; default ``None``: no limit (the command line).

    Returns
    -------
    Aggregated

    Raises
    ------
    ValueError
        Bad options (named); no such file, or a glob that matches none; files of
        different formats or columns; what :func:`read_table` and :func:`prepare` refuse;
        rows with more or fewer fields than the header (with an example); the engine's
        own parse errors, as a message.

    Notes
    -----
    Exactness: the engines only count equal raw cells; reading a cell and every
    transform run in this module on the distinct cells, weighted by their counts, so
    the table equals the one :func:`prepare` computes from the rows (tests compare the
    three engines on the bundled samples and on the corpus of awkward files). Memory
    grows with the number of distinct cells, not with the number of rows.
    """
    specs = normalise_specs(specs)
    values = distinct_values(source, [s.name for s in specs], engine=engine, counts_column=counts_column, sep=sep,
                             header=header, encoding=encoding, thousands=thousands, keep_na_text=keep_na_text,
                             scheduler=scheduler, file_format=file_format, name=name, max_distinct=max_distinct)
    return values.aggregated(specs, coarsening=coarsening)


@dataclass(frozen=True, eq=False)
class DistinctValues:
    """The distinct values of some columns of a file and how many records hold each, as
    read (before any transform): :func:`distinct_values`.

    The expensive part of :func:`aggregate` (one pass over every row); a dashboard keeps it
    and calls :meth:`aggregated` each time the transforms change, at a cost in the number
    of distinct values only.

    Attributes
    ----------
    frame : pandas.DataFrame, shape (k', d)
        The distinct cells read as :func:`read_table` reads cells (a value may repeat:
        ``'1.0'`` and ``'1.00'`` are one number; :func:`prepare` adds their counts).
    counts : ndarray of int64, shape (k',)
        Records per row of ``frame`` (times the counts column for a frequency table).
    decisions, engine, file_format, files, counts_column, notes
        As in :class:`Aggregated`.
    rows : pandas.DataFrame or None
        Every row of a CSV small enough to be read whole (``read_table``), so that
        :meth:`aggregated` names a bad cell by its row number as :func:`prepare` does.
    """

    frame: pd.DataFrame
    counts: np.ndarray
    decisions: ReadDecisions | None
    engine: str
    file_format: str
    files: tuple[str, ...]
    counts_column: str | None = None
    notes: tuple[str, ...] = ()
    rows: pd.DataFrame | None = field(default=None, repr=False)

    def aggregated(self, specs, coarsening=()) -> Aggregated:
        """The frequency table of these values under ``specs`` (a subset of the columns,
        with their transforms) after ``coarsening``: what :func:`aggregate` returns."""
        specs = normalise_specs(specs)
        names = [s.name for s in specs]
        missing = [name for name in names if name not in self.frame.columns]
        if missing:
            raise ValueError(f"column {missing[0]!r} was not read: the columns read are "
                             f"{_list_names(list(self.frame.columns))}")
        if self.rows is not None:
            # The whole file was read: prepare its rows too, so that a problem is named
            # with its row numbers, exactly as the pandas engine names it.
            _check_rows(self.rows, specs, self.counts_column)
        frame = self.frame[names]
        coarsening = tuple(coarsening)
        if coarsening:

            frame = apply_coarsening(frame, coarsening, counts=self.counts)
        prepared = prepare(frame, specs, counts=self.counts)
        return Aggregated(prepared=prepared, decisions=self.decisions, engine=self.engine,
                          file_format=self.file_format, files=self.files, counts_column=self.counts_column,
                          notes=self.notes)


def distinct_values(source, columns, *, engine: str = "duckdb", counts_column: str | None = None,
                    sep: str | None = None, header: bool | None = None, encoding: str | None = None,
                    thousands: str | None = None, keep_na_text: bool = False, scheduler: str | None = None,
                    file_format: str | None = None, name: str | None = None,
                    max_distinct: int | None = None) -> DistinctValues:
    """The distinct values of ``columns`` of a CSV or Parquet input and their counts, streaming.

    The first step of :func:`aggregate` (which takes the same source and options; see
    there), without transforms: ``distinct_values(...).aggregated(specs)`` is
    ``aggregate(..., specs)`` for any specs on these columns.

    Parameters
    ----------
    columns : str or sequence of str
        The column names to read (non-empty, no repeats, not the counts column).
    max_distinct : int ≥ 1 or None
        The most distinct rows of ``columns`` (cells as read, before any transform) the
        input may have. Memory grows with them, not with the rows (about 300–400 bytes per
        distinct value on the dashboard's path, docs/scale.md): DuckDB groups into a table
        of its own (within its memory limit, spilling to its private directory), counts
        its rows exactly and refuses the input before one value reaches Python. The
        other engines count after materialising. Default ``None``: no limit.

    Returns
    -------
    DistinctValues

    Raises
    ------
    ValueError
        As :func:`aggregate`; more than ``max_distinct`` distinct rows (the message
        names the limit and the command line, which has none).
    """
    engine = check_choice("engine", engine, ENGINES)
    if file_format is not None:
        file_format = check_choice("file_format", file_format, FORMATS)
    if scheduler is not None and (engine != "dask" or not isinstance(scheduler, str) or not scheduler.strip()):
        raise ValueError(f"scheduler (the address of a Dask scheduler, e.g. 'tcp://10.0.0.5:8786') needs "
                         f"engine='dask' and a non-empty string, got engine={engine!r}, scheduler={scheduler!r}")
    if max_distinct is not None:
        max_distinct = check_integer("max_distinct", max_distinct, minimum=1)
    names = [columns] if isinstance(columns, str) else list(columns)
    if not names or len(set(names)) != len(names) or not all(isinstance(c, str) and c for c in names):
        raise ValueError(f"columns must be a non-empty list of distinct column names, got {columns!r}")
    if counts_column is not None:
        if not isinstance(counts_column, str) or not counts_column:
            raise ValueError(f"counts_column must be a column name, got {counts_column!r}")
        if counts_column in names:
            raise ValueError(f"the counts column {counts_column!r} cannot also be released: choose the value "
                             "column(s) to release")
    options = _read_options(sep, header, encoding, thousands, keep_na_text)
    inputs = _resolve_inputs(source, name)
    formats = {file_format or _detect_format(item) for item in inputs}
    if len(formats) > 1:
        raise ValueError(f"the files mix formats ({', '.join(sorted(formats))}): give files of one format")
    fmt = formats.pop()
    if engine == "dask" and any(not isinstance(item.path, str) for item in inputs):
        raise ValueError("engine='dask' reads files (paths a cluster can reach), not uploaded bytes: use "
                         "engine='duckdb' for an upload")
    wanted = names + ([counts_column] if counts_column is not None else [])
    notes = []
    rows = None
    if len(inputs) > 1:
        notes.append(f"{len(inputs)} files read as one table ({inputs[0].name}, ...).")
    if fmt == "parquet":
        decisions = None
        frame, counts = _parquet_cells(inputs, wanted, engine, scheduler, (max_distinct, names))
    elif engine == "pandas":
        frame, decisions = _pandas_csv(inputs, wanted, options)
        counts = np.ones(len(frame), dtype=np.int64)
        _check_distinct(len(frame.drop_duplicates(names)), max_distinct, names, inputs[0].shown)
    else:
        head = _csv_decisions(inputs[0], options)
        decisions = head.decisions
        head_only = len(inputs) > 1 or _text_bytes(inputs[0], HEAD_BYTES)[1]
        if not head_only:
            rows = head.frame
            if counts_column is not None and counts_column in rows.columns:
                counts_from_column(rows[counts_column], counts_column)  # named by row, as prepare would
        cells, counts, more_notes = _csv_cells(inputs, wanted, decisions, engine, scheduler, (max_distinct, names))
        notes += more_notes
        frame, decisions = _read_distinct_cells(cells, counts, decisions, options, head_only=head_only)
    if counts_column is not None:
        counts = counts * counts_from_column(frame[counts_column], counts_column)
        frame = frame.drop(columns=[counts_column])
        notes.append(f"The input is a frequency table: column {counts_column!r} holds the counts "
                     f"({int(counts.sum()):,} records in {len(frame):,} rows). The raw records never left the "
                     "custodian's system.")
    if decisions is not None:
        decisions = replace(decisions, n_rows=int(counts.sum()) if counts_column is None else decisions.n_rows)
    return DistinctValues(frame=frame, counts=np.asarray(counts, dtype=np.int64), decisions=decisions, engine=engine,
                          file_format=fmt, files=tuple(item.name for item in inputs), counts_column=counts_column,
                          notes=tuple(notes), rows=rows)


def _read_options(sep, header, encoding, thousands, keep_na_text) -> dict:
    """The CSV reading options of :func:`read_table`, checked once for the streaming readers."""
    return {"sep": _check_sep(sep), "header": None if header is None else check_flag("header", header),
            "encoding": encoding, "thousands": thousands, "keep_na_text": check_flag("keep_na_text", keep_na_text)}


def read_head(source, *, name: str | None = None, sep: str | None = None, header: bool | None = None,
              encoding: str | None = None, thousands: str | None = None,
              keep_na_text: bool = False) -> tuple[ReadResult, bool]:
    """:func:`read_table` of the head of a CSV that :func:`aggregate` decides on.

    The first :data:`HEAD_BYTES` of the (first) file, cut after a whole line: the
    separator, encoding, header, column names and kinds :func:`aggregate` will use, for a
    dashboard that lists the columns of a large upload without reading all its rows.

    Parameters
    ----------
    source : path, bytes or file-like
        As for :func:`aggregate` (a glob or list: its first file).
    name : str, optional
        How error messages call ``bytes`` or a file-like ``source``, as for
        :func:`aggregate` (default "the uploaded data", or the object's file name).
    sep, header, encoding, thousands, keep_na_text
        As for :func:`read_table`.

    Returns
    -------
    (ReadResult, bool)
        The reading of the head, and whether the head is the whole file.
    """
    options = _read_options(sep, header, encoding, thousands, keep_na_text)
    item = _resolve_inputs(source, name)[0]
    return _csv_decisions(item, options), not _text_bytes(item, HEAD_BYTES)[1]


def _check_rows(frame: pd.DataFrame, specs: list[ColumnSpec], counts_column: str | None) -> None:
    """Raise what :func:`prepare` raises on these rows (warnings are the caller's)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        names = [s.name for s in specs] + ([counts_column] if counts_column else [])
        absent = [n for n in names if n not in frame.columns]
        if absent:
            return  # named by the caller with the file's columns
        counts = None if counts_column is None else counts_from_column(frame[counts_column], counts_column)
        prepare(frame, specs, counts=counts)


@dataclass(frozen=True)
class _Input:
    name: str            # display name in the reading record and the notes
    path: str | None     # a file path, or None for bytes
    content: bytes | None = None
    called: str | None = None   # how error messages call bytes the caller named (name=)

    @property
    def shown(self) -> str:
        """The name error messages use."""
        return self.name if self.called is None else repr(self.called)


def _resolve_inputs(source, name: str | None = None) -> list[_Input]:
    """The files a source names: a path, a glob, a list of paths, or bytes (called ``name``
    in error messages when given)."""
    name = check_display_name(name)
    if isinstance(source, (bytes, bytearray, memoryview)):
        return [_Input("the uploaded data", None, bytes(source), name)]
    if hasattr(source, "read") and not isinstance(source, (str, os.PathLike)):
        recorded, content = _open_source(source, None)
        return [_Input(recorded, None, content, name)]
    if isinstance(source, (str, os.PathLike)):
        sources = [source]
    elif isinstance(source, (list, tuple)) and source and all(isinstance(s, (str, os.PathLike)) for s in source):
        sources = list(source)
    else:
        raise ValueError(f"source must be a path, a glob, a list of paths, bytes or a file-like object, got "
                         f"{type(source).__name__}")
    out = []
    for item in sources:
        text = str(item)
        if any(ch in Path(text).name for ch in _GLOB_CHARS) and not Path(text).is_file():
            matched = sorted(p for p in Path(text).parent.glob(Path(text).name) if p.is_file())
            if not matched:
                raise ValueError(f"no file matches {text!r}")
            out += [_Input(repr(p.name), str(p)) for p in matched]
        else:
            path = Path(text)
            if path.is_dir():
                raise ValueError(f"{text!r} is a directory: give a file, or a glob such as {str(path / '*.parquet')!r}")
            if not path.is_file():
                raise ValueError(f"cannot read {text!r}: no such file")
            out.append(_Input(repr(path.name), str(path)))
    return out


def _first_bytes(item: _Input, size: int) -> bytes:
    if item.content is not None:
        return item.content[:size]
    with open(item.path, "rb") as handle:
        return handle.read(size)


def _detect_format(item: _Input) -> str:
    head = _first_bytes(item, 4)
    if head == b"PAR1" or (item.path is not None and item.path.lower().endswith((".parquet", ".pq"))):
        return "parquet"
    return "csv"


def _is_gzip(item: _Input) -> bool:
    return _first_bytes(item, 2) == b"\x1f\x8b"


def _text_bytes(item: _Input, limit: int | None) -> tuple[bytes, bool]:
    """The (decompressed) bytes of a CSV input, at most ``limit``; and whether there is more."""
    import gzip

    if _is_gzip(item):
        handle = gzip.open(io.BytesIO(item.content) if item.path is None else item.path, "rb")
    else:
        handle = io.BytesIO(item.content) if item.path is None else open(item.path, "rb")
    with handle:
        try:
            data = handle.read() if limit is None else handle.read(limit + 1)
        except (OSError, EOFError) as exc:
            raise ValueError(f"{item.shown} is a damaged gzip file: {exc}") from None
    if limit is not None and len(data) > limit:
        return data[:limit], True
    return data, False


def _csv_decisions(item: _Input, options: dict) -> ReadResult:
    """read_table on the first HEAD_BYTES (cut after a whole line), or on the whole file;
    ``decisions.size_bytes`` is the file's size either way."""
    head, more = _text_bytes(item, HEAD_BYTES)
    attempts = 0
    while True:
        cut = head
        if more:
            end = head.rfind(b"\n")
            cut = head[:end + 1] if end > 0 else head
        source = io.BytesIO(cut)
        source.name = item.name.strip("'")
        try:
            result = read_table(source, max_bytes=None, name=item.called, **options)
        except ValueError as exc:
            # A quoted field may span the cut: drop the last line and try again.
            if not more or attempts >= 20 or "never closed" not in str(exc):
                raise
            attempts += 1
            head = cut[:-1]
            continue
        if more:   # the reading record states the file's size, not the head's (issue 36)
            size = len(item.content) if item.content is not None else os.path.getsize(item.path)
            result = dataclasses.replace(result, decisions=dataclasses.replace(result.decisions, size_bytes=size))
        return result


def _pandas_csv(inputs: list[_Input], wanted: list[str], options: dict) -> tuple[pd.DataFrame, ReadDecisions]:
    """The reference: :func:`read_table` of every file, whole, in memory."""
    frames, first = [], None
    for item in inputs:
        raw, _ = _text_bytes(item, None)
        source = io.BytesIO(raw)
        source.name = item.name.strip("'")
        result = read_table(source, max_bytes=None, name=item.called, **options)
        names = [c.name for c in result.decisions.columns]
        if first is None:
            first = result.decisions
            missing = [w for w in wanted if w not in names]
            if missing:
                raise ValueError(f"no column named {missing[0]!r}; the columns are {_list_names(names)}.")
        elif names != [c.name for c in first.columns]:
            raise ValueError(f"{item.shown} has other columns than {inputs[0].shown}: the files must share their "
                             "columns")
        frames.append(result.frame[wanted])
    frame = frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)
    frame.attrs["na_text"] = {k: v for k, v in frames[0].attrs.get("na_text", {}).items() if k in wanted}
    readings = tuple(first.column(w) for w in wanted)
    return frame, replace(first, n_rows=len(frame), columns=readings)


def _csv_cells(inputs: list[_Input], wanted: list[str], decisions: ReadDecisions, engine: str,
               scheduler: str | None, limit: tuple = (None, ())) -> tuple[pd.DataFrame, np.ndarray, list[str]]:
    """Distinct raw cells (text; missing fields empty) of the wanted columns and their counts;
    ``limit``: (max_distinct, released column names), as :func:`_check_distinct` takes them."""
    names = [c.name for c in decisions.columns]
    missing = [w for w in wanted if w not in names]
    if missing:
        raise ValueError(f"no column named {missing[0]!r}; the columns are {_list_names(names)}.")
    positions = [names.index(w) for w in wanted]
    width = decisions.n_columns
    if engine == "duckdb":
        grouped, notes = _duckdb_csv(inputs, positions, width, decisions, limit)
    else:
        grouped, notes = _dask_csv(inputs, positions, width, decisions, scheduler)
        if limit[1]:
            released = grouped.iloc[:, [wanted.index(c) for c in limit[1]]]
            _check_distinct(len(released.drop_duplicates()), limit[0], limit[1], inputs[0].shown)
    cells = grouped.iloc[:, :-1].copy()
    cells.columns = wanted
    return cells, grouped.iloc[:, -1].to_numpy(dtype=np.int64), notes


def _check_shape_flags(frame: pd.DataFrame, width: int, name: str) -> pd.DataFrame:
    """Refuse rows with more or fewer fields than the header; drop blank lines."""
    long_rows = int(frame.loc[frame["__long"].astype(bool), "__n"].sum())
    if long_rows:
        raise ValueError(f"{name} has {long_rows:,} row(s) with more fields than the {width} of the first row (a "
                         "trailing separator, or a separator inside a field that is not quoted): fix those rows "
                         "so that every row has as many fields as the first.")
    short_rows = int(frame.loc[frame["__short"].astype(bool) & ~frame["__blank"].astype(bool), "__n"].sum())
    if short_rows:
        raise ValueError(f"{name} has {short_rows:,} row(s) with fewer fields than the {width} of the first row (or "
                         "a quote that is never closed): fix those rows so that every row has as many fields as "
                         "the first.")
    keep = ~frame["__blank"].astype(bool)
    return frame.loc[keep].drop(columns=["__long", "__short", "__blank"]).reset_index(drop=True)


def _duckdb_csv(inputs, positions, width, decisions, limit=(None, ())) -> tuple[pd.DataFrame, list[str]]:
    """DuckDB's streaming GROUP BY of the raw cells, with the row-shape checks.

    Every field is read as text (``all_varchar``) with a sentinel null string, so an
    empty cell is ``''`` and only a field the row does not have is NULL.

    With several columns the file is first read in DuckDB's strict mode, which refuses
    any row with more or fewer fields than the header (and skips empty lines, as
    :func:`read_table` drops them): the fast path for a well-formed file. Any error there
    sends the file to the checked path, which pads short rows with NULL and declares one
    extra column to catch long rows, so that every bad row is counted and named
    (:func:`_check_shape_flags`) exactly as :func:`read_table` would. Either path reads in
    parallel first; DuckDB refuses a quoted field spanning lines in that mode, and the
    file is then read again serially (never a silently different parse).

    ``limit`` (max_distinct, released names): the grouped rows are counted in DuckDB before
    they become a frame (:func:`_bounded_frame`).
    """
    import duckdb

    notes = []
    codec = _DUCKDB_ENCODINGS.get(decisions.encoding)
    columns = {f"c{j}": "VARCHAR" for j in range(width)}
    skip = 1 if re.match(rb"(\xef\xbb\xbf)?sep=.\r?\n", _text_bytes(inputs[0], 64)[0]) else 0
    options = dict(delimiter=decisions.delimiter, quotechar='"', escapechar='"', header=decisions.header,
                   all_varchar=True, na_values=["\x00"], auto_detect=False, skiprows=skip)
    checked = dict(options, columns={**columns, _EXTRA: "VARCHAR"}, null_padding=True, strict_mode=False)
    if width == 1:
        # One column: no separator can show a short row, and read_table reads a blank line
        # inside the data as a missing cell; DuckDB keeps blank lines as NULL with its
        # default null string (and skips them with the sentinel).
        del checked["na_values"]
    sources = []
    for item in inputs:
        if codec != "utf-8":
            # DuckDB streams UTF-8 (from disk, or an upload's bytes); other encodings are
            # decoded here and handed over as UTF-8 in memory.
            raw, _ = _text_bytes(item, None)
            notes.append(f"{item.name} was transcoded from {decisions.encoding} to UTF-8 in memory "
                         "(DuckDB streams UTF-8 files from disk).")
            raw = raw.decode(decisions.encoding).removeprefix("\ufeff").encode("utf-8")
            sources.append((raw, {"encoding": "utf-8"}))
        else:
            # A gzip-compressed upload goes to DuckDB compressed: it decompresses while it
            # streams, so the decompressed text is never held in memory.
            sources.append((item.path if item.path is not None else item.content,
                            {"encoding": "utf-8", "compression": "gzip" if _is_gzip(item) else "none"}))
    selected = ", ".join(f"c{j} AS v{i}" for i, j in enumerate(positions))
    short = "false" if width == 1 else f"c{width - 1} IS NULL"
    # Only a short row can be a blank line: test the first field only there.
    blank = f"CASE WHEN {short} THEN (c0 IS NULL OR trim(c0) = '') ELSE false END" if width > 1 else "false"
    checked_query = (f"SELECT {selected}, {_EXTRA} IS NOT NULL AS __long, {short} AS __short, {blank} AS __blank, "
                     "count(*) AS __n FROM rel GROUP BY ALL")
    strict_query = f"SELECT {selected}, count(*) AS __n FROM rel GROUP BY ALL"
    max_distinct, released = limit
    # The released columns among the selected ones (a frequency table's counts column is not one).
    distinct = ", ".join(f"v{i}" for i in range(len(released)))

    def run(read_options: dict, query: str, parallel: bool) -> pd.DataFrame:
        with _duckdb_connection() as con:
            relations = [con.read_csv(io.BytesIO(target) if isinstance(target, bytes) else target,
                                      **read_options, **extra, parallel=parallel) for target, extra in sources]
            rel = relations[0]
            for other in relations[1:]:
                rel = rel.union(other)  # duckdb's relational union keeps duplicates (UNION ALL)
            return _bounded_frame(con, con.sql(query), max_distinct, distinct, released, inputs[0].shown)

    frame = None
    if width > 1:
        try:
            frame = run(dict(options, columns=columns, strict_mode=True, null_padding=False), strict_query, True)
        except duckdb.Error:
            frame = None  # a ragged row, a blank line of spaces, a multi-line field: the checked path decides
    if frame is None:
        try:
            try:
                frame = run(checked, checked_query, parallel=True)
            except duckdb.Error:
                frame = run(checked, checked_query, parallel=False)
        except duckdb.Error as exc:
            raise ValueError(f"{inputs[0].shown} could not be read as CSV by DuckDB: "
                             f"{str(exc).splitlines()[0]}") from None
        frame = _check_shape_flags(frame, width, inputs[0].shown)
    cells = frame.iloc[:, :len(positions)].astype(object).where(frame.iloc[:, :len(positions)].notna(), "")
    return pd.concat([cells, frame["__n"]], axis=1), notes


def _block_field_counts(block: bytes, sep: str, encoding: str, skip: int) -> tuple[int, int, int, int]:
    """(fields of the first record, records, records with more fields, with fewer) of one
    block of lines: read_table's own field count (:func:`_field_counts`), run on a worker."""
    text = block.decode(encoding)
    text = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    if skip:
        text = text.split("\n", skip)[-1] if text.count("\n") >= skip else ""
    counts, _ = _field_counts(text, sep)
    if not counts.size:
        return 0, 0, 0, 0
    return int(counts[0]), int(counts.size), int((counts > counts[0]).sum()), int((counts < counts[0]).sum())


def _dask_csv(inputs, positions, width, decisions, scheduler) -> tuple[pd.DataFrame, list[str]]:
    import dask
    import dask.dataframe as dd
    from dask.bytes import read_bytes

    names = [f"c{j}" for j in range(width)]
    skip = 1 if re.match(rb"(\xef\xbb\xbf)?sep=.\r?\n", _text_bytes(inputs[0], 64)[0]) else 0
    gz = _is_gzip(inputs[0])
    encoding = decisions.encoding
    # Blocks are cut at newlines: a file in a multi-byte encoding such as UTF-16, or
    # compressed, is read as one block per file. A quoted field spanning lines must not
    # meet a block boundary (64 MB blocks; use engine='duckdb' for such files).
    plain = encoding in ("utf-8", "utf-8-sig", "latin-1", "cp1252") and not gz
    blocksize = "64MB" if plain else None
    paths = [item.path for item in inputs]
    ddf = dd.read_csv(paths, sep=decisions.delimiter, header=None, names=names,
                      skiprows=skip + (1 if decisions.header else 0), dtype=str, na_filter=False,
                      keep_default_na=False, quotechar='"', doublequote=True, encoding=encoding,
                      compression="gzip" if gz else None, blocksize=blocksize, engine="c",
                      # read_table reads a blank line inside a one-column file as a missing cell
                      skip_blank_lines=width > 1,
                      # only the released columns are parsed: a wide file (10 000 columns) would
                      # otherwise cost seconds per call in Dask's metadata alone; the rows' field
                      # counts are still checked on every block below
                      usecols=sorted({names[j] for j in positions}))
    columns = {f"v{i}": ddf[f"c{j}"] for i, j in enumerate(positions)}
    grouped = ddf.assign(**columns)[list(columns)].groupby(list(columns), dropna=False, sort=False).size()
    # pandas' parser fills a short row with empty cells and may drop a trailing separator:
    # the rows' field counts are checked on the workers with read_table's own count.
    _, blocks = read_bytes(paths, delimiter=b"\n" if plain else None, blocksize=blocksize,
                           compression="gzip" if gz else None)
    checks = [dask.delayed(_block_field_counts)(block, decisions.delimiter, encoding, skip if (f == 0 and b == 0) or
                                                skip and b == 0 else 0)
              for f, file_blocks in enumerate(blocks) for b, block in enumerate(file_blocks)]
    try:
        with warnings.catch_warnings():  # one graph for the table and the checks: one pass over the file
            warnings.filterwarnings("ignore", message="Computing mixed collections", category=UserWarning)
            if scheduler is None:
                result, fields = dask.compute(grouped, checks, scheduler="threads")
            else:
                from distributed import Client

                with Client(scheduler, timeout="30s") as client:
                    result, fields = client.gather(client.compute([grouped, checks]))
    except (pd.errors.ParserError, UnicodeDecodeError, csv.Error) as exc:
        raise ValueError(f"{inputs[0].shown} could not be read as CSV by Dask: {str(exc).splitlines()[0]}") from None
    except OSError as exc:
        raise ValueError(f"cannot reach the Dask scheduler {scheduler!r}: {exc}") from None
    more = sum(f[2] + int(f[1] > 0 and f[0] > width) for f in fields)
    fewer = sum(f[3] + int(f[1] > 0 and f[0] < width) for f in fields)
    if more or fewer:
        what = "more" if more else "fewer"
        raise ValueError(f"{inputs[0].shown} has {more or fewer:,} row(s) with {what} fields than the {width} of the "
                         "first row (a trailing separator, a separator inside a field that is not quoted, or a quote "
                         "that is never closed): fix those rows so that every row has as many fields as the first.")
    frame = result.rename("__n").reset_index()
    k = len(positions)
    cells = frame.iloc[:, :k].astype(object).where(frame.iloc[:, :k].notna(), "")
    where = f"the Dask scheduler at {scheduler}" if scheduler else "Dask threads on this machine"
    return pd.concat([cells, frame["__n"]], axis=1), [f"Aggregated by {where}."]


def _read_distinct_cells(cells: pd.DataFrame, counts: np.ndarray, decisions: ReadDecisions,
                         options: dict, head_only: bool) -> tuple[pd.DataFrame, ReadDecisions]:
    """Read distinct raw cells as :func:`read_table` reads cells, with their counts as weights.

    ``cells`` has the wanted columns' names; the result is a typed frame of the same
    rows (a value may now repeat: ``'1.0'`` and ``'1.00'`` are one number, whose counts
    :func:`prepare` adds) and the decisions with the weighted readings of these columns.
    """
    names = list(cells.columns)
    if not len(cells):
        raise ValueError("the file has no data rows")
    def normalised(column: pd.Series) -> pd.Series:
        # Line endings inside quoted fields, as read_table normalises them (rare: test first).
        column = column.astype(object)
        if not column.astype(str).str.contains("\r", regex=False).any():
            return column
        return column.map(lambda v: v.replace("\r\n", "\n").replace("\r", "\n")
                          if isinstance(v, str) and "\r" in v else v)

    text = pd.DataFrame({j: normalised(cells[name]) for j, name in enumerate(names)})
    masks = _cell_masks(text, options["thousands"], options["keep_na_text"])
    position = {c.name: c.position for c in decisions.columns}
    columns, readings = {}, []
    for j, name in enumerate(names):
        values, reading = _read_column({key: m[:, j] for key, m in masks.items()}, name, position[name],
                                       options["thousands"], options["keep_na_text"], weights=counts)
        columns[name] = values
        readings.append(reading)
    frame = pd.DataFrame(columns)
    readings = [replace(r, dtype=str(dtype)) for r, dtype in zip(readings, frame.dtypes)]
    frame.attrs["na_text"] = {r.name: r.n_na_text for r in readings if r.n_na_text}
    note = ("Every row was read for the released column(s); the separator, encoding and header were decided "
            f"on the file's first {HEAD_BYTES // 2**10} KiB.")
    decisions = replace(decisions, columns=tuple(readings),
                        notes=tuple(decisions.notes) + ((note,) if head_only else ()))
    return frame, decisions


def counts_from_column(column: pd.Series, name: str) -> np.ndarray:
    """The counts of a frequency table given as input: whole numbers >= 0 in every row."""
    raw = column.to_numpy()
    if column.dtype.kind in "iu":
        values = raw
    elif column.dtype == object and len(raw) and all(
            isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_)) for v in raw):
        values = np.asarray([int(v) for v in raw], dtype=object)
        if max(values) >= 2**62:
            raise ValueError(f"the counts in column {name!r} must be below 2**62, got {max(values)!r}")
        values = values.astype(np.int64)
    elif column.dtype.kind == "f" and np.all(np.isfinite(raw)) and np.all(raw == np.round(raw)):
        values = raw
    else:
        bad = [v for v in raw if not (isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_)))
               and not (isinstance(v, float) and v.is_integer())]
        raise ValueError(f"column {name!r} must hold the counts of a frequency table (whole numbers >= 0 in every "
                         f"row), got {bad[0] if bad else raw[0]!r}")
    try:
        return _check_counts(values, len(values))
    except ValueError as exc:
        raise ValueError(f"column {name!r} (the counts): {exc}") from None


def _parquet_cells(inputs: list[_Input], wanted: list[str], engine: str, scheduler: str | None,
                   limit: tuple = (None, ())) -> tuple[pd.DataFrame, np.ndarray]:
    """Distinct typed rows of the wanted Parquet columns (only those are read) and their counts;
    ``limit``: (max_distinct, released names), as :func:`_check_distinct` takes them."""
    import pyarrow.parquet as pq

    for item in inputs:
        try:
            schema = pq.read_schema(io.BytesIO(item.content) if item.path is None else item.path)
        except Exception as exc:  # noqa: BLE001 — pyarrow raises several types for damaged files
            raise ValueError(f"{item.shown} is not a readable Parquet file: {exc}") from None
        absent = [w for w in wanted if w not in schema.names]
        if absent:
            raise ValueError(f"no column named {absent[0]!r} in {item.shown}; the columns are "
                             f"{_list_names(schema.names)}.")
        for name in wanted:
            arrow_type = schema.field(name).type
            what = _unsupported_parquet_type(arrow_type)
            if what:
                raise ValueError(f"column {name!r} of {item.shown} holds {what} (Parquet type {arrow_type}), which "
                                 "cannot be released: a released column holds numbers, text, booleans or dates. "
                                 "Choose another column, or convert this one (flatten it, or decode its bytes as "
                                 "text) before the upload.")
    if engine == "pandas":
        frames = [pd.read_parquet(io.BytesIO(item.content) if item.path is None else item.path, columns=wanted)
                  for item in inputs]
        frame = pd.concat(frames, ignore_index=True)
        grouped = frame.groupby(wanted, sort=False, dropna=False).size()
    elif engine == "duckdb":
        import duckdb

        try:
            with _duckdb_connection() as con:
                # DuckDB streams the row groups (an upload's bytes as a file object): memory grows
                # with the distinct rows, not with the rows (a few kilobytes of Parquet can hold
                # 10^8 equal values, docs/serving.md §2)
                rel = con.read_parquet(  # noqa: F841 (DuckDB reads the local `rel` by name in the SQL below)
                    io.BytesIO(inputs[0].content) if inputs[0].path is None else [item.path for item in inputs])
                cols = ", ".join(f'"{w}"' for w in (w.replace('"', '""') for w in wanted))
                released = ", ".join(f'"{w}"' for w in (w.replace('"', '""') for w in limit[1]))
                grouped_frame = _bounded_frame(con, con.sql(f"SELECT {cols}, count(*) AS __n FROM rel GROUP BY ALL"),
                                               limit[0], released, limit[1], inputs[0].shown)
        except duckdb.Error as exc:
            raise ValueError(f"{inputs[0].shown} could not be read by DuckDB: {str(exc).splitlines()[0]}") from None
        counts = grouped_frame.pop("__n").to_numpy(dtype=np.int64)
        grouped_frame.columns = wanted
        return _typed_parquet_frame(grouped_frame), counts
    else:
        import dask.dataframe as dd

        ddf = dd.read_parquet([item.path for item in inputs], columns=wanted)
        grouped = ddf.groupby(wanted, dropna=False, sort=False).size()
        if scheduler is None:
            grouped = grouped.compute(scheduler="threads")
        else:
            from distributed import Client

            try:
                with Client(scheduler, timeout="30s") as client:
                    grouped = client.compute(grouped).result()
            except OSError as exc:
                raise ValueError(f"cannot reach the Dask scheduler {scheduler!r}: {exc}") from None
    frame = grouped.rename("__n").reset_index()
    counts = frame.pop("__n").to_numpy(dtype=np.int64)
    frame.columns = wanted
    if limit[1]:
        _check_distinct(len(frame[list(limit[1])].drop_duplicates()), limit[0], limit[1], inputs[0].shown)
    return _typed_parquet_frame(frame), counts


def _check_distinct(count: int, max_distinct: int | None, names, shown: str) -> None:
    """Refuse ``count`` distinct rows of the released columns ``names`` above ``max_distinct``."""
    if max_distinct is None or count <= max_distinct:
        return
    which = f"column {names[0]!r}" if len(names) == 1 else f"columns {_list_names(list(names))}"
    raise ValueError(f"{shown} has {count:,} distinct values in {which}, above the dashboard's limit of "
                     f"{max_distinct:,} (max_distinct={max_distinct}): each distinct value is held in the "
                     "session's memory. Release fewer or coarser columns (round the numbers), or use the command "
                     "line (python -m core release), which has no such limit.")


def _bounded_frame(con, relation, max_distinct: int | None, distinct: str, names, shown: str) -> pd.DataFrame:
    """The rows of a DuckDB ``relation`` (a ``GROUP BY``) as a frame, refused by
    :func:`_check_distinct` before they become one when the released columns ``distinct``
    (their SQL list) have more than ``max_distinct`` distinct rows.

    The grouped rows go to a temporary table of the connection: DuckDB holds it within its
    memory limit (spilling to the connection's private directory), its rows are counted
    exactly there, and only an admissible table is converted to pandas (about 300–400
    bytes per distinct value once in Python; an approximate count could let a file through).
    """
    if max_distinct is None or not names:
        return relation.df()
    relation.create("__grouped")
    ((count,),) = con.execute("SELECT count(*) FROM __grouped").fetchall()
    if count > max_distinct:
        # The grouped rows may carry more than the released columns (a counts column, the
        # row-shape flags): their distinct released values, exactly, decide.
        ((count,),) = con.execute(f"SELECT count(*) FROM (SELECT DISTINCT {distinct} FROM __grouped)").fetchall()
        _check_distinct(int(count), max_distinct, names, shown)
    return con.table("__grouped").df()


def _unsupported_parquet_type(arrow_type) -> str | None:
    """What a Parquet column type holds when its cells cannot be released (``None`` when they
    can): nested values (struct, list, map, union) and raw bytes have no order and no
    hashable Python form to count distinct values of."""
    import pyarrow as pa

    value_type = arrow_type.value_type if pa.types.is_dictionary(arrow_type) else arrow_type
    if pa.types.is_nested(value_type):
        return "nested values: a struct, list, map or union"
    binary = (pa.types.is_binary, pa.types.is_large_binary, pa.types.is_fixed_size_binary,
              getattr(pa.types, "is_binary_view", lambda t: False))
    if any(test(value_type) for test in binary):
        return "raw bytes: a binary column"
    return None


def _typed_parquet_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """Distinct Parquet rows with one dtype per kind, whichever engine produced them:
    integers int64 (float64 with NaN when some are missing), floats float64, text as
    Python strings (object, missing as NaN), booleans bool."""
    out = {}
    for name in frame.columns:
        column = frame[name]
        if pd.api.types.is_bool_dtype(column):
            out[name] = column.astype(bool) if not column.isna().any() else column.astype(object)
        elif pd.api.types.is_integer_dtype(column):
            out[name] = (column.to_numpy(dtype=np.int64) if not column.isna().any()
                         else column.to_numpy(dtype=float, na_value=np.nan))
        elif pd.api.types.is_float_dtype(column):
            out[name] = column.to_numpy(dtype=float, na_value=np.nan)
        else:
            values = column.astype(object).to_numpy()
            out[name] = np.asarray([np.nan if v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NA
                                    else v for v in values], dtype=object)
    return pd.DataFrame(out)
