"""The mechanism of a release on the Synthetic data page: PYPP with the Privacy page's settings
(the default), or any other mechanism a recipe can name (docs/verdicts.md §6).

:func:`choose` lays out the choice — each mechanism by its label, with what it is in one
sentence and the paper or library it comes from — and, for a mechanism other than PYPP, its
public parameter (bins per numeric axis, the Compare page's setting ``bins``: what is compared
is what is released). It returns what the page releases: the Privacy page's
:class:`core.privacy.ReleaseSpec`, or a :class:`ui.release.PeerChoice` at the Privacy page's
target (ε, δ) and planned releases with m = n.

A mechanism other than PYPP works on the product of numeric bins and public categories, so its
recipe needs a public domain for every released column: :func:`peer_problem` says which column
needs what (core's own message, shown as text), and the page offers no Generate until it is
fixed on the Data page.
"""

from __future__ import annotations

import streamlit as st

from core.privacy import ReleaseSpec
from core.release import RELEASE_MECHANISMS

from . import state, widgets
from .release import PeerChoice, build_recipe, peer_verdict
from .selection import Selection
from .text import literal

#: The session key of the chosen mechanism (a key of ``core.release.RELEASE_MECHANISMS``).
MECHANISM_KEY = "release_mechanism"
PYPP = "pypp"


def releasable() -> list[str]:
    """The mechanisms the page offers: PYPP first, then every other registered one."""
    return [PYPP] + [key for key in RELEASE_MECHANISMS if key != PYPP]


def _label(key: str) -> str:
    mechanism = RELEASE_MECHANISMS[key]
    return ("PYPP — the Privacy page's settings" if key == PYPP
            else f"{mechanism.label} — {'pure ε-DP' if getattr(mechanism, 'pure', False) else '(ε, δ)-DP'}")


def choose(selection: Selection, pypp_spec: ReleaseSpec, where=st) -> ReleaseSpec | PeerChoice:
    """The mechanism selector and its parameters; returns what the page releases (see the
    module docstring)."""
    if st.session_state.get(MECHANISM_KEY) not in RELEASE_MECHANISMS:   # unset, or a stale key
        st.session_state[MECHANISM_KEY] = PYPP
    left, right = where.columns([2, 1])
    key = left.selectbox("mechanism", releasable(), format_func=_label, **state.bind(MECHANISM_KEY),
                         help="PYPP releases with the settings of the Privacy page. Any other mechanism is "
                              "calibrated at the Privacy page's target (ε, δ) and releases m = n rows; it needs "
                              "a public domain for every column (Data page), and goes through the same verdict, "
                              "acknowledgements, card, curator record, replay and privacy ledger "
                              "(docs/verdicts.md §6).")
    if key == PYPP:
        return pypp_spec
    widgets.number("bins per numeric axis (public)", "bins", step=1, where=right,
                   help="Each numeric column's public bounds are cut into this many equal bins; the categorical "
                        "columns keep their public categories. A public parameter of the recipe, never read off "
                        "the data (the Compare page's setting too).")
    mechanism = RELEASE_MECHANISMS[key]
    # the sidebar's summary states the Privacy page's PYPP settings: say what this page releases instead
    st.sidebar.caption(f"This page releases with **{literal(mechanism.label)}** (m = n, the target ε and δ "
                       "above); PYPP's settings above are not used.")
    where.caption(f"**{literal(mechanism.label)}**: {literal(mechanism.description)}. "
                  f"Reference: {literal(mechanism.citation)}.")
    return PeerChoice(key, int(st.session_state.bins), float(pypp_spec.eps), float(pypp_spec.delta),
                      int(pypp_spec.releases), int(pypp_spec.n))


def peer_problem(selection: Selection, choice: PeerChoice) -> str | None:
    """Why the selection cannot be released by ``choice`` (core's message: which column needs
    what), or ``None``."""
    try:
        build_recipe(selection, choice, None)
    except ValueError as exc:
        return str(exc)
    return None


def settings_line(choice: PeerChoice) -> str:
    """The page's line about the release settings of a peer (Markdown, the app's own words)."""
    times = "one release" if choice.releases == 1 else f"{choice.releases} planned releases"
    delta = f", δ = {choice.delta:g}" if choice.delta is not None else ""
    return (f"Mechanism **{literal(choice.label)}**, calibrated at the Privacy page's target ε = {choice.eps:g}"
            f"{delta} ({times}), **m = n = {choice.m:,}** rows, {choice.bins} bins per numeric axis. The "
            "release is random: each press of **Generate release** draws a fresh secret seed from the operating "
            "system's random source, written only into the CONFIDENTIAL curator record (same data, settings and "
            "seed ⇒ same release).")


def preview(selection: Selection, choice: PeerChoice) -> None:
    """The verdict the release will have, in one line, before the draw (public inputs only)."""
    guarantee, _, _ = peer_verdict(build_recipe(selection, choice, None), choice.n, choice.m)
    st.caption(f"Verdict of this release before it is drawn: **{guarantee.verdict}** — "
               f"{literal(guarantee.description)}")


def refuse(problem: str) -> None:
    """Say why the peer cannot release this selection, and where to fix it (no Generate)."""
    st.error(f"This mechanism cannot release the current columns: {literal(problem)}. On the **Data** page, tick "
             "\"I know public bounds\" and type them for each numeric column, and type the public category list of "
             "each categorical column (fixed without looking at the data); or choose PYPP.", icon="🛑")
