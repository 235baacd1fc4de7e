"""The privacy ledger in the dashboard: which ledger, who releases, under which dataset name,
what remains, and the public downloads that charge it (docs/audit.md §8).

* Which ledger: :func:`location` — :func:`core.ledger.resolve_location`, the same rules as the
  command line (``BNP_SYNTH_LEDGER``, the configuration file, or the ``[ledger] location`` of
  ``.streamlit/secrets.toml``, else ``~/.local/share/bnp-synth/ledger.sqlite``), so a
  curator's app and scripts share one budget. Opened once per server process and location
  (:func:`ledger`).
* Who: :func:`who` — the login's e-mail (or name), else the identity a trusted proxy sent,
  else ``"local user"``.
* Under which name: :func:`dataset_name_input` — by default the bundled sample's file name, or
  ``"upload: <columns>"`` for an upload (the name is published in ``release.json``, an upload's
  file name never is: :func:`default_name`), editable; kept per file for the session.
* The gate: :func:`public_builds` gives the two public downloads (the zip and the synthetic
  CSV) as functions Streamlit runs on the click (deferred ``data=``). A click reserves the
  release in the ledger — one transaction that re-reads the spend and refuses one over
  budget —, builds the public zip with the release's ``ledger`` block, completes the
  reservation with the zip's SHA-256 and only then hands out the bytes. Nothing public is
  stored or served before that.

Same release, one charge: the first click charges the drawn release (its recipe, secret seed
included) to the dataset; the session remembers it (``st.session_state["ledger_published"]``,
keyed by the release and the dataset name), and every later click of either download of the
*same* drawn release, in this session, rebuilds the same bytes without charging again. A new
press of "Generate release" is a new release and is charged; another session (a second tab)
is another curator's click and is charged too. A refused click (over budget since the page
ran: another tab spent it, a changed dataset) raises, so Streamlit hands out nothing and says
"Failed to generate file for download" under the button; the reason is kept
(``st.session_state["ledger_refusals"]``) and shown by the page at its next run.
"""

from __future__ import annotations

import dataclasses
import hashlib
import threading
from collections.abc import Callable, Mapping
from pathlib import Path

import streamlit as st

from core import ledger as core_ledger
from core.release import bundle as core_bundle
from core.release import recipe as core_recipe
from core.formatting import format_lower, format_upper
from core.release.gate import spec_of_public_report

from . import access, downloads
from .selection import Selection, session_cache
from .text import literal

#: Session keys: the dataset name per file, the releases already charged, the refusals of clicks.
NAMES_KEY, PUBLISHED_KEY, REFUSALS_KEY = "ledger_names", "ledger_published", "ledger_refusals"
#: The session key of the dataset name the Synthetic data page used last (the Ledger page's default).
CURRENT_KEY = "ledger_current_dataset"
NAME_WIDGET = "_w_ledger_dataset"
ACCEPT_CHANGED_WIDGET = "ledger_accept_changed"
#: Who releases when the app has no login and no trusted proxy.
LOCAL_USER = "local user"
LEDGER_PAGE = "app_pages/ledger.py"
#: Longest dataset name the ledger stores (core.ledger.store.MAX_NAME).
MAX_NAME = 200

#: One public build at a time in this server process: a session's two buttons clicked at once
#: must not both find the release uncharged and charge it twice (the ledger serialises
#: different processes itself).
_PUBLISH_LOCK = threading.Lock()


def config() -> Mapping | None:
    """The ``[ledger]`` section of ``.streamlit/secrets.toml``, or ``None`` (then the
    configuration file of :mod:`core.ledger.location` is read)."""
    try:
        return st.secrets["ledger"] if "ledger" in st.secrets else None
    except FileNotFoundError:   # no secrets file: Streamlit's StreamlitSecretNotFoundError subclasses it
        return None


def location() -> str:
    """Where this app's ledger lives (:func:`core.ledger.resolve_location`, shared with the CLI)."""
    return core_ledger.resolve_location(config=config())


@st.cache_resource(show_spinner=False, max_entries=4)
def _open(where: str) -> core_ledger.Ledger:
    return core_ledger.open_ledger(where)


def ledger() -> core_ledger.Ledger:
    """The ledger at :func:`location`, opened (created, migrated) once per server process."""
    return _open(location())


def shown_location() -> str:
    """:func:`location` for the page (a URL's password hidden)."""
    return core_ledger.display_location(location())


def who() -> str:
    """Who releases: the login's e-mail or name, the trusted proxy's identity, else ``"local user"``."""
    if access.signed_in():
        named = st.user.get("email") or st.user.get("name")
        if named:
            return str(named)
    return access.proxy_identity() or LOCAL_USER


def default_name(selection: Selection) -> str:
    """The dataset name a release is charged to unless the curator types another.

    The name is published (``release.json``'s ``ledger`` block), so it is built from what the
    public release already states: a bundled sample's file name (public), or for an upload
    ``"upload: <released columns>"`` — never an upload's file name, which the public files
    leave out (it may itself say what the confidential data are)."""
    if selection.source.is_sample:
        return Path(selection.source.name).name
    name = "upload: " + ", ".join(info.name for info in selection.prepared.column_info)
    return name if len(name) <= MAX_NAME else name[:MAX_NAME - 1] + "…"


