"""Tests of the release recipe (core.release.recipe): JSON form, validation, run_recipe, public report."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core import privacy
from core.data import ColumnSpec, prepare, read_csv
from core.mechanisms import pypp_release
from core.release import (
    resolve_release_size,
    MAX_RECIPE_SIZE,
    SAMPLE_DIR,
    SCHEMA_VERSION,
    ReleaseRecipe,
    public_report,
    public_source,
    run_recipe,
    sample_source,
    upload_source,
)

N = 300


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    return pd.DataFrame({
        "wage": np.round(rng.lognormal(2.5, 0.6, N), 1),
        "age": rng.integers(20, 60, N),
        "sex": rng.choice(["female", "male"], N),
    })


def recipe(**changes) -> ReleaseRecipe:
    base = dict(source="data.csv", columns=(ColumnSpec("wage", bounds=(1.0, 200.0), log=True, decimals=1),
                                            ColumnSpec("sex", kind="categorical")),
                eps=2.0, delta=0.2, m=50, theta=2.0, seed=7)
    base.update(changes)
    return ReleaseRecipe(**base)


# ----------------------------------------------------------------------------- JSON form
def test_json_round_trip_and_schema():
    r = recipe(sep=";", n_mc=500)
    text = r.to_json()
    obj = json.loads(text)
    assert obj["schema_version"] == SCHEMA_VERSION and obj["schema"] == "bnp-synth/release-recipe"
    assert obj["mechanism"] == {"name": "pypp", "sigma": 0.0, "theta": 2.0}
    assert obj["release_size"] == {"rule": "fixed", "m": 50}
    assert obj["data"]["columns"][0] == {"name": "wage", "kind": "numeric", "log": True, "bounds": [1.0, 200.0],
                                         "decimals": 1, "scale": True, "categories": None,
                                         "grid": None}
    assert ReleaseRecipe.from_json(text) == r
    assert ReleaseRecipe.from_dict(r.to_dict()) == r
    confidential = json.loads(r.to_json(confidential=True))
    assert next(iter(confidential)) == "CONFIDENTIAL"
    assert ReleaseRecipe.from_dict(confidential) == r  # the curator's copy is itself a recipe


names = st.text(alphabet="abcdefgh_ XYZé", min_size=1, max_size=6)
finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)


@st.composite
def column_specs(draw, name):
    if draw(st.booleans()):
        labels = st.one_of(st.text(max_size=4), st.integers(-5, 5))
        categories = draw(st.none() | st.lists(labels, min_size=1, max_size=4, unique=True))
        return ColumnSpec(name, kind="categorical", categories=None if categories is None else tuple(categories))
    log = draw(st.booleans())
    bounds = None
    if draw(st.booleans()):
        lo = draw(st.floats(min_value=1e-6, max_value=1e3) if log else finite)
        width = draw(st.floats(min_value=1e-3, max_value=1e6))
        bounds = (lo, lo + width)
    decimals = draw(st.none() | st.integers(-15, 15))
    from_data = decimals is None and draw(st.booleans())   # precision_from_data: only without typed decimals
    return ColumnSpec(name, log=log, bounds=bounds, decimals=decimals, scale=draw(st.booleans()),
                      precision_from_data=from_data)


@st.composite
def recipes(draw):
    column_names = draw(st.lists(names, min_size=1, max_size=4, unique=True))
    columns = tuple(draw(column_specs(n)) for n in column_names)
    regime = draw(st.sampled_from(["dp", "py", "dm"]))
    if regime == "dp":
        sigma, theta = 0.0, draw(st.floats(min_value=1e-3, max_value=1e4))
    elif regime == "py":
        sigma = draw(st.floats(min_value=1e-3, max_value=0.99))
        theta = draw(st.floats(min_value=-sigma + 1e-3, max_value=1e4))
    else:
        sigma = -draw(st.floats(min_value=1e-3, max_value=10))
        theta = draw(st.integers(1, 10**6)) * -sigma
    rule = draw(st.sampled_from(["fixed", "global", "instance"] if sigma == 0 else ["fixed"]))
    source = draw(st.sampled_from(["sample:cps_earnings.csv", "data/x.csv", "/abs/path/y.csv", "upload",
                                   upload_source(b"a,b\n1,2\n")]))
    return ReleaseRecipe(
        source=source, columns=columns, eps=draw(st.floats(min_value=1e-6, max_value=50)),
        delta=draw(st.floats(min_value=1e-300, max_value=0.999999)),
        m=draw(st.integers(1, MAX_RECIPE_SIZE)) if rule == "fixed" else None, size_rule=rule,
        sigma=sigma, theta=theta, seed=draw(st.none() | st.integers(0, 2**128 - 1)),
        sep=draw(st.sampled_from([None, ",", ";", "\t"])), n_mc=draw(st.integers(1, 10**6)))


@settings(max_examples=200, deadline=None)
@given(recipes())
def test_json_round_trip_property(r):
    assert ReleaseRecipe.from_json(r.to_json()) == r
    assert ReleaseRecipe.from_json(r.to_json(confidential=True)) == r
    public = r.public()
    assert public.seed is None and ReleaseRecipe.from_json(public.to_json()) == public
    assert not public.source.startswith("/") and "/" not in public.source.removeprefix("sample:")
    assert re.search(r"[0-9a-f]{64}", public.to_json()) is None
    assert public.columns == r.columns and public.eps == r.eps and public.m == r.m


def test_public_form_drops_seed_hash_and_directories():
    digest = upload_source(b"x\n1\n2\n")
    assert re.fullmatch(r"upload:[0-9a-f]{64}", digest)
    assert public_source(digest) == "upload"
    # a file is published as "file": its name can say whose data it is
    assert public_source("/home/curator/secret/hr_2024.csv") == "file"
    assert public_source("..\\data\\x.csv") == "file"
    assert public_source(sample_source("cps_earnings.csv")) == "sample:cps_earnings.csv"
    assert recipe(source=digest).public().source == "upload" and recipe().public().seed is None


@pytest.mark.parametrize("mutate, message", [
    (lambda d: d.update(schema_version=2), "schema version 2 is not supported.*upgrade"),
    (lambda d: d.update(schema_version=0), "schema version 0 is not supported"),
    (lambda d: d.pop("schema_version"), "not a bnp-synth release recipe"),
    (lambda d: d.update(schema="other"), "not a bnp-synth release recipe"),
    (lambda d: d.update(colour="red"), r"unknown field\(s\) in the recipe: 'colour'"),
    (lambda d: d["data"].update(path="x"), r"unknown field\(s\) in recipe.data: 'path'"),
    (lambda d: d["data"]["columns"][0].update(decimal=2), r"unknown field\(s\) in recipe.data.columns\[0\]: 'decimal'"),
    (lambda d: d["mechanism"].update(alpha=1), r"unknown field\(s\) in recipe.mechanism: 'alpha'"),
    (lambda d: d["mechanism"].update(name="laplace"), "mechanism must be one of 'pypp', .*got 'laplace'"),
    (lambda d: d["release_size"].update(rule="biggest"), "size_rule must be one of"),
    (lambda d: d["privacy_target"].pop("delta"), "lacks the required field"),
    (lambda d: d["data"]["columns"][0].update(log="yes"), "log of column 'wage' must be true or false"),
    (lambda d: d["data"]["columns"][0].update(bounds=[5, 1]), "must satisfy lo < hi"),
    (lambda d: d["data"]["columns"][1].update(decimals=2), "categorical: decimals apply to numeric columns"),
    (lambda d: d["data"]["columns"][0].update(precision_from_data="yes"),
     "precision_from_data of column 'wage' must be true or false"),
    (lambda d: d["data"]["columns"][0].update(precision_from_data=True), "cannot also be read off the data"),
    (lambda d: d["data"]["columns"][1].update(precision_from_data=True),
     "categorical: precision_from_data apply to numeric columns"),
    (lambda d: d["data"].update(source="sample:../x.csv"), "a sample is named by its file name"),
    (lambda d: d["data"].update(source="upload:abc"), "64 lowercase hexadecimal digits"),
    (lambda d: d.update(seed=-1), r"seed must be an integer >= 0"),
    (lambda d: d["release_size"].update(m=None), "m is required with size_rule 'fixed'"),
    (lambda d: d["release_size"].update(m=MAX_RECIPE_SIZE + 1), rf"m must be an integer in \[1, {MAX_RECIPE_SIZE}\]"),
])
def test_bad_recipes_are_refused(mutate, message):
    obj = recipe().to_dict()
    mutate(obj)
    with pytest.raises(ValueError, match=message):
        ReleaseRecipe.from_dict(obj)


def test_not_json_and_bad_files(tmp_path):
    with pytest.raises(ValueError, match="not valid JSON"):
        ReleaseRecipe.from_json("{")
    with pytest.raises(ValueError, match="is a directory"):
        ReleaseRecipe.read(tmp_path)
    with pytest.raises(ValueError, match="no such file"):
        ReleaseRecipe.read(tmp_path / "nope.json")


@pytest.mark.parametrize("changes, message", [
    (dict(eps=np.float64(0.0)), r"eps must be a finite real number in \(0, ∞\), got 0\.0$"),
    (dict(delta=np.float64(1.0)), r"delta must be in \(0, 1\), got 1\.0$"),
    (dict(eps=float("inf")), "eps must be a finite real number"),
    (dict(m=None, size_rule="global", sigma=0.5), "size_rule 'global' is not available with sigma=0.5"),
    (dict(size_rule="global"), "m must be None with size_rule 'global'"),
    (dict(sigma=-1.0, theta=2.5), "theta must equal z"),
    (dict(sigma=-1e-300, theta=1.0), r"public categories.*at most 2\*\*53"),
    (dict(columns=()), "choose at least one column"),
    (dict(columns=(ColumnSpec("a"), ColumnSpec("a"))), "chosen more than once"),
    (dict(m=True), "m must be an integer"),
])
def test_validation_messages_print_plain_numbers(changes, message):
    with pytest.raises(ValueError, match=message) as info:
        recipe(**changes)
    assert "np.float64" not in str(info.value)


# ----------------------------------------------------------------------------- run_recipe
def app_release_bytes(prepared, sigma, theta, m, seed) -> bytes:
    """The dashboard's draw as it was before run_recipe (ui_state.pypp_synthetic + csv_bytes)."""
    table = prepared.table
    release = pypp_release(table.atoms, table.counts, sigma, theta, m, np.random.default_rng(seed),
                           base=prepared.bases)
    return prepared.to_original(release.values).to_csv(index=False).encode("utf-8")


