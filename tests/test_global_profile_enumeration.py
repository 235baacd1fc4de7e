"""σ = 0: the exact global privacy profile by exhaustive enumeration (docs/audit.md §1.3,
docs/verdicts.md §2).

For every dataset x of n ≤ 4 records (every multiplicity pattern, with and without a
singleton) and every neighbour y — one record replaced by another value of x or by a fresh
value — every output sequence of m ≤ 3 draws is enumerated with its exact probability under
x and under y (docs/mathematics.md §8.1: one-step predictive probabilities of the Pólya urn;
old atoms by their value, new atoms by order of first appearance N0, N1, …; a value that is
an atom of one dataset and not of the other has probability 0 under the other, since H is
non-atomic). Then, for k = 1 and k = 2 independent releases and ε ∈ {0, 0.1, 1, 5}, the
hockey-stick divergence Σ_Z (p_x(Z) − e^ε p_y(Z))_+ of every ordered pair is at most
1 − (1 − T₁)^k, T₁ = m/(m + θ + n − 1), and the maximum over the pairs equals it exactly.

Arithmetic is exact. With θ = a/b every probability of a sequence of m draws is an integer
weight over the common denominator Π_j (a + (n + j)b), the same for x and y. e^ε is replaced
by a rational lower bound L ≤ e^ε (a truncated Taylor sum), which can only raise a divergence:
so "≤ 1 − (1 − T₁)^k" is proven for the true e^ε, and the maximum is attained because the
singleton pair's divergence is at least its singular mass, which equals 1 − (1 − T₁)^k.
Nothing here shares code with core's accounting.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections import Counter
from fractions import Fraction

import pytest

from core import privacy as P
from core.privacy.verdict import composed_singleton_exact, round_up

EPS = (0.0, 0.1, 1.0, 5.0)
THETAS = (0.5, 1.5, 2.0)          # exact binary values a/b
MAX_N, MAX_M = 4, 3
FRESH = "f"                       # a value outside x (any one: H is non-atomic)


@functools.lru_cache(maxsize=None)
def _exp_lower(eps: float) -> Fraction:
    """A rational L with 1 ≤ L ≤ e^ε, L = 1 at ε = 0 (Taylor sum, every term ≥ 0), within 1e-12."""
    q = Fraction(eps)
    if q == 0:
        return Fraction(1)
    total, term = Fraction(0), Fraction(1)
    for j in range(1, 80):
        total += term
        term = term * q / j
    return Fraction(math.floor(total * 10**12), 10**12)


def _datasets(n: int):
    """One dataset per multiplicity pattern of size n (labels a, b, c, d; relabelling changes nothing)."""
    for pattern in sorted({tuple(sorted(p, reverse=True)) for p in _compositions(n)}):
        yield tuple(label for label, r in zip("abcd", pattern) for _ in range(r))


def _compositions(n: int):
    if n == 0:
        yield ()
        return
    for first in range(1, n + 1):
        for rest in _compositions(n - first):
            yield (first,) + rest


def _neighbours(x: tuple):
    """Every y that replaces one record of x by another value of x or by a fresh value."""
    seen = set()
    for i, old in enumerate(x):
        for new in sorted(set(x) - {old}) + [FRESH]:
            y = tuple(sorted(x[:i] + (new,) + x[i + 1:]))
            if y not in seen:
                seen.add(y)
                yield y


def _weights(x: tuple, y: tuple, m: int, a: int, b: int) -> list[tuple[int, int]]:
    """(W_x(Z), W_y(Z)) for every output sequence Z of m draws with positive probability under x
    or y: p(Z) = W(Z)/Π_j (a + (n + j)b), the one-step predictive probabilities of the urn with
    θ = a/b — an old atom with c copies so far has weight c·b, the next fresh value weight a."""
    out = []

    def walk(step, cx, cy, new, wx, wy):
        if step == m:
            out.append((wx, wy))
            return
        for label in set(cx) | set(cy):
            walk(step + 1, _plus(cx, label), _plus(cy, label), new, wx * cx.get(label, 0) * b, wy * cy.get(label, 0) * b)
        fresh = ("N", new)              # the next new value, in order of first appearance
        walk(step + 1, _plus(cx, fresh), _plus(cy, fresh), new + 1, wx * a, wy * a)

    walk(0, dict(Counter(x)), dict(Counter(y)), 0, 1, 1)
    return [w for w in out if w != (0, 0)]


def _plus(counts: dict, label) -> dict:
    out = dict(counts)
    out[label] = out.get(label, 0) + 1
    return out


def _divergences(wx_wy: list[tuple[int, int]], denominator: int, k: int) -> dict[float, Fraction]:
    """Σ_Z (p_x − L·p_y)_+ over the outputs Z of k independent releases, for L the lower bound of
    e^ε at each ε of EPS (an upper bound on the hockey-stick divergence; exact at ε = 0)."""
    merged = Counter(wx_wy)            # outputs with equal weights under x and y count together
    if k == 2:                         # every ordered pair of outputs of two releases
        pairs = Counter()
        for ((u1, v1), c1), ((u2, v2), c2) in itertools.product(merged.items(), repeat=2):
            pairs[u1 * u2, v1 * v2] += c1 * c2
        merged, denominator = pairs, denominator**2
    out = {}
    for eps in EPS:
        L = _exp_lower(eps)
        num, den = L.numerator, L.denominator
        total = sum(c * max(0, wx * den - num * wy) for (wx, wy), c in merged.items())
        out[eps] = Fraction(total, den * denominator)
    return out


def _singular_mass(wx_wy, denominator: int, k: int) -> Fraction:
    """P_x(outputs impossible under y) over k releases: 1 − (1 − P_x(singular in one))^k."""
    one = Fraction(sum(wx for wx, wy in wx_wy if wy == 0), denominator)
    return 1 - (1 - one) ** k


@pytest.mark.parametrize("theta", THETAS)
def test_the_global_profile_is_the_singleton_term_at_every_eps(theta):
    a, b = Fraction(theta).numerator, Fraction(theta).denominator
    checked = 0
    for n in range(1, MAX_N + 1):
        for m in range(1, MAX_M + 1):
            denominator = math.prod(a + (n + j) * b for j in range(m))
            worst = {(k, eps): Fraction(0) for k in (1, 2) for eps in EPS}
            attained = {1: Fraction(0), 2: Fraction(0)}
            for x in _datasets(n):
                for y in _neighbours(x):
                    for first, second in ((x, y), (y, x)):          # every ordered pair
                        weights = _weights(first, second, m, a, b)
                        assert sum(wx for wx, _ in weights) == denominator == sum(wy for _, wy in weights)
                        for k in (1, 2):
                            bound = composed_singleton_exact(m, theta, n, k)
                            for eps, value in _divergences(weights, denominator, k).items():
                                assert value <= bound, (first, second, m, k, eps)
                                worst[k, eps] = max(worst[k, eps], value)
                            attained[k] = max(attained[k], _singular_mass(weights, denominator, k))
                            checked += 1
            for k in (1, 2):
                exact = composed_singleton_exact(m, theta, n, k)
                assert exact == 1 - ((Fraction(theta) + n - 1) / (Fraction(theta) + n + m - 1)) ** k
                # the singleton pair's singular mass is a lower bound of its divergence at every ε
                assert attained[k] == exact
                for eps in EPS:
                    assert worst[k, eps] == exact, (n, m, k, eps)
                    # what the release states: δ_k, flat in ε, rounded up by at most one double
                    if eps > 0:
                        g = P.DIRICHLET_PROCESS.release_guarantee(P.ReleaseSpec(0.0, theta, m, n, eps=eps,
                                                                                delta=0.5, releases=k))
                        assert g.delta == round_up(exact) == g.attack.advantage
    assert checked > 500


def test_a_dataset_without_singletons_stays_below_the_profile_at_positive_eps():
    # x = (a, a, b, b): no singleton; at ε = 0 a fresh-value neighbour reaches T₁ (TV = 1 − E e^{−L}),
    # at ε > 0 it stays strictly below — the worst case needs a singleton
    a, b, n, m = 3, 2, 4, 3
    denominator = math.prod(a + (n + j) * b for j in range(m))
    x = ("a", "a", "b", "b")
    for y in _neighbours(x):
        weights = _weights(x, y, m, a, b)
        assert _singular_mass(weights, denominator, 1) == 0
        for k in (1, 2):
            values = _divergences(weights, denominator, k)
            exact = composed_singleton_exact(m, 1.5, n, k)
            assert all(values[eps] < exact for eps in EPS if eps > 0)
            if FRESH in y:
                assert values[0.0] == exact


def test_the_enumeration_matches_the_closed_forms_of_one_pair():
    # x = (a, b, b), y replaces a by a fresh value, θ = 3/2, m = 2: the singleton pair, whose loss is
    # 0 or ∞ — divergence T₁ = 2/(2 + 1.5 + 2) = 4/11 at every ε
    a, b, n, m = 3, 2, 3, 2
    denominator = math.prod(a + (n + j) * b for j in range(m))
    weights = _weights(("a", "b", "b"), ("b", "b", FRESH), m, a, b)
    assert set(_divergences(weights, denominator, 1).values()) == {Fraction(4, 11)}
    assert set(_divergences(weights, denominator, 2).values()) == {1 - Fraction(7, 11) ** 2}
    # the two-release divergence of a pair with finite losses is not a function of the one-release
    # value: the enumeration of pairs of outputs is what decides it
    weights = _weights(("a", "a", "b"), ("a", "b", FRESH), m, a, b)
    one, two = _divergences(weights, denominator, 1), _divergences(weights, denominator, 2)
    assert one[0.0] == Fraction(4, 11) and two[0.0] == 1 - Fraction(7, 11) ** 2
    assert 0 < one[1.0] < Fraction(4, 11) and 0 < two[1.0] < 1 - Fraction(7, 11) ** 2
