"""core.validation: every validator, directly — admissible values pass through, each kind of
bad value raises ValueError naming the parameter (and the value or the admissible range)."""

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from core import validation as V

BAD_REALS = [math.nan, math.inf, -math.inf, None, "1.0", True, [1.0], 1 + 2j]


# ----------------------------------------------------------------------------- scalars
def test_check_integer_accepts_integral_values_and_refuses_the_rest():
    assert V.check_integer("n", 3) == 3
    assert V.check_integer("n", np.int64(7)) == 7
    assert V.check_integer("n", 4.0) == 4
    assert V.check_integer("n", 10**30, minimum=1) == 10**30
    for bad in [2.5, math.nan, math.inf, None, "3", True, [3]]:
        with pytest.raises(ValueError, match="^n must be an integer"):
            V.check_integer("n", bad)
    with pytest.raises(ValueError, match=r"n must be an integer in \[1, ∞\], got 0"):
        V.check_integer("n", 0, minimum=1)
    with pytest.raises(ValueError, match=r"n must be an integer in \[-∞, 5\], got 6"):
        V.check_integer("n", 6, maximum=5)


def test_check_m_and_check_bins():
    assert V.check_m(1) == 1 and V.check_bins(25) == 25
    with pytest.raises(ValueError, match=r"^m must be an integer in \[1"):
        V.check_m(0)
    with pytest.raises(ValueError, match="^m_cap"):
        V.check_m(-1, "m_cap")
    with pytest.raises(ValueError, match="^bins"):
        V.check_bins(0)


def test_check_positive():
    assert V.check_positive("x", 2) == 2.0
    assert V.check_positive("x", 0, allow_zero=True) == 0.0
    with pytest.raises(ValueError, match=r"x must be in \(0, ∞\), got 0"):
        V.check_positive("x", 0)
    with pytest.raises(ValueError, match=r"x must be in \[0, ∞\), got -1"):
        V.check_positive("x", -1, allow_zero=True)
    for bad in BAD_REALS:
        with pytest.raises(ValueError, match="^x must be a finite real number"):
            V.check_positive("x", bad)


def test_check_real_intervals():
    assert V.check_real("s", 0.0, low=0.0, high=1.0, high_open=True) == 0.0
    with pytest.raises(ValueError, match=r"s must be in \[0.0, 1.0\), got 1.0"):
        V.check_real("s", 1.0, low=0.0, high=1.0, high_open=True)
    with pytest.raises(ValueError, match=r"t must be in \(0.0, ∞\), got 0"):
        V.check_real("t", 0, low=0.0, low_open=True)
    with pytest.raises(ValueError, match=r"t must be in \(-∞, 2.0\], got 3"):
        V.check_real("t", 3, high=2.0)
    for bad in BAD_REALS:
        with pytest.raises(ValueError, match=r"^t must be a finite real number in \(-∞, ∞\)"):
            V.check_real("t", bad)


def test_check_eps_scalar_array_and_infinity():
    arr, scalar = V.check_eps(0.5)
    assert scalar and arr.tolist() == [0.5]
    arr, scalar = V.check_eps([0.1, math.inf])
    assert not scalar and arr.tolist() == [0.1, math.inf]
    for bad in [0.0, -1.0, math.nan, [0.1, math.nan], [0.1, -2.0]]:
        with pytest.raises(ValueError, match=r"eps must be in \(0, ∞\]"):
            V.check_eps(bad)
    with pytest.raises(ValueError, match="eps must not be empty"):
        V.check_eps([])
    with pytest.raises(ValueError, match="eps must be a real number or array"):
        V.check_eps("abc")


def test_check_finite_eps():
    assert V.check_finite_eps(2) == 2.0
    for bad in [0, -1, math.inf, math.nan, None, "1"]:
        with pytest.raises(ValueError, match=r"eps must be a finite real number in \(0, ∞\)"):
            V.check_finite_eps(bad)


