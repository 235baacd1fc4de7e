"""Session-state settings of the dashboard and the binding of widgets to them.

Settings live under plain keys (``"eps"``, ``"m"``, …) that no widget owns, so they
survive page switches (Streamlit deletes the state of a widget that is not rendered on
the current page). A widget is bound to a setting with :func:`bind`: it gets its own key
``"_w_<name>"``, is initialised from the setting and writes back on change.

Every bounded setting has one admissible range, :data:`RANGES`, used both by the widget
that edits it and by :func:`init_state`, which clamps the stored value into it before
any page renders: a value set elsewhere (a stale session, a test, a hand-edited URL
state) can never make a widget raise, and the computations see the value the widget
shows.
"""

from __future__ import annotations

import math
from typing import Any

import streamlit as st

from core import privacy
from core.validation import MAX_RELEASE_SIZE

#: Upload limit in megabytes (10**6 bytes). Streamlit's uploader counts a megabyte as
#: 10**6 bytes in the browser (2**20 on Windows) and its server accepts up to
#: ``server.maxUploadSize`` × 2**20 bytes, so the smallest of those — 10**6 per MB — is
#: the app's own limit: the widget, ``.streamlit/config.toml`` and the app's message agree.
#:
#: Why 1000 MB: the reference machine has 24 GiB of RAM and 2 cores and
#: serves several sessions at once. A file above core.data.FULL_READ_MAX_BYTES never
#: becomes a frame of its rows: the session keeps its bytes (one copy; the server's copy
#: is dropped after upload), a bounded head and the frequency table, and DuckDB
#: aggregates within its own 1 GB memory limit. While an upload arrives Streamlit holds
#: about two more copies, so one 1 GB upload peaks near 3-4 GB; four sessions doing so at
#: once stay well inside 24 GiB. A 1 GB CSV holds ~10^8 short rows; larger files go
#: through the command line, which streams paths (and globs) with no size limit.
MAX_UPLOAD_MB = 1000
MAX_UPLOAD_BYTES = MAX_UPLOAD_MB * 10**6

#: What an upload may become once read, checked before it is read
#: (:func:`core.data.check_read_limits`; docs/serving.md §2): a few kilobytes of Parquet can
#: hold 10^8 equal values, and 1.5 MB of gzip decompress to 500 MB. At most 10^8 rows — what a
#: 1 GB CSV of short rows holds, and what DuckDB counts in about 12 s on this machine; every
#: read of an upload streams (DuckDB reads Parquet row groups and gzip text as they come), so
#: memory grows with the distinct values, and the limit bounds the time. A gzip-compressed
#: CSV (the uploader does not offer it, but a renamed one is read) may decompress to at most
#: 128 MiB: text in another encoding than UTF-8 is transcoded in memory — the text, its
#: decoding (at most 2 bytes per decompressed byte for the encodings detected) and its UTF-8
#: copy (at most 3), so at most 6 bytes per decompressed byte: under 1 GiB. The same 128 MiB
#: bounds a Parquet file's column data, uncompressed, as its footer states it (one 200 MiB
#: text cell fits in 7 KB).
#: Larger files go through the command line, which has neither limit.
MAX_ROWS = 10**8
MAX_DECOMPRESSED_BYTES = 2**27

#: The most distinct values (distinct rows of the released columns, cells as read) an upload
#: may have on the lean path (``core.data.distinct_values(max_distinct=...)``): DuckDB counts
#: them exactly, within its own memory limit, before one reaches the session. Memory grows
#: with them, not with the rows: measured on this machine (benchmarks/bench_memory_cardinality.py),
#: the session's scan, frequency table and distinct rows in original units take about 300-400
#: bytes per distinct value at their peak (10^7 distinct numbers: 3.3 GB and a minute of CPU;
#: a 289 MB CSV of 3·10^7 took a server past 6.5 GB). At 10^6 that is about 0.4 GB and a few
#: seconds, so one upload at the limit stays inside the README's 3-4 GB per session. The
#: exact full read (CSV up to core.data.FULL_READ_MAX_BYTES) holds fewer than 2·10^5 distinct
#: values by its size. Above the limit: coarser columns, or the command line, which has none.
MAX_DISTINCT = 10**6