@pytest.mark.parametrize("sigma, theta", [(0.0, 2.0), (0.4, 1.5)])
def test_run_recipe_draws_exactly_as_the_app(frame, sigma, theta):
    r = recipe(sigma=sigma, theta=theta, n_mc=2000)
    result = run_recipe(r, frame)
    prepared = prepare(frame, list(r.columns))
    assert result.synthetic_csv() == app_release_bytes(prepared, sigma, theta, 50, 7)
    assert result.m == 50 and len(result.synthetic) == 50 and result.is_new.shape == (50,)
    # The cached PreparedData the app holds gives the same bytes.
    assert run_recipe(r, prepared).synthetic_csv() == result.synthetic_csv()


def test_run_recipe_reads_paths_bytes_and_samples(frame, tmp_path):
    path = tmp_path / "data.csv"
    frame.to_csv(path, index=False)
    r = recipe(source=str(path))
    from_frame = run_recipe(r, read_csv(path)).synthetic_csv()
    assert run_recipe(r).synthetic_csv() == from_frame            # the recipe's own source
    assert run_recipe(r, path).synthetic_csv() == from_frame
    assert run_recipe(recipe(source=upload_source(path.read_bytes())), path.read_bytes()).synthetic_csv() == from_frame
    sample = ReleaseRecipe(source=sample_source("dyadic_geometric.csv"), columns=(ColumnSpec("x", bounds=(0, 1)),),
                           eps=1.0, delta=0.1, m=20, theta=1.0, seed=1)
    expected = prepare(read_csv(SAMPLE_DIR / "dyadic_geometric.csv"), list(sample.columns))
    assert run_recipe(sample).synthetic_csv() == app_release_bytes(expected, 0.0, 1.0, 20, 1)


