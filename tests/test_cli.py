"""Tests of the command line ``python -m core release`` (core.cli)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from core import privacy
from core.cli import main

REPO = Path(__file__).resolve().parents[1]
N = 240
THETA = 2.0


@pytest.fixture(scope="module")
def data_csv(tmp_path_factory) -> Path:
    """Earnings-like data with ties and singletons, a categorical column and an integer column."""
    rng = np.random.default_rng(11)
    frame = pd.DataFrame({
        "wage": np.round(rng.lognormal(2.5, 0.6, N), 1),
        "sex": rng.choice(["female", "male"], N),
        "age": rng.integers(20, 60, N),
    })
    path = tmp_path_factory.mktemp("cli") / "data.csv"
    frame.to_csv(path, index=False)
    return path


def run_cli(*args, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, "-m", "core", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def test_release_with_given_m(data_csv, tmp_path):
    out, report_path = tmp_path / "synth.csv", tmp_path / "report.json"
    flags = ["release", str(data_csv), "--column", "wage", "--column", "age", "--categorical", "sex",
             "--theta", str(THETA), "--eps", "2.0", "--delta", "0.2", "--bounds", "1", "200", "--bounds", "18", "65",
             "--log", "--decimals", "1", "--decimals", "0", "--seed", "5"]
    # m = 150 misses the target: the synthetic CSV (public, gated) is refused; the curator's record is written
    result = run_cli(*flags, "--m", 150, "--curator-bundle", tmp_path / "CONFIDENTIAL_record.zip",
                     "--report", report_path, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr

    # the largest m that meets it (60, said by the refusal) is written, once its weak verdict is accepted
    assert main([*flags, "--m", "60", "--out", str(out), "--accept-weak"]) == 0
    synth = pd.read_csv(out)
    assert list(synth.columns) == ["wage", "age", "sex"]
    assert len(synth) == 60
    assert synth["wage"].between(1, 200).all() and synth["age"].between(18, 65).all()
    np.testing.assert_array_equal(synth["wage"], np.round(synth["wage"], 1))
    assert synth["age"].dtype == np.int64
    assert synth["sex"].isin(["female", "male"]).sum() + synth["sex"].str.startswith("new_category_").sum() == 60

    report = json.loads(report_path.read_text(encoding="utf-8"))
    original = pd.read_csv(data_csv)
    rows = Counter(zip(np.round(original["wage"], 1), original["age"], original["sex"]))
    params = report["parameters"]
    assert params == {"sigma": 0.0, "theta": THETA, "m": 150, "eps": 2.0, "delta_target": 0.2, "seed": 5}
    data = report["data"]
    assert (data["n"], data["k"], data["singletons"]) == (N, len(rows), sum(c == 1 for c in rows.values()))
    assert data["columns"] == ["wage", "age", "sex"] and data["source"] == str(data_csv)
    assert [t["column"] for t in data["transforms"]] == ["wage", "age", "sex"]
    assert data["transforms"][0]["log"] is True and data["transforms"][0]["bounds"] == [1.0, 200.0]
    assert not any(t.get("bounds_from_data") for t in data["transforms"])
    assert report["release"]["m"] == 150 and report["release"]["m_chosen_by"] == "fixed m given in the recipe"
    assert isinstance(report["release"]["new_values"], int)
    assert next(iter(report)) == "CONFIDENTIAL"
    assert report["recipe"]["seed"] == 5 and report["recipe"]["data"]["source"] == str(data_csv)
    # m = 150 of n = 240 with singletons: the target is missed, and the report's warnings say so.
    assert any("global guarantee 'global_delta' misses the target" in w for w in report["warnings"])
    assert "--seed 5" in report["command"]

    counts = np.array(list(rows.values()))
    by_name = {g["name"]: g for g in report["guarantees"]}
    assert set(by_name) == {"instance_delta", "tight_instance_delta", "global_delta"}
    assert by_name["instance_delta"]["delta"] == privacy.instance_delta(counts, 0.0, THETA, 150, 2.0)
    assert by_name["tight_instance_delta"]["delta"] == privacy.tight_instance_delta(counts, THETA, 150, 2.0)
    # the exact global profile of one release, T₁ at every ε (docs/audit.md §1.3)
    assert by_name["global_delta"]["delta"] == pytest.approx(150 / (150 + THETA + N - 1), rel=1e-15)
    for g in by_name.values():
        assert {"scope", "kind", "eps", "delta", "meets_target", "description"} <= set(g)
        assert g["scope"] in ("instance", "global") and g["description"]
    # m = 150 of n = 240 with singletons: the singleton term alone exceeds δ = 0.2.
    assert by_name["global_delta"]["meets_target"] is False
    assert "warning: The global guarantee 'global_delta' misses the target" in result.stderr


def test_release_largest_admissible_m(data_csv, tmp_path):
    """--eps/--delta without --m releases the largest m of the exact global profile, m_sing, and no more."""
    eps, delta = 3.0, 0.05
    out, report_path = tmp_path / "synth.csv", tmp_path / "report.json"
    result = run_cli("release", data_csv, "--column", "wage", "--theta", THETA, "--eps", eps, "--delta", delta,
                     "--bounds", 0, 500, "--seed", 1, "--out", out, "--accept-weak", "--report", report_path,
                     cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    m_star = privacy.singleton_limit(N, THETA, delta)
    assert m_star >= 2
    report = json.loads(report_path.read_text(encoding="utf-8"))
    assert report["parameters"]["m"] == report["release"]["m"] == m_star
    assert "exact global privacy profile" in report["release"]["m_chosen_by"]
    assert len(pd.read_csv(out)) == m_star
    glob = next(g for g in report["guarantees"] if g["name"] == "global_delta")
    assert glob["delta"] <= delta and glob["meets_target"] is True
    assert (m_star + 1) / (m_star + THETA + N) > delta  # m_sing is the largest: T₁(m_sing + 1) > δ


def test_bounds_from_data_are_warned_and_recorded(data_csv, tmp_path, capsys):
    out = tmp_path / "synth.csv"
    assert main(["release", str(data_csv), "--column", "wage", "--theta", str(THETA), "--m", "20", "--eps", "1",
                 "--delta", "0.5", "--seed", "2", "--out", str(out), "--accept-weak", "--acknowledge",
                 "bounds_from_data", "--report", "-"]) == 0
    captured = capsys.readouterr()
    assert "warning: The bounds of column 'wage' were computed from the confidential data" in captured.err
    assert "CONFIDENTIAL" in captured.err   # the report on stdout is flagged
    report = json.loads(captured.out)
    assert report["data"]["transforms"][0]["bounds_from_data"] is True
    assert any("not private" in w for w in report["warnings"])
    wage = pd.read_csv(data_csv)["wage"]
    assert pd.read_csv(out)["wage"].between(wage.min(), wage.max()).all()


def test_same_seed_same_release(data_csv, tmp_path):
    args = ["release", str(data_csv), "--column", "wage", "--theta", "5", "--m", "40", "--eps", "1",
            "--delta", "0.5", "--bounds", "0", "500", "--seed", "9", "--accept-weak"]
    assert main([*args, "--out", str(tmp_path / "a.csv"), "--report", str(tmp_path / "a.json")]) == 0
    assert main([*args, "--out", str(tmp_path / "b.csv"), "--report", str(tmp_path / "b.json")]) == 0
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()


def test_seed_drawn_when_missing_is_recorded(data_csv, tmp_path):
    report_path = tmp_path / "r.json"
    assert main(["release", str(data_csv), "--column", "wage", "--theta", "2", "--m", "10", "--eps", "1",
                 "--delta", "0.5", "--bounds", "0", "500", "--out", str(tmp_path / "s.csv"), "--accept-weak",
                 "--report", str(report_path)]) == 0
    report = json.loads(report_path.read_text(encoding="utf-8"))
    seed = report["parameters"]["seed"]
    assert isinstance(seed, int) and f"--seed {seed}" in report["command"]


def test_bad_arguments_in_a_subprocess_exit_cleanly(data_csv, tmp_path):
    result = run_cli("release", data_csv, "--column", "salary", "--theta", 2, "--m", 10, "--eps", 1,
                     "--delta", 0.1, "--out", tmp_path / "s.csv", cwd=tmp_path)
    assert result.returncode == 2
    assert "error: no column named 'salary'; the columns are 'wage', 'sex', 'age'" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "s.csv").exists()


BAD = [
    (["--column", "wage", "--theta", "2", "--m", "10", "--eps", "1"], "missing --delta"),
    (["--column", "wage", "--theta", "2", "--m", "10"], "missing --eps and --delta"),
    (["--column", "wage", "--theta", "2", "--m", "0", "--eps", "1", "--delta", "0.1"], r"m must be an integer in \[1"),
    (["--column", "wage", "--theta", "2", "--m", "1.5", "--eps", "1", "--delta", "0.1"], "invalid int value: '1.5'"),
    (["--column", "wage", "--theta", "2", "--m", "5", "--eps", "-1", "--delta", "0.1"], r"eps must be a finite real number in \(0, ∞\), got -1\.0"),
    (["--column", "wage", "--theta", "2", "--m", "5", "--eps", "1", "--delta", "1.5"], r"delta must be in \(0, 1\)"),
    (["--column", "wage", "--theta", "-1", "--m", "5", "--eps", "1", "--delta", "0.1"], "theta must be > -sigma"),
    (["--column", "wage", "--sigma", "1.2", "--theta", "2", "--m", "5", "--eps", "1", "--delta", "0.1"],
     "sigma must be < 1"),
    (["--column", "wage", "--sigma", "0.5", "--theta", "2", "--eps", "1", "--delta", "0.1"],
     "without --m needs --sigma 0"),
    (["--column", "wage", "--column", "age", "--bounds", "0", "9", "--theta", "2", "--m", "5", "--eps", "1",
      "--delta", "0.1"], r"--bounds LO HI once per numeric column, in order \(2: wage, age\), got 1"),
    (["--column", "wage", "--bounds", "9", "0", "--theta", "2", "--m", "5", "--eps", "1", "--delta", "0.1"],
     "bounds of column 'wage' must satisfy lo < hi"),
    (["--column", "wage", "--bounds", "0", "100", "--log", "--theta", "2", "--m", "5", "--eps", "1",
      "--delta", "0.1"], "lo > 0 for a log-transformed column"),
    (["--column", "wage", "--column", "age", "--decimals", "1", "--decimals", "0", "--decimals", "2", "--theta",
      "2", "--m", "5", "--eps", "1", "--delta", "0.1"], "--decimals once .* or once per numeric column"),
    (["--column", "sex", "--theta", "2", "--m", "5", "--eps", "1", "--delta", "0.1"],
     r"column 'sex' has 240 non-numeric value\(s\).*categorical"),
    (["--categorical", "sex", "--log", "--theta", "2", "--m", "5", "--eps", "1", "--delta", "0.1"],
     "--log applies to numeric columns"),
    (["--theta", "2", "--m", "5", "--eps", "1", "--delta", "0.1"], "choose at least one column"),
    (["--column", "wage", "--theta", "2", "--eps", "0.5", "--delta", "1e-9", "--bounds", "0", "500"],
     "no synthetic row can be released .* singleton limit"),
    (["--column", "wage", "--theta", "2", "--m", "5", "--eps", "1", "--delta", "0.1", "--seed", "-3"],
     "seed must be an integer >= 0"),
]


@pytest.mark.parametrize("args, message", BAD)
def test_bad_arguments_give_a_clear_error(data_csv, tmp_path, capsys, args, message):
    with pytest.raises(SystemExit) as exit_info:
        main(["release", str(data_csv), *args, "--out", str(tmp_path / "s.csv")])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "usage: python -m core release" in err
    assert re.search(message, err), err
    assert "np.float64" not in err and "Traceback" not in err
    assert not (tmp_path / "s.csv").exists()


@pytest.mark.parametrize("content, message", [
    ("", "is empty"),
    ("wage\n", r"has a header \('wage'\) but no data rows"),
    ("wage\n1.5\n\n2.5\nNaN\n", r"column 'wage' has \d missing value\(s\) \(empty or NaN\) at rows? \d"),
    ("wage\n1.5\n", r"the data have 1 row\(s\); the mechanism needs at least 2 records"),
])
def test_bad_data_give_a_clear_error(tmp_path, capsys, content, message):
    path = tmp_path / "bad.csv"
    path.write_text(content)
    with pytest.raises(SystemExit) as exit_info:
        main(["release", str(path), "--column", "wage", "--theta", "2", "--m", "5", "--eps", "1",
              "--delta", "0.1", "--bounds", "0", "10", "--out", str(tmp_path / "s.csv")])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert re.search(message, err), err


def test_missing_input_and_output_directory(data_csv, tmp_path, capsys):
    common = ["--column", "wage", "--theta", "2", "--m", "5", "--eps", "1", "--delta", "0.1"]
    with pytest.raises(SystemExit):
        main(["release", str(tmp_path / "nope.csv"), *common, "--out", str(tmp_path / "s.csv")])
    assert "no such file" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["release", str(data_csv), *common, "--out", str(tmp_path / "no_dir" / "s.csv")])
    assert "does not exist" in capsys.readouterr().err


# ----------------------------------------------------------------------------- recipes and bundles
import io  # noqa: E402
import itertools  # noqa: E402
import shutil  # noqa: E402
import time  # noqa: E402
import zipfile  # noqa: E402

from core.release import build_bundles  # noqa: E402
from core.release.gate import ACKNOWLEDGEMENTS, required_acknowledgements  # noqa: E402
from core.data import ColumnSpec  # noqa: E402
from core.release import MAX_RECIPE_SIZE, ReleaseRecipe, run_recipe, sample_source, upload_source  # noqa: E402

SAMPLES = REPO / "sample_data"


def numeric_transforms(name: str, public_bounds: tuple[float, float], decimals: int):
    """Every combination of the per-column transforms of one numeric column (log, public bounds
    or bounds from the data, rounding), as the dashboard can set them."""
    return [ColumnSpec(name, log=log, bounds=public_bounds if public else None, decimals=d)
            for log, public, d in itertools.product((False, True), (True, False), (None, decimals))]


def replay(recipe: ReleaseRecipe, data_path: Path, tmp_path: Path, *, pass_data: bool = True) -> None:
    """The app's release (run_recipe on the data), its bundle, then the command line on the
    bundle's recipe: the synthetic CSV must come back byte for byte."""
    result = run_recipe(recipe, data_path.read_bytes() if recipe.source_kind == "upload" else None)
    bundles = build_bundles(result, acknowledged=tuple(ACKNOWLEDGEMENTS))
    with zipfile.ZipFile(io.BytesIO(bundles.curator)) as zf:
        recipe_path = tmp_path / "CONFIDENTIAL_recipe.json"
        recipe_path.write_bytes(zf.read("CONFIDENTIAL_recipe.json"))
    published = result.synthetic_csv()
    if bundles.public is not None:   # None: the gate refuses a missed release (σ in (0, 1) has no global guarantee)
        with zipfile.ZipFile(io.BytesIO(bundles.public)) as zf:
            published = zf.read("synthetic.csv")
    out = tmp_path / "replayed.csv"
    out.unlink(missing_ok=True)
    # each acknowledgement the gate asks, by its own flag (docs/verdicts.md §4)
    acknowledgements = [flag for key in required_acknowledgements(result.public_report)
                        for flag in ("--acknowledge", key)]
    args = ["release", "--recipe", str(recipe_path), *([str(data_path)] if pass_data else []), "--out", str(out),
            *acknowledgements, "--report", str(tmp_path / "report.json")]
    if bundles.public is None:   # missed: --out passes the same gate and writes nothing; core replays the bytes
        with pytest.raises(SystemExit) as refused:
            main(args)
        assert refused.value.code == 2 and not out.exists()
        curator = tmp_path / "CONFIDENTIAL_replayed.zip"   # the curator's record is still written
        assert main([arg for arg in args if arg not in (str(out), "--out", *acknowledgements)]
                    + ["--curator-bundle", str(curator)]) == 0
        again = run_recipe(ReleaseRecipe.read(recipe_path), data_path.read_bytes() if recipe.source_kind == "upload"
                           else None)
        assert again.synthetic_csv() == result.synthetic_csv(), recipe
        return
    assert main(args) == 0
    assert out.read_bytes() == published == result.synthetic_csv(), recipe


