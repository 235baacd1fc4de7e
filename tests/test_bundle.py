"""Tests of the two release artifacts (core.release.bundle): the public release leaks no statistic of
the confidential data; the curator's record holds them, marked CONFIDENTIAL (issue 15 §1)."""

from __future__ import annotations

import io
import json
import math
import re
import zipfile
from xml.etree import ElementTree

import numpy as np
import pandas as pd
import pytest

from core import privacy
from core.release import CURATOR_BUNDLE_NAME, PUBLIC_BUNDLE_NAME, build_bundles, public_bundle, write_bundles
from core.release.gate import ACKNOWLEDGEMENTS, PublicationRefused
from core.release.bundle import comparison_figures, record_figures
from core.plots.static import overlay_svg
from core.data import ColumnSpec
from core.formatting import format_upper
from core.evaluation.quality import quality_report
from core.release import ReleaseRecipe, run_recipe, sample_source, upload_source
from core.evaluation import column_summary


def multi_column_frame(n: int = 700) -> pd.DataFrame:
    rng = np.random.default_rng(2024)
    return pd.DataFrame({
        "wage": np.round(rng.lognormal(2.7, 0.5, n), 2),
        "hours": rng.integers(10, 61, n),
        "sex": rng.choice(["female", "male"], n),
        "region": rng.choice(["north", "south", "east"], n),
    })


CASES = {
    "cps earnings, public bounds, sigma 0": (
        lambda: None,
        dict(source=sample_source("cps_earnings.csv"), columns=(ColumnSpec("earnings", bounds=(0.0, 100.0)),),
             eps=2.5, delta=0.01, m=200, theta=2.0, seed=11)),
    "cps three columns, bounds from data, sigma 0.3": (
        lambda: None,
        dict(source=sample_source("cps_earnings.csv"),
             columns=(ColumnSpec("earnings", log=True, decimals=1), ColumnSpec("age", bounds=(25.0, 34.0)),
                      ColumnSpec("gender", kind="categorical")),
             eps=3.0, delta=0.05, m=150, sigma=0.3, theta=1.0, seed=5, n_mc=2000)),
    "cps degree × year over a public domain, sigma < 0": (
        lambda: None,
        dict(source=sample_source("cps_earnings.csv"),
             columns=(ColumnSpec("degree", kind="categorical",
                                 categories=("none", "highschool", "college", "bachelor", "master", "doctorate")),
                      ColumnSpec("year", kind="categorical", categories=tuple(range(1990, 2000)))),
             eps=4.0, delta=0.01, m=100, sigma=-2.0, theta=2.0 * 60, seed=3)),
    "upload, four columns, global m": (
        multi_column_frame,
        dict(source=upload_source(multi_column_frame().to_csv(index=False).encode()),
             columns=(ColumnSpec("wage", log=True, bounds=(1.0, 500.0), decimals=2), ColumnSpec("hours", decimals=-1),
                      ColumnSpec("sex", kind="categorical"),
                      ColumnSpec("region", kind="categorical", categories=("north", "south", "east", "west"))),
             eps=4.0, delta=0.3, size_rule="global", theta=3.0, seed=8)),
}


@pytest.fixture(scope="module", params=list(CASES))
def released(request):
    make_data, fields = CASES[request.param]
    frame = make_data()
    data = None if frame is None else frame.to_csv(index=False).encode()
    result = run_recipe(ReleaseRecipe(**fields), data)
    return result, build_bundles(result, acknowledged=ACCEPT_ALL), data


#: The curator accepts everything the gate can ask (weak δ, bounds from the data).
ACCEPT_ALL = tuple(ACKNOWLEDGEMENTS)


def unzip(payload: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(payload)) as zf:
        return {name: zf.read(name) for name in zf.namelist()}


def public_files(result, bundles) -> dict[str, bytes] | None:
    """The files of the public zip, or ``None`` when the gate refuses the release (a missed
    verdict: asserted here, with the refusal's message)."""
    if result.public_report["strength"] == "missed":
        assert bundles.public is None
        with pytest.raises(PublicationRefused, match="refused: it misses the target"):
            public_bundle(result, acknowledged=ACCEPT_ALL)
        return None
    return unzip(bundles.public)


