"""The release card (core.release.card): self-contained, public quantities only, escaped text."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from core import privacy
from core.data import ColumnSpec
from core.release import ReleaseRecipe, run_recipe
from core.release.card import CARD_EPS_GRID, curator_card_html, release_card_html
from core.release.gate import spec_of_public_report


@pytest.fixture(scope="module")
def result():
    rng = np.random.default_rng(8)
    frame = pd.DataFrame({"<b>wage</b>": np.round(rng.lognormal(2.5, 0.6, 500), 1),
                          "region": rng.choice(["north", "<script>alert(1)</script>"], 500)})
    return run_recipe(ReleaseRecipe(source="upload", columns=(ColumnSpec("<b>wage</b>", bounds=(0.0, 300.0)),
                                                                 ColumnSpec("region", kind="categorical")),
                                    eps=2.0, delta=0.05, m=5, theta=2.0, seed=2, releases=3), frame)


def test_card_is_self_contained_and_escapes_user_text(result):
    html = release_card_html(dict(result.public_report, acknowledged=["weak"]))
    assert "<script" not in html and "<b>wage</b>" not in html and "&lt;b&gt;wage&lt;/b&gt;" in html
    assert not re.search(r"(src|href)\s*=", html) and "http://" not in html.replace(
        'xmlns="http://www.w3.org/2000/svg"', "")   # no network request
    assert "Verdict: weak" in html and html.count("<svg") == 2
    assert "the guarantee is weak" in html   # what was acknowledged
    assert "CONFIDENTIAL" not in html


def test_card_numbers_are_the_release_guarantee(result):
    report = result.public_report
    spec = spec_of_public_report(report)
    assert spec.releases == 3 and report["releases_planned"] == 3
    g = spec.regime.release_guarantee(spec)
    html = release_card_html(dict(report, acknowledged=[]))
    assert privacy.ReleaseSpec is type(spec)
    for fpr, tpr in report["attack"]["tpr_at_fpr"].items():
        assert f"true positive rate at false positive rate {fpr}</th><td>≤ " in html
    assert g.attack.advantage == report["attack"]["advantage"]
    curve = spec.regime.global_delta_curve(spec, CARD_EPS_GRID)
    assert np.all(curve >= g.delta - 1e-15) or np.all(np.diff(curve) <= 1e-15)   # δ(ε) falls with ε
    assert curve[np.searchsorted(CARD_EPS_GRID, spec.eps)] <= g.delta


def test_curator_card_adds_the_instance_level_facts(result):
    html = curator_card_html(dict(result.public_report, acknowledged=[]), result.curator_report)
    assert html.count("CONFIDENTIAL —") == 2 and "Instance-level facts" in html
    assert str(result.curator_report["verbatim"]["unique_rows_copied"]) in html


def test_card_lists_each_columns_bounds_rounding_and_categories():
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"income": np.round(rng.lognormal(9, 1, 300), 2), "age": rng.integers(18, 90, 300),
                          "tenure": np.round(rng.uniform(0, 40, 300), 1),
                          "sex": rng.choice(["F", "M"], 300), "town": rng.choice(list("abcdefghijklmnop"), 300)})
    columns = (ColumnSpec("income", bounds=(1.0, 9876543.0), log=True, decimals=-2),
               ColumnSpec("age", bounds=(0.0, 120.0), decimals=0), ColumnSpec("tenure", decimals=1),
               ColumnSpec("sex", kind="categorical", categories=("F", "M", "X")),
               ColumnSpec("town", kind="categorical", categories=tuple("abcdefghijklmnop")))
    result = run_recipe(ReleaseRecipe(source="upload", columns=columns, eps=2.0, delta=0.05, m=5, theta=2.0,
                                      seed=2), frame)
    html = release_card_html(dict(result.public_report, acknowledged=["bounds_from_data"]))
    table = html.split("Columns as released")[1].split("</table>")[0]
    rows = {re.sub("<.*?>", "", r.split("</td>")[0]): [re.sub("<.*?>", "", c) for c in r.split("</td>")[1:-1]]
            for r in table.split("<tr>")[2:]}
    assert list(rows) == ["income", "age", "tenure", "sex", "town"]
    assert rows["income"][:3] == ["numeric", "[1, 9876543] (log scale)", "to multiples of 100"]
    assert rows["income"][5] == "none allowed"
    assert rows["age"][1:3] == ["[0, 120]", "to multiples of 1"]
    assert rows["tenure"][1].startswith("read off the confidential data") and rows["tenure"][2] == "to 1 decimal (0.1)"
    assert rows["sex"][4] == "3 public: F, M, X"
    assert rows["town"][4].startswith("16 public: a, b") and "(4 more in recipe.json)" in rows["town"][4]


def test_a_sigma0_card_says_the_scale_of_copying(result):
    # issue 36: each released row is a confidential record with probability n/(n + θ) (docs/verdicts.md §2.1)
    report = result.public_report
    spec = spec_of_public_report(report)
    html = release_card_html(dict(report, acknowledged=[]))
    words = privacy.copy_scale(spec.m, spec.n, spec.theta).words
    assert "<b>Scale of copying:</b>" in html and words.split(":")[0].replace("&", "&amp;") in html
    assert "n/(n + θ)" in words or "n/(n+θ)" in words
