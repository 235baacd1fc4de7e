"""The evaluated release in core (issue 36; docs/quality.md §10): its words, its mechanism in the
comparison (PYPP in every regime, a registry entry's mechanism), the cost model, the audit hook and
the Dirichlet posterior of a σ < 0 release."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from core import data as core_data
from core.evaluation import audit as core_audit
from core.evaluation import comparison_table
from core.evaluation import compare as C
from core.evaluation import evaluated as E
from core.evaluation.dirichlet_posterior import dirichlet_column_posterior, domain_codes
from core.mechanisms import category_codes
from core.privacy import ReleaseSpec
from core.release import RELEASE_MECHANISMS

N = 2000


@pytest.fixture(scope="module")
def table():
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"age": rng.integers(18, 31, N), "sex": rng.choice(["f", "m", "x"], N, p=[.5, .4, .1])})
    specs = [core_data.ColumnSpec("age", bounds=(18, 30), grid=1.0),
             core_data.ColumnSpec("sex", kind="categorical", categories=("f", "m", "x"))]
    prepared = core_data.prepare(frame, specs)
    assert prepared.public_domain == 13 * 3
    return comparison_table(prepared)


class _Recipe:
    def __init__(self, eps, delta, bins):
        self.eps, self.delta, self.bins = eps, delta, bins


def test_pure_release_is_the_first_row_and_draws_only_public_cells(table):
    spec = ReleaseSpec(-0.5, 39 * 0.5, 10, N, eps=2.0, delta=None)
    mech = E.evaluated_mechanism(spec, table)
    g = mech.guarantee
    assert g.kind == "pure" and g.delta == 0.0
    assert g.eps == pytest.approx(float(spec.regime.release_guarantee(spec).eps))
    cal = C.calibrate(N, 2.0, 1e-3, 50, theta=2.0, d=2, bins=10, levels=table.levels, evaluated=mech)
    names = [m.name for m in cal.mechanisms]
    assert names[0] == "pypp" and names.count("pypp") == 1             # it replaces σ = 0 PYPP
    assert cal.mechanisms[0].label == "PYPP (Dirichlet–multinomial, σ = -0.5)"
    out = C.run_comparison(table, cal, runs=20, rng=np.random.default_rng(1))
    assert set(out.loc[out["mechanism"] == "pypp", "m"]) == {10}   # its own m
    z = mech.release_runs(table.atoms, 10, 50, np.random.default_rng(2), counts=table.counts)
    grid = np.linspace(0.0, 1.0, 13)
    assert np.isin(np.round(z[..., 0], 12), np.round(grid, 12)).all()      # ages on the public grid only
    assert (category_codes(z[..., 1], 3) < 3).all()                           # listed categories only


def test_every_regime_runs_and_states_its_guarantee(table):
    for spec in (ReleaseSpec(0.0, 2.0, 30, N, eps=2.0, delta=0.05), ReleaseSpec(0.4, 2.0, 30, N, eps=2.0, delta=0.05)):
        mech = E.evaluated_mechanism(spec, table)
        z = mech.release_runs(table.atoms, 30, 3, np.random.default_rng(0), counts=table.counts)
        assert z.shape == (3, 30, 2) and np.isfinite(z).all()
    assert E.evaluated_mechanism(ReleaseSpec(0.0, 2.0, 30, N, eps=2.0, delta=0.05), table).guarantee.delta == \
        pytest.approx(30 / (30 + 2.0 + N - 1))                                 # δ = T₁ (σ = 0)
    assert E.evaluated_mechanism(ReleaseSpec(0.4, 2.0, 30, N, eps=2.0, delta=0.05), table).guarantee.kind == "none"


def test_a_pure_release_off_the_comparisons_domain_is_refused_in_words(table):
    with pytest.raises(ValueError, match="public cells"):
        E.evaluated_mechanism(ReleaseSpec(-0.5, 40 * 0.5, 10, N, eps=2.0, delta=None), table)


def test_a_registry_entry_builds_the_peer_row(table):
    entry = RELEASE_MECHANISMS["laplace_histogram"]
    mech = E.evaluated_mechanism(_Recipe(1.0, None, 10), table, entry)
    assert mech.name == "laplace_histogram" and mech.release_size == N and core_audit.auditable(mech)
    cal = C.calibrate(N, 1.0, 1e-3, 50, theta=2.0, d=2, bins=10, levels=table.levels, evaluated=mech)
    assert [m.name for m in cal.mechanisms].count("laplace_histogram") == 1 and cal.mechanisms[0] is mech
    with pytest.raises(ValueError, match="registry entry"):
        E.evaluated_mechanism(_Recipe(1.0, None, 10), table)


def test_describe_release_and_estimate(table):
    spec = ReleaseSpec(-0.5, 19.5, 10, N, eps=2.0, delta=None)
    words = E.describe_release(spec, spec.regime.release_guarantee(spec))
    assert words.startswith("PYPP — Dirichlet–multinomial") and "σ = -0.5" in words and "m = 10" in words
    assert "verdict **" in words
    cal = C.calibrate(N, 2.0, 1e-3, 50, theta=2.0, d=2, bins=10, levels=table.levels,
                      evaluated=E.evaluated_mechanism(spec, table))
    est = E.estimate_seconds(cal.mechanisms, cal.m, 100, 2)
    assert est["total"] == pytest.approx(sum(v for k, v in est.items() if k != "total"))
    total = [E.estimate_seconds(cal.mechanisms, cal.m, r, 2)["total"] for r in (1, 101, 201)]
    assert total[2] - total[1] == pytest.approx(total[1] - total[0])   # linear in R
    assert est["total"] < total[2]
    with pytest.raises(ValueError, match="runs"):
        E.estimate_seconds(cal.mechanisms, cal.m, 0, 2)


def test_dirichlet_posterior_is_the_conjugate_update():
    domain = np.array([0.0, 1.0, 2.0])
    released = np.array([0, 0, 1, 2, 2, 2])
    out = dirichlet_column_posterior(domain, released, 0.5, numeric=True, draws=20_000,
                                     rng=np.random.default_rng(0), threshold=0.5,
                                     confidential_codes=[0, 1, 2], confidential_counts=[2, 1, 3])
    a = 0.5 + np.bincount(released, minlength=3)          # Dir(α + c(Z))
    mean = out.set_index("quantity").loc["mean", "posterior mean"]
    assert mean == pytest.approx(float(a @ domain / a.sum()), abs=0.02)
    above = out.set_index("quantity").loc["P(X > 0.5)", "posterior mean"]
    assert above == pytest.approx(float(a[1:].sum() / a.sum()), abs=0.01)
    assert {"confidential", "covered"} <= set(out.columns)
    shares = dirichlet_column_posterior(["a", "b"], [0, 0, 1], 1.0, numeric=False, draws=100,
                                        rng=np.random.default_rng(0))
    assert list(shares["quantity"]) == ["P(X = a)", "P(X = b)"]
    assert list(domain_codes(domain, [0.1, 1.6, 2.0], numeric=True)) == [0, 2, 2]
    assert list(domain_codes(["a", None], [None, "a", math.nan], numeric=False)) == [1, 0, 1]
    with pytest.raises(ValueError, match="public domain"):
        domain_codes(["a"], ["b"], numeric=False)


def test_dirichlet_posterior_with_missing_kept_as_a_value():
    """A numeric column keeping missing cells as a value: the missing cell is one more public cell
    (docs/mathematics.md §2.5). A missing number is that cell's code, never the top grid point; the
    numeric summaries are the present values' (E[Σ_present p_j x_j / Σ_present p_j]) and P(missing)
    is Dir's marginal mean (α + c_missing)/(Σ α + m)."""
    domain = np.array([0.0, 1.0, 2.0])
    assert list(domain_codes(domain, [0.1, math.nan, 2.0], numeric=True, missing=True)) == [0, 3, 2]
    with pytest.raises(ValueError, match="missing"):
        domain_codes(domain, [math.nan], numeric=True)
    released = np.array([0, 3, 3, 3, 2, 2])                   # three missing cells released
    out = dirichlet_column_posterior(domain, released, 0.5, numeric=True, missing=True, draws=40_000,
                                     rng=np.random.default_rng(1), threshold=0.5,
                                     confidential_codes=[0, 1, 2, 3], confidential_counts=[2, 1, 3, 4])
    rows = out.set_index("quantity")
    a = 0.5 + np.bincount(released, minlength=4)
    assert rows.loc["P(missing)", "posterior mean"] == pytest.approx(a[3] / a.sum(), abs=0.005)
    draws = np.random.default_rng(2).dirichlet(a, size=200_000)
    present = draws[:, :3] / draws[:, :3].sum(axis=1, keepdims=True)
    assert rows.loc["mean", "posterior mean"] == pytest.approx(float(np.mean(present @ domain)), abs=0.01)
    # the confidential values are the present records' (2, 1, 3 of 6) and the missing share 4/10
    assert rows.loc["mean", "confidential"] == pytest.approx((0 * 2 + 1 * 1 + 2 * 3) / 6)
    assert rows.loc["P(missing)", "confidential"] == pytest.approx(0.4)