def test_run_recipe_refuses_what_it_cannot_read(frame, tmp_path):
    with pytest.raises(ValueError, match="is an upload: pass the data file"):
        run_recipe(recipe(source=upload_source(b"x")))
    with pytest.raises(ValueError, match="is a directory"):
        run_recipe(recipe(), tmp_path)
    prepared = prepare(frame, [ColumnSpec("wage", bounds=(1.0, 200.0))])
    with pytest.raises(ValueError, match="other column specs than the recipe's"):
        run_recipe(recipe(), prepared)


def test_other_data_than_the_recipes_upload_is_flagged(frame):
    content = frame.to_csv(index=False).encode()
    result = run_recipe(recipe(source=upload_source(b"other bytes")), content)
    assert any("differs from the one the recipe was made from" in w for w in result.warnings)


def test_fresh_seed_is_recorded_and_replays(frame):
    result = run_recipe(recipe(seed=None), frame)
    assert isinstance(result.recipe.seed, int)
    assert result.curator_report["parameters"]["seed"] == result.recipe.seed
    assert run_recipe(result.recipe, frame).synthetic_csv() == result.synthetic_csv()


def test_release_size_rules(frame):
    counts = prepare(frame, [ColumnSpec("wage", bounds=(1.0, 200.0), log=True, decimals=1),
                             ColumnSpec("sex", kind="categorical")]).table.counts
    r = recipe(m=None, size_rule="global", eps=3.0, delta=0.05)
    result = run_recipe(r, frame)
    # the exact global profile: T₁ = m/(m + θ + n − 1) ≤ δ at any ε, i.e. m ≤ m_sing (docs/verdicts.md §2)
    assert result.m == privacy.singleton_limit(N, 2.0, 0.05) >= 2
    assert "exact global privacy profile" in result.m_rule
    inst = run_recipe(recipe(m=None, size_rule="instance", eps=3.0, delta=0.05), frame)
    assert inst.m == privacy.max_instance_synthetic_size(counts, 2.0, 3.0, 0.05)
    assert inst.public_report["statement_depends_on_data"] is True
    with pytest.raises(ValueError, match="no synthetic row can be released .* singleton limit"):
        run_recipe(recipe(m=None, size_rule="global", eps=0.5, delta=1e-9), frame)
    # a huge singleton limit is no obstacle: the exact search stops at the tool's row limit
    big = resolve_release_size(recipe(m=None, size_rule="global", eps=0.5, delta=0.999999), counts)
    assert big[0] == min(MAX_RECIPE_SIZE, privacy.singleton_limit(N, 2.0, 0.999999))


