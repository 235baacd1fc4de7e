"""Secret randomness and no side door (issue 32, items 1 and 6; docs/serving.md §5).

* No release path has a constant seed: ``run_recipe`` and the command line without a seed,
  and two presses of the app's "Generate release" with every default, give different
  releases; a seed typed to replay draws the warning, and the seed is shown on no page.
* Every public output passes the gate: the command line's ``--out`` exactly as
  ``--public-bundle`` (a missed release refused, a weak one only when acknowledged; refused,
  exit status 2 and nothing written); the CONFIDENTIAL outputs are marked so.
* The Inference page analyses the Synthetic data page's release and offers no file of it;
  no table offers Streamlit's own CSV export.

The browser side (every page, a missed and a weak release) is tests/e2e/test_side_doors.py.
"""

from __future__ import annotations

import io
import json
import tomllib
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit import config as st_config
from streamlit.testing.v1 import AppTest

from core.cli import GUESSABLE_SEED, main
from core.data import ColumnSpec
from core.release import ReleaseRecipe, run_recipe, sample_source
from core.release.gate import check_publication
from test_app import _ledger_budget, media_fetcher

REPO = Path(__file__).resolve().parents[1]
APP = str(REPO / "app.py")
N = 400


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    rng = np.random.default_rng(32)
    frame = pd.DataFrame({"wage": np.round(rng.lognormal(2.5, 0.6, N), 2)})
    path = tmp_path_factory.mktemp("side_doors") / "data.csv"
    frame.to_csv(path, index=False)
    return path


def _flags(data: Path, m: int, delta: float) -> list[str]:
    return ["release", str(data), "--column", "wage", "--bounds", "0", "200", "--theta", "2", "--eps", "2",
            "--m", str(m), "--delta", str(delta)]


#: On these data: m = 300 misses δ = 0.01; m = 10 meets δ = 0.05, weakly (n·δ > 0.01).
MISSED, WEAK = (300, 0.01), (10, 0.05)


def _refused(argv: list[str], capsys) -> str:
    """Run the command line, which must refuse (exit status 2); its error line."""
    with pytest.raises(SystemExit) as code:
        main(argv)
    assert code.value.code == 2
    err = capsys.readouterr().err
    return next(line for line in err.splitlines() if "error:" in line)


# --------------------------------------------------------------------------- the gate on every public output
def test_out_passes_the_gate_exactly_as_the_public_bundle(data, tmp_path, capsys):
    """Missed: refused with or without --accept-weak. Weak: refused until acknowledged (by
    --acknowledge weak or --accept-weak). The same message for --out and --public-bundle, and
    nothing written when refused — not even a CONFIDENTIAL output given alongside."""
    errors = {}
    for flag, name in (("--out", "synthetic.csv"), ("--public-bundle", "public_release.zip")):
        target, record = tmp_path / name, tmp_path / "CONFIDENTIAL_curator_record.zip"
        missed = _refused([*_flags(data, *MISSED), flag, str(target), "--accept-weak", "--curator-bundle",
                           str(record)], capsys)
        assert "refused" in missed and not target.exists() and not record.exists()
        weak = _refused([*_flags(data, *WEAK), flag, str(target)], capsys)
        assert "--acknowledge weak" in weak and "Nothing was written" in weak and not target.exists()
        errors[flag] = (missed, weak)
        for accepted in (["--acknowledge", "weak"], ["--accept-weak"]):
            assert main([*_flags(data, *WEAK), flag, str(target), *accepted]) == 0
            assert target.stat().st_size > 0
            target.unlink()
        capsys.readouterr()
    assert errors["--out"] == errors["--public-bundle"]
    # the curator's record alone is not public: written for a missed release too
    assert main([*_flags(data, *MISSED), "--curator-bundle", str(record)]) == 0
    with zipfile.ZipFile(record) as zf:
        assert all(name.startswith("CONFIDENTIAL_") for name in zf.namelist())


def test_out_holds_what_the_public_bundle_holds(data, tmp_path, capsys):
    """The two public outputs of one run are the same release (the CSV is the zip's synthetic.csv),
    and release.json records what was acknowledged."""
    out, bundle = tmp_path / "synthetic.csv", tmp_path / "public_release.zip"
    assert main([*_flags(data, *WEAK), "--out", str(out), "--public-bundle", str(bundle), "--acknowledge",
                 "weak"]) == 0
    with zipfile.ZipFile(bundle) as zf:
        assert zf.read("synthetic.csv") == out.read_bytes()
        assert json.loads(zf.read("release.json"))["acknowledged"] == ["weak"]
    capsys.readouterr()