@pytest.fixture(scope="module")
def multi_csv(tmp_path_factory) -> Path:
    rng = np.random.default_rng(99)
    n = 400
    frame = pd.DataFrame({"wage": np.round(rng.lognormal(2.6, 0.5, n), 2), "hours": rng.integers(10, 70, n),
                          "sex": rng.choice(["female", "male", "other"], n)})
    path = tmp_path_factory.mktemp("multi") / "upload.csv"
    frame.to_csv(path, index=False)
    return path


@pytest.mark.slow
def test_replay_every_transform_of_each_column_multi_column(multi_csv, tmp_path, capsys):
    """Every transform of each numeric column, each with σ = 0 and σ = 0.4 (and a public category
    list or none), paired with a different transform of the other column each time: the
    columns' transforms are applied independently, so pairs cover what the full product would."""
    source = upload_source(multi_csv.read_bytes())
    wages, hours_specs = numeric_transforms("wage", (1.0, 300.0), 1), numeric_transforms("hours", (1.0, 80.0), -1)
    combos = [(wage, hours_specs[(3 * i + 1) % len(hours_specs)], odd)
              for i, wage in enumerate(wages) for odd in (0, 1)]
    assert {id(h) for _, h, _ in combos} == {id(h) for h in hours_specs}
    for j, (wage, hours, odd) in enumerate(combos):
        sex = ColumnSpec("sex", kind="categorical", categories=("female", "male", "other", "unknown") if odd else None)
        recipe = ReleaseRecipe(source=source, columns=(wage, hours, sex), eps=2.0, delta=0.1, m=120,
                               sigma=(0.0, 0.4)[odd], theta=2.0, seed=j, n_mc=1000)
        replay(recipe, multi_csv, tmp_path)
    capsys.readouterr()


