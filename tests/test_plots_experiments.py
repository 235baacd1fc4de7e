"""Tests of core/plots/experiments.py: each figure carries exactly the numbers it was given."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from core import evaluation as inference
from core.plots import experiments as pe


def _trace(fig: go.Figure, name: str):
    found = [t for t in fig.data if t.name == name]
    assert len(found) == 1, f"expected one trace named {name!r}, got {[t.name for t in fig.data]}"
    return found[0]


@pytest.fixture(scope="module")
def summary() -> pd.DataFrame:
    """A real posterior summary from core.evaluation (mean, quartiles, two tails)."""
    rng = np.random.default_rng(3)
    release = rng.choice(np.linspace(0.05, 0.95, 19), size=300)
    confidential = rng.choice(np.linspace(0.05, 0.95, 19), size=1000)
    post = inference.dp_posterior_functionals(release, 2.0, (0.0, 1.0), 400, rng, thresholds=(0.3, 0.7))
    truth = inference.empirical_functionals(confidential, thresholds=(0.3, 0.7))
    return post.summary(confidential=truth)


def test_posterior_intervals_split_locations_and_probabilities(summary):
    fig = pe.posterior_intervals_figure(summary, value_label="x")
    posterior = _trace(fig, pe.interval_trace_name(0.95))
    truth = _trace(fig, pe.CONFIDENTIAL_TRACE)
    tail_posterior = _trace(fig, pe.PROBABILITY_PREFIX + pe.interval_trace_name(0.95))
    tail_truth = _trace(fig, pe.PROBABILITY_PREFIX + pe.CONFIDENTIAL_TRACE)
    locations = summary.iloc[:4]
    tails = summary.iloc[4:]
    assert list(posterior.y) == ["mean", "Q1 (25%)", "median", "Q3 (75%)"]
    assert list(tail_posterior.y) == ["P(X > 0.3)", "P(X > 0.7)"]
    np.testing.assert_array_equal(posterior.x, locations["posterior_mean"])
    np.testing.assert_array_equal(truth.x, locations["confidential"])
    np.testing.assert_array_equal(tail_posterior.x, tails["posterior_mean"])
    np.testing.assert_array_equal(tail_truth.x, tails["confidential"])
    # the error bars reach exactly the interval end points
    np.testing.assert_allclose(posterior.x + posterior.error_x.array, locations["upper"], rtol=0, atol=1e-15)
    np.testing.assert_allclose(posterior.x - posterior.error_x.arrayminus, locations["lower"], rtol=0, atol=1e-15)
    np.testing.assert_allclose(tail_posterior.x + tail_posterior.error_x.array, tails["upper"], atol=1e-15)
    # two x axes: the probabilities are not squeezed onto the data axis
    assert posterior.xaxis != tail_posterior.xaxis
    assert fig.layout.xaxis.title.text == "x" and fig.layout.xaxis2.title.text == "probability"
    # one legend entry per kind of marker
    assert [t.showlegend for t in fig.data] == [True, True, False, False]


def test_posterior_intervals_without_confidential_or_tails(summary):
    analyst_view = summary.drop(columns="confidential").iloc[:4]
    fig = pe.posterior_intervals_figure(analyst_view, level=0.9)
    assert [t.name for t in fig.data] == [pe.interval_trace_name(0.9)]
    assert "90% credible interval" in fig.data[0].name
    assert "xaxis2" not in fig.layout.to_plotly_json()


def test_posterior_intervals_explicit_probability_list(summary):
    fig = pe.posterior_intervals_figure(summary, probabilities=["P(X > 0.7)"])
    assert list(_trace(fig, pe.PROBABILITY_PREFIX + pe.interval_trace_name()).y) == ["P(X > 0.7)"]
    assert "P(X > 0.3)" in list(_trace(fig, pe.interval_trace_name()).y)
    with pytest.raises(ValueError, match="not in summary"):
        pe.posterior_intervals_figure(summary, probabilities=["P(X > 0.5)"])


@pytest.mark.parametrize("bad, match", [
    (pd.DataFrame({"functional": ["mean"], "posterior_mean": [0.5]}), "lower"),
    (pd.DataFrame(columns=["functional", "posterior_mean", "lower", "upper"]), "empty"),
    ([1, 2, 3], "DataFrame"),
])
def test_posterior_intervals_reject_bad_tables(bad, match):
    with pytest.raises(ValueError, match=match):
        pe.posterior_intervals_figure(bad)


def test_coverage_figure_carries_the_table():
    rng = np.random.default_rng(5)
    release_source = rng.choice(np.linspace(0.05, 0.95, 10), size=400)
    result = inference.repeated_release_experiment(release_source, 1.0, 50, (0.0, 1.0), rng, replicates=20,
                                                   n_draws=200, thresholds=(0.5,))
    table = result.table()
    fig = pe.coverage_figure(table, level=result.level)
    bars = _trace(fig, pe.COVERAGE_TRACE)
    nominal = _trace(fig, pe.NOMINAL_TRACE)
    assert list(bars.x) == list(table["functional"])
    np.testing.assert_array_equal(bars.y, table["coverage"])
    np.testing.assert_array_equal(nominal.y, [0.95] * len(table))
    # ±1.96 SE, cut at 0 and 1
    half = 1.96 * table["coverage_se"].to_numpy()
    np.testing.assert_allclose(bars.error_y.array, np.minimum(half, 1 - table["coverage"]))
    np.testing.assert_allclose(bars.error_y.arrayminus, np.minimum(half, table["coverage"]))
    assert np.all(bars.y + bars.error_y.array <= 1 + 1e-12)


def test_coverage_figure_rejects_bad_input():
    table = pd.DataFrame({"functional": ["mean"], "coverage": [0.9], "coverage_se": [0.03]})
    with pytest.raises(ValueError, match="level"):
        pe.coverage_figure(table, level=1.5)
    with pytest.raises(ValueError, match="coverage_se"):
        pe.coverage_figure(table.drop(columns="coverage_se"))