# --------------------------------------------------------------------------- the seed
def test_a_seed_given_with_a_public_output_draws_the_warning(data, tmp_path, capsys):
    target = tmp_path / "synthetic.csv"
    for public in (["--out", str(target)], ["--public-bundle", str(tmp_path / "p.zip")]):
        assert main([*_flags(data, *WEAK), "--seed", "12345", *public, "--accept-weak"]) == 0
        err = capsys.readouterr().err
        assert f"warning: --seed 12345 with a public output ({public[0]}): {GUESSABLE_SEED}" in err
    # a seed replayed into the curator's record only, or no seed at all: no warning
    assert main([*_flags(data, *MISSED), "--seed", "12345", "--curator-bundle",
                 str(tmp_path / "CONFIDENTIAL_r.zip")]) == 0
    assert GUESSABLE_SEED not in capsys.readouterr().err
    report = tmp_path / "CONFIDENTIAL_report.json"
    assert main([*_flags(data, *WEAK), "--out", str(target), "--accept-weak", "--report", str(report)]) == 0
    captured = capsys.readouterr()
    seed = json.loads(report.read_text())["parameters"]["seed"]
    assert GUESSABLE_SEED not in captured.err
    # the drawn seed is written into the CONFIDENTIAL report only, never printed
    assert str(seed) not in captured.err + captured.out and "seed recorded by --report only" in captured.err


def test_confidential_outputs_are_marked_and_named(data, tmp_path, capsys):
    report, recipe, record = tmp_path / "report.json", tmp_path / "recipe.json", tmp_path / "record.zip"
    assert main([*_flags(data, *WEAK), "--report", str(report), "--save-recipe", str(recipe), "--curator-bundle",
                 str(record)]) == 0
    err = capsys.readouterr().err
    for flag, path in (("--report", report), ("--save-recipe", recipe), ("--curator-bundle", record)):
        assert f"warning: {flag} {path} holds the secret seed" in err   # named without CONFIDENTIAL
    for path in (report, recipe):   # the content is marked, first thing
        assert next(iter(json.loads(path.read_text()))) == "CONFIDENTIAL"
    with zipfile.ZipFile(record) as zf:
        assert all(name.startswith("CONFIDENTIAL_") for name in zf.namelist())
    seed = json.loads(recipe.read_text())["seed"]
    assert ReleaseRecipe.read(recipe).seed == seed == json.loads(report.read_text())["parameters"]["seed"]


def test_no_release_path_has_a_constant_seed(data, tmp_path, capsys):
    """A recipe without a seed draws 128 fresh bits each run (the OS's CSPRNG): two runs, two seeds
    and two releases; the command line without --seed likewise."""
    recipe = ReleaseRecipe(source=sample_source("cps_earnings.csv"), columns=(ColumnSpec("earnings", bounds=(0, 100)),),
                           eps=2.5, delta=0.01, m=50, theta=2.0)
    first, second = run_recipe(recipe), run_recipe(recipe)
    assert first.recipe.seed != second.recipe.seed
    assert min(first.recipe.seed, second.recipe.seed) >= 2**64   # 128 random bits (fails with probability 2^-63)
    assert first.synthetic_csv() != second.synthetic_csv()
    # the published recipe has no seed: with a guessed one it does not recompute the release
    guessed = run_recipe(recipe.public().with_seed(12345))
    assert guessed.synthetic_csv() != first.synthetic_csv()
    outs = [tmp_path / "a.csv", tmp_path / "b.csv"]
    for out in outs:
        assert main([*_flags(data, *WEAK), "--out", str(out), "--accept-weak"]) == 0
    assert outs[0].read_bytes() != outs[1].read_bytes()
    capsys.readouterr()


def test_a_typed_seed_is_read_or_refused_by_name():
    from ui.release import fresh_seed, replay_seed

    assert replay_seed("") is None and replay_seed("   ") is None
    assert replay_seed(" 12_345 ") == replay_seed("12,345") == 12345
    assert replay_seed(str(2**128 - 1)) == 2**128 - 1
    for bad in ("-1", str(2**128), "1.5", "seven"):
        with pytest.raises(ValueError, match="the seed to replay must be an integer"):
            replay_seed(bad)
    assert len({fresh_seed() for _ in range(4)}) == 4


# --------------------------------------------------------------------------- the app
def _texts(at: AppTest) -> str:
    """Every text the page shows (Markdown, captions, alerts, code, metrics, widget labels and help)."""
    parts = []
    for kind in ("markdown", "caption", "info", "warning", "error", "success", "code", "text", "title",
                 "subheader", "header"):
        parts += [str(el.value) for el in at.get(kind)]
    parts += [f"{m.label} {m.value}" for m in at.metric]
    for kind in ("button", "download_button", "text_input", "number_input", "checkbox"):
        parts += [f"{el.proto.label} {getattr(el.proto, 'help', '')}" for el in at.get(kind)]
    return "\n".join(parts)