@pytest.mark.parametrize("sample, column, bounds, decimals, extra", [
    ("cps_earnings.csv", "earnings", (1.0, 100.0), 1, (ColumnSpec("gender", kind="categorical"),)),
    ("cps_earnings.csv", "age", (25.0, 34.0), -1, ()),
    ("dyadic_geometric.csv", "x", (2.0**-30, 1.0), 3, ()),
])
def test_replay_every_transform_combination_samples(sample, column, bounds, decimals, extra, tmp_path, capsys):
    for j, spec in enumerate(numeric_transforms(column, bounds, decimals)):
        recipe = ReleaseRecipe(source=sample_source(sample), columns=(spec, *extra), eps=2.0, delta=0.05,
                               m=None if j % 2 else 90, size_rule="global" if j % 2 else "fixed", theta=2.0,
                               seed=100 + j)
        # A sample needs no data argument; the recipe names it.
        replay(recipe, SAMPLES / sample, tmp_path, pass_data=bool(j % 3 == 0))
    capsys.readouterr()


def test_cli_bundles_replay_in_a_subprocess(data_csv, tmp_path):
    public, curator = tmp_path / "public_release.zip", tmp_path / "CONFIDENTIAL_curator_record.zip"
    result = run_cli("release", data_csv, "--column", "wage", "--categorical", "sex", "--theta", 2, "--eps", 3,
                     "--delta", 0.1, "--bounds", 1, 200, "--seed", 4, "--public-bundle", public, "--accept-weak",
                     "--curator-bundle", curator, "--report", tmp_path / "r.json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    with zipfile.ZipFile(public) as zf:
        published = zf.read("synthetic.csv")
        assert json.loads(zf.read("recipe.json"))["seed"] is None
    with zipfile.ZipFile(curator) as zf:
        names = zf.namelist()
        (tmp_path / "recipe.json").write_bytes(zf.read("CONFIDENTIAL_recipe.json"))
    assert all(n.startswith("CONFIDENTIAL_") for n in names) and "CONFIDENTIAL_figure_overlay_wage.svg" in names
    again = run_cli("release", "--recipe", tmp_path / "recipe.json", data_csv, "--out", tmp_path / "again.csv",
                    "--accept-weak", "--report", tmp_path / "r2.json", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "again.csv").read_bytes() == published
    # The public recipe has no seed: it describes the release but cannot recompute it.
    with zipfile.ZipFile(public) as zf:
        (tmp_path / "public.json").write_bytes(zf.read("recipe.json"))
    fresh = run_cli("release", "--recipe", tmp_path / "public.json", data_csv, "--out", tmp_path / "fresh.csv",
                    "--accept-weak", "--report", tmp_path / "r3.json", cwd=tmp_path)
    assert fresh.returncode == 0, fresh.stderr
    assert len(pd.read_csv(tmp_path / "fresh.csv")) == len(pd.read_csv(io.BytesIO(published)))
    assert (tmp_path / "fresh.csv").read_bytes() != published


def test_save_recipe_round_trip(data_csv, tmp_path):
    common = ["--out", str(tmp_path / "a.csv"), "--accept-weak", "--report", str(tmp_path / "a.json")]
    assert main(["release", str(data_csv), "--column", "wage", "--theta", "2", "--m", "30", "--eps", "1",
                 "--delta", "0.5", "--bounds", "0", "500", "--save-recipe", str(tmp_path / "r.json"), *common]) == 0
    recipe = ReleaseRecipe.read(tmp_path / "r.json")
    assert isinstance(recipe.seed, int) and recipe.m == 30
    # the recipe names the data file by its path: read only when the user confirms it
    assert main(["release", "--recipe", str(tmp_path / "r.json"), "--use-recipe-source", "--out",
                 str(tmp_path / "b.csv"), "--accept-weak", "--report", str(tmp_path / "b.json")]) == 0
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()


# ----------------------------------------------------------------------------- polish (issue 10 §B)
def test_help_names_the_program_and_points_to_docs(monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["/usr/local/bin/bnp-synth", "--help"])
    with pytest.raises(SystemExit) as info:
        main()
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: bnp-synth") and "docs/mathematics.md" in out
    monkeypatch.setattr(sys, "argv", ["/usr/local/bin/bnp-synth", "release", "--help"])
    with pytest.raises(SystemExit):
        main()
    out = capsys.readouterr().out
    assert out.startswith("usage: bnp-synth release") and "docs/mathematics.md" in out
    assert "SPEC" not in out and "shared" not in out
    script = shutil.which("bnp-synth")
    if script:  # the installed console script
        result = subprocess.run([script, "--help"], capture_output=True, text=True, timeout=60)
        assert result.returncode == 0 and result.stdout.startswith("usage: bnp-synth")


COMMON = ["--theta", "2", "--eps", "1", "--delta", "0.1"]


@pytest.mark.parametrize("args, message", [
    (["--column", "wage", "--sigma", "-1e-300", "--m", "5", *COMMON], r"public categories.*at most 2\*\*53"),
    (["--column", "wage", "--m", str(10**7), *COMMON], rf"m must be an integer in \[1, {MAX_RECIPE_SIZE}\]"),
    (["--column", "wage", "--m", "10^7", *COMMON], r"invalid int value: '10\^7'"),
    (["--column", "wage", "--m", "5", "--theta", "2", "--eps", "0", "--delta", "0.1"], r"got 0\.0$"),
    (["--column", "wage", "--m", "5", "--m-rule", "global", *COMMON], "either --m .* or --m-rule"),
    (["--column", "wage", "--m", "5", "--recipe", "r.json", *COMMON], "--recipe fixes .* drop --column"),
])
def test_cli_polish_errors(data_csv, tmp_path, capsys, args, message):
    start = time.perf_counter()
    with pytest.raises(SystemExit) as info:
        main(["release", str(data_csv), *args, "--out", str(tmp_path / "s.csv")])
    assert info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert re.search(message, err, re.MULTILINE), err
    assert "np.float64" not in err and "Traceback" not in err
    assert time.perf_counter() - start < 10  # refused, not allocated
    assert not (tmp_path / "s.csv").exists()


def test_negative_numbers_in_scientific_notation_parse(data_csv, tmp_path):
    out = tmp_path / "s.csv"
    assert main(["release", str(data_csv), "--column", "wage", "--bounds", "-1e3", "1e3", "--sigma", "-0e-3",
                 "--theta", "2", "--m", "5", "--eps", "1", "--delta", "0.5", "--seed", "1", "--out", str(out),
                 "--accept-weak", "--report", str(tmp_path / "r.json")]) == 0
    assert len(pd.read_csv(out)) == 5


def test_directory_as_data_and_outputs(data_csv, tmp_path, capsys):
    common = ["--column", "wage", "--m", "5", *COMMON]
    with pytest.raises(SystemExit):
        main(["release", str(tmp_path), *common, "--out", str(tmp_path / "s.csv")])
    assert "is a directory, not a CSV file" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["release", str(data_csv), *common])
    assert "nothing to write" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["release", str(data_csv), *common, "--out", str(tmp_path / "x.zip"), "--public-bundle",
              str(tmp_path / "x.zip")])
    assert "name the same file" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["release", str(data_csv), *common, "--out", str(data_csv)])
    assert "would overwrite the input" in capsys.readouterr().err


