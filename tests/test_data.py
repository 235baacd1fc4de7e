"""Tests of core.data: reading, validation, transforms, frequency tables."""

from __future__ import annotations

import io
import warnings
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from core.data import (
    ColumnSpec,
    FrequencyTable,
    frequency_table,
    prepare,
    read_csv,
    rounding_profile,
)
from core.mechanisms import CategoricalBase, UniformBase, pypp_release
from core.validation import PrivacyLeakWarning

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data" / "cps_earnings.csv"


@pytest.fixture
def no_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


def frame(**columns) -> pd.DataFrame:
    return pd.DataFrame(columns)


# --------------------------------------------------------------------------- read_csv


@pytest.mark.parametrize("content, match", [
    (b"", "is empty"),
    (b"\n\n  \n", "is empty"),
    (b"a,b\n", "header .*'a', 'b'.* but no data rows"),
    (b"a,b\n1,2\n3,4,5\n", "Expected 2 fields in line 3, saw 3"),
    (b"a,b\n1,2,3\n", "more fields than the header"),
    (b'a,b\n"1,2\n', "not a valid CSV file.*EOF inside string"),
    (b"a,b\n\xff\xfe,1\n", "not UTF-8 text"),
])
def test_read_csv_rejects_bad_content(content, match):
    with pytest.raises(ValueError, match=match):
        read_csv(content)


def test_read_csv_rejects_oversize_from_every_kind_of_source(tmp_path):
    content = b"x\n" + b"1.5\n" * 100
    path = tmp_path / "big.csv"
    path.write_bytes(content)
    for source in (content, io.BytesIO(content), path, str(path)):
        with pytest.raises(ValueError, match=r"above the limit .*max_bytes=50"):
            read_csv(source, max_bytes=50)
    assert len(read_csv(path, max_bytes=None)) == 100
    assert len(read_csv(path, max_bytes=len(content))) == 100


@pytest.mark.parametrize("source, match", [
    ("/nonexistent/data.csv", "no such file"),
    (12345, "source must be a path, bytes or a file-like"),
])
def test_read_csv_rejects_bad_source(source, match):
    with pytest.raises(ValueError, match=match):
        read_csv(source)


def test_read_csv_rejects_bad_max_bytes():
    with pytest.raises(ValueError, match="max_bytes"):
        read_csv(b"a\n1\n", max_bytes=0)


def test_read_csv_reads_every_kind_of_source(tmp_path):
    text = "\ufeffx,label\n1.5,a\n2,b\n"  # with a byte-order mark, as Excel writes
    path = tmp_path / "d.csv"
    path.write_text(text, encoding="utf-8")
    stream = io.BytesIO(text.encode())
    stream.read()  # an exhausted stream (a re-run of the app) is read from its start
    for source in (path, str(path), text.encode(), stream, io.StringIO(text)):
        df = read_csv(source)
        assert list(df.columns) == ["x", "label"]
        assert df["x"].tolist() == [1.5, 2.0]


def test_read_csv_other_separator():
    df = read_csv(b"a;b\n1;2\n", sep=";")
    assert df.shape == (1, 2)


def test_read_csv_sample_data():
    df = read_csv(SAMPLE)
    assert df.shape == (13501, 5)
    assert list(df.columns) == ["year", "earnings", "degree", "gender", "age"]


# --------------------------------------------------------------------------- ColumnSpec


@pytest.mark.parametrize("kwargs, match", [
    (dict(kind="ordinal"), "kind of column 'x' must be 'numeric' or 'categorical'"),
    (dict(bounds=(2, 1)), "bounds of column 'x' must satisfy lo < hi"),
    (dict(bounds=(0, np.inf)), "bounds of column 'x' must be a pair"),
    (dict(bounds=(1,)), "bounds of column 'x' must be a pair"),
    (dict(bounds=(0, 10), log=True), "lo > 0 for a log-transformed column"),
    (dict(decimals=1.5), "decimals of column 'x' must be an integer"),
    (dict(decimals=99), r"decimals of column 'x' must be an integer in \[-15, 15\]"),
    (dict(kind="categorical", log=True), "categorical: log apply to numeric columns only"),
    (dict(kind="categorical", bounds=(0, 1), decimals=1), "categorical: bounds, decimals apply"),
    (dict(kind="categorical", categories=("a", "a")), "without repeats"),
    (dict(categories=("a",)), "categories apply to categorical columns only"),
])
def test_column_spec_rejects_bad_options(kwargs, match):
    with pytest.raises(ValueError, match=match):
        ColumnSpec("x", **kwargs)


