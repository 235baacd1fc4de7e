"""Reading a CSV: delimiter, encoding, header, thousands separators and the kind of each
column, detected when the user did not say, with a :class:`ReadDecisions` record of every
decision (docs/scale.md). Ragged rows, binary files and undecodable text are refused with a
message a user can act on; integer columns are read exactly (no float round trip).
"""
from __future__ import annotations

import codecs
import csv
import io
import itertools
import os
import re
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

from ..validation import (
    check_flag,
    check_integer,
)
from .messages import _list_names


#: Default upload limit of :func:`read_csv` (200 MiB, Streamlit's default upload limit).
DEFAULT_MAX_BYTES = 200 * 2**20


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
               max_bytes: int | None = DEFAULT_MAX_BYTES, name: str | None = None) -> ReadResult:
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
    name : str or None
        How error messages call ``source`` when it is bytes or a file-like object, e.g.
        the file name of an upload (quoted in the message). ``None`` (default): "the
        uploaded data" for bytes, the object's file name for a file-like object. A path
        is always called by its file name. The record (``decisions.source``) keeps the
        default name: a reading depends on the content only, so it can be kept by the
        content's hash whoever asked for it.

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
    name = check_display_name(name)
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

    recorded, raw = _open_source(source, max_bytes, name)
    name = recorded if name is None or isinstance(source, (str, os.PathLike)) else repr(name)
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
        source=recorded.strip("'") if recorded.startswith("'") else recorded, size_bytes=len(raw),
        encoding=encoding_used, encoding_detected=encoding_detected, delimiter=sep,
        delimiter_detected=delimiter_detected, header=bool(use_header), header_guessed=header is None, first_row_looks_like_data=bool(first_row_data),
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


def check_display_name(name) -> str | None:
    """``name`` (how messages call a source) if it is ``None`` or a non-empty string.

    Parameters
    ----------
    name : str or None
        A display name, e.g. the file name of an upload.

    Returns
    -------
    str or None
        ``name`` unchanged.

    Raises
    ------
    ValueError
        ``name`` is neither ``None`` nor a non-empty string.
    """
    if name is not None and (not isinstance(name, str) or not name):
        raise ValueError(f"name (how messages call the data, e.g. 'survey.csv') must be None or a non-empty "
                         f"string, got {name!r}")
    return name


def _open_source(source, max_bytes: int | None, called: str | None = None) -> tuple[str, bytes]:
    """Return the display name of the file in its record and its bytes, after the size check
    (whose message calls bytes or a stream ``called`` when given)."""
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if not path.is_file():
            raise ValueError(f"cannot read {str(path)!r}: no such file")
        _check_size(repr(path.name), path.stat().st_size, max_bytes)
        return repr(path.name), path.read_bytes()
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
        _check_size("the uploaded data" if called is None else repr(called), len(data), max_bytes)
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
        _check_size(name if called is None else repr(called), len(data), max_bytes, at_least=True)
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
