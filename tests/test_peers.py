"""The field's peers (issue 23): OpenDP's calibrations against the project's, AIM and MST on a
tiny domain (budget spent, estimate), the message when the extra is missing, the command line
once and the Compare page with a peer selected."""

from __future__ import annotations

import math

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest
from test_app import APP, TIMEOUT

from core.cli import main
from core.evaluation.compare import calibrate
from core.mechanisms import LaplaceHistogram, peers, pgm
from core.privacy import gaussian_delta, gaussian_sigma
from core.privacy.zcdp import zcdp_delta, zcdp_gaussian_sigma, zcdp_rho

needs_extra = pytest.mark.skipif(not peers.peers_available(), reason="the optional extra 'peers' is not installed")


def test_zcdp_conversion_is_the_minimum_over_orders():
    for rho, eps in ((0.05, 1.0), (0.5, 4.0), (2e-3, 0.3)):
        alphas = np.linspace(1.01, (eps + 1) / (2 * rho) + 2, 400_001)
        brute = np.exp((alphas - 1) * (alphas * rho - eps) + alphas * np.log1p(-1 / alphas)) / (alphas - 1)
        assert zcdp_delta(rho, eps) == pytest.approx(brute.min(), rel=1e-9)
    rho = zcdp_rho(1.0, 1e-3)
    assert zcdp_delta(rho, 1.0) <= 1e-3 < zcdp_delta(rho * (1 + 1e-9), 1.0)


@needs_extra
@pytest.mark.parametrize("eps, delta", [(0.5, 1e-6), (1.0, 1e-3), (4.0, 1e-3)])
def test_opendp_and_project_calibrations_agree_on_the_noise_scale(eps, delta):
    assert peers.opendp_laplace_scale(eps) == pytest.approx(LaplaceHistogram(eps, 10).scale, rel=1e-9)
    s = peers.opendp_gaussian_scale(eps, delta)
    assert s == pytest.approx(zcdp_gaussian_sigma(eps, delta, math.sqrt(2)), rel=1e-9)
    assert peers.opendp_zcdp_rho(eps, delta) == pytest.approx(zcdp_rho(eps, delta), rel=1e-9)
    # OpenDP's conversion holds for any ρ-zCDP mechanism: more noise than the exact (analytic)
    # Gaussian calibration, whose δ at OpenDP's noise is within the target
    assert gaussian_sigma(eps, delta, math.sqrt(2)) < s
    assert gaussian_delta(s, eps, math.sqrt(2)) <= delta


def _spending(monkeypatch) -> list[float]:
    """Record the zCDP cost of every measurement and selection the algorithms make."""
    spent: list[float] = []
    measure, select = pgm._measure, pgm._exponential_mechanism

    def spy_measure(counts, clique, sigma, rng):
        spent.append(2.0 / (2.0 * sigma * sigma))    # L2 sensitivity √2 under replacement
        return measure(counts, clique, sigma, rng)

    def spy_select(scores, eps0, sensitivity, rng):
        spent.append(eps0 * eps0 / 8.0)
        return select(scores, eps0, sensitivity, rng)

    monkeypatch.setattr(pgm, "_measure", spy_measure)
    monkeypatch.setattr(pgm, "_exponential_mechanism", spy_select)
    return spent


def _chain_table(rng) -> np.ndarray:
    """Counts of 3000 records on a 3 × 2 × 2 domain with a chain a → b → c."""
    a = rng.integers(0, 3, 3000)
    b = (a >= 1).astype(int) ^ (rng.random(3000) < 0.1)
    c = b ^ (rng.random(3000) < 0.1)
    table = np.zeros((3, 2, 2))
    np.add.at(table, (a, b, c), 1)
    return table


@pytest.mark.parametrize("algorithm", [pgm.mst_table, pgm.aim_table])
def test_aim_and_mst_spend_exactly_their_budget_and_fit_the_table(algorithm, monkeypatch):
    rng = np.random.default_rng(3)
    table = _chain_table(rng)
    spent = _spending(monkeypatch)
    rho = 0.05
    algorithm(table, rho, rng)
    assert sum(spent) == pytest.approx(rho, rel=1e-9)
    # with a large budget the estimate recovers the pairs of the chain (MST) and the table (AIM)
    q = algorithm(table, 500.0, np.random.default_rng(4))
    p = table / table.sum()
    assert q.shape == table.shape and q.sum() == pytest.approx(1.0)
    for pair in ((0, 1), (1, 2)):
        other = 3 - sum(pair)
        assert 0.5 * np.abs(q.sum(axis=other) - p.sum(axis=other)).sum() < 0.01
    if algorithm is pgm.aim_table:
        assert 0.5 * np.abs(q - p).sum() < 0.01


@needs_extra
def test_peers_at_n_release_n_iid_records_on_the_cells():
    cal = calibrate(3000, 1.0, 1e-3, 20, theta=2.0, d=3, bins=3, levels=(3, 2, 2), mechanisms=["mst_at_n", "aim"])
    mst, aim = cal.mechanisms
    assert (mst.release_size, mst.label, aim.release_size) == (3000, "MST (m = n)", None)
    assert set(cal.table.loc[cal.table.mechanism == "mst_at_n", "m"]) == {3000}
    rng = np.random.default_rng(0)
    counts = _chain_table(rng)
    cells = np.argwhere(counts > 0)
    atoms = (cells + 0.5) / np.array([3, 2, 2])
    z = aim.release(atoms, 25, rng, counts=counts[tuple(cells.T)].astype(int))
    assert z.shape == (25, 3) and np.isin(z[:, 0], (np.arange(3) + 0.5) / 3).all()


