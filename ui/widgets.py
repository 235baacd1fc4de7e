"""Widgets and notes shared by the pages.

* :func:`slider`, :func:`log_slider`, :func:`number` and :func:`select_slider` draw a
  widget bound to a setting of :mod:`ui.state`, with that setting's one admissible range;
* :func:`show_errors` is the one place where a ``ValueError`` from ``core`` becomes a
  message (``st.error``) instead of a traceback; ``app.py`` wraps every page in it, and a
  page uses it around a step whose failure needs its own words;
* :func:`require_selection`, :func:`sidebar_summary`, :func:`curator_only_note`,
  :func:`progress_bar`.

Every user-provided string (file, column and category names, and ``core``'s messages that
quote them) reaches a Markdown-rendering element through :func:`ui.text.literal`.
"""

from __future__ import annotations

import contextlib

import streamlit as st

from core import plots, privacy
from core.formatting import formula_safe

from . import selection as sel
from . import state
from .text import literal


# --------------------------------------------------------------------------- errors
@contextlib.contextmanager
def show_errors(context: str = "", *, stop: bool = True):
    """Show a ``ValueError`` raised inside the block with ``st.error`` (never a traceback).

    ``context`` (the app's own words, Markdown) prefixes the message, which is shown as
    text (:func:`ui.text.literal`: it may quote a file, column or cell). With
    ``stop`` (default) the page stops after the message: what follows needs the result.
    Streamlit's own control flow (``st.stop``, reruns, page switches) passes through:
    it is not a ``ValueError``.
    """
    try:
        yield
    except ValueError as exc:
        st.error(f"{context}{literal(exc)}")
        if stop:
            st.stop()


# --------------------------------------------------------------------------- bound widgets
def slider(label: str, name: str, *, step, where=st, **kwargs):
    """``st.slider`` over the admissible range of setting ``name`` (:data:`ui.state.RANGES`)."""
    lo, hi = state.RANGES[name]
    return where.slider(label, lo, hi, step=step, **state.bind(name), **kwargs)


def number(label: str, name: str, *, where=st, **kwargs):
    """``st.number_input`` over the admissible range of setting ``name``."""
    lo, hi = state.RANGES[name]
    return where.number_input(label, min_value=lo, max_value=hi, **state.bind(name), **kwargs)


def form_number(label: str, name: str, *, where=st, **kwargs):
    """``st.number_input`` inside a form, over the admissible range of setting ``name``
    (copied back by :func:`ui.state.commit_form` when the form is submitted)."""
    lo, hi = state.RANGES[name]
    return where.number_input(label, min_value=lo, max_value=hi, **state.form_field(name), **kwargs)


def log_slider(label: str, name: str, *, hi=None, where=st, **kwargs):
    """``st.select_slider`` on a log scale (:func:`ui.state.log_grid`) over the range of
    setting ``name``, up to ``hi`` when given (e.g. :func:`ui.state.m_range` of the data).
    The setting's own value is always an option: a value set elsewhere is shown, never moved."""
    lo, top = state.RANGES[name]
    integer = isinstance(lo, int)
    binding = state.bind(name)   # clamps the setting into its range first
    options = state.log_grid(lo, top if hi is None else hi, integer=integer, keep=st.session_state[name])
    return where.select_slider(label, options=options, format_func="{:,}".format if integer else parameter_text,
                               **binding, **kwargs)


def parameter_text(value) -> str:
    """A mechanism parameter (θ, α, ...) for people: up to 10 significant digits with thousands
    separated, so that θ = 10^6 reads '1,000,000', not '1e+06' (not a privacy number: those
    are rounded up by :func:`core.formatting.format_upper`)."""
    return f"{float(value):,.10g}"


def select_slider(label: str, name: str, *, where=st, **kwargs):
    """``st.select_slider`` over the options of setting ``name`` (:data:`ui.state.OPTIONS`)."""
    return where.select_slider(label, options=list(state.OPTIONS[name]), **state.bind(name), **kwargs)


