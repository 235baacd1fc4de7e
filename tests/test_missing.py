"""Missing values, chosen per column and recorded (docs/mathematics.md §2.5).

A file with 40 % missing cells in a numeric column, a few in a categorical one and none in a
third goes through every read path (exact rows, DuckDB, pandas, Dask; CSV and Parquet) under
both choices: "missing is a value" (one more atom, released as an empty cell) and "drop
records with a missing value" (n counted after dropping, stated in both reports). Expected
counts come from pandas on the data the test wrote, never from ``core``.
"""

from __future__ import annotations

import io
import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from core.cli import main
from core.data import (
    CategoricalBase,
    ColumnSpec,
    ColumnTransform,
    apply_coarsening,
    distinct_values,
    frequency_table,
    missing_counts,
    prepare,
    prepare_frame,
    prepare_source,
    read_table,
)
from core.evaluation.quality import ks_complement, quality_report, tv_complement
from core.mechanisms import pypp_release
from core.privacy import instance_delta
from core.release import ReleaseRecipe, public_report, run_recipe
from core.validation import PrivacyLeakWarning

N = 500


@pytest.fixture(autouse=True)
def _quiet_bounds_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        yield


@pytest.fixture(scope="module")
def records() -> pd.DataFrame:
    """wage: whole numbers, 40 % missing; lang: 9 missing labels; age: complete."""
    rng = np.random.default_rng(5)
    wage = pd.array(rng.integers(10, 80, N), dtype="Int64")
    wage[rng.choice(N, 200, replace=False)] = pd.NA
    lang = pd.Series(rng.choice(["en", "fr", "de", "it"], N), dtype=object)
    lang[rng.choice(N, 9, replace=False)] = None
    return pd.DataFrame({"wage": wage, "lang": lang, "age": rng.integers(18, 70, N)})