# ----------------------------------------------------------------------------- what is confidential
def confidential_statistics(result) -> dict[str, list]:
    """Every statistic of the confidential data that the curator's record states."""
    table, prepared = result.prepared.table, result.prepared
    stats = {"k": [table.k], "singletons": [table.singletons], "new values K": [result.n_new_values],
             "new rows": [int(result.is_new.sum())]}
    confidential = result.confidential()
    # The curator record computes from the frequency table (k rows with counts): its numbers
    # equal those of the n rows up to the last bit of a sum's order, so search for its own.
    atoms = prepared.to_original(table.atoms)
    for info in prepared.column_info:
        column = confidential[info.name]
        if info.kind == "numeric":
            summary = column_summary(atoms[info.name].to_numpy(float), table.counts)
            assert summary == pytest.approx(column_summary(column.to_numpy(float)), rel=1e-12, abs=1e-12)
            for key, value in summary.items():
                stats[f"{info.name} {key}"] = [value]
            if info.bounds_from_data:
                stats[f"{info.name} data bounds"] = list(info.bounds)
            if info.n_clipped:
                stats[f"{info.name} clipped"] = [info.n_clipped]
        else:
            stats[f"{info.name} counts"] = [int(c) for c in column.value_counts()]
    kinds = {info.name: info.kind for info in prepared.column_info}
    report = quality_report(atoms, result.synthetic, kinds, real_counts=table.counts)
    stats["quality overall"] = [report.overall]
    stats["quality per column"] = list(report.columns["score"])
    stats["quality per pair"] = [s for s in report.pairs["score"] if math.isfinite(s)]
    for g in result.curator_report["guarantees"]:
        if g["scope"] == "instance" and g["delta"] is not None:
            stats[f"{g['name']} delta"] = [g["delta"]]
    stats["spectrum"] = [int(v) for v in np.unique(table.counts, return_counts=True)[1]]
    return stats


def formats(value) -> set[str]:
    """The ways a number can be written in a report, a CSV or a sentence."""
    out = set()
    if isinstance(value, (int, np.integer)):
        out |= {str(int(value)), f"{int(value):,}"}
    else:
        v = float(value)
        out |= {repr(v), str(v)}
        out |= {f"{v:.{p}g}" for p in range(3, 17)}
        out |= {f"{v:.{p}f}" for p in range(2, 7)}
        if v > 0:
            out |= {format_upper(v, p) for p in (3, 4)}
        if math.isfinite(v) and v.is_integer():
            out.add(str(int(v)))
    return out


def significant(text: str) -> bool:
    """At least three significant digits: shorter numbers collide with any parameter."""
    mantissa = re.sub(r"e[-+]?\d+$", "", text.lower()).replace(",", "").replace("-", "")
    if "." in mantissa:
        mantissa = mantissa.rstrip("0")  # 8.20 is 8.2 written longer
    return len(mantissa.replace(".", "").lstrip("0")) >= 3


def public_numbers(result) -> set[str]:
    """The formats of every number the public release may state."""
    r = result.recipe
    values = [result.prepared.table.n, result.m, r.eps, r.delta, r.sigma, r.theta, r.n_mc, SCHEMA_VERSION_ANY,
              result.public_report["guarantee"]["delta"] or 0.0, result.public_report["guarantee"]["eps"]]
    for c in r.columns:
        values += list(c.bounds or ()) + ([c.decimals] if c.decimals is not None else [])
    out = set()
    for v in values:
        out |= formats(v)
    return out


SCHEMA_VERSION_ANY = 1


def leaks(result, text: dict[str, str]) -> list[tuple[str, str, str]]:
    """(statistic, how it is written, file) for each confidential statistic found in ``text``.

    Numbers with fewer than three significant digits, or written exactly as a public
    parameter is, are not searched for (they would match any text); the structural
    checks below cover them.
    """
    allowed = public_numbers(result)
    out = []
    for stat, values in confidential_statistics(result).items():
        for value in values:
            for token in formats(value):
                if significant(token) and token not in allowed:
                    out += [(stat, token, name) for name, body in text.items() if found(token, body)]
    return out


def found(token: str, text: str) -> bool:
    return re.search(rf"(?<![\d.]){re.escape(token)}(?![\d])", text) is not None


