"""Figures of the quality report (core.plots.quality)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core.plots import quality as plots_quality
from core.evaluation.quality import quality_report


@pytest.fixture(scope="module")
def report():
    real = pd.DataFrame({"a": [1.0, 2, 3, 4], "b": [2.0, 4, 6, 8], "c": ["x", "x", "y", "y"]})
    syn = pd.DataFrame({"a": [3.0, 4, 5, 6], "b": [8.0, 6, 4, 2], "c": ["x", "x", "x", "y"]})
    return quality_report(real, syn, {"a": "numeric", "b": "numeric", "c": "categorical"})


def test_column_scores_bars_per_metric_with_overall_in_title(report):
    fig = plots_quality.column_scores_figure(report)
    bars = {t.name: t for t in fig.data}
    assert set(bars) == {"KSComplement", "TVComplement"}
    assert list(bars["KSComplement"].x) == ["a", "b"] and list(bars["TVComplement"].x) == ["c"]
    # a: KS complement 0.5 by hand (see test_quality); c: TV complement 0.75
    assert bars["KSComplement"].y[0] == pytest.approx(0.5) and bars["TVComplement"].y[0] == pytest.approx(0.75)
    assert list(bars["TVComplement"].text) == ["0.750"]
    assert f"overall quality {plots_quality.format_score(report.overall)}" in fig.layout.title.text
    assert float(plots_quality.format_score(report.overall)) <= report.overall


def test_pair_heatmap_symmetric_annotated_with_metric_in_hover(report):
    fig = plots_quality.pair_scores_figure(report)
    (heat,) = fig.data
    assert heat.name == "pair scores"
    z = np.array(heat.z, dtype=float)
    assert np.allclose(z, z.T, equal_nan=True) and np.all(np.isnan(np.diag(z)))
    assert list(heat.x) == ["a", "b", "c"]
    assert z[0, 1] == pytest.approx(0.0)                  # correlation +1 vs −1
    assert heat.text[0][1] == "0.000" and heat.text[0][0] == ""
    assert heat.customdata[0][1] == "CorrelationSimilarity" and heat.customdata[0][2] == "ContingencySimilarity"
    assert "overall quality" in fig.layout.title.text


def test_nan_scores_show_as_na_and_bad_input():
    real = pd.DataFrame({"a": [1.0, 1, 1], "b": [1.0, 2, 3]})       # constant a: no correlation
    rep = quality_report(real, real, {"a": "numeric", "b": "numeric"})
    heat = plots_quality.pair_scores_figure(rep).data[0]
    assert heat.text[0][1] == "n/a"
    with pytest.raises(ValueError, match="QualityReport"):
        plots_quality.column_scores_figure(pd.DataFrame())
    empty = quality_report(real, real, {"b": "numeric"})
    z = np.array(plots_quality.pair_scores_figure(empty).data[0].z, dtype=float)
    assert z.shape == (1, 1) and np.isnan(z[0, 0])          # one column: no pair


def test_format_score_rounds_down():
    assert plots_quality.format_score(0.81299) == "0.812"
    assert plots_quality.format_score(1.0) == "1.000" and plots_quality.format_score(0.813) == "0.813"
    assert plots_quality.format_score(float("nan")) == "n/a"