#: The regimes the Privacy page offers, by key, with the words core uses for them.
REGIMES = {key: regime.label for key, regime in privacy.REGIMES.items()}
# down to 1e-9: a strong verdict needs n·δ ≤ 0.01, i.e. δ ≤ 7.4e-7 on the 13 501-record sample
DELTA_OPTIONS = (1e-9, 1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 0.01, 0.02, 0.05, 0.1)
SEED_MAX = 2**32 - 1
#: θ (the strength of the Dirichlet process and Pitman–Yor predictive): the one range of the
#: Privacy page's θ slider, its inverse calibration's θ grid and the Release planner's θ grid.
#: θ matters once it is comparable with n (m_sing grows with θ + n − 1, docs/mathematics.md
#: §3.1), so it reaches 10^6; the widgets move on a log scale (:func:`log_grid`).
THETA_RANGE = (0.1, 1e6)
#: Mantissas of the log grids the sliders of θ and m move on: ten steps per decade, about
#: 25 % apart (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8 times a power of ten).
LOG_STEPS = (1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0)

DEFAULTS: dict[str, Any] = {
    "source_kind": "sample",       # "sample" | "upload"
    "sample_name": "cps_earnings.csv",
    "upload": None,                # {"name", "bytes", "hash"} of this session's last good upload
    "counts_column": None,         # the upload is a frequency table: its counts column (None: rows are records)
    "settings_chosen_from_data": False,  # θ or α, m and grid steps loaded from the Release planner (recipe)
    # the mechanism loaded from the planner's candidates side by side, whose utility was measured on the
    # confidential data (recipe; docs/verdicts.md §7)
    "mechanism_chosen_from_data": False,
    "coarsening": (),              # tuple of core.data.ColumnTransform, applied before prepare (advisor)
    "read_options": {},            # reader choices for the current source (delimiter, header, …)
    "columns": None,               # chosen columns (None: default for the dataset)
    "transforms": {},              # column -> {"kind", "log", "bounds_public", "lo", "hi", "decimals"}
    "regime": "dp",
    "sigma_py": 0.25,              # σ when regime == "py"
    "alpha_dm": 1.0,               # |σ| when regime == "dm"
    "z_dm": 0,                     # public categories when regime == "dm" (0: use k)
    "theta": 2.0,
    "m": 100,
    "releases_planned": 1,         # k: independent releases planned from the same data (Synthetic data page)
    "eps": 2.5,
    "delta": 0.01,
    "n_mc": 5000,
    "mc_seed": 1,
    # The release seed has no default: each press of "Generate release" draws a fresh one from the OS's
    # CSPRNG (ui.release.fresh_seed), unless the curator types a recorded one here to replay it (a string:
    # a seed has up to 128 bits, more than a number box holds). The seed itself lives in release_params and
    # in the CONFIDENTIAL curator record only.
    "release_seed_replay": "",
    # Evaluation seeds (simulations that are never a release, never offered as one): each page its own key.
    "compare_seed": 12345,         # the Compare page's runs
    "peers_chosen": (),            # the Compare page's chosen peers (kept across reruns and page switches)
    "peers_size": "both",          # the peers' release size: "both", "m" (the common m) or "n"
    "bins": 20,
    "runs": 100,
}

#: Admissible range (lo, hi) of each bounded numeric setting: the widget's range too.
RANGES: dict[str, tuple[float, float]] = {
    "sigma_py": (0.01, 0.95),
    "alpha_dm": (0.05, 50.0),
    "theta": THETA_RANGE,
    # the hard limit of one release (core.validation); the Privacy page offers m_range(n)
    "m": (1, MAX_RELEASE_SIZE),
    "releases_planned": (1, 1000),
    "eps": (0.05, 12.0),
    "n_mc": (500, 200_000),
    "compare_seed": (0, SEED_MAX),
    "bins": (2, 100),
    "runs": (5, 200),
    # Informativity page (its own experiment settings)
    "inf_p": (0.001, 1.0),
    "inf_population": (10, 2_000_000),
    "inf_population_seed": (0, SEED_MAX),
    "inf_n_min": (2, 10**8),
    "inf_n_max": (2, 10**8),
    "inf_points": (2, 30),
    "inf_runs": (2, 5000),
    "inf_seed": (0, SEED_MAX),
    "inf_eps": (0.01, 50.0),
    "inf_delta": (1e-12, 0.5),
    "inf_c": (1e-6, 1e6),
    "inf_a": (0.0, 2.0),
    "inf_theta": (0.01, 1e6),
    # Inference page
    "post_draws": (100, 100_000),
    "post_seed": (0, SEED_MAX),
    "rep_replicates": (2, 10_000),
    "rep_draws": (100, 100_000),
    "rep_seed": (0, SEED_MAX),
}
#: Settings that take one of a list of values.
OPTIONS: dict[str, tuple] = {
    "regime": tuple(REGIMES),
    "delta": DELTA_OPTIONS,
    "source_kind": ("sample", "upload"),
    "inf_source": ("dyadic", "data"),
    "inf_rule": ("privacy", "power"),
    "peers_size": ("both", "m", "n"),
}


