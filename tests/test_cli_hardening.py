"""The command line does not trust its recipe, nor the paths it writes to.

* a recipe never chooses the file that is read: a file path written in it is read only
  with ``--use-recipe-source`` (a recipe naming ``/etc/passwd`` with ``"sep": ":"`` copied
  its user names into the public ``synthetic.csv``);
* no output over an input (DATA, a file of its glob, a hard link to it, the recipe, the
  file the recipe names, a bundled sample);
* no output through a symbolic link (checked up front, and ``O_NOFOLLOW`` when writing);
* CONFIDENTIAL outputs (report, curator record, saved recipe, ``compare --out``) are mode
  0600, also when the file existed with a looser mode;
* a malformed or deeply nested recipe, and Parquet columns of a type that cannot be
  released (struct, list, map, binary), end with ``error: …`` and exit status 2 — in the
  app, with an ``st.error`` — never a traceback.
"""

from __future__ import annotations

import copy
import json
import os
import stat
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from streamlit.testing.v1 import AppTest

from core.cli import main
from core.data import ColumnSpec, ColumnTransform
from core.release import ReleaseRecipe, sample_source, write_output
from ui.selection import content_hash

REPO = Path(__file__).resolve().parents[1]
PARAMS = ["--theta", "2", "--m", "20", "--eps", "1", "--delta", "0.5", "--seed", "3"]


@pytest.fixture(scope="module")
def data_csv(tmp_path_factory) -> Path:
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"wage": np.round(rng.lognormal(2.5, 0.6, 120), 1), "sex": rng.choice(["f", "m"], 120)})
    path = tmp_path_factory.mktemp("hardening") / "data.csv"
    frame.to_csv(path, index=False)
    return path


def _error(capsys, argv) -> str:
    """Run the command line, expect exit status 2, return stderr (checked free of tracebacks)."""
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "error: " in err
    return err


def _recipe(tmp_path: Path, source: str, **options) -> Path:
    recipe = ReleaseRecipe(source=source, columns=(ColumnSpec("user", kind="categorical"),), eps=1.0, delta=0.5,
                           m=20, theta=2.0, seed=1, **options)
    path = tmp_path / "recipe.json"
    path.write_text(recipe.to_json(), encoding="utf-8")
    return path


# --------------------------------------------------------------------------- the recipe's source
def test_a_recipe_naming_a_file_is_not_read_without_confirmation(tmp_path, capsys):
    """The /etc/passwd recipe: refused (nothing written) until the user names the file or confirms it."""
    secret = tmp_path / "passwd"
    secret.write_text("".join(f"user{i}:x:{1000 + i}:{1000 + i}::/home/user{i}:/bin/sh\n" for i in range(30)))
    recipe = _recipe(tmp_path, str(secret), sep=":", header=False)
    # the recipe reads columns column_1, ...: name one so the release would succeed if read
    body = json.loads(recipe.read_text())
    body["data"]["columns"][0]["name"] = "column_1"
    recipe.write_text(json.dumps(body))
    out = tmp_path / "synthetic.csv"
    err = _error(capsys, ["release", "--recipe", str(recipe), "--out", str(out)])
    assert "never chooses which file is read" in err and "--use-recipe-source" in err
    assert not out.exists()
    # confirmed: the file is read, and stderr says which one
    assert main(["release", "--recipe", str(recipe), "--use-recipe-source", "--out", str(out), "--accept-weak"]) == 0
    assert f"reading the data file the recipe names (confirmed with --use-recipe-source): {secret}" in \
        capsys.readouterr().err
    assert set(pd.read_csv(out)["column_1"]) <= {f"user{i}" for i in range(30)}
    # given on the command line: that file is read (the flag and DATA together are refused)
    assert main(["release", "--recipe", str(recipe), str(secret), "--out", str(out), "--accept-weak"]) == 0
    capsys.readouterr()
    err = _error(capsys, ["release", "--recipe", str(recipe), str(secret), "--use-recipe-source", "--out", str(out)])
    assert "not both" in err
    err = _error(capsys, ["release", str(secret), "--column", "column_1", "--use-recipe-source", *PARAMS,
                          "--out", str(out)])
    assert "needs --recipe" in err


def test_a_bundled_sample_needs_no_confirmation(tmp_path, capsys):
    recipe = ReleaseRecipe(source=sample_source("cps_earnings.csv"), columns=(ColumnSpec("earnings"),), eps=1.0,
                           delta=0.5, m=10, theta=2.0, seed=1)
    path = tmp_path / "r.json"
    path.write_text(recipe.to_json(), encoding="utf-8")
    assert main(["release", "--recipe", str(path), "--out", str(tmp_path / "s.csv"), "--accept-weak",
                 "--acknowledge", "bounds_from_data"]) == 0
    assert len(pd.read_csv(tmp_path / "s.csv")) == 10
    capsys.readouterr()


