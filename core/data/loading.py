"""From a file to the prepared data, as the dashboard and the release recipe load it
(docs/scale.md, "The dashboard on large data" and "Frequency tables as input").

* the format of a file (:func:`detect_format`: the Parquet magic bytes or the file name;
  everything else is read as CSV, gzip-compressed or not, by :mod:`.engines`);
* the choice between an exact full read of every row and the *lean path*, where the
  released columns are reduced to their frequency table (:func:`takes_lean_path`);
* limits on what a file may become once read — rows, the text a gzip-compressed file
  decompresses to and a Parquet file's uncompressed column data — checked before anything
  is read (:func:`check_read_limits`);
* a bounded first look at a file — the Parquet schema and first rows, or the CSV head
  that :func:`aggregate` decides on (:func:`read_file_head`, :class:`FileHead`);
* the default kind, transform and columns offered for a file's columns
  (:func:`mostly_numeric`, :func:`default_transform`, :func:`default_columns`) and the
  column most likely to hold the counts of a frequency table
  (:func:`default_counts_column`);
* the preparation of a file or a frame that is already read (:func:`prepare_source`,
  :func:`prepare_frame`);
* how many records have a missing cell in each column (:func:`missing_counts`), for the
  choice each such column needs (:attr:`ColumnSpec.missing`).

Functions that name a source in their messages take that name as ``name=`` (an upload's
file name); without it, bytes are "the uploaded data".
"""
from __future__ import annotations

import gzip
import io
import zlib
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..validation import check_bounds, check_integer
from .coarsening import apply_coarsening
from .engines import _detect_format, _is_gzip, _resolve_inputs, aggregate, counts_from_column, read_head
from .prepare import PreparedData, prepare
from .reading import ReadDecisions, ReadResult

#: CSV bytes up to this size are read whole and exactly, so that a problem is named by its
#: row (the bundled samples and the awkward-file corpus are below 0.5 MB); larger CSVs,
#: Parquet files and frequency tables take the lean path. A full read of 1 MiB (~50 000
#: short rows) takes a fraction of a second; of 10^6 rows (~20 MB) about 4 s and a frame of
#: all n rows, where DuckDB's aggregate takes ~0.6 s and keeps the k distinct values.
FULL_READ_MAX_BYTES = 2**20

#: Rows of a Parquet file read for its column list and default kinds.
PARQUET_HEAD_ROWS = 10_000

#: Pieces in which :func:`check_read_limits` decompresses a gzip file (counted, then dropped).
DECOMPRESS_CHUNK_BYTES = 1 << 20

#: Column names (trimmed, lower case) that suggest the counts of a frequency table.
COUNT_NAMES = ("count", "counts", "n", "freq", "frequency", "weight", "records")


def detect_format(source) -> str:
    """The format of a file: ``'parquet'`` or ``'csv'``.

    Parameters
    ----------
    source : str, os.PathLike, sequence of them, bytes or file-like
        As for :func:`aggregate` (a glob or a list: its first file).

    Returns
    -------
    {'parquet', 'csv'}
        ``'parquet'`` when the file opens with Parquet's magic bytes (or a path ends in
        ``.parquet`` / ``.pq``); otherwise ``'csv'`` — plain or gzip-compressed text,
        which :func:`read_table` and :func:`aggregate` tell apart themselves.

    Raises
    ------
    ValueError
        ``source`` is of another type, names no file, or a glob matches none.
    """
    return _detect_format(_resolve_inputs(source)[0])


def takes_lean_path(content, *, counts_column: str | None = None, whole_at_any_size: bool = False) -> bool:
    """Whether a file reaches the prepared data through its frequency table only (the lean path).

    The lean path (docs/scale.md, "The dashboard on large data") reads a bounded head for the
    column list and reduces the released columns to their distinct values with DuckDB, so
    that no frame of the n rows is ever built; the exact full read (:func:`read_table` of
    every row, then :func:`prepare_frame`) names a problem by its row.

    Parameters
    ----------
    content : bytes
        The file's bytes.
    counts_column : str or None
        The file is a frequency table with its counts in this column (always lean).
    whole_at_any_size : bool
        Read a CSV whole whatever its size (the bundled samples, public files of known
        size). Default ``False``: only up to :data:`FULL_READ_MAX_BYTES`.

    Returns
    -------
    bool
        ``True`` for a Parquet file, a frequency table, or a CSV of more than
        :data:`FULL_READ_MAX_BYTES` bytes (unless ``whole_at_any_size``).

    Raises
    ------
    ValueError
        ``content`` is not bytes, ``counts_column`` is not ``None`` or a column name.
    """
    if not isinstance(content, (bytes, bytearray, memoryview)):
        raise ValueError(f"content must be the bytes of a file, got {type(content).__name__}")
    if counts_column is not None and (not isinstance(counts_column, str) or not counts_column):
        raise ValueError(f"counts_column must be None or a column name, got {counts_column!r}")
    return (detect_format(content) == "parquet" or counts_column is not None
            or (not whole_at_any_size and len(content) > FULL_READ_MAX_BYTES))


