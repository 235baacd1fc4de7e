"""The confidential data of this session: its source, columns, transforms and the
prepared data of :mod:`core.data`.

Uploaded bytes are kept in ``st.session_state`` only, so one session's upload is never
visible to another. Everything derived from them is cached with
``st.cache_data(scope="session")`` (:data:`session_cache`): Streamlit drops those entries
when the session disconnects, and an entry can only be reached from its own session.
Large inputs (raw bytes) are passed as underscore-prefixed arguments, which Streamlit
does not hash, next to the SHA-256 key that identifies them.
"""

from __future__ import annotations

import functools
import hashlib
import json
import warnings
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import streamlit as st

from core import data as core_data
from core.validation import PrivacyLeakWarning

from . import state

REPO = Path(__file__).resolve().parents[1]
SAMPLE_DIR = REPO / "sample_data"
ROUNDING_CHOICES = (None, 4, 3, 2, 1, 0, -1)
#: The rounding choice "keep the values as recorded" (``decimals=None``) as the widget shows it.
AS_RECORDED = "as recorded"
ROUNDING_OPTIONS = tuple(AS_RECORDED if d is None else d for d in ROUNDING_CHOICES)

#: Cache of anything derived from the confidential data: per session, bounded, dropped
#: when the session ends (issue 15 §3).
session_cache = functools.partial(st.cache_data, scope="session", show_spinner=False)


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
    """The CSV currently selected: a bundled sample or this session's upload."""

    name: str
    content: bytes
    key: str          # SHA-256 of the content
    is_sample: bool


def current_source() -> Source | None:
    if st.session_state.source_kind == "upload":
        up = st.session_state.upload
        return None if up is None else Source(up["name"], up["bytes"], up["hash"], False)
    path = SAMPLE_DIR / st.session_state.sample_name
    if not path.is_file():
        return None
    content = _read_sample_bytes(str(path))
    return Source(path.name, content, content_hash(content), True)


def upload_problem(name: str, size: int) -> str | None:
    """The message for an upload above :data:`ui.state.MAX_UPLOAD_BYTES`, else ``None``."""
    if size <= state.MAX_UPLOAD_BYTES:
        return None
    return (f"{name} is {size / 10**6:,.1f} MB ({size:,} bytes), above the dashboard's limit of "
            f"{state.MAX_UPLOAD_MB} MB ({state.MAX_UPLOAD_BYTES:,} bytes). Keep only the columns you need, "
            "or use the command line (python -m core release), which has no size limit.")


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
def read_result(source_key: str, _content: bytes, options: tuple) -> core_data.ReadResult:
    """``core.data.read_table`` of the selected bytes with the reader options (cached by the
    bytes' SHA-256 and the options)."""
    return core_data.read_table(_content, max_bytes=state.MAX_UPLOAD_BYTES, **dict(options))


def bind_read_option(name: str, *, none_as=None) -> dict:
    """Keyword arguments that bind a widget to one reader option of the current source."""
    return state.bind_value(f"_w_read_{name}", dict(read_options())[name],
                            lambda value: set_read_option(name, value), none_as=none_as)


def _new_source() -> None:
    st.session_state.columns = None
    st.session_state.transforms = {}
    st.session_state.read_options = {}


def set_source_sample(name: str) -> None:
    st.session_state.source_kind = "sample"
    st.session_state.sample_name = name
    _new_source()


def set_read_option(name: str, value) -> None:
    """Change one reader option of the current source (the columns are chosen again)."""
    st.session_state.read_options = {**st.session_state.read_options, name: value}
    st.session_state.columns = None
    st.session_state.transforms = {}


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
        read_result(key, content, tuple(READ_DEFAULTS.items()))
    except ValueError as exc:
        return str(exc).replace("the uploaded data", repr(name))
    st.session_state.upload = {"name": name, "bytes": content, "hash": key}
    st.session_state.source_kind = "upload"
    _new_source()
    return None


# --------------------------------------------------------------------------- columns
def mostly_numeric(series: pd.Series) -> bool:
    """A column read as numbers, or one whose cells are mostly numbers: offered as numeric
    so that a stray text cell is reported (row and value) by ``core.data.prepare`` rather
    than silently turning the column into labels. The user can switch it to categorical."""
    if pd.api.types.is_bool_dtype(series):
        return False
    if pd.api.types.is_numeric_dtype(series):
        return True
    present = series.dropna()
    if not len(present):
        return False
    try:
        parsed = pd.to_numeric(present, errors="coerce")
    except (OverflowError, TypeError):   # Python ints beyond 64 bits: whole numbers, kept exact by core.data
        parsed = present.map(lambda v: v if isinstance(v, int) else pd.to_numeric(v, errors="coerce"))
    return bool(parsed.notna().mean() >= 0.5)