def test_curator_report_warns_when_the_target_is_missed(frame):
    missed = run_recipe(recipe(m=200, delta=0.01), frame)
    assert any("global guarantee 'global_delta' misses the target" in w for w in missed.curator_report["warnings"])
    assert missed.warnings and missed.public_report["warnings"]
    assert next(iter(missed.curator_report)) == "CONFIDENTIAL"
    assert missed.curator_report["recipe"] == missed.recipe.to_dict()
    met = run_recipe(recipe(m=2, delta=0.5, eps=5.0), frame)
    assert not any("misses the target" in w for w in met.curator_report["warnings"])


# ----------------------------------------------------------------------------- public report
def test_public_report_states_the_global_guarantee():
    r = recipe(eps=2.5, delta=0.01)
    rep = public_report(r, n=5000, m=40)
    g = rep["guarantee"]
    assert (g["name"], g["scope"], g["kind"]) == ("global_delta", "global", "approximate")
    assert g["delta"] == privacy.DIRICHLET_PROCESS.release_guarantee(
        privacy.ReleaseSpec(0.0, 2.0, 40, 5000, eps=2.5, delta=0.01)).delta == pytest.approx(40 / 5041, rel=1e-15)
    assert g["meets_target"] is (g["delta"] <= 0.01)
    assert "n = 5000" in g["description"]
    assert rep["data"]["n"] == 5000 and rep["release"]["m"] == 40 and rep["statement_depends_on_data"] is False
    json.dumps(rep, allow_nan=False)