# --------------------------------------------------------------------------- prepare: bad input


@pytest.mark.parametrize("data, spec, match", [
    (frame(a=[1.0, 2.0]), "b", r"no column named 'b'; the columns are 'a'"),
    (frame(a=[1.0, 2.0]), [], "choose at least one column"),
    (frame(a=[1.0, 2.0]), ["a", "a"], "column 'a' is chosen more than once"),
    (frame(a=[1.0]), "a", "the data have 1 row.*at least 2 records"),
    (frame(a=np.zeros(0)), "a", "the data have 0 row.*at least 2 records"),
    (frame(a=["1.5", "2", "abc", "x", "3"]), "a",
     r"column 'a' has 2 non-numeric value\(s\), e.g. 'abc' at rows 3, 4 "),
    (frame(a=["1,234", "2"]), "a", r"non-numeric value\(s\), e.g. '1,234' at row 1 "),
    (frame(a=[1.0, np.nan, 3.0, np.nan]), "a", r"column 'a' has 2 missing value\(s\).* at rows 2, 4"),
    (frame(a=[1.0] + [np.nan] * 7), "a", r"7 missing value\(s\).* rows 2, 3, 4, 5, 6 and 2 more"),
    (frame(a=[1.0, np.inf]), "a", r"column 'a' has 1 infinite value\(s\) at row 2"),
    (frame(a=[3.0, 0.0, -1.0]), ColumnSpec("a", log=True),
     r"column 'a' has 2 value\(s\) <= 0 \(smallest -1.0, at rows 2, 3\), but log needs positive"),
    (frame(a=[3.0, 0.004]), ColumnSpec("a", log=True, decimals=2),
     r"value\(s\) <= 0 after rounding to 2 decimals"),
    (frame(a=[5.0, 5.0, 5.0]), "a", "takes the single value 5.0.*supply public bounds"),
    (frame(c=["u", None, "v"]), ColumnSpec("c", kind="categorical"), r"column 'c' has 1 missing value\(s\).*row 2"),
    (frame(c=["u", "w", "v"]), ColumnSpec("c", kind="categorical", categories=("u", "v")),
     r"outside its public category list, e.g. 'w' at row 2"),
    (pd.DataFrame({"a;b": ["1;2"]}), "a", "another separator than a comma"),
])
def test_prepare_rejects_bad_input(data, spec, match):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        with pytest.raises(ValueError, match=match):
            prepare(data, spec)


def test_prepare_rejects_non_dataframe():
    with pytest.raises(ValueError, match="frame must be a pandas DataFrame"):
        prepare(np.arange(3.0), "a")


def test_bad_csv_column_found_through_read_csv():
    """The row numbers in messages are the data rows of the file, counted from 1."""
    df = read_csv(b"income,age\n100,30\n200,31\nn/a?,32\n300,\n")
    with pytest.raises(ValueError, match=r"'n/a\?' at row 3 "):
        prepare(df, ColumnSpec("income", bounds=(0, 1000)))
    with pytest.raises(ValueError, match=r"column 'age' has 1 missing value\(s\) .*at row 4 "):
        prepare(df, ColumnSpec("age", bounds=(0, 100)))


# --------------------------------------------------------------------------- prepare: transforms


def test_bounds_from_data_warn_and_are_flagged():
    df = frame(a=[1.0, 2.0, 4.0], b=[0.5, 0.5, 9.0])
    with pytest.warns(PrivacyLeakWarning, match="column 'a'") as record:
        prepared = prepare(df, [ColumnSpec("a"), ColumnSpec("b", bounds=(0, 10))])
    assert len(record) == 1  # b has public bounds: no warning for it
    assert prepared.bounds_from_data == (True, False)
    assert prepared.any_bounds_from_data
    assert prepared.column_info[0].bounds == (1.0, 4.0)
    assert [c["bounds_from_data"] for c in prepared.describe()] == [True, False]