def test_the_missing_extra_is_named_by_core_and_the_command_line(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(peers, "_module_available", lambda name: False)
    assert not peers.peers_available()
    with pytest.raises(ValueError, match=r"optional extra 'peers'.*\.\[peers\]"):
        calibrate(1000, 1.0, 1e-3, 5, theta=2.0, mechanisms=["pypp", "aim"])
    path = tmp_path / "d.csv"
    path.write_text("x\n" + "\n".join(str(i % 7) for i in range(200)) + "\n")
    with pytest.raises(SystemExit) as stop:
        main(["compare", str(path), "--column", "x", "--bounds", "0", "10", "--theta", "2", "--eps", "1",
              "--delta", "0.01", "--m", "5", "--mechanism", "mst", "--runs", "2"])
    assert stop.value.code == 2 and "pip install -e \".[peers]\"" in capsys.readouterr().err


@needs_extra
def test_compare_command_prints_each_mechanism_guarantee_m_and_yardsticks(tmp_path, capsys):
    rng = np.random.default_rng(1)
    rows = ["wage,region"] + [f"{w:.0f},{r}" for w, r in zip(rng.gamma(4, 5, 2000), rng.choice(list("NSEW"), 2000))]
    path = tmp_path / "hidden.csv"
    path.write_text("\n".join(rows) + "\n")
    assert main(["compare", str(path), "--column", "wage", "--bounds", "0", "100", "--categorical", "region",
                 "--public-categories", "region", "N,S,E,W", "--theta", "20", "--eps", "1", "--delta", "1e-3",
                 "--mechanism", "pypp", "--mechanism", "aim", "--mechanism", "mst",
                 "--mechanism", "opendp_laplace_histogram", "--bins", "10", "--runs", "2", "--seed", "3"]) == 0
    out = capsys.readouterr()
    lines = {line.split(":")[0].strip(): line for line in out.err.splitlines() if line.startswith("  ")
             and "; m = " in line}
    assert set(lines) == {"pypp", "aim", "aim_at_n", "mst", "mst_at_n", "opendp_laplace_histogram",
                          "opendp_laplace_histogram_at_n"}
    assert "m = 2,000" in lines["mst_at_n"] and "approximate (ε, δ)-DP" in lines["aim"]
    assert "pure ε-DP" in lines["opendp_laplace_histogram"]
    assert all("W1[wage]" in v and "TV[region]" in v and "k-marginal" in v and "UEM" in v for v in lines.values())
    header = out.out.splitlines()[0].split(",")
    assert {"m", "k_marginal", "k_marginal_reference", "UEM", "apparent_match", "pMSE"} <= set(header)


@needs_extra
def test_compare_page_with_a_peer_selected_shows_its_rows_and_the_yardsticks(monkeypatch):
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.session_state["runs"] = 5
    at.session_state["bins"] = 10
    at.run()
    at.switch_page("app_pages/compare.py").run()
    assert not at.exception, [e.value for e in at.exception]
    at.multiselect(key="compare_peers").select("opendp_laplace_histogram").run()
    at.radio(key="compare_peer_size").set_value("n").run()
    at.checkbox(key="compare_yardsticks").check().run()
    calibration = at.dataframe[0].value
    assert "OpenDP Laplace histogram (m = n)" in set(calibration["label"])
    at.button(key="run_compare").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert any(h.value == "The field's yardsticks (curator only)" for h in at.subheader)
    table = next(df.value for df in at.dataframe if "k_marginal_reference" in df.value.columns)
    row = table[table["label"] == "OpenDP Laplace histogram (m = n)"].iloc[0]
    n = 13_501
    assert row["m"] == n and row["k_marginal_reference"] == pytest.approx(1000.0) and row["UEM"] == 0.0
    pypp = table[table["label"] == "PYPP (σ = 0)"].iloc[0]
    assert pypp["m"] < n and 0 <= pypp["k_marginal"] <= 1000
    # without the extra the page says how to install it instead of offering the peers
    monkeypatch.setattr(peers, "_module_available", lambda name: False)
    at.run()
    assert not at.exception and any(".[peers]" in i.value for i in at.info)


def test_dense_estimator_agrees_with_private_pgm_mirror_descent():
    """The estimator behind AIM and MST (core.mechanisms.pgm.fit_marginals) against the
    reference implementation, mbi's ``estimation.mirror_descent`` (Private-PGM), on one
    measurement set of a small three-column domain: the same 2-way shares (docs/peers.md)."""
    mbi = pytest.importorskip("mbi")
    rng = np.random.default_rng(11)
    sizes = (4, 3, 5)
    joint = rng.dirichlet(np.ones(np.prod(sizes))).reshape(sizes) * 2_000
    cliques = [(0,), (1,), (2,), (0, 1), (1, 2)]
    sigma = 15.0
    measurements = []
    for clique in cliques:
        other = tuple(a for a in range(3) if a not in clique)
        marginal = joint.sum(axis=other)
        measurements.append((clique, marginal + rng.normal(0.0, sigma, marginal.shape), sigma))
    ours = pgm.fit_marginals(sizes, measurements, iters=1000)
    names = ("a", "b", "c")
    domain = mbi.Domain(names, sizes)
    theirs = mbi.estimation.mirror_descent(
        domain, [mbi.LinearMeasurement(np.asarray(y).ravel(), tuple(names[a] for a in c), stddev=s)
                 for c, y, s in measurements], iters=1000)
    for a, b in ((0, 1), (1, 2), (0, 2)):
        other = tuple(x for x in range(3) if x not in (a, b))
        share = ours.sum(axis=other)
        reference = np.asarray(theirs.project((names[a], names[b])).datavector(flatten=False)) / float(theirs.total)
        np.testing.assert_allclose(share, reference, atol=2e-4)
