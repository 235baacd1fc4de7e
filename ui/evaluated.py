"""Which release the Compare, Inference and Audit pages evaluate, and the banner that says so.

The release evaluated is the one the Synthetic data page drew last from the current data
(:func:`ui.release.last_drawn`, any mechanism), else the current settings: the Privacy page's
PYPP spec, or the peer mechanism chosen on the Synthetic data page (``release_mechanism``) at the
Privacy page's target with m = n. Its guarantee is the one the Synthetic data page shows:
:func:`ui.compute.release_guarantee` for PYPP, :func:`ui.release.peer_verdict` for a peer. Its
words come from core (:func:`core.evaluation.evaluated.describe_release`), so that every page
names it the same way (docs/quality.md §10).
"""

from __future__ import annotations

import dataclasses

import streamlit as st

from core.evaluation import evaluated as core_evaluated
from core.privacy import ReleaseSpec
from core.release import RELEASE_MECHANISMS

from . import compute, release, state
from .selection import Selection
from .text import literal

#: The Synthetic data page's mechanism choice (``ui.peer_release.MECHANISM_KEY``).
MECHANISM_KEY = "release_mechanism"


@dataclasses.dataclass(frozen=True)
class Evaluated:
    """The release a page evaluates.

    Attributes
    ----------
    spec : core.privacy.ReleaseSpec or ui.release.PeerChoice
    drawn : ui.release.Drawn or None
        The Synthetic data page's release (``None``: the current settings, nothing drawn yet).
    guarantee : core.privacy.Guarantee or None
        Its composed global guarantee with its verdict (``None`` when ``problem``).
    advice : str
    verdict_spec : object
        What the verdict box reads (the PYPP spec, or the peer's MechanismSpec).
    recipe : core.release.ReleaseRecipe or None
        A peer's public recipe (its registry entry builds the mechanism from it).
    problem : str or None
        Why the release cannot be stated (a peer without a public domain: core's message).
    when : str
        Where the release comes from, in words.
    """

    spec: object
    drawn: object
    guarantee: object
    advice: str
    verdict_spec: object
    recipe: object
    problem: str | None
    when: str

    @property
    def is_pypp(self) -> bool:
        return isinstance(self.spec, ReleaseSpec)

    @property
    def label(self) -> str:
        return "PYPP" if self.is_pypp else self.spec.label

    @property
    def words(self) -> str:
        """The release in one line (core's words), or why it cannot be stated."""
        if self.problem is not None:
            return f"{self.label} — cannot be stated: {literal(self.problem)}"
        return core_evaluated.describe_release(self.verdict_spec, self.guarantee, label=self.label,
                                               bins=None if self.is_pypp else self.spec.bins)


def current_settings(selection: Selection):
    """What the Synthetic data page would release now: the Privacy page's PYPP spec, or the peer
    chosen there at the Privacy page's target (m = n), as ``ui.peer_release.choose`` returns it."""
    spec = state.release_spec(selection.table.n, selection.table.k, selection.prepared.public_domain)
    key = st.session_state.get(MECHANISM_KEY)
    if key in RELEASE_MECHANISMS and key != "pypp":
        return release.PeerChoice(key, int(st.session_state.bins), float(spec.eps), float(spec.delta),
                                  int(spec.releases), int(spec.n))
    return spec


def _when(drawn) -> str:
    if drawn is None:
        return "the current settings (no release drawn yet)"
    return f"the release drawn on the Synthetic data page at {drawn.drawn_at:%H:%M}"


def evaluated(selection: Selection) -> Evaluated:
    """The release the page evaluates (see the module docstring); never raises for a release the
    Synthetic data page could not make — ``problem`` says why."""
    drawn = release.last_drawn(selection, any_mechanism=True)
    spec = drawn.spec if drawn is not None else current_settings(selection)
    guarantee = advice = verdict_spec = recipe = problem = None
    try:
        if isinstance(spec, ReleaseSpec):
            (guarantee, advice), verdict_spec = compute.release_guarantee(spec), spec
        else:
            recipe = release.build_recipe(selection, spec, None)
            guarantee, advice, verdict_spec = release.peer_verdict(recipe, spec.n, spec.m)
    except ValueError as exc:
        problem = str(exc)
    return Evaluated(spec, drawn, guarantee, advice or "", verdict_spec, recipe, problem, _when(drawn))


def banner(ev: Evaluated) -> None:
    """The one line at the top of Compare, Inference and Audit: what is evaluated, and whence."""
    st.info(f"**Evaluating:** {ev.words} — {ev.when}.", icon="🔎")


def comparison_mechanism(ev: Evaluated, table):
    """The evaluated release's mechanism on the comparison's table (its first row), through
    ``core.evaluation.evaluated.evaluated_mechanism`` and the release's registry entry. Raises
    ValueError (core's words) when it cannot run on these columns."""
    if ev.problem is not None:
        raise ValueError(ev.problem)
    if ev.is_pypp:
        return core_evaluated.evaluated_mechanism(ev.spec, table)
    return core_evaluated.evaluated_mechanism(ev.recipe, table, RELEASE_MECHANISMS[ev.spec.mechanism])
