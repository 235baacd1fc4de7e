"""The data layer: read a CSV, prepare columns for the mechanism, reduce to a frequency table.

Implements the data side of SPEC §1–2 (issue 2, item 2; issue 9):

* :func:`read_table` reads a path, bytes or an uploaded file into a ``pandas.DataFrame``
  and a :class:`ReadDecisions` record of everything it decided (delimiter, encoding,
  header, per-column kind, notes; ``to_dict()`` for the report), detecting what the user
  did not say and refusing ragged rows, binary files and undecodable text with a
  :class:`ValueError` a user can act on. Integer columns are read exactly (no float
  round trip), so values beyond :math:`2^{53}` stay distinct through :func:`prepare`,
  the release and :meth:`PreparedData.to_original`. :func:`read_csv` returns the frame
  only;
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

import codecs
import contextvars
import csv
import io
import itertools
import math
import numbers
import os
import re
import warnings
from collections import Counter
from dataclasses import dataclass, field, replace
from fractions import Fraction
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from .mechanisms import CategoricalBase, UniformBase
from .validation import (
    check_bounds,
    check_choice,
    check_flag,
    check_integer,
    check_multiplicities,
    warn_bounds_from_data,
)

__all__ = [
    "Aggregated",
    "DEFAULT_MAX_BYTES",
    "ENGINES",
    "FORMATS",
    "HEAD_BYTES",
    "DistinctValues",
    "distinct_values",
    "read_head",
    "aggregate",
    "DELIMITERS",
    "NA_TEXT",
    "ColumnReading",
    "ColumnSpec",
    "FrequencyTable",
    "PreparedColumn",
    "PreparedData",
    "frequency_table",
    "prepare",
    "ReadDecisions",
    "ReadResult",
    "read_csv",
    "read_table",
    "rounding_profile",
]

#: Default upload limit of :func:`read_csv` (200 MiB, Streamlit's default upload limit).
DEFAULT_MAX_BYTES = 200 * 2**20

_KINDS = ("numeric", "categorical")
_SHOW = 5  # how many offending rows an error message lists


# --------------------------------------------------------------------------- reading

#: Field separators :func:`read_table` tries, in order of preference on a tie.
DELIMITERS = (",", ";", "\t", "|")

#: Cell texts read as missing unless ``keep_na_text=True`` (as spreadsheets, R and
#: pandas write missing values). An empty cell is always missing.
NA_TEXT = ("NA", "N/A", "n/a", "na", "NaN", "nan", "-nan", "-NaN", "NULL", "null", "Null", "None", "none",
           "#N/A", "#NA", "<NA>", "NaT")

_SNIFF_CHARS = 1 << 16   # the delimiter and the header are judged on the first 64 KiB
_SNIFF_RECORDS = 200
_EXACT_FLOAT_INT = 2**53  # integers beyond this are not all representable in float64
_INT_PATTERN = r"[+-]?[0-9]+"
# What pandas.to_numeric may accept as a float: decimal or exponent notation, inf, nan.
_NUMBER_PATTERN = r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?|[+-]?(?i:inf|infinity|nan)"
_BOOL_TEXT = ("true", "false")
_NAMES = {",": "comma", ";": "semicolon", "\t": "tab", "|": "pipe", " ": "space", ".": "period", "'": "apostrophe",
          "\u00a0": "no-break space", "\u202f": "narrow no-break space"}
_THOUSANDS = (",", ".", " ", "'", "\u00a0", "\u202f")
_SIGNATURES = (  # binary formats a user may rename to .csv, and what to do instead
    (b"\x1f\x8b", "a gzip-compressed file", "decompress it first (e.g. gunzip) and read the .csv inside"),
    (b"PK\x03\x04", "a ZIP archive (an Excel .xlsx or OpenDocument .ods workbook is one)",
     "open it in its spreadsheet program and save it as 'CSV UTF-8'"),
    (b"\xd0\xcf\x11\xe0", "an old-style Excel .xls workbook", "open it in Excel and save it as 'CSV UTF-8'"),
    (b"%PDF", "a PDF document", "export the table as CSV"),
    (b"BZh", "a bzip2-compressed file", "decompress it first (bunzip2)"),
    (b"\xfd7zXZ\x00", "an xz-compressed file", "decompress it first (unxz)"),
    (b"PAR1", "a Parquet file", "convert it to CSV"),
    (b"SQLite format 3\x00", "an SQLite database", "export the table as CSV"),
)
_BOMS = (  # longest first: the UTF-32-LE mark starts with the UTF-16-LE one
    (b"\xff\xfe\x00\x00", "utf-32"), (b"\x00\x00\xfe\xff", "utf-32"),
    (b"\xef\xbb\xbf", "utf-8-sig"), (b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16"),
)


@dataclass(frozen=True)
class ColumnReading:
    """How :func:`read_table` read one column.

    Attributes
    ----------
    name : str
        Column name in the returned frame (after filling empty and renaming repeated
        header names; see ``notes``).
    position : int
        1-based position of the column in the file.
    kind : {'integer', 'float', 'boolean', 'text', 'empty'}
        ``'integer'``: every non-missing cell is a whole number written without a
        decimal point; stored *exactly* — ``int64``, or Python ``int`` objects beyond
        the int64 range (never a float, so values beyond :math:`2^{53}` stay distinct).
        ``'float'``: numbers with a decimal point or exponent (``float64``, parsed
        correctly rounded; ``inf``/``1e999`` become ±inf and are counted in
        ``n_infinite``). ``'boolean'``: only ``true``/``false`` (any case).
        ``'text'``: anything else (labels, dates, mixed cells), kept as written after
        trimming spaces. ``'empty'``: every cell is missing.
    dtype : str
        The pandas dtype of the column in the frame: ``'int64'``; ``'object'`` (Python
        ints beyond int64, or booleans/big integers with missing cells); ``'float64'``
        (floats, or integers below 2**53 with missing cells, NaN marking them);
        ``'bool'``; ``'str'`` (text).
    n_missing : int
        Missing cells: empty, or spelled as in :data:`NA_TEXT` (unless ``keep_na_text``).
    n_na_text : int
        Of those, the cells spelled like ``NA``/``NULL``/``NaN`` (not empty). When this
        is > 0 and ``NA`` is a real label, read again with ``keep_na_text=True``.
    n_infinite : int
        Cells read as ±inf (``inf`` written, or a number beyond ±1.797e308, the float64
        range). :func:`prepare` refuses them in a numeric column.
    n_numeric : int
        Non-missing cells that are numbers (equal to the non-missing count for
        ``'integer'`` and ``'float'``; a ``'text'`` column that is mostly numbers has a
        stray cell to fix, which :func:`prepare` names with its row).
    notes : tuple of str
        Sentences for the user (spaces trimmed, thousands separators, leading zeros, …).
    """

    name: str
    position: int
    kind: str
    dtype: str
    n_missing: int = 0
    n_na_text: int = 0
    n_infinite: int = 0
    n_numeric: int = 0
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        """JSON-ready form (all values are str, int or lists of str)."""
        return {"name": self.name, "position": self.position, "kind": self.kind, "dtype": self.dtype,
                "n_missing": self.n_missing, "n_na_text": self.n_na_text, "n_infinite": self.n_infinite,
                "n_numeric": self.n_numeric, "notes": list(self.notes)}


@dataclass(frozen=True)
class ReadDecisions:
    """Everything :func:`read_table` decided about a file, for the user to check.

    Shown on the Data page and recorded in the release report (``to_dict()``), so that a
    reader of the report knows how the confidential file was turned into a table: a
    wrong delimiter or a header row read as data would change every number after it.

    Attributes
    ----------
    source : str
        Display name of the file (``'data.csv'``, or ``the uploaded data``).
    size_bytes : int
        Size of the file as read.
    encoding : str
        Python codec used: ``'utf-8'``, ``'utf-8-sig'`` (UTF-8 with a byte-order mark,
        as Excel writes), ``'utf-16'``/``'utf-32'`` (with a byte-order mark),
        ``'utf-16-le'``/``'utf-16-be'`` (without), ``'cp1252'`` or ``'latin-1'``.
    encoding_detected : bool
        ``False`` when the caller named the encoding.
    delimiter : str
        Field separator: one of :data:`DELIMITERS` when detected, or the caller's.
    delimiter_detected : bool
        ``False`` when the caller gave ``sep``.
    header : bool
        Whether the first row was used as column names.
    header_guessed : bool
        ``True`` when the caller left ``header=None`` and the reader decided.
    first_row_looks_like_data : bool
        The first row looks like a record (e.g. numbers where the column holds
        numbers). With ``header=None`` such a row is *kept as data* and the columns are
        named ``column_1``, ``column_2``, …; a user interface should then ask
        (:attr:`should_confirm_header`) and read again with ``header=True`` if it is a
        header after all.
    thousands : str or None
        Thousands separator removed from numbers (only when the caller gave one).
    keep_na_text : bool
        Whether cells spelled ``NA``, ``NULL``, … were kept as text labels.
    line_endings : {'LF', 'CRLF', 'CR', 'mixed', 'none'}
        Line endings found (all are read alike).
    n_rows, n_columns : int
        Data rows (header excluded) and columns of the frame.
    columns : tuple of ColumnReading
        Per column: kind, dtype, missing cells and notes.
    notes : tuple of str
        Sentences for the user, most important first: what was detected, what was
        guessed and how to override it, what was changed (names filled or renamed).
    """

    source: str
    size_bytes: int
    encoding: str
    encoding_detected: bool
    delimiter: str
    delimiter_detected: bool
    header: bool
    header_guessed: bool
    first_row_looks_like_data: bool
    thousands: str | None
    keep_na_text: bool
    line_endings: str
    n_rows: int
    n_columns: int
    columns: tuple[ColumnReading, ...]
    notes: tuple[str, ...] = ()

    @property
    def delimiter_name(self) -> str:
        """``'comma'``, ``'semicolon'``, ``'tab'``, ``'pipe'`` or the character itself, quoted."""
        return _NAMES.get(self.delimiter, repr(self.delimiter))

    @property
    def should_confirm_header(self) -> bool:
        """The reader guessed there is no header row: ask the user whether the first row is one."""
        return self.header_guessed and self.first_row_looks_like_data

    def column(self, name) -> ColumnReading:
        """The :class:`ColumnReading` of the column called ``name``."""
        for c in self.columns:
            if c.name == name:
                return c
        raise ValueError(f"no column named {name!r}; the columns are {_list_names([c.name for c in self.columns])}")

    def to_dict(self) -> dict:
        """JSON-ready form, for the release report (keys are the attribute names)."""
        return {"source": self.source, "size_bytes": self.size_bytes, "encoding": self.encoding,
                "encoding_detected": self.encoding_detected, "delimiter": self.delimiter,
                "delimiter_name": self.delimiter_name, "delimiter_detected": self.delimiter_detected,
                "header": self.header, "header_guessed": self.header_guessed,
                "first_row_looks_like_data": self.first_row_looks_like_data, "thousands": self.thousands,
                "keep_na_text": self.keep_na_text, "line_endings": self.line_endings, "n_rows": self.n_rows,
                "n_columns": self.n_columns, "columns": [c.to_dict() for c in self.columns],
                "notes": list(self.notes)}


@dataclass(frozen=True, eq=False)
class ReadResult:
    """A table read by :func:`read_table` and the record of how it was read.

    Attributes
    ----------
    frame : pandas.DataFrame
        Shape ``(decisions.n_rows, decisions.n_columns)``; dtypes as in
        :class:`ColumnReading`. ``frame.attrs['na_text']`` maps a column name to the
        number of cells spelled like ``NA`` that were read as missing (used by
        :func:`prepare` to offer ``keep_na_text``).
    decisions : ReadDecisions
    """

    frame: pd.DataFrame
    decisions: ReadDecisions


def read_table(source, *, sep: str | None = None, header: bool | None = None, encoding: str | None = None,
               thousands: str | None = None, keep_na_text: bool = False,
               max_bytes: int | None = DEFAULT_MAX_BYTES) -> ReadResult:
    """Read a delimited text file (CSV) exactly, and record every decision taken.

    Parameters
    ----------
    source : str, os.PathLike, bytes or file-like
        A path to a file (a ``str`` is always a path, never CSV text), the raw bytes of
        a file, or an object with ``read()`` (an open file, ``io.BytesIO``,
        ``io.StringIO``, Streamlit's ``UploadedFile``), read from its start.
    sep : str or None
        Field separator, one character. ``None`` (default) detects it among comma,
        semicolon, tab and pipe: the one that splits the first records into the same
        number (≥ 2) of fields, quotes respected. With none of them it is a
        one-column file (comma). The decision and whether it was detected are recorded.
    header : bool or None
        Whether the first row names the columns. ``None`` (default) decides: the first
        row is taken as *data* when it looks like a record — a number (or
        ``true``/``false``) in a column of numbers (booleans), or a label repeated
        further down its column — and no cell looks like a name (text over a column of
        numbers); otherwise it is the header. A first row kept as data is reported
        (:attr:`ReadDecisions.should_confirm_header`) so that the user can be asked.
        Without a header the columns are ``column_1``, ``column_2``, ….
    encoding : str or None
        Text encoding (a Python codec name). ``None`` detects: a byte-order mark
        (UTF-8, UTF-16, UTF-32), else UTF-16 without a mark (every other byte zero),
        else UTF-8, else Windows-1252 / latin-1 (which decode any byte; the choice is
        recorded so that a wrong one can be overridden).
    thousands : str or None
        Thousands separator to remove from numbers, e.g. ``','`` for Excel's
        ``"1,234,567.89"`` (quoted when it is also the field separator), ``'.'``,
        ``' '`` or ``"'"``. Only numbers grouped by threes (``1,234``, ``-12,345.6``)
        are changed. ``None`` (default): a cell such as ``1,234`` is text, and the
        column's notes suggest the option.
    keep_na_text : bool
        Keep cells spelled ``NA``, ``NULL``, ``NaN``, … (:data:`NA_TEXT`) as text
        labels, for a categorical column where ``NA`` is a real category (e.g. "not
        applicable"). Default ``False``: they are missing values. Empty cells are
        always missing.
    max_bytes : int ≥ 1 or None
        Size limit; ``None`` means no limit (command line, large files).

    Returns
    -------
    ReadResult
        ``frame`` with at least one column and one data row, and ``decisions``.

    Raises
    ------
    ValueError
        A bad option (named); no such file; over ``max_bytes``; a binary file (gzip,
        ZIP/xlsx, xls, NUL bytes) renamed ``.csv``; text that is not in the given
        encoding; an empty file or a header without data rows; a row with more or fewer
        fields than the first row (line number given; a trailing separator is named);
        an unclosed quote (line given).

    Notes
    -----
    Cells are trimmed of leading and trailing spaces (counted in the notes). A column
    is read by its cells' text, so integers are exact at any size, and a column that
    mixes numbers and text is kept as text so that :func:`prepare` can name the cells
    to fix. Line endings LF, CRLF and CR are all read; a quoted field may span lines.
    Cost: one pass of the pandas C parser plus vectorised checks over the cells;
    :math:`10^6` rows read in well under a second.
    """
    if max_bytes is not None:
        max_bytes = check_integer("max_bytes", max_bytes, minimum=1)
    sep = _check_sep(sep)
    if header is not None:
        header = check_flag("header", header)
    keep_na_text = check_flag("keep_na_text", keep_na_text)
    if thousands is not None:
        if not isinstance(thousands, str) or thousands not in _THOUSANDS:
            raise ValueError(f"thousands must be None or one of {', '.join(map(repr, _THOUSANDS))}, got {thousands!r}")
    if encoding is not None:
        if not isinstance(encoding, str):
            raise ValueError(f"encoding must be None (detect) or a codec name such as 'utf-8', got {encoding!r}")
        try:
            codecs.lookup(encoding)
        except LookupError:
            raise ValueError(f"encoding {encoding!r} is not a known text encoding; use e.g. 'utf-8', 'latin-1', "
                             "'cp1252' or 'utf-16', or None to detect it") from None

    name, raw = _open_source(source, max_bytes)
    text, encoding_used, encoding_detected = _decode(raw, name, encoding)
    text, line_endings = _normalise_newlines(text)
    if not text.strip():
        raise ValueError(f"{name} is empty: it has no header row and no data. Provide a CSV file "
                         "whose first line names the columns.")
    notes = []
    excel_sep = re.match(r"sep=(.)\n", text)
    if excel_sep and (excel_sep.group(1) == sep or (sep is None and excel_sep.group(1) in DELIMITERS)):
        # Excel's "sep=;" first line names the separator; it is not part of the table.
        delimiter_detected = sep is None
        sep, text = excel_sep.group(1), "\n" + text[excel_sep.end():]  # a blank line keeps line numbers
        notes.append(f"Field separator: {_NAMES.get(sep, repr(sep))} {sep!r}, named by the file's first line "
                     f"'sep={sep}' (Excel's convention), which was skipped.")
    elif sep is None:
        sep, sniff_note = _sniff_delimiter(text)
        delimiter_detected = True
        notes.append(sniff_note)
    else:
        delimiter_detected = False
        notes.append(f"Field separator: {_NAMES.get(sep, repr(sep))} {sep!r} (given).")
    if thousands is not None and thousands == sep and '"' not in text:
        notes.append(f"The thousands separator {thousands!r} is also the field separator: only quoted numbers "
                     "such as \"1,234\" can contain it.")

    cells = _parse_cells(text, sep, name, delimiter_detected)
    n_records, width = cells.shape
    masks = _cell_masks(cells, thousands, keep_na_text)

    first_row_data = _first_row_looks_like_data(masks)
    first_row = [str(c) for c in masks["text"][0]]
    if header is None:
        use_header = not first_row_data
    else:
        use_header = header
    if use_header and n_records == 1:
        raise ValueError(f"{name} has a header ({_list_names(first_row)}) but no data rows.")
    names, name_notes = _column_names(first_row if use_header else None, width)
    body = slice(1, None) if use_header else slice(0, None)

    columns, readings = {}, []
    for j in range(width):  # loop over the columns only; each step is vectorised over the rows
        values, reading = _read_column({key: m[body, j] for key, m in masks.items()},
                                       names[j], j + 1, thousands, keep_na_text)
        columns[j] = values
        readings.append(reading)
    frame = pd.DataFrame(columns)
    frame.columns = pd.Index(names, dtype=object)
    readings = [replace(r, dtype=str(dtype)) for r, dtype in zip(readings, frame.dtypes)]
    frame.attrs["na_text"] = {r.name: r.n_na_text for r in readings if r.n_na_text}

    encoding_names = {"utf-8": "UTF-8", "utf-8-sig": "UTF-8 with a byte-order mark", "utf-16": "UTF-16 (byte-order mark)",
                      "utf-32": "UTF-32 (byte-order mark)", "utf-16-le": "UTF-16 little-endian without a byte-order mark",
                      "utf-16-be": "UTF-16 big-endian without a byte-order mark",
                      "cp1252": "Windows-1252 (a superset of latin-1; not valid UTF-8)",
                      "latin-1": "latin-1 (ISO-8859-1; not valid UTF-8)"}
    if encoding_detected:
        notes.append(f"Encoding: {encoding_names.get(encoding_used, encoding_used)} (detected; pass encoding if "
                     "accented letters look wrong).")
    else:
        notes.append(f"Encoding: {encoding_used} (given).")
    if header is None and first_row_data:
        shown = ", ".join(map(repr, first_row[:5])) + (", ..." if width > 5 else "")
        notes.insert(0, f"The first row ({shown}) looks like data, not column names: it was read as the first "
                        f"record and the columns are named column_1, column_2, .... If it is a header row, read "
                        f"the file again with header=True.")
    elif header is None:
        notes.append("First row: column names (detected; pass header=False if it is a record).")
    elif header and first_row_data:
        notes.append("First row: column names (given), although it looks like a record.")
    else:
        notes.append("First row: " + ("column names (given)." if header else "a record (given): no header row."))
    if thousands is not None:
        notes.append(f"Thousands separator {thousands!r} removed from numbers grouped by threes (given).")
    if keep_na_text:
        notes.append("Cells such as 'NA' or 'NULL' were kept as text labels (keep_na_text); only empty cells "
                     "are missing.")
    notes.extend(name_notes)
    decisions = ReadDecisions(
        source=name.strip("'") if name.startswith("'") else name, size_bytes=len(raw), encoding=encoding_used,
        encoding_detected=encoding_detected, delimiter=sep, delimiter_detected=delimiter_detected,
        header=bool(use_header), header_guessed=header is None, first_row_looks_like_data=bool(first_row_data),
        thousands=thousands, keep_na_text=keep_na_text, line_endings=line_endings, n_rows=int(len(frame)),
        n_columns=int(width), columns=tuple(readings), notes=tuple(notes))
    return ReadResult(frame=frame, decisions=decisions)


def read_csv(source, *, max_bytes: int | None = DEFAULT_MAX_BYTES, sep: str | None = None,
             header: bool | None = None, encoding: str | None = None, thousands: str | None = None,
             keep_na_text: bool = False) -> pd.DataFrame:
    """Read a CSV file into a DataFrame: ``read_table(...).frame``.

    Same parameters, defaults and errors as :func:`read_table` (the delimiter, header
    and encoding are detected unless given); use :func:`read_table` to also get the
    record of what was detected.
    """
    return read_table(source, max_bytes=max_bytes, sep=sep, header=header, encoding=encoding, thousands=thousands,
                      keep_na_text=keep_na_text).frame


def _check_sep(sep):
    if sep is None:
        return None
    if not isinstance(sep, str) or len(sep) != 1 or sep in "\"\r\n" or sep.isalnum():
        raise ValueError(f"sep must be None (detect) or one character that is not a quote, a newline, a letter "
                         f"or a digit (e.g. ',', ';', '\\t', '|'), got {sep!r}")
    return sep


def _open_source(source, max_bytes: int | None) -> tuple[str, bytes]:
    """Return a display name and the bytes of the file, after the size check."""
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if not path.is_file():
            raise ValueError(f"cannot read {str(path)!r}: no such file")
        _check_size(repr(path.name), path.stat().st_size, max_bytes)
        return repr(path.name), path.read_bytes()
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
        _check_size("the uploaded data", len(data), max_bytes)
        return "the uploaded data", data
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
        return name, bytes(data)
    raise ValueError(f"source must be a path, bytes or a file-like object with read(), got {type(source).__name__}")


def _check_size(name: str, size: int, max_bytes: int | None, *, at_least: bool = False) -> None:
    if max_bytes is not None and size > max_bytes:
        more = "more than " if at_least else ""
        raise ValueError(f"{name} is {more}{size / 2**20:.1f} MiB, above the limit of {max_bytes / 2**20:.1f} MiB "
                         f"(max_bytes={max_bytes}). Keep only the columns you need, or use the command line "
                         "(python -m core release), which has no size limit.")


def _decode(raw: bytes, name: str, encoding: str | None) -> tuple[str, str, bool]:
    """Text of the file, the codec used and whether it was detected."""
    if encoding is not None:
        try:
            text = raw.decode(encoding)
        except UnicodeDecodeError as exc:
            raise ValueError(f"{name} is not {encoding} text: byte {exc.start} (0x{raw[exc.start]:02x}) cannot be "
                             "decoded. Pass the file's encoding, or None to detect it.") from None
        return text.removeprefix("\ufeff"), encoding, False
    for signature, what, todo in _SIGNATURES:
        if raw.startswith(signature):
            raise ValueError(f"{name} is {what}, not a CSV text file: {todo}.")
    for bom, codec in _BOMS:
        if raw.startswith(bom):
            try:
                text = raw.decode(codec)
            except UnicodeDecodeError as exc:
                raise ValueError(f"{name} starts with a {codec.upper()} byte-order mark but byte {exc.start} cannot "
                                 "be decoded: the file is damaged, or not text.") from None
            return text.removeprefix("\ufeff"), codec, True
    head = raw[:4096]
    if b"\x00" in head:
        # UTF-16 without a byte-order mark: the high byte of ASCII characters is zero.
        even, odd = head[0::2].count(0), head[1::2].count(0)
        codec = ("utf-16-le" if odd > 0.4 * len(head[1::2]) and even == 0 else
                 "utf-16-be" if even > 0.4 * len(head[0::2]) and odd == 0 else None)
        if codec is not None:
            try:
                return raw.decode(codec), codec, True
            except UnicodeDecodeError:
                pass
        raise ValueError(f"{name} is not a text file (it contains a NUL byte at byte {raw.index(0)}): is it a "
                         "spreadsheet, a compressed file or another binary file renamed .csv? Export the table "
                         "as 'CSV UTF-8'.")
    try:
        return raw.decode("utf-8"), "utf-8", True
    except UnicodeDecodeError as exc:
        first_bad = exc.start
    controls = sum(head.count(bytes([b])) for b in range(32) if b not in (9, 10, 13)) + head.count(b"\x7f")
    if controls > 0.01 * len(head):
        raise ValueError(f"{name} is not a text file ({controls} control bytes in its first {len(head)} bytes, "
                         f"and byte {first_bad} is not UTF-8): is it a binary file renamed .csv? Export the table "
                         "as 'CSV UTF-8'.")
    # Every byte is a latin-1 character; bytes 0x80-0x9f are control codes in latin-1 but
    # letters and signs (€, curly quotes) in Windows-1252, which spreadsheets write.
    if any(0x80 <= b <= 0x9F for b in raw):
        try:
            return raw.decode("cp1252"), "cp1252", True
        except UnicodeDecodeError:
            pass
    return raw.decode("latin-1"), "latin-1", True


def _normalise_newlines(text: str) -> tuple[str, str]:
    """Text with ``\\n`` line endings, and which endings the file had."""
    if "\r" not in text:
        return text, ("LF" if "\n" in text else "none")
    crlf = text.count("\r\n")
    cr, lf = text.count("\r") - crlf, text.count("\n") - crlf
    kinds = [k for k, c in (("CRLF", crlf), ("CR", cr), ("LF", lf)) if c]
    return text.replace("\r\n", "\n").replace("\r", "\n"), (kinds[0] if len(kinds) == 1 else "mixed")


def _sniff_delimiter(text: str) -> tuple[str, str]:
    """The separator that splits the first records into a constant number (≥ 2) of fields."""
    sample = text[:_SNIFF_CHARS]
    truncated = len(text) > len(sample)
    scores, n_records = {}, {}
    for delim in DELIMITERS:
        if delim not in sample:
            continue
        counts = [len(r) for r in itertools.islice(csv.reader(io.StringIO(sample), delimiter=delim), _SNIFF_RECORDS)
                  if r and not (len(r) == 1 and not r[0].strip())]
        if truncated and len(counts) > 1:
            counts = counts[:-1]  # the sample may cut the last record
        if not counts:
            continue
        mode = Counter(counts).most_common(1)[0][0]
        if mode < 2:
            continue
        consistency = counts.count(mode) / len(counts)
        scores[delim] = (consistency, mode)
        n_records[delim] = len(counts)
    if not scores:
        return ",", ("Field separator: none of comma, semicolon, tab or pipe splits the lines, so the file has "
                     "one column (pass sep if that is wrong).")
    best = max(scores, key=lambda d: (scores[d][0], -DELIMITERS.index(d)))
    consistency, mode = scores[best]
    note = (f"Field separator: {_NAMES[best]} {best!r} (detected: it splits "
            + ("each of" if consistency == 1 else f"{consistency:.0%} of") + f" the first {n_records[best]} "
            f"records into {mode} fields; pass sep to override).")
    rivals = [d for d in scores if d != best and scores[d][0] == consistency]
    if rivals:
        note += (" " + " and ".join(f"{_NAMES[d]} {d!r}" for d in rivals)
                 + " would split them as consistently: check the columns.")
    return best, note


def _field_counts(text: str, sep: str, slow: bool = False) -> tuple[np.ndarray, np.ndarray | None]:
    """Number of fields and first line (1-based) of every record, blank lines skipped.

    With quotes and rows all alike the line numbers are not computed (``None``)
    unless ``slow``.

    Without quotes a record is a line and the count is vectorised over the bytes;
    with quotes Python's csv module follows quoted separators and newlines. Lines that
    are empty or only spaces are skipped, as the pandas parser skips them.
    """
    if '"' not in text and sep.isascii():
        data = np.frombuffer(text.encode("utf-8"), dtype=np.uint8)
        newlines = np.flatnonzero(data == 10)
        starts = np.concatenate(([0], newlines + 1))
        ends = np.concatenate((newlines, [data.size]))
        counts = np.bincount(np.searchsorted(newlines, np.flatnonzero(data == ord(sep))),
                             minlength=starts.size) + 1
        keep = ends > starts
        for i in np.flatnonzero(keep & (data[np.minimum(starts, data.size - 1)] == 32)):  # lines starting with a space
            keep[i] = bool((data[starts[i]:ends[i]] != 32).any())
        return counts[keep], np.flatnonzero(keep) + 1
    if not slow:
        counts = np.fromiter(map(len, csv.reader(io.StringIO(text), delimiter=sep)), dtype=np.int64)
        counts = counts[counts > 0]  # blank lines
        if counts.size and counts[0] > 1 and np.all(counts == counts[0]):
            return counts, None  # line numbers are only needed to report a problem
    counts, lines, previous = [], [], 0
    reader = csv.reader(io.StringIO(text), delimiter=sep)
    physical = None
    for record in reader:
        if record and len(record) == 1 and not record[0].strip(" "):
            # Blank only if the line itself is spaces: '""' is a record with one empty field.
            physical = text.split("\n") if physical is None else physical
            if not physical[previous].strip(" "):
                previous = reader.line_num
                continue
        if record:
            counts.append(len(record))
            lines.append(previous + 1)
        previous = reader.line_num
    return np.asarray(counts, dtype=np.int64), np.asarray(lines, dtype=np.int64)


def _ragged_message(name: str, counts: np.ndarray, lines: np.ndarray, text: str, sep: str,
                    sep_detected: bool) -> str | None:
    bad = np.flatnonzero(counts != counts[0])
    if not bad.size:
        return None
    i = int(bad[0])
    width, got = int(counts[0]), int(counts[i])
    line_text = text.split("\n", int(lines[i]))[int(lines[i]) - 1] if lines[i] < 10**6 else ""
    more = bad.size - 1
    hint = ""
    if got == width + 1 and line_text.rstrip(" ").endswith(sep):
        hint = f" It ends with a trailing {_NAMES.get(sep, repr(sep))}: remove it, or add a name for the extra column."
    elif got > width:
        hint = f" Quote fields that contain {sep!r}."
    how = "detected" if sep_detected else "given"
    return (f"{name} has rows of different lengths: line {int(lines[i])} has {got} field(s) but line {int(lines[0])} "
            f"(the first row) has {width}" + (f"; {more} more row(s) differ" if more else "") + "."
            + hint + f" The field separator is {_NAMES.get(sep, repr(sep))} {sep!r} ({how}); pass sep if it is wrong.")


def _parse_cells(text: str, sep: str, name: str, sep_detected: bool) -> pd.DataFrame:
    """Every record as a row of strings (pandas ``str`` columns); ragged rows refused.

    Blank lines separate nothing in a file of several columns and are skipped; in a
    one-column file an empty line *is* an empty cell (as spreadsheets and pandas write
    a missing value), so it is kept as a missing cell — only blank lines before the
    first and after the last record are dropped. Skipping them would silently drop
    records and change n.
    """
    counts, lines = _field_counts(text, sep)
    if counts.size == 0:
        raise ValueError(f"{name} is empty: it has no header row and no data.")
    one_column = int(counts[0]) == 1 and (lines is None or np.all(counts == 1))
    problem = None
    try:
        # Arrow strings are fast per column but slow to build for thousands of columns.
        raw = pd.read_csv(io.StringIO(text), sep=sep, header=None, dtype=str if counts[0] <= 64 else object,
                          na_filter=False,
                          keep_default_na=False, skip_blank_lines=not one_column, quotechar='"', engine="c",
                          index_col=False)
    except pd.errors.ParserError as exc:
        problem = str(exc).strip().replace("Error tokenizing data. C error: ", "")
    except pd.errors.EmptyDataError:
        raise ValueError(f"{name} is empty: it has no header row and no data.") from None
    if lines is None and problem is not None:
        counts, lines = _field_counts(text, sep, slow=True)
    if problem is not None and "EOF inside string" in problem:
        raise ValueError(f"{name} is not a valid CSV file: a quote opened on line {int(lines[-1])} is never "
                         "closed. Close the quote, or double a quote inside a field (\"\").")
    message = None if lines is None else _ragged_message(name, counts, lines, text, sep, sep_detected)
    if message:
        raise ValueError(message)
    if problem is not None:
        raise ValueError(f"{name} is not a valid CSV file: {problem}. Check that every row has as many fields as "
                         "the first and that every quote is closed.")
    cells = raw.fillna("")
    if one_column:
        filled = np.flatnonzero(cells[cells.columns[0]].str.strip().to_numpy(dtype=object) != "")
        if filled.size:
            cells = cells.iloc[int(filled[0]):int(filled[-1]) + 1].reset_index(drop=True)
        else:  # only empty cells ('""'): as many records as the lines hold
            cells = cells.iloc[:counts.size].reset_index(drop=True)
        if cells.shape[1] == 1 and len(cells) >= counts.size:
            return cells
    if cells.shape != (counts.size, int(counts[0])):
        raise ValueError(f"{name} could not be read consistently: {cells.shape[0]} records of {cells.shape[1]} "
                         f"fields, but the lines hold {counts.size} records of {int(counts[0])}. Check the quotes "
                         "(a quote inside a field is written \"\").")
    return cells


def _cell_masks(cells: pd.DataFrame, thousands: str | None, keep_na_text: bool) -> dict:
    """Vectorised facts about every cell, each an ``(n_records, width)`` numpy array.

    ``text``: the trimmed cell; ``numeric_text``: trimmed, thousands separators removed
    where asked; ``value``: its float parse (NaN where it is not a number); booleans
    ``missing``, ``na_text``, ``number``, ``integer`` (a whole number written without
    point or exponent), ``leading_zero``, ``boolean``, ``spaces`` (trimmed) and the
    hints ``grouped`` (looks like 1,234), ``currency``, ``date``. The string tests run
    in pandas' Arrow-backed string methods, and the costly ones only on the cells
    they concern (e.g. the date pattern only on cells that are not numbers).
    """
    shape = cells.shape
    if shape[1] == 1:
        flat = cells[cells.columns[0]].astype(str).reset_index(drop=True)
    else:  # column after column, as one contiguous string array (many small chunks are slow)
        flat = pd.Series(cells.to_numpy(dtype=object).ravel(order="F"), dtype=str)
    text = flat.str.strip()
    na_text = text.isin(NA_TEXT) if not keep_na_text else pd.Series(False, index=flat.index)
    missing = (text == "") | na_text
    numeric_text = text
    if thousands is not None:
        sep = re.escape(thousands)
        decimals = r"(\.[0-9]*)?" if thousands != "." else ""
        grouped = text.str.fullmatch(rf"[+-]?[0-9]{{1,3}}({sep}[0-9]{{3}})+{decimals}")
        numeric_text = text.where(~grouped, text.str.replace(thousands, "", regex=False))
    numeric_object = numeric_text.to_numpy(dtype=object)
    # Parse only what looks like a number (to_numeric is slow on text it must reject).
    candidate = numeric_text.str.fullmatch(_NUMBER_PATTERN).to_numpy(dtype=bool, na_value=False)
    candidate = candidate & ~missing.to_numpy()
    value = np.full(flat.size, np.nan)
    if candidate.any():
        value[candidate] = pd.to_numeric(pd.Series(numeric_object[candidate], dtype=object),
                                         errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    number = ~np.isnan(value) & candidate

    def where(mask, pattern, series=text, match=False):
        """``series`` matches ``pattern`` (fullmatch, or match at the start), tested only where ``mask``."""
        out = np.zeros(series.size, dtype=bool)
        if mask.any():
            subset = series[mask]
            found = subset.str.match(pattern) if match else subset.str.fullmatch(pattern)
            out[mask] = found.to_numpy(dtype=bool, na_value=False)
        return out

    not_number = ~number & ~missing.to_numpy()
    with_digit = not_number & text.str.contains("[0-9]").to_numpy(dtype=bool, na_value=False)

    def grid(array):
        return np.asarray(array).reshape(shape, order="F")

    return {
        "text": grid(text.to_numpy(dtype=object)), "numeric_text": grid(numeric_object), "value": grid(value),
        "missing": grid(missing.to_numpy(dtype=bool)), "na_text": grid(na_text.to_numpy(dtype=bool)),
        "number": grid(number), "integer": grid(where(number, _INT_PATTERN, numeric_text)),
        "leading_zero": grid(where(number, r"[+-]?0[0-9]", numeric_text, match=True)),
        "boolean": grid(where(not_number, "(?i)true|false")),
        "spaces": grid((text != flat).to_numpy(dtype=bool)),
        "grouped": grid(where(with_digit, r"[+-]?[0-9]{1,3}([,.' \u00a0][0-9]{3})+(\.[0-9]+)?")),
        "currency": grid(where(with_digit, r"[-+]?[$€£¥]\s?[0-9][0-9,.]*|[-+]?[0-9][0-9,.]*\s?[$€£¥%]")),
        "date": grid(where(with_digit,
                           r"[0-9]{4}-[0-9]{2}-[0-9]{2}([ T][0-9:.]+)?|[0-9]{1,2}[/.][0-9]{1,2}[/.][0-9]{2,4}")),
    }


def _first_row_looks_like_data(masks: dict) -> bool:
    """Whether the first row is a record rather than column names (see :func:`read_table`)."""
    number, boolean, missing, text = masks["number"], masks["boolean"], masks["missing"], masks["text"]
    first_cells = ~missing[0]
    if number.shape[0] == 1:  # nothing to compare with: a row of numbers is data, names are text
        return bool(first_cells.any() and np.all(number[0] | boolean[0] | missing[0]))
    rest = ~missing[1:]
    present = rest.sum(axis=0)
    mostly_numbers = (number[1:] & rest).sum(axis=0) * 2 >= present
    all_booleans = (boolean[1:] | ~rest).all(axis=0)
    has_rest = present > 0
    numeric_col, bool_col = has_rest & mostly_numbers, has_rest & all_booleans & ~mostly_numbers
    # Votes for a header: a cell that is not a number over a column of numbers (or booleans).
    header_votes = first_cells & ((numeric_col & ~number[0]) | (bool_col & ~boolean[0]))
    if header_votes.any():
        return False
    data_votes = first_cells & ((numeric_col & number[0]) | (bool_col & boolean[0]))
    if data_votes.any():
        return True
    # Text columns only: a first-row label repeated further down the column is a record.
    text_cols = np.flatnonzero(first_cells & has_rest & ~numeric_col & ~bool_col)
    if text_cols.size:
        repeated = (text[1:, text_cols] == text[0, text_cols][None, :]) & rest[:, text_cols]
        return bool(repeated.any(axis=0).any())
    return False


def _column_names(first_row, width: int) -> tuple[list[str], list[str]]:
    """Names from the header row (empty ones filled, repeats renamed), or column_1..."""
    if first_row is None:
        return [f"column_{j + 1}" for j in range(width)], []
    names = [str(c).strip() for c in first_row]
    notes = []
    empty = [j for j, c in enumerate(names) if not c]
    for j in empty:
        names[j] = f"column_{j + 1}"
    if empty:
        notes.append(f"{len(empty)} column(s) without a name in the header were named "
                     + _list_names([names[j] for j in empty], 5) + ".")
    seen, renamed = set(names), []
    counts = Counter(names)
    occurrence = Counter()
    for j, c in enumerate(names):
        if counts[c] > 1:
            occurrence[c] += 1
            if occurrence[c] > 1:
                k = occurrence[c] - 1
                while f"{c}.{k}" in seen:
                    k += 1
                names[j] = f"{c}.{k}"
                seen.add(names[j])
                renamed.append((c, names[j]))
    if renamed:
        notes.append(f"{len(renamed)} repeated column name(s) in the header were renamed: "
                     + ", ".join(f"{a!r} -> {b!r}" for a, b in renamed[:5]) + (", ..." if len(renamed) > 5 else "")
                     + ".")
    return names, notes


def _read_column(masks: dict, name: str, position: int, thousands: str | None,
                 keep_na_text: bool, weights: np.ndarray | None = None) -> tuple[np.ndarray, ColumnReading]:
    """One column's values (exact integers, floats, booleans or trimmed text) and its reading.

    Only numpy on the precomputed masks: a file with 10 000 columns stays fast. With
    ``weights`` the cells are the distinct cells of a column (:func:`aggregate`), each
    standing for ``weights[i]`` cells: the counts in the reading are weighted, and the
    decisions (which depend only on which kinds of cell occur) are those of the rows.
    """
    def total(mask) -> int:
        return int(mask.sum()) if weights is None else int(weights[mask].sum())

    missing = masks["missing"]
    present = ~missing
    n_present = total(present)
    n_missing = total(missing)
    n_na_text = total(masks["na_text"])
    n_numeric = total(masks["number"])
    text = masks["text"]
    notes = []
    spaces = total(masks["spaces"] & present)
    if spaces:
        notes.append(f"{spaces} cell(s) had leading or trailing spaces, removed.")
    if n_na_text:
        notes.append(f"{n_na_text} cell(s) spelled like 'NA' (e.g. {text[masks['na_text']][0]!r}) were read as "
                     "missing; if that is a real category label, read with keep_na_text=True.")
    if n_present == 0:
        kind = "empty"
    elif n_numeric == n_present:
        kind = "integer" if total(masks["integer"]) == n_present else "float"
        if kind == "integer" and masks["leading_zero"].any():
            kind = "text"
            notes.append(f"{total(masks['leading_zero'])} integer(s) are written with leading zeros (e.g. "
                         f"{text[masks['leading_zero']][0]!r}), as codes are: the column is kept as text so that "
                         "they stay as written.")
    elif masks["boolean"][present].all():
        kind = "boolean"
    else:
        kind = "text"

    n_infinite = 0
    if kind == "integer":
        values = _exact_integer_column(masks["numeric_text"], masks["value"], present)
    elif kind == "float":
        values = np.where(present, masks["value"], np.nan)
        infinite = np.isinf(values)
        n_infinite = total(infinite)
        if n_infinite:
            overflow = [t for t in text[infinite] if "inf" not in t.lower()]
            notes.append(f"{n_infinite} cell(s) are infinite"
                         + (f" ({len(overflow)} of them numbers beyond ±1.797e308, the float64 range, e.g. "
                            f"{overflow[0]!r})" if overflow else "")
                         + ": a numeric column cannot be released with them.")
    elif kind == "boolean":
        is_true = np.asarray([t.lower() == "true" if isinstance(t, str) else False for t in text])
        values = is_true if n_missing == 0 else np.where(present, is_true.astype(object), np.nan)
    else:
        values = np.where(present, text, np.nan).astype(object)
        if kind == "text":
            notes.extend(_text_column_hints(masks, present, n_present, n_numeric, thousands, total))
    reading = ColumnReading(name=name, position=position, kind=kind, dtype=str(values.dtype), n_missing=n_missing,
                            n_na_text=n_na_text, n_infinite=n_infinite, n_numeric=n_numeric, notes=tuple(notes))
    return values, reading


def _exact_integer_column(numeric_text: np.ndarray, value: np.ndarray, present: np.ndarray) -> np.ndarray:
    """Whole numbers exactly: int64 when they fit (and nothing is missing), else Python ints.

    The float parse is exact below 2**53; beyond it the digits are parsed again as
    Python integers so that, e.g., 2**53 and 2**53 + 1 stay distinct.
    """
    small = np.abs(np.where(present, value, 0.0)) < _EXACT_FLOAT_INT
    if small.all():
        if present.all():
            return value.astype(np.int64)
        out = np.where(present, value, np.nan)
        return out  # float64 holds these integers exactly; NaN marks the missing cells
    out = np.empty(value.size, dtype=object)
    out[:] = np.nan
    for i in np.flatnonzero(present):  # rare path: integers beyond 2**53 are parsed from their digits
        out[i] = int(numeric_text[i])
    if present.all():
        as_ints = out.tolist()
        if min(as_ints) >= -(2**63) and max(as_ints) < 2**63:
            return np.asarray(as_ints, dtype=np.int64)
    return out


def _text_column_hints(masks: dict, present: np.ndarray, n_present: int, n_numeric: int,
                       thousands: str | None, total=lambda mask: int(mask.sum())) -> list[str]:
    """Why a column of mostly numbers was read as text, and what its cells look like."""
    hints = []
    bad = masks["text"][present & ~masks["number"]]
    if n_numeric and n_numeric * 2 >= n_present and bad.size:
        hints.append(f"{n_numeric} of {n_present} cells are numbers; {total(present & ~masks['number'])} are not (e.g. {bad[0]!r}): the "
                     "column is kept as text, and releasing it as numeric names those cells.")
    if thousands is None and masks["grouped"].any():
        hints.append("Some cells look like numbers with thousands separators (e.g. "
                     f"{masks['text'][masks['grouped']][0]!r}): read with thousands=',' (or the separator used) "
                     "to read them as numbers.")
    if total(masks["currency"]) * 2 > n_present:
        hints.append("The cells look like amounts with a currency or percent sign: remove the signs to release "
                     "the column as numbers.")
    if total(masks["date"]) * 2 > n_present:
        hints.append("The cells look like dates: they are read as text labels (release the column as categorical, "
                     "or convert the dates to numbers first).")
    return hints


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
                                                            positive=bool(self.log), keep_integers=True))
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


def frequency_table(values, counts=None) -> FrequencyTable:
    """Reduce values to distinct values and multiplicities (SPEC §1).

    Parameters
    ----------
    values : array_like, shape (n,) or (n, d)
        Numbers or labels (object arrays may mix types); for ``d`` columns a row is one
        atom (ties are whole-row ties, SPEC §2). Missing values are rejected.
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
        _reject_missing(arr)
        if weights is None:
            atoms, counts = np.unique(arr, return_counts=True)
            return FrequencyTable(atoms, counts)
        atoms, inverse = np.unique(arr, return_inverse=True)
        return FrequencyTable(atoms, _summed(inverse.reshape(-1), weights, atoms.size))
    columns = [arr] if arr.ndim == 1 else [arr[:, j] for j in range(arr.shape[1])]
    key = _column_codes(columns[0])
    for column in columns[1:]:
        codes = _column_codes(column)
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
    # Whole numbers beyond 2**53 prepared in exact arithmetic (see _prepare_exact_integers).
    _exact_integers: bool = field(default=False, repr=False)
    # The column held whole numbers (int64): values that are all whole map back as int64.
    _integer_column: bool = field(default=False, repr=False)

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
        return (math.log(lo), math.log(hi)) if self.spec.log else (float(lo), float(hi))

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
        if self._exact_integers:
            return self._inverse_exact(t)
        tlo, thi = self.transformed_bounds()
        if not self.spec.scale:
            u = t
        elif np.isfinite(thi - tlo):
            u = tlo + t * (thi - tlo)
        else:  # bounds wider than the float range, e.g. (-1e308, 1e308): lo < 0 < hi, no overflow
            u = (1.0 - t) * tlo + t * thi
        x = np.exp(u) if self.spec.log else u
        if self.spec.decimals is not None:
            x = np.round(x, self.spec.decimals)
        x = np.clip(x, *self.bounds)
        table = self._lookup_transformed
        if table is not None and table.size and t.size:
            pos = np.minimum(np.searchsorted(table, t), table.size - 1)
            hit = table[pos] == t
            x = np.where(hit, self._lookup_original[pos], x)
        whole = self.spec.decimals is not None and self.spec.decimals <= 0
        if self._integer_column and not whole:  # e.g. a release of old values only
            whole = bool(np.all(x == np.round(x)))
        if whole and np.all(np.abs(x) < 2.0**53):
            x = x.astype(np.int64)
        return x

    def _inverse_exact(self, t: np.ndarray) -> np.ndarray:
        """:meth:`inverse` for whole numbers beyond 2**53, in exact arithmetic.

        Old values come back exactly from the lookup table. A new value is
        ``lo + t (hi - lo)`` computed as a fraction and rounded half-to-even to a whole
        number (float64 has no fractional digits at this magnitude anyway), then to
        ``decimals`` and clipped to the bounds. ``int64`` when every value fits, else
        Python ints (``object``).
        """
        lo, hi = self.bounds
        table = self._lookup_transformed
        pos = np.minimum(np.searchsorted(table, t), table.size - 1)
        hit = table[pos] == t
        out = np.empty(t.size, dtype=object)
        out[hit] = self._lookup_original[pos[hit]]
        new = np.flatnonzero(~hit)
        if new.size:  # only the new values (data-independent post-processing) take this loop
            if self.spec.log:
                tlo, thi = self.transformed_bounds()
                u = tlo + t[new] * (thi - tlo) if self.spec.scale else t[new]
                values = [round(Fraction(math.exp(v))) for v in u]
            elif self.spec.scale:
                flo, span = Fraction(lo), Fraction(hi) - Fraction(lo)
                values = [round(flo + Fraction(float(v)) * span) for v in t[new]]
            else:
                values = [round(Fraction(float(v))) for v in t[new]]
            values = _round_integers(values, self.spec.decimals)
            out[new] = [lo if v < lo else hi if v > hi else v for v in values]
        items = out.tolist()
        if all(type(v) is int and -(2**63) <= v < 2**63 for v in items):
            return np.asarray(items, dtype=np.int64)
        return out


@dataclass(frozen=True, eq=False)
class PreparedData:
    """Confidential data ready for :func:`core.mechanisms.pypp_release`.

    Attributes
    ----------
    table : FrequencyTable
        ``frequency_table(values)``: the atoms and multiplicities the mechanism and the
        accounting use (SPEC §1; after rounding and clipping, so ties created by them
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
    specs = _normalise_specs(specs)
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
    n_records = len(frame) if weights is None else int(weights.sum())
    if n_records < 2:
        unit = "row(s)" if weights is None else "record(s) (the sum of the counts)"
        raise ValueError(f"the data have {n_records} {unit}; the mechanism needs at least 2 records")

    token = _TABLE_ENTRIES.set(weights is not None)
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
            prepared.append(column)
            transformed.append(values)
    finally:
        _TABLE_ENTRIES.reset(token)

    if len(transformed) == 1:
        values = transformed[0]
    elif all(s.kind == "numeric" for s in specs):
        values = np.column_stack(transformed)
    else:
        values = np.empty((len(frame), len(specs)), dtype=object)
        for j, column_values in enumerate(transformed):
            values[:, j] = column_values
    if weights is not None:
        return PreparedData(table=frequency_table(values, weights), column_info=tuple(prepared))
    return PreparedData(table=frequency_table(values), column_info=tuple(prepared), row_values=values)


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


def _numeric_values(series: pd.Series, name: str, na_text: int = 0,
                    weights: np.ndarray | None = None) -> np.ndarray:
    """The column as numbers: ``float64``, or exact integers (``int64`` / Python ``int``
    objects) when every value is a whole number and some is beyond :math:`2^{53}`.

    Raises ValueError naming the rows of non-numeric, missing or infinite cells.
    """
    if series.dtype.kind == "b":
        return series.to_numpy(dtype=float)
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
                         f"{_rows(nan)}{_row_note()}. Remove or impute them "
                         "before releasing." + hint)
    infinite = np.flatnonzero(np.isinf(x))
    if infinite.size:
        raise ValueError(f"column {name!r} has {_records(infinite, weights)} infinite value(s) at {_rows(infinite)}: 'inf', or "
                         "numbers beyond ±1.797e308 (the float64 range). Replace them with finite numbers.")
    return x


def _all_integer_text(raw: np.ndarray) -> bool:
    """Every cell is a string spelling a whole number (no point, no exponent)."""
    return bool(len(raw)) and all(isinstance(v, str) for v in raw) and \
        bool(pd.Series(raw, dtype=object).str.strip().str.fullmatch(_INT_PATTERN).all())


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
    name = spec.name
    x = _numeric_values(series, name, na_text, weights)
    if x.dtype == object or (x.dtype.kind == "i" and np.abs(x).max(initial=0) >= _EXACT_FLOAT_INT):
        return _prepare_exact_integers(x, spec, weights)
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
    lookup_t, first = np.unique(t, return_index=True)
    _check_distinct_kept(name, np.unique(x).size, lookup_t.size, (lo, hi), spec)
    column = PreparedColumn(spec=spec, bounds=(lo, hi), bounds_from_data=from_data, n_clipped=n_clipped,
                            base=base, _lookup_transformed=lookup_t, _lookup_original=x[first],
                            _integer_column=integer_column)
    return column, t


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
                            _exact_integers=True)
    return column, t


def _prepare_categorical(series: pd.Series, spec: ColumnSpec, na_text: int = 0,
                         weights: np.ndarray | None = None) -> tuple[PreparedColumn, np.ndarray]:
    name = spec.name
    missing = np.flatnonzero(series.isna().to_numpy())
    if missing.size:
        hint = (f" {na_text} of them were cells spelled like 'NA': if 'NA' is a real category label, read the "
                "file with keep_na_text=True to keep it." if na_text else "")
        raise ValueError(f"column {name!r} has {_records(missing, weights)} missing value(s) (empty or NaN) at "
                         f"{_rows(missing)}{_row_note()}. Remove them, or "
                         "replace them with an explicit label such as 'missing'." + hint)
    values = series.to_numpy(dtype=object)
    if spec.categories is not None:
        unknown = np.flatnonzero(~series.isin(spec.categories).to_numpy())
        if unknown.size:
            raise ValueError(f"column {name!r} has {_records(unknown, weights)} value(s) outside its public category list, "
                             f"e.g. {values[unknown[0]]!r} at {_rows(unknown)}; add them to the list")
    column = PreparedColumn(spec=spec, bounds=None, bounds_from_data=False, n_clipped=0,
                            base=CategoricalBase(spec.categories))
    return column, values


#: Set while :func:`prepare` works on a frequency table (``counts`` given): its entries are
#: distinct values, not rows of a file, and the messages say so.
_TABLE_ENTRIES = contextvars.ContextVar("table_entries", default=False)


def _records(positions: np.ndarray, weights: np.ndarray | None) -> int:
    """How many records the rows at ``positions`` stand for."""
    return int(positions.size) if weights is None else int(weights[positions].sum())


def _row_note() -> str:
    return "" if _TABLE_ENTRIES.get() else " (rows counted from 1 after the header)"


def _rows(positions: np.ndarray) -> str:
    """'row 3' or 'rows 3, 8, 10, 11, 12 and 4 more': 1-based row numbers for messages
    (``'2 distinct value(s) of the frequency table'`` when preparing a table)."""
    if _TABLE_ENTRIES.get():
        return f"{positions.size} distinct value(s) of the frequency table"
    shown = ", ".join(str(int(p) + 1) for p in positions[:_SHOW])
    if positions.size > _SHOW:
        shown += f" and {positions.size - _SHOW} more"
    return f"row {shown}" if positions.size == 1 else f"rows {shown}"


def _list_names(names: Sequence, limit: int = 20) -> str:
    names = [repr(n) for n in names]
    text = ", ".join(names[:limit])
    return text + (f", ... ({len(names) - limit} more)" if len(names) > limit else "")


# --------------------------------------------------------------------------- aggregation (issue 13)
#
# The mechanism needs only the frequency table of the released columns, so a file of
# 10^8 rows is an aggregation problem. An engine streams the file and returns the
# *distinct raw cells* of the chosen columns with their counts; everything after that —
# how a cell is read (trimmed, 'NA', exact integers, kinds), the transforms and the
# frequency table — is the code above, run on the k distinct cells with their counts as
# weights (read_table's _cell_masks/_read_column, then prepare(..., counts=...)). One
# code path for the semantics: the engines differ only in how they count.

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
_DUCKDB_ENCODINGS = {"utf-8": "utf-8", "utf-8-sig": "utf-8", "latin-1": "latin-1", "utf-16": "utf-16"}
_EXTRA = "__extra_field"


@dataclass(frozen=True, eq=False)
class Aggregated:
    """The frequency table of a file (or files) and how it was read: :func:`aggregate`.

    Attributes
    ----------
    prepared : PreparedData
        Prepared from the table (``prepared.from_table``): the transforms applied to the
        distinct values, the atoms and counts of SPEC §1.
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
              file_format: str | None = None, coarsening=()) -> Aggregated:
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
    coarsening : sequence of core.coarsening.ColumnTransform
        Applied to the distinct values (weighted by their counts) before ``specs``, as
        :func:`core.coarsening.apply_coarsening` applies it to rows (the recipe's
        ``coarsening``); default none.

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
    specs = _normalise_specs(specs)
    values = distinct_values(source, [s.name for s in specs], engine=engine, counts_column=counts_column, sep=sep,
                             header=header, encoding=encoding, thousands=thousands, keep_na_text=keep_na_text,
                             scheduler=scheduler, file_format=file_format)
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
        specs = _normalise_specs(specs)
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
            from .coarsening import apply_coarsening  # coarsening imports privacy; keep this module light

            frame = apply_coarsening(frame, coarsening, counts=self.counts)
        prepared = prepare(frame, specs, counts=self.counts)
        return Aggregated(prepared=prepared, decisions=self.decisions, engine=self.engine,
                          file_format=self.file_format, files=self.files, counts_column=self.counts_column,
                          notes=self.notes)


def distinct_values(source, columns, *, engine: str = "duckdb", counts_column: str | None = None,
                    sep: str | None = None, header: bool | None = None, encoding: str | None = None,
                    thousands: str | None = None, keep_na_text: bool = False, scheduler: str | None = None,
                    file_format: str | None = None) -> DistinctValues:
    """The distinct values of ``columns`` of a CSV or Parquet input and their counts, streaming.

    The first step of :func:`aggregate` (which takes the same source and options; see
    there), without transforms: ``distinct_values(...).aggregated(specs)`` is
    ``aggregate(..., specs)`` for any specs on these columns.

    Parameters
    ----------
    columns : str or sequence of str
        The column names to read (non-empty, no repeats, not the counts column).

    Returns
    -------
    DistinctValues
    """
    engine = check_choice("engine", engine, ENGINES)
    if file_format is not None:
        file_format = check_choice("file_format", file_format, FORMATS)
    if scheduler is not None and (engine != "dask" or not isinstance(scheduler, str) or not scheduler.strip()):
        raise ValueError(f"scheduler (the address of a Dask scheduler, e.g. 'tcp://10.0.0.5:8786') needs "
                         f"engine='dask' and a non-empty string, got engine={engine!r}, scheduler={scheduler!r}")
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
    inputs = _resolve_inputs(source)
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
        frame, counts = _parquet_cells(inputs, wanted, engine, scheduler)
    elif engine == "pandas":
        frame, decisions = _pandas_csv(inputs, wanted, options)
        counts = np.ones(len(frame), dtype=np.int64)
    else:
        head = _csv_decisions(inputs[0], options)
        decisions = head.decisions
        head_only = len(inputs) > 1 or _text_bytes(inputs[0], HEAD_BYTES)[1]
        if not head_only:
            rows = head.frame
            if counts_column is not None and counts_column in rows.columns:
                _counts_from_column(rows[counts_column], counts_column)  # named by row, as prepare would
        cells, counts, more_notes = _csv_cells(inputs, wanted, decisions, engine, scheduler)
        notes += more_notes
        frame, decisions = _read_distinct_cells(cells, counts, decisions, options, head_only=head_only)
    if counts_column is not None:
        counts = counts * _counts_from_column(frame[counts_column], counts_column)
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
        Display name of ``bytes`` in messages (default "the uploaded data").
    sep, header, encoding, thousands, keep_na_text
        As for :func:`read_table`.

    Returns
    -------
    (ReadResult, bool)
        The reading of the head, and whether the head is the whole file.
    """
    options = _read_options(sep, header, encoding, thousands, keep_na_text)
    item = _resolve_inputs(source)[0]
    if name is not None:
        item = replace(item, name=repr(str(name)))
    return _csv_decisions(item, options), not _text_bytes(item, HEAD_BYTES)[1]


def _check_rows(frame: pd.DataFrame, specs: list[ColumnSpec], counts_column: str | None) -> None:
    """Raise what :func:`prepare` raises on these rows (warnings are the caller's)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        names = [s.name for s in specs] + ([counts_column] if counts_column else [])
        absent = [n for n in names if n not in frame.columns]
        if absent:
            return  # named by the caller with the file's columns
        counts = None if counts_column is None else _counts_from_column(frame[counts_column], counts_column)
        prepare(frame, specs, counts=counts)


@dataclass(frozen=True)
class _Input:
    name: str            # display name
    path: str | None     # a file path, or None for bytes
    content: bytes | None = None


def _resolve_inputs(source) -> list[_Input]:
    """The files a source names: a path, a glob, a list of paths, or bytes."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        return [_Input("the uploaded data", None, bytes(source))]
    if hasattr(source, "read") and not isinstance(source, (str, os.PathLike)):
        name, content = _open_source(source, None)
        return [_Input(name, None, content)]
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
            raise ValueError(f"{item.name} is a damaged gzip file: {exc}") from None
    if limit is not None and len(data) > limit:
        return data[:limit], True
    return data, False


def _csv_decisions(item: _Input, options: dict) -> ReadResult:
    """read_table on the first HEAD_BYTES (cut after a whole line), or on the whole file
    (then ``decisions.size_bytes`` is the file's size)."""
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
            return read_table(source, max_bytes=None, **options)
        except ValueError as exc:
            # A quoted field may span the cut: drop the last line and try again.
            if not more or attempts >= 20 or "never closed" not in str(exc):
                raise
            attempts += 1
            head = cut[:-1]


def _pandas_csv(inputs: list[_Input], wanted: list[str], options: dict) -> tuple[pd.DataFrame, ReadDecisions]:
    """The reference: :func:`read_table` of every file, whole, in memory."""
    frames, first = [], None
    for item in inputs:
        raw, _ = _text_bytes(item, None)
        source = io.BytesIO(raw)
        source.name = item.name.strip("'")
        result = read_table(source, max_bytes=None, **options)
        names = [c.name for c in result.decisions.columns]
        if first is None:
            first = result.decisions
            missing = [w for w in wanted if w not in names]
            if missing:
                raise ValueError(f"no column named {missing[0]!r}; the columns are {_list_names(names)}.")
        elif names != [c.name for c in first.columns]:
            raise ValueError(f"{item.name} has other columns than {inputs[0].name}: the files must share their "
                             "columns")
        frames.append(result.frame[wanted])
    frame = frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)
    frame.attrs["na_text"] = {k: v for k, v in frames[0].attrs.get("na_text", {}).items() if k in wanted}
    readings = tuple(first.column(w) for w in wanted)
    return frame, replace(first, n_rows=len(frame), columns=readings)


def _csv_cells(inputs: list[_Input], wanted: list[str], decisions: ReadDecisions, engine: str,
               scheduler: str | None) -> tuple[pd.DataFrame, np.ndarray, list[str]]:
    """Distinct raw cells (text; missing fields empty) of the wanted columns and their counts."""
    names = [c.name for c in decisions.columns]
    missing = [w for w in wanted if w not in names]
    if missing:
        raise ValueError(f"no column named {missing[0]!r}; the columns are {_list_names(names)}.")
    positions = [names.index(w) for w in wanted]
    width = decisions.n_columns
    if engine == "duckdb":
        grouped, notes = _duckdb_csv(inputs, positions, width, decisions)
    else:
        grouped, notes = _dask_csv(inputs, positions, width, decisions, scheduler)
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


def _duckdb_csv(inputs, positions, width, decisions) -> tuple[pd.DataFrame, list[str]]:
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
        if codec != "utf-8" or item.path is None:
            # DuckDB streams UTF-8 files from disk; other encodings (and uploads) are
            # decoded here and handed over as UTF-8 in memory.
            raw, _ = _text_bytes(item, None)
            if codec != "utf-8":
                notes.append(f"{item.name} was transcoded from {decisions.encoding} to UTF-8 in memory "
                             "(DuckDB streams UTF-8 files from disk).")
                raw = raw.decode(decisions.encoding).removeprefix("\ufeff").encode("utf-8")
            sources.append((raw, {"encoding": "utf-8"}))
        else:
            sources.append((item.path, {"encoding": "utf-8", "compression": "gzip" if _is_gzip(item) else "none"}))
    selected = ", ".join(f"c{j} AS v{i}" for i, j in enumerate(positions))
    short = "false" if width == 1 else f"c{width - 1} IS NULL"
    # Only a short row can be a blank line: test the first field only there.
    blank = f"CASE WHEN {short} THEN (c0 IS NULL OR trim(c0) = '') ELSE false END" if width > 1 else "false"
    checked_query = (f"SELECT {selected}, {_EXTRA} IS NOT NULL AS __long, {short} AS __short, {blank} AS __blank, "
                     "count(*) AS __n FROM rel GROUP BY ALL")
    strict_query = f"SELECT {selected}, count(*) AS __n FROM rel GROUP BY ALL"

    def run(read_options: dict, query: str, parallel: bool) -> pd.DataFrame:
        con = duckdb.connect(config={"memory_limit": "1GB", "preserve_insertion_order": False})
        try:
            relations = [con.read_csv(io.BytesIO(target) if isinstance(target, bytes) else target,
                                      **read_options, **extra, parallel=parallel) for target, extra in sources]
            rel = relations[0]
            for other in relations[1:]:
                rel = rel.union(other)  # duckdb's relational union keeps duplicates (UNION ALL)
            return con.sql(query).df()
        finally:
            con.close()

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
            raise ValueError(f"{inputs[0].name} could not be read as CSV by DuckDB: "
                             f"{str(exc).splitlines()[0]}") from None
        frame = _check_shape_flags(frame, width, inputs[0].name)
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
        raise ValueError(f"{inputs[0].name} could not be read as CSV by Dask: {str(exc).splitlines()[0]}") from None
    except OSError as exc:
        raise ValueError(f"cannot reach the Dask scheduler {scheduler!r}: {exc}") from None
    more = sum(f[2] + int(f[1] > 0 and f[0] > width) for f in fields)
    fewer = sum(f[3] + int(f[1] > 0 and f[0] < width) for f in fields)
    if more or fewer:
        what = "more" if more else "fewer"
        raise ValueError(f"{inputs[0].name} has {more or fewer:,} row(s) with {what} fields than the {width} of the "
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


def _counts_from_column(column: pd.Series, name: str) -> np.ndarray:
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


def _parquet_cells(inputs: list[_Input], wanted: list[str], engine: str,
                   scheduler: str | None) -> tuple[pd.DataFrame, np.ndarray]:
    """Distinct typed rows of the wanted Parquet columns and their counts."""
    import pyarrow.parquet as pq

    for item in inputs:
        try:
            schema = pq.read_schema(io.BytesIO(item.content) if item.path is None else item.path)
        except Exception as exc:  # noqa: BLE001 — pyarrow raises several types for damaged files
            raise ValueError(f"{item.name} is not a readable Parquet file: {exc}") from None
        absent = [w for w in wanted if w not in schema.names]
        if absent:
            raise ValueError(f"no column named {absent[0]!r} in {item.name}; the columns are "
                             f"{_list_names(schema.names)}.")
    if engine == "pandas":
        frames = [pd.read_parquet(io.BytesIO(item.content) if item.path is None else item.path, columns=wanted)
                  for item in inputs]
        frame = pd.concat(frames, ignore_index=True)
        grouped = frame.groupby(wanted, sort=False, dropna=False).size()
    elif engine == "duckdb":
        import duckdb

        con = duckdb.connect(config={"memory_limit": "1GB", "preserve_insertion_order": False})
        try:
            if any(item.path is None for item in inputs):
                rel = con.from_arrow(pq.read_table(io.BytesIO(inputs[0].content), columns=wanted))
            else:
                rel = con.read_parquet([item.path for item in inputs])  # noqa: F841 (DuckDB reads the local `rel` by name in the SQL below)
            cols = ", ".join(f'"{w}"' for w in (w.replace('"', '""') for w in wanted))
            grouped_frame = con.sql(f"SELECT {cols}, count(*) AS __n FROM rel GROUP BY ALL").df()
        except duckdb.Error as exc:
            raise ValueError(f"{inputs[0].name} could not be read by DuckDB: {str(exc).splitlines()[0]}") from None
        finally:
            con.close()
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
    return _typed_parquet_frame(frame), counts


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