def test_runs_within_is_the_largest_r_whose_estimate_fits(table):
    cal = C.calibrate(table.n, 1.0, 1e-3, 50, theta=2.0, bins=5, mechanisms=["pypp", "laplace_histogram"])
    choices = range(5, 201, 5)
    total = {r: E.estimate_seconds(cal.mechanisms, cal.m, r, table.d)["total"] for r in choices}
    budget = (total[40] + total[45]) / 2                      # between R = 40 and R = 45
    assert E.runs_within(budget, cal.mechanisms, cal.m, table.d, choices=choices) == 40
    assert E.runs_within(total[5] / 2, cal.mechanisms, cal.m, table.d, choices=choices) is None
    with pytest.raises(ValueError, match="seconds"):
        E.runs_within(0.0, cal.mechanisms, cal.m, table.d, choices=choices)


def test_a_pure_release_keeping_missing_numbers_is_compared_on_the_records_with_a_number():
    """σ < 0 over a grid whose missing cell is a value of the release: the comparison leaves out the
    records without a number, so the release's mechanism runs there over the grid's points with the
    same α per cell (θ = z'·α), and never releases a missing number into the distances."""
    rng = np.random.default_rng(5)
    ages = pd.array(rng.integers(18, 31, N), dtype="Int64")
    ages[rng.choice(N, 60, replace=False)] = pd.NA
    frame = pd.DataFrame({"age": ages, "sex": rng.choice(["f", "m", "x"], N)})
    specs = [core_data.ColumnSpec("age", bounds=(18, 30), grid=1.0, missing="value"),
             core_data.ColumnSpec("sex", kind="categorical", categories=("f", "m", "x"))]
    prepared = core_data.prepare(frame, specs)
    assert prepared.public_domain == (13 + 1) * 3
    compared = comparison_table(prepared)
    assert compared.n == N - 60
    spec = ReleaseSpec(-1.0, 42.0, 500, N, eps=7.0, delta=None)
    mech = E.evaluated_mechanism(spec, compared)
    assert mech.theta == 39.0
    out = mech.release_runs(compared.atoms, 500, 20, np.random.default_rng(0), counts=compared.counts)
    assert np.isfinite(out).all()
