"""The confidential data of this session: its source, columns, transforms and the
prepared data of :mod:`core.data`.

Uploaded bytes are kept in ``st.session_state`` only, so one session's upload is never
visible to another. Everything derived from them is cached with
``st.cache_data(scope="session")`` (:data:`session_cache`): Streamlit drops those entries
when the session disconnects, and an entry can only be reached from its own session.
Large inputs (raw bytes) are passed as underscore-prefixed arguments, which Streamlit
does not hash, next to the SHA-256 key that identifies them.

Two ways from the bytes to the prepared data, chosen by :func:`core.data.takes_lean_path`:

* **exact full read** — a CSV of at most :data:`core.data.FULL_READ_MAX_BYTES` (the bundled
  samples, the awkward-file corpus): :func:`core.data.read_table` of the whole file into a
  frame, then :func:`core.data.prepare_frame`; problems are named by row.
* **lean path** — a larger CSV, any Parquet file, and any frequency table: the column
  list and default kinds come from a bounded *head* (:func:`head_of`,
  :func:`core.data.read_file_head`: the file's first :data:`core.data.HEAD_BYTES` cut at a
  line end, or the Parquet schema and its first :data:`core.data.PARQUET_HEAD_ROWS` rows),
  and the released columns are reduced to their frequency table by
  :func:`core.data.distinct_values` (DuckDB, streaming). The session then holds the bytes,
  the head and the k distinct values — never a frame of the n rows.

This module keeps the session's choices and caches what ``core`` computes from them; the
loading itself (format, path, head, default kinds) is :mod:`core.data`'s.
"""

from __future__ import annotations

import functools
import hashlib
import json
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import streamlit as st

from core import data as core_data
from core.release import SAMPLE_DIR
from core.validation import PrivacyLeakWarning

from . import state
from .text import literal

ROUNDING_CHOICES = (None, 4, 3, 2, 1, 0, -1)
#: The rounding profile's row without rounding (``decimals=None``: the values as recorded).
AS_RECORDED = "as recorded"
#: The Data page's rounding selector: no rounding, new values at full precision (the public
#: default); typed decimals; or the precision read off the data (``precision_from_data``, a
#: data-dependent choice; docs/mathematics.md §2.4, §2.6).
NOT_ROUNDED = "not rounded (new values at full precision)"
FROM_DATA = "as recorded in the data (read off the data: a data-dependent choice)"
ROUNDING_OPTIONS = (NOT_ROUNDED, *(d for d in ROUNDING_CHOICES if d is not None), FROM_DATA)


def rounding_label(option) -> str:
    """How the rounding selector shows an option: the two words, or typed decimals with their unit."""
    if isinstance(option, str):
        return option
    unit = {0: "units", -1: "tens", -2: "hundreds"}.get(option, f"{10.0 ** -option:g}")
    return f"{option} (to {unit})"


def rounding_option(transform: dict):
    """The selector's option for a column's transform settings."""
    if transform.get("decimals") is not None:
        return transform["decimals"]
    return FROM_DATA if transform.get("precision_from_data") else NOT_ROUNDED


def rounding_setter(column: str):
    """Store the rounding chosen for ``column``: ``decimals`` and ``precision_from_data``."""
    def store(option):
        transform = st.session_state.transforms.get(column)
        if transform is not None:
            typed = not isinstance(option, str)
            transform["decimals"] = option if typed else None
            transform["precision_from_data"] = option == FROM_DATA
    return store

#: Cache of anything derived from the confidential data: per session, bounded, dropped
#: when the session ends.
session_cache = functools.partial(st.cache_data, scope="session", show_spinner=False)


def size_text(size: int) -> str:
    """A byte count for people: ``'256 KiB'``, ``'1 MiB'``, ``'20.7 MB'``, ``'48.2 kB'``."""
    if size % 2**20 == 0 and size:
        return f"{size // 2**20:,} MiB"
    if size % 2**10 == 0 and 0 < size < 2**20:
        return f"{size // 2**10:,} KiB"
    if size < 10**3:
        return f"{size} bytes"
    if size < 10**5:
        return f"{size / 10**3:,.1f} kB"
    return f"{size / 10**6:,.1f} MB"


