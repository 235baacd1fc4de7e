"""The ledger's composition (docs/audit.md §8.2) checked by exhaustive enumeration.

Every output of two releases of tiny data is enumerated with its exact probability under a
dataset x and each neighbour y, in both orders (the urn weights of
tests/test_global_profile_enumeration.py, docs/mathematics.md §8.1), and the hockey-stick
divergence of the pair of releases is compared with what the ledger charges:

* two σ = 0 releases with different (m, θ): the divergence is at most 1 − (1 − T₁)(1 − T₁')
  at every ε ≥ 0, and the maximum over the pairs equals it exactly (the ledger is exact);
* two Dirichlet–multinomial releases over a public domain: the largest likelihood ratio is
  exactly Π (1 + m_i/α) and the ledger's ε = Σ log(1 + m_i/α) (rounded up) covers it;
* a σ = 0 release and a Dirichlet–multinomial release: at the ledger's ε the divergence is at
  most the ledger's δ = T₁, and the singleton pair attains it.

Arithmetic is exact: e^ε is replaced by a rational L ≤ e^ε, which can only raise a divergence.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from fractions import Fraction

import mpmath

from core import ledger as L
from core.privacy import ReleaseSpec
from test_global_profile_enumeration import _datasets, _exp_lower, _neighbours, _weights

EPS = (0.0, 0.5, 3.0)
DOMAIN = ("a", "b", "c")     # the public categories of the Dirichlet–multinomial (z = 3)
ALPHA = 1                    # α = |σ| (an integer: exact weights)


def _dp(x, y, m, theta):
    """(W_x, W_y) pairs of one σ = 0 release and their common denominator."""
    a, b = Fraction(theta).numerator, Fraction(theta).denominator
    n = len(x)
    return _weights(x, y, m, a, b), math.prod(a + (n + j) * b for j in range(m))


def _dm(x, y, m):
    """(W_x, W_y) pairs of one Dirichlet–multinomial release over DOMAIN (Pólya urn with initial
    weights count + α) and their common denominator."""
    cx, cy = Counter(x), Counter(y)
    out = []
    for seq in itertools.product(DOMAIN, repeat=m):
        wx = wy = 1
        seen = Counter()
        for value in seq:
            wx *= cx[value] + ALPHA + seen[value]
            wy *= cy[value] + ALPHA + seen[value]
            seen[value] += 1
        out.append((wx, wy))
    n = len(x)
    return out, math.prod(n + len(DOMAIN) * ALPHA + j for j in range(m))


def _product(first, second):
    (w1, d1), (w2, d2) = first, second
    pairs = Counter()
    for (u1, v1), (u2, v2) in itertools.product(w1, w2):
        pairs[u1 * u2, v1 * v2] += 1
    return pairs, d1 * d2


def _divergence(pairs, denominator, bound_e: Fraction) -> Fraction:
    num, den = bound_e.numerator, bound_e.denominator
    return Fraction(sum(c * max(0, wx * den - num * wy) for (wx, wy), c in pairs.items()), den * denominator)


def _singular(pairs, denominator) -> Fraction:
    return Fraction(sum(c * wx for (wx, wy), c in pairs.items() if wy == 0), denominator)


def _pairs(n):
    for x in _datasets(n):
        for y in _neighbours(x):
            yield from ((x, y), (y, x))


def _domain_pairs(n):
    """Datasets over DOMAIN and their neighbours within it (old or unseen public value)."""
    for x in sorted({tuple(sorted(c)) for c in itertools.combinations_with_replacement(DOMAIN, n)}):
        for i, old in enumerate(x):
            for new in DOMAIN:
                if new != old:
                    y = tuple(sorted(x[:i] + (new,) + x[i + 1:]))
                    yield from ((x, y), (y, x))


def test_two_sigma0_releases_compose_exactly_to_one_minus_the_product():
    for (m1, t1), (m2, t2) in (((1, 0.5), (2, 2.0)), ((2, 1.5), (2, 0.5)), ((3, 2.0), (1, 1.5))):
        for n in (2, 3):
            charges = [L.charge_of_spec(ReleaseSpec(0.0, t, m, n, eps=1.0, delta=0.5)) for m, t in ((m1, t1), (m2, t2))]
            bound = L.compose(charges).delta
            assert bound == 1 - (1 - Fraction(m1) / (m1 + Fraction(t1) + n - 1)) * (1 - Fraction(m2) / (m2 + Fraction(t2) + n - 1))
            worst = {eps: Fraction(0) for eps in EPS}
            attained = Fraction(0)
            for x, y in _pairs(n):
                pairs, den = _product(_dp(x, y, m1, t1), _dp(x, y, m2, t2))
                for eps in EPS:
                    value = _divergence(pairs, den, _exp_lower(eps))
                    assert value <= bound, (x, y, eps)
                    worst[eps] = max(worst[eps], value)
                attained = max(attained, _singular(pairs, den))
            assert attained == bound and all(w == bound for w in worst.values())


def test_pure_releases_add_their_eps_and_the_sum_is_attained():
    for m1, m2 in ((1, 2), (2, 2)):
        charges = [L.charge_of_spec(ReleaseSpec(-ALPHA, len(DOMAIN) * ALPHA, m, 3, eps=20.0)) for m in (m1, m2)]
        spend = L.compose(charges)
        exact = (1 + Fraction(m1, ALPHA)) * (1 + Fraction(m2, ALPHA))
        largest = Fraction(0)
        for x, y in _domain_pairs(3):
            pairs, den = _product(_dm(x, y, m1), _dm(x, y, m2))
            assert all(wy > 0 for wx, wy in pairs)          # pure: no output is impossible under y
            largest = max(largest, max(Fraction(wx, wy) for wx, wy in pairs))
        assert largest == exact
        with mpmath.workdps(60):
            assert mpmath.exp(mpmath.mpf(spend.eps.numerator) / spend.eps.denominator) >= mpmath.mpf(exact.numerator) / exact.denominator
        assert spend.delta == 0


def test_a_sigma0_and_a_pure_release_are_within_the_ledger_and_attain_its_delta():
    for m_dp, theta, m_dm in ((1, 0.5, 1), (2, 1.5, 2)):
        n = 3
        dp = L.charge_of_spec(ReleaseSpec(0.0, theta, m_dp, n, eps=1.0, delta=0.5))
        dm = L.charge_of_spec(ReleaseSpec(-ALPHA, len(DOMAIN) * ALPHA, m_dm, n, eps=20.0))
        spend = L.compose([dp, dm])
        assert spend.eps == dm.eps and spend.delta == dp.delta
        e_bound = 1 + Fraction(m_dm, ALPHA)      # ≤ e^{ε} of the ledger (checked above)
        worst = attained = Fraction(0)
        for x, y in _domain_pairs(n):
            pairs, den = _product(_dp(x, y, m_dp, theta), _dm(x, y, m_dm))
            value = _divergence(pairs, den, e_bound)
            assert value <= spend.delta, (x, y)
            worst, attained = max(worst, value), max(attained, _singular(pairs, den))
        assert attained == spend.delta == worst