def test_public_bounds_do_not_warn(no_warnings):
    prepared = prepare(frame(a=[1.0, 2.0]), ColumnSpec("a", bounds=(0, 3)))
    assert prepared.bounds_from_data == (False,)
    assert not prepared.any_bounds_from_data


def test_clipping_counts_and_clips():
    x = np.array([-5.0, 0.0, 1.0, 2.5, 10.0, 11.0, 99.0, 3.0])
    prepared = prepare(frame(x=x), ColumnSpec("x", bounds=(0, 10), scale=False))
    assert prepared.n_clipped == (3,)
    np.testing.assert_array_equal(prepared.values, np.clip(x, 0, 10))
    # Clipping creates ties at the bounds, and the frequency table counts them.
    assert dict(zip(prepared.table.atoms.tolist(), prepared.table.counts.tolist()))[10.0] == 3
    assert prepared.describe()[0]["clipped"] == 3


def test_clipping_applies_after_rounding_and_before_log():
    # 0.96 rounds to 1.0, inside the bounds; 0.94 rounds to 0.9 and is clipped to 1.
    prepared = prepare(frame(x=[0.94, 0.96, 5.0, 100.0]), ColumnSpec("x", bounds=(1, 50), decimals=1, log=True))
    assert prepared.n_clipped == (2,)
    original = prepared.to_original(prepared.values)["x"].to_numpy()
    np.testing.assert_array_equal(original, [1.0, 1.0, 5.0, 50.0])


def test_scaling_maps_public_bounds_to_unit_interval():
    x = np.array([2.0, 5.0, 8.0])
    plain = prepare(frame(x=x), ColumnSpec("x", bounds=(2, 8)))
    np.testing.assert_allclose(plain.values, [0.0, 0.5, 1.0], rtol=0, atol=1e-15)
    assert plain.bases == [UniformBase(0.0, 1.0)]
    logged = prepare(frame(x=x), ColumnSpec("x", bounds=(1, 16), log=True))
    np.testing.assert_allclose(logged.values, np.log(x) / np.log(16), rtol=1e-14)
    unscaled = prepare(frame(x=x), ColumnSpec("x", bounds=(1, 16), log=True, scale=False))
    np.testing.assert_allclose(unscaled.values, np.log(x), rtol=1e-14)
    assert unscaled.bases == [UniformBase(0.0, float(np.log(16)))]


def test_negative_decimals_round_to_tens():
    prepared = prepare(frame(x=[14.0, 16.0, 25.0, 123.0]), ColumnSpec("x", bounds=(0, 200), decimals=-1))
    out = prepared.to_original(prepared.values)["x"]
    assert out.tolist() == [10, 20, 20, 120]  # round half to even: 25 -> 20
    assert out.dtype == np.int64


def test_shapes_and_dtypes(no_warnings):
    df = frame(a=[1.0, 2.0, 3.0], b=[4, 5, 6], c=["u", "v", "u"])
    one = prepare(df, ColumnSpec("a", bounds=(0, 4)))
    assert one.values.shape == (3,) and one.values.dtype == np.float64 and one.d == 1
    two = prepare(df, [ColumnSpec("a", bounds=(0, 4)), ColumnSpec("b", bounds=(0, 10))])
    assert two.values.shape == (3, 2) and two.values.dtype == np.float64
    mixed = prepare(df, [ColumnSpec("a", bounds=(0, 4)), ColumnSpec("c", kind="categorical")])
    assert mixed.values.shape == (3, 2) and mixed.values.dtype == object
    assert mixed.kinds == ("numeric", "categorical") and mixed.columns == ("a", "c")
    assert isinstance(mixed.bases[1], CategoricalBase)
    cat = prepare(df, ColumnSpec("c", kind="categorical", categories=("u", "v", "w")))
    assert cat.values.shape == (3,) and cat.values.dtype == object
    assert cat.bases == [CategoricalBase(("u", "v", "w"))]


def test_boolean_column_is_numeric(no_warnings):
    prepared = prepare(frame(flag=[True, False, True]), ColumnSpec("flag", bounds=(0, 1)))
    np.testing.assert_array_equal(prepared.values, [1.0, 0.0, 1.0])


# --------------------------------------------------------------------------- to_original


