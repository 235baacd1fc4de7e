"""A release from the dashboard: the recipe built from the widgets, run by ``core``.

The app does not assemble a release itself: it builds a :class:`core.release.ReleaseRecipe`
from the current selection and settings, runs it with :func:`core.release.run_recipe` (on
the session's cached prepared data) and writes the two artifacts with
``core.release.bundle`` — built only when the curator clicks their downloads: the public
release (charged to the privacy ledger first, :mod:`ui.ledger`) and the CONFIDENTIAL curator
record. The command line runs the same recipe
(``python -m core release --recipe``) and gets the same synthetic CSV byte for byte.

The seed is secret (docs/serving.md §5): each press of "Generate release" draws a fresh one
from the operating system's CSPRNG (:func:`fresh_seed`); a seed the curator types replays a
recorded release (:func:`replay_seed`). It is kept in the session and written only into the
CONFIDENTIAL curator record; the public recipe has none.

The mechanism is PYPP with the Privacy page's settings (a :class:`core.privacy.ReleaseSpec`), or
any other mechanism a recipe can name (:data:`core.release.RELEASE_MECHANISMS`: AIM, MST, the
OpenDP and the seed papers' histograms), described by a :class:`PeerChoice`: its key, its
public bins, the Privacy page's target (ε, δ) and planned releases, and m = n. Its recipe needs
the selection's public domain (docs/verdicts.md §6); the rest — run, verdict, gate, card, curator
record, replay and ledger — is the same.
"""

from __future__ import annotations

import dataclasses
import datetime
import shlex
from collections.abc import Callable

import numpy as np
import streamlit as st

from core.release import bundle as core_bundle
from core.release import choices as core_choices
from core.release import gate as core_gate
from core.release import recipe as core_recipe
from core.release import release_mechanism
from core.cli import PROG
from core.validation import check_seed
from core.privacy import ReleaseSpec

from .selection import Selection, active_coarsening, session_cache


@dataclasses.dataclass(frozen=True)
class PeerChoice:
    """A release by a mechanism other than PYPP (:data:`core.release.RELEASE_MECHANISMS`): its
    key, its bins per numeric axis (public), the target (ε, δ) it is calibrated at and stated
    against (the Privacy page's), the planned releases k, and n. m = n (the mechanism's default
    size rule: n is public in every report). Frozen and hashable, like a ``ReleaseSpec``: the
    key of what the page drew.
    """

    mechanism: str
    bins: int
    eps: float
    delta: float
    releases: int
    n: int

    @property
    def m(self) -> int:
        return self.n

    @property
    def label(self) -> str:
        return release_mechanism(self.mechanism).label


@dataclasses.dataclass(frozen=True)
class Drawn:
    """What the last press of "Generate release" drew (``st.session_state.release_params``): the
    data (``selection_key``), the settings (``spec``: PYPP's ``ReleaseSpec`` or a
    :class:`PeerChoice`) and the seed. The Synthetic data page shows this release and the
    Inference page analyses it (a PYPP one); no other page draws one.

    ``seed`` is secret (kept out of ``repr``, never shown on a page): the CONFIDENTIAL curator
    record holds it. ``replayed`` is the seed the curator typed, or ``None`` when ``seed`` was
    drawn fresh from the operating system's CSPRNG.
    """

    selection_key: str
    spec: ReleaseSpec | PeerChoice
    seed: int = dataclasses.field(repr=False)
    replayed: int | None = dataclasses.field(default=None, repr=False)
    #: When it was drawn (the evaluating pages say so); not part of what the release is.
    drawn_at: datetime.datetime | None = dataclasses.field(default=None, compare=False)


def generate(selection: Selection, spec: ReleaseSpec | PeerChoice, replayed: int | None) -> Drawn:
    """The press of "Generate release": the settings with the typed seed to replay, or else a
    fresh secret one (:func:`fresh_seed`), so that two presses with every default differ."""
    return Drawn(selection.key, spec, fresh_seed() if replayed is None else check_seed(replayed), replayed,
                 drawn_at=datetime.datetime.now())


def last_drawn(selection: Selection, *, any_mechanism: bool = False) -> Drawn | None:
    """The release the Synthetic data page drew last, if it was drawn from the current data —
    and by PYPP unless ``any_mechanism`` (the Inference page analyses PYPP releases only)."""
    drawn = st.session_state.get("release_params")
    if not isinstance(drawn, Drawn) or drawn.selection_key != selection.key:
        return None
    return drawn if any_mechanism or isinstance(drawn.spec, ReleaseSpec) else None


def fresh_seed() -> int:
    """A new secret seed: 128 bits of the operating system's CSPRNG, as ``core.release.run_recipe``
    draws one for a recipe without a seed (``numpy.random.SeedSequence()`` reads them with
    ``secrets.randbits``). Drawn at each press of "Generate release", never stored but in the
    session and the CONFIDENTIAL curator record."""
    return int(np.random.SeedSequence().entropy)


