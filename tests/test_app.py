"""AppTest (streamlit.testing.v1) of every page on the bundled sample data.

The checks compare what the pages *show* with independent computations: counts straight
from pandas, closed forms of SPEC §3.1 that are one line of arithmetic (the singleton
term, m_sing), and the ``core`` functions the page is supposed to display.

The bundled samples ship public bounds (``sample_data/public_bounds.json``), which the app
uses by default; bounds read off the data (and the leak warning) appear only when the user
unticks them or uploads a file.
"""

from __future__ import annotations

import base64
import io
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest
from test_downloads_media import deferred_click

from core import plots, privacy
from core.ledger import open_ledger
from core.evaluation.compare import DEFAULT_MECHANISMS
from core.release import ReleaseRecipe, run_recipe

N_COMPARED = len(DEFAULT_MECHANISMS)   # every private mechanism and the bootstrap (last)
from ui import selection as ui_selection
from ui.selection import content_hash
from ui.text import shown as shown_text

REPO = Path(__file__).resolve().parents[1]
APP = str(REPO / "app.py")
SAMPLE = REPO / "sample_data" / "cps_earnings.csv"
PUBLIC_BOUNDS_FILE = REPO / "sample_data" / "public_bounds.json"
TIMEOUT = 120
LEAK = "read off the"


def _public_bounds(sample_name: str = "cps_earnings.csv", column: str = "earnings") -> tuple[float, float]:
    """The shipped public bounds of a sample column, read from the file itself (not from the app)."""
    lo, hi = json.loads(PUBLIC_BOUNDS_FILE.read_text())[sample_name][column]
    return float(lo), float(hi)


@pytest.fixture(scope="module")
def sample() -> pd.DataFrame:
    return pd.read_csv(SAMPLE)


def _app() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _page(at: AppTest, page: str) -> AppTest:
    at.switch_page(f"app_pages/{page}").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _figures(at: AppTest) -> list[dict]:
    """Plotly specs on the page, in order (trace arrays decoded from plotly's base64)."""
    out = []
    for el in at.get("plotly_chart"):
        spec = json.loads(el.proto.spec)
        for trace in spec["data"]:
            for axis in ("x", "y", "z"):
                v = trace.get(axis)
                if isinstance(v, dict) and "bdata" in v:
                    arr = np.frombuffer(base64.b64decode(v["bdata"]), dtype=np.dtype(v["dtype"]))
                    if "shape" in v:
                        arr = arr.reshape(tuple(int(d) for d in str(v["shape"]).split(",")))
                    trace[axis] = arr
        out.append(spec)
    return out


def _figure_with_trace(at: AppTest, name: str) -> dict:
    for spec in _figures(at):
        if any(t.get("name") == name for t in spec["data"]):
            return spec
    raise AssertionError(f"no chart with a trace named {name!r}")


def _trace(spec: dict, name: str) -> dict:
    return next(t for t in spec["data"] if t.get("name") == name)


def media_fetcher(monkeypatch):
    """A function that fetches the bytes behind an ``st.download_button`` of an AppTest run.

    It takes the button's proto or a media URL. A confidential file is built on the click
    (``ui.downloads``: the button has no URL, only a deferred id): its function is run as
    Streamlit runs it on a click of the AppTest session (``DeferredFileHandler``), and the file read
    from the media store. AppTest keeps media in a ``MediaFileManager`` of a mock runtime
    that it drops after each run; this keeps a reference to every one it creates
    (``fetch.managers``).
    """
    import streamlit.testing.v1.app_test as app_test_module
    from streamlit.runtime.media_file_manager import MediaFileManager
    from streamlit.runtime.media_file_storage import MediaFileStorageError

    managers = []

    class Recording(MediaFileManager):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            managers.append(self)

    monkeypatch.setattr(app_test_module, "MediaFileManager", Recording)

    def clicked(file_id: str) -> str:
        for manager in reversed(managers):
            try:
                return deferred_click(manager, file_id)   # as Streamlit answers the session's click
            except MediaFileStorageError:
                continue
        raise AssertionError(f"no deferred download {file_id!r}")

    def fetch(button) -> bytes:
        if isinstance(button, str):
            url = button
        else:
            url = clicked(button.deferred_file_id) if button.deferred_file_id else button.url
        name = url.rsplit("/", 1)[-1]
        for manager in reversed(managers):
            stored = manager.read_file(name)
            if stored is not None:
                return bytes(stored.content)
        raise AssertionError(f"no media file {url!r}")

    fetch.managers = managers
    return fetch


@pytest.fixture
def downloads(monkeypatch):
    """:func:`media_fetcher`: the bytes behind a download button (its proto) or a media URL."""
    return media_fetcher(monkeypatch)


def _metrics(at: AppTest) -> dict:
    return {m.label: m.value for m in at.metric}


def _markdown(at: AppTest) -> str:
    return "\n".join(md.value for md in at.markdown)


# --------------------------------------------------------------------------- data page

def test_data_page_profile_matches_the_csv(sample):
    at = _app()
    counts = sample["earnings"].value_counts()
    shown = _metrics(at)
    assert shown["records n"] == f"{len(sample):,}"
    assert shown["distinct values k"] == f"{counts.size:,}"
    assert shown["singletons k₁"] == f"{int((counts == 1).sum()):,}"
    assert shown["largest multiplicity"] == f"{int(counts.max()):,}"
    # the sample's public bounds are used by default: nothing read off the data, nothing clipped
    assert not any(LEAK in w.value for w in at.warning)
    assert not any("clipped" in i.value for i in at.info)
    # the spectrum chart carries the spectrum, in log-spaced bins of r: #{values appearing r times}
    spec = _figure_with_trace(at, "distinct values")
    bar = _trace(spec, "distinct values")
    spectrum, edges = counts.value_counts().sort_index(), plots.profile.multiplicity_bins(int(counts.max()))
    binned = spectrum.groupby(np.searchsorted(edges, spectrum.index.to_numpy(), side="right") - 1).sum()
    assert bar["x"][0] == "1" and np.array_equal(np.asarray(bar["y"], float), binned.to_numpy(float))
    # rounding table: 0 decimals -> singletons of the rounded column
    rounded = np.round(sample["earnings"].to_numpy(), 0)
    _, c0 = np.unique(rounded, return_counts=True)
    line = _trace(_figure_with_trace(at, "singletons k₁"), "singletons k₁")
    x = np.asarray(line["x"], float)
    assert np.asarray(line["y"], float)[x == 0][0] == (c0 == 1).sum()


