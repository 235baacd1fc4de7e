"""Agency scale (issue 13): DuckDB, Dask and pandas give the same frequency table.

core.data.aggregate reduces a file to the frequency table of the released columns; the
engines only count equal raw cells, and reading the cells and the transforms run in
core.data on the distinct cells with their counts. These tests compare the three engines
(DuckDB; Dask on a LocalCluster with 2 workers, one per module; pandas, the reference
that reads every row) on the bundled samples, on multi-column and categorical cases, on
.csv.gz, Parquet and globs, on the corpus of awkward files, and check that a release
from a frequency table equals (same seed) the release from the raw file.
"""

from __future__ import annotations

import gzip
import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from core import data as D
from core.cli import main
from core.release import ReleaseRecipe, run_recipe
from core.validation import PrivacyLeakWarning

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_data"
CORPUS = ROOT / "tests" / "data"
EXPECTED = json.loads((CORPUS / "expected.json").read_text(encoding="utf-8"))

pytestmark = pytest.mark.filterwarnings("ignore::core.validation.PrivacyLeakWarning")


@pytest.fixture(scope="module")
def cluster():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as lc:
        yield lc.scheduler_address


def _same(a: D.FrequencyTable, b: D.FrequencyTable) -> None:
    assert a.k == b.k and a.n == b.n
    np.testing.assert_array_equal(a.counts, b.counts)
    assert a.atoms.shape == b.atoms.shape
    assert [tuple(np.atleast_1d(r).tolist()) for r in a.atoms] == [tuple(np.atleast_1d(r).tolist()) for r in b.atoms]


def _tables(source, specs, scheduler=None, **options):
    out = {engine: D.aggregate(source, specs, engine=engine, **options) for engine in ("pandas", "duckdb")}
    if scheduler is not None:
        out["dask"] = D.aggregate(source, specs, engine="dask", scheduler=scheduler, **options)
    return out


def _rows_table(frame, specs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        return D.prepare(frame, specs).table


SAMPLE_CASES = [
    ("cps_earnings.csv", [D.ColumnSpec("earnings", bounds=(0.0, 100.0))]),
    ("cps_earnings.csv", [D.ColumnSpec("earnings", log=True, bounds=(1.0, 100.0), decimals=0)]),
    ("cps_earnings.csv", None),  # every column together: multi-column, categorical where text
    ("dyadic_geometric.csv", None),
]


def _specs_for(frame):
    return [D.ColumnSpec(c) if pd.api.types.is_numeric_dtype(frame[c]) and not pd.api.types.is_bool_dtype(frame[c])
            else D.ColumnSpec(c, kind="categorical") for c in frame.columns]


@pytest.mark.parametrize("name,specs", SAMPLE_CASES)
def test_engines_agree_on_the_bundled_samples(name, specs, cluster):
    path = SAMPLES / name
    frame = D.read_table(path).frame
    specs = specs or _specs_for(frame)
    tables = _tables(path, specs, cluster)
    reference = _rows_table(frame, specs)  # prepare on the rows, the pre-issue-13 path
    described = D.prepare(frame, specs).describe()
    for result in tables.values():
        _same(result.table, reference)
        assert result.prepared.describe() == described
    assert tables["duckdb"].decisions.n_rows == len(frame)


def _mixed_frame(n=5000, seed=1):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"age": rng.integers(16, 90, n), "sex": rng.choice(["f", "m"], n),
                         "region": rng.choice(["north", "south", "east", "NA"], n),
                         "wage": np.round(rng.lognormal(3, 1, n), 2),
                         "big_id": rng.choice([2**53 + 1, 2**53 + 2, 2**60 + 3], n)})


MULTI_SPECS = [
    [D.ColumnSpec("age"), D.ColumnSpec("sex", kind="categorical")],
    [D.ColumnSpec("wage", bounds=(0.0, 50.0), decimals=0), D.ColumnSpec("age", bounds=(18, 65))],
    [D.ColumnSpec("region", kind="categorical"), D.ColumnSpec("sex", kind="categorical")],
    [D.ColumnSpec("big_id")],
    [D.ColumnSpec("big_id", kind="categorical"), D.ColumnSpec("wage", log=True, bounds=(1.0, 1000.0))],
]