def test_upload_recipe_needs_its_data(data_csv, tmp_path, capsys):
    recipe = ReleaseRecipe(source=upload_source(data_csv.read_bytes()), columns=(ColumnSpec("wage", bounds=(0, 500)),),
                           eps=1.0, delta=0.5, m=5, theta=2.0, seed=1)
    path = tmp_path / "r.json"
    path.write_text(recipe.to_json(), encoding="utf-8")
    with pytest.raises(SystemExit):
        main(["release", "--recipe", str(path), "--out", str(tmp_path / "s.csv")])
    assert "is an upload: pass the data file" in capsys.readouterr().err
    other = tmp_path / "other.csv"
    other.write_text("wage\n1\n2\n3\n")
    # (m = 5 of these 3 records misses the target: the curator's record only, --out would be refused)
    assert main(["release", "--recipe", str(path), str(other), "--curator-bundle",
                 str(tmp_path / "CONFIDENTIAL_record.zip"), "--report", str(tmp_path / "rep.json")]) == 0
    assert "differs from the one the recipe was made from" in capsys.readouterr().err


def test_planned_repeated_releases_are_recorded_with_their_composition(data_csv, tmp_path):
    report_path = tmp_path / "report.json"
    assert main(["release", str(data_csv), "--column", "wage", "--bounds", "1", "200", "--theta", "2",
                 "--m", "15", "--eps", "2", "--delta", "0.2", "--seed", "1", "--releases", "3",
                 "--out", str(tmp_path / "s.csv"), "--accept-weak", "--report", str(report_path)]) == 0
    report = json.loads(report_path.read_text())
    assert report["release"]["releases"] == 3 and report["recipe"]["accounting"]["releases"] == 3
    assert report["composition"]["releases"] == 3 and report["composition"]["global_delta"] > 0