def test_shipped_public_bounds_name_real_columns_and_contain_the_samples():
    """A typo in public_bounds.json would silently fall back to bounds read off the data;
    bounds narrower than the data would clip it. Neither: every entry names a numeric
    column of its sample, and the sample lies within [lo, hi]."""
    shipped = {k: v for k, v in json.loads(PUBLIC_BOUNDS_FILE.read_text()).items() if not k.startswith("_")}
    assert set(shipped) == {p.name for p in (REPO / "sample_data").glob("*.csv")}
    for name, columns in shipped.items():
        frame = pd.read_csv(REPO / "sample_data" / name)
        assert columns
        for column, (lo, hi) in columns.items():
            x = frame[column].to_numpy(float)
            assert lo < hi and lo <= x.min() and x.max() <= hi, (name, column, lo, hi, x.min(), x.max())


@pytest.mark.parametrize("sample_name, column", [("cps_earnings.csv", "earnings"), ("dyadic_geometric.csv", "x")])
def test_sample_opens_with_its_public_bounds_and_no_leak_warning(sample_name, column):
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.session_state["sample_name"] = sample_name
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    lo, hi = _public_bounds(sample_name, column)
    # the public-bounds box is ticked and shows the shipped bounds
    assert at.checkbox(key=f"_w_tf_{column}_bounds_public").value is True
    assert at.number_input(key=f"_w_tf_{column}_lo").value == lo
    assert at.number_input(key=f"_w_tf_{column}_hi").value == hi
    assert not any(LEAK in w.value for w in at.warning)
    # and no page warns about bounds read off the data
    for page in ("privacy.py", "compare.py", "inference.py"):
        _page(at, page)
        assert not any(LEAK in w.value for w in at.warning), page


def test_sample_bounds_from_the_data_when_unticked_show_the_leak_warning(sample):
    at = _app()
    at.checkbox(key="_w_tf_earnings_bounds_public").uncheck().run()
    assert not at.exception
    x = sample["earnings"]
    leak = [w.value for w in at.warning if LEAK in w.value]
    assert len(leak) == 1 and "not private" in leak[0]
    assert f"({x.min():g}, {x.max():g})" in leak[0]   # the bounds named are the data's min and max
    _page(at, "privacy.py")
    assert any(LEAK in w.value for w in at.warning)
    # ticking the box again restores the shipped public bounds: no warning
    at.switch_page("app_pages/data.py").run()
    at.checkbox(key="_w_tf_earnings_bounds_public").check().run()
    assert (at.number_input(key="_w_tf_earnings_lo").value,
            at.number_input(key="_w_tf_earnings_hi").value) == _public_bounds()
    assert not any(LEAK in w.value for w in at.warning)


def test_upload_of_the_sample_bytes_still_reads_bounds_off_the_data(sample):
    """Public bounds belong to the bundled samples, not to a file name: the same bytes
    uploaded (even under the sample's name) are confidential data with data bounds."""
    content = SAMPLE.read_bytes()
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.session_state["source_kind"] = "upload"
    at.session_state["upload"] = {"name": SAMPLE.name, "bytes": content, "hash": content_hash(content)}
    at.run()
    assert not at.exception
    assert at.checkbox(key="_w_tf_earnings_bounds_public").value is False
    x = sample["earnings"]
    leak = [w.value for w in at.warning if LEAK in w.value]
    assert len(leak) == 1 and f"({x.min():g}, {x.max():g})" in leak[0]


def test_data_page_public_bounds_and_rounding_change_the_profile(sample):
    at = _app()
    assert at.checkbox(key="_w_tf_earnings_bounds_public").value is True
    at.number_input(key="_w_tf_earnings_lo").set_value(0.0).run()
    at.number_input(key="_w_tf_earnings_hi").set_value(60.0).run()
    assert not at.exception
    assert not any(LEAK in w.value for w in at.warning)
    at.selectbox(key="_w_tf_earnings_decimals").set_value(0).run()
    _, c0 = np.unique(np.round(sample["earnings"].to_numpy(), 0), return_counts=True)
    shown = _metrics(at)
    assert shown["distinct values k"] == f"{c0.size:,}"
    assert shown["singletons k₁"] == f"{int((c0 == 1).sum()):,}"
    # the settings persist on the other pages
    _page(at, "privacy.py")
    assert f"k = {c0.size:,}" in _markdown(at)


@pytest.mark.parametrize("content, expected", [
    (b"", "empty"),
    (b"earnings\n1.5\n2.5\nabc\n4.0\n", "non-numeric"),
    (b"earnings\n1.5\n\n2.5\nnan\n", "missing"),
    (b"earnings\n3.0\n", "at least 2 records"),
])
def test_bad_uploads_show_a_message_not_a_traceback(content, expected):
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.session_state["source_kind"] = "upload"
    at.session_state["upload"] = {"name": "bad.csv", "bytes": content, "hash": content_hash(content)}
    at.run()
    assert not at.exception
    errors = " ".join(shown_text(e.value) for e in at.error)   # core's messages are shown as text
    assert expected in errors, errors
    for page in ("privacy.py", "synthetic_data.py", "compare.py"):
        _page(at, page)
        assert expected in " ".join(shown_text(e.value) for e in at.error)


def test_uploads_are_private_to_their_session():
    content = b"income\n" + b"\n".join(str(v).encode() for v in range(1, 51)) + b"\n"
    first = AppTest.from_file(APP, default_timeout=TIMEOUT)
    first.session_state["source_kind"] = "upload"
    first.session_state["upload"] = {"name": "mine.csv", "bytes": content, "hash": content_hash(content)}
    first.run()
    assert _metrics(first)["records n"] == "50"
    second = _app()   # another session: the bundled sample, not the other session's upload
    assert _metrics(second)["records n"] == "13,501"
    assert "mine.csv" not in _markdown(second)


# --------------------------------------------------------------------------- privacy page

def _counts(sample) -> np.ndarray:
    return sample["earnings"].value_counts().to_numpy()