def check_read_limits(content, *, max_rows: int | None = None, max_decompressed_bytes: int | None = None,
                      name: str | None = None) -> None:
    """Refuse a file that would become more than the limits once read, before reading it.

    What a small file may become is not bounded by its size: a Parquet file of 10^8 equal
    values takes a few kilobytes (its pages are run-length encoded and compressed), a gzip
    file of 1.5 MB decompresses to 500 MB (docs/serving.md §2). This looks only at what
    the file says about itself, in bounded memory: the row count of a Parquet file's
    footer and its columns' uncompressed sizes (a 7 KB file may hold one 200 MiB cell);
    the lines and decompressed bytes of a CSV, gzip-compressed ones decompressed in pieces
    of :data:`DECOMPRESS_CHUNK_BYTES` that are counted and dropped, stopping at the first
    limit crossed (so at most ``max_decompressed_bytes`` are ever decompressed).

    Parameters
    ----------
    content : bytes
        The file's bytes (an upload).
    max_rows : int ≥ 1 or None
        The most data rows: a Parquet file's rows; a CSV's lines less one (a header),
        counting line feeds or carriage returns, whichever are more (a quoted field
        spanning lines counts each line: a bound on the rows from above). ``None``: no
        limit.
    max_decompressed_bytes : int ≥ 1 or None
        The most bytes a gzip-compressed CSV may decompress to, and the most a Parquet
        file's column data may take uncompressed (the footer's ``total_uncompressed_size``
        of its column chunks, summed over row groups: per column, and over all columns;
        the message names the largest column). ``None``: no limit.
    name : str or None
        How messages call the file (an upload's file name); default "the uploaded data".

    Raises
    ------
    ValueError
        ``content`` is not bytes or a limit is not a positive integer (named); the file
        is over a limit (the message names the limit and the command line, which has
        none); a damaged gzip or Parquet file.
    """
    if not isinstance(content, (bytes, bytearray, memoryview)):
        raise ValueError(f"content must be the bytes of a file, got {type(content).__name__}")
    if max_rows is not None:
        max_rows = check_integer("max_rows", max_rows, minimum=1)
    if max_decompressed_bytes is not None:
        max_decompressed_bytes = check_integer("max_decompressed_bytes", max_decompressed_bytes, minimum=1)
    item = _resolve_inputs(content, name)[0]
    elsewhere = "use the command line (python -m core release), which streams files of any size"
    if _detect_format(item) == "parquet":
        if max_rows is None and max_decompressed_bytes is None:
            return
        metadata = _parquet_metadata(item)
        n_rows = int(metadata.num_rows)
        if max_rows is not None and n_rows > max_rows:
            raise ValueError(f"{item.shown} has {n_rows:,} rows, above the limit of {max_rows:,} "
                             f"(max_rows={max_rows}): {elsewhere}.")
        if max_decompressed_bytes is not None:
            _check_parquet_sizes(item, metadata, max_decompressed_bytes, elsewhere)
        return
    if not _is_gzip(item):
        if max_rows is not None and _lines(item.content) > max_rows + 1:
            raise ValueError(f"{item.shown} has more than {max_rows:,} rows, above the limit (max_rows={max_rows}): "
                             f"{elsewhere}.")
        return
    size, line_feeds, returns = 0, 0, 0
    try:
        with gzip.open(io.BytesIO(item.content), "rb") as text:
            while piece := text.read(DECOMPRESS_CHUNK_BYTES):
                size += len(piece)
                line_feeds += piece.count(b"\n")
                returns += piece.count(b"\r")
                if max_decompressed_bytes is not None and size > max_decompressed_bytes:
                    raise ValueError(
                        f"{item.shown} is gzip-compressed and decompresses to more than "
                        f"{_mib(max_decompressed_bytes)}, above the limit "
                        f"(max_decompressed_bytes={max_decompressed_bytes}): upload the CSV itself, uncompressed, "
                        f"or {elsewhere}.")
                if max_rows is not None and max(line_feeds, returns) > max_rows + 1:
                    raise ValueError(f"{item.shown} has more than {max_rows:,} rows, above the limit "
                                     f"(max_rows={max_rows}): {elsewhere}.")
    except (OSError, EOFError, zlib.error) as exc:
        raise ValueError(f"{item.shown} is a damaged gzip file: {exc}") from None