def log_grid(lo, hi, *, integer: bool = False, keep=None) -> list:
    """The values a log-scale slider offers between ``lo`` and ``hi`` (both included):
    :data:`LOG_STEPS` times each power of ten, every whole number up to 10 when ``integer``,
    and ``keep`` (the setting's own value, so that a value set elsewhere, e.g. loaded by the
    Release planner, is shown as it is), sorted."""
    decades = range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)
    values = {float(f"{step * 10.0 ** d:.6g}") for d in decades for step in LOG_STEPS}
    if integer:
        values = {int(round(v)) for v in values} | set(range(int(lo), min(int(hi), 10) + 1))
    values = {v for v in values if lo <= v <= hi} | {lo, hi}
    if keep is not None:
        values.add(int(keep) if integer else float(keep))
    return sorted(values)


def m_range(n: int) -> tuple[int, int]:
    """The release sizes the Privacy page offers for data of ``n`` records under the chosen
    regime: from 1 to the largest m that some setting the pages offer gives a global
    guarantee for, at most :data:`core.validation.MAX_RELEASE_SIZE`.

    σ = 0 (and σ > 0, which has no global guarantee, on the same scale): the singleton limit
    m_sing = ⌊δ(θ + n − 1)/(1 − δ)⌋ at the largest θ and δ offered, beyond which no ε gives
    a guarantee (docs/mathematics.md §3.1): about n/9 + 10^5. σ < 0: the largest pure m,
    ⌊(e^ε − 1)·α⌋ at the largest ε and α offered (§3.3.1), whatever n."""
    cap = RANGES["m"][1]
    if regime() is privacy.DIRICHLET_MULTINOMIAL:
        alpha = RANGES["alpha_dm"][1]
        hi = privacy.DIRICHLET_MULTINOMIAL.largest_m(n, -alpha, alpha, RANGES["eps"][1], None, m_cap=cap)
    else:
        hi = privacy.DIRICHLET_PROCESS.singleton_limit(n, THETA_RANGE[1], max(DELTA_OPTIONS))
    return RANGES["m"][0], int(min(max(hi, 1), cap))


def clamp(value, lo, hi):
    """``value`` moved into ``[lo, hi]`` with the type of the bounds (NaN or junk: ``lo``)."""
    integer = isinstance(lo, int) and isinstance(hi, int)
    try:
        x = float(value)
    except (TypeError, ValueError):
        x = math.nan
    if math.isnan(x):
        x = lo
    x = min(max(x, lo), hi)
    return int(round(x)) if integer else float(x)


def nearest_option(value, options: tuple):
    """``value`` if it is one of ``options``; else the numerically nearest one, else the first."""
    if value in options:
        return value
    try:
        return min(options, key=lambda o: abs(math.log(float(o)) - math.log(float(value))))
    except (TypeError, ValueError):
        return options[0]


def set_setting(name: str, value: Any) -> None:
    """Set the persistent setting ``name`` (a button's callback), as a hand change: a setting the
    planner chose is then no longer the planner's (:data:`PLANNED_SETTINGS`)."""
    st.session_state[name] = value
    sanitise(name)
    if name in PLANNED_SETTINGS:
        st.session_state.settings_chosen_from_data = False
    if name == MECHANISM_SETTING:
        st.session_state.mechanism_chosen_from_data = False


def sanitise(name: str) -> None:
    """Move the setting ``name`` into its admissible range or option list, in place."""
    value = st.session_state[name]
    if name in RANGES:
        fixed = clamp(value, *RANGES[name])
    elif name in OPTIONS:
        fixed = nearest_option(value, OPTIONS[name])
    else:
        return
    if fixed != value or type(fixed) is not type(value):
        st.session_state[name] = fixed


def init_state(defaults: dict[str, Any] = DEFAULTS) -> None:
    """Put every default into the session once and clamp every bounded setting
    (idempotent; called at the top of every run and by pages with settings of their own)."""
    for key, value in defaults.items():
        if key not in st.session_state:
            st.session_state[key] = value.copy() if isinstance(value, dict) else value
    for key in defaults:
        sanitise(key)


