"""Shared glue of the dashboard pages: session state, cached calls into :mod:`core`,
sidebar widgets. No mathematics lives here: every number comes from a ``core`` function.

Session state
-------------
Settings live under plain keys (``"eps"``, ``"m"``, …) that no widget owns, so they
survive page switches (Streamlit deletes the state of a widget that is not rendered on
the current page). A widget is bound to a setting with :func:`bind`: it gets its own key
``"_w_<name>"``, is initialised from the setting and writes back on change.
Uploaded bytes are kept in ``st.session_state`` only, so one session's upload is never
visible to another; the caches below are keyed by a SHA-256 of the content, so a cache
entry can only be reached by presenting the same bytes.

Caching
-------
``st.cache_data`` entries are keyed by the content hash and the parameters. Large
inputs (raw bytes, arrays) are passed as underscore-prefixed arguments, which Streamlit
does not hash, together with the string key that identifies them. Random functions take
the seed explicitly and build ``numpy.random.default_rng(seed)`` inside, so a cached
result is always the result for that seed.
"""

from __future__ import annotations

import hashlib
import io
import json
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from core import data as core_data
from core import compare, plots, privacy, utility
from core import report as core_report
from core.mechanisms import pypp_release
from core.validation import PrivacyLeakWarning

REPO = Path(__file__).resolve().parent
SAMPLE_DIR = REPO / "sample_data"
DEFAULT_SAMPLE = "cps_earnings.csv"
MAX_UPLOAD_MB = 50

# Grids of the live curves: fixed so that moving ε only moves a marker (no recompute).
EPS_GRID = tuple(float(e) for e in np.geomspace(0.05, 12.0, 40))
EPS_GRID_SIZE_CURVE = tuple(float(e) for e in np.geomspace(0.05, 12.0, 25))

REGIMES = {
    "dp": "Dirichlet process (σ = 0)",
    "py": "Pitman–Yor (0 < σ < 1)",
    "dm": "Dirichlet–multinomial (σ < 0, z public categories)",
}

DEFAULTS: dict[str, Any] = {
    "source_kind": "sample",       # "sample" | "upload"
    "sample_name": DEFAULT_SAMPLE,
    "upload": None,                # {"name", "bytes", "hash"} of the last good upload
    "columns": None,               # chosen columns (None: default for the dataset)
    "transforms": {},              # column -> {"log", "bounds_public", "lo", "hi", "decimals"}
    "regime": "dp",
    "sigma_py": 0.25,              # σ when regime == "py"
    "alpha_dm": 1.0,               # |σ| when regime == "dm"
    "z_dm": 0,                     # public categories when regime == "dm" (0: use k)
    "theta": 2.0,
    "m": 100,
    "eps": 2.5,
    "delta": 0.01,
    "n_mc": 5000,
    "mc_seed": 1,
    "seed": 12345,
    "bins": 20,
    "runs": 100,
}


# --------------------------------------------------------------------------- state
def init_state() -> None:
    """Put every default into the session once (idempotent; call at the top of each page)."""
    for key, value in DEFAULTS.items():
        if key not in st.session_state:
            st.session_state[key] = value.copy() if isinstance(value, dict) else value


def _keep(name: str) -> None:
    st.session_state[name] = st.session_state[f"_w_{name}"]


def bind(name: str) -> dict:
    """Keyword arguments that bind a widget to the persistent setting ``name``."""
    st.session_state[f"_w_{name}"] = st.session_state[name]
    return {"key": f"_w_{name}", "on_change": _keep, "args": (name,)}