def test_privacy_page_shows_core_values_and_plateau(sample):
    at = _page(_app(), "privacy.py")
    n, theta, m, eps, delta = len(sample), 2.0, 100, 2.5, 0.01
    assert at.session_state["m"] == m and at.session_state["eps"] == eps
    text = _markdown(at)
    counts = _counts(sample)
    inst = privacy.instance_delta(counts, 0.0, theta, m, eps)
    glob = privacy.global_delta(n, theta, m, eps)
    assert f"δ = {plots.format_upper(inst)}" in text
    assert f"δ = {plots.format_upper(glob)}" in text
    assert "instance-level" in text and "Globally" in text
    # singleton plateau: T1 = m / (m + θ + n − 1), an independent one-line closed form
    t1 = m / (m + theta + n - 1)
    spec = _figure_with_trace(at, "singleton plateau m/(m+θ+n−1)")
    plateau = _trace(spec, "singleton plateau m/(m+θ+n−1)")
    assert plateau["y"][0] == pytest.approx(t1, rel=1e-9)
    instance = np.asarray(_trace(spec, "instance-level δ_x(ε) (paper)")["y"], float)
    # the data have singletons: the instance curve never falls below the plateau
    assert np.nanmin(instance) >= t1 * (1 - 1e-12)
    np.testing.assert_allclose(instance, privacy.instance_delta(counts, 0.0, theta, m, np.asarray(
        _trace(spec, "instance-level δ_x(ε) (paper)")["x"], float)), rtol=1e-12)
    # old-values-only PYPP (Algorithm 3) has exactly the same σ = 0 accounting (docs/bayesian_family.md)
    old_values = np.asarray(_trace(spec, "old values only (Alg. 3) δ_x(ε)")["y"], float)
    np.testing.assert_array_equal(old_values, instance)
    # m_sing = floor(δ(θ + n − 1)/(1 − δ))
    m_sing = math.floor(delta * (theta + n - 1) / (1 - delta))
    assert f"m_sing = {m_sing:,}" in text
    line = _trace(_figure_with_trace(at, "singleton limit m_sing"), "singleton limit m_sing")
    assert line["y"][0] == m_sing


def test_privacy_page_sliders_update_values(sample):
    at = _page(_app(), "privacy.py")
    at.select_slider(key="_w_m").set_value(300).run()     # a point of the log scale
    at.slider(key="_w_eps").set_value(1.0).run()
    assert not at.exception
    counts = _counts(sample)
    inst = privacy.instance_delta(counts, 0.0, 2.0, 300, 1.0)
    assert f"δ = {plots.format_upper(inst)}" in _markdown(at)
    plateau = _trace(_figure_with_trace(at, "singleton plateau m/(m+θ+n−1)"), "singleton plateau m/(m+θ+n−1)")
    assert plateau["y"][0] == pytest.approx(300 / (300 + 2.0 + len(sample) - 1), rel=1e-9)
    # δ > target: the verdict is missed (red), and the instance-level fact is only information
    assert any("Verdict: missed" in e.value for e in at.error)
    assert any("> δ target" in i.value and "not the verdict" in i.value for i in at.info)
    assert not at.success


def test_privacy_page_other_regimes(sample):
    at = _page(_app(), "privacy.py")
    at.selectbox(key="_w_regime").set_value("dm").run()
    assert not at.exception
    counts = _counts(sample)
    k = counts.size
    pure_global = privacy.dirichlet_multinomial_pure_epsilon(counts, 1.0, 100, instance=False)
    text = _markdown(at)
    assert f"z = {k:,}" in text and f"ε ≥ {plots.format_upper(pure_global)}" in text
    at.session_state["n_mc"] = 500
    at.selectbox(key="_w_regime").set_value("py").run()
    assert not at.exception
    text = _markdown(at)
    assert "Clopper–Pearson" in text and "500 replicates" in text
    spec = _figure_with_trace(at, "Monte Carlo estimate")
    upper = np.asarray(_trace(spec, "instance-level δ_x(ε) (Monte Carlo 95% upper bound)")["y"], float)
    est = np.asarray(_trace(spec, "Monte Carlo estimate")["y"], float)
    ok = np.isfinite(upper) & np.isfinite(est)
    assert np.all(upper[ok] >= est[ok])
    # moving ε reruns on the cached Monte Carlo result (its progress bar is replayed)
    at.slider(key="_w_eps").set_value(3.0).run()
    assert not at.exception
    assert "Clopper–Pearson" in _markdown(at)
    # the headline is the curator record's statement at the slider's ε, with the spec's own seed
    from core.release.report import guarantees

    spec = privacy.ReleaseSpec(0.25, 2.0, 100, int(counts.sum()), eps=3.0, delta=0.01)
    record = guarantees(spec, counts, 3.0, 0.01, n_mc=500)[0]
    assert f"seed {spec.monte_carlo_seed}" in record.description and record.description in _markdown(at)
    assert "Guarantee at ε = 3, m = 100" in _markdown(at)