def test_public_report_says_when_the_statement_depends_on_the_data():
    from_data = public_report(recipe(columns=(ColumnSpec("wage"),)), n=100, m=5)
    assert from_data["statement_depends_on_data"] is True
    assert any("'wage'" in t and "read off the confidential data" in t for t in (c["statement"] + " " + c["consequence"] for c in from_data["data_dependent_choices"]))
    py = public_report(recipe(sigma=0.3), n=100, m=5)
    assert (py["guarantee"]["scope"], py["guarantee"]["kind"], py["guarantee"]["delta"]) == ("global", "none", None)
    assert py["strength"] == "missed"
    assert py["statement_depends_on_data"] is True
    dm = public_report(recipe(sigma=-0.5, theta=50 * 0.5), n=100, m=5)
    assert dm["guarantee"]["kind"] == "pure" and dm["guarantee"]["delta"] == 0.0
    assert dm["guarantee"]["eps"] == pytest.approx(np.log1p(5 / 0.5), rel=1e-9)
    assert dm["guarantee"]["eps"] >= np.log1p(5 / 0.5)  # rounded to the safe side
    assert dm["guarantee"]["meets_target"] is (dm["guarantee"]["eps"] <= 2.0)


def test_negative_sigma_releases_only_over_a_public_domain(frame):
    """σ < 0 names unobserved categories from the public list; without one it refuses (pure ε-DP)."""
    public = ("female", "male", "other", "unknown")
    r = ReleaseRecipe(source="upload", columns=(ColumnSpec("sex", kind="categorical", categories=public),),
                      eps=3.0, delta=0.01, m=400, sigma=-0.5, theta=len(public) * 0.5, seed=4)
    result = run_recipe(r, frame)
    assert set(result.synthetic["sex"]) <= set(public)
    assert result.public_report["guarantee"]["kind"] == "pure"
    with pytest.raises(ValueError, match="public category list"):
        run_recipe(ReleaseRecipe(source="upload", columns=(ColumnSpec("wage", bounds=(1.0, 200.0)),), eps=3.0,
                                 delta=0.01, m=40, sigma=-0.5, theta=1000 * 0.5, seed=4), frame)
    with pytest.raises(ValueError, match="size of the public category domain"):
        run_recipe(ReleaseRecipe(source="upload", columns=(ColumnSpec("sex", kind="categorical", categories=public),),
                                 eps=3.0, delta=0.01, m=40, sigma=-0.5, theta=7 * 0.5, seed=4), frame)


def test_recipe_records_planned_repeated_releases(frame):
    r = recipe(releases=5)
    assert ReleaseRecipe.from_json(r.to_json()).releases == 5
    result = run_recipe(r, frame)
    assert result.curator_report["release"]["releases"] == 5
    assert result.curator_report["composition"]["releases"] == 5
    with pytest.raises(ValueError, match="releases"):
        recipe(releases=0)


# ----------------------------------------------------------------------------- coarsening (issue 14)
from core.data import ColumnTransform, apply_coarsening  # noqa: E402

COARSE = (ColumnTransform("wage", "signif", digits=1), ColumnTransform("sex", "keep", keep=("female",)))


def test_coarsening_round_trip_and_old_recipes_still_load():
    r = recipe(coarsening=COARSE, coarsening_chosen_from_data=True)
    obj = json.loads(r.to_json())
    assert obj["schema_version"] == 1
    assert obj["data"]["coarsening"] == [{"column": "wage", "kind": "signif", "digits": 1},
                                         {"column": "sex", "kind": "keep", "keep": ["female"],
                                          "other_label": "other"}]
    assert obj["data"]["coarsening_chosen_from_data"] is True
    back = ReleaseRecipe.from_json(r.to_json())
    assert back == r and back.coarsening == COARSE
    # A recipe written before the field existed reads as "no coarsening".
    old = recipe().to_dict()
    del old["data"]["coarsening"], old["data"]["coarsening_chosen_from_data"]
    assert ReleaseRecipe.from_dict(old) == recipe() and recipe().coarsening == ()
    assert recipe().public().coarsening == () and r.public().coarsening == COARSE   # the transforms are public
    # numpy labels (a keep list typed for an integer column) are written as plain JSON numbers
    years = recipe(columns=(ColumnSpec("age", kind="categorical"),),
                   coarsening=(ColumnTransform("age", "keep", keep=(np.int64(30), np.int64(40))),))
    assert json.loads(years.to_json())["data"]["coarsening"][0]["keep"] == [30, 40]
    assert ReleaseRecipe.from_json(years.to_json()) == years