# --------------------------------------------------------------------------- selection
def require_selection(*, summary: bool = True) -> sel.Selection:
    """The current selection, or stop the page with a message saying what to do.

    A missing upload is a prompt (``st.info``); anything ``core`` rejected is an error.
    ``summary=False`` leaves the sidebar summary to the page (drawn after its widgets).
    """
    selection, problem = sel.load_selection()
    if problem:
        (st.info if sel.waiting_for_upload() else st.error)(literal(problem))
        sidebar_summary(None)
        st.stop()
    if summary:
        sidebar_summary(selection.profile())
    return selection


def sidebar_summary(profile: dict | None) -> None:
    """Dataset and settings currently selected, on every page."""
    with st.sidebar:
        st.markdown("### Current selection")
        if profile is None:
            st.caption("No data selected yet: choose a dataset on the Data page.")
            return
        st.markdown(f"**Data:** {literal(profile['source'])}  \n"
                    f"**Columns:** {literal(', '.join(profile['columns']))}  \n"
                    f"n = {profile['n']:,}, k = {profile['k']:,}, singletons = {profile['singletons']:,}")
        sigma, theta = state.mechanism_parameters(profile["k"], profile.get("public_domain"))
        st.markdown(f"**Mechanism:** {state.regime().label}  \n"
                    f"σ = {sigma:g}, θ = {parameter_text(theta)}, m = {st.session_state.m:,}  \n"
                    f"ε = {st.session_state.eps:g}, δ target = {plots.format_upper(st.session_state.delta)}")


#: How each verdict is shown: green only for pure and strong, and only with no data-dependent choice
#: (docs/verdicts.md §1).
VERDICT_BOXES = {"pure": st.success, "strong": st.success, "weak": st.warning, "missed": st.error}
VERDICT_ICONS = {"pure": "✅", "strong": "✅", "weak": "⚠️", "missed": "⛔"}


def green_verdict(guarantee: privacy.Guarantee, conditional_on=(), blocked: str | None = None) -> bool:
    """Whether a page may show green about this release: a pure or strong verdict resting on no
    data-dependent choice that no guarantee covers (docs/verdicts.md §1, §4), for a release that
    can be made (``blocked``: why not, :func:`public_domain_gap`). The one rule of every green
    box about a release (the verdict box, the empirical audit)."""
    return guarantee.verdict in ("pure", "strong") and not list(conditional_on) and not blocked


def public_domain_gap(spec: privacy.ReleaseSpec, public_domain: int | None) -> str | None:
    """Why a Dirichlet–multinomial release (σ < 0) cannot be made yet, or ``None``.

    Its pure guarantee is over z *public* categories (docs/mathematics.md §3.3.1); without a
    public domain for every column (``public_domain`` is ``None``) z = max(stated z, k) rests on
    k, read off the data, and the Synthetic data page refuses to generate — so no page may show
    the "pure" verdict green."""
    if spec.regime is not privacy.DIRICHLET_MULTINOMIAL or public_domain is not None:
        return None
    return ("**Not releasable yet:** the Dirichlet–multinomial needs every column on a public domain (a numeric "
            "column on a public grid, a categorical column on its public category list — Data page); until then "
            f"z = {spec.theta / -spec.sigma:,.0f} rests on the k distinct values read off the confidential data, so "
            "this verdict holds for no release that can be made, and Generate refuses.")


