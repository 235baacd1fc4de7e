"""Public grids for numeric columns and the pure ε-DP release over a public domain
(core.data.PublicGrid, ColumnSpec.grid; docs/mathematics.md §3.3.1)."""

from __future__ import annotations

import io
import json
import math
import subprocess
import sys
import zipfile
from pathlib import Path

import mpmath
import numpy as np
import pandas as pd
import pytest

from core import cli
from core.data import ColumnSpec, PublicGrid, prepare
from core.mechanisms import pypp_release
from core.release import ReleaseRecipe, build_bundles, run_recipe
from core.validation import MAX_GRID_POINTS

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("lo, hi, step, z, first", [
    (0.0, 1.0, 0.1, 11, [0.0, 0.1, 0.2, 0.3]),      # decimal step: 11 points, 0.3 not 0.30000000000000004
    (0.0, 120.0, 5.0, 25, [0, 5, 10, 15]),          # whole numbers come back as int64
    (0.25, 10.0, 2.5, 4, [0.25, 2.75, 5.25, 7.75]),  # hi not on the grid: the last point is below it
    (-3.0, 3.0, 1.5, 5, [-3.0, -1.5, 0.0, 1.5]),
])
def test_linear_grid_points(lo, hi, step, z, first):
    grid = PublicGrid(lo, hi, step)
    points = grid.points()
    assert grid.size == z == points.size
    assert points[: len(first)].tolist() == first
    assert points.min() >= lo and points.max() <= hi and np.all(np.diff(points) > 0)
    if all(float(v).is_integer() for v in (lo, step)):
        assert points.dtype == np.int64


def test_log_grid_and_nearest_point():
    grid = PublicGrid(1.0, 1e6, 0.5, log=True)
    assert grid.size == math.floor(math.log(1e6) / 0.5) + 1
    np.testing.assert_allclose(grid.points()[:3], np.exp([0.0, 0.5, 1.0]))
    linear = PublicGrid(0.0, 100.0, 10.0)
    # nearest point, values outside clipped to the bounds first
    assert linear.index_of([-5.0, 4.9, 5.1, 96.0, 1e9]).tolist() == [0, 0, 1, 10, 10]


def test_grid_needs_public_bounds_and_a_bounded_size():
    with pytest.raises(ValueError, match="grid of column 'x' needs public bounds"):
        ColumnSpec("x", grid=1.0)
    with pytest.raises(ValueError, match="grid of column 'x' step"):
        ColumnSpec("x", bounds=(0, 1), grid=0.0)
    with pytest.raises(ValueError, match=f"more than {MAX_GRID_POINTS:,} grid points"):
        ColumnSpec("x", bounds=(0, 1e9), grid=1e-3)
    with pytest.raises(ValueError, match="categorical: grid apply"):
        ColumnSpec("x", kind="categorical", grid=1.0)


@pytest.fixture(scope="module")
def survey():
    rng = np.random.default_rng(24)
    n = 4000
    return pd.DataFrame({"age": rng.integers(16, 95, n), "wage": np.round(rng.lognormal(9.5, 0.9, n), 2),
                         "sex": rng.choice(["F", "M"], n), "region": rng.choice(["north", "south", "east"], n)})


COLUMNS = (ColumnSpec("age", bounds=(0, 120), grid=10), ColumnSpec("wage", bounds=(0.0, 500000.0), grid=25000.0),
           ColumnSpec("sex", kind="categorical", categories=("F", "M", "X")),
           ColumnSpec("region", kind="categorical", categories=("north", "south", "east", "west")))


def test_prepared_grid_column_holds_grid_points_only(survey):
    prepared = prepare(survey, list(COLUMNS[:2]))
    back = prepared.to_original(prepared.values)
    ages, wages = PublicGrid(0, 120, 10).points(), PublicGrid(0.0, 500000.0, 25000.0).points()
    assert set(back["age"]) <= set(ages.tolist()) and set(back["wage"]) <= set(wages.tolist())
    # each value went to its nearest grid point
    expected = ages[PublicGrid(0, 120, 10).index_of(survey["age"])]
    assert np.array_equal(back["age"].to_numpy(), expected)
    # σ = 0: new values are drawn uniformly over the grid, so every released value is a grid point
    release = pypp_release(prepared.table.atoms, prepared.table.counts, 0.0, 500.0, 3000,
                           np.random.default_rng(1), base=prepared.bases)
    out = prepared.to_original(release.values)
    assert release.is_new.sum() > 100
    assert set(out["age"]) <= set(ages.tolist()) and set(out["wage"]) <= set(wages.tolist())
    assert out["age"].dtype == np.int64


