"""The release report: every parameter of a PYPP release and each guarantee, in words.

Shared by the command line (``python -m core release … --report``) and the dashboard's
release bundle, so both record the same content. Guarantees follow docs/mathematics.md §3; each states
whether it is instance-level (about this dataset only) or global (every dataset of
size n), and whether it is pure or approximate DP.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import asdict

import numpy as np

from .. import __version__
from ..formatting import format_upper
from ..privacy import Guarantee, ReleaseSpec
from ..privacy.verdict import composed_singleton_term
from ..validation import check_delta, check_eps, check_integer, check_multiplicities

__all__ = ["Guarantee", "guarantees", "release_report"]


def guarantees(spec: ReleaseSpec, multiplicities, eps: float, delta_target: float, *,
               n_mc: int = 20000, mc_seed: int | None = None) -> list[Guarantee]:
    """The guarantees of a release at one ε (docs/mathematics.md §3), in the order the UI shows them.

    Each regime states its own (:meth:`core.privacy.Regime.statements`): σ = 0 the
    instance-level δ, the tight profile and the global δ of the exact profile; σ ∈ (0, 1) the Monte
    Carlo instance-level bound and no global guarantee; σ < 0 the instance-level bound and
    the global pure-ε condition. Every printed δ is rounded up; every verdict is exact.
    """
    counts = check_multiplicities(multiplicities)
    eps_arr, scalar = check_eps(eps)
    if not scalar:
        raise ValueError("eps must be a scalar for a release report")
    eps = float(eps_arr[0])
    if delta_target is not None or not spec.regime.pure:   # a pure regime needs no δ target
        delta_target = check_delta(delta_target, "delta")
    if int(counts.sum()) != spec.n:
        raise ValueError(f"multiplicities sum to {int(counts.sum())} but the release spec has n = {spec.n}")
    if mc_seed is None:   # the spec's own seed: the page shows the value the record carries
        mc_seed = dataclasses.replace(spec, eps=eps).monte_carlo_seed
    return spec.regime.statements(spec, counts, eps, delta_target, n_mc=n_mc, mc_seed=mc_seed)


def release_report(*, multiplicities, sigma: float, theta: float, m: int, eps: float,
                   delta: float, seed: int | None, columns=None, transforms=None,
                   data_source: str | None = None, bounds_from_data: bool = False,
                   command: str | None = None, n_new_values: int | None = None,
                   n_mc: int = 20000, releases: int = 1, unique_rows_copied: int | None = None,
                   unique_records_copied: int | None = None) -> dict:
    """JSON-ready record of a release: parameters, seed, data profile and guarantees.

    Parameters
    ----------
    multiplicities : array_like of int, shape (k,)
        Frequency profile of the confidential data.
    sigma, theta, m : release parameters (docs/mathematics.md §2)
    eps, delta : float
        The ε at which guarantees are stated and the δ target they are compared with.
    seed : int or None
        Seed of the release's generator (None: not reproducible — stated as such).
    columns, transforms : optional descriptions of the data preparation.
    bounds_from_data : bool
        Whether the base-measure bounds were read off the confidential data (a leak
        the guarantees do not cover; stated in ``warnings``).
    command : str, optional
        The command line that regenerates the release.
    releases : int in [1, 1000]
        How many independent releases of this kind the custodian makes from the same
        data. For k > 1 and σ = 0 the report adds the composed guarantees (privacy loss
        distributions composed with dp_accounting, :mod:`core.privacy.pld`; docs/audit.md) next to
        naive composition (kε, kδ).
    unique_rows_copied : int, optional
        After the release is drawn: how many of its rows equal a record whose value is unique
        in the confidential data (docs/verdicts.md §2).
    unique_records_copied : int, optional
        After the release is drawn: how many distinct records whose value is unique in the
        confidential data appear in it (each counted once, however many rows copy it).
    """
    counts = check_multiplicities(multiplicities)
    releases = check_integer("releases", releases, minimum=1, maximum=1000)
    spec = ReleaseSpec(sigma=float(sigma), theta=float(theta), m=int(m), n=int(counts.sum()), eps=eps,
                       delta=delta, releases=releases)
    items = guarantees(spec, counts, eps, delta, n_mc=n_mc)
    warnings = []
    if bounds_from_data:
        warnings.append("The bounds of the base measure were computed from the confidential data; "
                        "they are not private and no guarantee below covers them.")
    if seed is None:
        warnings.append("No seed was recorded: this release cannot be regenerated.")
    for g in items:
        if g.kind == "none":
            warnings.append(f"No {g.scope_words} guarantee ({g.name}): {g.description}")
        elif g.meets_target is False:
            shown = (f"δ = {format_upper(g.delta)} >" if g.delta is not None else "the condition fails for")
            warnings.append(f"The {g.scope_words} guarantee '{g.name}' misses the target: {shown} "
                            f"{_target_words(eps, delta)}.")
    verdict = spec.regime.release_guarantee(spec)   # the same object the public report reads
    composition = _composition(spec, counts, float(eps), items, releases, verdict)
    if composition and not composition["global_meets_target"]:
        warnings.append(f"After {releases} releases the global guarantee misses the target: δ = "
                        f"{format_upper(composition['global_delta'])} > {_target_words(eps, delta)}.")
    k1 = int(np.sum(counts == 1))
    release_guarantee = {**{key: value for key, value in asdict(verdict).items() if key != "attack"},
                         "attack": None if verdict.attack is None else verdict.attack.to_dict()}
    verbatim = _verbatim_record(spec, k1, verdict.verbatim_probability, unique_records_copied, unique_rows_copied)
    report = {
        "tool": "bnp-synth",
        "version": __version__,
        "mechanism": "Pitman–Yor posterior predictive (PYPP)",
        "regime": spec.regime.name,
        "parameters": {"sigma": spec.sigma, "theta": spec.theta, "m": spec.m,
                       "eps": float(eps), "delta_target": None if delta is None else float(delta), "seed": seed},
        "data": {"source": data_source, "columns": list(columns) if columns is not None else None,
                 "transforms": transforms, "n": spec.n, "k": int(counts.size), "singletons": k1},
        "release": {"m": spec.m, "new_values": n_new_values, "releases": releases},
        "composition": composition,
        # the verdict of the composed global guarantee (docs/verdicts.md), as in release.json
        "strength": verdict.verdict,
        "release_guarantee": release_guarantee,
        "verbatim": verbatim,
        # every number once: the statement the verdict reads is release_guarantee; a statement of
        # the same name with another ε (a pure guarantee stated at the target ε, beside the ε it
        # certifies) is not listed again
        "guarantees": [asdict(g) for g in items if g.name != verdict.name or g.eps == verdict.eps],
        "warnings": warnings,
        "command": command,
    }
    m_sing = None if delta is None else spec.regime.singleton_limit(spec.n, spec.theta, float(delta))
    if m_sing is not None:
        report["data"]["singleton_limit_m"] = m_sing
    return _jsonable(report)


def _verbatim_record(spec: ReleaseSpec, k1: int, p_k: float | None, records: int | None, rows: int | None) -> dict:
    """The curator's verbatim counts, expected beside observed, like with like (docs/verdicts.md §2).

    For σ = 0 a record whose value is unique is a ball of weight 1 in the Pólya urn of θ + n:
    it appears in one release (at least once) with probability T₁ = m/(θ + n + m − 1), and each
    of the m draws copies it with probability 1/(θ + n) (exchangeability), so a release holds on
    average k₁·T₁ distinct unique records in k₁·m/(θ + n) rows; over k independent releases
    k₁·(1 − (1 − T₁)^k) of them appear in at least one. ``None`` where no verbatim law is
    derived (σ ≠ 0).
    """
    known = p_k is not None
    t1 = composed_singleton_term(spec.m, spec.theta, spec.n, 1) if known else None
    return {"probability_per_unique_record": p_k,
            "unique_records_in_data": k1,
            # distinct records, in at least one of the planned releases
            "expected_unique_records_copied": k1 * p_k if known else None,
            # distinct records in this release, and the rows that copy them
            "expected_unique_records_copied_per_release": k1 * t1 if known else None,
            "unique_records_copied": records,
            "expected_unique_rows_copied": k1 * spec.m / (spec.theta + spec.n) if known else None,
            "unique_rows_copied": rows}


def _target_words(eps, delta) -> str:
    """The target in a warning: "δ target 0.01 at ε = 1.0", or the ε alone for a pure target."""
    if delta is None:
        return f"the target at ε = {float(eps)!r}"
    return f"δ target {float(delta)!r} at ε = {float(eps)!r}"


def _composition(spec: ReleaseSpec, counts, eps: float, items, releases: int, verdict: Guarantee) -> dict | None:
    """Guarantees of k independent releases: the composed global guarantee of the release
    (``verdict``, docs/verdicts.md §2), the tight instance-level profile where the regime's
    privacy loss distribution is exact (σ = 0), and naive (kε, kδ) always."""
    if releases == 1:
        return None
    out = {"releases": releases, "eps": eps,
           "naive": [{"name": g.name, "eps": releases * eps,
                      "delta": None if g.delta is None else min(1.0, releases * g.delta)} for g in items],
           "global_delta": verdict.delta, "global_meets_target": bool(verdict.meets_target),
           "description": verdict.description}
    if not spec.regime.exact_loss_distribution:
        return out
    from ..privacy import pld   # dp_accounting is loaded only when composition is asked for

    inst = float(pld.pypp_instance_loss(counts, spec.theta, spec.m).delta(eps, releases))
    out["instance_tight_delta"] = inst
    out["description"] += (f" At this dataset (instance level) the {releases} releases are (ε = {eps!r}, "
                           f"δ = {format_upper(inst)})-DP (tight profile, composed privacy loss distributions; "
                           "δ rounded up).")
    return out


def _jsonable(obj):
    if isinstance(obj, dict):
        return {k: _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (np.floating, float)):
        value = float(obj)
        return value if math.isfinite(value) else str(value)
    if isinstance(obj, np.bool_):
        return bool(obj)
    return obj