def _lines(content: bytes) -> int:
    """Lines of a text: its line feeds or carriage returns, whichever are more (LF, CRLF
    and CR line endings), plus a last line without an ending."""
    breaks = max(content.count(b"\n"), content.count(b"\r"))
    return breaks + int(bool(content) and content[-1:] not in (b"\n", b"\r"))


def _parquet_metadata(item):
    """A Parquet file's footer (``pyarrow.parquet.FileMetaData``; no data page is read)."""
    import pyarrow.parquet as pq

    try:
        return pq.ParquetFile(io.BytesIO(item.content)).metadata
    except Exception as exc:  # noqa: BLE001 — pyarrow raises several types for damaged files
        raise ValueError(f"{item.shown} is not a readable Parquet file: {exc}") from None


def _mib(size: int) -> str:
    """A byte count for a message: whole MiB when exact, else bytes."""
    return f"{size // 2**20:,} MiB" if size % 2**20 == 0 else f"{size:,} bytes"


def _check_parquet_sizes(item, metadata, limit: int, elsewhere: str) -> None:
    """Refuse a Parquet file whose column data, uncompressed, exceeds ``limit`` bytes.

    The footer states each column chunk's ``total_uncompressed_size`` (its pages once
    decompressed, still encoded: a run of equal values stays small, a wide or distinct string
    counts in full). Summed over the row groups, per column and over all columns, it bounds
    from below what reading the file materialises, so one 200 MiB cell or 200 distinct 1 MiB
    strings are refused before any data page is read (docs/serving.md §2).
    """
    sizes: dict[str, int] = {}
    try:
        for g in range(metadata.num_row_groups):
            group = metadata.row_group(g)
            for c in range(group.num_columns):
                chunk = group.column(c)
                sizes[chunk.path_in_schema] = sizes.get(chunk.path_in_schema, 0) + int(chunk.total_uncompressed_size)
    except Exception as exc:  # noqa: BLE001 — pyarrow raises several types for damaged footers
        raise ValueError(f"{item.shown} is not a readable Parquet file: {exc}") from None
    if not sizes:
        return
    column, largest = max(sizes.items(), key=lambda pair: pair[1])
    total = sum(sizes.values())
    if total > limit:
        where = (f"column {column!r} holds {largest:,} bytes uncompressed" if largest > limit else
                 f"its columns hold {total:,} bytes uncompressed (the largest, {column!r}, {largest:,})")
        raise ValueError(f"{item.shown} is a Parquet file whose {where}, above the limit of {_mib(limit)} "
                         f"(max_decompressed_bytes={limit}): {elsewhere}.")


@dataclass(frozen=True, eq=False)
class FileHead:
    """A bounded first look at a file: enough to list its columns and guess their kinds.

    Attributes
    ----------
    frame : pandas.DataFrame
        The first rows (every row when ``complete``), columns named by strings.
    decisions : ReadDecisions or None
        What the CSV reader decided on these rows; ``None`` for Parquet (typed columns:
        nothing to decide).
    file_format : {'csv', 'parquet'}
    complete : bool
        ``frame`` holds every row of the file.
    n_rows : int or None
        Rows of the file when known without reading it all (Parquet metadata, or a
        complete head).
    """

    frame: pd.DataFrame
    decisions: ReadDecisions | None
    file_format: str
    complete: bool
    n_rows: int | None = None

    @property
    def columns(self) -> list[str]:
        """The column names, as strings."""
        return [str(c) for c in self.frame.columns]

    @classmethod
    def of_reading(cls, reading: ReadResult) -> FileHead:
        """The head of a CSV read whole by :func:`read_table`: every row, complete.

        Parameters
        ----------
        reading : ReadResult
            The whole file's reading.

        Returns
        -------
        FileHead
            ``frame`` and ``decisions`` of ``reading``, ``complete=True``, ``n_rows`` its rows.

        Raises
        ------
        ValueError
            ``reading`` is not a :class:`ReadResult`.
        """
        if not isinstance(reading, ReadResult):
            raise ValueError(f"reading must be a ReadResult (core.data.read_table), got {type(reading).__name__}")
        return cls(reading.frame, reading.decisions, "csv", True, reading.decisions.n_rows)