def test_check_delta_and_check_probability():
    assert V.check_delta(1e-300) == 1e-300
    for bad in [0, 1, -0.1, 1.5, math.nan, None, "0.1", True]:
        with pytest.raises(ValueError, match=r"delta must be in \(0, 1\)"):
            V.check_delta(bad)
    assert V.check_probability(1.0, "p", allow_one=True) == 1.0
    assert V.check_probability(0.0, "p", allow_zero=True) == 0.0
    with pytest.raises(ValueError, match=r"p must be in \(0, 1\], got 0"):
        V.check_probability(0, "p", allow_one=True)
    with pytest.raises(ValueError, match=r"p must be in \[0, 1\), got 1"):
        V.check_probability(1, "p", allow_zero=True)
    with pytest.raises(ValueError, match=r"p must be in \(0, 1\)"):
        V.check_probability(math.nan, "p")


def test_check_rng():
    rng = np.random.default_rng(0)
    assert V.check_rng(rng) is rng
    for bad in [None, 0, np.random.RandomState(0), np.random]:
        with pytest.raises(ValueError, match="rng must be a numpy.random.Generator"):
            V.check_rng(bad)


def test_check_release_size_states_the_limit():
    assert V.check_release_size(V.MAX_RELEASE_SIZE) == V.MAX_RELEASE_SIZE
    assert V.check_release_size(3.0) == 3
    with pytest.raises(ValueError, match=r"m must be an integer in \[1, 10000000\] \(MAX_RELEASE_SIZE"):
        V.check_release_size(V.MAX_RELEASE_SIZE + 1)
    for bad in [0, -5, 2.5, math.inf, math.nan, None, True, "7"]:
        with pytest.raises(ValueError, match=r"^m must be an integer in \[1, 10000000\]"):
            V.check_release_size(bad)


def test_check_release_budget():
    V.check_release_budget(5, 10**7, 1)
    with pytest.raises(ValueError, match="MAX_RELEASE_VALUES"):
        V.check_release_budget(6, 10**7, 1)
    with pytest.raises(ValueError, match="runs × m × d = 2 × 10 × 3000000"):
        V.check_release_budget(2, 10, 3_000_000)


# ----------------------------------------------------------------------------- arrays
def test_check_multiplicities():
    out = V.check_multiplicities([3, 1, 2.0])
    assert out.dtype == np.int64 and out.tolist() == [3, 1, 2]
    with pytest.raises(ValueError, match="multiplicities is empty"):
        V.check_multiplicities([])
    with pytest.raises(ValueError, match="1-D array"):
        V.check_multiplicities([[1, 2]])
    with pytest.raises(ValueError, match="must be numeric"):
        V.check_multiplicities(["a"])
    with pytest.raises(ValueError, match="must be integers"):
        V.check_multiplicities([1.5])
    with pytest.raises(ValueError, match="must be integers"):
        V.check_multiplicities([math.nan])
    with pytest.raises(ValueError, match=">= 1, got 0"):
        V.check_multiplicities([2, 0])
    # The total must stay exact in float64 (and an int64 sum must not wrap around).
    with pytest.raises(ValueError, match="MAX_RECORDS"):
        V.check_multiplicities([2**53, 1])
    with pytest.raises(ValueError, match="MAX_RECORDS"):
        V.check_multiplicities([2**62] * 4)
    with pytest.raises(ValueError, match="MAX_RECORDS"):
        V.check_multiplicities([1e300])
    assert V.check_multiplicities([2**52, 2**52]).sum() == 2**53


def test_check_positive_integer_array():
    assert V.check_positive_integer_array(4, "n").tolist() == 4
    assert V.check_positive_integer_array([1, 2], "n", maximum=2).tolist() == [1, 2]
    with pytest.raises(ValueError, match=r"n must be integers in \[1, 2\], got 3"):
        V.check_positive_integer_array([3], "n", maximum=2)
    with pytest.raises(ValueError, match="n must not be empty"):
        V.check_positive_integer_array([], "n")
    with pytest.raises(ValueError, match="n must be integers, got"):
        V.check_positive_integer_array([0.5], "n")
    with pytest.raises(ValueError, match="below 2\\*\\*62"):
        V.check_positive_integer_array([1e30], "n")