@pytest.mark.parametrize("spec", [
    ColumnSpec("x", bounds=(0.5, 80.0)),
    ColumnSpec("x", bounds=(0.5, 80.0), log=True),
    ColumnSpec("x", bounds=(0.5, 80.0), log=True, scale=False),
    ColumnSpec("x", bounds=(0.5, 80.0), decimals=2),
])
def test_to_original_round_trip_is_exact_on_the_data(spec):
    rng = np.random.default_rng(1)
    x = np.round(rng.lognormal(2.0, 0.7, size=2000), 6)
    x = np.clip(x, *spec.bounds)
    prepared = prepare(frame(x=x), spec)
    back = prepared.to_original(prepared.values)
    expected = x if spec.decimals is None else np.round(x, spec.decimals)
    np.testing.assert_array_equal(back["x"].to_numpy(), expected)


def test_to_original_inverts_transform_off_the_data():
    """New values (not atoms of x) go through the inverse transform, within bounds."""
    prepared = prepare(frame(x=[1.0, 2.0, 40.0]), ColumnSpec("x", bounds=(0.5, 80.0), log=True))
    t = np.linspace(0.0, 1.0, 101)
    back = prepared.to_original(t)["x"].to_numpy()
    np.testing.assert_allclose(back, 0.5 * 160.0 ** t, rtol=1e-13)
    assert back.min() >= 0.5 and back.max() <= 80.0


def test_to_original_rounds_new_values_and_respects_bounds():
    prepared = prepare(frame(x=[1.0, 2.0]), ColumnSpec("x", bounds=(0.123, 9.876), decimals=1))
    back = prepared.to_original(np.array([0.0, 0.5, 1.0]))["x"].to_numpy()
    # Rounding gives 0.1 < lo and 9.9 > hi: clipping keeps the output inside the public bounds.
    np.testing.assert_allclose(back, [0.123, 5.0, 9.876], rtol=0, atol=1e-12)


def test_to_original_multi_column_with_categorical(no_warnings):
    df = frame(w=[10.5, 20.25, 10.5, 33.0], g=["m", "f", "f", "m"], age=[25, 30, 31, 25])
    specs = [ColumnSpec("w", bounds=(1, 100), log=True), ColumnSpec("g", kind="categorical"),
             ColumnSpec("age", bounds=(18, 65), decimals=0)]
    prepared = prepare(df, specs)
    back = prepared.to_original(prepared.values)
    pd.testing.assert_frame_equal(back, df, check_dtype=False)
    assert back["age"].dtype == np.int64
    with pytest.raises(ValueError, match=r"values must have shape \(m, 3\)"):
        prepared.to_original(prepared.values[:, :2])


def test_prepared_data_feeds_pypp_release(no_warnings):
    """A release from prepared data maps back within the public bounds, with new labels."""
    rng = np.random.default_rng(7)
    n = 300
    df = frame(income=np.round(rng.lognormal(3, 0.5, n), 2), sex=rng.choice(["f", "m"], n))
    prepared = prepare(df, [ColumnSpec("income", bounds=(1, 500), log=True, decimals=2),
                            ColumnSpec("sex", kind="categorical")])
    table = prepared.table
    release = pypp_release(table.atoms, table.counts, 0.0, 50.0, 400, rng, base=prepared.bases)
    assert release.n_new_values > 0  # theta large enough for new values at this seed
    out = prepared.to_original(release.values)
    assert out.shape == (400, 2)
    assert out["income"].between(1, 500).all()
    np.testing.assert_array_equal(out["income"], np.round(out["income"], 2))
    old = ~release.is_new
    observed_rows = set(map(tuple, df.itertuples(index=False)))
    assert all(row in observed_rows for row in out[old].itertuples(index=False))
    assert out.loc[release.is_new, "sex"].str.startswith("new_category_").all()


# --------------------------------------------------------------------------- frequency tables


def naive_table(values) -> Counter:
    values = np.asarray(values, dtype=object)
    if values.ndim == 1:
        return Counter(values.tolist())
    return Counter(tuple(row) for row in values.tolist())


def as_counter(table: FrequencyTable) -> Counter:
    atoms = table.atoms
    keys = atoms.tolist() if atoms.ndim == 1 else [tuple(r) for r in atoms.tolist()]
    assert len(set(keys)) == table.k, "atoms must be distinct"
    return Counter(dict(zip(keys, table.counts.tolist())))