# --------------------------------------------------------------------------- outputs over inputs
def test_no_output_overwrites_an_input(data_csv, tmp_path, capsys):
    data = tmp_path / "data.csv"
    data.write_bytes(data_csv.read_bytes())
    original = data.read_bytes()
    flags = ["--column", "wage", "--bounds", "0", "500", *PARAMS]
    # DATA itself, under each output option
    for option in ("--out", "--report", "--public-bundle", "--curator-bundle", "--save-recipe"):
        args = ["release", str(data), *flags, option, str(data)]
        if option != "--out":
            args += ["--out", str(tmp_path / "s.csv")]
        assert "would overwrite the input" in _error(capsys, args)
    # a hard link to DATA, and a file of DATA's glob
    os.link(data, tmp_path / "linked.csv")
    assert "would overwrite the input" in _error(capsys, ["release", str(data), *flags, "--out",
                                                          str(tmp_path / "linked.csv")])
    part = tmp_path / "parts"
    part.mkdir()
    (part / "a.csv").write_bytes(original)
    (part / "b.csv").write_bytes(original)
    assert "would overwrite the input" in _error(capsys, ["release", str(part / "*.csv"), *flags, "--out",
                                                          str(part / "b.csv")])
    # the recipe file, and the file the recipe names (confirmed)
    recipe = tmp_path / "r.json"
    assert main(["release", str(data), *flags, "--out", str(tmp_path / "s.csv"), "--accept-weak", "--save-recipe",
                 str(recipe)]) == 0
    capsys.readouterr()
    assert "would overwrite the input" in _error(capsys, ["release", "--recipe", str(recipe), str(data), "--out",
                                                          str(recipe)])
    assert "would overwrite the input" in _error(capsys, ["release", "--recipe", str(recipe), "--use-recipe-source",
                                                          "--out", str(data)])
    assert data.read_bytes() == original
    # a bundled sample is an input too
    sample = ReleaseRecipe(source=sample_source("cps_earnings.csv"), columns=(ColumnSpec("earnings"),), eps=1.0,
                           delta=0.5, m=10, theta=2.0, seed=1)
    recipe.write_text(sample.to_json(), encoding="utf-8")
    assert "would overwrite the input" in _error(capsys, ["release", "--recipe", str(recipe), "--out",
                                                          str(REPO / "sample_data" / "cps_earnings.csv")])


def test_compare_out_is_not_its_input_and_is_confidential(data_csv, tmp_path, capsys):
    common = ["compare", str(data_csv), "--column", "wage", "--bounds", "0", "500", "--theta", "2", "--eps", "2",
              "--delta", "0.5", "--m", "20", "--runs", "2", "--mechanism", "pypp"]
    assert "would overwrite the input" in _error(capsys, [*common, "--out", str(data_csv)])
    out = tmp_path / "summary.csv"
    assert main([*common, "--out", str(out)]) == 0
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    capsys.readouterr()


# --------------------------------------------------------------------------- symbolic links, modes
def test_no_output_through_a_symbolic_link(data_csv, tmp_path, capsys):
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    flags = [str(data_csv), "--column", "wage", "--bounds", "0", "500", *PARAMS]
    for option in ("--out", "--report", "--curator-bundle", "--public-bundle", "--save-recipe"):
        link = tmp_path / f"link_{option.strip('-')}"
        link.symlink_to(victim)
        args = ["release", *flags, option, str(link)] + ([] if option == "--out" else ["--out", str(tmp_path / "s")])
        assert "is a symbolic link" in _error(capsys, args)
    dangling = tmp_path / "dangling.csv"
    dangling.symlink_to(tmp_path / "does_not_exist_yet.csv")
    assert "is a symbolic link" in _error(capsys, ["release", *flags, "--out", str(dangling)])
    assert victim.read_text() == "keep me" and not (tmp_path / "does_not_exist_yet.csv").exists()
    # a link planted after the check (a race) is refused when the file is opened (O_NOFOLLOW)
    with pytest.raises(ValueError, match="symbolic link"):
        write_output(tmp_path / "link_out", b"x", confidential=False)
    assert victim.read_text() == "keep me"