def test_privacy_page_inverse_calibration(sample):
    at = _page(_app(), "privacy.py")
    n = len(sample)
    spec = _figure_with_trace(at, "largest admissible m")
    theta = np.asarray(_trace(spec, "m*(θ)")["x"], float)
    m_star = np.asarray(_trace(spec, "m*(θ)")["y"], float)
    for i in (0, len(theta) // 2, len(theta) - 1):
        assert m_star[i] == privacy.max_synthetic_size(n, float(theta[i]), 2.5, 0.01)
    # m* never exceeds the singleton limit at that θ
    assert np.all(m_star <= np.floor(0.01 * (theta + n - 1) / 0.99))
    # the marker sits at the θ currently selected (2.0), and the text says the same m*
    star = _trace(spec, "largest admissible m")
    expected = privacy.max_synthetic_size(n, 2.0, 2.5, 0.01)
    assert star["x"][0] == 2.0 and star["y"][0] == expected
    assert f"θ = 2 the largest admissible release is **m\\* = {expected:,}**" in _markdown(at)
    assert f"the largest is m\\* = {int(m_star.max()):,}" in _markdown(at)


# --------------------------------------------------------------------------- synthetic page

def _shown_release(at: AppTest, downloads) -> np.ndarray:
    """The release the page shows, as its CONFIDENTIAL curator record states it: the record's
    recipe (seed included) run by core on the bundled sample it names. (The page's overlay
    bins the release, so the figure no longer carries its values.)"""
    button = next(b.proto for b in at.get("download_button") if b.proto.label.startswith("Download CONFIDENTIAL"))
    recipe = _zip_files(downloads(button))["CONFIDENTIAL_recipe.json"]
    result = run_recipe(ReleaseRecipe.from_json(recipe))
    return result.synthetic["earnings"].to_numpy(float)


def test_synthetic_page_release_and_download(sample, downloads):
    at = _app()
    at.session_state["m"] = 2500
    at.session_state["theta"] = 100.0  # a large θ: ≈ 17 new values expected in 2 500 draws
    _page(at, "synthetic_data.py")
    assert any("Generate release" in i.value for i in at.info)
    at.button[0].click().run()
    assert not at.exception
    shown = _metrics(at)
    assert shown["released rows m"] == "2,500"
    drawn = at.session_state["release_params"]
    assert (drawn.spec.sigma, drawn.spec.theta, drawn.spec.m) == (0.0, 100.0, 2500)
    assert drawn.replayed is None and drawn.seed >= 2**64   # a fresh 128-bit secret seed, no constant

    # T₁ = 2500/(2500 + 100 + 13500) > δ = 0.01: the verdict is missed and nothing public is offered
    assert any("Verdict: missed" in e.value for e in at.error)
    public = {b.proto.label: b.proto for b in at.get("download_button")}
    assert public["Download synthetic CSV"].disabled and public["Download public release (zip)"].disabled
    z = _shown_release(at, downloads)
    assert z.size == 2500
    lo, hi = _public_bounds()
    assert np.all((z >= lo) & (z <= hi))   # the sample's public bounds: H = uniform on [0, 100]
    new_rows = int(shown["rows with a new value (drawn from H)"].replace(",", ""))
    old = np.isin(z, sample["earnings"].to_numpy())
    assert 2500 - old.sum() <= new_rows     # every value not in the data is a new one
    assert 0 < new_rows < 60               # ~17 expected
    # the new values are uniform on the public bounds, not confined to the data's range:
    # P(all of K ≥ 3 new values fall in [min, max] = [1.84, 49.45]) = 0.476^K < 0.11
    if 2500 - old.sum() >= 3:
        assert np.any(z[~old] > sample["earnings"].max()) or np.any(z[~old] < sample["earnings"].min())
    overlay = next(s for s in _figures(at) if any(t.get("name") == "synthetic (PYPP)" for t in s["data"]))
    # both histograms binned by core on shared edges: the densities of the data and of the release
    for name, values in (("confidential", sample["earnings"].to_numpy(float)), ("synthetic (PYPP)", z)):
        bars = _trace(overlay, name)
        centres, width = np.asarray(bars["x"], float), float(bars["width"])
        edges = np.append(centres - width / 2, centres[-1] + width / 2)
        expected, _ = np.histogram(values, bins=edges, density=True)
        # a value on an edge may fall either side of it after rounding: one value moves 1/(N·width)
        np.testing.assert_allclose(np.asarray(bars["y"], float), expected, rtol=0, atol=2.01 / (values.size * width))
    assert plots.CURATOR_ONLY in overlay["layout"]["title"]["text"]
    kde = np.asarray(_trace(overlay, "synthetic (PYPP) KDE")["y"], float)
    grid = np.asarray(_trace(overlay, "synthetic (PYPP) KDE")["x"], float)
    assert np.trapezoid(kde, grid) == pytest.approx(1.0, abs=2e-3)   # a density on a wide enough grid

    # each press draws a fresh secret seed: another release (tests/test_side_doors.py replays one)
    at.button[0].click().run()
    assert at.session_state["release_params"].seed != drawn.seed
    assert not np.array_equal(_shown_release(at, downloads), z)

    # m = 20: weak (n·δ > 0.01); the CSV is offered once the curator accepts that, and it is the
    # release plotted
    at.session_state["m"] = 20
    at.run()
    at.button[0].click().run()
    assert any("Verdict: weak" in w.value for w in at.warning)
    assert at.get("download_button")[2].proto.disabled
    at.checkbox(key="acknowledge_weak").check().run()
    _ledger_budget(at)
    buttons = {b.proto.label: b.proto for b in at.get("download_button")}
    assert not buttons["Download synthetic CSV"].disabled
    csv = pd.read_csv(io.BytesIO(downloads(buttons["Download synthetic CSV"])))
    assert list(csv.columns) == ["earnings"] and len(csv) == 20
    np.testing.assert_array_equal(csv["earnings"].to_numpy(float), _shown_release(at, downloads))


def _zip_files(payload: bytes) -> dict[str, bytes]:
    import zipfile

    with zipfile.ZipFile(io.BytesIO(payload)) as zf:
        return {name: zf.read(name) for name in zf.namelist()}


def _ledger_budget(at: AppTest) -> None:
    """The public downloads are charged to the page's dataset in the privacy ledger (ui/ledger.py):
    give it a generous budget in this test's own ledger (tests/conftest.py), run the page again,
    and accept a change of the data under the same name (flagged) when the page asks."""
    with open_ledger() as ledger:
        ledger.set_budget(at.text_input(key="_w_ledger_dataset").value, 1e6, 0.999, by="test curator")
    at.run()
    changed = [box for box in at.checkbox if box.key == "ledger_accept_changed"]
    if changed:   # the data changed under the name since its last release: record it flagged
        changed[0].check().run()


def _accept_the_gate(at: AppTest) -> None:
    """Tick every acknowledgement the gate asks for (a weak release, bounds from the data) and
    give the dataset a budget in the privacy ledger (:func:`_ledger_budget`)."""
    boxes = [box for box in at.checkbox if str(box.key or "").startswith("acknowledge_")]
    for box in boxes:
        box.check()
    if boxes:
        at.run()
    _ledger_budget(at)   # the last step of the gate: the dataset's budget in the privacy ledger


def _release_downloads(at: AppTest, downloads) -> tuple[bytes, dict, dict]:
    """The three downloads of the Synthetic data page, once the curator accepted what the gate asks."""
    _accept_the_gate(at)
    buttons = {b.proto.label: b.proto for b in at.get("download_button")}
    return (downloads(buttons["Download synthetic CSV"]),
            _zip_files(downloads(buttons["Download public release (zip)"])),
            _zip_files(downloads(buttons["Download CONFIDENTIAL curator record (zip)"])))


def _replay(recipe: bytes, tmp_path, data: Path | None = None) -> bytes:
    """Run the command line on the curator record's recipe; return the synthetic CSV it writes
    (``--out`` passes the gate: the callers ticked every acknowledgement, each ``--acknowledge KEY`` here)."""
    from core import cli
    from core.release.gate import ACKNOWLEDGEMENTS

    (tmp_path / "recipe.json").write_bytes(recipe)
    argv = ["release", "--recipe", str(tmp_path / "recipe.json")] + ([str(data)] if data else [])
    accepted = [flag for key in ACKNOWLEDGEMENTS for flag in ("--acknowledge", key)]
    assert cli.main(argv + ["--out", str(tmp_path / "again.csv"), *accepted]) == 0
    return (tmp_path / "again.csv").read_bytes()


def test_release_bundles_public_and_curator_and_replay(sample, downloads, tmp_path):
    """The page offers the public release and the CONFIDENTIAL curator record apart; the
    command line replays the curator's recipe to the same synthetic CSV, byte for byte."""
    at = _app()
    at.session_state["m"] = 120
    at.session_state["theta"] = 100.0
    _page(at, "synthetic_data.py")
    at.button[0].click().run()
    assert not at.exception
    at.checkbox(key="acknowledge_weak").check().run()   # a weak release is published only when accepted
    csv_bytes, public, curator = _release_downloads(at, downloads)
    assert set(public) == {"README.txt", "synthetic.csv", "recipe.json", "release.json", "release_card.html"}
    assert json.loads(public["release.json"])["acknowledged"] == ["weak"]
    assert public["synthetic.csv"] == csv_bytes
    assert all(name.startswith("CONFIDENTIAL_") for name in curator)
    assert {"CONFIDENTIAL_report.json", "CONFIDENTIAL_recipe.json", "CONFIDENTIAL_summary.csv",
            "CONFIDENTIAL_figure_overlay_earnings.svg"} <= set(curator)

    # the public release holds the global guarantee with n, and no statistic of the data
    release_json = json.loads(public["release.json"])
    counts = _counts(sample)
    assert release_json["data"]["n"] == len(sample) and release_json["release"]["m"] == 120
    assert release_json["guarantee"]["delta"] == pytest.approx(privacy.global_delta(len(sample), 100.0, 120, 2.5))
    public_recipe = json.loads(public["recipe.json"])
    assert public_recipe["seed"] is None and public_recipe["data"]["source"] == "sample:cps_earnings.csv"
    public_text = b"".join(v for k, v in public.items() if k != "synthetic.csv").decode()
    for statistic in ('"k"', '"singletons"', "instance_delta", repr(float(sample["earnings"].mean()))):
        assert statistic not in public_text, statistic

    # the curator record says everything else, marked CONFIDENTIAL
    report = json.loads(curator["CONFIDENTIAL_report.json"])
    assert next(iter(report)) == "CONFIDENTIAL"
    assert report["data"]["n"] == len(sample) and report["data"]["singletons"] == int((counts == 1).sum())
    inst = next(g for g in report["guarantees"] if g["name"] == "instance_delta")
    assert inst["delta"] == privacy.instance_delta(counts, 0.0, 100.0, 120, 2.5)
    assert curator["CONFIDENTIAL_summary.csv"].startswith(b"# CONFIDENTIAL")
    summary = pd.read_csv(io.BytesIO(curator["CONFIDENTIAL_summary.csv"]), comment="#")
    assert list(summary["mechanism"]) == ["confidential", "PYPP"]
    assert summary.loc[0, "mean"] == pytest.approx(sample["earnings"].mean())
    assert summary.loc[1, "mean"] == pytest.approx(pd.read_csv(io.BytesIO(csv_bytes))["earnings"].mean())

    # the command shown on the page replays the recipe to the same bytes
    assert at.code[0].value == ("python -m core release --recipe CONFIDENTIAL_recipe.json --out synthetic.csv "
                                "--acknowledge weak")
    assert _replay(curator["CONFIDENTIAL_recipe.json"], tmp_path) == csv_bytes


def _stored_zip_names(manager) -> list[set[str]]:
    """The member names of every zip in a media store (Streamlit's in-memory storage)."""
    import zipfile

    out = []
    for stored in list(manager._storage._files_by_id.values()):
        if stored.content[:2] == b"PK":
            with zipfile.ZipFile(io.BytesIO(stored.content)) as zf:
                out.append(set(zf.namelist()))
    return out


def test_confidential_downloads_are_built_on_click_and_dropped_after(sample, downloads, monkeypatch):
    """The curator record and every curator-only table reach Streamlit's media store only on
    the click, and leave it ``ui.downloads.CONFIDENTIAL_URL_SECONDS`` later, so their URL then
    answers nothing (docs/serving.md §1). Nothing public is stored at page run either (ui/ledger.py)."""
    import time

    from ui import downloads as ui_downloads

    monkeypatch.setattr(ui_downloads, "CONFIDENTIAL_URL_SECONDS", 0.2)
    at = _app()
    at.session_state["m"] = 120
    at.session_state["theta"] = 100.0
    _page(at, "synthetic_data.py")
    at.button[0].click().run()
    at.checkbox(key="acknowledge_weak").check().run()
    assert not at.exception
    buttons = {b.proto.label: b.proto for b in at.get("download_button")}
    confidential = [label for label, b in buttons.items() if b.deferred_file_id]
    assert sorted(confidential) == ["Download CONFIDENTIAL curator record (zip)", "Download quality report (CSV)"]
    assert all(buttons[label].url == "" for label in confidential)   # no URL until the click
    manager = downloads.managers[-1]
    # before the click nothing is stored: the public zip too is built on its click, once the
    # privacy ledger recorded it (ui/ledger.py; here no budget is set, so it is not offered)
    assert _stored_zip_names(manager) == []

    url = deferred_click(manager, buttons["Download CONFIDENTIAL curator record (zip)"].deferred_file_id)
    stored = manager.read_file(url.rsplit("/", 1)[-1])
    assert stored is not None and stored.filename == "CONFIDENTIAL_curator_record.zip"
    deadline = time.monotonic() + 30   # hang guard; the sweep runs 0.2 s after the click
    while manager.read_file(url.rsplit("/", 1)[-1]) is not None:
        assert time.monotonic() < deadline, "the curator record is still in the media store"
        time.sleep(0.05)


def test_multi_column_upload_with_per_column_transforms_replays(downloads, tmp_path):
    """An upload of several columns, each with its own transforms (log, rounding, public
    bounds or none, a categorical one): the command line reproduces the app's CSV."""
    rng = np.random.default_rng(5)
    frame = pd.DataFrame({"income": np.round(rng.lognormal(3, 0.4, 400), 2),
                          "hours": rng.integers(10, 60, 400),
                          "region": rng.choice(["north", "south", "NA-east"], 400)})
    content = frame.to_csv(index=False).encode()
    path = tmp_path / "people.csv"
    path.write_bytes(content)
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.session_state["source_kind"] = "upload"
    at.session_state["upload"] = {"name": "people.csv", "bytes": content, "hash": content_hash(content)}
    at.session_state["columns"] = ["income", "hours", "region"]
    at.session_state["transforms"] = {
        "income": {"kind": "numeric", "log": True, "bounds_public": True, "lo": 1.0, "hi": 500.0, "decimals": 1},
        "hours": {"kind": "numeric", "log": False, "bounds_public": False, "lo": 0.0, "hi": 1.0, "decimals": None},
        "region": {"kind": "categorical", "log": False, "bounds_public": False, "lo": 0.0, "hi": 1.0,
                   "decimals": None}}
    at.session_state["theta"] = 50.0
    # T₁ = 40/(40 + 50 + 399) ≤ δ = 0.1: the target is met, weakly (n·δ > 0.01)
    at.session_state["m"] = 40
    at.session_state["delta"] = 0.1
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    _page(at, "synthetic_data.py")
    at.button[0].click().run()
    assert not at.exception, [e.value for e in at.exception]
    # hours' bounds come from the data: both consequences must be accepted before anything public
    at.checkbox(key="acknowledge_weak").check().run()
    assert at.get("download_button")[0].proto.disabled
    at.checkbox(key="acknowledge_bounds_from_data").check().run()
    csv_bytes, public, curator = _release_downloads(at, downloads)
    assert json.loads(public["release.json"])["acknowledged"] == ["bounds_from_data", "weak"]
    assert list(pd.read_csv(io.BytesIO(csv_bytes)).columns) == ["income", "hours", "region"]
    assert json.loads(public["recipe.json"])["data"]["source"] == "upload"       # no hash in public
    assert "CONFIDENTIAL_category_counts.csv" in curator
    assert at.code[0].value.endswith("--recipe CONFIDENTIAL_recipe.json people.csv --out synthetic.csv "
                                     "--acknowledge weak --acknowledge bounds_from_data")
    assert _replay(curator["CONFIDENTIAL_recipe.json"], tmp_path, path) == csv_bytes


# --------------------------------------------------------------------------- compare page

def test_compare_page_calibration_runs_and_summary(sample, downloads):
    at = _app()
    at.session_state["runs"] = 10
    _page(at, "compare.py")
    eps, m = 2.5, 100
    table = at.dataframe[0].value
    # knob values are text rounded as printed (a δ up, issue 36): read back as numbers
    value = {(r.label, r.parameter): float(r.value.replace(",", "")) for r in table.itertuples()}
    assert value[("all mechanisms", "m")] == m
    assert value[("Perturbed histogram (Laplace)", "laplace_scale")] == pytest.approx(2 / eps)
    alpha = next(v for (label, p), v in value.items() if label == "Dirichlet–multinomial" and "alpha" in p)
    assert alpha == pytest.approx(m / math.expm1(eps), rel=1e-5)   # printed with 6 significant digits
    assert any("Press **Run comparison**" in i.value for i in at.info)

    at.button(key="run_compare").click().run()
    assert not at.exception
    assert any("Curator-only" in w.value for w in at.warning)
    box = next(s for s in _figures(at) if s["data"] and s["data"][0].get("type") == "box")
    labels = list(dict.fromkeys(t["name"] for t in box["data"]))
    # small multiples by family, the non-private ceiling repeated in every panel (issue 25)
    assert labels[0] == "PYPP (σ = 0)" and "Bootstrap (no privacy)" in labels and len(labels) == N_COMPARED
    panels: dict[str, list] = {}
    for t in box["data"]:
        panels.setdefault(t.get("yaxis", "y"), []).append(t["name"])
    assert len(panels) > 1 and all(len(names) <= 5 and names[-1] == "Bootstrap (no privacy)"
                                   for names in panels.values())
    assert all(len(t["x"]) == 10 for t in box["data"])
    summary = at.dataframe[1].value
    # the summary table and the boxplots show the same runs
    for t in box["data"]:
        row = summary[summary["label"] == t["name"]]
        assert row["W1"].iloc[0] == pytest.approx(np.mean(np.asarray(t["x"], float)), rel=1e-12)
    # confidential row: the data in original units (clipped to the sample's public bounds), computed independently
    assert not any(LEAK in w.value for w in at.warning)
    lo, hi = _public_bounds()
    x = np.clip(sample["earnings"].to_numpy(float), lo, hi)
    conf = summary[summary["mechanism"] == "confidential"].iloc[0]
    assert conf["mean"] == pytest.approx(x.mean(), rel=1e-12)
    assert conf["median"] == pytest.approx(np.median(x), rel=1e-12)
    (download,) = [b for b in at.get("download_button") if b.proto.label.startswith("Download summary")]
    csv = pd.read_csv(io.BytesIO(downloads(download.proto)), comment="#")   # a CONFIDENTIAL-headed table
    np.testing.assert_allclose(csv["W1"].to_numpy(float), summary["W1"].to_numpy(float), rtol=1e-12)
    # KDE overlay: small multiples, the confidential histogram and KDE in every panel, one KDE per mechanism
    overlay = next(s for s in _figures(at) if any(t.get("name") == "confidential KDE" for t in s["data"]))
    hist = [t for t in overlay["data"] if t.get("type") == "bar"]                 # binned once, drawn per panel
    assert {t["name"] for t in hist} == {"confidential"} and len(hist) > 1
    assert np.sum(np.asarray(hist[0]["y"], float)) * hist[0]["width"] == pytest.approx(1.0)   # a density
    kdes = {t["name"] for t in overlay["data"] if t.get("type") == "scatter"}
    assert len(kdes) == N_COMPARED + 1 and {f"{label} KDE" for label in labels} <= kdes

    at.session_state["sweep_runs"] = 5
    at.button(key="run_sweep").click().run()
    assert not at.exception
    frontier = next(s for s in _figures(at) if "median W1 against ε" in s["layout"]["title"]["text"])
    pypp = _trace(frontier, "PYPP (σ = 0)")
    np.testing.assert_allclose(np.asarray(pypp["x"], float), [0.25, 0.5, 1.0, 2.0, 4.0, 8.0])
    assert np.all(np.asarray(pypp["y"], float) > 0)
    # a second run hits the caches (progress bars are replayed, not re-created outside)
    at.run()
    assert not at.exception


def test_compare_page_runs_on_a_categorical_column_without_public_list():
    # No public category list: the histogram baselines are skipped with a message naming the
    # column and where to give the list; PYPP, old-values PYPP and the bootstrap run, by TV.
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.session_state["columns"] = ["degree"]
    at.session_state["runs"] = 5
    at.run()
    assert not at.exception
    _page(at, "compare.py")
    assert not at.error
    # the name is shown as text: escaped Markdown (\'degree\' renders as 'degree')
    assert any("\\'degree\\'" in i.value and "public category list" in i.value for i in at.info)
    at.button(key="run_compare").click().run()
    assert not at.exception and not at.error
    box = next(s for s in _figures(at) if "total variation" in s["layout"]["title"]["text"])
    assert [t["name"] for t in box["data"]] == ["PYPP (σ = 0)", "PYPP, old values only (Alg. 3, σ = 0)",
                                                "Bootstrap (no privacy)"]
    assert all(0.0 <= v <= 1.0 for t in box["data"] for v in t["x"])
    summary = at.dataframe[1].value
    assert summary.loc[summary["mechanism"] != "confidential", "TV"].between(0.0, 1.0).all()
    assert summary["W1"].isna().all()
    at.session_state["sweep_runs"] = 5
    at.button(key="run_sweep").click().run()
    assert not at.exception and not at.error
    frontier = next(s for s in _figures(at) if "median TV against ε" in s["layout"]["title"]["text"])
    assert {t["name"] for t in frontier["data"] if t.get("name")} >= {"PYPP (σ = 0)"}


# --------------------------------------------------------------------------- robustness (issue 9)

def test_out_of_range_session_state_is_clamped_not_a_traceback():
    """Settings stored outside a widget's range (θ = 1e-9, a huge m, an unknown δ) are moved
    into it before any widget renders: the Privacy page draws, with the clamped values."""
    from ui import state

    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.session_state["theta"] = 1e-9
    at.session_state["m"] = 10**9
    at.session_state["eps"] = float("nan")
    at.session_state["delta"] = 0.03
    at.session_state["regime"] = "no such regime"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    _page(at, "privacy.py")
    assert at.session_state["theta"] == state.RANGES["theta"][0]
    assert at.session_state["m"] == state.RANGES["m"][1]
    assert at.session_state["eps"] == state.RANGES["eps"][0]
    assert at.session_state["delta"] in state.DELTA_OPTIONS and at.session_state["regime"] == "dp"
    assert at.select_slider(key="_w_theta").value == state.RANGES["theta"][0]
    for page in ("synthetic_data.py", "compare.py", "informativity.py", "inference.py"):
        _page(at, page)


def test_clamp_and_nearest_option():
    from ui.state import clamp, nearest_option

    assert clamp(1e-9, 0.1, 100.0) == 0.1 and clamp(1e300, 0.1, 100.0) == 100.0
    assert clamp(float("nan"), 1, 5000) == 1 and isinstance(clamp(7.6, 1, 5000), int) and clamp(7.6, 1, 5000) == 8
    assert clamp("junk", 0.05, 12.0) == 0.05 and clamp(-float("inf"), 2, 100) == 2
    assert nearest_option(0.03, (0.01, 0.02, 0.05)) == 0.02 and nearest_option("x", ("dp", "py")) == "dp"


def test_value_error_from_core_is_a_message_on_every_page(monkeypatch):
    """One handler (app.py → ui.widgets.show_errors) turns a ValueError raised anywhere in a
    page into st.error: here core.privacy.global_delta fails on the Privacy page."""
    from core import privacy as core_privacy

    def failing(*args, **kwargs):
        raise ValueError("theta must be in (0, inf), got 1e-09 (raised for the test)")

    monkeypatch.setattr(core_privacy, "global_delta", failing)
    at = _app()
    at.session_state["m"] = 1237   # settings no earlier test cached (AppTest sessions share one id)
    _page(at, "privacy.py")
    assert any("raised for the test" in e.value for e in at.error)


def test_extreme_values_are_a_message_not_a_traceback():
    """±1e308 and 1e-308 (KDE on inf/degenerate data) released and compared: no traceback."""
    content = b"x\n1e308\n-1e308\n1e-308\n1e-308\n2\n3\n"
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.session_state["source_kind"] = "upload"
    at.session_state["upload"] = {"name": "huge.csv", "bytes": content, "hash": content_hash(content)}
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    for page in ("privacy.py", "synthetic_data.py"):
        _page(at, page)
    if at.button:
        at.button[0].click().run()
        assert not at.exception, [e.value for e in at.exception]


def test_upload_limit_is_one_number_in_megabytes():
    """The uploader's limit, .streamlit/config.toml and the app's own check agree: 50 MB,
    counted as 10^6 bytes as the browser does, so the app's message can show."""
    import tomllib

    from ui import selection, state

    config = tomllib.loads((REPO / ".streamlit" / "config.toml").read_text())
    assert config["server"]["maxUploadSize"] == state.MAX_UPLOAD_MB
    assert state.MAX_UPLOAD_BYTES == state.MAX_UPLOAD_MB * 10**6
    assert selection.upload_problem("big.csv", state.MAX_UPLOAD_BYTES) is None
    message = selection.upload_problem("big.csv", state.MAX_UPLOAD_BYTES + 1)
    assert f"limit of {state.MAX_UPLOAD_MB} MB ({state.MAX_UPLOAD_BYTES:,} bytes)" in message
    at = _app()
    at.radio(key="_w_source_kind").set_value("upload").run()
    uploader = at.get("file_uploader")[0]
    assert uploader.proto.max_upload_size_mb == state.MAX_UPLOAD_MB
    assert f"at most {state.MAX_UPLOAD_MB} MB" in uploader.proto.label


def test_rounding_selector_defaults_to_full_precision():
    """Not rounded is the default (the output precision is public); "as recorded in the data" is the
    data-dependent choice precision_from_data (docs/mathematics.md §2.4)."""
    at = _app()
    box = at.selectbox(key="_w_tf_earnings_decimals")
    assert box.value == ui_selection.NOT_ROUNDED and box.format_func(box.value) == ui_selection.NOT_ROUNDED
    assert box.format_func(2) == "2 (to 0.01)" and box.format_func(-1) == "-1 (to tens)"
    box.set_value(ui_selection.FROM_DATA).run()
    assert not at.exception
    assert at.session_state["transforms"]["earnings"]["precision_from_data"] is True
    assert at.session_state["transforms"]["earnings"]["decimals"] is None
    assert ui_selection.column_specs(["earnings"], at.session_state["transforms"])[0].precision_from_data
    at.selectbox(key="_w_tf_earnings_decimals").set_value(2).run()
    chosen = at.session_state["transforms"]["earnings"]
    assert (chosen["decimals"], chosen["precision_from_data"]) == (2, False)


def _upload(content: bytes, name: str = "upload.csv") -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.session_state["source_kind"] = "upload"
    at.session_state["upload"] = {"name": name, "bytes": content, "hash": content_hash(content)}
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_na_label_can_be_kept_as_a_category():
    content = b"answer\nyes\nNA\nno\nNA\nyes\nyes\n"
    at = _upload(content)
    assert any("missing" in e.value for e in at.error)          # NA read as missing: refused by prepare
    at.checkbox(key="_w_read_keep_na_text").check().run()
    assert not at.exception and not at.error
    assert _metrics(at)["records n"] == "6" and _metrics(at)["distinct values k"] == "3"


def test_reader_decisions_are_shown_and_can_be_overridden():
    at = _upload(b"a;b\n1;2\n3;4\n5;6\n")
    text = _markdown(at)
    assert "semicolon" in text and "detected" in text and _metrics(at)["records n"] == "3"
    # a file without a header: the first row is kept as data, and the page asks
    at = _upload(b"10\n20\n30\n20\n")
    assert _metrics(at)["records n"] == "4"
    assert any("looks like data" in w.value for w in at.warning)
    at.selectbox(key="_w_read_header").set_value(True).run()
    assert not at.exception and _metrics(at)["records n"] == "3"
    assert at.multiselect(key="_w_columns").value == ["10"]
    # thousands separators only when the user says so
    at = _upload(b'amount\n"1,200"\n"3,400"\n"1,200"\n"15"\n')
    at.selectbox(key="_w_read_thousands").set_value(",").run()
    assert not at.exception and not at.error
    assert _metrics(at)["distinct values k"] == "3"


# --------------------------------------------------------------------------- privacy page: exact verdicts (issue 8)

def _dm_page(content: bytes, *, alpha: float, m: int, eps: float) -> AppTest:
    at = _upload(content, "categories.csv")
    at.session_state["regime"] = "dm"
    at.session_state["alpha_dm"] = alpha
    at.session_state["m"] = m
    at.session_state["eps"] = eps
    return _page(at, "privacy.py")


def test_dm_pure_verdict_is_exact_at_the_boundary():
    """Issue 8: x = ten values of multiplicity 1000, α = 0.05, ε = 1.1. The pure condition
    m ≤ (e^ε − 1)(999 + α) ≈ 2002.26 holds for m = 2002 and fails for m = 2003, although
    the δ bound at m = 2003 is below the smallest normal float: the page must say "no"
    there, and show a bound, not "δ = 0"."""
    counts = [1000] * 10
    content = ("label\n" + "".join(f"c{i}\n" * 1000 for i in range(10))).encode()
    limit = (math.exp(1.1) - 1) * (999 + 0.05)
    assert 2002 < limit < 2003                      # the boundary, in plain floating point
    at = _dm_page(content, alpha=0.05, m=2003, eps=1.1)
    text = _markdown(at)
    assert "at ε = 1.1: **no**). At ε = 1.1 the pure condition does not hold at your data" in text, text
    bound = privacy.instance_delta(counts, -0.05, 0.5, 2003, 1.1)
    assert f"δ ≤ {plots.format_upper(bound)}" in text and "upper *bound*" in text
    assert "exact instance-level **δ = 0**" not in text
    # one record fewer: pure at the data, and the exact δ is 0
    at = _dm_page(content, alpha=0.05, m=2002, eps=1.1)
    text = _markdown(at)
    assert "at ε = 1.1: **yes**). At ε = 1.1 the pure condition holds at your data" in text, text
    assert "exact instance-level **δ = 0**" in text
    # the global condition m ≤ (e^ε − 1)α fails at both; its threshold is rounded up
    assert "(at ε = 1.1: **no**) and pure ε-DP **at your data**" in text
    threshold = privacy.dirichlet_multinomial_pure_epsilon(counts, 0.05, 2002, instance=False)
    assert f"**globally** for ε ≥ {plots.format_upper(threshold)}" in text
    assert float(plots.format_upper(threshold)) >= math.log1p(2002 / 0.05)
    # the chart says it is a bound
    spec = _figure_with_trace(at, "instance-level δ bound (σ < 0)")
    assert "upper bound" in spec["layout"]["title"]["text"]


def test_dm_single_public_category_is_exactly_zero():
    at = _dm_page(b"label\n" + b"only\n" * 40, alpha=1.0, m=100, eps=0.5)
    text = _markdown(at)
    assert "z = 1 public categories" in text and "**δ = 0 exactly** at every ε" in text


def test_dp_verdicts_come_from_the_exact_functions(monkeypatch):
    """The Privacy page's "≤ / > δ target" is core's exact verdict, not a comparison of the
    (rounded-up) floats it prints: flip the verdict and the page follows it."""
    from core import privacy as core_privacy

    calls = []

    def verdict(*args, **kwargs):
        calls.append(args)
        return False

    from core.privacy import regimes as core_regimes

    monkeypatch.setattr(core_privacy, "instance_delta_at_most", verdict)
    monkeypatch.setattr(core_privacy, "global_delta_at_most", verdict)
    monkeypatch.setattr(core_regimes, "composed_singleton_term_at_most", verdict)   # the verdict of the release
    # m = 97, ε = 2.45: both δ's are below the target 0.01 (a float comparison says "≤"),
    # and no other test caches these settings (AppTest sessions share one id).
    m, eps = 97, 2.45
    assert privacy.instance_delta(_counts(pd.read_csv(SAMPLE)), 0.0, 2.0, m, eps) <= 0.01
    assert privacy.global_delta(13_501, 2.0, m, eps) <= 0.01
    at = _app()
    at.session_state["m"] = m
    at.session_state["eps"] = eps
    _page(at, "privacy.py")
    assert len(calls) >= 3
    assert any("Verdict: missed" in e.value for e in at.error)   # from the (flipped) exact verdict
    shown = [i.value for i in at.info if "δ target" in i.value]
    assert shown and "> δ target 0.01. The paper's probabilistic δ*(ε)" in shown[0]
    assert "> δ target (both decided exactly)" in shown[0]
    # the δ it prints is core's own, rounded up
    assert f"δ*(ε) = {plots.format_upper(privacy.global_delta(13_501, 2.0, m, eps))}" in shown[0]


def test_a_hand_change_ends_the_planners_say(sample):
    """θ or m moved by hand are no longer "chosen with the release planner" in the public report."""
    at = _page(_app(), "privacy.py")
    at.session_state["settings_chosen_from_data"] = True
    at.run()
    at.select_slider(key="_w_theta").set_value(3.0).run()   # a point of the log scale
    assert at.session_state["settings_chosen_from_data"] is False