def content_hash(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


def sample_files() -> list[str]:
    return sorted(p.name for p in SAMPLE_DIR.glob("*.csv")) if SAMPLE_DIR.is_dir() else []


@dataclass(frozen=True)
class Source:
    """The CSV currently selected: a bundled sample or this session's upload."""

    name: str
    content: bytes
    key: str          # SHA-256 of the content


def current_source() -> Source | None:
    if st.session_state.source_kind == "upload":
        up = st.session_state.upload
        return None if up is None else Source(up["name"], up["bytes"], up["hash"])
    name = st.session_state.sample_name
    path = SAMPLE_DIR / name
    if not path.is_file():
        return None
    content = _read_sample_bytes(str(path))
    return Source(name, content, content_hash(content))


@st.cache_data(show_spinner=False)
def _read_sample_bytes(path: str) -> bytes:
    return Path(path).read_bytes()


# --------------------------------------------------------------------------- data
ROUNDING_CHOICES = (None, 4, 3, 2, 1, 0, -1)


@st.cache_data(show_spinner=False, max_entries=16)
def read_frame(source_key: str, _content: bytes) -> pd.DataFrame:
    """``core.data.read_csv`` of the selected bytes (cached by their SHA-256)."""
    return core_data.read_csv(_content, max_bytes=MAX_UPLOAD_MB * 2**20)


def mostly_numeric(series: pd.Series) -> bool:
    """A column read as numbers, or one whose cells are mostly numbers: treated as numeric
    so that a stray text cell is reported (row and value) rather than silently turning
    the column into labels. The user can still switch it to categorical."""
    if pd.api.types.is_bool_dtype(series):
        return False
    if pd.api.types.is_numeric_dtype(series):
        return True
    present = series.dropna()
    return bool(len(present)) and pd.to_numeric(present, errors="coerce").notna().mean() >= 0.5


@st.cache_data(show_spinner=False)
def sample_public_bounds() -> dict:
    """Public bounds shipped with the bundled samples (``sample_data/public_bounds.json``)."""
    path = SAMPLE_DIR / "public_bounds.json"
    return json.loads(path.read_text()) if path.is_file() else {}


def default_transform(frame: pd.DataFrame, column: str) -> dict:
    numeric = mostly_numeric(frame[column])
    known = None
    if st.session_state.source_kind == "sample":
        known = sample_public_bounds().get(st.session_state.sample_name, {}).get(column)
    # Without known public bounds nothing is read off the data: the fields start at [0, 1]
    # and the bounds come from the data (with a visible warning) until the user types them.
    lo, hi = (float(known[0]), float(known[1])) if known else (0.0, 1.0)
    return {"kind": "numeric" if numeric else "categorical", "log": False,
            "bounds_public": known is not None, "lo": lo, "hi": hi, "decimals": None}


def default_columns(frame: pd.DataFrame) -> list[str]:
    """The numeric column with the most distinct values (the one with ties and
    singletons worth protecting), else the first column."""
    numeric = [c for c in frame.columns if mostly_numeric(frame[c])]
    if not numeric:
        return [str(frame.columns[0])]
    return [max(numeric, key=lambda c: frame[c].nunique())]


def column_specs(columns: list[str], transforms: dict) -> tuple:
    """Hashable description of the ColumnSpecs (the cache key of :func:`prepared_data`)."""
    out = []
    for c in columns:
        t = transforms[c]
        if t["kind"] == "categorical":
            out.append((c, "categorical", False, None, None))
        else:
            bounds = (float(t["lo"]), float(t["hi"])) if t["bounds_public"] else None
            out.append((c, "numeric", bool(t["log"]), bounds, t["decimals"]))
    return tuple(out)


@st.cache_data(show_spinner=False, max_entries=32)
def prepared_data(source_key: str, _content: bytes, specs: tuple) -> core_data.PreparedData:
    """``core.data.prepare`` for the chosen columns and transforms (cached)."""
    frame = read_frame(source_key, _content)
    column_specs_ = [core_data.ColumnSpec(name, kind=kind, log=log, bounds=bounds, decimals=decimals)
                     for name, kind, log, bounds, decimals in specs]
    with warnings.catch_warnings():
        # The page states the weakened guarantee itself (PreparedData.any_bounds_from_data).
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        return core_data.prepare(frame, column_specs_)


@st.cache_data(show_spinner=False, max_entries=32)
def rounding_table(source_key: str, _content: bytes, column: str) -> pd.DataFrame:
    frame = read_frame(source_key, _content)
    return core_data.rounding_profile(frame[column], ROUNDING_CHOICES)


@dataclass(frozen=True)
class Selection:
    """The prepared confidential data of this session and the keys identifying it."""

    source: Source
    prepared: core_data.PreparedData
    key: str          # content hash + column specs: the cache key of everything downstream

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
    try:
        frame = read_frame(source.key, source.content)
        columns = ensure_columns(frame)
        specs = column_specs(columns, st.session_state.transforms)
        prepared = prepared_data(source.key, source.content, specs)
    except ValueError as exc:
        return None, str(exc)
    key = source.key[:16] + ":" + hashlib.sha256(repr(specs).encode()).hexdigest()[:16]
    return Selection(source, prepared, key), None


def require_selection(*, summary: bool = True) -> Selection:
    """The current selection, or stop the page with a message saying what to do.

    A missing upload is a prompt (``st.info``); anything ``core`` rejected is an error.
    ``summary=False`` leaves the sidebar summary to the page (drawn after its widgets).
    """
    selection, problem = load_selection()
    if problem:
        waiting_for_upload = st.session_state.source_kind == "upload" and current_source() is None
        (st.info if waiting_for_upload else st.error)(problem)
        sidebar_summary(None)
        st.stop()
    if summary:
        sidebar_summary(selection.profile())
    return selection


def form_field(name: str) -> dict:
    """A form widget's key, initialised from the persistent setting (forms allow no on_change)."""
    st.session_state[f"_w_{name}"] = st.session_state[name]
    return {"key": f"_w_{name}"}


def commit_form(fields) -> None:
    """Copy the submitted form widgets back to their persistent settings."""
    for name in fields:
        if f"_w_{name}" in st.session_state:
            st.session_state[name] = st.session_state[f"_w_{name}"]


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


def bind_transform(column: str, field: str) -> dict:
    """Like :func:`bind`, for one field of a column's transform settings."""
    wkey = f"_w_tf_{column}_{field}"
    st.session_state[wkey] = st.session_state.transforms[column][field]

    def keep():
        st.session_state.transforms[column][field] = st.session_state[wkey]

    return {"key": wkey, "on_change": keep}


def set_source_sample(name: str) -> None:
    st.session_state.source_kind = "sample"
    st.session_state.sample_name = name
    st.session_state.columns = None
    st.session_state.transforms = {}


def set_source_upload(name: str, content: bytes) -> str | None:
    """Keep an upload in this session if it parses; return an error message otherwise."""
    if len(content) > MAX_UPLOAD_MB * 2**20:
        return (f"{name} is {len(content) / 2**20:.1f} MiB, above the dashboard's limit of {MAX_UPLOAD_MB} MiB. "
                "Keep only the columns you need, or use the command line (python -m core release).")
    key = content_hash(content)
    try:
        read_frame(key, content)
    except ValueError as exc:
        return str(exc).replace("the uploaded data", repr(name))
    st.session_state.upload = {"name": name, "bytes": content, "hash": key}
    st.session_state.source_kind = "upload"
    st.session_state.columns = None
    st.session_state.transforms = {}
    return None


# --------------------------------------------------------------------------- privacy
def py_parameters(n_distinct: int) -> tuple[float, float]:
    """(σ, θ) of the selected regime (for σ < 0, θ = z·|σ| as SPEC §2 defines it)."""
    regime = st.session_state.regime
    if regime == "dp":
        return 0.0, float(st.session_state.theta)
    if regime == "py":
        return float(st.session_state.sigma_py), float(st.session_state.theta)
    alpha = float(st.session_state.alpha_dm)
    z = max(int(st.session_state.z_dm), n_distinct)
    return -alpha, z * alpha


@st.cache_data(show_spinner=False, max_entries=64)
def dp_delta_curves(table_key: str, _multiplicities: np.ndarray, n: int, theta: float, m: int,
                    eps_grid: tuple[float, ...]) -> dict:
    """σ = 0 curves of SPEC §3.1 on ``eps_grid``, plus the singleton term T₁."""
    eps = np.asarray(eps_grid)
    mult = np.asarray(_multiplicities)
    return {
        "instance": privacy.instance_delta(mult, 0.0, theta, m, eps),
        "tight": privacy.tight_instance_delta(mult, theta, m, eps),
        "global": privacy.global_delta(n, theta, m, eps),
        "simple": privacy.global_delta_simple_bound(n, theta, m, eps),
        # δ*(ε) equals the singleton term exactly for ε ≥ log(1 + m) (SPEC §3.1), so its
        # value at ε = ∞ is T₁ = m/(m + θ + n − 1), computed by core.
        "singleton_term": float(privacy.global_delta(n, theta, m, np.inf)),
    }


@st.cache_data(show_spinner=False, max_entries=256)
def dp_point_guarantees(table_key: str, _multiplicities: np.ndarray, n: int, theta: float, m: int,
                        eps: float) -> dict:
    mult = np.asarray(_multiplicities)
    return {
        "instance": float(privacy.instance_delta(mult, 0.0, theta, m, eps)),
        "tight": float(privacy.tight_instance_delta(mult, theta, m, eps)),
        "global": float(privacy.global_delta(n, theta, m, eps)),
        "simple": float(privacy.global_delta_simple_bound(n, theta, m, eps)),
    }


@st.cache_data(show_spinner=False, max_entries=64)
def dm_delta_curve(table_key: str, _multiplicities: np.ndarray, sigma: float, theta: float, m: int,
                   eps_grid: tuple[float, ...], eps: float) -> dict:
    """σ < 0 (SPEC §3.3): the δ bound on the grid and at ε, and the pure-DP ε's."""
    mult = np.asarray(_multiplicities)
    return {
        "curve": privacy.instance_delta(mult, sigma, theta, m, np.asarray(eps_grid)),
        "at_eps": float(privacy.instance_delta(mult, sigma, theta, m, eps)),
        "pure_eps_instance": privacy.dirichlet_multinomial_pure_epsilon(mult, -sigma, m, instance=True),
        "pure_eps_global": privacy.dirichlet_multinomial_pure_epsilon(mult, -sigma, m, instance=False),
    }


def progress_bar(text: str):
    """A progress bar and the ``progress(fraction, message)`` callback core functions take.

    Created *inside* the cached functions below: Streamlit replays the elements a cached
    function created on a cache hit, and cannot replay calls on an element created
    outside it.
    """
    bar = st.progress(0.0, text=text)
    return bar, (lambda fraction, message: bar.progress(min(1.0, max(0.0, fraction)), text=message))


@st.cache_data(show_spinner=False, max_entries=32)
def py_monte_carlo(table_key: str, _multiplicities: np.ndarray, sigma: float, theta: float, m: int,
                   eps_grid: tuple[float, ...], n_mc: int, seed: int) -> dict:
    """σ ∈ (0, 1) (SPEC §3.2): Monte Carlo δ with its standard error and upper bound."""
    bar, progress = progress_bar("Monte Carlo estimate of δ_x(ε)…")
    res = privacy.monte_carlo_delta(np.asarray(_multiplicities), sigma, theta, m, np.asarray(eps_grid),
                                    n_mc=n_mc, rng=np.random.default_rng(seed), progress=progress)
    bar.empty()
    return {"eps": res.eps, "estimate": res.estimate, "std_error": res.std_error, "upper": res.upper,
            "n_mc": res.n_mc, "n_types": res.n_types, "worst_type": list(res.worst_type)}


@st.cache_data(show_spinner=False, max_entries=32)
def size_curves(table_key: str, _multiplicities: np.ndarray, n: int, theta: float, delta: float,
                eps_grid: tuple[float, ...]) -> dict:
    """The ε-vs-m curves (global Theorem 2 and instance-level) and m_sing (SPEC §3.1)."""
    eps = np.asarray(eps_grid)
    return {
        "global": privacy.synthetic_size_curve(n, theta, eps, delta),
        "instance": privacy.synthetic_size_curve(n, theta, eps, delta, multiplicities=np.asarray(_multiplicities)),
        "m_sing": privacy.singleton_limit(n, theta, delta),
    }


@st.cache_data(show_spinner=False, max_entries=32)
def feasible_theta_m(n: int, eps: float, delta: float, theta_grid: tuple[float, ...]) -> np.ndarray:
    """m*(ε, δ; θ) for each θ of the grid (inverse calibration, σ = 0, Theorem 2)."""
    return np.array([privacy.max_synthetic_size(n, t, eps, delta) for t in theta_grid], dtype=np.int64)


def theta_grid(n: int, size: int = 30) -> tuple[float, ...]:
    """θ from 0.1 to 2n on a log grid: m_sing grows with θ + n − 1, so θ matters once it
    is comparable with n."""
    return tuple(float(t) for t in np.geomspace(0.1, max(2.0 * n, 10.0), size))


@st.cache_data(show_spinner=False, max_entries=256)
def max_size_at(n: int, theta: float, eps: float, delta: float) -> int:
    return int(privacy.max_synthetic_size(n, theta, eps, delta))


def feasible_region(n: int, eps: float, delta: float, theta: float) -> tuple[tuple[float, ...], np.ndarray]:
    """The θ grid with the selected θ inserted, and m*(ε, δ; θ) on it. The fixed grid is
    cached per (n, ε, δ), so moving θ computes one more m* only."""
    grid = theta_grid(n)
    m_star = feasible_theta_m(n, eps, delta, grid)
    if theta in grid:
        return grid, m_star
    pos = int(np.searchsorted(grid, theta))
    return (grid[:pos] + (float(theta),) + grid[pos:],
            np.insert(m_star, pos, max_size_at(n, float(theta), eps, delta)))


# --------------------------------------------------------------------------- widgets
def sidebar_summary(profile: dict | None) -> None:
    """Dataset and settings currently selected, on every page."""
    with st.sidebar:
        st.markdown("### Current selection")
        if profile is None:
            st.caption("No data selected yet: choose a dataset on the data page.")
            return
        st.markdown(f"**Data:** {profile['source']}  \n**Columns:** {', '.join(profile['columns'])}  \n"
                    f"n = {profile['n']:,}, k = {profile['k']:,}, singletons = {profile['singletons']:,}")
        sigma, theta = py_parameters(profile["k"])
        st.markdown(f"**Mechanism:** {REGIMES[st.session_state.regime]}  \n"
                    f"σ = {sigma:g}, θ = {theta:g}, m = {st.session_state.m:,}  \n"
                    f"ε = {st.session_state.eps:g}, δ target = {st.session_state.delta:g}")


def curator_only_note() -> None:
    st.warning("Curator-only view: this shows confidential data next to synthetic data and is "
               "not itself private. Do not publish it.", icon="🔒")


# --------------------------------------------------------------------------- release
@st.cache_data(show_spinner=False, max_entries=16)
def pypp_synthetic(selection_key: str, _prepared: core_data.PreparedData, sigma: float, theta: float,
                   m: int, seed: int) -> dict:
    """One PYPP release (SPEC §2) in original units, for an explicit seed.

    Returns ``{"frame": DataFrame (m rows), "is_new": bool array (m,), "n_new_values": K}``.
    """
    table = _prepared.table
    release = pypp_release(table.atoms, table.counts, sigma, theta, m, np.random.default_rng(seed),
                           base=_prepared.bases)
    return {"frame": _prepared.to_original(release.values), "is_new": release.is_new,
            "n_new_values": release.n_new_values}


@st.cache_data(show_spinner=False, max_entries=16)
def confidential_original(selection_key: str, _prepared: core_data.PreparedData) -> pd.DataFrame:
    """The prepared confidential data in original units (after rounding and clipping)."""
    return _prepared.to_original(_prepared.values)


def csv_bytes(frame: pd.DataFrame) -> bytes:
    return frame.to_csv(index=False).encode("utf-8")


def missing_core(*names: str) -> list[str]:
    """Which of the named ``core`` attributes ("module.function") do not exist yet."""
    import importlib

    missing = []
    for name in names:
        module, _, attr = name.rpartition(".")
        try:
            mod = importlib.import_module(f"core.{module}")
        except ImportError:
            missing.append(name)
            continue
        if attr and not hasattr(mod, attr):
            missing.append(name)
    return missing


# --------------------------------------------------------------------------- synthetic views
def numeric_columns(prepared: core_data.PreparedData) -> list[str]:
    return [str(c.name) for c in prepared.column_info if c.kind == "numeric"]


def overlay_figure(confidential: pd.DataFrame, synthetic: pd.DataFrame, column: str, label: str = "synthetic (PYPP)"):
    """Histogram + KDE overlay of one numeric column (KDEs from ``core.utility``)."""
    x = confidential[column].to_numpy(float)
    z = synthetic[column].to_numpy(float)
    kde = None
    grid = None
    try:
        grid = utility.kde_grid(x, z)
        kde = {"confidential": utility.kde_on_grid(x, grid), label: utility.kde_on_grid(z, grid)}
    except ValueError:
        # A KDE needs two distinct values; the histograms alone still say what happened.
        kde, grid = None, None
    return plots.distribution_overlay_figure({"confidential": x, label: z}, kde_grid=grid, kde=kde,
                                             title=f"{column}: confidential vs synthetic", x_title=str(column))


@st.cache_data(show_spinner=False, max_entries=16)
def synthetic_summary(release_key: tuple, _confidential: pd.DataFrame, _synthetic: pd.DataFrame,
                      columns: tuple[str, ...]) -> pd.DataFrame:
    """``core.utility.summary_table`` of the confidential data and the release (original units)."""
    return utility.summary_table(_confidential, {"PYPP": _synthetic}, columns=list(columns))


def command_line(selection: Selection, sigma: float, theta: float, m: int, eps: float, delta: float,
                 seed: int) -> str | None:
    """The ``python -m core release`` command that regenerates this release, or ``None``
    when the transforms chosen in the app cannot be expressed with its options."""
    import shlex

    from core.cli import PROG

    source = selection.source
    data_path = (f"sample_data/{source.name}" if st.session_state.source_kind == "sample" else source.name)
    args = ["release", data_path]
    infos = selection.prepared.column_info
    numeric = [c for c in infos if c.kind == "numeric"]
    logs = {bool(c.spec.log) for c in numeric}
    public = {not c.bounds_from_data for c in numeric}
    decimals = [c.spec.decimals for c in numeric]
    if len(logs) > 1 or len(public) > 1 or (any(d is None for d in decimals) and any(d is not None for d in decimals)):
        return None
    for c in infos:
        args += ["--categorical" if c.kind == "categorical" else "--column", str(c.name)]
    args += ["--sigma", repr(float(sigma)), "--theta", repr(float(theta)), "--m", str(int(m)),
             "--eps", repr(float(eps)), "--delta", repr(float(delta))]
    if numeric and public == {True}:
        for c in numeric:
            args += ["--bounds", repr(float(c.bounds[0])), repr(float(c.bounds[1]))]
    if logs == {True}:
        args.append("--log")
    for d in decimals:
        if d is not None:
            args += ["--decimals", str(int(d))]
    args += ["--seed", str(int(seed)), "--out", "synthetic.csv", "--report", "report.json"]
    return shlex.join([*PROG.split(), *args])


@st.cache_data(show_spinner="Writing the release bundle…", max_entries=8)
def release_bundle(release_key: tuple, _selection: Selection, _synthetic: pd.DataFrame, _summary: pd.DataFrame | None,
                   _figures: dict, sigma: float, theta: float, m: int, eps: float, delta: float, seed: int,
                   n_new_values: int) -> bytes:
    """Zip of the reproducible release: report.json (``core.report.release_report``, the
    same content as the command line's report), synthetic.csv, summary.csv, the figures
    as standalone HTML and command.txt."""
    import zipfile

    prepared = _selection.prepared
    command = command_line(_selection, sigma, theta, m, eps, delta, seed)
    report = core_report.release_report(
        multiplicities=prepared.table.counts, sigma=sigma, theta=theta, m=m, eps=eps, delta=delta, seed=seed,
        columns=[str(c) for c in prepared.columns], transforms=prepared.describe(),
        data_source=_selection.source.name, bounds_from_data=prepared.any_bounds_from_data,
        command=command, n_new_values=n_new_values)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("report.json", json.dumps(report, indent=2, ensure_ascii=False) + "\n")
        zf.writestr("synthetic.csv", csv_bytes(_synthetic))
        if _summary is not None:
            zf.writestr("summary.csv", csv_bytes(_summary))
        for name, fig in _figures.items():
            zf.writestr(f"figures/{name}.html", fig.to_html(include_plotlyjs=True, full_html=True))
        zf.writestr("command.txt", (command or "# The transforms chosen in the dashboard (a different log, bounds "
                                    "or rounding choice per column) cannot be expressed with the command "
                                    "line's options; report.json records them.") + "\n")
    return buffer.getvalue()


# --------------------------------------------------------------------------- comparison
CEILING_LABEL = "Bootstrap (no privacy)"
SWEEP_EPS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0)


