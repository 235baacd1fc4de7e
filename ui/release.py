"""A release from the dashboard: the recipe built from the widgets, run by ``core``.

The app does not assemble a release itself: it builds a :class:`core.release.ReleaseRecipe`
from the current selection and settings, runs it with :func:`core.release.run_recipe` (on
the session's cached prepared data) and writes the two artifacts with
``core.release.bundle`` — the public release and, built only when the curator clicks its
download, the CONFIDENTIAL curator record. The command line runs the same recipe
(``python -m core release --recipe``) and gets the same synthetic CSV byte for byte.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable

import streamlit as st

from core.release import bundle as core_bundle
from core.release import recipe as core_recipe
from core.cli import PROG
from core.privacy import ReleaseSpec

from .selection import Selection, active_coarsening, session_cache


def build_recipe(selection: Selection, spec: ReleaseSpec, seed: int) -> core_recipe.ReleaseRecipe:
    """The recipe of the release ``spec`` (a fixed size m, stated at its ε and δ target, with
    its planned number of releases) of the current selection, drawn with ``seed``."""
    source = selection.source
    origin = (core_recipe.sample_source(source.name) if source.is_sample
              else core_recipe.upload_source(source.content))
    specs = tuple(info.spec for info in selection.prepared.column_info)
    read = selection.decisions   # every reading decision, so a replay reads the file the same way
    coarsening = active_coarsening([spec.name for spec in specs])   # what selection.prepared applied
    return core_recipe.ReleaseRecipe(
        source=origin, columns=specs, eps=spec.eps, delta=spec.delta, m=spec.m, size_rule="fixed",
        sigma=spec.sigma, theta=spec.theta,
        seed=seed, sep=read.delimiter, header=read.header, encoding=read.encoding, thousands=read.thousands,
        keep_na_text=read.keep_na_text, n_mc=int(st.session_state.n_mc),
        # the curator report states the composition of the planned releases
        releases=spec.releases,
        # the coarsening applied before prepare (the Data page's advisor); public, part of the recipe
        coarsening=coarsening, counts_column=selection.counts_column,
        coarsening_chosen_from_data=bool(coarsening) and bool(st.session_state.get("coarsening_chosen_from_data")),
        # θ and m loaded from the Release planner, which searched them on the confidential data
        settings_chosen_from_data=bool(st.session_state.get("settings_chosen_from_data")))


def command_line(selection: Selection) -> str:
    """The command that replays the recipe of the curator record (``CONFIDENTIAL_recipe.json``
    in its zip) on the same data: a bundled sample is found by name, an upload is given by
    its file name."""
    args = ["release", "--recipe", "CONFIDENTIAL_recipe.json"]
    if not selection.source.is_sample:
        args.append(selection.source.name)
    args += ["--out", "synthetic.csv"]
    return shlex.join([*PROG.split(), *args])


@session_cache(max_entries=4)
def run(recipe_json: str, _recipe: core_recipe.ReleaseRecipe, _selection: Selection) -> core_recipe.ReleaseResult:
    """``core.release.run_recipe`` on the session's prepared data (cached by the recipe's JSON,
    which includes the seed)."""
    return core_recipe.run_recipe(_recipe, _selection.prepared, command=command_line(_selection),
                                  data_label=_selection.source.name, reading=_selection.decisions.to_dict())


def release(selection: Selection, spec: ReleaseSpec, seed: int) -> core_recipe.ReleaseResult:
    """The release ``spec`` of the current selection drawn with ``seed`` (see :func:`build_recipe`)."""
    recipe = build_recipe(selection, spec, seed)
    return run(selection.key + recipe.to_json(), recipe, selection)


def release_key(result: core_recipe.ReleaseResult) -> str:
    """Cache key of everything derived from a release (its recipe, seed included)."""
    return result.recipe.to_json()


@session_cache(max_entries=2)
def public_release(release_key: str, _result: core_recipe.ReleaseResult,
                   acknowledged: tuple[str, ...] = ()) -> bytes | None:
    """The public release zip, or ``None`` while the gate holds it back
    (``core.release.bundle.gated_public_bundle``): ``acknowledged`` is what the curator
    accepted, recorded in its release.json."""
    return core_bundle.gated_public_bundle(_result, acknowledged=acknowledged)


def curator_record(release_key: str, result: core_recipe.ReleaseResult) -> Callable[[], bytes]:
    """What builds the CONFIDENTIAL curator record (``core.release.bundle.curator_bundle``,
    with the overlays as SVG, the summary and the quality report) when called: the download
    button calls it on the click (:mod:`ui.downloads`), outside the script run, so the parts
    the page already shows are taken from the session's cache now; the SVG figures, which
    only the record holds, are drawn on the click. The zip is never built or kept before it."""
    shown_summary, shown_report = summary(release_key, result), quality(release_key, result)

    def build() -> bytes:
        return core_bundle.curator_bundle(result, figures=core_bundle.record_figures(result), summary=shown_summary,
                                          report=shown_report)
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