def test_check_counts():
    assert V.check_counts(0, "c").tolist() == 0
    assert V.check_counts([], "c").size == 0
    assert V.check_counts(np.array([3, 0], dtype=np.uint8), "c").tolist() == [3, 0]
    with pytest.raises(ValueError, match=r"c must be integers in \[0, 5\], got 6"):
        V.check_counts([6], "c", maximum=5)
    with pytest.raises(ValueError, match=r"c must be integers in \[0, ∞\], got -1"):
        V.check_counts(-1, "c")
    for bad in [2.5, math.nan, math.inf]:
        with pytest.raises(ValueError, match="c must be integers"):
            V.check_counts(bad, "c")
    with pytest.raises(ValueError, match="dtype"):
        V.check_counts([True], "c")
    with pytest.raises(ValueError, match="below 2\\*\\*62"):
        V.check_counts(np.array([2**63], dtype=np.uint64), "c")


def test_check_sample_and_unit_data():
    assert V.check_sample([1, 2]).dtype == np.float64
    assert V.check_sample([[1, 2], [3, 4]]).shape == (2, 2)
    with pytest.raises(ValueError, match="data is empty"):
        V.check_sample([])
    with pytest.raises(ValueError, match="has 1 rows: at least 2"):
        V.check_sample([1.0], min_size=2)
    with pytest.raises(ValueError, match="shape \\(n,\\) or \\(n, d\\)"):
        V.check_sample(np.zeros((2, 2, 2)))
    with pytest.raises(ValueError, match="one numeric column"):
        V.check_sample(np.zeros((2, 2)), one_column=True)
    with pytest.raises(ValueError, match="no columns"):
        V.check_sample(np.zeros((2, 0)))
    with pytest.raises(ValueError, match="numeric"):
        V.check_sample(["a", "b"])
    with pytest.raises(ValueError, match="1 non-finite"):
        V.check_sample([1.0, math.inf])
    assert V.check_unit_data([0.0, 1.0]).tolist() == [0.0, 1.0]
    with pytest.raises(ValueError, match=r"must lie in \[0, 1\]"):
        V.check_unit_data([0.5, 1.5])


def test_check_sample_weights():
    np.testing.assert_allclose(V.check_sample_weights([1, 3], 2), [0.25, 0.75])
    with pytest.raises(ValueError, match=r"shape \(3,\)"):
        V.check_sample_weights([1, 1], 3)
    with pytest.raises(ValueError, match="finite and >= 0"):
        V.check_sample_weights([1, -1], 2)
    with pytest.raises(ValueError, match="positive sum"):
        V.check_sample_weights([0, 0], 2)
    with pytest.raises(ValueError, match="non-negative numbers"):
        V.check_sample_weights(["a", "b"], 2)


def test_check_finite_array_and_metric_sample():
    assert V.check_finite_array([[1, 2]], "x", ndim=2).shape == (1, 2)
    with pytest.raises(ValueError, match="x must have 2 dimension"):
        V.check_finite_array([1, 2], "x", ndim=2)
    with pytest.raises(ValueError, match="at least 1 value"):
        V.check_finite_array(np.zeros((3, 0)), "x", ndim=2, min_size=1)
    with pytest.raises(ValueError, match="x must be numeric"):
        V.check_finite_array(["a"], "x")
    with pytest.raises(ValueError, match="non-finite"):
        V.check_finite_array([math.nan], "x")
    assert V.check_metric_sample([V.MAX_ABS_VALUE, -V.MAX_ABS_VALUE], "x").size == 2
    with pytest.raises(ValueError, match=r"x must lie within ±1e\+140"):
        V.check_metric_sample([1e308], "x")


