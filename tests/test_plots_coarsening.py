"""Frontier figure of the coarsening advisor (core.plots.coarsening)."""

from __future__ import annotations

import html

import numpy as np
import pandas as pd
import pytest

from core.data import ColumnTransform
from core.planning import advise, candidate_grid
from core.plots.coarsening import coarsening_frontier_figure


@pytest.fixture(scope="module")
def result():
    rng = np.random.default_rng(5)
    n = 1500
    frame = pd.DataFrame({"wage": np.round(rng.lognormal(7, 0.5, n), 2),
                          "educ": rng.choice(list("ABCDE"), n, p=[0.4, 0.3, 0.2, 0.09, 0.01])})
    grid = candidate_grid({
        "wage": [ColumnTransform("wage"), ColumnTransform("wage", "signif", digits=2),
                 ColumnTransform("wage", "signif", digits=1), ColumnTransform("wage", "round", step=1000)],
        "educ": [ColumnTransform("educ"), ColumnTransform("educ", "min_count", min_count=100)]})
    return advise(frame, grid, eps=1.0, delta=1e-3, theta=2.0)


def names(fig):
    return [t.name for t in fig.data]


@pytest.mark.parametrize("y", ["m_star", "singletons"])
def test_every_candidate_is_plotted_and_the_frontier_is_the_cores(result, y):
    table = result.table()
    applied = table["candidate"].iloc[3]
    fig = coarsening_frontier_figure(table, y=y, applied=applied)
    assert names(fig) == ["candidates", "data-dependent candidates", "frontier", "applied"]
    points = {(label, float(x), int(v)) for t in fig.data[:2] for label, x, v in zip(map(html.unescape, t.text), t.x, t.y)}
    assert points == {(r.candidate, float(r.relative_cost), int(getattr(r, y))) for r in table.itertuples()}
    dependent = set(map(html.unescape, fig.data[1].text))
    assert dependent == set(table.loc[table["data_dependent"], "candidate"]) and dependent
    front = fig.data[2]
    assert list(map(html.unescape, front.text)) == [c.label for c in sorted(result.frontier(by="relative"),
                                                        key=lambda c: (c.relative_cost, getattr(c, y)))]
    assert np.all(np.diff(np.asarray(front.x, float)) >= 0)
    assert list(map(html.unescape, fig.data[3].text)) == [applied]   # shown as text: entities
    assert "curator-only" in fig.layout.title.text


def test_bad_input_is_refused(result):
    with pytest.raises(ValueError, match="y must be one of"):
        coarsening_frontier_figure(result.table(), y="k")
    with pytest.raises(ValueError, match="non-empty DataFrame"):
        coarsening_frontier_figure(pd.DataFrame())
    with pytest.raises(ValueError, match="lacks the column"):
        coarsening_frontier_figure(result.table().drop(columns="m_star"))
    # An applied label that is not a candidate adds no ring.
    assert "applied" not in names(coarsening_frontier_figure(result.table(), applied="nothing"))


def test_the_global_m_star_leads_and_a_flat_m_star_is_explained(result):
    table = result.table()
    assert result.global_m_star is not None and list(table.columns[:2]) == ["candidate", "global_m_star"]
    fig = coarsening_frontier_figure(table, y="m_star", global_m_star=result.global_m_star)
    assert names(fig)[0] == "global m*" and set(fig.data[0].y) == {result.global_m_star}
    assert f"Global m* = {result.global_m_star:,} limits a public release" in fig.layout.title.text
    # every candidate keeps a singleton: one m*ₓ for all, and the figure says why
    flat = table.assign(m_star=7, singletons=np.maximum(table["singletons"], 1))
    notes = [a.text for a in coarsening_frontier_figure(flat, global_m_star=7).layout.annotations]
    assert any("m*ₓ = 7 for every candidate" in t and "singleton" in t for t in notes)
    # the singletons are drawn on a log axis when every candidate keeps one
    assert coarsening_frontier_figure(flat, y="singletons").layout.yaxis.type == "log"