def test_pure_release_over_the_public_domain(survey):
    """σ = −α with every column on a public domain: θ = z·α, m = ⌊(e^ε − 1)·α⌋ decided exactly,
    verdict pure with δ = 0, values on the grid and in the public lists."""
    alpha, eps = 4.0, 2.0
    recipe = ReleaseRecipe(source="upload", columns=COLUMNS, eps=eps, delta=None, m=None, sigma=-alpha,
                           theta=None, seed=3)
    z = 13 * 21 * 3 * 4
    assert recipe.theta == z * alpha
    result = run_recipe(recipe, survey)
    with mpmath.workdps(50):
        assert result.m == int(mpmath.floor(mpmath.expm1(mpmath.mpf(eps)) * alpha)) == 25
    report = result.public_report
    assert report["strength"] == "pure" and report["guarantee"]["delta"] == 0.0
    assert report["guarantee"]["meets_target"] and report["privacy_target"]["delta"] is None
    assert report["acknowledged"] if "acknowledged" in report else True
    out = result.synthetic
    assert set(out["age"]) <= set(range(0, 121, 10)) and set(out["wage"]) <= set(range(0, 500001, 25000))
    assert set(out["sex"]) <= {"F", "M", "X"} and set(out["region"]) <= {"north", "south", "east", "west"}
    assert out["age"].dtype == np.int64
    # the recipe round-trips through JSON with its grid
    again = ReleaseRecipe.from_dict(json.loads(recipe.to_json()))
    assert again.columns == recipe.columns and again.theta == recipe.theta and again.delta is None
    # published without an acknowledgement: pure, every bound public
    bundles = build_bundles(result)
    release = json.loads(zipfile.ZipFile(io.BytesIO(bundles.public)).read("release.json"))
    assert release["strength"] == "pure" and release["acknowledged"] == []


def test_a_column_without_a_public_domain_is_named(survey):
    with pytest.raises(ValueError, match="'wage' has none"):
        ReleaseRecipe(source="upload", columns=(COLUMNS[0], ColumnSpec("wage", bounds=(0.0, 5e5))), eps=2.0,
                      delta=None, sigma=-1.0, theta=None)


def test_command_line_pure_release(tmp_path, survey):
    data = tmp_path / "survey.csv"
    survey.to_csv(data, index=False)
    bundle = tmp_path / "public.zip"
    out = subprocess.run(
        [sys.executable, "-m", "core", "release", str(data), "--column", "age", "--column", "wage",
         "--categorical", "sex", "--categorical", "region", "--bounds", "0", "120", "--bounds", "0", "500000",
         "--grid", "10", "--grid", "25000", "--public-categories", "sex", "F,M,X",
         "--public-categories", "region", "north,south,east,west", "--sigma", "-4", "--eps", "2", "--seed", "5",
         "--public-bundle", str(bundle)], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "verdict: pure" in out.stdout
    archive = zipfile.ZipFile(bundle)
    release = json.loads(archive.read("release.json"))
    assert release["strength"] == "pure" and release["release"]["m"] == 25
    assert release["mechanism"]["theta"] == 13 * 21 * 3 * 4 * 4.0
    synthetic = pd.read_csv(archive.open("synthetic.csv"))
    assert set(synthetic["age"]) <= set(range(0, 121, 10)) and set(synthetic["wage"]) <= set(range(0, 500001, 25000))
    card = archive.read("release_card.html").decode()
    assert "grid" in card


@pytest.mark.parametrize("extra, message", [
    (["--column", "age", "--grid", "10", "--sigma", "-1", "--eps", "2"], "--grid needs --bounds"),
    (["--column", "age", "--bounds", "0", "120", "--grid", "10", "--grid", "5", "--sigma", "-1", "--eps", "2"],
     "give --grid STEP once per numeric column"),
    (["--column", "age", "--bounds", "0", "120", "--public-categories", "age", "1,2", "--sigma", "-1", "--eps", "2"],
     "'age' is not a --categorical column"),
    (["--categorical", "sex", "--public-categories", "sex", "F", "--sigma", "-1", "--eps", "2"],
     "outside its public category list"),
    (["--column", "age", "--bounds", "0", "120", "--sigma", "-1", "--eps", "2"], "'age' has none"),
])
def test_command_line_grid_errors(tmp_path, survey, extra, message, capsys):
    # In process (the subprocess path of the command line is tested above): a refusal is a
    # usage error with exit status 2 and the message, never an exception escaping ``main``.
    data = tmp_path / "survey.csv"
    survey.to_csv(data, index=False)
    with pytest.raises(SystemExit) as exited:
        cli.main(["release", str(data), *extra, "--out", str(tmp_path / "x.csv")])
    stderr = capsys.readouterr().err
    assert exited.value.code == 2 and message in stderr, stderr[-800:]