def test_replay_with_a_coarsening(multi_csv, tmp_path, capsys):
    """A recipe with a coarsening (issue 14) replays byte for byte on the command line."""
    from core.data import ColumnTransform

    coarsening = (ColumnTransform("wage", "log_round", step=0.1), ColumnTransform("hours", "round", step=5),
                  ColumnTransform("sex", "min_count", min_count=150))
    recipe = ReleaseRecipe(source=upload_source(multi_csv.read_bytes()),
                           columns=(ColumnSpec("wage", bounds=(1.0, 300.0), log=True), ColumnSpec("hours"),
                                    ColumnSpec("sex", kind="categorical")),
                           eps=2.0, delta=0.1, m=120, theta=2.0, seed=3, coarsening=coarsening,
                           coarsening_chosen_from_data=True)
    replay(recipe, multi_csv, tmp_path)
    report = json.loads((tmp_path / "report.json").read_text())
    assert [t["kind"] for t in report["recipe"]["data"]["coarsening"]] == ["log_round", "round", "min_count"]
    capsys.readouterr()


def test_coarsening_option_is_the_recipes(data_csv, tmp_path, capsys):
    """--coarsening JSON is recorded in the saved recipe, which replays the same bytes."""
    coarse = '[{"column": "wage", "kind": "signif", "digits": 1}, {"column": "sex", "kind": "keep", "keep": ["male"]}]'
    common = ["--column", "wage", "--categorical", "sex", "--bounds", "0", "500", "--m", "20", "--seed", "2", *COMMON]
    assert main(["release", str(data_csv), *common, "--coarsening", coarse, "--out", str(tmp_path / "a.csv"),
                 "--accept-weak", "--save-recipe", str(tmp_path / "r.json")]) == 0
    recipe = ReleaseRecipe.read(tmp_path / "r.json")
    assert [t.to_dict() for t in recipe.coarsening] == json.loads(coarse.replace('"male"]}', '"male"], '
                                                                                 '"other_label": "other"}'))
    released = pd.read_csv(tmp_path / "a.csv")
    assert set(released["sex"]) <= {"male", "other"}
    assert main(["release", "--recipe", str(tmp_path / "r.json"), str(data_csv), "--out", str(tmp_path / "b.csv"),
                 "--accept-weak"]) == 0
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()
    for bad, message in (("{", "--coarsening must be a JSON list"), ('{"column": "wage"}', "must be a JSON list"),
                         ('[{"column": "wage", "kind": "signif"}]', "needs digits"),
                         ('[{"column": "age", "kind": "round", "step": 5}]', "not a released column")):
        with pytest.raises(SystemExit) as info:
            main(["release", str(data_csv), *common, "--coarsening", bad, "--out", str(tmp_path / "c.csv")])
        assert info.value.code == 2
        assert message in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["release", str(data_csv), "--recipe", str(tmp_path / "r.json"), "--coarsening", coarse,
              "--out", str(tmp_path / "d.csv")])
    assert "--recipe fixes" in capsys.readouterr().err


