"""The public scale of copying (issue 36 item 3; docs/verdicts.md §2.1): each row of a σ = 0
release is a confidential record with probability n/(n + θ), checked by exhaustive enumeration of
the sequential algorithm (docs/mathematics.md §2.2) in rational arithmetic, and in mpmath."""

from fractions import Fraction

import mpmath
import pytest

from core.privacy import (
    DIRICHLET_PROCESS,
    ReleaseSpec,
    copy_probability,
    copy_scale,
    expected_copied_rows,
    largest_strong_m,
    no_new_row_probability,
    old_value_probability,
)


def _enumerate(counts, sigma, theta, m, z=None):
    """Exact law of Algorithm 1 (docs/mathematics.md §2.2) from data multiplicities ``counts``:
    for each draw j, P(draw j takes a value of the data), and the law of the number of such draws.

    σ ≥ 0: a new value with probability (θ + Kσ)/(θ + N), atom i with (n_i − σ)/(θ + N), a new
    value becoming an atom of count 1. σ < 0: z categories, category c with (n_c + α)/(N + zα).
    """
    sigma, theta = Fraction(sigma), Fraction(theta)
    k = len(counts)
    if sigma < 0:
        atoms = tuple(counts) + (0,) * (z - k)
    else:
        atoms = tuple(counts)
    per_draw = [Fraction(0)] * m
    law = {}

    def walk(atoms, j, prob, old):
        if j == m:
            law[old] = law.get(old, Fraction(0)) + prob
            return
        total = sum(atoms) + theta
        if sigma < 0:
            for c, a in enumerate(atoms):
                p = (a - sigma) / total
                if p == 0:
                    continue
                is_old = c < k
                per_draw[j] += prob * p * is_old
                walk(atoms[:c] + (a + 1,) + atoms[c + 1:], j + 1, prob * p, old + is_old)
            return
        p_new = (theta + len(atoms) * sigma) / total
        walk(atoms + (1,), j + 1, prob * p_new, old)
        for i, a in enumerate(atoms):
            p = (a - sigma) / total
            is_old = i < k          # atoms k.. were born in the release: copying them copies no record
            per_draw[j] += prob * p * is_old
            walk(atoms[:i] + (a + 1,) + atoms[i + 1:], j + 1, prob * p, old + is_old)

    walk(atoms, 0, Fraction(1), 0)
    assert sum(law.values()) == 1
    return per_draw, law


@pytest.mark.parametrize("counts, theta, m", [((2, 1), 1.5, 4), ((1, 1, 1), 0.25, 3), ((3,), 7.0, 3)])
def test_each_row_is_a_record_with_probability_n_over_n_plus_theta(counts, theta, m):
    n = sum(counts)
    per_draw, law = _enumerate(counts, 0.0, theta, m)
    exact = Fraction(n) / (n + Fraction(theta))
    assert all(p == exact for p in per_draw)                      # every row: exchangeability
    assert copy_probability(n, theta) >= exact and Fraction(copy_probability(n, theta)) - exact < 1e-16
    mean = sum(c * p for c, p in law.items())
    assert mean == m * exact
    assert Fraction(expected_copied_rows(m, n, theta)) >= mean > Fraction(expected_copied_rows(m, n, theta)) - 1e-14
    none_new = law[m]
    got = no_new_row_probability(m, n, theta)
    assert Fraction(got) >= none_new and got <= float(none_new) * (1 + 1e-14)
    # the number of copied rows is beta-binomial BB(m, n, θ)
    with mpmath.workdps(40):
        for c, p in law.items():
            bb = mpmath.binomial(m, c) * mpmath.beta(c + n, m - c + theta) / mpmath.beta(n, theta)
            assert abs(bb - mpmath.mpf(p.numerator) / p.denominator) < mpmath.mpf(10) ** -30


@pytest.mark.parametrize("sigma, theta, z", [(0.5, 1.0, None), (0.25, -0.2, None), (-0.5, 2.0, 4)])
def test_old_value_probability_in_every_regime(sigma, theta, z):
    counts = (2, 1)
    n, k = 3, 2
    per_draw, _ = _enumerate(counts, sigma, theta, 3, z=z)
    exact = (n - Fraction(sigma) * k) / (n + Fraction(theta))
    assert all(p == exact for p in per_draw)
    assert Fraction(old_value_probability(n, k, theta, sigma)) >= exact


def test_no_new_row_probability_against_mpmath_at_scale():
    # the issue's earnings release: 620 rows of 61 395 records at θ = 2 hold no new value 98 % of the time
    exact = 1
    for j in range(620):
        exact *= Fraction(61395 + j, 61397 + j)
    got = no_new_row_probability(620, 61395, 2.0)
    assert Fraction(got) >= exact and got <= float(exact) * (1 + 1e-15)
    with mpmath.workdps(60):
        ref = mpmath.rf(10**6, 10**7) / mpmath.rf(10**6 + mpmath.mpf(0.5), 10**7)
    got = no_new_row_probability(10**7, 10**6, 0.5)
    assert got >= float(ref) and got <= float(ref) * (1 + 1e-14)


def test_words_of_the_issues_releases():
    earnings = copy_scale(620, 61395, 2.0)
    assert "about 620 of the 620 released rows" in earnings.words
    assert "0.99997" in earnings.words and "0.981" in earnings.words and "identifies its record" in earnings.words
    assert "fewer than one of the 10" in copy_scale(10, 1000, 1e6).words
    assert set(earnings.to_dict()) == {"copy_probability", "expected_copied_rows", "no_new_row_probability", "words"}


@pytest.mark.parametrize("n, theta, delta, releases", [(4, 396.0, 0.5, 1), (1000, 1e6, 1e-3, 1), (1000, 1e6, 1e-3, 3),
                                                      (50, 1e5, 1e-4, 2), (1000, 2.0, 0.01, 1)])
def test_largest_strong_m_is_the_strong_boundary(n, theta, delta, releases):
    m = largest_strong_m(n, theta, delta, releases=releases)

    def verdict(size):
        return DIRICHLET_PROCESS.release_guarantee(ReleaseSpec(0.0, theta, size, n, eps=1.0, delta=delta,
                                                               releases=releases)).verdict
    if m:
        assert verdict(m) == "strong"
    assert verdict(m + 1) != "strong"
    assert (n, theta) != (4, 396.0) or m == 1      # n·δ = 0.01 exactly at m = 1 is strong


@pytest.mark.parametrize("call, match", [
    (lambda: copy_probability(10, 1.0, sigma=0.5), "sigma"),
    (lambda: copy_scale(5, 10, 1.0, sigma=-1.0), "sigma"),
    (lambda: copy_probability(0, 1.0), "n"),
    (lambda: copy_probability(10, 0.0), "theta"),
    (lambda: expected_copied_rows(0, 10, 1.0), "m"),
    (lambda: old_value_probability(10, 11, 1.0, 0.5), "k"),
])
def test_bad_input_names_the_parameter(call, match):
    with pytest.raises(ValueError, match=match):
        call()
