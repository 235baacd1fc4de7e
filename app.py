"""Data page: choose the confidential data, its columns and public transforms; profile it.

Run with ``streamlit run app.py``. The other pages (pages/) use the selection made here,
carried in the session state; every number comes from ``core``.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

import ui_state as ui
from core import plots

st.set_page_config(page_title="bnp-synth · Data", page_icon="🔒", layout="wide")
ui.init_state()

st.title("Private synthetic data: choose the data")
st.caption("Pitman–Yor posterior-predictive (PYPP) synthetic data, compared with histogram baselines. "
           "Pick a dataset and columns here, then go to **Privacy** to set the mechanism, "
           "**Synthetic data** to release, and **Compare** to see the utility of each mechanism.")

# ------------------------------------------------------------------ source
samples = ui.sample_files()
source_kinds = ["sample", "upload"] if samples else ["upload"]
if st.session_state.source_kind not in source_kinds:
    st.session_state.source_kind = "upload"
st.radio("Data source", source_kinds, horizontal=True,
         format_func={"sample": "Bundled sample", "upload": "Upload a CSV"}.get, **ui.bind("source_kind"))

if st.session_state.source_kind == "sample":
    if st.session_state.sample_name not in samples:
        st.session_state.sample_name = ui.DEFAULT_SAMPLE if ui.DEFAULT_SAMPLE in samples else samples[0]
    choice = st.selectbox("Bundled dataset", samples, index=samples.index(st.session_state.sample_name))
    if choice != st.session_state.sample_name:
        ui.set_source_sample(choice)
else:
    uploaded = st.file_uploader("CSV file with a header row (UTF-8, comma-separated)", type=["csv", "txt"],
                                key="uploader", max_upload_size=ui.MAX_UPLOAD_MB)
    if uploaded is not None:
        content = uploaded.getvalue()
        current = st.session_state.upload
        if current is None or current["hash"] != ui.content_hash(content) or current["name"] != uploaded.name:
            problem = ui.set_source_upload(uploaded.name, content)
            if problem:
                st.error(f"Could not use {uploaded.name}: {problem}")

selection, problem = ui.load_selection()
source = ui.current_source()
frame = None
if source is not None:
    try:
        frame = ui.read_frame(source.key, source.content)
    except ValueError:
        frame = None

# ------------------------------------------------------------------ columns and transforms
if frame is not None:
    st.subheader("Columns and public transforms")
    all_columns = [str(c) for c in frame.columns]
    chosen = st.multiselect("Columns to release (several columns: each row is one value)", all_columns,
                            **ui.bind("columns"))
    if not chosen:
        st.error("Choose at least one column to release.")
        st.stop()
    for c in chosen:
        if c not in st.session_state.transforms:
            st.session_state.transforms[c] = ui.default_transform(frame, c)
    for c in chosen:
        with st.expander(f"Column {c!r}", expanded=len(chosen) == 1):
            st.radio("Kind", ["numeric", "categorical"], horizontal=True, **ui.bind_transform(c, "kind"))
            if st.session_state.transforms[c]["kind"] == "numeric":
                left, mid, right = st.columns(3)
                left.checkbox("log transform (positive values)", **ui.bind_transform(c, "log"))
                mid.selectbox("Rounding precision (decimals kept)", ui.ROUNDING_CHOICES,
                              format_func=lambda d: "as recorded" if d is None else str(d),
                              **ui.bind_transform(c, "decimals"))
                public = right.checkbox("I know public bounds for this column", **ui.bind_transform(c, "bounds_public"))
                if public:
                    b1, b2 = st.columns(2)
                    b1.number_input("public lower bound", format="%g", **ui.bind_transform(c, "lo"))
                    b2.number_input("public upper bound", format="%g", **ui.bind_transform(c, "hi"))
    selection, problem = ui.load_selection()

if problem:
    st.error(problem)
    ui.sidebar_summary(None)
    st.stop()

# ------------------------------------------------------------------ profile
prepared, table = selection.prepared, selection.table
ui.sidebar_summary(selection.profile())
st.subheader("Profile of the confidential data")
c1, c2, c3, c4 = st.columns(4)
c1.metric("records n", f"{table.n:,}")
c2.metric("distinct values k", f"{table.k:,}")
c3.metric("singletons k₁", f"{table.singletons:,}")
c4.metric("largest multiplicity", f"{int(table.counts.max()):,}")

for info in prepared.column_info:
    if info.kind == "numeric" and info.bounds_from_data:
        st.warning(f"Bounds of {info.name!r} ({info.bounds[0]:g}, {info.bounds[1]:g}) were read off the "
                   "confidential data. They are not private: the differential-privacy guarantees on the "
                   "next pages do not cover them. Enter public bounds to remove this leak.", icon="⚠️")
    if info.n_clipped:
        st.info(f"{info.n_clipped:,} value(s) of {info.name!r} lie outside the public bounds and were clipped.")
if table.singletons:
    st.info(f"{table.singletons:,} value(s) appear only once. With σ = 0 each singleton sets a floor on δ "
            "(the singleton plateau m/(m + θ + n − 1)) that no ε removes; rounding to a coarser precision "
            "merges values and can remove singletons.")

r, distinct = table.spectrum()
st.plotly_chart(plots.spectrum_figure(r, distinct), key="spectrum")

numeric_single = prepared.d == 1 and prepared.kinds[0] == "numeric"
if numeric_single:
    column = prepared.columns[0]
    rounding = ui.rounding_table(selection.source.key, selection.source.content, column)
    shown = rounding.assign(decimals=["as recorded" if pd.isna(d) else str(int(d)) for d in rounding["decimals"]])
    left, right = st.columns([2, 1])
    with right:
        st.markdown("**How rounding changes the singletons** (original units, before bounds and log)")
        st.dataframe(shown, hide_index=True)
    with left:
        plot_rows = rounding.dropna(subset=["decimals"])
        current = st.session_state.transforms[column]["decimals"]
        st.plotly_chart(plots.singletons_by_rounding_figure(plot_rows["decimals"].astype(int),
                                                            plot_rows["singletons"],
                                                            distinct=plot_rows["distinct"], current=current),
                        key="rounding")

with st.expander("Preview of the prepared data (curator-only: confidential)"):
    ui.curator_only_note()
    st.dataframe(prepared.to_original(prepared.values).head(20), hide_index=True)