def content_hash(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


def sample_files() -> list[str]:
    return sorted(p.name for p in SAMPLE_DIR.glob("*.csv")) if SAMPLE_DIR.is_dir() else []


@st.cache_data(show_spinner=False)
def _read_sample_bytes(path: str) -> bytes:
    # Bundled samples are public: one copy shared by every session.
    return Path(path).read_bytes()


@st.cache_data(show_spinner=False)
def sample_public_bounds() -> dict:
    """Public bounds shipped with the bundled samples (``sample_data/public_bounds.json``)."""
    path = SAMPLE_DIR / "public_bounds.json"
    return json.loads(path.read_text()) if path.is_file() else {}


@dataclass(frozen=True)
class Source:
    """The file currently selected: a bundled sample or this session's upload."""

    name: str
    content: bytes
    key: str          # SHA-256 of the content
    is_sample: bool

    @property
    def file_format(self) -> str:
        """``'parquet'`` or ``'csv'`` (:func:`core.data.detect_format`)."""
        return core_data.detect_format(self.content)


def current_source() -> Source | None:
    if st.session_state.source_kind == "upload":
        up = st.session_state.upload
        source = None if up is None else Source(up["name"], up["bytes"], up["hash"], False)
    else:
        path = SAMPLE_DIR / st.session_state.sample_name
        if not path.is_file():
            return None
        content = _read_sample_bytes(str(path))
        source = Source(path.name, content, content_hash(content), True)
    if source is not None:
        _follow_source(source)
    return source


def upload_problem(name: str, size: int) -> str | None:
    """The message for an upload above :data:`ui.state.MAX_UPLOAD_BYTES`, else ``None``."""
    if size <= state.MAX_UPLOAD_BYTES:
        return None
    return (f"{name} is {size / 10**6:,.1f} MB ({size:,} bytes), above the dashboard's limit of "
            f"{state.MAX_UPLOAD_MB} MB ({state.MAX_UPLOAD_BYTES:,} bytes). Keep only the columns you need, "
            "or use the command line (python -m core release), which has no size limit and also "
            "reads Parquet files and globs of files.")


#: The reader's options the Data page offers, and their defaults (detect / as read).
READ_DEFAULTS = {"sep": None, "header": None, "thousands": None, "keep_na_text": False}
DETECT, NONE = "detect", "none"   # what the widgets show for an option left to the reader / unset
SEPARATOR_LABELS = {DETECT: "detect", ",": "comma ,", ";": "semicolon ;", "\t": "tab", "|": "pipe |"}
SEPARATOR_OPTIONS = tuple(SEPARATOR_LABELS)
HEADER_LABELS = {DETECT: "detect", True: "yes: column names", False: "no: the first record"}
HEADER_OPTIONS = tuple(HEADER_LABELS)
THOUSANDS_LABELS = {NONE: "none", ",": "comma: 1,234", ".": "period: 1.234", " ": "space: 1 234",
                    "'": "apostrophe: 1'234"}
THOUSANDS_OPTIONS = tuple(THOUSANDS_LABELS)


def read_options() -> tuple:
    """The reader options chosen for the current source, as a hashable tuple (a cache key)."""
    chosen = {**READ_DEFAULTS, **st.session_state.read_options}
    return tuple((name, chosen[name]) for name in READ_DEFAULTS)


@session_cache(max_entries=4)
def read_result(source_key: str, _content: bytes, options: tuple, _name: str | None = None) -> core_data.ReadResult:
    """``core.data.read_table`` of the selected bytes with the reader options (cached by the
    bytes' SHA-256 and the options). ``_name``: how its error messages call the bytes
    (default "the uploaded data"); a reading does not depend on it, so it is no key."""
    return core_data.read_table(_content, max_bytes=state.MAX_UPLOAD_BYTES, name=_name, **dict(options))


def bind_read_option(name: str, *, none_as=None) -> dict:
    """Keyword arguments that bind a widget to one reader option of the current source."""
    return state.bind_value(f"_w_read_{name}", dict(read_options())[name],
                            lambda value: set_read_option(name, value), none_as=none_as)


def lean_path(source: Source) -> bool:
    """Whether the source goes through the frequency table only (see the module docstring):
    :func:`core.data.takes_lean_path` with the session's counts column; a bundled sample
    is read whole at any size."""
    return core_data.takes_lean_path(source.content, counts_column=st.session_state.counts_column,
                                     whole_at_any_size=source.is_sample)


@session_cache(max_entries=4)
def head_of(source_key: str, _content: bytes, options: tuple, name: str, full: bool,
            _full_read_name: str | None = None) -> core_data.FileHead:
    """The head of the selected bytes (cached by their SHA-256, the options and ``full``).

    ``full``: a CSV is read whole, through :func:`read_result`, whose messages call the bytes
    ``_full_read_name`` (default "the uploaded data"; no key: the head does not depend on
    it). Otherwise :func:`core.data.read_file_head`, whose messages call them ``name``: the
    same head, cut at a line end, that core.data.distinct_values decides the separator,
    encoding and header on, so the columns listed are the ones it will read."""
    if full and core_data.detect_format(_content) == "csv":
        return core_data.FileHead.of_reading(read_result(source_key, _content, options, _full_read_name))
    return core_data.read_file_head(_content, name=name, **dict(options))


def _new_source() -> None:
    st.session_state.columns = None
    st.session_state.transforms = {}
    st.session_state.read_options = {}
    st.session_state.counts_column = None
    st.session_state.coarsening = ()
    st.session_state.settings_chosen_from_data = False   # planned on the previous data
    st.session_state.mechanism_chosen_from_data = False  # compared on the previous data


def set_source_sample(name: str) -> None:
    st.session_state.source_kind = "sample"
    st.session_state.sample_name = name
    _new_source()


def set_read_option(name: str, value) -> None:
    """Change one reader option of the current source (the columns are chosen again)."""
    st.session_state.read_options = {**st.session_state.read_options, name: value}
    st.session_state.columns = None
    st.session_state.transforms = {}
    st.session_state.coarsening = ()   # chosen for the columns as they were read


def set_counts_column(column: str | None) -> None:
    """Declare the file a frequency table whose counts are in ``column`` (``None``: rows are
    records). The counts column cannot be released, so it leaves the chosen columns."""
    st.session_state.counts_column = column
    if column is not None and st.session_state.columns and column in st.session_state.columns:
        rest = [c for c in st.session_state.columns if c != column]
        st.session_state.columns = rest or None


def release_uploaded_file(file_id: str) -> None:
    """Drop the server's copy of an uploaded file once its bytes are in the session state.

    Streamlit keeps every uploaded file in its uploaded-file manager until the session is
    *shut down*; a closed tab's session that merely expires (``server.disconnectedSessionTTL``)
    is never shut down, so its upload would stay in memory for the server's lifetime.
    This uses Streamlit's internal manager (no public API exists); if that changes, the
    copy stays until shutdown, as before.
    """
    try:
        from streamlit.runtime import Runtime
        from streamlit.runtime.scriptrunner import get_script_run_ctx

        ctx = get_script_run_ctx()
        if ctx is not None and Runtime.exists():
            Runtime.instance().uploaded_file_mgr.remove_file(ctx.session_id, file_id)
    except Exception:  # noqa: BLE001 — best effort; never break the page over it
        pass


def set_source_upload(name: str, content: bytes) -> str | None:
    """Keep an upload in this session if it parses; return an error message otherwise."""
    problem = upload_problem(name, len(content))
    if problem:
        return problem
    key = content_hash(content)
    try:
        # What the file would become, from what it says about itself, before any reading.
        core_data.check_read_limits(content, max_rows=state.MAX_ROWS,
                                    max_decompressed_bytes=state.MAX_DECOMPRESSED_BYTES, name=name)
        # Read as the pages will read it (and cached for them), with the file's name in the message.
        head_of(key, content, tuple(READ_DEFAULTS.items()), name, not core_data.takes_lean_path(content),
                _full_read_name=name)
    except ValueError as exc:
        return str(exc)
    st.session_state.upload = {"name": name, "bytes": content, "hash": key}
    st.session_state.source_kind = "upload"
    _new_source()
    return None


# --------------------------------------------------------------------------- columns
def default_transform(frame: pd.DataFrame, column: str) -> dict:
    """:func:`core.data.default_transform` of a column, with the public bounds shipped with a
    bundled sample (``sample_data/public_bounds.json``) when there are some."""
    known = None
    if st.session_state.source_kind == "sample":
        known = sample_public_bounds().get(st.session_state.sample_name, {}).get(column)
    return core_data.default_transform(frame[column], known)


def ensure_columns(frame: pd.DataFrame) -> list[str]:
    """Chosen columns that exist in ``frame`` (defaults otherwise), with their transforms."""
    counts_column = st.session_state.counts_column
    if counts_column is not None and counts_column not in frame.columns:
        counts_column = st.session_state.counts_column = None
    columns = st.session_state.columns
    if not columns or any(c not in frame.columns or c == counts_column for c in columns):
        columns = core_data.default_columns(frame, counts_column)
        st.session_state.columns = columns
    transforms = st.session_state.transforms
    for c in columns:
        if c not in transforms:
            transforms[c] = default_transform(frame, c)
    return columns


def category_list_text(categories) -> str:
    """A public category list as the text box shows it."""
    return "" if not categories else ", ".join(map(str, categories))


def categories_setter(column: str):
    """Store the typed public category list of ``column`` (comma-separated; empty = none)."""
    def store(text):
        items = tuple(item.strip() for item in str(text or "").split(",") if item.strip())
        transform = st.session_state.transforms.get(column)
        if transform is not None:
            transform["categories"] = items or None
    return store


def grid_setter(column: str):
    """Store the public grid step of ``column`` (0 = none). A grid step is among the settings
    the Release planner chooses (:data:`ui.state.PLANNED_SETTINGS`): a change by hand ends the
    planner's say over the settings."""
    def store(step):
        transform = st.session_state.transforms.get(column)
        if transform is not None:
            value = float(step) if step else None
            if value != transform.get("grid"):
                st.session_state.settings_chosen_from_data = False
            transform["grid"] = value
    return store


def typed_bounds(transform: dict) -> tuple[float, float] | None:
    """The public bounds of a numeric column's transform settings: ``(lo, hi)`` as typed when
    "I know public bounds" is ticked and both are typed, else ``None`` (the bounds are then read
    off the data, with the warning that they are not private). No default ever stands in for
    a bound not typed: [0, 1] would clip every value outside it. Typed bounds are checked by
    ``core`` (lo < hi; lo > 0 with log), whose message names the column."""
    if not transform.get("bounds_public"):
        return None
    lo, hi = transform.get("lo"), transform.get("hi")
    return None if lo is None or hi is None else (float(lo), float(hi))


def bounds_pending(transform: dict) -> bool:
    """Whether "I know public bounds" is ticked while a bound is not typed yet (the bounds are
    then still read off the data: nothing is clipped before both are typed)."""
    return bool(transform.get("bounds_public")) and typed_bounds(transform) is None


@dataclass(frozen=True)
class PublicDomains:
    """What the Data page says publicly about the released columns: each column's kind, the
    public bounds and log flag of numeric columns, public category lists and grid steps
    (only what the user marked public; nothing read off the data)."""

    kinds: dict
    bounds: dict        # numeric column -> (lo, hi), public bounds only
    log: dict           # numeric column -> bool
    categories: dict    # categorical column -> tuple of public categories
    grids: dict         # numeric column -> public grid step (columns that have one)


def public_domains(columns) -> PublicDomains:
    """:class:`PublicDomains` of ``columns`` from ``st.session_state.transforms``."""
    settings = st.session_state.transforms
    kinds = {c: settings.get(c, {}).get("kind", "numeric") for c in columns}
    bounds, log, categories, grids = {}, {}, {}, {}
    for c in columns:
        t = settings.get(c, {})
        if kinds[c] == "categorical":
            if t.get("categories"):
                categories[c] = tuple(t["categories"])
            continue
        log[c] = bool(t.get("log"))
        if typed_bounds(t) is not None:
            bounds[c] = typed_bounds(t)
            if t.get("grid"):
                grids[c] = float(t["grid"])
    return PublicDomains(kinds, bounds, log, categories, grids)


def column_specs(columns: list[str], transforms: dict) -> tuple[core_data.ColumnSpec, ...]:
    """The ``core.data.ColumnSpec`` of each chosen column (frozen, hashable: a cache key)."""
    specs = []
    for c in columns:
        t = transforms[c]
        if t["kind"] == "categorical":
            specs.append(core_data.ColumnSpec(c, kind="categorical", categories=t.get("categories"),
                                              missing=t.get("missing")))
        else:
            bounds = typed_bounds(t)
            grid = t.get("grid") if bounds is not None else None
            # a grid's values are its public points: no precision to read off the data then
            from_data = bool(t.get("precision_from_data")) and t["decimals"] is None and not grid
            specs.append(core_data.ColumnSpec(c, log=bool(t["log"]), bounds=bounds, decimals=t["decimals"],
                                              grid=grid or None, missing=t.get("missing"),
                                              precision_from_data=from_data))
    return tuple(specs)


#: What a missing cell of a column may mean, as the column panel offers it: no choice yet
#: (the column is blocked), or one of ``core.data.MISSING_CHOICES``.
MISSING_UNSET = "not chosen"
MISSING_LABELS = {MISSING_UNSET: "not chosen yet (the column cannot be released)",
                  "value": "missing is a value (released as an empty cell)",
                  "drop": "drop records with a missing value"}
MISSING_OPTIONS = tuple(MISSING_LABELS)


def missing_counts(columns) -> dict[str, int]:
    """Records with a missing cell in each of the chosen ``columns`` of the current source
    (``core.data.missing_counts``): on the exact path from the rows read, on the lean path
    from the distinct values DuckDB counted (the scan the selection needs anyway, cached).
    Empty when the file cannot be read (the Data page says why)."""
    source = current_source()
    if source is None or not columns:
        return {}
    options = read_options()
    try:
        if lean_path(source):
            values = scanned(source.key, source.content, options, tuple(columns), st.session_state.counts_column,
                             source.name)
            return core_data.missing_counts(values.frame, values.counts)
        frame = read_result(source.key, source.content, options).frame
        return core_data.missing_counts(frame[list(columns)])
    except ValueError:
        return {}


def _follow_source(source: Source) -> None:
    """A change of source (another upload, a sample, back and forth with the radio) drops
    the coarsening and the counts column: they were chosen for the other file's columns
    and values."""
    seen = st.session_state.get("_source_followed")
    if seen != source.key:
        if seen is not None:
            st.session_state.coarsening = ()
            st.session_state.counts_column = None
            st.session_state.settings_chosen_from_data = False
            st.session_state.mechanism_chosen_from_data = False
        st.session_state._source_followed = source.key


def active_coarsening(columns) -> tuple:
    """The session's coarsening (``core.data.ColumnTransform``, set by the advisor on
    the Data page) restricted to the released ``columns``: a hashable cache key."""
    wanted = set(columns)
    return tuple(t for t in (st.session_state.coarsening or ()) if t.column in wanted)


@session_cache(max_entries=8)
def prepared_data(source_key: str, _content: bytes, options: tuple, specs: tuple,
                  coarsening: tuple = ()) -> core_data.PreparedData:
    """``core.data.prepare_frame`` for the chosen columns and transforms, after the
    coarsening, on the whole file read exactly (cached)."""
    frame = read_result(source_key, _content, options).frame
    with warnings.catch_warnings():
        # The pages state the weakened guarantee themselves (PreparedData.any_bounds_from_data).
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        return core_data.prepare_frame(frame, list(specs), coarsening=coarsening)


@session_cache(max_entries=4)
def scanned(source_key: str, _content: bytes, options: tuple, columns: tuple, counts_column: str | None,
            name: str) -> core_data.DistinctValues:
    """``core.data.distinct_values`` of the bytes with DuckDB (the lean path's one pass over
    every row; cached by the columns, not by their transforms). Its messages call the bytes ``name``."""
    return core_data.distinct_values(_content, list(columns), engine="duckdb", counts_column=counts_column,
                                     name=name, max_distinct=state.MAX_DISTINCT, **dict(options))


@session_cache(max_entries=8)
def aggregated(source_key: str, _content: bytes, options: tuple, specs: tuple, counts_column: str | None,
               coarsening: tuple, name: str) -> core_data.Aggregated:
    """``core.data.aggregate`` of the bytes (the lean path; cached): the frequency table of
    the released columns after the coarsening, never the n rows. A change of transforms
    or coarsening re-prepares the cached distinct values (cost in k, not n)."""
    values = scanned(source_key, _content, options, tuple(s.name for s in specs), counts_column, name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        return values.aggregated(list(specs), coarsening=coarsening)


@session_cache(max_entries=4)
def distinct_rows(source_key: str, _content: bytes, options: tuple, columns: tuple, counts_column: str | None,
                  name: str) -> tuple[pd.DataFrame, np.ndarray]:
    """The distinct rows of ``columns`` in original units (as read, before coarsening and
    transforms) and how many records each stands for: the lean path's stand-in for the rows.

    Every column is aggregated as a label (``kind='categorical'`` keeps a value as read:
    no rounding, bounds or log), so the table's atoms are the distinct rows."""
    # A missing cell is kept as one more value: the rows as read, whatever the choice made for them.
    specs = [core_data.ColumnSpec(c, kind="categorical", missing="value") for c in columns]
    agg = aggregated(source_key, _content, options, tuple(specs), counts_column, (), name)
    frame = agg.prepared.to_original(agg.table.atoms).infer_objects()
    return frame, np.asarray(agg.table.counts, dtype=np.int64)


@session_cache(max_entries=8)
def rounding_table(source_key: str, _content: bytes, options: tuple, column: str,
                   counts_column: str | None = None, name: str | None = None, lean: bool = False) -> pd.DataFrame:
    """``core.data.rounding_profile`` of one column in original units (its numbers: a missing
    cell is left out, as rounding leaves it missing).

    On the lean path it runs on the distinct values, each repeated min(count, 2) times:
    after any rounding a value is a singleton exactly when its merged count is 1, which
    these stand-ins preserve (a merged group of ≥ 2 values, or one value with count ≥ 2,
    counts ≥ 2 either way), so ``distinct`` and ``singletons`` are exact; the largest
    multiplicity is not, and is dropped."""
    if not lean:   # the numbers of the column (rounding does not touch a missing cell)
        frame = read_result(source_key, _content, options).frame
        return core_data.rounding_profile(frame[column].dropna(), ROUNDING_CHOICES)
    frame, counts = distinct_rows(source_key, _content, options, (column,), counts_column, name)
    present = frame[column].notna().to_numpy()
    stand_in = np.repeat(frame[column][present].infer_objects().to_numpy(), np.minimum(counts[present], 2))
    return core_data.rounding_profile(stand_in, ROUNDING_CHOICES).drop(columns="max_multiplicity")


@dataclass(frozen=True)
class ParquetReading:
    """The reading record of a Parquet file, in the shape :mod:`ui.release` reads off
    ``Selection.decisions``: no CSV option applies (``None``: nothing to decide)."""

    record: tuple   # (key, value) pairs of core.data.Aggregated.reading()
    delimiter: None = None
    header: None = None
    encoding: None = None
    thousands: None = None
    keep_na_text: bool = False

    def to_dict(self) -> dict:
        return dict(self.record)


@dataclass(frozen=True)
class Selection:
    """The prepared confidential data of this session and the keys identifying it.

    ``decisions``: what the CSV reader decided (on the whole file on the exact path; on
    the lean path the separator, encoding and header from the file's head,
    ``core.data.HEAD_BYTES``, and the released columns' readings from every row), or a
    :class:`ParquetReading`.
    ``counts_column``: the file is a frequency table with its counts in that column.
    ``lean``: prepared from the frequency table (``prepared.from_table``).
    """

    source: Source
    decisions: core_data.ReadDecisions | ParquetReading
    prepared: core_data.PreparedData
    key: str          # content hash + reader options + column specs: the cache key of everything downstream
    counts_column: str | None = None
    lean: bool = False
    notes: tuple[str, ...] = ()

    @property
    def delimiter(self) -> str | None:
        return self.decisions.delimiter

    @property
    def file_format(self) -> str:
        return self.source.file_format

    @property
    def table(self) -> core_data.FrequencyTable:
        return self.prepared.table

    def profile(self) -> dict:
        t = self.table
        return {"source": self.source.name, "columns": [str(c) for c in self.prepared.columns],
                "n": t.n, "k": t.k, "singletons": t.singletons, "public_domain": self.prepared.public_domain}


def load_selection() -> tuple[Selection | None, str | None]:
    """The current selection, or ``(None, message)`` saying what is wrong with it.

    Never raises for bad data: ``core`` raises ``ValueError`` with an actionable
    message, which the page shows with ``st.error``.
    """
    source = current_source()
    if source is None:
        if st.session_state.source_kind == "upload":
            return None, "Upload a CSV or Parquet file to start, or switch back to a bundled sample."
        return None, f"The bundled sample {st.session_state.sample_name!r} is missing from sample_data/."
    options = read_options()
    lean = lean_path(source)
    notes: tuple[str, ...] = ()
    try:
        head = head_of(source.key, source.content, options, source.name, not lean)
        columns = ensure_columns(head.frame)   # may drop a counts column the file does not have
        counts_column = st.session_state.counts_column
        specs = column_specs(columns, st.session_state.transforms)
        coarsening = active_coarsening(columns)
        if lean:
            # Shown only if it takes more than half a second (a cache hit does not): 10^7 rows
            # take ~3 s, 10^8 rows (a 740 MB CSV) ~12 s on this 2-core machine.
            with st.spinner(f"Counting the values of the released column(s) of {literal(source.name)} "
                            "(DuckDB, every row)…"):
                agg = aggregated(source.key, source.content, options, specs, counts_column, coarsening, source.name)
            prepared, notes = agg.prepared, agg.notes
            decisions = agg.decisions if agg.decisions is not None else ParquetReading(
                tuple(agg.reading().items()))
        else:
            prepared = prepared_data(source.key, source.content, options, specs, coarsening)
            decisions = head.decisions
    except ValueError as exc:
        return None, str(exc)
    key = source.key[:16] + ":" + hashlib.sha256(
        repr((options, specs, counts_column, coarsening)).encode()).hexdigest()[:16]
    return Selection(source, decisions, prepared, key, counts_column, lean, tuple(notes)), None


def release_frame() -> pd.DataFrame | None:
    """The released columns of the confidential data in ORIGINAL units, BEFORE the
    coarsening and the Data page's transforms (for the coarsening advisor), without the
    records a column set to drop them has a missing value in (a missing cell of a column
    where missing is a value stays).

    Exact path: one row per record (``release_counts()`` is ``None``). Lean path
    (large CSV, Parquet, frequency table): the *distinct* rows, with the records each
    stands for in ``release_counts()`` — never the n rows. ``None`` when there is no
    usable selection (no upload yet, or the file cannot be read; the Data page says why).
    """
    found = _release_rows()
    return None if found is None else found[0]


def release_counts() -> np.ndarray | None:
    """Records per row of :func:`release_frame` (int64, summing to n) on the lean path;
    ``None`` on the exact path, where every row is one record (or without a selection)."""
    found = _release_rows()
    return None if found is None else found[1]


def _release_rows() -> tuple[pd.DataFrame, np.ndarray | None] | None:
    source = current_source()
    if source is None:
        return None
    options = read_options()
    lean = lean_path(source)
    try:
        head = head_of(source.key, source.content, options, source.name, not lean)
        columns = ensure_columns(head.frame)
        if lean:
            frame, counts = distinct_rows(source.key, source.content, options, tuple(columns),
                                          st.session_state.counts_column, source.name)
        else:
            frame, counts = read_result(source.key, source.content, options).frame[columns], None
    except ValueError:
        return None
    # The records a column drops for a missing value leave before the mechanism (Data page):
    # the rows handed on are those released from. A missing cell of another column stays.
    dropping = [c for c in columns if st.session_state.transforms.get(c, {}).get("missing") == "drop"]
    if dropping:
        keep = frame[dropping].notna().all(axis=1).to_numpy()
        frame = frame[keep].reset_index(drop=True)
        counts = None if counts is None else counts[keep]
    return frame, counts


def waiting_for_upload() -> bool:
    return st.session_state.source_kind == "upload" and current_source() is None


def numeric_columns(prepared: core_data.PreparedData) -> list[str]:
    return [str(c.name) for c in prepared.column_info if c.kind == "numeric"]
