"""Ledger page: the privacy ledger's datasets, their budgets and releases (docs/audit.md §8).

Every public release the Synthetic data page (or ``python -m core release --ledger``) hands out
is charged to its dataset's budget first (:mod:`ui.ledger`). This page shows which ledger the
app uses (the same default as the command line), lists a dataset's releases with the spend
after each against the budget (table and figure, :func:`core.plots.ledger_figure`), and is
where the curator sets the budget (ε, δ) the disclosure-review board signed. Dataset names and
people are user text: shown as text.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core import plots
from core.formatting import format_lower, format_upper
from core.ledger import UnknownDataset
from ui import ledger as ui_ledger
from ui import widgets
from ui.text import literal

st.title("Privacy ledger")
st.markdown(f"Ledger: `{ui_ledger.shown_location()}`")
st.caption("Found as the command line finds it: the environment variable BNP_SYNTH_LEDGER, the configuration file "
           "(BNP_SYNTH_CONFIG, else ~/.config/bnp-synth/config.toml, key [ledger] location) or the [ledger] "
           "section of .streamlit/secrets.toml, else ~/.local/share/bnp-synth/ledger.sqlite. `python -m core ledger "
           "default show` lists the same releases. A public release is recorded here before any byte of it is "
           "handed out; one that would exceed its dataset's budget is refused.")

with widgets.show_errors("Could not open the privacy ledger: "):
    book = ui_ledger.ledger()
    datasets = {entry.name: entry for entry in book.datasets()}
current = st.session_state.get(ui_ledger.CURRENT_KEY) or ""

# ------------------------------------------------------------------ the budget
st.subheader("Set a dataset's budget")
known = datasets.get(current)
with st.form("ledger_budget"):
    b1, b2, b3 = st.columns([2, 1, 1])
    name = b1.text_input("dataset name", value=current, max_chars=200,
                         help="The name releases are charged to (the Synthetic data page's \"dataset name in the "
                              "privacy ledger\"; published in release.json).")
    eps = b2.number_input("budget ε", min_value=0.0, value=float(known.budget_eps) if known else 1.0,
                          format="%g", help="The total ε all releases of the dataset may spend (pure releases add).")
    delta = b3.number_input("budget δ", min_value=0.0, max_value=0.999999, value=float(known.budget_delta) if known
                            else 1e-6, format="%g", step=1e-6,
                            help="The total δ: σ = 0 releases compose exactly, 1 − Π(1 − T₁ᵢ) "
                                 "(docs/audit.md §8).")
    if st.form_submit_button("Set budget", type="primary"):
        with widgets.show_errors("Could not set the budget: "):
            entry = book.set_budget(name, eps, delta, by=ui_ledger.who())
            datasets[entry.name] = entry
            current = entry.name
            st.success(f"Budget of **{literal(entry.name)}**: ε = {entry.budget_eps:g}, δ = {entry.budget_delta:g} "
                       f"(set by {literal(entry.set_by)}; {len(entry.releases)} release(s) already charged).")

# ------------------------------------------------------------------ one dataset's releases
st.subheader("Releases")
if not datasets:
    st.info("No dataset has a budget yet: set one above before releasing.")
    st.stop()
names = sorted(datasets)
chosen = st.selectbox("dataset", names, index=names.index(current) if current in names else 0,
                      key="ledger_page_dataset")
try:
    entry = book.dataset(chosen)   # read again: another session may have released since
except UnknownDataset:
    entry = datasets[chosen]
spent_eps, spent_delta = entry.cumulative
left_eps, left_delta = entry.remaining
m1, m2, m3, m4 = st.columns(4)
# spent rounded up, what remains rounded down: the safe side of each
m1.metric("budget ε / δ", f"{entry.budget_eps:g} / {entry.budget_delta:g}")
m2.metric("spent ε / δ", f"{format_upper(spent_eps)} / {format_upper(spent_delta)}")
m3.metric("remaining ε / δ (next release)", f"{format_lower(left_eps)} / {format_lower(left_delta)}")
m4.metric("releases", f"{len(entry.releases):,}")
st.caption(f"Budget set by {literal(entry.set_by)} at {entry.set_at:%Y-%m-%d %H:%M:%S} UTC.")
if entry.incomplete:
    st.warning(f"{entry.incomplete} release(s) are incomplete: recorded, but the public output was not confirmed "
               "written (a crash, or a download being built now). They count as spent.", icon="⚠️")
if not entry.releases:
    st.info("No release charged to this dataset yet.")
    st.stop()
table = pd.DataFrame([{
    "#": r.index, "time (UTC)": r.at.strftime("%Y-%m-%d %H:%M:%S"), "by": r.by,
    "mechanism": (f"{r.mechanism} m={r.spec.get('m', '?')}" if r.spec.get("sigma") is None else
                  f"{r.mechanism} σ={r.spec['sigma']} θ={r.spec.get('theta', '?')} m={r.spec.get('m', '?')}"),
    "ε": format_upper(r.eps, 6), "δ": format_upper(r.delta, 6), "cumulative ε": format_upper(r.cumulative_eps, 6),
    "cumulative δ": format_upper(r.cumulative_delta, 6),
    "state": r.state + (" (data changed)" if r.data_changed else ""), "sha256": (r.sha256 or "—")[:12],
} for r in entry.releases])
st.table(table.set_index("#"))   # cells shown as text; a ledger lists tens of releases, not millions
st.plotly_chart(plots.ledger_figure([r.index for r in entry.releases], [r.cumulative_eps for r in entry.releases],
                                    [r.cumulative_delta for r in entry.releases], budget_eps=entry.budget_eps,
                                    budget_delta=entry.budget_delta,
                                    incomplete=[r.state == "incomplete" for r in entry.releases],
                                    dataset=entry.name), key="ledger_figure")