def json_numbers(obj):
    if isinstance(obj, dict):
        for v in obj.values():
            yield from json_numbers(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from json_numbers(v)
    elif isinstance(obj, (int, float)) and not isinstance(obj, bool):
        yield obj


def json_keys(obj):
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield k
            yield from json_keys(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from json_keys(v)


# ----------------------------------------------------------------------------- the public release
def test_public_release_contains_no_confidential_statistic(released):
    result, bundles, _ = released
    files = public_files(result, bundles)
    if files is None:
        return
    assert set(files) == {"README.txt", "synthetic.csv", "recipe.json", "release.json", "release_card.html"}
    # The synthetic data are the release itself: exactly its rows, nothing else.
    assert files["synthetic.csv"] == result.synthetic_csv()
    assert len(pd.read_csv(io.BytesIO(files["synthetic.csv"]))) == result.m
    text = {name: payload.decode("utf-8") for name, payload in files.items() if name != "synthetic.csv"}
    assert leaks(result, text) == []
    # The same scan finds every searchable statistic where it belongs: in the curator's record.
    allowed = public_numbers(result)
    searchable = {stat for stat, values in confidential_statistics(result).items()  # by their shortest form
                  if any(significant(repr(v)) and repr(v) not in allowed for v in values)}
    assert "k" in searchable or result.prepared.table.k < 100
    curator_text = {name: payload.decode("utf-8") for name, payload in unzip(bundles.curator).items()}
    missing = searchable - {"new rows", "spectrum"} - {stat for stat, _, _ in leaks(result, curator_text)}
    assert missing == set()
    # Structure: no field of the curator's report, and every number is a public parameter.
    report = json.loads(text["release.json"])
    forbidden = {"k", "singletons", "new_values", "clipped", "singleton_limit_m", "transforms", "command",
                 "mean", "sd", "q1", "median", "q3", "seed", "guarantees"}
    assert forbidden.isdisjoint(set(json_keys(report)))
    public_values = {float(v) for v in json_numbers(json.loads(text["recipe.json"]))}
    # the attack terms are functions of the public spec (n, m, σ, θ, ε, δ, k) alone
    r = result.recipe
    spec = privacy.ReleaseSpec(r.sigma, r.theta, result.m, result.prepared.table.n, eps=r.eps, delta=r.delta,
                               releases=r.releases)
    attack = spec.regime.release_guarantee(spec).attack
    attack_values = set() if attack is None else {attack.advantage, *(t for _, t in attack.tpr_at_fpr)}
    attack_values.add(spec.regime.release_guarantee(spec).records_exposed or 0.0)   # n·δ_k, public too
    for number in json_numbers(report):
        assert number in public_values | attack_values | {
            result.prepared.table.n, result.m, SCHEMA_VERSION_ANY, r.releases,
            report["guarantee"]["delta"] or 0.0, report["guarantee"]["eps"]}, number
    # No seed and no upload hash: either would let an adversary test candidate datasets.
    recipe = ReleaseRecipe.from_json(text["recipe.json"])
    assert recipe.seed is None and recipe.source == result.recipe.public().source
    assert re.search(r"[0-9a-f]{64}", "".join(text.values())) is None


def test_public_release_states_the_global_guarantee(released):
    result, bundles, _ = released
    files = public_files(result, bundles)
    report = result.public_report if files is None else json.loads(files["release.json"])
    r, n = result.recipe, result.prepared.table.n
    g = report["guarantee"]
    assert report["data"]["n"] == n and report["release"]["m"] == result.m
    assert report["mechanism"]["sigma"] == r.sigma and report["mechanism"]["theta"] == r.theta
    if r.sigma == 0:
        # the exact global profile (docs/audit.md §1.3), not the paper's δ*(ε)
        assert g["scope"] == "global" and g["delta"] == privacy.DIRICHLET_PROCESS.release_guarantee(
            privacy.ReleaseSpec(0.0, r.theta, result.m, n, eps=r.eps, delta=r.delta, releases=r.releases)).delta
        assert f"n = {n}" in g["description"]
    elif r.sigma > 0:
        # no global guarantee is known: the verdict is "missed" (docs/verdicts.md §2)
        assert (g["scope"], g["kind"], g["delta"], report["strength"]) == ("global", "none", None, "missed")
        assert report["statement_depends_on_data"] is True
    else:
        assert g["kind"] == "pure" and g["eps"] >= math.log1p(result.m / -r.sigma)
    assert report["statement_depends_on_data"] is (bool(r.bounds_from_data) or 0 < r.sigma < 1)
    if files is None:
        return
    readme = files["README.txt"].decode()
    assert g["description"] in readme
    if report["statement_depends_on_data"]:   # each choice the data made, named under one banner
        assert "CONDITIONAL ON" in readme
        assert all(title in readme for title in report["conditional_on"])


# ----------------------------------------------------------------------------- the curator's record
def test_curator_record_holds_the_confidential_statistics(released):
    result, bundles, _ = released
    files = unzip(bundles.curator)
    assert all(name.startswith("CONFIDENTIAL_") for name in files)
    for name, payload in files.items():
        lines = payload.decode("utf-8").splitlines()
        if name.endswith(".json"):  # a top-level "CONFIDENTIAL" key first
            assert next(iter(json.loads(payload))) == "CONFIDENTIAL"
            assert lines[1].startswith('  "CONFIDENTIAL": "CONFIDENTIAL —'), name
        else:
            assert "CONFIDENTIAL —" in lines[0], name
    report = json.loads(files["CONFIDENTIAL_report.json"])
    table = result.prepared.table
    assert (report["data"]["k"], report["data"]["singletons"]) == (table.k, table.singletons)
    # the record states the acknowledgements the public files state (issue 36: it said "None")
    if bundles.public is not None:
        public = json.loads(unzip(bundles.public)["release.json"])
        assert report["acknowledged"] == public["acknowledged"]
    everything = "".join(payload.decode("utf-8") for payload in files.values())
    for stat, values in confidential_statistics(result).items():
        if stat in ("new rows", "spectrum") or stat.endswith(" counts") and "CONFIDENTIAL_category_counts.csv" not in files:
            continue
        for value in values:
            assert any(found(token, everything) for token in formats(value)), (stat, value)
    numeric = [c.name for c in result.prepared.column_info if c.kind == "numeric"]
    if "CONFIDENTIAL_summary.csv" not in files:   # summaries are of numeric columns only
        assert numeric == []
        return
    summary = pd.read_csv(io.BytesIO(files["CONFIDENTIAL_summary.csv"]), comment="#")
    assert sorted(summary.get("column", pd.Series(dtype=str)).unique()) == sorted(numeric)


def test_curator_recipe_replays_the_release(released):
    result, bundles, data = released
    recipe = ReleaseRecipe.from_json(unzip(bundles.curator)["CONFIDENTIAL_recipe.json"])
    assert recipe == result.recipe and recipe.seed is not None
    assert run_recipe(recipe, data).synthetic_csv() == result.synthetic_csv()
    files = public_files(result, bundles)
    assert files is None or files["synthetic.csv"] == result.synthetic_csv()


def test_bundles_are_deterministic(released):
    result, bundles, _ = released
    again = build_bundles(result, acknowledged=ACCEPT_ALL)
    assert again.public == bundles.public and again.curator == bundles.curator


def test_record_svg_shows_user_text_as_text():
    """A column name with markup is text in the record's SVG (core.plots.static.overlay_svg)."""
    edges = np.linspace(0.0, 1.0, 5)
    svg = overlay_svg(edges, {"a <b>&": [1.0, 2.0, 0.5, 0.0]}, grid=np.linspace(0, 1, 9),
                      curves={"a <b>&": np.linspace(0, 2, 9)}, title="<script>x</script>", x_title="w&h")
    root = ElementTree.fromstring(svg)
    texts = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert "<script>x</script>" in texts and "w&h" in texts and "a <b>& (histogram and curve)" in texts
    assert "<script>" not in svg and not list(root.iter("{http://www.w3.org/2000/svg}script"))


def test_figures_are_marked_and_never_public(tmp_path):
    make_data, fields = CASES["upload, four columns, global m"]
    result = run_recipe(ReleaseRecipe(**fields), make_data().to_csv(index=False).encode())
    assert set(comparison_figures(result)) == {"overlay_wage", "overlay_hours"}   # the page's plotly overlays
    figures = record_figures(result)                                              # the record's SVG ones
    assert set(figures) == {"overlay_wage", "overlay_hours"}
    public, curator = tmp_path / PUBLIC_BUNDLE_NAME, tmp_path / CURATOR_BUNDLE_NAME
    write_bundles(result, public_path=public, curator_path=curator, acknowledged=ACCEPT_ALL,
                  figures={**figures, "odd name/..": "<html><body>x</body></html>"})
    files = unzip(curator.read_bytes())
    html = {n: p.decode() for n, p in files.items() if n.endswith(".html")}
    card = html.pop("CONFIDENTIAL_curator_card.html")
    assert card.count("CONFIDENTIAL —") == 2 and "Instance-level facts" in card
    assert set(html) == {"CONFIDENTIAL_figure_odd_name.html"}
    svg = {n: p.decode() for n, p in files.items() if n.endswith(".svg")}
    assert set(svg) == {"CONFIDENTIAL_figure_overlay_wage.svg", "CONFIDENTIAL_figure_overlay_hours.svg"}
    for body in [*html.values(), *svg.values()]:
        assert body.startswith("<!-- CONFIDENTIAL") and ">CONFIDENTIAL —" in body
    for body in svg.values():   # no script, no plotly.js: a few kB a figure, and well-formed XML
        assert "<script" not in body and len(body) < 60_000
        ElementTree.fromstring(body.split("\n", 1)[1])
    readme = files["CONFIDENTIAL_README.txt"].decode()
    assert "CONFIDENTIAL_figure_overlay_wage.svg" in readme and "CONFIDENTIAL_figure_odd_name.html" in readme
    # the only page in the public release is its card: no figure of the confidential data
    assert [n for n in unzip(public.read_bytes()) if n.endswith(".html")] == ["release_card.html"]
    with pytest.raises(ValueError, match="must be two files"):
        write_bundles(result, public_path=public, curator_path=public)


# ----------------------------------------------------------------------------- the quality report
def test_quality_report_only_in_the_curator_record_marked_and_equal_to_the_rows(released):
    result, bundles, _ = released
    files = public_files(result, bundles)
    assert files is None or not any("quality" in name.lower() for name in files)
    files = unzip(bundles.curator)
    payload = files["CONFIDENTIAL_quality_report.csv"].decode("utf-8")
    assert payload.splitlines()[0].startswith("# CONFIDENTIAL —")
    assert "CONFIDENTIAL_quality_report.csv" in files["CONFIDENTIAL_README.txt"].decode("utf-8")
    table = pd.read_csv(io.StringIO(payload), comment="#")
    # independently: the report of the n confidential rows themselves
    kinds = {info.name: info.kind for info in result.prepared.column_info}
    bounds = {info.name: info.bounds for info in result.prepared.column_info if info.bounds is not None}
    rows = quality_report(result.confidential(), result.synthetic, kinds, bounds=bounds)
    overall = table.loc[table["property"] == "Overall", "score"].item()
    assert overall == pytest.approx(rows.overall, rel=1e-12)
    shapes = table[(table["property"] == "Column Shapes") & table["column_1"].notna()]
    assert list(shapes["score"]) == pytest.approx(list(rows.columns["score"]), rel=1e-12)
    # the field's yardsticks (docs/peers.md §4): from the table, as from the rows
    marks = table[table["property"] == "Yardsticks (NIST SDNist)"].set_index("metric")["score"]
    for key, name in (("marginal3", "k_marginal"), ("unique_exact_match", "unique_exact_match"),
                      ("row_match", "apparent_match")):
        assert marks[key] == pytest.approx(getattr(rows.yardsticks, name), rel=1e-12, nan_ok=True)
    assert marks["pMSE_logistic"] == pytest.approx(rows.yardsticks.pmse, rel=1e-6, abs=1e-12)


def test_bundle_never_rebuilds_the_rows(monkeypatch):
    # Agency-scale data are held as a frequency table: the curator record (summary, category
    # counts, quality report) must work from the k distinct rows and their counts.
    from core.data import PreparedData

    make_data, fields = CASES["upload, four columns, global m"]
    result = run_recipe(ReleaseRecipe(**fields), make_data().to_csv(index=False).encode())
    expected = unzip(build_bundles(result).curator)

    def no_rows(self):
        raise AssertionError("the bundle rebuilt the n rows")

    monkeypatch.setattr(PreparedData, "values", property(no_rows))
    files = unzip(build_bundles(result).curator)
    assert files == expected
    assert {"CONFIDENTIAL_summary.csv", "CONFIDENTIAL_category_counts.csv",
            "CONFIDENTIAL_quality_report.csv"} <= set(files)


@pytest.mark.parametrize("edges, height", [
    ([1e-308, 2e-308, 3e-308], [1e307, 1e308]),      # densities of values near the smallest normal float
    ([-1e308, 0.0, 1e308], [1e-308, 1e-308]),         # a span beyond the float range
    ([0.0, 5e-324, 1e-323], [1.0, 2.0]),              # a subnormal span
])
def test_record_svg_draws_columns_at_the_ends_of_the_float_range(edges, height):
    """The curator record's SVG overlay of a column whose values or densities reach the ends of
    the float range: an SVG document, never an exception (tests/data/tiny_1e-308.csv)."""
    svg = overlay_svg(edges, {"confidential": height, "synthetic": height[::-1]}, title="x")
    assert svg.startswith("<svg") and svg.rstrip().endswith("</svg>")