def test_confidential_outputs_are_readable_by_their_owner_only(data_csv, tmp_path, capsys):
    report, curator, recipe = tmp_path / "report.json", tmp_path / "CONFIDENTIAL_record.zip", tmp_path / "r.json"
    report.write_text("old")
    report.chmod(0o644)   # an existing file with a looser mode is tightened before it is written
    assert main(["release", str(data_csv), "--column", "wage", "--bounds", "0", "500", *PARAMS, "--out",
                 str(tmp_path / "s.csv"), "--public-bundle", str(tmp_path / "public.zip"), "--accept-weak",
                 "--report", str(report), "--curator-bundle", str(curator), "--save-recipe", str(recipe)]) == 0
    capsys.readouterr()
    for path in (report, curator, recipe):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    assert json.loads(report.read_text())["CONFIDENTIAL"]
    for public in (tmp_path / "s.csv", tmp_path / "public.zip"):   # public files: the usual mode
        assert stat.S_IMODE(public.stat().st_mode) == 0o644 & ~_umask(), public


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_write_output_refuses_what_is_not_a_regular_file(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(OSError):   # no reader: refused at once (O_NONBLOCK), not a hang
        write_output(fifo, b"x", confidential=True)


# --------------------------------------------------------------------------- malformed recipes
def test_a_deeply_nested_recipe_gives_a_clear_error(tmp_path, capsys):
    out = tmp_path / "s.csv"
    for text in ("[" * 100_000 + "]" * 100_000,
                 '{"schema": "bnp-synth/release-recipe", "schema_version": 1, "seed": ' + "[" * 50_000 + "]" * 50_000
                 + "}"):
        path = tmp_path / "deep.json"
        path.write_text(text)
        err = _error(capsys, ["release", "--recipe", str(path), "--out", str(out)])
        assert "nested too deeply" in err
    err = _error(capsys, ["release", "data.csv", "--column", "wage", *PARAMS, "--coarsening",
                          "[" * 100_000 + "]" * 100_000, "--out", str(out)])
    assert "nested too deeply" in err
    assert not out.exists()


MALFORMED = [None, 5, -1, 1.5, 1e308, True, "x", "", [], {}, [1], [[[]]], {"a": 1}, ["a", "b"], 2**200, [None]]


def _paths(obj, prefix=()):
    yield prefix
    children = obj.items() if isinstance(obj, dict) else enumerate(obj) if isinstance(obj, list) else ()
    for key, value in children:
        yield from _paths(value, prefix + (key,))


def test_every_malformed_field_of_a_recipe_is_a_value_error():
    """Each field of a full recipe (columns, categories, coarsening with bounds and a keep
    list) replaced by each malformed value: a ValueError (the CLI's ``error:``), nothing else."""
    recipe = ReleaseRecipe(source="x.csv", columns=(ColumnSpec("w", bounds=(0, 5), decimals=1),
                                                    ColumnSpec("s", kind="categorical", categories=("a", "b"))),
                           eps=1.0, delta=0.1, m=5, theta=2.0, seed=3,
                           coarsening=(ColumnTransform("w", "clip", bounds=(0, 4)),
                                       ColumnTransform("s", "keep", keep=("a",))))
    base = recipe.to_dict()
    for path in list(_paths(base))[1:]:
        for value in MALFORMED:
            body = copy.deepcopy(base)
            where = body
            for key in path[:-1]:
                where = where[key]
            where[path[-1]] = value
            try:
                ReleaseRecipe.from_dict(body)
            except ValueError:
                pass


def test_a_recipe_that_is_not_a_regular_file_or_too_large(tmp_path, capsys):
    err = _error(capsys, ["release", "--recipe", "/dev/null", "--out", str(tmp_path / "s.csv")])
    assert "not a regular file" in err
    big = tmp_path / "big.json"
    with big.open("wb") as handle:
        handle.truncate(2**24 + 10)
    assert "larger than 16 MiB" in _error(capsys, ["release", "--recipe", str(big), "--out", str(tmp_path / "s.csv")])


# --------------------------------------------------------------------------- Parquet column types
@pytest.fixture(scope="module")
def typed_parquet(tmp_path_factory) -> Path:
    table = pa.table({
        "x": [1.0, 2.0, 3.0, 2.0],
        "nested": pa.array([{"a": 1}, {"a": 2}, {"a": 1}, {"a": 3}]),
        "raw": pa.array([b"ab", b"cd", b"ab", b"\xff"], type=pa.binary()),
        "items": pa.array([[1], [2, 3], [1], []]),
        "pairs": pa.array([[("k", 1)], [("k", 2)], [("k", 1)], []], type=pa.map_(pa.string(), pa.int64())),
    })
    path = tmp_path_factory.mktemp("parquet") / "types.parquet"
    pq.write_table(table, path)
    return path


@pytest.mark.parametrize("column, what", [("nested", "nested values"), ("raw", "raw bytes"),
                                          ("items", "nested values"), ("pairs", "nested values")])
@pytest.mark.parametrize("engine", ["duckdb", "pandas"])
def test_unsupported_parquet_columns_give_a_clear_error(typed_parquet, tmp_path, capsys, column, what, engine):
    err = _error(capsys, ["release", str(typed_parquet), "--categorical", column, "--engine", engine, *PARAMS,
                          "--out", str(tmp_path / "s.csv")])
    assert f"column {column!r} of 'types.parquet' holds {what}" in err and "Parquet type" in err


def test_unsupported_parquet_columns_give_a_clear_error_in_the_app(typed_parquet):
    content = typed_parquet.read_bytes()
    for column in ("nested", "raw"):
        at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
        at.session_state["source_kind"] = "upload"
        at.session_state["upload"] = {"name": "types.parquet", "bytes": content, "hash": content_hash(content)}
        at.session_state["columns"] = [column]
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        assert any(f"column {column!r} of 'types.parquet' holds" in e.value.replace("\\", "") for e in at.error)