@pytest.mark.parametrize("specs", MULTI_SPECS, ids=lambda s: "+".join(c.name for c in s))
def test_engines_agree_on_multi_column_and_categorical_data(specs, cluster, tmp_path):
    frame = _mixed_frame()
    path = tmp_path / "mixed.csv"
    frame.to_csv(path, index=False)
    reference = _rows_table(D.read_table(path, keep_na_text=True).frame, specs)
    for result in _tables(path, specs, cluster, keep_na_text=True).values():
        _same(result.table, reference)
    # The same data as Parquet (typed columns), and as .csv.gz.
    frame.to_parquet(tmp_path / "mixed.parquet")
    for result in _tables(tmp_path / "mixed.parquet", specs, cluster).values():
        _same(result.table, _rows_table(frame, specs))
    (tmp_path / "mixed.csv.gz").write_bytes(gzip.compress(path.read_bytes()))
    for result in _tables(tmp_path / "mixed.csv.gz", specs, cluster, keep_na_text=True).values():
        _same(result.table, reference)


def test_globs_of_files_are_one_table(cluster, tmp_path):
    frame = _mixed_frame(3000, seed=2)
    for i, part in enumerate(np.array_split(np.arange(len(frame)), 3)):
        frame.iloc[part].to_parquet(tmp_path / f"part-{i}.parquet")
        frame.iloc[part].to_csv(tmp_path / f"part-{i}.csv", index=False)
    specs = [D.ColumnSpec("age"), D.ColumnSpec("sex", kind="categorical")]
    reference = _rows_table(frame, specs)
    for pattern in ("part-*.parquet", "part-*.csv"):
        tables = _tables(str(tmp_path / pattern), specs, cluster)
        for result in tables.values():
            _same(result.table, reference)
            assert len(result.files) == 3
    with pytest.raises(ValueError, match="no file matches"):
        D.aggregate(str(tmp_path / "nothing-*.csv"), specs)


#: Files read once (their first listed column): a file of 10 000 columns costs the engines
#: seconds per read, and its other columns take the same reading path.
READ_ONCE = {"columns_10000.csv"}


def _corpus_targets():
    for case, spec in sorted(EXPECTED.items()):
        if "error" in spec:
            yield case, "x", "numeric"
            continue
        targets = [(case, name, kind) for name, column in spec["columns"].items()
                   for kind in ("numeric", "categorical") if kind in column]
        yield from targets[:1] if case in READ_ONCE else targets


CORPUS_TARGETS = list(_corpus_targets())
# Refused by the reader (pandas engine) but read by aggregate: a gzip file is decompressed.
READ_BY_AGGREGATE = {"gzip.csv"}


def test_engines_agree_on_the_corpus_of_awkward_files():
    """Every file of tests/data: the same table from all engines, or a ValueError from all.

    Dask runs on its threads here (the same reading code as on a cluster; only the final
    ``compute`` differs): the cluster path is exercised by the other tests of this module, and
    a client connection per file would make this test the slowest of the suite."""
    compared = errors = 0
    for i, (case, name, kind) in enumerate(CORPUS_TARGETS):
        spec = EXPECTED[case]
        path = CORPUS / spec["file"]
        results = {}
        # Dask reads with the pandas reader per partition: every fifth target is enough to keep
        # it honest on the corpus (its own tests above cover the cluster path), at a fifth of the cost
        engines = ("pandas", "duckdb", "dask") if i % 5 == 0 else ("pandas", "duckdb")
        for engine in engines:
            try:
                results[engine] = D.aggregate(path, [D.ColumnSpec(name, kind=kind)], engine=engine,
                                              **spec["options"]).table
            except ValueError as exc:
                assert str(exc), (case, engine)
                results[engine] = None
        if all(r is None for r in results.values()):
            errors += 1
            continue
        assert all(r is not None for r in results.values()), (case, name, kind, results)
        for engine in engines[1:]:
            _same(results[engine], results["pandas"])
        expected = spec.get("columns", {}).get(name, {}).get(kind)
        if expected and "n" in expected and case not in READ_BY_AGGREGATE:
            assert (results["pandas"].n, results["pandas"].k) == (expected["n"], expected["k"])
        compared += 1
    assert compared >= 60 and errors >= 10