# --------------------------------------------------------------------------- compare (issue 35 item 5)
COMPARE = ["compare", "--column", "wage", "--bounds", "0", "100", "--theta", "2", "--eps", "4", "--runs", "2",
           "--bins", "5"]


def _compare(data_csv, *extra) -> list[str]:
    return [COMPARE[0], str(data_csv), *COMPARE[1:], *extra]


def test_compare_runs_the_others_when_pypp_has_no_admissible_m(data_csv, capsys):
    """δ = 10⁻⁹: of the default list PYPP is skipped with its reason and the rest run at m = n;
    named with --mechanism it is an error (exit 2) naming the missing m."""
    assert main(_compare(data_csv, "--delta", "1e-9")) == 0
    out = capsys.readouterr()
    summary = pd.read_csv(io.StringIO(out.out))
    assert "pypp" not in set(summary.mechanism) and "laplace_histogram" in set(summary.mechanism)
    assert (summary.loc[summary.mechanism != "confidential", "m"] == N).all()
    assert "note: skipped pypp: no admissible m for PYPP" in out.err and "PYPP cannot release anything" in out.err
    assert f"m = {N} (m = n: PYPP has no admissible m)" in out.err
    with pytest.raises(SystemExit) as stop:
        main(_compare(data_csv, "--delta", "1e-9", "--mechanism", "pypp", "--mechanism", "bootstrap"))
    err = capsys.readouterr().err
    assert stop.value.code == 2 and "pypp cannot run" in err and "singleton limit" in err


