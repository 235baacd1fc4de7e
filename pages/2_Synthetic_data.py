"""Synthetic data page: release m values with the current settings, compare, download."""

from __future__ import annotations

import numpy as np
import streamlit as st

import ui_state as ui

st.set_page_config(page_title="bnp-synth · Synthetic data", page_icon="🔒", layout="wide")
ui.init_state()
st.title("Synthetic data: generate a release")

selection = ui.require_selection()
table, prepared = selection.table, selection.prepared
sigma, theta = ui.py_parameters(table.k)
m = int(st.session_state.m)

st.markdown(f"Settings from the **Privacy** page: {ui.REGIMES[st.session_state.regime]}, "
            f"σ = {sigma:g}, θ = {theta:g}, **m = {m:,}**. The release is random: the seed below makes "
            "it reproducible (same data, settings and seed ⇒ same release).")
left, right = st.columns([1, 2])
left.number_input("seed", min_value=0, max_value=2**32 - 1, step=1, **ui.bind("seed"))
seed = int(st.session_state.seed)
if right.button("Generate release", type="primary"):
    st.session_state.release_params = (selection.key, sigma, theta, m, seed)

params = st.session_state.get("release_params")
if params is None:
    st.info("Press **Generate release** to draw the synthetic data.")
    st.stop()
if params != (selection.key, sigma, theta, m, seed):
    st.info("The data, settings or seed changed since the last release: press **Generate release** "
            "again to draw it with the current ones. Showing the last release.")
key, sigma_r, theta_r, m_r, seed_r = params
if key != selection.key:
    st.stop()
release = ui.pypp_synthetic(key, prepared, sigma_r, theta_r, m_r, seed_r)
synthetic = release["frame"]
n_new_rows = int(np.count_nonzero(release["is_new"]))

c1, c2, c3 = st.columns(3)
c1.metric("released rows m", f"{len(synthetic):,}")
c2.metric("rows with a new value (drawn from H)", f"{n_new_rows:,}")
c3.metric("distinct new values K", f"{release['n_new_values']:,}")
st.caption(f"Seed {seed_r}. New values are drawn from the base measure H (uniform on the public bounds "
           "of each numeric column; new_category_j labels for categorical ones).")

confidential = ui.confidential_original(key, prepared)
numeric = ui.numeric_columns(prepared)
figures = {f"overlay_{c}": ui.overlay_figure(confidential, synthetic, c) for c in numeric}
summary = (ui.synthetic_summary(params, confidential, synthetic, tuple(numeric)) if numeric else None)
eps, delta = float(st.session_state.eps), float(st.session_state.delta)
command = ui.command_line(selection, sigma_r, theta_r, m_r, eps, delta, seed_r)

d1, d2 = st.columns(2)
d1.download_button("Download synthetic CSV", data=ui.csv_bytes(synthetic), file_name="synthetic.csv",
                   mime="text/csv", key="download_csv")
bundle = ui.release_bundle(params + (eps, delta), selection, synthetic, summary, figures, sigma_r, theta_r, m_r,
                           eps, delta, seed_r, int(release["n_new_values"]))
d2.download_button("Download release bundle (zip)", data=bundle, file_name="release_bundle.zip",
                   mime="application/zip", key="download_bundle",
                   help="report.json (every parameter, the seed and each guarantee at the current ε and δ "
                        "target), synthetic.csv, summary.csv, the figures as standalone HTML, and command.txt")
if command:
    st.markdown("Command line that regenerates this release:")
    st.code(command, language="bash")
else:
    st.caption("The per-column transforms chosen here cannot be expressed with the command line's options; "
               "the bundle's report.json records them.")

st.subheader("Confidential vs synthetic")
ui.curator_only_note()
for info in prepared.column_info:
    if info.kind != "numeric":
        counts = (confidential[info.name].value_counts().rename("confidential").to_frame()
                  .join(synthetic[info.name].value_counts().rename("synthetic"), how="outer").fillna(0))
        st.markdown(f"**{info.name}** (categorical): counts")
        st.dataframe(counts)
        continue
    st.plotly_chart(figures[f"overlay_{info.name}"], key=f"overlay_{info.name}")
if summary is not None:
    st.markdown("**Summary per column** (original units; W1 and KDE-L2 between the release and the data)")
    st.dataframe(summary, hide_index=True)

with st.expander("First rows of the release"):
    st.dataframe(synthetic.head(50), hide_index=True)