def test_row_shape_problems_are_refused_by_every_engine(cluster, tmp_path):
    cases = {"trailing.csv": "a,b\n1,2\n" * 10 + "3,4,\n", "short.csv": "a,b\n1,2\n" * 10 + "3\n",
             "long.csv": "a,b\n1,2\n" * 10 + "3,4,5\n"}
    for name, text in cases.items():
        path = tmp_path / name
        path.write_text(text)
        for engine in ("duckdb", "dask", "pandas"):
            with pytest.raises(ValueError, match="field"):
                D.aggregate(path, ["a"], engine=engine, scheduler=cluster if engine == "dask" else None)


def test_a_large_file_is_checked_beyond_the_head(tmp_path):
    """Past HEAD_BYTES only the engine sees the rows: a ragged row there is still refused."""
    path = tmp_path / "big.csv"
    body = "".join(f"{i % 997},{i % 13}\n" for i in range(200_000))
    path.write_text("a,b\n" + body + "5,6,\n")
    assert path.stat().st_size > D.HEAD_BYTES
    with pytest.raises(ValueError, match="more fields"):
        D.aggregate(path, ["a"])
    path.write_text("a,b\n" + body)
    result = D.aggregate(path, [D.ColumnSpec("a")])
    assert result.table.n == 200_000 and result.table.k == 997
    assert any(f"first {D.HEAD_BYTES // 1024} KiB" in note for note in result.decisions.notes)


@pytest.mark.parametrize("tail,rows", [
    ("\n\n7,8\n", 1),                 # empty lines past the head: dropped (DuckDB's strict fast path)
    ("   \n7,8\n", 1),                 # a line of spaces: the checked path drops it too
    ('"7\n7",8\n', 1),                 # a quoted field spanning lines: read serially
    ("7,8\r\n9,10\r\n", 2),          # CRLF line endings past the head
])
def test_duckdb_fast_and_checked_paths_read_past_the_head_as_read_table_does(tail, rows, tmp_path):
    """Well-formed files take DuckDB's strict mode; anything it refuses is read by the
    checked path. Both must give the table read_table gives (the pandas engine)."""
    path = tmp_path / "big.csv"
    body = "".join(f"{i % 997},{i % 13}\n" for i in range(60_000))
    path.write_text("a,b\n" + body + tail, newline="")
    assert path.stat().st_size > D.HEAD_BYTES
    specs = [D.ColumnSpec("a", kind="categorical"), D.ColumnSpec("b", kind="categorical")]
    duck = D.aggregate(path, specs, engine="duckdb")
    _same(duck.table, D.aggregate(path, specs, engine="pandas").table)
    assert duck.table.n == 60_000 + rows


# --------------------------------------------------------------------- frequency tables as input
def test_a_release_from_a_frequency_table_equals_the_release_from_the_raw_file(tmp_path):
    raw = SAMPLES / "cps_earnings.csv"
    frame = D.read_table(raw).frame
    counts = frame.groupby(["earnings"]).size().rename("count").reset_index()
    table_csv = tmp_path / "table.csv"
    counts.sample(frac=1.0, random_state=3).to_csv(table_csv, index=False)  # any row order
    spec = (D.ColumnSpec("earnings", bounds=(0.0, 100.0)),)
    base = dict(columns=spec, eps=2.5, delta=1e-3, m=300, theta=2.0, seed=7)
    from_raw = run_recipe(ReleaseRecipe(source=str(raw), **base))
    for engine in ("duckdb", "pandas"):
        from_table = run_recipe(ReleaseRecipe(source=str(table_csv), counts_column="count", **base), engine=engine)
        assert from_table.synthetic_csv() == from_raw.synthetic_csv()
        _same(from_table.prepared.table, from_raw.prepared.table)
        assert any("never left the custodian" in note for note in from_table.curator_report["data"]["reading"]["notes"])