def read_file_head(source, *, name: str | None = None, rows: int = PARQUET_HEAD_ROWS, sep: str | None = None,
                   header: bool | None = None, encoding: str | None = None, thousands: str | None = None,
                   keep_na_text: bool = False) -> FileHead:
    """The head of a CSV or Parquet file, without reading all its rows.

    Parameters
    ----------
    source : str, os.PathLike, bytes or file-like
        As for :func:`aggregate` (a glob or a list: its first file).
    name : str or None
        How error messages call bytes or a file-like ``source`` (an upload's file name,
        quoted in the message); default "the uploaded data", or the object's file name.
    rows : int ≥ 1
        Rows of a Parquet file to read (default :data:`PARQUET_HEAD_ROWS`).
    sep, header, encoding, thousands, keep_na_text
        CSV reading options, as for :func:`read_table` (ignored for Parquet).

    Returns
    -------
    FileHead
        Parquet: the schema's columns, the first ``rows`` rows and the row count of the
        file's metadata. CSV: :func:`read_head` — the first :data:`HEAD_BYTES` cut at a
        line end, with the separator, encoding, header and columns that :func:`aggregate`
        will read; ``n_rows`` only when that head is the whole file.

    Raises
    ------
    ValueError
        A bad option (named); a damaged Parquet file, or one without columns or data
        rows; what :func:`read_table` refuses in the CSV head.
    """
    rows = check_integer("rows", rows, minimum=1)
    if detect_format(source) == "parquet":
        return _parquet_head(source, name, rows)
    reading, complete = read_head(source, name=name, sep=sep, header=header, encoding=encoding, thousands=thousands,
                                  keep_na_text=keep_na_text)
    return FileHead(reading.frame, reading.decisions, "csv", complete, reading.decisions.n_rows if complete else None)


def _parquet_head(source, name: str | None, rows: int) -> FileHead:
    """The Parquet schema's columns, the first ``rows`` rows and the metadata's row count."""
    # pyarrow loads only when a Parquet file is opened: CSV users never pay for it.
    import pyarrow.parquet as pq

    item = _resolve_inputs(source, name)[0]
    try:
        parquet = pq.ParquetFile(io.BytesIO(item.content) if item.path is None else item.path)
        n_rows = int(parquet.metadata.num_rows)
        batch = next(parquet.iter_batches(batch_size=rows), None)
        frame = (batch.to_pandas() if batch is not None
                 else parquet.schema_arrow.empty_table().to_pandas())
    except Exception as exc:  # noqa: BLE001 — pyarrow raises several types for damaged files
        raise ValueError(f"{item.shown} is not a readable Parquet file: {exc}") from None
    if not len(frame.columns):
        raise ValueError(f"{item.shown} has no columns")
    if not n_rows:
        raise ValueError(f"{item.shown} has no data rows")
    frame.columns = [str(c) for c in frame.columns]
    return FileHead(frame, None, "parquet", len(frame) == n_rows, n_rows)


def _check_frame(frame) -> pd.DataFrame:
    """``frame`` if it is a DataFrame with at least one column."""
    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"frame must be a pandas.DataFrame, got {type(frame).__name__}")
    if not len(frame.columns):
        raise ValueError("frame must have at least one column, got none")
    return frame