def test_precision_from_data_round_trip_and_old_recipes_still_load(frame):
    """precision_from_data is written only when true; a recipe without the key reads as false (the
    public default: new values at full precision); the property names the columns that set it, and
    the release rounds their new values to the decimals read off the data (docs/mathematics.md §2.4)."""
    cents = (ColumnSpec("wage", bounds=(1.0, 200.0), precision_from_data=True), ColumnSpec("sex", kind="categorical"))
    r = recipe(columns=cents, theta=300.0)
    obj = json.loads(r.to_json())
    assert obj["data"]["columns"][0]["precision_from_data"] is True
    assert "precision_from_data" not in obj["data"]["columns"][1]
    assert ReleaseRecipe.from_json(r.to_json()) == r and r.precision_from_data == ("wage",)
    assert r.public().precision_from_data == ("wage",)   # the choice is part of the published recipe
    assert all("precision_from_data" not in c for c in json.loads(recipe().to_json())["data"]["columns"])
    del obj["data"]["columns"][0]["precision_from_data"]
    old = ReleaseRecipe.from_dict(obj)
    assert old.precision_from_data == () and old.columns[0].precision_from_data is False
    # wage is recorded to one decimal: new values take it only when asked
    new_digits = []
    for rec in (r, old):
        result = run_recipe(rec.with_seed(5), frame)
        wages = result.synthetic["wage"][result.is_new].to_numpy()
        assert wages.size
        new_digits.append(bool(np.all(wages == np.round(wages, 1))))
    assert new_digits == [True, False]


@pytest.mark.parametrize("mutate, message", [
    (lambda d: d["data"]["coarsening"][0].update(digit=2), r"unknown field\(s\) \['digit'\]"),
    (lambda d: d["data"].update(coarsening={"column": "wage"}), "must be a list of transform objects"),
    (lambda d: d["data"]["coarsening"][0].update(kind="blur"), "kind must be one of"),
    (lambda d: d["data"]["coarsening"][0].pop("digits"), "needs digits"),
    (lambda d: d["data"]["coarsening"][0].update(column="age"), "not a released column"),
    (lambda d: d["data"]["coarsening"].append({"column": "wage", "kind": "round", "step": 5}),
     "two transforms for column 'wage'"),
    (lambda d: d["data"].update(coarsening_chosen_from_data="yes"), "coarsening_chosen_from_data"),
])
def test_bad_coarsening_is_refused(mutate, message):
    obj = recipe(coarsening=COARSE).to_dict()
    mutate(obj)
    with pytest.raises(ValueError, match=message):
        ReleaseRecipe.from_dict(obj)


def test_coarsening_is_applied_before_prepare_and_replays(frame, tmp_path):
    r = recipe(coarsening=COARSE)
    result = run_recipe(r, frame)
    coarse = apply_coarsening(frame, COARSE)
    expected = prepare(coarse, list(r.columns))
    assert result.synthetic_csv() == app_release_bytes(expected, 0.0, 2.0, 50, 7)
    assert set(result.synthetic["sex"]) <= {"female", "other"}
    assert result.prepared.table.k < prepare(frame, list(r.columns)).table.k   # coarsening merged atoms
    # The file path goes through core.data.aggregate (distinct cells, weighted): same bytes.
    path = tmp_path / "data.csv"
    frame.to_csv(path, index=False)
    assert run_recipe(r, path).synthetic_csv() == result.synthetic_csv()
    assert run_recipe(ReleaseRecipe.from_json(result.recipe.to_json()), path).synthetic_csv() == \
        result.synthetic_csv()
    # The app passes its prepared (already coarsened) data: same bytes.
    assert run_recipe(r, expected).synthetic_csv() == result.synthetic_csv()