def test_check_bounds():
    assert V.check_bounds((0, 1)) == (0.0, 1.0)
    for bad in [(1, 0), (0, 0), (math.nan, 1), (0, math.inf), None, (1,), "ab", (None, 1)]:
        with pytest.raises(ValueError, match="^bounds must"):
            V.check_bounds(bad)
    with pytest.raises(ValueError, match="lo > 0 for a log-transformed column"):
        V.check_bounds((0, 1), positive=True)


# ------------------------------------------------------------------------- PY parameters
def test_check_py_parameters_regimes():
    assert V.check_py_parameters(0.0, 2.0) == (0.0, 2.0, None)
    assert V.check_py_parameters(0.5, -0.4) == (0.5, -0.4, None)
    assert V.check_py_parameters(-0.5, 5.0, k=10) == (-0.5, 5.0, 10)
    with pytest.raises(ValueError, match="sigma must be < 1"):
        V.check_py_parameters(1.0, 1.0)
    with pytest.raises(ValueError, match="theta must be > -sigma"):
        V.check_py_parameters(0.5, -0.5)
    with pytest.raises(ValueError, match="theta must equal z\\*\\|sigma\\|"):
        V.check_py_parameters(-0.5, 1.2)
    with pytest.raises(ValueError, match="z >= k = 11"):
        V.check_py_parameters(-0.5, 5.0, k=11)
    for bad in BAD_REALS:
        with pytest.raises(ValueError, match="^sigma must be a finite real number"):
            V.check_py_parameters(bad, 1.0)
        with pytest.raises(ValueError, match="^theta must be a finite real number"):
            V.check_py_parameters(0.0, bad)


@settings(max_examples=300)
@given(st.floats(allow_nan=True, allow_infinity=True), st.floats(allow_nan=True, allow_infinity=True))
def test_check_py_parameters_only_value_errors(sigma, theta):
    try:
        s, t, z = V.check_py_parameters(sigma, theta)
    except ValueError as exc:
        assert str(exc)
        return
    assert math.isfinite(s) and math.isfinite(t) and s < 1
    assert (z is None and t > -s) or (z is not None and z >= 1 and s < 0)


# ------------------------------------------------------------------------------- recipes
def test_check_flag_choice_fields_seed():
    assert V.check_flag("f", True) is True
    with pytest.raises(ValueError, match="f must be true or false"):
        V.check_flag("f", 1)
    assert V.check_choice("c", "a", ["a", "b"]) == "a"
    with pytest.raises(ValueError, match="c must be one of 'a', 'b'"):
        V.check_choice("c", "z", ["a", "b"])
    assert V.check_fields("r", {"a": 1}, ["a", "b"], ["a"]) == {"a": 1}
    with pytest.raises(ValueError, match="unknown field"):
        V.check_fields("r", {"x": 1}, ["a"])
    with pytest.raises(ValueError, match="lacks the required"):
        V.check_fields("r", {}, ["a"], ["a"])
    with pytest.raises(ValueError, match="must be a JSON object"):
        V.check_fields("r", [], ["a"])
    assert V.check_seed(0) == 0
    for bad in [-1, 2**128, 1.5, True, None]:
        with pytest.raises(ValueError, match="seed must be an integer"):
            V.check_seed(bad)


def test_warn_bounds_from_data():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        V.warn_bounds_from_data("bounds of 'age'")
    assert caught and issubclass(caught[0].category, V.PrivacyLeakWarning)
    assert "bounds of 'age' were computed from the confidential data" in str(caught[0].message)


def test_limits_are_consistent():
    # The magnitude limit keeps every sum of squared deviations of MAX_RECORDS values finite.
    assert (2 * V.MAX_ABS_VALUE) ** 2 * V.MAX_RECORDS < 1e308
    assert (1 / V.KDE_MIN_BANDWIDTH) ** 2 < 1e308
    assert V.MAX_RELEASE_SIZE <= V.MAX_RELEASE_VALUES