def mostly_numeric(series) -> bool:
    """Whether a column is offered as numeric: read as numbers, or mostly numbers.

    A column whose cells are mostly numbers is offered as numeric so that a stray text
    cell is reported (row and value) by :func:`prepare` rather than silently turning the
    column into labels; the user can still choose categorical.

    Parameters
    ----------
    series : pandas.Series
        The column as read (any dtype; Python integers beyond 64 bits are whole numbers).

    Returns
    -------
    bool
        ``False`` for booleans; ``True`` for a numeric dtype; otherwise whether at least
        half of the present (non-missing) cells parse as numbers (``False`` when none is
        present).

    Raises
    ------
    ValueError
        ``series`` is not a ``pandas.Series``.
    """
    if not isinstance(series, pd.Series):
        raise ValueError(f"series must be a pandas.Series (one column), got {type(series).__name__}")
    if pd.api.types.is_bool_dtype(series):
        return False
    if pd.api.types.is_numeric_dtype(series):
        return True
    present = series.dropna()
    if not len(present):
        return False
    try:
        parsed = pd.to_numeric(present, errors="coerce")
    except (OverflowError, TypeError):   # Python ints beyond 64 bits: whole numbers, kept exact by prepare
        parsed = present.map(lambda v: v if isinstance(v, int) else pd.to_numeric(v, errors="coerce"))
    return bool(parsed.notna().mean() >= 0.5)


def default_transform(series, bounds=None) -> dict:
    """The transform first offered for a column: its kind, and public bounds only if known.

    Nothing is read off the data but the kind: without known public bounds the bound
    fields start empty (``None``: no default such as [0, 1] is ever applied, which would
    clip the values), and :func:`prepare` takes the bounds from the data (with a
    :class:`~core.validation.PrivacyLeakWarning`) until the user types both
    (docs/mathematics.md §2.4).

    Parameters
    ----------
    series : pandas.Series
        The column as read.
    bounds : (float, float) or None
        Public bounds known without looking at the records (e.g. shipped with a bundled
        sample), finite with lo < hi.

    Returns
    -------
    dict
        ``{"kind": 'numeric' or 'categorical' (:func:`mostly_numeric`), "log": False,
        "bounds_public": bounds given, "lo": float or None, "hi": float or None, "decimals": None,
        "grid": None, "categories": None}`` (no public bounds, grid step or category list unless
        given: all are typed).

    Raises
    ------
    ValueError
        ``series`` is not a ``pandas.Series``; ``bounds`` is not a pair of finite numbers
        with lo < hi.
    """
    lo, hi = (None, None) if bounds is None else check_bounds(bounds)
    return {"kind": "numeric" if mostly_numeric(series) else "categorical", "log": False,
            "bounds_public": bounds is not None, "lo": lo, "hi": hi, "decimals": None, "grid": None,
            "categories": None}


def missing_counts(frame, counts=None) -> dict[str, int]:
    """How many records have a missing cell (empty, ``NA``, NaN) in each column.

    Parameters
    ----------
    frame : pandas.DataFrame
        The rows as read (:func:`read_table`), or the distinct rows of a file
        (:attr:`DistinctValues.frame`) with their ``counts``.
    counts : array_like of int ≥ 0, shape (len(frame),), or None
        Records per row (``None``: one each).

    Returns
    -------
    dict of str to int
        Every column of ``frame`` (by its name as a string) and its records with a
        missing cell; the same numbers on every read path. Vectorised: cost O(d rows).

    Raises
    ------
    ValueError
        ``frame`` is not a DataFrame with at least one column; ``counts`` of another length.
    """
    frame = _check_frame(frame)
    missing = frame.isna().to_numpy()
    if counts is None:
        per_column = missing.sum(axis=0)
    else:
        weights = np.asarray(counts, dtype=np.int64)
        if weights.shape != (len(frame),):
            raise ValueError(f"counts must have one entry per row ({len(frame)}), got shape {weights.shape}")
        per_column = weights @ missing
    return {str(c): int(v) for c, v in zip(frame.columns, per_column)}


def default_columns(frame, exclude: str | None = None) -> list[str]:
    """The column first offered for release.

    The numeric column (:func:`mostly_numeric`) with the most distinct values — the one
    whose ties and singletons are most worth protecting — else the first column.

    Parameters
    ----------
    frame : pandas.DataFrame
        The file's head, at least one column.
    exclude : str or None
        A column never offered (the counts of a frequency table), unless it is the only one.

    Returns
    -------
    list of str
        One column name.

    Raises
    ------
    ValueError
        ``frame`` is not a DataFrame with at least one column.
    """
    frame = _check_frame(frame)
    candidates = [c for c in frame.columns if c != exclude] or list(frame.columns)
    numeric = [c for c in candidates if mostly_numeric(frame[c])]
    if not numeric:
        return [str(candidates[0])]
    return [str(max(numeric, key=lambda c: frame[c].nunique()))]