def comparison_data(prepared: core_data.PreparedData) -> np.ndarray | None:
    """The confidential data on [0, 1]^d (public scaling), or ``None`` if a column is
    categorical or not scaled (the histogram baselines need the unit box)."""
    if any(c.kind != "numeric" or not c.spec.scale for c in prepared.column_info):
        return None
    return np.asarray(prepared.values, dtype=float)


@st.cache_data(show_spinner=False, max_entries=16)
def calibration(selection_key: str, n: int, d: int, eps: float, delta: float, m: int | str, theta: float,
                bins: int, bounds_from_data: bool):
    """``core.compare.calibrate`` (cached)."""
    return compare.calibrate(n, eps, delta, m, theta=theta, d=d, bins=bins, bounds_from_data=bounds_from_data)


@st.cache_data(show_spinner=False, max_entries=8)
def comparison_runs(selection_key: str, _data: np.ndarray, _calibration, calibration_key: tuple, runs: int,
                    seed: int, columns: tuple[str, ...]) -> pd.DataFrame:
    """``core.compare.run_comparison`` with ``default_rng(seed)`` (cached), with a progress bar."""
    bar, progress = progress_bar("Running the mechanisms…")
    out = compare.run_comparison(_data, _calibration, runs=runs, rng=np.random.default_rng(seed),
                                 progress=progress, columns=list(columns))
    bar.empty()
    return out