def random_cases():
    for seed in range(5):
        rng = np.random.default_rng(seed)
        n = int(rng.integers(1, 400))
        yield f"float-{seed}", np.round(rng.lognormal(0, 1, n), int(rng.integers(0, 3)))
        yield f"int-{seed}", rng.integers(-3, 30, n)
        yield f"float2d-{seed}", np.round(rng.normal(size=(n, 3)), 1)
        yield f"int2d-{seed}", rng.integers(0, 4, size=(n, 2))
        yield f"labels-{seed}", rng.choice(["a", "b", "c", "dd", "e"], n).astype(object)
        mixed = np.empty((n, 3), dtype=object)
        mixed[:, 0] = rng.choice(["x", "y", "z"], n)
        mixed[:, 1] = np.round(rng.normal(size=n), 1)
        mixed[:, 2] = rng.integers(0, 3, n)
        yield f"mixed-{seed}", mixed


@pytest.mark.parametrize("name, values", list(random_cases()), ids=lambda v: v if isinstance(v, str) else "")
def test_frequency_table_matches_counter(name, values):
    table = frequency_table(values)
    expected = naive_table(values)
    assert as_counter(table) == expected
    assert table.n == len(values) == table.counts.sum()
    assert table.k == len(expected)
    assert table.singletons == sum(1 for c in expected.values() if c == 1)
    r, distinct = table.spectrum()
    assert dict(zip(r.tolist(), distinct.tolist())) == dict(Counter(expected.values()))
    assert int((r * distinct).sum()) == table.n
    assert table.counts.dtype == np.int64


def test_frequency_table_unorderable_mix_of_types():
    values = np.array([1, "a", 2.5, "a", 1, "b"], dtype=object)
    assert as_counter(frequency_table(values)) == naive_table(values)


def test_frequency_table_sorted_atoms_for_numbers():
    table = frequency_table([3.0, 1.0, 2.0, 1.0])
    assert table.atoms.tolist() == [1.0, 2.0, 3.0] and table.counts.tolist() == [2, 1, 1]


def test_frequency_table_sample_data():
    """The figures stated in sample_data/README.md."""
    table = frequency_table(read_csv(SAMPLE)["earnings"])
    assert (table.n, table.k, table.singletons, int(table.counts.max())) == (13501, 2719, 1767, 444)


@pytest.mark.parametrize("values, match", [
    (np.zeros(0), "values are empty"),
    (np.zeros((3, 0)), "values are empty"),
    (np.zeros((2, 2, 2)), r"shape \(n,\) or \(n, d\)"),
    ([1.0, np.nan, np.nan], r"2 missing value\(s\).*rows 2, 3"),
    (np.array([["a", None], ["b", "c"]], dtype=object), r"1 missing value\(s\)"),
])
def test_frequency_table_rejects_bad_values(values, match):
    with pytest.raises(ValueError, match=match):
        frequency_table(values)


def test_frequency_table_class_validates():
    with pytest.raises(ValueError, match="counts must all be >= 1"):
        FrequencyTable(np.array([1.0, 2.0]), np.array([1, 0]))
    with pytest.raises(ValueError, match="k = len\\(counts\\) = 2"):
        FrequencyTable(np.array([1.0, 2.0, 3.0]), np.array([1, 1]))


def test_rounding_profile_matches_naive():
    rng = np.random.default_rng(3)
    x = rng.lognormal(2, 1, 3000)
    profile = rounding_profile(x, [None, 3, 1, 0, -1])
    for row in profile.itertuples(index=False):
        d = None if pd.isna(row.decimals) else int(row.decimals)
        counts = Counter((x if d is None else np.round(x, d)).tolist())
        assert row.distinct == len(counts)
        assert row.singletons == sum(1 for c in counts.values() if c == 1)
        assert row.max_multiplicity == max(counts.values())
    assert profile["singletons"].is_monotonic_decreasing


@pytest.mark.parametrize("values, decimals, match", [
    (np.array(["a", "b"]), [0], "values must be numeric"),
    (np.arange(3.0), [], "at least one precision"),
    (np.arange(3.0), [0.5], "decimals must be an integer"),
])
def test_rounding_profile_rejects_bad_input(values, decimals, match):
    with pytest.raises(ValueError, match=match):
        rounding_profile(values, decimals)