def dataset_name_input(selection: Selection, where=st) -> str:
    """A text box holding the dataset's name in the ledger (default :func:`default_name`),
    remembered per file for the session; returns the name (stripped)."""
    names = st.session_state.setdefault(NAMES_KEY, {})
    file_key = selection.source.key
    st.session_state[NAME_WIDGET] = names.get(file_key) or default_name(selection)

    def keep() -> None:
        names[file_key] = st.session_state[NAME_WIDGET]

    where.text_input("dataset name in the privacy ledger", key=NAME_WIDGET, on_change=keep, max_chars=MAX_NAME,
                     help="Every public release of this dataset is charged to the budget set for this name (the "
                          "Ledger page). Published in release.json: by default a bundled sample's file name, or "
                          "the released columns of an upload (never its file name).")
    name = str(st.session_state[NAME_WIDGET]).strip()
    st.session_state[CURRENT_KEY] = name
    return name


def charge(result: core_recipe.ReleaseResult) -> core_ledger.Charge:
    """What this release costs (one release: :func:`core.ledger.charge_of_spec` of the spec its
    public report states, as the command line charges it). ValueError for σ ∈ (0, 1)."""
    return core_ledger.charge_of_spec(dataclasses.replace(spec_of_public_report(result.public_report), releases=1))


@session_cache(max_entries=2)
def fingerprint(release_key: str, _result: core_recipe.ReleaseResult) -> str:
    """:func:`core.ledger.source_fingerprint` of the data released (the upload's bytes, or the
    sample's name: the same as the command line's for the same file read whole)."""
    return core_ledger.source_fingerprint(_result.recipe.source)


@dataclasses.dataclass(frozen=True)
class Standing:
    """The dataset's standing for the release on the page.

    ``entry``: the dataset (``None``: no budget set); ``preview``: what this release would do;
    ``published``: the ledger block when this session already charged this release;
    ``problem``: why it cannot be charged at all (σ ∈ (0, 1), a bad name); ``refusal``: why the
    last click was refused."""

    name: str
    charge: core_ledger.Charge | None = None
    entry: core_ledger.DatasetEntry | None = None
    preview: core_ledger.Preview | None = None
    published: dict | None = None
    problem: str | None = None
    refusal: str | None = None


def _memo_key(release_key: str, name: str) -> str:
    return hashlib.sha256(f"{name}\0{release_key}".encode("utf-8")).hexdigest()


def standing(result: core_recipe.ReleaseResult, release_key: str, name: str) -> Standing:
    """Read the ledger for the release on the page (no lock: the click decides)."""
    key = _memo_key(release_key, name)
    published = st.session_state.setdefault(PUBLISHED_KEY, {}).get(key)
    refusal = st.session_state.setdefault(REFUSALS_KEY, {}).get(key)
    try:
        cost = charge(result)
    except ValueError as exc:
        return Standing(name, problem=f"this release cannot be charged to a budget: {exc}", published=published)
    try:
        book = ledger()
    except Exception as exc:   # noqa: BLE001 — an unreachable server or unreadable file: say so, offer nothing
        return Standing(name, cost, problem=f"the ledger at {shown_location()} cannot be opened: {exc}",
                        published=published)
    try:
        preview = book.preview(name, cost, fingerprint=fingerprint(release_key, result), n=int(result.prepared.n))
    except core_ledger.UnknownDataset:
        return Standing(name, cost, published=published, refusal=refusal)
    except ValueError as exc:   # a bad name
        return Standing(name, cost, problem=str(exc), published=published)
    return Standing(name, cost, preview.dataset, preview, published, refusal=refusal)


def public_builds(result: core_recipe.ReleaseResult, release_key: str, acknowledged: tuple[str, ...], name: str,
                  *, accept_changed_data: bool = False) -> tuple[Callable[[], bytes], Callable[[], bytes]]:
    """The public zip and the synthetic CSV, each as a function a download button runs on the
    click (see the module docstring): reserve, build the zip with the ledger block, complete
    with its SHA-256, hand out. Everything the functions need is read now: they run outside
    the script run (no ``st.session_state`` there; the session's dicts are taken here)."""
    key = _memo_key(release_key, name)
    published = st.session_state.setdefault(PUBLISHED_KEY, {})
    refusals = st.session_state.setdefault(REFUSALS_KEY, {})
    book, by = ledger(), who()
    cost = charge(result)
    print_ = fingerprint(release_key, result)
    report = result.public_report
    parameters = {"sigma": report["mechanism"]["sigma"], "theta": report["mechanism"]["theta"],
                  "m": report["release"]["m"], "n": report["data"]["n"], "regime": report["mechanism"]["regime"],
                  "target": report["privacy_target"]}

    def charged() -> tuple[dict, bytes | None]:
        """The release's ledger block, charging it first unless this session already did
        (then no zip is built here: ``None``)."""
        with _PUBLISH_LOCK:
            done = published.get(key)
            if done is not None:   # this session charged this release already: no second charge
                return done["block"], None
            try:
                reservation = book.reserve(name, cost, fingerprint=print_, n=int(result.prepared.n), by=by,
                                           mechanism=report["mechanism"]["name"], spec=parameters,
                                           accept_changed_data=accept_changed_data)
            except core_ledger.LedgerError as exc:
                refusals[key] = str(exc)
                raise
            with reservation:   # an error while building leaves the record incomplete, still counted
                payload = core_bundle.public_bundle(result, acknowledged=acknowledged, ledger=reservation.block)
                entry = reservation.complete(hashlib.sha256(payload).hexdigest())
            published[key] = {"block": reservation.block, "sha256": entry.sha256}
            refusals.pop(key, None)
            return reservation.block, payload

    def zip_bytes() -> bytes:
        block, payload = charged()
        # the zip is deterministic (fixed timestamps): a second download has the recorded SHA-256
        return payload if payload is not None else core_bundle.public_bundle(result, acknowledged=acknowledged,
                                                                              ledger=block)

    def csv_bytes() -> bytes:
        charged()   # the CSV is the release itself: charged (once) like the zip
        return result.synthetic_csv()

    # only a click of this session runs them: a click charges the ledger in this curator's name
    return (downloads.session_only(zip_bytes, core_bundle.PUBLIC_BUNDLE_NAME),
            downloads.session_only(csv_bytes, "synthetic.csv"))


