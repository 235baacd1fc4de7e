"""Neighbouring datasets through the release path: no event's probability gap exceeds the stated δ.

For each case a dataset x and a neighbour y (one record replaced) are released many times
through the recipe path (``core.release.run_recipe``: the data prepared by the recipe's own
preparation, the draw ``pypp_release(..., numpy.random.default_rng(seed))``, the published
bytes ``ReleaseResult.synthetic_csv``), one seed per release. For every family of events
below, every event E of the family (every set of its values) must satisfy

    P_x(E) − e^ε P_y(E) ≤ δ   and   P_y(E) − e^ε P_x(E) ≤ δ

with (ε, δ) read from the public report's guarantee, up to a sampling allowance of four
standard errors. The worst event of a family is E* = {v : p̂_x(v) > e^ε p̂_y(v)} (the
hockey-stick divergence between the families' empirical laws).

The families are what a reader of ``synthetic.csv`` sees: the file's bytes when there are
few of them; otherwise the labels, whether the changed record appears, how many values
are new, the number of decimals printed and whether a column is printed as whole numbers,
the missing cells. Before docs/mathematics.md §2.6, a categorical column with a public list
gave new values the categories the data lacked, and new numbers took the precision read off
the data: the categorical and precision cases then show gaps near 0.5 against a stated
δ = 0.025.

One release per seed costs about a millisecond here; a full ``run_recipe`` call costs
about 11 ms (its reports: 14 datasets × 800 seeds would take minutes), so the loop below
replays exactly the draw ``run_recipe`` makes on the prepared data it returned, and checks on
the first seeds of every dataset that ``run_recipe`` gives the same bytes.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import math
import warnings
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from scipy import special

from core.data import ColumnSpec
from core.mechanisms import pypp_release
from core.release import ReleaseRecipe, run_recipe
from core.validation import PrivacyLeakWarning

#: Releases per dataset, and how many of their seeds are checked against ``run_recipe`` itself.
DRAWS = 800
CHECKED = 4
#: Sampling allowance, in standard errors of the worst event's gap.
ALLOWANCE = 4.0
#: ε of the recipes: at ε = 1.1 ≥ log(1 + m) (m ≤ 2) the stated σ = 0 δ is the singleton term
#: T₁ in every version of the accounting; ε = 0.1 also probes the exact profile's claim.
EPS = (1.1, 0.1)


def recipe(columns, *, m, eps, sigma=0.0, theta=20.0, delta=0.5) -> ReleaseRecipe:
    return ReleaseRecipe(source="upload", columns=tuple(columns), eps=eps, delta=None if sigma < 0 else delta,
                         m=m, sigma=sigma, theta=theta)


def releases(rec: ReleaseRecipe, frame: pd.DataFrame, seeds) -> tuple[dict, list[bytes]]:
    """(public report's guarantee, the published CSV bytes of one release per seed)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        first = run_recipe(rec.with_seed(int(seeds[0])), frame)
        prepared, table = first.prepared, first.prepared.table
        out, published = [], {}
        for seed in seeds:
            draw = pypp_release(table.atoms, table.counts, rec.sigma, rec.theta, first.m,
                                np.random.default_rng(int(seed)), base=prepared.bases)
            # the bytes are a function of the released values (repr: exact): each distinct release is written once
            key = repr((draw.values.dtype.str, draw.values.tolist()))
            if key not in published:
                published[key] = dataclasses.replace(first, synthetic=prepared.to_original(draw.values)).synthetic_csv()
            out.append(published[key])
        for seed, data in zip(seeds[:CHECKED], out):   # the loop is run_recipe's draw, byte for byte
            assert run_recipe(rec.with_seed(int(seed)), frame).synthetic_csv() == data
    return first.public_report["guarantee"], out


def rows(data: bytes) -> list[list[str]]:
    """The cells of a released CSV (header dropped)."""
    return list(csv.reader(io.StringIO(data.decode("utf-8"))))[1:]


def printed_decimals(cell: str) -> str:
    """How a numeric cell is printed: 'missing', 'whole' (no point), or its decimals (4 = four or more)."""
    if cell == "":
        return "missing"
    mantissa = cell.lower().split("e")[0]
    if "." not in mantissa:
        return "whole"
    return str(min(len(mantissa.split(".")[1]), 4))


def worst_gap(px: Counter, py: Counter, n: int, factor: float) -> tuple[float, float]:
    """(p̂_x(E*) − factor·p̂_y(E*), its standard error), E* the worst set of values."""
    worst = [v for v in px if px[v] > factor * py.get(v, 0)]
    a = sum(px[v] for v in worst) / n
    b = sum(py.get(v, 0) for v in worst) / n
    # variances with one success and one failure added, so an unseen event is not certain
    sa, sb = (a * n + 1) / (n + 2), (b * n + 1) / (n + 2)
    return a - factor * b, math.sqrt(sa * (1 - sa) / n + factor**2 * sb * (1 - sb) / n)


def check_families(name: str, guarantee: dict, outputs_x, outputs_y, families) -> dict:
    """Assert every family's worst event in both directions; return the gaps (for the report)."""
    eps, delta = guarantee["eps"], guarantee["delta"] or 0.0
    factor = math.exp(eps)
    found = {}
    for family, feature in families.items():
        fx = Counter(feature(o) for o in outputs_x)
        fy = Counter(feature(o) for o in outputs_y)
        for direction, (a, b) in (("x over y", (fx, fy)), ("y over x", (fy, fx))):
            gap, se = worst_gap(a, b, DRAWS, factor)
            found[(family, direction)] = gap
            assert gap <= delta + ALLOWANCE * se, (
                f"{name}, {family} ({direction}): an event has P(E) − e^ε P'(E) = {gap:.4f} > δ = {delta:.4g} "
                f"(ε = {eps:g}) beyond {ALLOWANCE:g} standard errors ({se:.4f}); laws {dict(a)} vs {dict(b)}")
    return found


def seeds_for(label: str) -> np.ndarray:
    """Independent seeds for each dataset (a fixed stream per label: reproducible, no shared draws)."""
    entropy = int.from_bytes(label.encode(), "little")
    return np.random.SeedSequence(entropy).generate_state(DRAWS, dtype=np.uint64)


def guarantee_at(rec: ReleaseRecipe, frame: pd.DataFrame, seed, data: bytes) -> dict:
    """The public guarantee of ``rec`` (another ε, same draw: ε enters the statement, not the release)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        result = run_recipe(rec.with_seed(int(seed)), frame)
    assert result.synthetic_csv() == data
    return result.public_report["guarantee"]


def run_case(name, x, y, columns, families, *, m, theta=20.0):
    """Release x and y DRAWS times each; check every family at each ε of EPS."""
    seeds_x, seeds_y = seeds_for(f"{name}/x"), seeds_for(f"{name}/y")
    gx, out_x = releases(recipe(columns, m=m, eps=EPS[0], theta=theta), x, seeds_x)
    gy, out_y = releases(recipe(columns, m=m, eps=EPS[0], theta=theta), y, seeds_y)
    assert gx == gy   # the public statement depends on public quantities only
    check_families(name, gx, out_x, out_y, families)
    for eps in EPS[1:]:
        rec = recipe(columns, m=m, eps=eps, theta=theta)
        g = guarantee_at(rec, x, seeds_x[0], out_x[0])
        assert g == guarantee_at(rec, y, seeds_y[0], out_y[0])
        check_families(f"{name} at ε = {eps:g}", g, out_x, out_y, families)


def cells_of(column: int):
    return lambda data: tuple(sorted(r[column] for r in rows(data)))


# ----------------------------------------------------------------------------- cases
CENTS = [10.25, 11.5, 12.75, 13.1, 14.99, 15.0, 16.45, 17.3, 18.05, 19.6, 20.2, 21.75, 22.4, 23.15, 24.8, 25.35,
         26.9, 27.05, 28.6]


def test_categorical_column_with_a_public_list():
    """x: one A and 19 B; y: 20 B; public list (A, B); θ = 20, m = 1 (issue 32's case, scaled down).

    New values are uniform over the whole list: both laws give A and B only, and the gap of the
    event 'A' is the singleton term T₁ = 1/40. Before, x's new value was a fresh label (the list
    was used up) with probability 1/2 and y's was A (the one unobserved category)."""
    spec = [ColumnSpec("c", kind="categorical", categories=("A", "B"))]
    x = pd.DataFrame({"c": ["A"] + ["B"] * 19})
    y = pd.DataFrame({"c": ["B"] * 20})
    run_case("categorical", x, y, spec, {"bytes": lambda data: data}, m=1)


def test_precision_is_public():
    """x: 19 values in cents and one written 12.345; y: the same with 12.34; public bounds; m = 1.

    New values keep their full precision whatever the data: a third decimal shows only when x's
    record is copied (probability ≤ T₁). Before, x's new values were rounded to three decimals
    (read off that one record) and y's to two."""
    spec = [ColumnSpec("v", bounds=(0.0, 100.0))]
    x = pd.DataFrame({"v": CENTS + [12.345]})
    y = pd.DataFrame({"v": CENTS + [12.34]})
    run_case("precision", x, y, spec, {
        "decimals printed": lambda data: tuple(printed_decimals(c) for c in cells_of(0)(data)),
        "changed record": lambda data: tuple(c for c in cells_of(0)(data) if c in ("12.345", "12.34")),
    }, m=1)


def test_whole_numbers_are_read_off_the_release_not_the_data():
    """x: 19 ages and one 30.5; y: the same with 30; m = 2. A column is printed as whole numbers
    exactly when every released value is whole; before, x's dtype (float) printed 25.0 and rounded
    new values to one decimal, y's (int) printed 25 and rounded them to units."""
    ages = [20, 21, 23, 25, 26, 28, 29, 31, 33, 34, 36, 38, 40, 41, 43, 45, 47, 50, 52]
    spec = [ColumnSpec("age", bounds=(18, 70))]
    x = pd.DataFrame({"age": ages + [30.5]})
    y = pd.DataFrame({"age": ages + [30]})
    old = {str(a) for a in ages} | {f"{a}.0" for a in ages} | {"30", "30.0", "30.5"}
    run_case("whole numbers", x, y, spec, {
        "decimals printed": lambda data: tuple(printed_decimals(c) for c in cells_of(0)(data)),
        "new values": lambda data: sum(c not in old for c in cells_of(0)(data)),
        "changed record": lambda data: tuple(c for c in cells_of(0)(data) if c in ("30.5", "30", "30.0")),
    }, m=2)


def test_numeric_column_with_public_bounds():
    """A column with public bounds; y replaces the largest value (the one bounds read off the data
    would reveal) by a middle one. Events: the quarter of [lo, hi] each value falls in, how it is
    printed, whether the changed record appears."""
    spec = [ColumnSpec("w", bounds=(0.0, 40.0))]
    x = pd.DataFrame({"w": CENTS + [39.5]})
    y = pd.DataFrame({"w": CENTS + [20.2]})

    def quarters(data):
        return tuple(sorted(min(int(float(c) // 10), 3) for c in cells_of(0)(data)))

    run_case("public bounds", x, y, spec, {
        "quarters": quarters,
        "decimals printed": lambda data: tuple(printed_decimals(c) for c in cells_of(0)(data)),
        "changed record": lambda data: "39.5" in cells_of(0)(data),
    }, m=2)


def test_missing_is_a_value():
    """Missing cells as a value in a numeric and a categorical column (with its public list, the
    missing marker one more public category); y replaces a record with two missing cells by one
    with none. Events: the number of empty cells per column, how numbers are printed, labels."""
    spec = [ColumnSpec("v", bounds=(0.0, 40.0), missing="value"),
            ColumnSpec("g", kind="categorical", categories=("a", "b"), missing="value")]
    values = CENTS[:18] + [None, 31.5]
    labels = ["a", "b"] * 9 + [None, "b"]
    x = pd.DataFrame({"v": values, "g": labels})
    y = pd.DataFrame({"v": CENTS[:18] + [14.0, 31.5], "g": ["a", "b"] * 9 + ["a", "b"]})
    run_case("missing", x, y, spec, {
        "empty cells": lambda data: tuple(sum(r[j] == "" for r in rows(data)) for j in (0, 1)),
        "decimals printed": lambda data: tuple(printed_decimals(c) for c in cells_of(0)(data)),
        "labels": cells_of(1),
    }, m=2)


def test_table_of_three_columns():
    """A numeric, a listed categorical and an unlisted categorical column; a row is one value. y
    replaces x's one row that holds 'C' and 'z'. Events: the labels of each categorical column (fresh
    labels collapsed to 'new'), how numbers are printed, whether the changed row appears."""
    spec = [ColumnSpec("w", bounds=(0.0, 40.0)), ColumnSpec("g", kind="categorical", categories=("A", "B", "C")),
            ColumnSpec("t", kind="categorical")]
    x = pd.DataFrame({"w": CENTS + [33.3], "g": ["A", "B"] * 9 + ["A", "C"], "t": ["u", "v"] * 9 + ["u", "z"]})
    y = pd.DataFrame({"w": CENTS + [12.75], "g": ["A", "B"] * 9 + ["A", "B"], "t": ["u", "v"] * 9 + ["u", "v"]})

    def labels(j):
        return lambda data: tuple(sorted("new" if r[j].startswith("new_category_") else r[j] for r in rows(data)))

    run_case("three columns", x, y, spec, {
        "listed labels": labels(1),
        "free labels": labels(2),
        "decimals printed": lambda data: tuple(printed_decimals(c) for c in cells_of(0)(data)),
        "changed row": lambda data: any(r == ["33.3", "C", "z"] for r in rows(data)),
    }, m=2)


# ----------------------------------------------------------------------------- σ < 0
def dirichlet_multinomial_sequence(counts_by_cell: dict, alpha: float, z: int, sequence: list) -> float:
    """Exact probability of an ordered release under the Dirichlet–multinomial over z public cells
    (docs/mathematics.md §3.3): every cell has weight n_cell + α, observed or not; the m draws in
    uniformly random order, so a sequence has the multiset's probability over its orderings."""
    m = len(sequence)
    total = sum(counts_by_cell.values()) + z * alpha
    log_p = special.gammaln(total) - special.gammaln(total + m)
    for cell, c in Counter(sequence).items():
        beta = counts_by_cell.get(cell, 0) + alpha
        log_p += special.gammaln(beta + c) - special.gammaln(beta)
    # the multinomial coefficient of the counts times 1/(orderings of the multiset) = 1
    return math.exp(log_p)


def test_negative_sigma_over_a_public_list_and_grid():
    """σ < 0 over a public list (a, b, c) × a public grid {0, 1, 2}: z = 9, α = 1, m = 2, pure at
    ε = 1.1 ≥ log(1 + m/α). The release's law is the Dirichlet–multinomial over all nine cells
    (observed or not, each unobserved cell released by name): every output's exact probability is
    computed, the simulated frequencies match it, and exactly P_x(o) ≤ e^ε P_y(o) for every output o."""
    spec = [ColumnSpec("g", kind="categorical", categories=("a", "b", "c")),
            ColumnSpec("v", bounds=(0, 2), grid=1.0)]
    x = pd.DataFrame({"g": ["a", "a", "b", "a", "b", "c"], "v": [0, 0, 1, 2, 1, 0]})
    y = pd.DataFrame({"g": ["a", "a", "b", "a", "b", "b"], "v": [0, 0, 1, 2, 1, 1]})
    alpha, z, m = 1.0, 9, 2
    rec = recipe(spec, m=m, eps=1.1, sigma=-alpha, theta=z * alpha)
    gx, out_x = releases(rec, x, seeds_for("negative/x"))
    gy, out_y = releases(rec, y, seeds_for("negative/y"))
    assert gx == gy and not gx["delta"]
    cells = [(g, v) for g in "abc" for v in ("0", "1", "2")]
    outputs = [[a, b] for a in cells for b in cells]

    counts = {name: Counter((g, str(v)) for g, v in zip(frame["g"], frame["v"])) for name, frame in (("x", x), ("y", y))}
    check_dirichlet_multinomial_law(counts, alpha, z, outputs, gx, out_x, out_y)
    check_families("negative sigma", gx, out_x, out_y, {"bytes": lambda data: data})


def check_dirichlet_multinomial_law(counts: dict, alpha: float, z: int, outputs: list, guarantee: dict,
                                    out_x: list, out_y: list) -> None:
    """Every output's exact probability under x and y (``counts["x"]``, ``counts["y"]``: cell →
    records), P_x(o) ≤ e^ε P_y(o) both ways, and each output's simulated frequency within 4.5
    standard errors of its exact probability."""
    px, py = ({tuple(o): dirichlet_multinomial_sequence(counts[k], alpha, z, o) for o in outputs} for k in "xy")
    assert math.isclose(sum(px.values()), 1.0, rel_tol=1e-12) and math.isclose(sum(py.values()), 1.0, rel_tol=1e-12)
    factor = math.exp(guarantee["eps"])
    assert all(px[o] <= factor * py[o] * (1 + 1e-12) and py[o] <= factor * px[o] * (1 + 1e-12) for o in px)
    for law, out in ((px, out_x), (py, out_y)):
        seen = Counter(tuple((r[0], r[1]) for r in rows(data)) for data in out)
        assert set(seen) <= set(law), set(seen) - set(law)
        for o, p in law.items():
            assert abs(seen.get(o, 0) / DRAWS - p) <= 4.5 * math.sqrt(p * (1 - p) / DRAWS) + 1 / DRAWS, o


def test_negative_sigma_with_missing_kept_as_a_value_on_a_grid_and_a_list():
    """σ < 0 with missing cells kept as a value in a grid column {0, 1} and a listed categorical
    column (a, b): each domain gains the missing atom as one more public category (z = 3 × 3),
    released by name as an empty cell. y replaces x's record with two missing cells by an
    observed one. Every output's exact probability (the Dirichlet–multinomial over the nine
    cells), the simulated frequencies against it, and P_x(o) ≤ e^ε P_y(o) both ways."""
    spec = [ColumnSpec("g", kind="categorical", categories=("a", "b"), missing="value"),
            ColumnSpec("v", bounds=(0, 1), grid=1.0, missing="value")]
    x = pd.DataFrame({"g": ["a", "a", "b", None, "b", None], "v": [0, 0, 1, None, 1, 0]})
    y = pd.DataFrame({"g": ["a", "a", "b", None, "b", "a"], "v": [0, 0, 1, None, 1, 1]})
    alpha, z, m = 1.0, 9, 2
    rec = recipe(spec, m=m, eps=1.1, sigma=-alpha, theta=z * alpha)
    gx, out_x = releases(rec, x, seeds_for("negative-missing/x"))
    gy, out_y = releases(rec, y, seeds_for("negative-missing/y"))
    assert gx == gy and not gx["delta"]
    cells = [(g, v) for g in ("a", "b", "") for v in ("0", "1", "")]
    outputs = [[a, b] for a in cells for b in cells]

    def cell(g, v):
        return ("" if pd.isna(g) else g, "" if pd.isna(v) else str(int(v)))

    counts = {name: Counter(cell(g, v) for g, v in zip(frame["g"], frame["v"])) for name, frame in (("x", x), ("y", y))}
    check_dirichlet_multinomial_law(counts, alpha, z, outputs, gx, out_x, out_y)
    check_families("negative sigma, missing as a value", gx, out_x, out_y, {"bytes": lambda data: data})


@pytest.mark.parametrize("decimals", [None, 2])
def test_new_values_do_not_depend_on_how_the_column_was_read(decimals):
    """The same public recipe on a column read as floats or as whole numbers beyond 2**53 (the exact
    path): new values are drawn by one arithmetic, so a seed gives the same new values."""
    spec = [ColumnSpec("v", bounds=(0, 2**60), decimals=decimals)]
    floats = pd.DataFrame({"v": [1.5, 2.0, 3.0, 4.0]})
    exact = pd.DataFrame({"v": [1, 2, 3, 2**55]})
    rec = recipe(spec, m=50, eps=1.0, theta=200.0)
    for seed in (1, 2, 3):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyLeakWarning)
            a = run_recipe(rec.with_seed(seed), floats)
            b = run_recipe(rec.with_seed(seed), exact)
        new_a = a.synthetic["v"][a.is_new].astype(float).to_numpy()
        new_b = b.synthetic["v"][b.is_new].astype(float).to_numpy()
        assert new_a.size and np.array_equal(np.sort(new_a), np.sort(new_b))