#: Settings the Release planner chooses: a change by hand ends the planner's say over them,
#: so that the public report does not call hand-set values "chosen with the planner". Each
#: numeric column's public grid step (a pure option's) is one too: ``ui.selection.grid_setter``.
PLANNED_SETTINGS = ("theta", "m", "regime", "sigma_py", "alpha_dm", "z_dm")
#: The Synthetic data page's mechanism (``ui.peer_release.MECHANISM_KEY``): chosen by hand, it ends
#: ``mechanism_chosen_from_data`` (a θ or m changed by hand does not: the mechanism was still chosen
#: after the comparison).
MECHANISM_SETTING = "release_mechanism"


def _keep(name: str) -> None:
    st.session_state[name] = st.session_state[f"_w_{name}"]
    if name in PLANNED_SETTINGS:
        st.session_state.settings_chosen_from_data = False
    if name == MECHANISM_SETTING:   # a mechanism chosen by hand is no longer the comparison's choice
        st.session_state.mechanism_chosen_from_data = False


def bind(name: str) -> dict:
    """Keyword arguments that bind a widget to the persistent setting ``name``
    (clamped into its range first, so the widget always accepts it)."""
    sanitise(name)
    st.session_state[f"_w_{name}"] = st.session_state[name]
    return {"key": f"_w_{name}", "on_change": _keep, "args": (name,)}


def bind_transform(column: str, field: str, *, none_as: Any = None) -> dict:
    """Like :func:`bind`, for one field of a column's transform settings.

    ``none_as`` stands for ``None`` in the widget: a selectbox whose value is ``None``
    shows its placeholder ("Choose an option") instead of the option meaning "none".
    """
    def store(value):
        settings = st.session_state.transforms.get(column)
        # A widget of a column no longer chosen can still report a change in the run that
        # replaces the file (its transforms were reset): nothing to store then.
        if settings is not None:
            settings[field] = value

    return bind_value(f"_w_tf_{column}_{field}", st.session_state.transforms[column][field], store,
                      none_as=none_as)


def bind_value(widget_key: str, value: Any, store, *, none_as: Any = None) -> dict:
    """Keyword arguments that show ``value`` in a widget and pass each change to ``store``."""
    st.session_state[widget_key] = none_as if value is None else value

    def keep():
        chosen = st.session_state[widget_key]
        store(None if chosen == none_as else chosen)

    return {"key": widget_key, "on_change": keep}


def form_field(name: str) -> dict:
    """A form widget's key, initialised from the persistent setting (forms allow no on_change)."""
    sanitise(name)
    st.session_state[f"_w_{name}"] = st.session_state[name]
    return {"key": f"_w_{name}"}


def commit_form(fields) -> None:
    """Copy the submitted form widgets back to their persistent settings."""
    for name in fields:
        if f"_w_{name}" in st.session_state:
            st.session_state[name] = st.session_state[f"_w_{name}"]


def regime() -> privacy.Regime:
    """The regime chosen on the Privacy page (:mod:`core.privacy.regimes`)."""
    return privacy.regime_of_key(st.session_state.regime)


def mechanism_parameters(n_distinct: int, public_domain: int | None = None) -> tuple[float, float]:
    """(σ, θ) of the selected regime. For σ < 0 the strength is θ = z·|σ| with z ≥ k public
    categories, the parameterisation of the Dirichlet–multinomial case (docs/mathematics.md)."""
    if regime() is privacy.DIRICHLET_MULTINOMIAL:
        alpha = float(st.session_state.alpha_dm)
        return -alpha, public_categories(n_distinct, public_domain) * alpha
    sigma = float(st.session_state.sigma_py) if regime() is privacy.PITMAN_YOR else 0.0
    return sigma, float(st.session_state.theta)


def release_spec(n: int, n_distinct: int, public_domain: int | None = None) -> privacy.ReleaseSpec:
    """The release the settings describe, for data of ``n`` records and ``n_distinct`` distinct
    values (and ``public_domain``, the size z of the columns' public domain when every column has
    one): regime parameters, m, the ε at which it is stated and the δ target. Every page
    computes from this one frozen value (and caches by it)."""
    sigma, theta = mechanism_parameters(n_distinct, public_domain)
    return privacy.ReleaseSpec(sigma=sigma, theta=theta, m=int(st.session_state.m), n=int(n),
                               eps=float(st.session_state.eps), delta=float(st.session_state.delta),
                               releases=int(st.session_state.releases_planned))


def public_categories(n_distinct: int, public_domain: int | None = None) -> int:
    """z of the Dirichlet–multinomial regime: the columns' public domain when every column has
    one (docs/mathematics.md §3.3.1), else the size the user states, at least k."""
    if public_domain is not None:
        return int(public_domain)
    return max(int(st.session_state.z_dm), int(n_distinct))