def replay_seed(text: str) -> int | None:
    """The seed the curator typed to replay a recorded release (its CONFIDENTIAL_recipe.json's
    ``seed``), or ``None`` when the box is empty (a fresh secret seed is drawn).

    Raises
    ------
    ValueError
        ``text`` is not an integer in [0, 2**128) (the message names the seed).
    """
    text = str(text or "").strip().replace("_", "").replace(",", "")
    if not text:
        return None
    try:
        return check_seed(int(text), "the seed to replay")
    except ValueError:
        return check_seed(text, "the seed to replay")   # raises, naming the text typed


def build_recipe(selection: Selection, spec: ReleaseSpec | PeerChoice,
                 seed: int | None) -> core_recipe.ReleaseRecipe:
    """The recipe of the release ``spec`` of the current selection, drawn with ``seed``: PYPP's
    (a fixed size m, stated at its ε and δ target, with its planned number of releases), or a
    :class:`PeerChoice`'s (its mechanism and bins, m = n, calibrated at the target).

    Raises
    ------
    ValueError
        The recipe is refused: for a peer, a column without a public domain (public bounds
        for a numeric column, a public category list for a categorical one) or with missing
        cells released as a value — the message names the column and what it needs.
    """
    if isinstance(spec, PeerChoice):
        return _peer_recipe(selection, spec, seed)
    return core_recipe.ReleaseRecipe(
        **_common_fields(selection), eps=spec.eps, delta=spec.delta, m=spec.m, size_rule="fixed",
        sigma=spec.sigma, theta=spec.theta, seed=seed, n_mc=int(st.session_state.n_mc),
        # the curator report states the composition of the planned releases
        releases=spec.releases,
        # θ and m loaded from the Release planner, which searched them on the confidential data
        settings_chosen_from_data=bool(st.session_state.get("settings_chosen_from_data")),
        **_mechanism_flag())


def _mechanism_flag() -> dict:
    """The recipe's ``mechanism_chosen_from_data``: the mechanism was loaded from the Release planner's
    candidates side by side, whose utility was measured on the confidential data (docs/verdicts.md §7)."""
    return {"mechanism_chosen_from_data": bool(st.session_state.get("mechanism_chosen_from_data"))}


def _common_fields(selection: Selection) -> dict:
    """The recipe fields every mechanism shares: the source, the columns with their transforms,
    how the file was read (every reading decision, so a replay reads the file the same way), and
    the coarsening applied before prepare (the Data page's advisor; public, part of the recipe)."""
    source = selection.source
    specs = tuple(info.spec for info in selection.prepared.column_info)
    read = selection.decisions
    coarsening = active_coarsening([spec.name for spec in specs])   # what selection.prepared applied
    return dict(
        source=(core_recipe.sample_source(source.name) if source.is_sample
                else core_recipe.upload_source(source.content)),
        columns=specs, sep=read.delimiter, header=read.header, encoding=read.encoding, thousands=read.thousands,
        keep_na_text=read.keep_na_text, coarsening=coarsening, counts_column=selection.counts_column,
        coarsening_chosen_from_data=bool(coarsening) and bool(st.session_state.get("coarsening_chosen_from_data")))


def _peer_recipe(selection: Selection, choice: PeerChoice, seed: int | None) -> core_recipe.ReleaseRecipe:
    """The recipe of a peer release (:func:`build_recipe`): size rule ``"n"``, no σ or θ."""
    fields = _common_fields(selection)
    # The planner searched θ, m and the grid steps on the confidential data: θ and m are PYPP's, but a
    # column's grid step still shapes the values the peer bins, so the choice stands while a grid does.
    planned = bool(st.session_state.get("settings_chosen_from_data")) and any(
        spec.grid for spec in fields["columns"])
    return core_recipe.ReleaseRecipe(
        **fields, eps=choice.eps, delta=choice.delta, mechanism=choice.mechanism, bins=choice.bins,
        sigma=None, theta=None, m=None, seed=seed, n_mc=int(st.session_state.n_mc), releases=choice.releases,
        settings_chosen_from_data=planned, **_mechanism_flag())


def peer_verdict(recipe: core_recipe.ReleaseRecipe, n: int, m: int):
    """(guarantee, advice, spec) of a peer recipe's release of m rows from n records, from its
    public form only (:meth:`core.release.ReleaseMechanism.guarantee_of`): the verdict the
    public report will state, known before the draw (docs/verdicts.md §6)."""
    mechanism = release_mechanism(recipe.mechanism)
    spec = mechanism.spec(recipe.public(), int(n), int(m))
    return mechanism.guarantee_of(spec), mechanism.meeting_advice(spec), spec