@st.cache_data(show_spinner=False, max_entries=8)
def one_release_per_mechanism(selection_key: str, _data: np.ndarray, _calibration, calibration_key: tuple,
                              seed: int) -> dict[str, np.ndarray]:
    """One release of every calibrated mechanism (for the KDE overlays), label → (m, d)."""
    rng = np.random.default_rng([seed, 1])
    out = {}
    for mech in _calibration.mechanisms:
        z = np.asarray(mech.release(_data, _calibration.m, rng), dtype=float)
        out[mech.label] = z.reshape(z.shape[0], -1)
    return out


@st.cache_data(show_spinner=False, max_entries=4)
def sweep_runs(selection_key: str, _data: np.ndarray, eps_values: tuple[float, ...], delta: float, m: int | str,
               theta: float, bins: int, runs: int, seed: int, columns: tuple[str, ...]) -> pd.DataFrame:
    """``core.compare.sweep_comparison`` (the utility frontier), cached, with a progress bar."""
    bar, progress = progress_bar("Sweeping ε…")
    out = compare.sweep_comparison(_data, list(eps_values), delta, m, theta=theta, runs=runs,
                                   rng=np.random.default_rng(seed), bins=bins, progress=progress,
                                   columns=list(columns))
    bar.empty()
    return out


def comparison_overlay(data: np.ndarray, releases: dict[str, np.ndarray], j: int, column: str):
    """Histogram + KDE overlay of every mechanism's release on the scaled column ``j``."""
    x = data.reshape(data.shape[0], -1)[:, j]
    samples = {"confidential": x}
    samples.update({label: z[:, j] for label, z in releases.items()})
    try:
        grid = utility.kde_grid(*samples.values())
        kde = {}
        for label, v in samples.items():
            try:
                kde[label] = utility.kde_on_grid(v, grid)
            except ValueError:
                pass  # a release with a single distinct value has no KDE
    except ValueError:
        grid, kde = None, None
    return plots.distribution_overlay_figure(samples, kde_grid=grid, kde=kde,
                                             title=f"{column} (scaled to [0, 1]): one release per mechanism",
                                             x_title=f"{column} (scaled)")