def _generate(at: AppTest) -> None:
    next(b for b in at.button if b.proto.label == "Generate release").click().run()
    assert not at.exception, [e.value for e in at.exception]


def _public_csv(at: AppTest, fetch) -> bytes:
    """The gated synthetic CSV of the page's release, once its acknowledgements are ticked."""
    for box in at.checkbox:
        if str(box.key or "").startswith("acknowledge_"):
            box.check()
    at.run()
    _ledger_budget(at)
    button = next(b.proto for b in at.get("download_button") if b.proto.label == "Download synthetic CSV")
    assert not button.disabled
    return fetch(button)


def test_two_default_presses_differ_and_a_typed_seed_replays_with_a_warning(monkeypatch):
    fetch = media_fetcher(monkeypatch)
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.session_state["m"] = 20    # weak on the sample: the CSV is offered once acknowledged
    at.switch_page("app_pages/synthetic_data.py").run()
    assert at.text_input(key="_w_release_seed_replay").value == ""     # nothing typed by default
    assert not any(GUESSABLE_SEED in w.value for w in at.warning)
    _generate(at)
    first = at.session_state["release_params"]
    csv_first = _public_csv(at, fetch)
    _generate(at)
    second = at.session_state["release_params"]
    assert first.seed != second.seed and _public_csv(at, fetch) != csv_first
    assert first.replayed is None and second.replayed is None
    # the seed is in the curator record, on no page
    assert str(first.seed) not in repr(first) and str(second.seed) not in _texts(at)
    assert any("recorded only in the CONFIDENTIAL curator record" in c.value for c in at.caption)
    record = fetch(next(b.proto for b in at.get("download_button") if "CONFIDENTIAL curator" in b.proto.label))
    with zipfile.ZipFile(io.BytesIO(record)) as zf:
        assert json.loads(zf.read("CONFIDENTIAL_recipe.json"))["seed"] == second.seed
    # a typed seed replays the first release, with the warning
    at.text_input(key="_w_release_seed_replay").input(str(first.seed)).run()
    assert any(GUESSABLE_SEED in w.value for w in at.warning)
    _generate(at)
    assert at.session_state["release_params"].seed == first.seed
    assert _public_csv(at, fetch) == csv_first
    at.text_input(key="_w_release_seed_replay").input("twelve").run()
    assert any("the seed to replay must be an integer" in e.value for e in at.error)


def test_inference_analyses_the_synthetic_pages_release_and_offers_no_file_of_it():
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page("app_pages/inference.py").run()
    assert not at.exception
    assert any("Generate a release on the **Synthetic data** page first" in i.value for i in at.info)
    assert not at.get("download_button")
    # a missed release (m = 300 of the sample at θ = 1 000; ≈ 19 new values expected); the Inference
    # page's own simulations kept small
    for key, value in {"m": 300, "theta": 1000.0, "post_draws": 100, "rep_replicates": 5, "rep_draws": 100}.items():
        at.session_state[key] = value
    at.switch_page("app_pages/synthetic_data.py").run()
    _generate(at)
    assert any("Verdict: missed" in e.value for e in at.error)
    drawn = at.session_state["release_params"]
    new_values = {m.label: m.value for m in at.metric}["distinct new values K"]
    at.switch_page("app_pages/inference.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["release_params"] == drawn
    assert {m.label: m.value for m in at.metric}["distinct new values K (drawn from H)"] == new_values
    labels = [b.proto.label for b in at.get("download_button")]
    assert labels and not any("release Z" in label or "release" == label for label in labels)
    assert all(b.proto.deferred_file_id for b in at.get("download_button"))   # curator-only tables, built on click
    assert str(drawn.seed) not in _texts(at)
    # new settings on the Privacy page: the page still analyses the release drawn, and says so
    at.session_state["theta"] = 500.0
    at.run()
    assert any("analyses that release" in i.value for i in at.info)
    assert {m.label: m.value for m in at.metric}["distinct new values K (drawn from H)"] == new_values


def test_no_table_offers_streamlits_own_csv_export():
    """``client.disableDataExport`` is on in the project's config, and the app switches it on
    when a server was started without it (before any page shows a table)."""
    assert tomllib.loads((REPO / ".streamlit" / "config.toml").read_text())["client"]["disableDataExport"] is True
    before = st_config.get_option("client.disableDataExport")
    st_config.set_option("client.disableDataExport", False)
    try:
        at = AppTest.from_file(APP, default_timeout=120)
        at.run()
        assert not at.exception
        assert st_config.get_option("client.disableDataExport") is True
        assert at.get("dataframe")    # the Data page shows its tables, in the run after the option was set
    finally:
        st_config.set_option("client.disableDataExport", before)