def test_the_command_line_takes_a_frequency_table(tmp_path, capsys):
    raw = tmp_path / "raw.csv"
    frame = _mixed_frame(2000)
    frame.to_csv(raw, index=False)
    frame.groupby(["age", "sex"]).size().rename("n").reset_index().to_parquet(tmp_path / "table.parquet")
    common = ["--column", "age", "--categorical", "sex", "--bounds", "16", "90", "--theta", "2", "--m", "20",
              "--eps", "2", "--delta", "0.01", "--seed", "5"]
    assert main(["release", str(raw), *common, "--out", str(tmp_path / "a.csv"), "--accept-weak"]) == 0
    assert main(["release", str(tmp_path / "table.parquet"), "--counts-column", "n", *common,
                 "--out", str(tmp_path / "b.csv"), "--accept-weak", "--report", str(tmp_path / "b.json")]) == 0
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()
    report = json.loads((tmp_path / "b.json").read_text())
    assert report["data"]["n"] == 2000 and report["data"]["reading"]["counts_column"] == "n"
    assert report["recipe"]["data"]["counts_column"] == "n"


@pytest.mark.parametrize("counts,message", [
    (["1", "x"], "counts"), (["1", "-2"], ">= 0"), (["1", "1.5"], "counts"), (["1", ""], "counts")])
def test_bad_counts_are_refused(counts, message, tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("v,count\n" + "".join(f"{i},{c}\n" for i, c in enumerate(counts)))
    for engine in ("duckdb", "pandas"):
        with pytest.raises(ValueError, match=message):
            D.aggregate(path, ["v"], counts_column="count", engine=engine)
    with pytest.raises(ValueError, match="cannot also be released"):
        D.aggregate(path, ["v", "count"], counts_column="count")


def test_weighted_prepare_equals_prepare_of_the_rows():
    rng = np.random.default_rng(4)
    x = np.round(rng.normal(5, 3, 4000), 1)
    frame = pd.DataFrame({"x": x})
    spec = [D.ColumnSpec("x", bounds=(0.0, 10.0), decimals=0)]
    values, counts = np.unique(x, return_counts=True)
    weighted = D.prepare(pd.DataFrame({"x": values}), spec, counts=counts)
    rows = D.prepare(frame, spec)
    _same(weighted.table, rows.table)
    assert weighted.n_clipped == rows.n_clipped and weighted.from_table and not rows.from_table
    sample = weighted.sample(100, np.random.default_rng(0))
    assert sample.shape == (100,) and set(sample.tolist()) <= set(rows.table.atoms.tolist())


def test_engine_options_are_checked():
    with pytest.raises(ValueError, match="engine must be one of"):
        D.aggregate(SAMPLES / "cps_earnings.csv", ["earnings"], engine="spark")
    with pytest.raises(ValueError, match="scheduler"):
        D.aggregate(SAMPLES / "cps_earnings.csv", ["earnings"], scheduler="tcp://x:1")
    with pytest.raises(ValueError, match="reads files"):
        D.aggregate(b"a\n1\n2\n", ["a"], engine="dask")


def test_a_coarsening_applied_to_the_distinct_values_equals_coarsening_the_rows(tmp_path):
    """aggregate(coarsening=) weights min_count by the counts: the same table as coarsening
    every row and preparing them, for a raw file and for its frequency table."""
    from core.data import ColumnTransform, apply_coarsening

    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"x": rng.integers(0, 10_000, 4000).astype(float),
                          "c": rng.choice(list("abcdefgh"), 4000, p=[.4, .3, .15, .1, .03, .01, .005, .005])})
    coarsening = (ColumnTransform("x", "round", step=250.0), ColumnTransform("c", "min_count", min_count=40))
    specs = [D.ColumnSpec("x", bounds=(0.0, 10_000.0)), D.ColumnSpec("c", kind="categorical")]
    expected = D.prepare(apply_coarsening(frame, coarsening), specs).table
    raw = tmp_path / "raw.csv"
    frame.to_csv(raw, index=False)
    _same(D.aggregate(raw, specs, coarsening=coarsening).table, expected)
    table = tmp_path / "table.csv"
    frame.value_counts().rename("n").reset_index().to_csv(table, index=False)
    _same(D.aggregate(table, specs, counts_column="n", coarsening=coarsening).table, expected)
    # Without the weights min_count would count distinct rows, not records, and merge other categories.
    distinct = apply_coarsening(frame, coarsening[:1]).value_counts().reset_index()
    weighted = set(apply_coarsening(distinct, coarsening[1:], counts=distinct["count"])["c"])
    unweighted = set(apply_coarsening(distinct, coarsening[1:])["c"])
    assert weighted == set(apply_coarsening(frame, coarsening[1:])["c"]) and weighted != unweighted


