"""Synthetic data page: release m values with the current settings, compare, download.

The release is a :class:`core.release.ReleaseRecipe` built from the settings and run by
``core`` (:mod:`ui.release`); the page offers its two artifacts apart: the public
release and the CONFIDENTIAL curator record. Both are built on the click. The public one is
first charged to the dataset's budget in the privacy ledger (:mod:`ui.ledger`, docs/audit.md
§8): the page shows what remains beside the verdict, holds the public downloads back while no
budget is set or the release would exceed it, and a second download of the same drawn
release in the session is not charged again. Each press of "Generate release" draws a fresh
secret seed from the operating system's CSPRNG, unless the curator types a recorded one to
replay it (with a warning); the seed is never shown, only written into the curator record
(docs/serving.md §5).

The mechanism is PYPP with the Privacy page's settings by default, or any other mechanism a
recipe can name — AIM, MST, the OpenDP and the seed papers' histograms (:mod:`ui.peer_release`,
docs/verdicts.md §6) — calibrated at the Privacy page's target with m = n; it needs a public
domain for every column, and goes through the same verdict, gate, card, curator record, replay
and ledger.
"""

from __future__ import annotations

import functools

import numpy as np
import streamlit as st

from core.cli import GUESSABLE_SEED
from core.release import bundle as core_bundle
from core.release import gate
from core.plots import quality as plots_quality
from ui import compute, downloads, peer_release, release, state, widgets
from ui import ledger as ui_ledger
from ui.text import literal

st.title("Synthetic data: generate a release")

selection = widgets.require_selection()
pypp_spec = state.release_spec(selection.table.n, selection.table.k, selection.prepared.public_domain)
spec = peer_release.choose(selection, pypp_spec)   # PYPP's spec, or a peer's choice (ui/release.py)
if isinstance(spec, release.PeerChoice):
    st.markdown(peer_release.settings_line(spec))
    problem = peer_release.peer_problem(selection, spec)
    if problem is not None:   # which column needs what: fixed on the Data page, no Generate before
        peer_release.refuse(problem)
        st.stop()
    with widgets.show_errors("Could not calibrate the mechanism: "):
        peer_release.preview(selection, spec)
else:
    st.markdown(f"Settings from the **Privacy** page: {state.regime().label}, "
                f"σ = {spec.sigma:g}, θ = {spec.theta:g}, **m = {spec.m:,}**. The release is random: each press of "
                "**Generate release** draws a fresh secret seed from the operating system's random source, written "
                "only into the CONFIDENTIAL curator record (same data, settings and seed ⇒ same release).")
left, middle, right = st.columns([1, 1, 1])
left.text_input("replay a recorded seed (leave empty for a fresh secret one)", **state.bind("release_seed_replay"),
                placeholder="empty: a fresh secret seed",
                help="Only to replay a release whose seed you recorded (the seed field of CONFIDENTIAL_recipe.json in "
                     "its curator record). A seed a person chose can be guessed, and a guessed seed is as good as "
                     "a published one.")
widgets.number("releases planned from the same data (k)", "releases_planned", step=1, where=middle,
               help="The verdict and every file state the guarantee of all k releases together (composed).")
with widgets.show_errors():
    replayed = release.replay_seed(st.session_state.release_seed_replay)
if replayed is not None:
    st.warning(f"You typed the seed: {GUESSABLE_SEED}. Replay only a seed drawn by this app or the command line "
               "and kept in a CONFIDENTIAL curator record; to publish, empty the box and press **Generate release** "
               "for a fresh secret seed.", icon="⚠️")
right.markdown("&nbsp;")   # aligns the button with the inputs
if right.button("Generate release", type="primary"):
    st.session_state.release_params = release.generate(selection, spec, replayed)

drawn = release.last_drawn(selection, any_mechanism=True)
if drawn is None:
    st.info("Press **Generate release** to draw the synthetic data.")
    st.stop()
if (drawn.spec, drawn.replayed) != (spec, replayed):
    st.info("The settings or the seed to replay changed since the last release: press **Generate release** "
            "again to draw it with the current ones. Showing the last release.")
spec_r, seed_r = drawn.spec, drawn.seed
peer_r = isinstance(spec_r, release.PeerChoice)   # the release shown is a peer's (its panels differ)
with widgets.show_errors("Could not generate the release: "):
    result = release.release(selection, spec_r, seed_r)
    release_key = release.release_key(result)
    figures = release.figures(release_key, result)
    summary = release.summary(release_key, result)
synthetic = result.synthetic

