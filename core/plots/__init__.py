"""Plotly figure builders for the dashboard, the reports and the bundles (docs/README.md).

Every builder takes numbers that were already computed by the rest of :mod:`core`
(frequency tables, privacy curves, releases, comparison runs, audits) and returns a
:class:`plotly.graph_objects.Figure`. No privacy or utility quantity is computed here: the
only arithmetic is presentation (grouping runs into quartiles for a band, anchoring a
reference slope, hiding zeros on a log axis, rounding a displayed number up with
:func:`core.formatting.format_upper`).

Trace names are stable so that the app and the tests can find a series by name:

* δ(ε) plots: one trace per series (for example ``"instance-level δ_x(ε) (paper)"``),
  ``"singleton plateau"`` for T₁ = m/(m + θ + n − 1) (docs/mathematics.md §3.1), ``"δ target"``.
* m*(ε) plots: one trace per series, ``"singleton limit m_sing"``.
* Feasible-region plots: ``"feasibility"`` (heatmap), ``"m*(θ)"`` boundary,
  ``"largest admissible m"`` marker.

Modules: :mod:`.profile` (data profile), :mod:`.privacy` (accounting),
:mod:`.utility` (synthetic data and comparison), :mod:`.informativity`,
:mod:`.experiments` (downstream inference and discovery), :mod:`.audit` (audit and
trade-off curves), :mod:`.coarsening` (advisor), :mod:`.quality` (quality report), :mod:`.ledger`
(the privacy ledger's spend against its budget) and
:mod:`.style` (palette and layout shared by all of them).
"""

from ..formatting import format_upper
from . import audit, coarsening, experiments, quality, style
from .informativity import informativity_figure
from .ledger import ledger_figure
from .privacy import delta_curves_figure, feasible_region_figure, max_m_figure
from .profile import singletons_by_rounding_figure, spectrum_figure
from .style import CURATOR_ONLY
from .utility import category_shares_figure, distribution_overlay_figure, w1_boxplot_figure, w1_frontier_figure

__all__ = [
    "CURATOR_ONLY",
    "audit",
    "category_shares_figure",
    "coarsening",
    "delta_curves_figure",
    "distribution_overlay_figure",
    "experiments",
    "feasible_region_figure",
    "format_upper",
    "informativity_figure",
    "ledger_figure",
    "max_m_figure",
    "quality",
    "singletons_by_rounding_figure",
    "spectrum_figure",
    "style",
    "w1_boxplot_figure",
    "w1_frontier_figure",
]
