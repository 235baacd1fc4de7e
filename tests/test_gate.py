"""The gate before anything public (core.release.gate; docs/verdicts.md §4), in core and on the CLI."""

from __future__ import annotations

import io
import json
import zipfile

import numpy as np
import pandas as pd
import pytest

from core.cli import main
from core.data import ColumnSpec
from core.release import ReleaseRecipe, public_bundle, run_recipe
from core.release.gate import (
    ACKNOWLEDGEMENTS,
    AcknowledgementRequired,
    PublicationRefused,
    check_publication,
    required_acknowledgements,
)


@pytest.fixture(scope="module")
def frame():
    rng = np.random.default_rng(3)
    return pd.DataFrame({"wage": np.round(rng.lognormal(2.5, 0.6, 400), 2),
                         "sex": rng.choice(["female", "male"], 400)})


def _release(frame, **fields):
    base = dict(source="upload", columns=(ColumnSpec("wage", bounds=(0.0, 200.0)),), eps=2.0, delta=0.05, m=10,
                theta=2.0, seed=1)
    return run_recipe(ReleaseRecipe(**{**base, **fields}), frame)


def _release_json(payload: bytes) -> dict:
    with zipfile.ZipFile(io.BytesIO(payload)) as zf:
        return json.loads(zf.read("release.json"))


def test_weak_needs_an_acknowledgement_that_is_recorded(frame):
    result = _release(frame)
    assert result.public_report["strength"] == "weak"
    assert set(required_acknowledgements(result.public_report)) == {"weak"}
    with pytest.raises(AcknowledgementRequired, match="weak") as caught:
        public_bundle(result)
    assert set(caught.value.missing) == {"weak"} and "verbatim" in caught.value.missing["weak"]
    report = _release_json(public_bundle(result, acknowledged=("weak",)))
    assert report["acknowledged"] == ["weak"] and report["strength"] == "weak"
    assert "verbatim" in report["strength_meaning"]


def test_bounds_read_off_the_data_need_an_acknowledgement(frame):
    result = _release(frame, columns=(ColumnSpec("wage"),))
    assert set(required_acknowledgements(result.public_report)) == {"weak", "bounds_from_data"}
    with pytest.raises(AcknowledgementRequired) as caught:
        public_bundle(result, acknowledged=("weak",))
    assert set(caught.value.missing) == {"bounds_from_data"}
    assert _release_json(public_bundle(result, acknowledged=tuple(ACKNOWLEDGEMENTS)))["acknowledged"] == [
        "bounds_from_data", "weak"]


def test_missed_is_refused_with_what_would_meet_the_target(frame):
    result = _release(frame, m=300, delta=0.01)
    assert result.public_report["strength"] == "missed"
    with pytest.raises(PublicationRefused, match=r"at most m = \d+ rows"):
        public_bundle(result, acknowledged=tuple(ACKNOWLEDGEMENTS))
    py = _release(frame, sigma=0.3, n_mc=500)
    with pytest.raises(PublicationRefused, match="No global guarantee is known"):
        check_publication(py.public_report, tuple(ACKNOWLEDGEMENTS))


def test_pure_needs_nothing(frame):
    result = _release(frame, columns=(ColumnSpec("sex", kind="categorical", categories=("female", "male")),),
                      sigma=-2.0, theta=4.0, m=10, eps=2.0)
    assert result.public_report["strength"] == "pure"
    assert required_acknowledgements(result.public_report) == {}
    assert _release_json(public_bundle(result))["acknowledged"] == []


def test_unknown_acknowledgement_names_the_parameter(frame):
    with pytest.raises(ValueError, match="acknowledged"):
        public_bundle(_release(frame), acknowledged=("everything",))


def test_cli_refuses_weak_without_the_flag_and_missed_always(frame, tmp_path, capsys):
    data = tmp_path / "data.csv"
    frame.to_csv(data, index=False)
    common = ["release", str(data), "--column", "wage", "--bounds", "0", "200", "--theta", "2", "--eps", "2",
              "--seed", "1"]
    public = tmp_path / "public.zip"
    with pytest.raises(SystemExit) as code:
        main([*common, "--m", "10", "--delta", "0.05", "--public-bundle", str(public)])
    assert code.value.code == 2 and "--accept-weak" in capsys.readouterr().err and not public.exists()
    assert main([*common, "--m", "10", "--delta", "0.05", "--public-bundle", str(public), "--accept-weak"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("verdict: weak") and "seed" not in out   # a public summary, not the report
    assert _release_json(public.read_bytes())["acknowledged"] == ["weak"]
    public.unlink()
    with pytest.raises(SystemExit) as code:
        main([*common, "--m", "300", "--delta", "0.01", "--public-bundle", str(public), "--accept-weak"])
    assert code.value.code == 2 and "refused" in capsys.readouterr().err and not public.exists()


def test_no_public_file_names_the_input_file(frame, tmp_path, capsys):
    data = tmp_path / "secret_registry_2026.csv"
    frame.to_csv(data, index=False)
    public = tmp_path / "public.zip"
    assert main(["release", str(data), "--column", "wage", "--bounds", "0", "200", "--theta", "2", "--eps", "2",
                 "--delta", "0.05", "--m", "10", "--seed", "1", "--public-bundle", str(public),
                 "--accept-weak"]) == 0
    with zipfile.ZipFile(public) as zf:
        for name in zf.namelist():
            assert b"secret_registry" not in zf.read(name), name