def test_public_report_lists_the_coarsening_and_its_data_dependence(frame):
    public = public_report(recipe(coarsening=COARSE), n=100, m=5)
    assert public["data"]["coarsening"] == [t.to_dict() for t in COARSE]
    assert "1 significant digit" in public["data"]["coarsening_description"]
    assert public["statement_depends_on_data"] is False and not recipe(coarsening=COARSE).depends_on_data
    assert public_report(recipe(), n=100, m=5)["data"]["coarsening_description"] == "none"
    chosen = recipe(coarsening=COARSE, coarsening_chosen_from_data=True)
    assert chosen.depends_on_data
    text = public_report(chosen, n=100, m=5)
    assert text["statement_depends_on_data"] is True
    assert any("coarsening advisor" in t and "No guarantee covers" in t for t in (c["statement"] + " " + c["consequence"] for c in text["data_dependent_choices"]))
    by_count = recipe(coarsening=(ColumnTransform("sex", "min_count", min_count=5),))
    rep = public_report(by_count, n=100, m=5)
    assert rep["statement_depends_on_data"] is True
    assert any("< 5 records" in t for t in (c["statement"] + " " + c["consequence"] for c in rep["data_dependent_choices"]))
    assert any("coarsening depends on the confidential data" in w for w in run_recipe(chosen, frame).warnings)
    assert not any("coarsening" in w for w in run_recipe(recipe(coarsening=COARSE), frame).warnings)
    # An empty coarsening "chosen" with the advisor is no coarsening at all.
    assert not recipe(coarsening_chosen_from_data=True).depends_on_data


def test_settings_chosen_with_the_planner_are_a_data_dependent_choice(frame):
    """θ and m loaded from the release planner: recorded, replayed from JSON, stated publicly."""
    planned = recipe(settings_chosen_from_data=True)
    assert planned.depends_on_data and not recipe().depends_on_data
    again = ReleaseRecipe.from_json(planned.to_json())
    assert again == planned and json.loads(planned.to_json())["data"]["settings_chosen_from_data"] is True
    assert ReleaseRecipe.from_json(recipe().to_json()).settings_chosen_from_data is False
    public = public_report(planned, n=100, m=5)
    assert public["statement_depends_on_data"] is True
    assert any("release planner" in t and "No guarantee covers" in t for t in (c["statement"] + " " + c["consequence"] for c in public["data_dependent_choices"]))
    assert not public_report(recipe(), n=100, m=5)["data_dependent_choices"]
    assert any("release planner" in w for w in run_recipe(planned, frame).warnings)
    with pytest.raises(ValueError, match="settings_chosen_from_data"):
        recipe(settings_chosen_from_data="yes")


# ----------------------------------------------------------------------------- verdict in the curator report
def test_curator_report_counts_the_unique_records_copied(frame):
    result = run_recipe(recipe(m=400, theta=1.0), frame)
    conf = result.confidential()
    # independently: the confidential rows (two columns) held once, and the release rows equal to one
    keys = conf.astype(str).agg("|".join, axis=1)
    held_once = set(keys.value_counts()[lambda c: c == 1].index)
    released = result.synthetic.astype(str).agg("|".join, axis=1)
    copied = int(released.isin(held_once).sum())
    verbatim = result.curator_report["verbatim"]
    assert verbatim["unique_rows_copied"] == copied and verbatim["unique_records_in_data"] == len(held_once)
    # like with like: distinct records copied beside their expectation, rows beside theirs
    assert verbatim["unique_records_copied"] == len(set(released[released.isin(held_once)]))
    n = len(conf)
    p = verbatim["probability_per_unique_record"]
    assert p == pytest.approx(400 / (1.0 + n + 400 - 1), rel=1e-12)
    assert verbatim["expected_unique_records_copied"] == pytest.approx(len(held_once) * p, rel=1e-12)
    assert verbatim["expected_unique_records_copied_per_release"] == pytest.approx(len(held_once) * p, rel=1e-12)
    assert verbatim["expected_unique_rows_copied"] == pytest.approx(len(held_once) * 400 / (1.0 + n), rel=1e-12)
    assert result.curator_report["strength"] == result.public_report["strength"]
    assert result.curator_report["release_guarantee"]["delta"] == result.public_report["guarantee"]["delta"]
