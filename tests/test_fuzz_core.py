"""Hypothesis fuzzing of every public function of ``core`` (issue 9).

Each test draws arguments that mix admissible values with awkward ones (NaN, ±inf, 0,
negatives, subnormals, ±1e308, huge integers, wrong types, empty and ragged arrays) and
asserts the contract of SPEC §7 and the guide:

* a call either returns or raises ``ValueError`` (``TypeError`` for a wrong type) with a
  message — never another exception, a hang or a runaway allocation;
* whatever a call returns is sane: no NaN, probabilities in [0, 1], sizes that add up;
* every call finishes within ``HARD_LIMIT_SECONDS`` (a SIGALRM watchdog; Hypothesis'
  per-example deadline catches the merely slow) and within ``MEMORY_HEADROOM`` bytes of
  new address space (``RLIMIT_AS`` while this module runs: a runaway allocation becomes
  a ``MemoryError``, which fails the test).

The examples are derandomised (the "deterministic" profile of ``tests/conftest.py``).
Known failures of modules owned elsewhere (core.privacy, core.data) are marked
``xfail(strict=True)`` with the precise failure, so a fix turns them into errors until the
mark is removed.
"""

from __future__ import annotations

import contextlib
import io
import math
import resource
import signal
import warnings
from datetime import timedelta

import mpmath
import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from core import mechanisms as B
from core.evaluation import compare as C
from core import data as D
from core import evaluation as I
from core.evaluation import informativity as F
from core import mechanisms as M
from core import plots as P
from core.plots import experiments as PE
from core import privacy as PR
from core.evaluation import simulation as S
from core import evaluation as U
from core import validation as V

HARD_LIMIT_SECONDS = 20
MEMORY_HEADROOM = 3 * 2**30
ACCEPTED = (ValueError, TypeError)


def fuzz(examples: int):
    """Settings of one fuzz test: derandomised, a per-example deadline, no slow-data health checks."""
    return settings(max_examples=examples, derandomize=True, deadline=timedelta(seconds=10),
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                           HealthCheck.data_too_large, HealthCheck.large_base_example])


class HardTimeout(Exception):
    """A call ran past HARD_LIMIT_SECONDS (a hang); never caught by the code under test."""