@pytest.fixture(scope="module")
def files(records, tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("missing")
    csv, parquet = root / "wages.csv", root / "wages.parquet"
    csv.write_text(records.to_csv(index=False))
    records.to_parquet(parquet, index=False)
    return {"csv": csv, "parquet": parquet}


def _specs(choice: str, **wage) -> list[ColumnSpec]:
    return [ColumnSpec("wage", bounds=(0, 100), decimals=0, missing=choice, **wage),
            ColumnSpec("lang", kind="categorical", missing=choice)]


def _expected_table(records: pd.DataFrame, choice: str) -> dict:
    """Multiplicity of each (wage, lang) row from pandas: missing as one more value, or dropped."""
    rows = records[["wage", "lang"]].astype(object)
    if choice == "drop":
        rows = rows.dropna()
    counts = rows.fillna("<missing>").value_counts()
    return {(w if w == "<missing>" else int(w), c): int(v) for (w, c), v in counts.items()}


def _table(prepared) -> dict:
    frame = prepared.to_original(prepared.table.atoms).astype(object)
    frame = frame.where(frame.notna(), "<missing>")
    return {(w if w == "<missing>" else int(w), c): int(v)
            for w, c, v in zip(frame["wage"], frame["lang"], prepared.table.counts)}


# --------------------------------------------------------------------------- every read path
@pytest.mark.parametrize("choice", ["value", "drop"])
@pytest.mark.parametrize("file_format", ["csv", "parquet"])
@pytest.mark.parametrize("engine", ["duckdb", "pandas", "dask"])
def test_every_read_path_gives_the_same_table(records, files, choice, file_format, engine):
    prepared, _ = prepare_source(str(files[file_format]), _specs(choice), engine=engine)
    assert _table(prepared) == _expected_table(records, choice)
    n_wage, n_lang = int(records["wage"].isna().sum()), int(records["lang"].isna().sum())
    kept = int((records["wage"].notna() & records["lang"].notna()).sum())
    if choice == "value":
        assert (prepared.n, prepared.n_dropped) == (N, 0)
        assert [c.n_missing for c in prepared.column_info] == [n_wage, n_lang]
    else:
        assert (prepared.n, prepared.n_dropped) == (kept, N - kept)
        assert [c.n_missing for c in prepared.column_info] == [n_wage, n_lang]   # per column, before dropping
    # the exact read of the rows gives the very same table (atoms in the same order)
    exact = prepare(read_table(files["csv"]).frame, _specs(choice))
    np.testing.assert_array_equal(exact.table.counts, prepared.table.counts)
    assert list(_table(exact)) == list(_table(prepared))


@pytest.mark.parametrize("file_format", ["csv", "parquet"])
def test_missing_counts_are_the_same_on_every_read_path(records, files, file_format):
    expected = {"wage": int(records["wage"].isna().sum()), "lang": int(records["lang"].isna().sum()), "age": 0}
    assert missing_counts(read_table(files["csv"]).frame) == expected
    values = distinct_values(str(files[file_format]), ["wage", "lang", "age"])
    assert missing_counts(values.frame, values.counts) == expected


# --------------------------------------------------------------------------- no choice yet
@pytest.mark.parametrize("spec", [ColumnSpec("wage"), ColumnSpec("lang", kind="categorical")])
def test_without_a_choice_the_message_names_both_options_and_where(records, spec):
    with pytest.raises(ValueError) as info:
        prepare(records, [spec])
    message = str(info.value)
    expected = int(records[spec.name].isna().sum())
    assert f"column {spec.name!r} has {expected} missing value(s)" in message
    for words in ("'missing is a value'", "'drop records with a missing value'", "column's panel on the Data page",
                  "--missing value", "--missing drop", '"missing": "value"'):
        assert words in message


def test_rows_named_after_dropping_are_the_files_rows():
    frame = pd.DataFrame({"a": [1.0, np.nan, 2.0, np.nan, 3.0], "b": ["x", "y", None, "z", None]})
    with pytest.raises(ValueError, match=r"column 'b' has 2 missing value\(s\) .*at rows 3, 5 "):
        prepare(frame, [ColumnSpec("a", missing="drop", bounds=(0, 5)), ColumnSpec("b", kind="categorical")])
    with pytest.raises(ValueError, match=r"1 row\(s\) after dropping the 4 record\(s\) with a missing value"):
        prepare(frame, [ColumnSpec("a", missing="drop", bounds=(0, 5)),
                        ColumnSpec("b", kind="categorical", missing="drop")])


def test_bad_choice_is_refused():
    with pytest.raises(ValueError, match=r"missing of column 'a' must be one of 'value', 'drop', got 'keep'"):
        ColumnSpec("a", missing="keep")


# --------------------------------------------------------------------------- missing is a value
def test_numeric_missing_atom_is_outside_the_range_and_h_never_draws_it(records):
    prepared = prepare(records, [ColumnSpec("wage", bounds=(0, 100), missing="value")])
    atoms = prepared.table.atoms
    assert np.isnan(atoms[-1]) and np.all((atoms[:-1] >= 0) & (atoms[:-1] <= 1))   # one atom, outside [0, 1]
    assert prepared.table.counts[-1] == records["wage"].isna().sum()
    release = pypp_release(atoms, prepared.table.counts, 0.0, 50.0, 2000, np.random.default_rng(0),
                           base=prepared.bases)
    drawn = np.asarray(release.values, float)
    assert release.is_new.sum() > 0 and not np.isnan(drawn[release.is_new]).any()   # H draws numbers only
    assert np.isnan(drawn[~release.is_new]).sum() > 0                                # the atom is re-released
    back = prepared.to_original(release.values)["wage"]
    assert back.isna().sum() == np.isnan(drawn).sum()
    # privacy accounting is over atoms: the missing atom is one more multiplicity
    counts = records["wage"].astype(object).fillna("missing").value_counts().to_numpy()
    assert instance_delta(prepared.table.counts, 0.0, 2.0, 10, 1.0) == instance_delta(np.sort(counts), 0.0, 2.0, 10, 1.0)


def test_whole_numbers_keep_their_form_next_to_empty_cells(records):
    prepared = prepare(records, _specs("value"))
    out = prepared.to_original(prepared.table.atoms)
    assert str(out["wage"].dtype) == "Int64"
    text = out.to_csv(index=False)
    assert ",de\n" in text or ",en\n" in text      # an empty wage cell
    assert ".0" not in text


def test_public_category_list_counts_missing_as_one_more_category():
    frame = pd.DataFrame({"c": ["a", "b", None, "a", "b", "a"]})
    spec = ColumnSpec("c", kind="categorical", categories=("a", "b", "c"), missing="value")
    prepared = prepare(frame, [spec])
    assert prepared.bases[0] == CategoricalBase(("a", "b", "c", None))   # z + 1 = 4
    # σ < 0 needs θ = z |σ| with z = 4 public categories (the missing one included)
    release = pypp_release(prepared.table.atoms, prepared.table.counts, -1.0, 4.0, 200, np.random.default_rng(1),
                           base=prepared.bases)
    assert set(release.values.tolist()) <= {"a", "b", "c", None}
    with pytest.raises(ValueError, match="z = 4"):
        pypp_release(prepared.table.atoms, prepared.table.counts, -1.0, 3.0, 20, np.random.default_rng(1),
                     base=prepared.bases)
    # unobserved, the missing category is a public category H may draw (the domain is public)
    complete = prepare(frame.dropna(), [spec])
    assert complete.bases[0].categories == ("a", "b", "c", None)
    draws = [pypp_release(complete.table.atoms, complete.table.counts, -1.0, 4.0, 50, np.random.default_rng(s),
                          base=complete.bases).values.tolist() for s in range(20)]
    assert any(None in d for d in draws)


def test_only_missing_numeric_column_needs_public_bounds():
    frame = pd.DataFrame({"x": [np.nan] * 4})
    with pytest.raises(ValueError, match="only missing values"):
        prepare(frame, [ColumnSpec("x", missing="value")])
    prepared = prepare(frame, [ColumnSpec("x", missing="value", bounds=(0, 1))])
    assert prepared.table.k == 1 and prepared.table.n == 4


def test_frequency_table_missing_atom_does_not_depend_on_row_order():
    rows = np.array([[2.0, "x"], [np.nan, "y"], [1.0, None], [np.nan, "y"], [2.0, "x"]], dtype=object)
    first = frequency_table(rows, missing_atom=True)
    again = frequency_table(rows[::-1], missing_atom=True)
    assert first.counts.tolist() == again.counts.tolist() == [1, 2, 2]
    assert pd.DataFrame(first.atoms).equals(pd.DataFrame(again.atoms))
    with pytest.raises(ValueError, match="missing"):
        frequency_table(rows)


def test_coarsening_leaves_a_missing_cell_missing(records):
    coarse = apply_coarsening(records, [ColumnTransform("wage", "round", step=10),
                                        ColumnTransform("lang", "keep", keep=("en",))])
    assert coarse["wage"].isna().sum() == records["wage"].isna().sum()
    assert coarse["lang"].isna().sum() == records["lang"].isna().sum()
    assert set(coarse["lang"].dropna()) == {"en", "other"}
    prepared = prepare_frame(records, _specs("value"), coarsening=[ColumnTransform("wage", "round", step=10)])
    assert prepared.n == N


# --------------------------------------------------------------------------- recipe and reports
def _recipe(path: Path, choice: str, **kw) -> ReleaseRecipe:
    return ReleaseRecipe(source=str(path), columns=_specs(choice), eps=2.0, delta=0.1, m=40, theta=50.0, seed=7, **kw)


@pytest.mark.parametrize("choice", ["value", "drop"])
def test_recipe_round_trip_and_old_recipes_still_load(files, choice):
    recipe = _recipe(files["csv"], choice)
    text = recipe.to_json()
    assert [c["missing"] for c in json.loads(text)["data"]["columns"]] == [choice, choice]
    assert ReleaseRecipe.from_json(text) == recipe
    old = json.loads(text)
    for column in old["data"]["columns"]:
        del column["missing"]          # a recipe written before the field existed
    loaded = ReleaseRecipe.from_dict(old)
    assert [c.missing for c in loaded.columns] == [None, None]
    assert "missing" not in loaded.to_dict()["data"]["columns"][0]   # no choice: written as before
    bad = json.loads(text)
    bad["data"]["columns"][0]["missing"] = "impute"
    with pytest.raises(ValueError, match="must be one of 'value', 'drop'"):
        ReleaseRecipe.from_dict(bad)


def test_missing_is_a_value_releases_empty_cells_and_keeps_n(records, files):
    result = run_recipe(_recipe(files["csv"], "value"))
    csv = pd.read_csv(io.BytesIO(result.synthetic_csv()), keep_default_na=False, dtype=str)
    assert len(csv) == 40 and (csv["wage"] == "").sum() > 0
    assert (csv["wage"] == "").sum() == result.synthetic["wage"].isna().sum()
    assert result.public_report["data"]["n"] == N
    assert not any("dropped" in t for t in (c["statement"] + " " + c["consequence"] for c in result.public_report["data_dependent_choices"]))
    record = result.curator_report["data"]["missing_values"]
    assert record == {"records_read": N, "records_dropped": 0, "records_released_from": N,
                      "columns": [{"column": "wage", "missing": "value",
                                   "missing_records": int(records["wage"].isna().sum())},
                                  {"column": "lang", "missing": "value",
                                   "missing_records": int(records["lang"].isna().sum())}]}
    assert not _recipe(files["csv"], "value").depends_on_data


def test_drop_states_the_data_dependent_n_in_both_reports(records, files):
    kept = int((records["wage"].notna() & records["lang"].notna()).sum())
    recipe = _recipe(files["parquet"], "drop")
    assert recipe.depends_on_data and recipe.dropped_missing == ("wage", "lang")
    result = run_recipe(recipe)
    assert not result.synthetic.isna().any().any()
    public = result.public_report
    assert public["data"]["n"] == kept and public["statement_depends_on_data"]
    (text,) = [t for t in (c["statement"] + " " + c["consequence"] for c in public["data_dependent_choices"]) if "dropped" in t]
    assert "'wage', 'lang'" in text and f"n = {kept:,}" in text and "depends on the confidential data" in text
    assert str(N - kept) not in text.replace(f"{kept:,}", "")   # the count dropped stays with the curator
    assert public_report(recipe, n=kept, m=40)["data_dependent_choices"] == public["data_dependent_choices"]
    record = result.curator_report["data"]["missing_values"]
    assert (record["records_read"], record["records_dropped"], record["records_released_from"]) == (N, N - kept, kept)
    assert [c["records_dropped"] for c in record["columns"]] == [int(records["wage"].isna().sum()),
                                                                 int(records["lang"].isna().sum())]
    assert any(f"{N - kept:,} of the {N:,} records read were dropped" in w for w in result.warnings)
    assert result.curator_report["data"]["n"] == kept


# --------------------------------------------------------------------------- curator comparisons
def test_quality_metrics_compare_missing_cells():
    real = pd.Series([1.0, 2.0, np.nan, 3.0])
    assert ks_complement(real, [1.0, 2.0, 3.0, None]) == 1.0                 # the numbers are compared
    assert tv_complement(pd.Series(["a", None]), pd.Series(["a", "b"])) == 0.5   # missing is a category
    frame = pd.DataFrame({"x": [1.0, np.nan, 2.0, 3.0, 4.0], "c": ["u", "v", None, "u", "v"]})
    report = quality_report(frame, frame, {"x": "numeric", "c": "categorical"})
    assert report.overall == pytest.approx(1.0)


# --------------------------------------------------------------------------- command line
def _cli(files, tmp_path, *extra) -> tuple[int, str]:
    out = tmp_path / "synthetic.csv"
    argv = ["release", str(files["csv"]), "--column", "wage", "--categorical", "lang", "--bounds", "0", "100",
            "--decimals", "0", "--theta", "50", "--eps", "2", "--delta", "0.1", "--m", "30", "--seed", "3",
            "--out", str(out), "--accept-weak", "--acknowledge", "dropped_missing", "--report",
            str(tmp_path / "report.json"), *extra]
    return main(argv), out


def test_cli_refuses_without_a_choice_and_names_both(files, tmp_path, capsys):
    with pytest.raises(SystemExit) as info:
        _cli(files, tmp_path)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "'missing is a value'" in err and "'drop records with a missing value'" in err and "--missing" in err


@pytest.mark.parametrize("choice", ["value", "drop"])
def test_cli_releases_under_both_choices(records, files, tmp_path, capsys, choice):
    status, out = _cli(files, tmp_path, "--missing", choice, "--save-recipe", str(tmp_path / "recipe.json"))
    assert status == 0
    csv = pd.read_csv(out, keep_default_na=False, dtype=str)
    assert ((csv["wage"] == "").sum() > 0) == (choice == "value")
    report = json.loads((tmp_path / "report.json").read_text())
    kept = int((records["wage"].notna() & records["lang"].notna()).sum())
    assert report["data"]["n"] == (N if choice == "value" else kept)
    err = capsys.readouterr().err
    assert ("records read were dropped" in err) == (choice == "drop")
    recipe = json.loads((tmp_path / "recipe.json").read_text())
    assert [c["missing"] for c in recipe["data"]["columns"]] == [choice, choice]
    # the recipe replays the release byte for byte
    again = tmp_path / "again.csv"
    assert main(["release", "--recipe", str(tmp_path / "recipe.json"), str(files["csv"]), "--out", str(again),
                 "--accept-weak", "--acknowledge", "dropped_missing"]) == 0
    assert again.read_bytes() == out.read_bytes()


def test_cli_per_column_choice_wins_over_the_choice_for_every_column(records, files, tmp_path):
    status, out = _cli(files, tmp_path, "--missing", "value", "--missing", "lang", "drop")
    assert status == 0
    report = json.loads((tmp_path / "report.json").read_text())
    assert [c["missing"] for c in report["data"]["missing_values"]["columns"]] == ["value", "drop"]
    assert report["data"]["n"] == int(records["lang"].notna().sum())


@pytest.mark.parametrize("extra, message", [
    (["--missing", "keep"], "--missing takes 'value' or 'drop'"),
    (["--missing", "age", "drop"], "'age' is not a released column"),
    (["--missing", "value", "--missing", "drop"], "both apply to every column"),
    (["--missing", "wage", "value", "--missing", "wage", "drop"], "two choices"),
])
def test_cli_bad_missing_options(files, tmp_path, capsys, extra, message):
    with pytest.raises(SystemExit):
        _cli(files, tmp_path, *extra)
    assert message in capsys.readouterr().err


def test_public_domain_counts_the_missing_category_and_a_grid_only_drops():
    assert ColumnSpec("c", kind="categorical", categories=("a", "b"), missing="value").public_domain == 3
    assert ColumnSpec("c", kind="categorical", categories=("a", "b"), missing="drop").public_domain == 2
    # a grid keeps missing as a value (issue 36): the missing atom is one more public category (11 points + 1)
    assert ColumnSpec("x", bounds=(0, 10), grid=1.0, missing="value").public_domain == 12
    frame = pd.DataFrame({"x": [1.0, np.nan, 3.2, 4.0]})
    prepared = prepare(frame, [ColumnSpec("x", bounds=(0, 10), grid=1.0, missing="drop")])
    assert (prepared.n, prepared.n_dropped) == (3, 1)