def default_counts_column(frame) -> str:
    """The column most likely to hold the counts of a frequency table.

    Parameters
    ----------
    frame : pandas.DataFrame
        The file's head, at least one column.

    Returns
    -------
    str
        The first column named like counts (:data:`COUNT_NAMES`: ``count``, ``n``,
        ``freq``, …, trimmed and in any case), else the last numeric column
        (:func:`mostly_numeric`), else the last column.

    Raises
    ------
    ValueError
        ``frame`` is not a DataFrame with at least one column.
    """
    frame = _check_frame(frame)
    for c in frame.columns:
        if str(c).strip().lower() in COUNT_NAMES:
            return str(c)
    numeric = [str(c) for c in frame.columns if mostly_numeric(frame[c])]
    return numeric[-1] if numeric else str(frame.columns[-1])


def prepare_frame(frame, specs, *, counts_column: str | None = None, coarsening=()) -> PreparedData:
    """:func:`prepare` of a frame already read, after the coarsening.

    Parameters
    ----------
    frame : pandas.DataFrame
        The rows (records, or the rows of a frequency table with ``counts_column``).
    specs : ColumnSpec, str or sequence of them
        The released columns and their transforms, as for :func:`prepare`.
    counts_column : str or None
        The frame is a frequency table with its counts (whole numbers ≥ 0) in this column.
    coarsening : sequence of ColumnTransform
        Applied to the rows (weighted by the counts) before ``specs``
        (:func:`apply_coarsening`, docs/mathematics.md §3.5); default none.

    Returns
    -------
    PreparedData

    Raises
    ------
    ValueError
        ``frame`` is not a DataFrame; no column ``counts_column``, or counts that are not
        whole numbers ≥ 0; what :func:`apply_coarsening` and :func:`prepare` refuse.
    """
    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"frame must be a pandas.DataFrame, got {type(frame).__name__}")
    counts = None
    if counts_column is not None:
        if counts_column not in frame.columns:
            raise ValueError(f"no counts column {counts_column!r}; the columns are "
                             f"{', '.join(map(repr, frame.columns))}")
        counts = counts_from_column(frame[counts_column], counts_column)
    coarsening = tuple(coarsening)
    frame = apply_coarsening(frame, coarsening, counts=counts) if coarsening else frame
    return prepare(frame, specs, counts=counts)


def prepare_source(source, specs, *, counts_column: str | None = None, coarsening=(), engine: str = "duckdb",
                   scheduler: str | None = None, name: str | None = None, sep: str | None = None,
                   header: bool | None = None, encoding: str | None = None, thousands: str | None = None,
                   keep_na_text: bool = False) -> tuple[PreparedData, dict | None]:
    """The prepared data of a file, or of a frame already read, and how the file was read.

    Parameters
    ----------
    source : pandas.DataFrame, str, os.PathLike, sequence of them, bytes or file-like
        A frame goes to :func:`prepare_frame`; a file (path, glob, list of paths, bytes
        or file-like) is reduced to its frequency table by :func:`aggregate`.
    specs : ColumnSpec, str or sequence of them
        The released columns and their transforms, as for :func:`prepare`.
    counts_column : str or None
        The input is a frequency table with its counts in this column.
    coarsening : sequence of ColumnTransform
        Applied before ``specs`` (docs/mathematics.md §3.5); default none.
    engine : {'duckdb', 'dask', 'pandas'}
        How a file is aggregated (:func:`aggregate`); the table is the same with each.
    scheduler : str or None
        Dask only: the address of a running Dask scheduler.
    name : str or None
        How error messages call bytes or a file-like ``source`` (as for :func:`aggregate`).
    sep, header, encoding, thousands, keep_na_text
        CSV reading options, as for :func:`read_table` (ignored for a frame or Parquet).

    Returns
    -------
    (PreparedData, dict or None)
        The prepared data, and the reading record of a file
        (:meth:`Aggregated.reading`); ``None`` for a frame.

    Raises
    ------
    ValueError
        What :func:`prepare_frame` or :func:`aggregate` refuses.
    """
    if isinstance(source, pd.DataFrame):
        return prepare_frame(source, specs, counts_column=counts_column, coarsening=coarsening), None
    aggregated = aggregate(source, specs, engine=engine, scheduler=scheduler, counts_column=counts_column,
                           coarsening=coarsening, name=name, sep=sep, header=header, encoding=encoding,
                           thousands=thousands, keep_na_text=keep_na_text)
    return aggregated.prepared, aggregated.reading()