@contextlib.contextmanager
def bounded(seconds: float = HARD_LIMIT_SECONDS):
    def on_alarm(signum, frame):
        raise HardTimeout(f"call did not finish within {seconds} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _address_space() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * resource.getpagesize()


@pytest.fixture(scope="module", autouse=True)
def memory_cap():
    """Cap the address space at its current size plus MEMORY_HEADROOM while this module runs."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = _address_space() + MEMORY_HEADROOM
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def attempt(fn, *args, **kwargs):
    """``(True, result)``, or ``(False, None)`` after a ValueError/TypeError with a message.

    Any other exception (OverflowError, ZeroDivisionError, IndexError, MemoryError,
    AttributeError, HardTimeout, …) propagates and fails the test.
    """
    with bounded():
        try:
            return True, fn(*args, **kwargs)
        except ACCEPTED as exc:
            assert str(exc).strip(), f"{type(exc).__name__} without a message"
            return False, None


# ------------------------------------------------------------------------------ strategies
AWKWARD_SCALARS = [math.nan, math.inf, -math.inf, 0, 0.0, -0.0, -1, -2.5, 5e-324, 1e-308, 1e-300, 1e300,
                   1e308, -1e308, 2.5, 10**30, 2**63, -(2**63), None, "1", True, 1 + 1j]
awkward = st.sampled_from(AWKWARD_SCALARS)


def maybe(valid):
    """Mostly admissible values, sometimes an awkward one."""
    return st.one_of(valid, valid, valid, awkward)


any_float = st.floats(allow_nan=True, allow_infinity=True, width=64)
moderate = st.floats(-1e3, 1e3, allow_nan=False)
eps_values = maybe(st.floats(0.01, 20.0))
delta_values = maybe(st.floats(1e-12, 0.5))


def log_uniform(lo: float, hi: float):
    """Floats spread evenly over the orders of magnitude of [lo, hi]."""
    return st.floats(math.log(lo), math.log(hi)).map(lambda t: min(hi, max(lo, math.exp(t))))
theta_values = maybe(st.floats(0.05, 50.0))
small_m = maybe(st.integers(1, 300))
# ε near and beyond the float range of e^ε (expm1 overflows at ~709.78), and ε as arrays of any shape
huge_eps = st.one_of(st.floats(690.0, 720.0), st.sampled_from([1e3, 1e308, math.inf]))
eps_arrays = st.one_of(st.floats(0.01, 20.0).map(np.asarray),
                       st.lists(st.floats(0.01, 800.0), min_size=1, max_size=3).map(np.asarray),
                       st.lists(st.floats(0.01, 800.0), min_size=4, max_size=4).map(lambda v: np.reshape(v, (2, 2))))
huge_theta = st.floats(math.log(1e-3), math.log(1e300)).map(math.exp)
# data with a single distinct value (k = 1): one neighbour type only
one_distinct_value = st.integers(1, 40).map(lambda v: [v])
multiplicity_lists = st.one_of(
    st.lists(st.integers(1, 40), min_size=1, max_size=12),
    st.lists(st.integers(1, 40), min_size=1, max_size=12),
    st.sampled_from([[], [0], [1.5], [math.nan], [[1, 2]], ["a"], [2**62, 2**62], [-3], [10**18], [2**53]]),
)
float_lists = st.one_of(
    st.lists(moderate, min_size=0, max_size=25),
    st.lists(moderate, min_size=2, max_size=25),
    st.lists(any_float, min_size=0, max_size=10),
    st.sampled_from([[1e308, -1e308, 0.0], [0.0, 1e-308, 2e-308], [5e-324, 0.0, 5e-324], [3.0, 3.0, 3.0],
                     [1e140, -1e140], [1e141, 0.0], [1e-200, 2e-200, 3e-200], [0.0, 1e-141, 2e-141, 3e-141],
                     [7.0], []]),
)
unit_lists = st.lists(st.floats(0.0, 1.0), min_size=1, max_size=25)
rngs = st.builds(np.random.default_rng, st.integers(0, 2**32 - 1))
maybe_rng = st.one_of(rngs, rngs, rngs, st.sampled_from([None, 0, np.random]))


def finite_nonneg(x) -> bool:
    arr = np.asarray(x, dtype=float)
    return bool(np.all(np.isfinite(arr)) and np.all(arr >= 0))


def probability(x) -> bool:
    arr = np.asarray(x, dtype=float)
    return bool(np.all(np.isfinite(arr)) and np.all(arr >= 0) and np.all(arr <= 1))


@st.composite
def py_parameters(draw, k=1):
    """(sigma, theta) in one of the three regimes, sometimes inadmissible or awkward."""
    regime = draw(st.sampled_from(["dp", "py", "dm", "bad"]))
    if regime == "dp":
        return 0.0, draw(theta_values)
    if regime == "py":
        return draw(st.floats(0.01, 0.9)), draw(maybe(st.floats(0.1, 20.0)))
    if regime == "dm":
        sigma = -draw(st.floats(0.01, 3.0))
        z = draw(st.integers(max(k, 1), max(k, 1) + 60))
        return sigma, z * abs(sigma)
    return draw(awkward), draw(awkward)


# =============================================================================== privacy
@fuzz(300)
@given(m=maybe(st.integers(1, 200)), a=maybe(st.floats(1e-300, 1e6)), b=maybe(st.floats(1e-300, 1e6)),
       s_min=maybe(st.integers(0, 200)))
def test_privacy_beta_binomial_log_tail(m, a, b, s_min):
    ok, out = attempt(PR.beta_binomial_log_tail, m, a, b, s_min)
    if ok:
        out = np.asarray(out)
        assert not np.any(np.isnan(out)), "NaN log tail"
        assert np.all(out <= 0.0), f"log-probability above 0: {out.max()!r}"


@fuzz(300)
@given(mult=st.one_of(multiplicity_lists, one_distinct_value), params=py_parameters(k=12), m=small_m,
       eps=st.one_of(eps_values, huge_eps, eps_arrays))
def test_privacy_instance_delta(mult, params, m, eps):
    sigma, theta = params
    ok, out = attempt(PR.instance_delta, mult, sigma, theta, m, eps, n_mc=200, seed=1)
    if ok:
        assert probability(out), out
        assert np.shape(out) == np.shape(eps)


@fuzz(150)
@given(mult=st.one_of(multiplicity_lists, one_distinct_value), sigma=maybe(st.floats(0.0, 0.9)),
       theta=maybe(st.floats(0.1, 20.0)), m=maybe(st.integers(1, 60)), eps=st.one_of(eps_values, huge_eps, eps_arrays))
def test_privacy_old_values_delta(mult, sigma, theta, m, eps):
    ok, out = attempt(PR.old_values_delta, mult, sigma, theta, m, eps, n_mc=200, seed=1)
    if ok:
        assert probability(out), out


@fuzz(300)
@given(mult=multiplicity_lists, theta=theta_values, m=small_m,
       eps=st.one_of(eps_values, st.lists(st.floats(0.01, 800.0), min_size=1, max_size=5)))
def test_privacy_tight_instance_delta(mult, theta, m, eps):
    ok, out = attempt(PR.tight_instance_delta, mult, theta, m, eps)
    if ok:
        assert probability(out), out


@fuzz(300)
@given(n=maybe(st.one_of(st.integers(1, 10**4), st.integers(1, 10**12))), theta=st.one_of(theta_values, huge_theta),
       m=small_m, eps=st.one_of(eps_values, huge_eps, eps_arrays))
def test_privacy_global_delta_and_simple_bound(n, theta, m, eps):
    ok, out = attempt(PR.global_delta, n, theta, m, eps)
    if ok:
        assert probability(out), out
    ok, out = attempt(PR.global_delta_simple_bound, n, theta, m, eps)
    if ok:
        assert probability(out), out


@fuzz(40)
@given(n=st.sampled_from([1, 10, 10**18]), m=st.sampled_from([10**12, 10**15]), eps=st.sampled_from([0.5, 5.0]))
def test_privacy_global_delta_huge_sizes(n, m, eps):
    ok, out = attempt(PR.global_delta, n, 2.0, m, eps)
    if ok:
        assert probability(out), out


@fuzz(300)
@given(n=maybe(st.one_of(st.integers(1, 10**5), st.integers(1, 10**12))), theta=st.one_of(theta_values, huge_theta),
       delta=delta_values, eps=st.one_of(eps_values, huge_eps))
def test_privacy_singleton_limit_and_max_synthetic_size(n, theta, delta, eps):
    ok, out = attempt(PR.singleton_limit, n, theta, delta)
    if ok:
        assert isinstance(out, int) and out >= 0
    ok, out = attempt(PR.max_synthetic_size, n, theta, eps, delta)
    if ok:
        assert isinstance(out, int) and out >= 0


@fuzz(30)
@given(theta=st.sampled_from([1e18, 1e300]), delta=st.sampled_from([1e-3, 0.99999999]))
def test_privacy_singleton_limit_huge(theta, delta):
    ok, out = attempt(PR.singleton_limit, 10, theta, delta)
    if ok:
        assert isinstance(out, int) and out >= 0
    ok, out = attempt(PR.max_synthetic_size, 10, theta, 1.0, delta)
    if ok:
        assert isinstance(out, int) and out >= 0


@fuzz(150)
@given(mult=multiplicity_lists, theta=theta_values, delta=delta_values,
       eps=st.one_of(eps_values, st.lists(st.floats(0.05, 10.0), min_size=1, max_size=3)),
       m_cap=maybe(st.integers(1, 2000)))
def test_privacy_max_instance_synthetic_size_and_curve(mult, theta, delta, eps, m_cap):
    ok, out = attempt(PR.max_instance_synthetic_size, mult, theta, eps, delta, m_cap=m_cap)
    if ok:
        assert isinstance(out, int) and 0 <= out <= m_cap
    ok, out = attempt(PR.synthetic_size_curve, 50, theta, eps, delta, multiplicities=mult, m_cap=m_cap)
    if ok:
        assert np.all(np.asarray(out) >= 0)
    ok, out = attempt(PR.synthetic_size_curve, 50, theta, eps, delta, m_cap=m_cap)   # the global curve
    if ok:
        assert np.all(np.asarray(out) >= 0)


@fuzz(300)
@given(mult=multiplicity_lists, alpha=maybe(st.floats(1e-6, 1e3)), m=small_m, instance=st.booleans())
def test_privacy_dirichlet_multinomial_pure_epsilon(mult, alpha, m, instance):
    ok, out = attempt(PR.dirichlet_multinomial_pure_epsilon, mult, alpha, m, instance=instance)
    if ok:
        assert math.isfinite(out) and out > 0


@fuzz(120)
@given(mult=multiplicity_lists, sigma=maybe(st.floats(0.05, 0.9)), theta=maybe(st.floats(0.1, 10.0)),
       m=maybe(st.integers(1, 60)), eps=eps_values, n_mc=maybe(st.integers(1, 100)), rng=maybe_rng,
       confidence=maybe(st.floats(0.5, 0.99)))
def test_privacy_monte_carlo_delta(mult, sigma, theta, m, eps, n_mc, rng, confidence):
    ok, out = attempt(PR.monte_carlo_delta, mult, sigma, theta, m, eps, n_mc=n_mc, rng=rng, confidence=confidence)
    if ok:
        assert probability(out.upper) and probability(out.estimate)
        assert np.all(out.upper >= out.estimate)


@fuzz(200)
@given(params=py_parameters(), m=small_m, n=maybe(st.integers(1, 100)))
def test_privacy_release_spec(params, m, n):
    ok, spec = attempt(PR.ReleaseSpec, params[0], params[1], m, n)
    if ok:
        assert spec.regime.name in ("dirichlet-process", "pitman-yor", "dirichlet-multinomial")
        assert spec.regime is PR.regime_of(spec.sigma)


# ================================================================================== data
csv_texts = st.one_of(
    st.binary(max_size=200),
    st.lists(st.lists(st.sampled_from(["1", "2.5", "a", "", "NA", "1e308", "-1e308", "99999999999999999999",
                                       '"x,y"', " 3 ", "nan", "inf", "TRUE"]), min_size=1, max_size=4),
             min_size=0, max_size=6).map(
        lambda rows: "\n".join(",".join(r) for r in rows).encode()),
    st.sampled_from([b"", b"a,b\n", b"a\n1\n", b"\x1f\x8b\x08\x00", b"a;b\n1;2\n3;4\n", b"a\tb\n1\t2\n",
                     b"\xef\xbb\xbfa,b\r\n1,2\r\n", "a,b\n\xe9,1\n".encode("latin-1"), b"a,b\n1,2,\n"]),
)


@fuzz(300)
@given(raw=csv_texts)
def test_data_read_csv(raw):
    ok, out = attempt(D.read_csv, io.BytesIO(raw), max_bytes=10_000)
    if ok:
        frame = getattr(out, "frame", out)
        assert isinstance(frame, pd.DataFrame) and frame.shape[0] >= 1 and frame.shape[1] >= 1


value_lists = st.one_of(
    st.lists(st.integers(-5, 5), min_size=0, max_size=30),
    st.lists(moderate, min_size=1, max_size=30),
    st.lists(st.sampled_from(["a", "b", "NA", "", None, 1, 2.5, math.nan]), min_size=1, max_size=20),
    st.lists(any_float, min_size=1, max_size=10),
)


@fuzz(300)
@given(values=value_lists)
def test_data_frequency_table(values):
    ok, table = attempt(D.frequency_table, np.asarray(values, dtype=object) if any(
        isinstance(v, str) or v is None for v in values) else np.asarray(values))
    if ok:
        assert table.n == len(values) and table.counts.sum() == len(values) and np.all(table.counts >= 1)


@fuzz(200)
@given(values=st.lists(moderate, min_size=1, max_size=30),
       decimals=st.lists(st.one_of(st.integers(-20, 20), st.none(), awkward), min_size=1, max_size=4))
def test_data_rounding_profile(values, decimals):
    ok, out = attempt(D.rounding_profile, values, decimals)
    if ok:
        assert isinstance(out, pd.DataFrame)


@fuzz(200)
@given(values=st.lists(st.one_of(moderate, st.sampled_from([1e308, -1e308, 1e-308, 0.0])), min_size=1, max_size=20),
       bounds=st.one_of(st.none(), st.tuples(maybe(moderate), maybe(moderate))),
       decimals=st.one_of(st.none(), maybe(st.integers(-3, 6))), log=st.booleans(), scale=st.booleans())
def test_data_prepare_numeric(values, bounds, decimals, log, scale):
    frame = pd.DataFrame({"x": values})
    ok, spec = attempt(D.ColumnSpec, "x", "numeric", log=log, bounds=bounds, decimals=decimals, scale=scale)
    if not ok:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", V.PrivacyLeakWarning)  # bounds read off the data: expected here
        ok, prepared = attempt(D.prepare, frame, [spec])
    if ok:
        assert prepared is not None


# ============================================================================ mechanisms
@fuzz(300)
@given(customers=st.one_of(maybe(st.integers(0, 500)), st.lists(st.integers(0, 300), max_size=5),
                           st.sampled_from([10**8, [1, -1], [[1]], 2.5, [math.nan]])),
       sigma=maybe(st.floats(0.0, 0.95)), strength=maybe(st.floats(1e-3, 1e3)), rng=maybe_rng,
       sizes=st.booleans())
def test_mechanisms_crp_tables(customers, sigma, strength, rng, sizes):
    ok, out = attempt(PR.crp_tables, customers, sigma, strength, rng, return_sizes=sizes)
    if not ok:
        return
    total = np.asarray(customers).sum()
    if sizes:
        assert np.all(out[-1] >= 1) and out[-1].sum() == total
    tables = out[0] if sizes else out
    assert np.all(np.asarray(tables) >= 0) and np.all(np.asarray(tables) <= np.asarray(customers))


@fuzz(300)
@given(mult=multiplicity_lists, params=py_parameters(k=12),
       m=st.one_of(small_m, st.sampled_from([10**7 + 1, 10**12, 10**19])), rng=maybe_rng)
def test_mechanisms_py_predictive_counts(mult, params, m, rng):
    ok, out = attempt(M.py_predictive_counts, mult, params[0], params[1], m, rng)
    if ok:
        old, new = out
        assert old.shape == (len(mult),) and np.all(old >= 0) and np.all(new >= 1)
        assert old.sum() + new.sum() == m


@fuzz(20)
@given(seed=st.integers(0, 100), z=st.sampled_from([10**6, 10**9, 2**53]), alpha=st.sampled_from([1e-3, 1.0, 5.0]))
def test_mechanisms_many_public_categories_without_allocating_z(seed, z, alpha):
    # σ < 0 with z up to 2**53 public categories: memory O(K log z), never O(z).
    rng = np.random.default_rng(seed)
    ok, out = attempt(M.py_predictive_counts, [5, 1, 2], -alpha, z * alpha, 10_000, rng)
    assert ok
    old, new = out
    assert old.sum() + new.sum() == 10_000 and np.all(new >= 1) and new.size <= min(10_000, z)


@fuzz(200)
@given(k=st.integers(1, 6), d=st.sampled_from([None, 1, 2]), params=py_parameters(k=6), m=small_m,
       rng=rngs, kind=st.sampled_from(["uniform", "categorical", "none", "bad"]),
       decimals=st.one_of(st.none(), maybe(st.integers(0, 5))))
def test_mechanisms_pypp_release(k, d, params, m, rng, kind, decimals):
    atoms = np.arange(k, dtype=float) / k if d is None else np.arange(k * d, dtype=float).reshape(k, d)
    mult = np.arange(1, k + 1)
    width = 1 if d is None else d
    if kind == "uniform":
        base = D.UniformBase(0.0, 10.0)
    elif kind == "categorical":
        base = D.CategoricalBase(tuple(f"c{i}" for i in range(20)))
    elif kind == "none":
        base = None
    else:
        base = [D.UniformBase(0, 1)] * (width + 1)
    ok, rel = attempt(M.pypp_release, atoms, mult, params[0], params[1], m, rng, base=base,
                      decimals=decimals if kind == "uniform" else None)
    if ok:
        assert rel.m == m and rel.values.shape[0] == m
        assert rel.old_counts.sum() + rel.new_counts.sum() == m


@fuzz(300)
@given(lo=maybe(moderate), hi=maybe(moderate), size=maybe(st.integers(0, 100)), rng=maybe_rng,
       categories=st.one_of(st.none(), st.lists(st.sampled_from("abcdefgh"), unique=True, min_size=1).map(tuple)))
def test_mechanisms_base_measures(lo, hi, size, rng, categories):
    ok, base = attempt(D.UniformBase, lo, hi)
    if ok:
        ok, out = attempt(base.sample, size, rng)
        if ok:
            assert out.shape == (size,) and np.all((out >= base.lo) & (out <= base.hi))
    ok, out = attempt(D.CategoricalBase(categories).sample, size, rng)
    if ok:   # iid uniform over the public list (repeats allowed), or distinct fresh labels
        assert out.shape == (size,)
        assert set(out.tolist()) <= set(categories) if categories else len(set(out.tolist())) == size


# ============================================================================= baselines
@fuzz(300)
@given(eps=maybe(log_uniform(1e-6, 1e4)), delta=maybe(log_uniform(1e-300, 0.5)), sens=maybe(log_uniform(1e-6, 1e6)))
def test_baselines_gaussian_sigma_and_delta(eps, delta, sens):
    ok, s = attempt(B.gaussian_sigma, eps, delta, sens)
    if ok:
        assert math.isfinite(s) and s >= 0
        if s > 0:
            ok, d = attempt(PR.gaussian_delta, s, eps, sens)
            assert ok and probability(d) and d <= delta      # safe side, exactly


@fuzz(300)
@given(n=maybe(st.integers(1, 2**53)), cells=maybe(st.integers(1, 2**53)), m=maybe(st.integers(1, 2**53)),
       eps=st.one_of(eps_values, log_uniform(1e-6, 700.0), st.sampled_from([1e300, 1e-300, 700.0, math.inf])),
       lam=maybe(st.floats(1e-300, 1.0)))
def test_baselines_smoothed_histogram(n, cells, m, eps, lam):
    ok, out = attempt(B.smoothed_histogram_lambda, n, cells, m, eps)
    if ok:
        assert probability(out)
        if 0 < out and math.isfinite(eps):
            ok, achieved = attempt(PR.smoothed_histogram_epsilon, n, cells, m, out)
            assert ok and achieved <= eps
            # λ is never below the exact λ_min = k_B / (k_B + n·expm1(ε/m)) (50 digits)
            with mpmath.workdps(50):
                assert mpmath.mpf(out) >= cells / (cells + n * mpmath.expm1(mpmath.mpf(eps) / m))
    ok, out = attempt(PR.smoothed_histogram_epsilon, n, cells, m, lam)
    if ok:
        assert out >= 0 and not math.isnan(out)


@fuzz(150)
@given(alpha=st.one_of(maybe(st.floats(1e-10, 1e10)), st.lists(st.floats(1e-3, 1e3), min_size=1, max_size=3)),
       delta=delta_values, l2_sq=maybe(st.floats(0.1, 10.0)), linf=maybe(st.floats(0.1, 10.0)))
def test_baselines_dirichlet_sampling_epsilon(alpha, delta, l2_sq, linf):
    ok, out = attempt(B.dirichlet_sampling_epsilon, alpha, delta, l2_sq=l2_sq, linf=linf)
    if ok:
        assert finite_nonneg(out) and np.all(np.asarray(out) > 0)


@fuzz(100)
@given(eps=maybe(st.floats(1e-3, 1e3)), delta=delta_values)
def test_baselines_dirichlet_sampling_alpha(eps, delta):
    ok, alpha = attempt(PR.dirichlet_sampling_alpha, eps, delta)
    if ok:
        assert PR.DIRICHLET_ALPHA_RANGE[0] <= alpha <= PR.DIRICHLET_ALPHA_RANGE[1]
        assert B.dirichlet_sampling_epsilon(alpha, delta) <= eps


@fuzz(300)
@given(eps=maybe(log_uniform(1e-6, 1e4)), m=maybe(st.integers(1, 10**9)))
def test_baselines_dirichlet_multinomial_alpha(eps, m):
    ok, alpha = attempt(PR.dirichlet_multinomial_alpha, eps, m)
    if ok:
        assert math.isfinite(alpha) and alpha > 0
        with mpmath.workdps(50):     # global ε-DP iff m ≤ (e^ε − 1)·α, exactly
            assert mpmath.expm1(mpmath.mpf(eps)) * mpmath.mpf(alpha) >= m


@fuzz(200)
@given(cells=maybe(st.integers(1, 10**6)), slack=st.one_of(log_uniform(1e-300, 1e-3), st.floats(0.0, 1.0)),
       eps=maybe(log_uniform(1e-300, 700.0)))
def test_baselines_truncated_dirichlet_p_min_and_epsilon(cells, slack, eps):
    ok, p = attempt(PR.truncated_dirichlet_p_min, eps, cells)
    if ok:
        assert 0 < p <= 1 / cells
        ok, achieved = attempt(PR.truncated_dirichlet_epsilon, p, cells)
        assert ok and achieved <= eps
    if isinstance(cells, int) and cells >= 1:
        ok, out = attempt(PR.truncated_dirichlet_epsilon, (1 - slack) / cells, cells)
        if ok:
            assert out >= 0 and not math.isnan(out)


@fuzz(200)
@given(data=st.one_of(unit_lists, st.lists(st.lists(st.floats(0, 1), min_size=2, max_size=2), min_size=1,
                                             max_size=10), float_lists),
       bins=maybe(st.integers(1, 30)))
def test_baselines_histogram_counts(data, bins):
    ok, counts = attempt(B.histogram_counts, data, bins)
    if ok:
        assert counts.sum() == len(data) and np.all(counts >= 0)


@fuzz(200)
@given(counts=st.one_of(st.lists(st.lists(st.integers(0, 5), min_size=4, max_size=4), min_size=1, max_size=3),
                        st.sampled_from([[[1, -1, 0, 0]], [[0, 0, 0, 0]], [[1, 0, 0, 0], [2, 0, 0, 0]], [[1.5, 0, 0, 0]],
                                         [[10**8, 0, 0, 0]], []])),
       bins=st.sampled_from([2, 4, 3, 0]), d=st.sampled_from([1, 2, 0]), rng=maybe_rng)
def test_baselines_cells_to_points(counts, bins, d, rng):
    ok, points = attempt(B.cells_to_points, counts, bins, d, rng)
    if ok:
        assert np.all((points >= 0) & (points <= 1))


@fuzz(150)
@given(name=st.sampled_from(["laplace", "gaussian", "smoothed", "dm", "dm-dd", "dps", "bootstrap"]),
       eps=maybe(st.floats(0.1, 10.0)), delta=delta_values, bins=maybe(st.integers(1, 12)),
       data=st.one_of(unit_lists, float_lists), m=st.one_of(maybe(st.integers(1, 50)), st.just(10**7 + 1)),
       runs=maybe(st.integers(1, 4)), rng=maybe_rng)
def test_baselines_mechanisms_release(name, eps, delta, bins, data, m, runs, rng):
    build = {"laplace": lambda: B.LaplaceHistogram(eps, bins),
             "gaussian": lambda: B.GaussianHistogram(eps, delta, bins),
             "smoothed": lambda: B.SmoothedHistogram(eps, bins),
             "dm": lambda: B.DirichletMultinomialHistogram(eps, bins),
             "dm-dd": lambda: B.DirichletMultinomialHistogram(eps, bins, alpha_rule="data-dependent"),
             "dps": lambda: B.DirichletPosteriorSampling(eps, delta, bins),
             "bootstrap": lambda: B.Bootstrap()}[name]
    ok, mech = attempt(build)
    if not ok:
        return
    ok, label = attempt(lambda: mech.guarantee.label)
    assert ok and isinstance(label, str)
    ok, knobs = attempt(mech.knobs, max(1, len(data)), m if isinstance(m, int) else 1)
    if ok:
        assert all(not math.isnan(k.value) for k in knobs)
    ok, out = attempt(mech.release_runs, data, m, runs, rng)
    if ok:
        assert out.shape[:2] == (runs, m) and np.all((out >= 0) & (out <= 1))


# =============================================================================== utility
@fuzz(300)
@given(a=float_lists, b=float_lists, wa=st.one_of(st.none(), float_lists), n_proj=maybe(st.integers(1, 50)))
def test_utility_wasserstein1(a, b, wa, n_proj):
    ok, out = attempt(U.wasserstein1, a, b, wa, n_projections=n_proj)
    if ok:
        assert math.isfinite(out) and out >= -1e-12


@fuzz(300)
@given(samples=st.one_of(st.lists(st.lists(moderate, min_size=3, max_size=3), min_size=1, max_size=4), float_lists,
                         st.sampled_from([[[1e308, -1e308, 0.0]], [[math.nan, 1.0, 2.0]], [[]]])),
       reference=float_lists, weights=st.one_of(st.none(), float_lists))
def test_utility_wasserstein1_runs(samples, reference, weights):
    ok, out = attempt(U.wasserstein1_runs, samples, reference, weights)
    if ok:
        assert finite_nonneg(np.asarray(out) + 1e-9)


@fuzz(200)
@given(r=st.integers(1, 3), m=st.integers(1, 5), d=st.integers(1, 3), n=st.integers(1, 6), seed=st.integers(0, 99),
       n_proj=st.one_of(maybe(st.integers(1, 20)), st.just(10**9)), scale=st.sampled_from([1.0, 1e308, 1e-308]),
       proj=st.sampled_from([None, "zeros", "nan", "long", "wrong"]), nan=st.booleans())
def test_utility_sliced_wasserstein1_runs(r, m, d, n, seed, n_proj, scale, proj, nan):
    rng = np.random.default_rng(seed)
    samples = rng.normal(size=(r, m, d)) * scale
    if nan:
        samples[0, 0, 0] = math.nan
    reference = rng.normal(size=(n, d))
    projections = {None: None, "zeros": np.zeros((d, 2)), "nan": np.full((d, 2), math.nan),
                   "long": np.full((d, 2), 10.0), "wrong": np.ones((d + 1, 2))}[proj]
    ok, out = attempt(U.sliced_wasserstein1_runs, samples, reference, n_projections=n_proj, rng=rng,
                      projections=projections)
    if ok:
        assert out.shape == (r,) and finite_nonneg(np.asarray(out) + 1e-9)
    ok, out = attempt(U.random_directions, d, n_proj, rng)
    if ok:
        np.testing.assert_allclose(np.linalg.norm(out, axis=0), 1.0)


@fuzz(300)
@given(values=st.one_of(float_lists, st.lists(st.lists(moderate, min_size=3, max_size=3), min_size=1, max_size=3),
                        st.sampled_from([3.0, np.zeros((2, 2, 2)), [[1.0]]])))
def test_utility_scott_bandwidth(values):
    ok, out = attempt(U.scott_bandwidth, values)
    if ok:
        assert finite_nonneg(out)


@fuzz(300)
@given(samples=st.lists(float_lists, min_size=0, max_size=3), size=maybe(st.integers(2, 600)),
       pad=maybe(st.floats(0, 10)))
def test_utility_kde_grid(samples, size, pad):
    ok, grid = attempt(U.kde_grid, *samples, size=size, pad=pad)
    if ok:
        assert grid.shape == (size,) and np.all(np.isfinite(grid)) and np.all(np.diff(grid) >= 0)


@fuzz(300)
@given(values=float_lists, other=float_lists, weights=st.one_of(st.none(), float_lists),
       size=maybe(st.integers(2, 300)))
def test_utility_kde_on_grid_and_kde_l2(values, other, weights, size):
    ok, grid = attempt(U.kde_grid, values, size=size)
    if ok:
        ok, dens = attempt(U.kde_on_grid, values, grid, weights)
        if ok:
            assert dens.shape == grid.shape and finite_nonneg(dens)
    ok, l2 = attempt(U.kde_l2, values, other, size=size)
    if ok:
        assert math.isfinite(l2) and l2 >= 0


@fuzz(300)
@given(rows=st.lists(float_lists, min_size=1, max_size=3), size=st.integers(2, 200), seed=st.integers(0, 9),
       bandwidths=st.one_of(st.none(), st.just("given"), st.sampled_from([[0.0], [math.nan], [1e-300]])))
def test_utility_binned_kde_and_kde_l2_runs(rows, size, seed, bandwidths):
    width = min(len(r) for r in rows)
    samples = np.array([r[:width] for r in rows], dtype=object if width == 0 else float)
    ok, grid = attempt(U.kde_grid, *[np.asarray(r, dtype=float) for r in rows], size=size)
    if not ok:
        return
    if bandwidths == "given":
        bandwidths = np.full(len(rows), 0.1)
    ok, dens = attempt(U.binned_kde_runs, samples, grid, bandwidths)
    if ok:
        assert dens.shape == (len(rows), size) and np.all(np.isfinite(dens))
    ref = np.exp(-np.linspace(-3, 3, size) ** 2)
    ok, out = attempt(U.kde_l2_runs, samples, ref, grid)
    if ok:
        out = np.asarray(out)
        h = U.scott_bandwidth(samples.astype(float))
        # NaN exactly for the rows documented to have no KDE.
        assert np.array_equal(np.isnan(out), ~(np.asarray(h) >= V.KDE_MIN_BANDWIDTH))
        assert finite_nonneg(out[~np.isnan(out)])


@fuzz(300)
@given(values=st.one_of(float_lists, st.lists(st.lists(moderate, min_size=2, max_size=2), min_size=1, max_size=4)))
def test_utility_column_summary_and_summary_runs(values):
    ok, out = attempt(U.column_summary, values)
    if ok:
        assert all(math.isfinite(v) for v in out.values()) and out["sd"] >= 0
    ok, out = attempt(U.summary_runs, values)
    if ok:
        assert all(np.all(np.isfinite(v)) for v in out.values())


@fuzz(300)
@given(data=float_lists, releases=st.dictionaries(st.sampled_from(["a", "b"]), float_lists, max_size=2),
       grid_size=maybe(st.integers(2, 300)), frame=st.booleans())
def test_utility_summary_table(data, releases, grid_size, frame):
    releases = {**releases, "same": list(data)}      # a release equal to the data: distance 0
    if frame:
        data = pd.DataFrame({"x": np.asarray(data, dtype=float)})
        releases = {k: pd.DataFrame({"x": np.asarray(v, dtype=float)}) for k, v in releases.items()}
    ok, table = attempt(U.summary_table, data, releases, grid_size=grid_size)
    if not ok:
        return
    numbers = table[["mean", "sd", "q1", "median", "q3", "W1"]].to_numpy(float)
    assert np.all(np.isfinite(numbers))
    x = np.asarray(data, dtype=float).ravel()
    for _, row in table.iloc[1:].iterrows():
        z = np.asarray(releases[row["mechanism"]], dtype=float).ravel()
        defined = all(v.size > 1 and np.ptp(v) > 0 and U.scott_bandwidth(v) >= V.KDE_MIN_BANDWIDTH for v in (x, z))
        # never NaN: a sample without a density (one distinct value, or a spread below the
        # smallest bandwidth) is a point mass, at distance 0 from the same point and +inf otherwise
        assert not math.isnan(row["KDE_L2"])
        if defined:
            assert math.isfinite(row["KDE_L2"]) and row["KDE_L2"] >= 0
        else:
            assert row["KDE_L2"] in (0.0, math.inf)


@fuzz(300)
@given(a=float_lists, b=float_lists, groups=st.integers(1, 3), n_groups=maybe(st.integers(1, 4)), seed=st.integers(0, 9))
def test_utility_batched_and_signed_wasserstein1(a, b, groups, n_groups, seed):
    rng = np.random.default_rng(seed)
    ga = rng.integers(0, groups, size=len(a))
    gb = rng.integers(0, groups, size=len(b))
    ok, out = attempt(U.batched_wasserstein1, a, ga, b, gb, n_groups)
    if ok:
        assert out.shape == (n_groups,) and finite_nonneg(out)
    values = np.asarray(a + b, dtype=float) if a + b else np.zeros(0)
    weights = np.concatenate([np.full(len(a), 1.0), np.full(len(b), -1.0)])
    ok, out = attempt(U.signed_wasserstein1, values, weights, np.concatenate([ga, gb]).astype(np.int64), n_groups)
    if ok:
        assert finite_nonneg(out)


# =============================================================================== compare
@fuzz(100)
@given(n=maybe(st.integers(1, 200)), eps=maybe(st.floats(0.1, 10.0)), delta=maybe(st.floats(1e-6, 0.3)),
       m=st.one_of(maybe(st.integers(1, 200)), st.just("largest"), st.just("smallest"), st.just(10**8)),
       theta=theta_values, d=maybe(st.integers(1, 3)), bins=maybe(st.integers(1, 20)),
       mechs=st.lists(st.sampled_from(list(C.ALL_MECHANISMS) + ["nope"]), max_size=3, unique=True))
def test_compare_calibrate(n, eps, delta, m, theta, d, bins, mechs):
    ok, cal = attempt(C.calibrate, n, eps, delta, m, theta=theta, d=d, bins=bins, mechanisms=mechs)
    if ok:
        assert 1 <= cal.m <= V.MAX_RELEASE_SIZE
        table = cal.table
        assert probability(table["delta"].dropna()) and table["meets_target"].dtype == bool


@fuzz(40)
@given(n=st.integers(2, 30), d=st.integers(1, 2), m=st.integers(2, 20), runs=maybe(st.integers(1, 3)),
       seed=st.integers(0, 99), grid_size=maybe(st.integers(16, 64)), n_proj=maybe(st.integers(1, 8)),
       cost=maybe(st.floats(1.0, 1e6)), single=st.booleans())
def test_compare_run_comparison_and_summary(n, d, m, runs, seed, grid_size, n_proj, cost, single):
    rng = np.random.default_rng(seed)
    data = np.full((n, d), 0.5) if single else rng.random((n, d))
    cal = C.calibrate(n, 1.0, 1e-3, m, theta=2.0, d=d, bins=5,
                      mechanisms=("pypp", "laplace_histogram", "smoothed_histogram", "bootstrap"))
    ok, res = attempt(C.run_comparison, data[:, 0] if d == 1 else data, cal, runs=runs, rng=rng,
                      grid_size=grid_size, max_cost_bytes=cost, n_projections=n_proj)
    if not ok:
        return
    assert np.all(np.isfinite(res["W1"])) and np.all(res["W1"] >= -1e-12)
    one_column = res[res["column"] != "(joint)"]
    assert np.all(np.isfinite(one_column[["mean", "sd", "q1", "median", "q3"]].to_numpy(float)))
    ok, summary = attempt(C.comparison_summary, res)
    assert ok and np.all(np.isfinite(summary["W1"]))
    ok, _ = attempt(C.comparison_summary, "not a frame")
    assert not ok


@fuzz(25)
@given(eps_values=st.one_of(st.lists(st.floats(0.2, 5.0), min_size=1, max_size=2), st.just([]),
                            st.just([math.nan]), st.just("x")),
       seed=st.integers(0, 9), m=st.sampled_from([5, "largest"]))
def test_compare_sweep_comparison(eps_values, seed, m):
    rng = np.random.default_rng(seed)
    data = rng.random(20)
    ok, out = attempt(C.sweep_comparison, data, eps_values, 0.01, m, theta=5.0, runs=2, rng=rng,
                      mechanisms=("pypp", "bootstrap"), grid_size=16)
    if ok:
        assert set(out["target_eps"]) <= set(float(e) for e in eps_values)


# ========================================================================= informativity
@fuzz(300)
@given(n_min=maybe(st.integers(1, 100)), n_max=maybe(st.integers(1, 10**6)), points=maybe(st.integers(1, 50)))
def test_informativity_log_grid(n_min, n_max, points):
    ok, grid = attempt(F.log_grid, n_min, n_max, points)
    if ok:
        assert np.all(np.diff(grid) > 0) and grid[0] >= 1


@fuzz(300)
@given(n=st.one_of(st.lists(st.integers(1, 10**6), min_size=1, max_size=5), awkward), c=maybe(st.floats(1e-3, 1e3)),
       a=maybe(st.floats(0, 2)), theta=theta_values, power=st.booleans())
def test_informativity_release_sizes(n, c, a, theta, power):
    ok, rule = attempt(F.PowerSizeRule, c, a) if power else attempt(F.PrivacySizeRule, 1.0, 1e-3)
    if not ok:
        return
    ok, out = attempt(F.release_sizes, n, rule, theta)
    if ok:
        assert np.all(out >= (1 if power else 0)) and np.all(out <= V.MAX_RELEASE_SIZE)
    ok, _ = attempt(lambda: rule.label)
    assert ok


@fuzz(300)
@given(n=float_lists, w1=float_lists)
def test_informativity_fit_loglog_slope(n, w1):
    ok, out = attempt(F.fit_loglog_slope, n, w1)
    if ok:
        assert len(out) == 3


@fuzz(40)
@given(pop=st.one_of(unit_lists, float_lists), n_values=st.one_of(st.lists(st.integers(1, 10), min_size=1, max_size=3),
                                                                  awkward),
       runs=maybe(st.integers(2, 4)), seed=st.integers(0, 9), level=maybe(st.floats(0.5, 0.99)),
       bounds=st.sampled_from([(0.0, 1.0), (1.0, 0.0), (0.0, math.inf), None]))
def test_informativity_experiment(pop, n_values, runs, seed, level, bounds):
    rule = F.PowerSizeRule(1.0, 1.0)
    ok, res = attempt(F.informativity_experiment, pop, n_values, rule, 2.0, runs, np.random.default_rng(seed),
                      bounds=bounds, level=level)
    if ok:
        assert np.all(np.isfinite(res.w1[res.m > 0])) and np.all(res.w1[res.m > 0] >= -1e-12)


# ============================================================================= inference
@fuzz(300)
@given(levels=st.one_of(st.lists(maybe(st.floats(0.01, 0.99)), max_size=3), awkward),
       thresholds=st.one_of(st.lists(maybe(moderate), max_size=3), awkward))
def test_inference_functional_names_and_empirical(levels, thresholds):
    ok, names = attempt(I.functional_names, levels if isinstance(levels, list) else [levels],
                        thresholds if isinstance(thresholds, list) else [thresholds])
    if ok:
        assert all(isinstance(x, str) for x in names)
    ok, out = attempt(I.empirical_functionals, [0.1, 0.5, 0.5, 0.9], quantile_levels=levels, thresholds=thresholds)
    if ok:
        assert np.all(np.isfinite(out))


@fuzz(300)
@given(atoms=float_lists, seed=st.integers(0, 9), extra=st.integers(0, 3), negative=st.booleans())
def test_inference_measure_functionals(atoms, seed, extra, negative):
    rng = np.random.default_rng(seed)
    w = rng.random((2, len(atoms))) * (-1 if negative else 1)
    ok, out = attempt(I.measure_functionals, np.sort(np.asarray(atoms, dtype=float)) if atoms else atoms, w,
                      rng.random((2, extra)), rng.random((2, extra)), thresholds=[0.5])
    if ok:
        mean, quant, tails = out
        assert probability(tails) and not np.any(np.isnan(quant))


@fuzz(150)
@given(theta=maybe(st.floats(0.1, 20.0)), bounds=st.sampled_from([(0.0, 1.0), (-5.0, 5.0), (1.0, 1.0), (0, math.inf)]),
       n_draws=st.one_of(maybe(st.integers(1, 20)), st.just(10**7)), seed=st.integers(0, 9),
       truncation=maybe(st.floats(1e-8, 0.5)), release=float_lists)
def test_inference_stick_breaking_and_posterior(theta, bounds, n_draws, seed, truncation, release):
    rng = np.random.default_rng(seed)
    ok, out = attempt(I.stick_breaking_dp, theta, bounds, n_draws, rng, truncation=truncation)
    if ok:
        atoms, weights = out
        assert np.all(np.isfinite(weights)) and np.allclose(weights.sum(axis=1), 1.0)
    ok, post = attempt(I.dp_posterior_functionals, release, theta, bounds, n_draws, rng, truncation=truncation,
                       thresholds=[0.5])
    if ok:
        assert np.all(np.isfinite(post.draws))
        ok, table = attempt(post.summary, 0.9)
        assert ok and np.all(np.isfinite(table[["posterior_mean", "lower", "upper"]].to_numpy(float)))


@fuzz(30)
@given(conf=st.one_of(unit_lists, float_lists), theta=maybe(st.floats(0.5, 5.0)), m=st.one_of(maybe(st.integers(1, 30)),
                                                                                           st.just(10**8)),
       replicates=maybe(st.integers(1, 2)), seed=st.integers(0, 9))
def test_inference_repeated_release_experiment(conf, theta, m, replicates, seed):
    ok, res = attempt(I.repeated_release_experiment, conf, theta, m, (0.0, 1.0), np.random.default_rng(seed),
                      replicates=replicates, n_draws=20)
    if ok:
        table = res.table()
        assert probability(table["coverage"])



@fuzz(60)
@given(n=maybe(st.integers(1, 2000)), m=maybe(st.integers(1, 2000)), frac=st.floats(0.0, 1.0),
       sigma=st.one_of(st.floats(0.0, 0.999), st.sampled_from([1e-300, 1 - 1e-12, -0.5]), awkward),
       theta=st.one_of(st.floats(-0.9, 50.0), st.sampled_from([1e-300, 1e300]), awkward))
def test_inference_discovery_probability(n, m, frac, sigma, theta):
    new_values = int(frac * m) if isinstance(m, int) and not isinstance(m, bool) and m > 0 else m
    ok, out = attempt(I.discovery_probability, n, m, new_values, sigma, theta)
    if ok:
        assert probability(out), out

# ============================================================================ simulation
@fuzz(300)
@given(j=st.one_of(maybe(st.integers(1, 2**52)), st.lists(st.integers(-3, 100), max_size=4)))
def test_simulation_dyadic_midpoint(j):
    ok, out = attempt(S.dyadic_midpoint, j)
    if ok:
        assert np.all((np.asarray(out) > 0) & (np.asarray(out) < 1))


@fuzz(300)
@given(size=maybe(st.integers(1, 500)), p=maybe(st.floats(1e-13, 1.0)), rng=maybe_rng)
def test_simulation_sample_dyadic_geometric(size, p, rng):
    ok, out = attempt(S.sample_dyadic_geometric, size, p, rng)
    if ok:
        assert out.shape == (size,) and np.all((out > 0) & (out < 1))


@fuzz(300)
@given(grid_size=maybe(st.integers(2, 500)), weights=st.one_of(st.lists(maybe(st.floats(0.01, 5.0)), min_size=1, max_size=3),
                                                              awkward),
       shapes=st.lists(st.tuples(maybe(st.floats(0.01, 1e6)), maybe(st.floats(0.01, 1e6))), min_size=1, max_size=3),
       size=maybe(st.integers(1, 100)), seed=st.integers(0, 9))
def test_simulation_grid_beta_mixture(grid_size, weights, shapes, size, seed):
    ok, out = attempt(S.grid_beta_mixture, grid_size, weights, shapes)
    if ok:
        grid, prob = out
        assert probability(prob) and abs(prob.sum() - 1) < 1e-9
    ok, out = attempt(S.sample_grid_beta_mixture, size, np.random.default_rng(seed), grid_size=grid_size,
                      weights=weights, shapes=shapes)
    if ok:
        assert out.shape == (size,) and np.all((out > 0) & (out < 1))


# ================================================================================= plots
@settings(max_examples=3000, derandomize=True, deadline=None)
@given(value=st.floats(min_value=0.0, allow_nan=False, allow_infinity=False, allow_subnormal=True),
       digits=st.integers(1, 17))
def test_plots_format_upper_is_exact_and_safe(value, digits):
    from decimal import Decimal

    text = P.format_upper(value, digits)
    assert float(text) >= value
    if value > 0:
        printed = Decimal(text)
        exact = Decimal(value)
        # At most one unit in the last printed digit above the exact binary value (the
        # shortest repr, used when it fits, reads back as the same float).
        shown = len(printed.normalize().as_tuple().digits)
        assert shown <= digits
        assert printed - exact <= Decimal(1).scaleb(printed.adjusted() - shown + 1)


@fuzz(300)
@given(value=st.one_of(awkward, any_float), digits=maybe(st.integers(1, 17)))
def test_plots_format_upper_bad_input(value, digits):
    ok, text = attempt(P.format_upper, value, digits)
    if ok:
        assert float(text) >= float(value)


@fuzz(40)
@given(eps=float_lists, series=st.dictionaries(st.sampled_from(["a", "b"]), float_lists, max_size=2),
       plateau=st.one_of(st.none(), maybe(st.floats(0, 1))), target=st.one_of(st.none(), maybe(st.floats(0, 1))))
def test_plots_delta_and_max_m_figures(eps, series, plateau, target):
    ok, fig = attempt(P.delta_curves_figure, eps, series, plateau=plateau, delta_target=target)
    if ok:
        assert fig.data is not None
    ok, fig = attempt(P.max_m_figure, eps, series, m_sing=plateau)
    if ok:
        assert fig.data is not None


@fuzz(25)
@given(theta=float_lists, mstar=float_lists, samples=st.dictionaries(st.sampled_from(["x", "z"]), float_lists, max_size=2),
       bins=maybe(st.integers(1, 50)))
def test_plots_feasible_region_overlay_spectrum(theta, mstar, samples, bins):
    ok, fig = attempt(P.feasible_region_figure, theta, mstar)
    if ok:
        assert fig.data is not None
    ok, fig = attempt(P.distribution_overlay_figure, samples, bins=bins)
    if ok:
        assert fig.data is not None
    ok, fig = attempt(P.spectrum_figure, theta, mstar)
    if ok:
        assert fig.data is not None
    ok, fig = attempt(P.singletons_by_rounding_figure, theta, mstar)
    if ok:
        assert fig.data is not None


@fuzz(25)
@given(values=float_lists, names=st.lists(st.sampled_from(["pypp", "bootstrap", "x"]), min_size=1, max_size=30))
def test_plots_comparison_and_experiment_figures(values, names):
    k = min(len(values), len(names))
    runs = pd.DataFrame({"mechanism": names[:k], "W1": values[:k], "eps": [1.0] * k})
    for builder in (P.w1_boxplot_figure, P.w1_frontier_figure):
        ok, fig = attempt(builder, runs)
        if ok:
            assert fig.data is not None
    curves = pd.DataFrame({"n": np.arange(1, k + 1), "mean": values[:k], "lower": values[:k], "upper": values[:k]})
    ok, fig = attempt(P.informativity_figure, curves)
    summary = pd.DataFrame({"functional": ["mean", "P(X > 0.5)"][: max(1, min(k, 2))]})
    for col in ("posterior_mean", "lower", "upper", "confidential"):
        summary[col] = np.resize(np.asarray(values[:k] or [0.0], dtype=float), len(summary))
    ok, fig = attempt(PE.posterior_intervals_figure, summary)
    table = pd.DataFrame({"functional": ["mean"], "coverage": [values[0] if values else 0.5], "coverage_se": [0.01]})
    for level in (0.95, 1.5, math.nan, "x"):
        ok, fig = attempt(PE.coverage_figure, table, level=level)
    ok, name = attempt(PE.interval_trace_name, 0.9)
    assert ok and "90" in name