# ------------------------------------------------------------------ the verdict and the gate
if peer_r:   # its own accounting, from the public recipe (the public report states the same)
    guarantee, advice, verdict_spec = release.peer_verdict(result.recipe, result.prepared.n, result.m)
else:
    (guarantee, advice), verdict_spec = compute.release_guarantee(spec_r), spec_r
widgets.verdict_box(guarantee, advice=advice, conditional_on=result.public_report["conditional_on"],
                    spec=verdict_spec)
accepted = []
if guarantee.verdict != "missed":
    for key, consequence in gate.required_acknowledgements(result.public_report).items():
        if st.checkbox(f"I accept that {gate.ACKNOWLEDGEMENTS[key]}: {literal(consequence)}",
                       key=f"acknowledge_{key}"):
            accepted.append(key)
acknowledged = tuple(sorted(accepted))
gate_ok = release.publishable(result, acknowledged)

# ------------------------------------------------------------------ the privacy ledger (docs/audit.md §8)
ledger_name = ui_ledger.dataset_name_input(selection)
ledger_standing = ui_ledger.standing(result, release_key, ledger_name)
ledger_held = ui_ledger.show_standing(ledger_standing)

c1, c2, c3 = st.columns(3)
c1.metric("released rows m", f"{result.m:,}")
if peer_r:   # a peer draws no new values: its rows are cells of the public domain
    c2.metric("mechanism", spec_r.label)
    c3.metric("bins per numeric axis", f"{spec_r.bins:,}")
else:
    c2.metric("rows with a new value (drawn from H)", f"{int(np.count_nonzero(result.is_new)):,}")
    c3.metric("distinct new values K", f"{result.n_new_values:,}")
seed_note = ("Seed: the one you typed (a replay)" if drawn.replayed is not None else
             "Seed: a fresh secret one, drawn from the operating system's random source")
seed_note += ", recorded only in the CONFIDENTIAL curator record (CONFIDENTIAL_recipe.json)."
if peer_r:
    st.caption(f"{seed_note} The rows are drawn from the mechanism's noisy model of the cells (the bins of each "
               "numeric column's public bounds × the public categories), mapped back to original units; no value "
               "outside the public domain is released.")
elif spec_r.regime.pure:
    st.caption(f"{seed_note} New values are rows of the public domain not seen in the data (grid points and "
               "listed categories), chosen uniformly at random and released by name (docs/mathematics.md §3.3.1).")
else:
    st.caption(f"{seed_note} New values are drawn from the base measure H: uniform on the public bounds of a "
               "numeric column (over its grid points when it has a public grid), at full precision unless decimals "
               "were typed or read off the data; uniform over the public category list, or new_category_j "
               "labels, for a categorical one.")
verbatim = result.curator_report["verbatim"]
if peer_r:
    st.caption(f"Curator only: your data hold {verbatim['unique_records_in_data']:,} records whose value is unique; "
               f"this release copies **{verbatim['unique_records_copied']:,}** of them, in "
               f"**{verbatim['unique_rows_copied']:,}** rows (docs/verdicts.md §2).")
elif verbatim["expected_unique_records_copied"] is not None:
    # like with like (docs/verdicts.md §2): distinct records beside their expectation, rows beside theirs
    over_k = ("" if spec_r.releases == 1 else
              f" Over the {spec_r.releases} planned releases, {verbatim['expected_unique_records_copied']:.3g} of "
              "them are expected to appear in at least one.")
    st.caption(f"Curator only: your data hold {verbatim['unique_records_in_data']:,} records whose value is unique. "
               f"A release like this copies on average {verbatim['expected_unique_records_copied_per_release']:.3g} "
               f"of them, in {verbatim['expected_unique_rows_copied']:.3g} rows; this one copies "
               f"**{verbatim['unique_records_copied']:,}** of them, in **{verbatim['unique_rows_copied']:,}** rows "
               f"(docs/verdicts.md §2).{over_k}")
for warning in result.warnings:   # they quote column names: shown as text
    st.warning(literal(warning), icon="⚠️")

st.subheader("Downloads")
d1, d2, d3 = st.columns(3)
if guarantee.verdict == "missed":
    held = "Refused: the release misses its target (see the verdict above)."
elif not gate_ok:
    held = "Tick the acknowledgement above first: it is recorded in release.json."
else:
    held = ledger_held   # no budget, over it, or the data changed under the name (ui/ledger.py)
public_ok = held is None
# Built on the click (ui/ledger.py): charged to the ledger first, then handed out; nothing public
# is stored before. A button held back gets no function at all.
public_zip, public_csv = (ui_ledger.public_builds(result, release_key, acknowledged, ledger_name,
                                                  accept_changed_data=bool(st.session_state.get(
                                                      ui_ledger.ACCEPT_CHANGED_WIDGET)))
                          if public_ok else (b"", b""))