def show_standing(standing: Standing, where=st) -> str | None:
    """Show the dataset's budget, what it spent and what remains (beside the verdict), and
    return why the public downloads are held back by the ledger (``None``: they are offered)."""
    shown_name = literal(standing.name)   # the curator's text: escaped once, here
    if standing.problem is not None:
        where.error(f"Privacy ledger: {literal(standing.problem)}", icon="🛑")
        return "The privacy ledger cannot record this release (see the message under the verdict)."
    entry = standing.entry
    if entry is None:
        where.warning(f"Privacy ledger: no budget is set for the dataset **{shown_name}**. A public release is charged to "
                      "its dataset's budget before any byte of it is handed out, so set the budget (ε, δ) the "
                      "disclosure-review board signed on the Ledger page first, or type the name of a dataset that "
                      "has one.", icon="📒")
        where.page_link(LEDGER_PAGE, label="Set the budget on the Ledger page", icon="📒")
        return "Set a budget for this dataset on the Ledger page first."
    eps_left, delta_left = entry.remaining
    c1, c2, c3 = where.columns(3)
    # what remains is rounded down (the safe side)
    c1.metric("ledger: ε remaining", format_lower(eps_left), help=f"of the budget ε = {entry.budget_eps:g}")
    c2.metric("ledger: δ remaining (next release)", format_lower(delta_left),
              help=f"the largest δ one more release may have, within the budget δ = {entry.budget_delta:g}")
    c3.metric("ledger: releases so far", f"{len(entry.releases):,}",
              help=f"{entry.incomplete} incomplete (counted)" if entry.incomplete else None)
    cost = standing.charge
    costs = f"this release costs ε = {format_upper(float(cost.eps))}, δ = {format_upper(float(cost.delta))}"
    if standing.published is not None:
        block = standing.published["block"]
        where.success(f"Privacy ledger: this release is recorded as release {block['release_index']} of **{shown_name}**; "
                      "downloading it again in this session does not charge the budget again.", icon="📒")
        return None
    if standing.refusal is not None and not standing.preview.fits:   # once it fits again, the past refusal is moot
        where.error(f"Privacy ledger: the last download was refused, nothing was handed out: "
                    f"{literal(standing.refusal)}", icon="🛑")
    if not standing.preview.fits:
        where.error(f"Privacy ledger: over budget — {costs}, more than dataset **{shown_name}** has left (ε = "
                    f"{format_lower(eps_left, 6)}; one more release may have δ ≤ {format_lower(delta_left, 6)}). "
                    "The public downloads are refused; a release that costs less (for PYPP σ = 0: larger θ or "
                    "smaller m; for a pure or peer release: a smaller ε) may fit, or the board may raise the budget "
                    "on the Ledger page.", icon="🛑")
        return (f"Over the budget of this dataset: ε = {format_lower(eps_left, 6)} remains, and one more release may "
                f"have δ ≤ {format_lower(delta_left, 6)}.")
    if standing.preview.data_changed:
        where.warning(f"Privacy ledger: the data differ from those last released as **{shown_name}** (another fingerprint "
                      "of the prepared table and its columns, or another n). Every release still counts against the "
                      "one budget; use another dataset name with its own budget, or record this release flagged "
                      "as changed data.", icon="⚠️")
        if not where.checkbox("Record this release under the same name, flagged as changed data",
                              key=ACCEPT_CHANGED_WIDGET):
            return "The data changed under this dataset name: tick the box under the verdict, or use another name."
    where.caption(f"Privacy ledger ({literal(shown_location())}): dataset **{shown_name}**, budget ε = "
                  f"{entry.budget_eps:g}, δ = {entry.budget_delta:g}; {costs}. Downloading the public release or "
                  "the synthetic CSV records it first (once per drawn release).")
    return None