def conditional_on(selection: Selection, spec: ReleaseSpec, *, planner_settings: bool = False) -> list[str]:
    """The titles of the data-dependent choices of the release ``spec`` of the current selection
    (:func:`core.release.choices.data_dependent_choices`, read off its recipe): what the verdict
    box's "conditional on" banner names. ``planner_settings``: the settings are the release
    planner's (its page), so they were chosen on the confidential data."""
    # The choices depend on the columns, the coarsening, the flags and whether σ is in (0, 1), not on θ, m or
    # the target: a σ < 0 spec (whose θ must match the columns' public domain, which a planner's candidate
    # may not yet) is read as σ = 0.
    neutral = (dataclasses.replace(spec, sigma=0.0, theta=1.0)
               if isinstance(spec, ReleaseSpec) and spec.sigma < 0 else spec)
    recipe = build_recipe(selection, neutral, None)
    if planner_settings:
        recipe = dataclasses.replace(recipe, settings_chosen_from_data=True)
    return [choice.title for choice in core_choices.data_dependent_choices(recipe, selection.prepared.n)]


def command_line(selection: Selection, acknowledged: tuple[str, ...] = ()) -> str:
    """The command that replays the recipe of the curator record (``CONFIDENTIAL_recipe.json``
    in its zip) on the same data: a bundled sample is found by name, an upload is given by
    its file name. ``--out`` is public and passes the gate as the page's downloads do: each
    acknowledgement the curator gave (``acknowledged``) becomes an ``--acknowledge KEY``."""
    args = ["release", "--recipe", "CONFIDENTIAL_recipe.json"]
    if not selection.source.is_sample:
        args.append(selection.source.name)
    args += ["--out", "synthetic.csv"]
    for key in acknowledged:
        args += ["--acknowledge", key]
    return shlex.join([*PROG.split(), *args])


@session_cache(max_entries=4)
def run(recipe_json: str, _recipe: core_recipe.ReleaseRecipe, _selection: Selection) -> core_recipe.ReleaseResult:
    """``core.release.run_recipe`` on the session's prepared data (cached by the recipe's JSON,
    which includes the seed)."""
    return core_recipe.run_recipe(_recipe, _selection.prepared, command=command_line(_selection),
                                  data_label=_selection.source.name, reading=_selection.decisions.to_dict())


def release(selection: Selection, spec: ReleaseSpec | PeerChoice, seed: int) -> core_recipe.ReleaseResult:
    """The release ``spec`` of the current selection drawn with ``seed`` (see :func:`build_recipe`):
    the secret seed drawn when the curator pressed "Generate release" (:func:`fresh_seed`) or the
    one typed to replay (:func:`replay_seed`). Never ``None``: the cache is keyed by the recipe, so
    a recipe without a seed would give every press the same release."""
    recipe = build_recipe(selection, spec, check_seed(seed))
    return run(selection.key + recipe.to_json(), recipe, selection)


def release_key(result: core_recipe.ReleaseResult) -> str:
    """Cache key of everything derived from a release (its recipe, seed included)."""
    return result.recipe.to_json()


def publishable(result: core_recipe.ReleaseResult, acknowledged: tuple[str, ...] = ()) -> bool:
    """Whether the gate lets the public release out (``core.release.gate.check_publication``:
    not ``missed``, and everything it asks acknowledged in ``acknowledged``). The public zip is
    not built here: it is built on the click, after the privacy ledger recorded the release
    (:func:`ui.ledger.public_builds`)."""
    try:
        core_gate.check_publication(result.public_report, acknowledged)
    except (core_gate.PublicationRefused, core_gate.AcknowledgementRequired):
        return False
    return True


def curator_record(release_key: str, result: core_recipe.ReleaseResult,
                   acknowledged: tuple[str, ...] = ()) -> Callable[[], bytes]:
    """What builds the CONFIDENTIAL curator record (``core.release.bundle.curator_bundle``,
    with the overlays as SVG, the summary and the quality report) when called: the download
    button calls it on the click (:mod:`ui.downloads`), outside the script run, so the parts
    the page already shows are taken from the session's cache now; the SVG figures, which
    only the record holds, are drawn on the click. The zip is never built or kept before it.
    ``acknowledged``: what the curator acknowledged on the page, which the record states as the
    public files do."""
    shown_summary, shown_report = summary(release_key, result), quality(release_key, result)

    def build() -> bytes:
        return core_bundle.curator_bundle(result, figures=core_bundle.record_figures(result), summary=shown_summary,
                                          report=shown_report, acknowledged=acknowledged)
    return build


@session_cache(max_entries=2)
def quality(release_key: str, _result: core_recipe.ReleaseResult):
    """``core.release.bundle.quality_report`` of a release (cached by its recipe, seed and data included):
    computed from the frequency table with its counts, never from n rebuilt rows (curator only)."""
    return core_bundle.quality_report(_result)


@session_cache(max_entries=2)
def summary(release_key: str, _result: core_recipe.ReleaseResult):
    """``core.release.bundle.summary_table``: the data and the release side by side (curator only)."""
    return core_bundle.summary_table(_result)


@session_cache(max_entries=2)
def figures(release_key: str, _result: core_recipe.ReleaseResult) -> dict:
    """The curator's overlays of the data and the release (``core.release.bundle.comparison_figures``)."""
    return core_bundle.comparison_figures(_result)