def test_compare_named_histogram_without_public_categories_is_an_error(data_csv, capsys):
    with pytest.raises(SystemExit) as stop:
        main(_compare(data_csv, "--delta", "0.05", "--categorical", "sex", "--mechanism", "laplace_histogram",
                      "--mechanism", "pypp"))
    err = capsys.readouterr().err
    assert stop.value.code == 2 and "laplace_histogram cannot run" in err and "'sex'" in err
    assert "--public-categories sex" in err


def test_compare_says_the_singleton_cap_and_prints_seconds_and_the_pmse_ratio(data_csv, capsys):
    m_star = privacy.singleton_limit(N, 2.0, 0.05)
    assert main(_compare(data_csv, "--delta", "0.05", "--mechanism", "pypp", "--mechanism", "bootstrap")) == 0
    out = capsys.readouterr()
    assert f"note: The singleton cap binds: PYPP's m = {m_star}" in out.err and "ε = 4" in out.err
    lines = [line for line in out.err.splitlines() if line.startswith("  pypp:") and "; m = " in line]
    assert lines and "s/release" in lines[0] and "pMSE ratio" in lines[0] and "SDNist k-marginal" in lines[0]
    summary = pd.read_csv(io.StringIO(out.out))
    rows = summary[summary.mechanism != "confidential"]
    assert (rows.seconds > 0).all() and rows.pMSE_ratio.notna().all()
    assert {"marginal3", "row_match", "pMSE_logistic", "pMSE_null", "SDNist_k_marginal"} <= set(summary.columns)