def test_read_head_is_what_aggregate_decides_on(tmp_path):
    """The dashboard lists a large upload's columns from read_head: the same separator,
    header and columns aggregate reads, from at most HEAD_BYTES."""
    body = "".join(f"{i % 97};{i % 13};x{i % 5}\n" for i in range(60_000))
    content = ("a;b;c\n" + body).encode()
    assert len(content) > D.HEAD_BYTES
    head, complete = D.read_head(content, name="big.csv")
    assert not complete and head.decisions.delimiter == ";" and head.decisions.header
    assert [c.name for c in head.decisions.columns] == ["a", "b", "c"]
    # read from the head, recorded with the file's size (issue 36: the record stated the head's)
    assert head.decisions.size_bytes == len(content) and len(head.frame) < 60_000
    full = D.aggregate(content, ["a", D.ColumnSpec("c", kind="categorical")])
    assert full.table.n == 60_000 and full.decisions.delimiter == head.decisions.delimiter
    small, complete = D.read_head(b"x,y\n1,2\n")
    assert complete and len(small.frame) == 1
    with pytest.raises(ValueError, match="header"):
        D.read_head(content, header="yes")


def test_distinct_values_once_then_any_transforms_equal_aggregate(tmp_path):
    """The dashboard reads a large file once (distinct_values) and re-prepares on each change
    of transforms: the same tables as aggregate, for several specs and a coarsening."""
    from core.data import ColumnTransform

    rng = np.random.default_rng(5)
    frame = pd.DataFrame({"w": np.round(rng.lognormal(3, 1, 40_000), 2), "g": rng.choice(["a", "b", "c"], 40_000)})
    path = tmp_path / "big.csv"
    frame.to_csv(path, index=False)
    assert path.stat().st_size > D.HEAD_BYTES
    values = D.distinct_values(path, ["w", "g"])
    assert int(values.counts.sum()) == 40_000 and values.rows is None
    for specs, coarsening in [
        ([D.ColumnSpec("w", bounds=(0.0, 500.0))], ()),
        ([D.ColumnSpec("w", bounds=(1.0, 500.0), log=True, decimals=1), D.ColumnSpec("g", kind="categorical")], ()),
        ([D.ColumnSpec("w", bounds=(0.0, 500.0)), D.ColumnSpec("g", kind="categorical")],
         (ColumnTransform("w", "signif", digits=2),)),
    ]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyLeakWarning)
            _same(values.aggregated(specs, coarsening).table, D.aggregate(path, specs, coarsening=coarsening).table)
    with pytest.raises(ValueError, match="was not read"):
        values.aggregated([D.ColumnSpec("x")])
    with pytest.raises(ValueError, match="columns must be"):
        D.distinct_values(path, ["w", "w"])
    # A small file is read whole: a bad cell is named by its row, as prepare names it.
    small = tmp_path / "small.csv"
    small.write_text("w\n1\n2\nabc\n")
    with pytest.raises(ValueError, match="row"):
        D.distinct_values(small, ["w"]).aggregated([D.ColumnSpec("w", bounds=(0.0, 5.0))])
