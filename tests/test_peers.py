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

needs_extra = pytest.mark.skipif(not peers.peers_available(), reason="OpenDP is not installed")


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
def test_peers_at_n_release_n_records_on_the_cells_and_replay_from_the_seed():
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
    # every draw comes from the Generator: the same seed gives the same bytes (recipe replay)
    for key in ("aim", "mst", "opendp_laplace_histogram", "opendp_gaussian_histogram"):
        mech = peers.peer_mechanism(key, 1.0, 1e-3, 3, levels=(3, 2, 2))
        one, two = (mech.release(atoms, 40, np.random.default_rng(9), counts=counts[tuple(cells.T)].astype(int))
                    for _ in range(2))
        assert one.tobytes() == two.tobytes(), key


def test_missing_opendp_is_named_by_core_and_the_command_line(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(peers, "_module_available", lambda name: False)
    assert not peers.peers_available()
    with pytest.raises(ValueError, match=r"need OpenDP.*pip install -e \."):
        calibrate(1000, 1.0, 1e-3, 5, theta=2.0, mechanisms=["pypp", "aim"])
    path = tmp_path / "d.csv"
    path.write_text("x\n" + "\n".join(str(i % 7) for i in range(200)) + "\n")
    with pytest.raises(SystemExit) as stop:
        main(["compare", str(path), "--column", "x", "--bounds", "0", "10", "--theta", "2", "--eps", "1",
              "--delta", "0.01", "--m", "5", "--mechanism", "mst", "--runs", "2"])
    assert stop.value.code == 2 and "(it installs opendp)" in capsys.readouterr().err


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
    assert all("W1[wage]" in v and "TV[region]" in v and "3-way marginal" in v and "UEM" in v and "pMSE ratio" in v
               and "s/release" in v for v in lines.values())
    header = out.out.splitlines()[0].split(",")
    assert {"m", "seconds", "marginal3", "marginal3_reference", "UEM", "row_match", "pMSE_logistic", "pMSE_null",
            "pMSE_ratio", "SDNist_k_marginal", "SDNist_pMSE"} <= set(header)


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
    table = next(df.value for df in at.dataframe if "marginal3_reference" in df.value.columns)
    row = table[table["label"] == "OpenDP Laplace histogram (m = n)"].iloc[0]
    n = 13_501
    assert row["m"] == n and row["marginal3_reference"] == pytest.approx(1000.0) and row["UEM"] == 0.0
    assert row["seconds"] > 0 and row["pMSE_ratio"] >= 0 and 0 <= row["SDNist_k_marginal"] <= 1000
    pypp = table[table["label"] == "PYPP (σ = 0)"].iloc[0]
    assert pypp["m"] < n and 0 <= pypp["marginal3"] <= 1000
    # without OpenDP the page says how to install it instead of offering the peers
    monkeypatch.setattr(peers, "_module_available", lambda name: False)
    at.run()
    assert not at.exception and any("(it installs opendp)" in i.value for i in at.info)


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


# ---------------------------------------------------------------- full strength (issue 35 item 2)
def _measurement_set(seed=5, sigma=8.0):
    rng = np.random.default_rng(seed)
    sizes = (6, 5, 3, 2)
    joint = rng.dirichlet(np.full(np.prod(sizes), 0.3)).reshape(sizes) * 5_000
    log = [pgm._measure(joint, c, sigma, rng) for c in [(0,), (1,), (2,), (3,), (0, 1), (1, 2), (2, 3)]]
    return sizes, log


def test_the_estimator_stops_by_its_stated_rule_at_the_long_run_optimum():
    """The fit stops when the objective fell by less than TOL (relative to it or to the measured
    cells) over CHECK_EVERY iterations, well before the guard, at the optimum of a long fixed run."""
    sizes, log = _measurement_set()
    info = {}
    q = pgm.fit_marginals(sizes, log, info=info)
    assert info["converged"] and info["iterations"] < pgm.MAX_ITERS and info["iterations"] % pgm.CHECK_EVERY == 0
    long = {}
    q_long = pgm.fit_marginals(sizes, log, iters=pgm.MAX_ITERS // 2, info=long)
    assert long["loss"] <= info["loss"] <= long["loss"] * (1 + 1e-3)
    for pair in ((0, 1), (1, 2), (2, 3), (0, 3)):
        assert np.abs(pgm._marginal(q, pair) - pgm._marginal(q_long, pair)).sum() < 2e-3
    # a fixed count of 300 (the former setting) is far from it
    early = {}
    pgm.fit_marginals(sizes, log, iters=300, info=early)
    assert early["loss"] > info["loss"]


def test_controlled_rounding_keeps_the_table_and_adds_no_dependence():
    rng = np.random.default_rng(2)
    # exact where m·q is integral
    assert (pgm.controlled_rounding(np.ones((4, 4)), 1600, rng) == 100).all()
    # every cell gets the floor or the ceiling of its expected count, the total is m, unbiased
    q = rng.dirichlet(np.ones(60)).reshape(5, 4, 3)
    m = 997
    draws = np.stack([pgm.controlled_rounding(q, m, rng) for _ in range(2000)])
    assert (draws.sum(axis=(1, 2, 3)) == m).all()
    first = draws.sum(axis=(2, 3))
    assert (np.abs(first - m * q.sum(axis=(1, 2))) < 1).all()
    assert np.abs(draws.mean(axis=0) - m * q).max() < 0.1
    # independent columns stay independent: the rounded table is the product of its margins
    # up to the rounding (mbi 1.1.0's row-order rounding puts such columns in lockstep)
    a, b, c = rng.dirichlet(np.ones(6)), rng.dirichlet(np.ones(5)), rng.dirichlet(np.ones(4))
    product = np.einsum("i,j,k->ijk", a, b, c)
    n = 5_000
    table = pgm.controlled_rounding(product, n, rng) / n
    for pair in ((0, 1), (0, 2), (1, 2)):
        joint = pgm._marginal(table, pair)
        independent = np.outer(joint.sum(axis=1), joint.sum(axis=0))
        assert 0.5 * np.abs(joint - independent).sum() < 0.01
    with pytest.raises(ValueError, match="q must be"):
        pgm.controlled_rounding(np.zeros(3), 5, rng)


def test_mst_compresses_rare_cells_and_spreads_their_mass_back():
    rng = np.random.default_rng(4)
    table = _chain_table(rng)
    # a fourth column whose cells 2..7 are rare: below 3σ of the one-way noise
    rare = np.zeros(table.shape + (8,))
    rare[..., 0] = table * 0.6
    rare[..., 1] = table * 0.4
    rare[0, 0, 0, 2:] = 1
    rare = np.round(rare)
    info = {}
    q = pgm.mst_table(rare, 0.05, rng, info=info)
    assert info["compressed"][3] < 8 and q.shape == rare.shape and q.sum() == pytest.approx(1.0)
    merged = q[..., 2:]
    assert np.allclose(merged, merged[..., :1])      # a merged cell's mass is spread uniformly
    assert all(f["converged"] for f in info["fits"])
    # without compression the same run keeps every cell
    plain = {}
    pgm.mst_table(rare, 0.05, np.random.default_rng(4), compress=False, info=plain)
    assert plain["compressed"] == rare.shape


@needs_extra
def test_integer_laplace_is_opendps_law_drawn_from_the_generator():
    """The OpenDP Laplace histogram adds OpenDP's integer (discrete) Laplace to the counts: its
    scale from OpenDP's map for integer counts; its draws, from the Generator, of that law."""
    eps = 4.0
    scale = peers.opendp_integer_laplace_scale(eps)
    assert scale == pytest.approx(2.0 / eps, rel=1e-9)
    dp = peers._opendp()
    space = dp.vector_domain(dp.atom_domain(T=int)), dp.l1_distance(T=int)
    measurement = dp.m.make_laplace(*space, scale=scale)
    assert measurement.map(2) <= eps * (1 + 1e-12)
    x = peers.discrete_laplace(scale, 400_000, np.random.default_rng(0))
    assert x.dtype == np.int64
    alpha = math.exp(-1.0 / scale)
    for k in range(-3, 4):
        exact = (1 - alpha) / (1 + alpha) * alpha ** abs(k)
        assert np.mean(x == k) == pytest.approx(exact, abs=5 * math.sqrt(exact / 400_000) + 1e-5)
    # OpenDP's own sampler (its CSPRNG, unseeded) draws the same law: its variance 2α/(1 − α)²
    theirs = np.asarray(measurement([0] * 20_000), dtype=float)
    var = 2 * alpha / (1 - alpha) ** 2
    assert abs(theirs.var() - var) < 8 * var * math.sqrt(2.0 / 20_000) * 3
    # integer noise leaves an empty cell empty with probability tanh(1/(2s))
    mech = peers.OpenDPLaplaceHistogram(eps, 4)
    q = mech.cell_probabilities(np.array([50, 0, 0, 0]), 10, 4000, np.random.default_rng(1))
    assert np.mean(q[:, 1:] == 0) == pytest.approx(math.tanh(1 / (2 * scale)) + (1 - math.tanh(1 / (2 * scale))) / 2,
                                                   abs=0.01)


@needs_extra
def test_the_marginal_peers_offer_both_samplers():
    aim = peers.AIMMechanism(1.0, 1e-3, 3, levels=(3, 2, 2), sampler="iid")
    assert aim.sampler == "iid" and "i.i.d." in aim.knobs(100, 10, 3)[0].reason
    assert "controlled rounding" in peers.MSTMechanism(1.0, 1e-3, 3, levels=(3, 2, 2)).knobs(100, 10, 3)[0].reason
    with pytest.raises(ValueError, match="sampler"):
        peers.MSTMechanism(1.0, 1e-3, 3, sampler="lockstep")
