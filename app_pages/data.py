"""Data page: choose the confidential data, its columns and public transforms; profile it.

The other pages use the selection made here, carried in the session state; every number
comes from ``core``. An upload may be a CSV or a Parquet file, and either may be a
frequency table (value(s) and a count per row). Large files, Parquet and frequency tables
are reduced to the frequency table of the released columns (:mod:`ui.selection`, the lean
path): the columns are listed from a bounded head of the file.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from core import data as core_data
from core import plots
from ui import selection as sel
from ui import state, widgets
from ui.text import literal, quoted

st.title("Private synthetic data: choose the data")
st.caption("Pitman–Yor posterior-predictive (PYPP) synthetic data, compared with histogram baselines. "
           "Pick a dataset and columns here, then go to **Privacy** to set the mechanism, "
           "**Synthetic data** to release, and **Compare** to see the utility of each mechanism.")

# ------------------------------------------------------------------ source
samples = sel.sample_files()
source_kinds = ["sample", "upload"] if samples else ["upload"]
if st.session_state.source_kind not in source_kinds:
    st.session_state.source_kind = "upload"
st.radio("Data source", source_kinds, horizontal=True,
         format_func={"sample": "Bundled sample", "upload": "Upload a CSV or Parquet file"}.get,
         **state.bind("source_kind"))

if st.session_state.source_kind == "sample":
    if st.session_state.sample_name not in samples:
        default = state.DEFAULTS["sample_name"]
        st.session_state.sample_name = default if default in samples else samples[0]
    choice = st.selectbox("Bundled dataset", samples, index=samples.index(st.session_state.sample_name))
    if choice != st.session_state.sample_name:
        sel.set_source_sample(choice)
else:
    current_upload = st.session_state.upload
    if current_upload is not None:
        # Streamlit's uploader forgets its file when the page is left; the session keeps it (the bytes
        # live in st.session_state), so name it here rather than show an empty box as if nothing were loaded.
        st.caption(f"Current file: {literal(current_upload['name'])} ({sel.size_text(len(current_upload['bytes']))}). "
                   "Upload another file to replace it.")
    uploaded = st.file_uploader(f"CSV file (comma, semicolon, tab or pipe separated) or Parquet file; at most "
                                f"{state.MAX_UPLOAD_MB} MB", type=["csv", "txt", "tsv", "parquet"], key="uploader",
                                max_upload_size=state.MAX_UPLOAD_MB)
    if uploaded is not None:
        content = uploaded.getvalue()
        current = st.session_state.upload
        if current is None or current["hash"] != sel.content_hash(content) or current["name"] != uploaded.name:
            problem = sel.set_source_upload(uploaded.name, content)
            if problem:
                st.error(f"Could not use {literal(uploaded.name)}: {literal(problem)}")
        # The session keeps the bytes it needs (st.session_state): the server's copy goes.
        sel.release_uploaded_file(uploaded.file_id)

source = sel.current_source()
head, read_problem = None, None
if source is not None:
    lean = sel.lean_path(source)
    try:
        # The exact path reads the whole (small) file; the lean path only a bounded head.
        head = sel.head_of(source.key, source.content, sel.read_options(), source.name, not lean)
    except ValueError as exc:
        read_problem = str(exc)   # shown below, next to the reader's options that may fix it
frame = None if head is None else head.frame

# ------------------------------------------------------------------ how the file is read
if source is not None and source.file_format == "parquet":
    with st.expander("How the file is read", expanded=read_problem is not None):
        if head is not None:
            st.markdown(f"**Parquet file: {head.n_rows:,} rows × {len(head.columns):,} columns.** Its columns are "
                        "typed, so there is no separator, encoding or header to decide. The columns and their "
                        f"default kinds come from the schema and the first {len(frame):,} rows; the released "
                        "columns are counted over every row by DuckDB.")
    if read_problem:
        st.error(f"Could not read {literal(source.name)}: {literal(read_problem)}")
        widgets.sidebar_summary(None)
        st.stop()
elif source is not None:
    decisions = None if head is None else head.decisions
    needs_answer = decisions is not None and decisions.should_confirm_header
    with st.expander("How the file is read", expanded=read_problem is not None or needs_answer):
        if decisions is not None and head.complete:
            st.markdown(
                f"**{decisions.n_rows:,} rows × {decisions.n_columns:,} columns.** "
                f"Separator: {decisions.delimiter_name} ({'detected' if decisions.delimiter_detected else 'chosen'}); "
                f"encoding: {decisions.encoding} ({'detected' if decisions.encoding_detected else 'given'}); "
                f"first row: {'column names' if decisions.header else 'a record'} "
                f"({'guessed' if decisions.header_guessed else 'chosen'}); line endings: {decisions.line_endings}.")
        elif decisions is not None:
            st.markdown(
                f"**{decisions.n_columns:,} columns; a large file, read in two steps.** Separator: "
                f"{decisions.delimiter_name} ({'detected' if decisions.delimiter_detected else 'chosen'}); "
                f"encoding: {decisions.encoding} ({'detected' if decisions.encoding_detected else 'given'}); "
                f"first row: {'column names' if decisions.header else 'a record'} "
                f"({'guessed' if decisions.header_guessed else 'chosen'}); line endings: {decisions.line_endings}.")
            st.caption(f"These decisions, the column list and the default kinds were made on the file's first "
                       f"{sel.size_text(core_data.HEAD_BYTES)} ({decisions.n_rows:,} rows); DuckDB then reads every "
                       "row of the released columns, with the same decisions, to count their values.")
        if decisions is not None:
            for note in decisions.notes:
                st.caption(literal(note))
        left, mid, right = st.columns(3)
        left.selectbox("Field separator", sel.SEPARATOR_OPTIONS, format_func=sel.SEPARATOR_LABELS.get,
                       **sel.bind_read_option("sep", none_as=sel.DETECT))
        mid.selectbox("Is the first row a header?", sel.HEADER_OPTIONS, format_func=sel.HEADER_LABELS.get,
                      **sel.bind_read_option("header", none_as=sel.DETECT))
        right.selectbox("Thousands separator in numbers", sel.THOUSANDS_OPTIONS,
                        format_func=sel.THOUSANDS_LABELS.get, **sel.bind_read_option("thousands", none_as=sel.NONE),
                        help="Remove it from numbers grouped by threes, such as 1,234,567 (only when you say so).")
        na_text = 0 if decisions is None else sum(c.n_na_text for c in decisions.columns)
        if na_text or st.session_state.read_options.get("keep_na_text"):
            st.checkbox(f"Keep cells such as 'NA' or 'NULL' as category labels ({na_text:,} read as missing now)",
                        **sel.bind_read_option("keep_na_text"),
                        help="For a column where NA is a real category (e.g. 'not applicable'). Empty cells "
                             "stay missing.")
    if needs_answer:
        st.warning("The first row looks like data, so it was read as the first record and the columns are named "
                   "column_1, column_2, …. If it holds the column names, choose **yes** under *Is the first row "
                   "a header?* above.", icon="❓")
    if read_problem:
        st.error(f"Could not read {literal(source.name)}: {literal(read_problem)}")
        widgets.sidebar_summary(None)
        st.stop()

# ------------------------------------------------------------------ frequency table
if frame is not None and not source.is_sample:
    st.subheader("Records or counts")
    st.toggle("This file is a frequency table (value(s) and a count of records per row)",
              **state.bind_value("_w_is_frequency_table", st.session_state.counts_column is not None,
                                 lambda on: sel.set_counts_column(
                                     core_data.default_counts_column(frame) if on else None)),
              help="A custodian can aggregate inside their own system and hand over only the released column(s) "
                   "and a count per row: the raw records never leave it.")
    if st.session_state.counts_column is not None:
        st.selectbox("Column holding the counts (whole numbers ≥ 0)", [str(c) for c in frame.columns],
                     **state.bind_value("_w_counts_column", st.session_state.counts_column, sel.set_counts_column))

# ------------------------------------------------------------------ columns and transforms
if frame is not None:
    st.subheader("Columns and public transforms")
    counts_column = st.session_state.counts_column
    all_columns = [str(c) for c in frame.columns if str(c) != counts_column]
    sel.ensure_columns(frame)
    chosen = st.multiselect("Columns to release (several columns: each row is one value)", all_columns,
                            **state.bind("columns"))
    if not chosen:
        st.error("Choose at least one column to release.")
        st.stop()
    for c in chosen:
        if c not in st.session_state.transforms:
            st.session_state.transforms[c] = sel.default_transform(frame, c)
        st.session_state.transforms[c].setdefault("missing", None)
    missing = sel.missing_counts(chosen)
    for c in chosen:
        undecided = missing.get(c, 0) and st.session_state.transforms[c]["missing"] is None
        with st.expander(f"Column {quoted(c)}", expanded=len(chosen) == 1 or bool(undecided)):
            st.radio("Kind", ["numeric", "categorical"], horizontal=True, **state.bind_transform(c, "kind"))
            if missing.get(c, 0):
                st.radio(f"Missing values: {missing[c]:,} record(s) have no value in this column",
                         sel.MISSING_OPTIONS, format_func=sel.MISSING_LABELS.get,
                         **state.bind_transform(c, "missing", none_as=sel.MISSING_UNSET),
                         help="Missing is a value: one more value (one more public category when the column "
                              "has a public list), released as an empty cell; the guarantee is unchanged. Drop: "
                              "the records with a missing value leave before the mechanism, so n is counted "
                              "after dropping, a number that depends on the data (both reports say so). "
                              "docs/mathematics.md §2.5.")
            if st.session_state.transforms[c]["kind"] == "numeric":
                left, mid, right = st.columns(3)
                left.checkbox("log transform (positive values)", **state.bind_transform(c, "log"))
                mid.selectbox("Rounding precision (decimals kept)", sel.ROUNDING_OPTIONS, format_func=sel.rounding_label,
                              help="Typed decimals round every value before the mechanism and new values after "
                                   "it: public. Not rounded: new values keep their full precision. As recorded "
                                   "in the data: new values take the precision the records show — read off the "
                                   "confidential data, a choice no guarantee covers (docs/mathematics.md §2.4).",
                              **state.bind_value(f"_w_tf_{c}_decimals",
                                                 sel.rounding_option(st.session_state.transforms[c]),
                                                 sel.rounding_setter(c)))
                if st.session_state.transforms[c].get("precision_from_data"):
                    mid.caption("New values take the decimals the records show: read off the confidential data, "
                                "a data-dependent choice the reports name and the release asks you to acknowledge.")
                public = right.checkbox("I know public bounds for this column",
                                        help="Bounds known without looking at this file (a code book, a legal "
                                             "range). Unticked, the bounds are read off the data, which the "
                                             "guarantee does not cover. Values outside typed bounds are clipped.",
                                        **state.bind_transform(c, "bounds_public"))
                if public:
                    b1, b2, b3 = st.columns(3)
                    # Empty until typed: no default bound (a [0, 1] default would clip every value).
                    b1.number_input("public lower bound", value=None, format="%g", placeholder="type it",
                                    **state.bind_transform(c, "lo"))
                    b2.number_input("public upper bound", value=None, format="%g", placeholder="type it",
                                    **state.bind_transform(c, "hi"))
                    b3.number_input("public grid step (0 = none)", min_value=0.0, format="%g",
                                    help="Round every value to the nearest point lo + j·step (log units with log "
                                         "on): the column becomes categorical over those public points and can be "
                                         "released with pure ε-DP (Dirichlet–multinomial, σ < 0; docs/mathematics.md "
                                         "§3.3.1). Choose the step from public knowledge, not from this file.",
                                    **state.bind_value(f"_w_tf_{c}_grid", st.session_state.transforms[c].get("grid")
                                                       or 0.0, sel.grid_setter(c)))
                    if sel.bounds_pending(st.session_state.transforms[c]):
                        st.info("Type both public bounds. Until both are typed nothing is clipped: the bounds "
                                "are read off the data, which is not private (see the warning under the "
                                "profile).", icon="✏️")
                else:
                    st.caption("Bounds read off the data: not private (see the warning under the profile). "
                               "Tick *I know public bounds* to type public ones.")
            else:
                st.text_input("Public category list (optional, comma-separated)",
                              help="Type the categories from a public source (a code list, a census "
                                   "classification), never from this file: with every column on a public domain "
                                   "the release can be pure ε-DP (Dirichlet–multinomial, σ < 0). Values of the "
                                   "data outside the list are refused.",
                              **state.bind_value(f"_w_tf_{c}_categories",
                                                 sel.category_list_text(st.session_state.transforms[c].get("categories")),
                                                 sel.categories_setter(c)))
selection, problem = sel.load_selection()
if problem:
    (st.info if sel.waiting_for_upload() else st.error)(literal(problem))
    widgets.sidebar_summary(None)
    st.stop()

# ------------------------------------------------------------------ profile
prepared, table = selection.prepared, selection.table
widgets.sidebar_summary(selection.profile())
st.subheader("Profile of the confidential data")
c1, c2, c3, c4 = st.columns(4)
c1.metric("records n", f"{table.n:,}")
c2.metric("distinct values k", f"{table.k:,}")
c3.metric("singletons k₁", f"{table.singletons:,}")
c4.metric("largest multiplicity", f"{int(table.counts.max()):,}")
if selection.counts_column is not None:
    st.success(f"**The raw records never left the custodian's system.** This file is a frequency table: column "
               f"{quoted(selection.counts_column)} holds the counts, so n = {table.n:,} records is the sum of the "
               "counts over the file's rows. Only the value(s) and their counts were uploaded.", icon="🏛️")
if selection.lean:
    st.caption(f"Lean path ({selection.file_format.upper()}, {sel.size_text(len(selection.source.content))}): the "
               f"released column(s) were reduced by DuckDB to their frequency table of k = {table.k:,} distinct "
               "values; the session keeps the file's bytes and that table, not the n rows.")
    for note in selection.notes:
        st.caption(literal(note))

for info in prepared.column_info:
    if info.kind == "numeric" and info.bounds_from_data:
        st.warning(f"Bounds of {quoted(info.name)} ({info.bounds[0]:g}, {info.bounds[1]:g}) were read off the "
                   "confidential data. They are not private: the differential-privacy guarantees on the "
                   "next pages do not cover them. Enter public bounds to remove this leak.", icon="⚠️")
    if info.n_clipped:
        # Clipping is what typed public bounds do; clipping many values usually means mistyped bounds.
        share = info.n_clipped / max(table.n, 1)
        (st.warning if share >= 0.01 else st.info)(
            f"{info.n_clipped:,} of the {table.n:,} values of {quoted(info.name)} ({share:.1%}) lie outside the "
            f"public bounds ({info.bounds[0]:g}, {info.bounds[1]:g}) and were clipped to them"
            + (": check the bounds." if share >= 0.01 else "."))
if prepared.dropped_columns:
    st.info(f"{prepared.n_dropped:,} of the {table.n + prepared.n_dropped:,} records were dropped before the "
            f"mechanism because a column set to drop them has a missing value (the counts per column are in the "
            f"column panels above). n = {table.n:,} counts the records left: a number that depends on the data, "
            "which the public report states; the guarantee is stated for these n records.")
if table.singletons:
    st.info(f"{table.singletons:,} value(s) appear only once. With σ = 0 each singleton sets a floor on δ "
            "(the singleton plateau m/(m + θ + n − 1)) that no ε removes; rounding to a coarser precision "
            "merges values and can remove singletons.")

r, distinct = table.spectrum()
st.plotly_chart(plots.spectrum_figure(r, distinct), key="spectrum")

if prepared.d == 1 and prepared.kinds[0] == "numeric":
    column = prepared.columns[0]
    with widgets.show_errors("The rounding profile cannot be computed: ", stop=False):
        rounding = sel.rounding_table(selection.source.key, selection.source.content, sel.read_options(), column,
                                      selection.counts_column, selection.source.name, selection.lean)
        shown = rounding.assign(decimals=[sel.AS_RECORDED if pd.isna(d) else str(int(d))
                                          for d in rounding["decimals"]])
        left, right = st.columns([2, 1])
        with right:
            st.markdown("**How rounding changes the singletons** (original units, before bounds and log)")
            st.dataframe(shown, hide_index=True)
            if selection.lean:
                st.caption("Computed on the distinct values and their counts (exact distinct values and singletons).")
        with left:
            plot_rows = rounding.dropna(subset=["decimals"])
            current = st.session_state.transforms[column]["decimals"]
            st.plotly_chart(plots.singletons_by_rounding_figure(plot_rows["decimals"].astype(int),
                                                                plot_rows["singletons"],
                                                                distinct=plot_rows["distinct"], current=current),
                            key="rounding")

with st.expander("Preview of the prepared data (curator-only: confidential)"):
    widgets.curator_only_note()
    if prepared.from_table:
        # No rows are held: the first distinct values of the table and the records each stands for.
        st.caption("The first 20 distinct values of the frequency table, with the number of records of each.")
        preview = prepared.to_original(table.atoms[:20]).assign(records=np.asarray(table.counts[:20]))
    else:
        preview = prepared.to_original(prepared.values).head(20)
    # Arrow cannot hold Python ints beyond int64 (kept exact by core.data): show such columns as text
    st.dataframe(preview.astype({c: str for c in preview.columns if preview[c].dtype == object}), hide_index=True)

# ------------------------------------------------------------------ coarsening advisor
# Guarded: the page works while ui/advisor.py does not exist yet.
try:
    from ui import advisor  # singleton-aware coarsening advisor
except ImportError:
    advisor = None
if advisor is not None:
    advisor.render_advisor()