d1.download_button("Download public release (zip)", data=public_zip,
                   file_name=core_bundle.PUBLIC_BUNDLE_NAME, mime="application/zip", key="download_public",
                   type="primary" if public_ok and guarantee.verdict in ("pure", "strong") else "secondary",
                   disabled=not public_ok, on_click="ignore",
                   help=held or ("What may be published: synthetic.csv, the recipe without the seed or the "
                                 "upload's hash, and the guarantee that holds for every dataset of this size "
                                 "(release.json, README.txt, the verdict and what was acknowledged). Charged to the "
                                 "dataset's privacy budget when you click (once per drawn release)."))
downloads.confidential_download(
    "Download CONFIDENTIAL curator record (zip)", release.curator_record(release_key, result, acknowledged),
    file_name=core_bundle.CURATOR_BUNDLE_NAME, mime="application/zip", key="download_curator", where=d2,
    help="Keep it with the confidential data, never publish it: instance-level guarantees, k, singletons, the "
         "full recipe with its seed, the summary table and the figures that show the confidential data.")
# the synthetic CSV is the public data itself: behind the same gate. No download reruns the page:
# a rerun renews the curator record's deferred id, and a click that still holds the old one fails.
d3.download_button("Download synthetic CSV", data=public_csv,
                   file_name="synthetic.csv", mime="text/csv", key="download_csv", disabled=not public_ok,
                   on_click="ignore",
                   help=held)
if guarantee.verdict == "missed":
    st.markdown("The command line replays the curator record's recipe behind the same gate: it refuses to write "
                "this release too (exit status 2, nothing written).")
else:
    st.markdown("The command line replays the curator record's recipe and writes the same synthetic CSV, byte for "
                "byte, behind the same gate (each acknowledgement the release needs is an `--acknowledge`):")
    st.code(release.command_line(selection, tuple(gate.required_acknowledgements(result.public_report))),
            language="bash")

st.subheader("Confidential vs synthetic")
widgets.curator_only_note()
counts = core_bundle.category_counts(result)
for info in result.prepared.column_info:
    if info.kind == "numeric":
        st.plotly_chart(figures[f"overlay_{info.name}"], key=f"overlay_{info.name}")
    else:
        st.markdown(f"**{literal(info.name)}** (categorical): counts")
        st.dataframe(counts[counts["column"] == info.name].drop(columns="column"), hide_index=True)
if summary is not None:
    st.markdown("**Summary per column** (original units; W1 and KDE-L2 between the release and the data)")
    st.dataframe(summary, hide_index=True)

st.subheader("Quality report")
with widgets.show_errors("Could not compute the quality report: "):
    report = release.quality(release_key, result)
    q1, q2, q3 = st.columns(3)
    q1.metric("overall quality", plots_quality.format_score(report.overall))
    q2.metric("column shapes", plots_quality.format_score(report.column_shapes))
    q3.metric("column pair trends", plots_quality.format_score(report.column_pair_trends))
    st.caption("SDMetrics-style scores in [0, 1], 1 = the release reproduces the data: per column the KS complement "
               "(numeric) or the total-variation complement (categorical), per pair of columns the correlation "
               "similarity (two numeric columns) or the contingency similarity; overall = mean of the two "
               "averages (docs/quality.md).")
    st.dataframe(report.to_frame(), hide_index=True)
    # the same scores as charts, on request: each chart costs the browser more than the table
    if st.toggle("Show the scores as charts", key="quality_charts"):
        st.plotly_chart(plots_quality.column_scores_figure(report), key="quality_columns")
        if len(report.pairs):
            st.plotly_chart(plots_quality.pair_scores_figure(report), key="quality_pairs")
    st.warning("CONFIDENTIAL — the quality report compares the release with the confidential data: it is a "
               "curator-only artifact, not covered by the privacy guarantee. Keep it with the curator record "
               "(it is also inside it); do not publish it.", icon="🔒")
    downloads.confidential_download("Download quality report (CSV)",
                                    functools.partial(report.to_csv, confidential=True),
                                    file_name=core_bundle.QUALITY_FILE, mime="text/csv", key="download_quality",
                                    help="CONFIDENTIAL, curator only: its first line says so; read it with "
                                         "pandas.read_csv(..., comment='#').")

with st.expander("First rows of the release"):
    st.dataframe(synthetic.head(50), hide_index=True)