def default_transform(frame: pd.DataFrame, column: str) -> dict:
    known = None
    if st.session_state.source_kind == "sample":
        known = sample_public_bounds().get(st.session_state.sample_name, {}).get(column)
    # Without known public bounds nothing is read off the data: the fields start at [0, 1]
    # and the bounds come from the data (with a visible warning) until the user types them.
    lo, hi = (float(known[0]), float(known[1])) if known else (0.0, 1.0)
    return {"kind": "numeric" if mostly_numeric(frame[column]) else "categorical", "log": False,
            "bounds_public": known is not None, "lo": lo, "hi": hi, "decimals": None}


def default_columns(frame: pd.DataFrame) -> list[str]:
    """The first numeric column with the most distinct values (the one with ties and
    singletons worth protecting), else the first column."""
    numeric = [c for c in frame.columns if mostly_numeric(frame[c])]
    if not numeric:
        return [str(frame.columns[0])]
    return [str(max(numeric, key=lambda c: frame[c].nunique()))]


def ensure_columns(frame: pd.DataFrame) -> list[str]:
    """Chosen columns that exist in ``frame`` (defaults otherwise), with their transforms."""
    columns = st.session_state.columns
    if not columns or any(c not in frame.columns for c in columns):
        columns = default_columns(frame)
        st.session_state.columns = columns
    transforms = st.session_state.transforms
    for c in columns:
        if c not in transforms:
            transforms[c] = default_transform(frame, c)
    return columns


def column_specs(columns: list[str], transforms: dict) -> tuple[core_data.ColumnSpec, ...]:
    """The ``core.data.ColumnSpec`` of each chosen column (frozen, hashable: a cache key)."""
    specs = []
    for c in columns:
        t = transforms[c]
        if t["kind"] == "categorical":
            specs.append(core_data.ColumnSpec(c, kind="categorical"))
        else:
            bounds = (float(t["lo"]), float(t["hi"])) if t["bounds_public"] else None
            specs.append(core_data.ColumnSpec(c, log=bool(t["log"]), bounds=bounds, decimals=t["decimals"]))
    return tuple(specs)


@session_cache(max_entries=8)
def prepared_data(source_key: str, _content: bytes, options: tuple, specs: tuple) -> core_data.PreparedData:
    """``core.data.prepare`` for the chosen columns and transforms (cached)."""
    frame = read_result(source_key, _content, options).frame
    with warnings.catch_warnings():
        # The pages state the weakened guarantee themselves (PreparedData.any_bounds_from_data).
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        return core_data.prepare(frame, list(specs))


@session_cache(max_entries=8)
def rounding_table(source_key: str, _content: bytes, options: tuple, column: str) -> pd.DataFrame:
    frame = read_result(source_key, _content, options).frame
    return core_data.rounding_profile(frame[column], ROUNDING_CHOICES)


@dataclass(frozen=True)
class Selection:
    """The prepared confidential data of this session and the keys identifying it."""

    source: Source
    decisions: core_data.ReadDecisions
    prepared: core_data.PreparedData
    key: str          # content hash + reader options + column specs: the cache key of everything downstream

    @property
    def delimiter(self) -> str:
        return self.decisions.delimiter

    @property
    def table(self) -> core_data.FrequencyTable:
        return self.prepared.table

    def profile(self) -> dict:
        t = self.table
        return {"source": self.source.name, "columns": [str(c) for c in self.prepared.columns],
                "n": t.n, "k": t.k, "singletons": t.singletons}


def load_selection() -> tuple[Selection | None, str | None]:
    """The current selection, or ``(None, message)`` saying what is wrong with it.

    Never raises for bad data: ``core`` raises ``ValueError`` with an actionable
    message, which the page shows with ``st.error``.
    """
    source = current_source()
    if source is None:
        if st.session_state.source_kind == "upload":
            return None, "Upload a CSV file to start, or switch back to a bundled sample."
        return None, f"The bundled sample {st.session_state.sample_name!r} is missing from sample_data/."
    options = read_options()
    try:
        reading = read_result(source.key, source.content, options)
        specs = column_specs(ensure_columns(reading.frame), st.session_state.transforms)
        prepared = prepared_data(source.key, source.content, options, specs)
    except ValueError as exc:
        return None, str(exc)
    key = source.key[:16] + ":" + hashlib.sha256(repr((options, specs)).encode()).hexdigest()[:16]
    return Selection(source, reading.decisions, prepared, key), None


def waiting_for_upload() -> bool:
    return st.session_state.source_kind == "upload" and current_source() is None


def numeric_columns(prepared: core_data.PreparedData) -> list[str]:
    return [str(c.name) for c in prepared.column_info if c.kind == "numeric"]