def verdict_box(guarantee: privacy.Guarantee, *, advice: str | None = None, conditional_on=(),
                blocked: str | None = None, spec=None) -> None:
    """The verdict of a release's composed global guarantee, in the words every page and file
    uses, with n·δ, what a weak δ allows and the attack terms (all numbers rounded up by core).

    ``conditional_on``: the titles of the data-dependent choices of the release
    (:func:`core.release.choices.data_dependent_choices`). With any, a pure or strong verdict
    is not shown green, and a "conditional on" banner names them. ``blocked``: why the release
    cannot be made yet (:func:`public_domain_gap`): said in the box, never green. ``spec``: the
    release (a ``ReleaseSpec``, or a peer mechanism's spec, which says nothing here); for a PYPP
    release with σ = 0 the box also says the public scale of copying — each row a confidential
    record with probability n/(n + θ), about how many of the m rows (:func:`core.privacy.copy_scale`,
    docs/verdicts.md §2.1).
    """
    fmt = plots.format_upper
    conditional = list(conditional_on)
    verdict = guarantee.verdict
    shown_conditional = conditional and verdict != "missed"   # a refused release is refused, whatever the choices
    parts = [f"**Verdict: {verdict}{' (conditional)' if shown_conditional else ''}** — "
             f"{privacy.VERDICT_WORDS[verdict]}.", guarantee.description]
    if guarantee.records_exposed is not None and verdict != "pure":
        parts.append(f"n·δ = **{fmt(guarantee.records_exposed)}**: {privacy.RECORDS_EXPOSED_WORDS}.")
    if verdict == "weak" and guarantee.verbatim_probability is not None:
        parts.append(f"What this δ allows here: a record whose value is unique can appear verbatim with "
                     f"probability up to **{fmt(guarantee.verbatim_probability)}**.")
    if isinstance(spec, privacy.ReleaseSpec) and spec.mechanism == "pypp" and spec.sigma == 0:
        parts.append(f"**Scale of copying:** {privacy.copy_scale(spec.m, spec.n, spec.theta).words}")
    if guarantee.attack is not None:
        tpr = ", ".join(f"≤ {fmt(t)} at FPR {a:g}" for a, t in guarantee.attack.tpr_at_fpr)
        parts.append(f"An attacker's best membership test: advantage (TPR − FPR) ≤ {fmt(guarantee.attack.advantage)}; "
                     f"true positive rate {tpr}.")
    if verdict == "missed" and advice:
        parts.append(advice)
    if blocked:
        parts.append(blocked)
    not_green = verdict in ("pure", "strong") and not green_verdict(guarantee, conditional, blocked)
    box = st.warning if not_green else VERDICT_BOXES[verdict]
    box(" ".join(parts), icon="⚠️" if not_green else VERDICT_ICONS[verdict])
    if conditional:
        conditional_banner(conditional)


def conditional_banner(titles) -> None:
    """The "conditional on" banner: the data-dependent choices no guarantee covers, each needing
    its own acknowledgement before anything public (docs/verdicts.md §4). The titles are the
    app's own words (column names are never in them)."""
    st.warning("**Conditional on** choices the confidential data made, which no guarantee covers: "
               + "; ".join(titles) + ". Each needs its own acknowledgement before the public release.", icon="🔶")


def curator_only_note() -> None:
    st.warning("Curator-only view: this shows confidential data next to synthetic data and is "
               "not itself private. Do not publish it.", icon="🔒")


def progress_bar(text: str):
    """A progress bar and the ``progress(fraction, message)`` callback core functions take.

    Created *inside* the cached functions of :mod:`ui.compute`: Streamlit replays the
    elements a cached function created on a cache hit, and cannot replay calls on an
    element created outside it.
    """
    bar = st.progress(0.0, text=text)
    return bar, (lambda fraction, message: bar.progress(min(1.0, max(0.0, fraction)), text=literal(message)))


#: The first line of every curator-only table the app offers: what a reader must know before
#: passing the file on, as the CONFIDENTIAL curator record's own CSVs start (read them with
#: ``comment='#'``). It also leaves room for a download's random nonce (ui/downloads.py).
CONFIDENTIAL_TABLE_LINE = ("# CONFIDENTIAL — curator only: computed from the confidential data; "
                           "never publish (read with comment='#')")


def confidential_csv_bytes(frame) -> bytes:
    """:func:`csv_bytes` headed by :data:`CONFIDENTIAL_TABLE_LINE`."""
    return (CONFIDENTIAL_TABLE_LINE + "\n").encode("utf-8") + csv_bytes(frame)


def csv_bytes(frame) -> bytes:
    """A table as a CSV download (UTF-8), with every text cell a spreadsheet would run as a
    formula neutralised (:func:`core.formatting.formula_safe`)."""
    return formula_safe(frame).to_csv(index=False).encode("utf-8")
