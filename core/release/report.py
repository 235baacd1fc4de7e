"""The release report: every parameter of a PYPP release and each guarantee, in words.

Shared by the command line (``python -m core release … --report``) and the dashboard's
release bundle, so both record the same content. Guarantees follow docs/mathematics.md §3; each states
whether it is instance-level (about this dataset only) or global (every dataset of
size n), and whether it is pure or approximate DP.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from .. import __version__
from ..formatting import format_upper
from ..privacy import (
    ReleaseSpec,
    dirichlet_multinomial_is_pure,
    dirichlet_multinomial_pure_epsilon,
    global_delta,
    global_delta_at_most,
    instance_delta,
    instance_delta_at_most,
    monte_carlo_delta,
    singleton_limit,
    tight_instance_delta,
)
from ..validation import check_delta, check_eps, check_integer, check_multiplicities

__all__ = ["Guarantee", "guarantees", "release_report"]


@dataclass(frozen=True)
class Guarantee:
    """One privacy statement about a release.

    Attributes
    ----------
    name : str
        Short identifier (``instance_delta``, ``tight_instance_delta``, ``global_delta``, …).
    scope : str
        ``"instance-level"`` or ``"global"``.
    kind : str
        ``"pure"``, ``"approximate"`` or ``"none"``.
    eps : float
    delta : float or None
        The δ at ``eps`` (``None`` where no guarantee is known).
    meets_target : bool or None
        Whether ``delta`` is within the requested δ target.
    description : str
        The statement in plain words, as the user sees it.
    """

    name: str
    scope: str
    kind: str
    eps: float
    delta: float | None
    meets_target: bool | None
    description: str


def guarantees(spec: ReleaseSpec, multiplicities, eps: float, delta_target: float, *,
               n_mc: int = 20000, mc_seed: int | None = 0) -> list[Guarantee]:
    """The guarantees of a release at one ε (docs/mathematics.md §3), in the order the UI shows them."""
    counts = check_multiplicities(multiplicities)
    eps_arr, scalar = check_eps(eps)
    if not scalar:
        raise ValueError("eps must be a scalar for a release report")
    eps = float(eps_arr[0])
    delta_target = check_delta(delta_target, "delta")
    n, m, sigma, theta = spec.n, spec.m, spec.sigma, spec.theta
    if int(counts.sum()) != n:
        raise ValueError(f"multiplicities sum to {int(counts.sum())} but the release spec has n = {n}")
    out: list[Guarantee] = []
    up = format_upper        # every printed δ and ε threshold is rounded toward the safe side
    e_txt = f"{eps!r}"       # the user's ε exactly as given

    def add(name, scope, kind, value, meets, text):
        out.append(Guarantee(name, scope, kind, eps, value, meets, text))

    if sigma == 0:
        d_inst = instance_delta(counts, 0.0, theta, m, eps)
        d_tight = tight_instance_delta(counts, theta, m, eps)
        d_glob = global_delta(n, theta, m, eps)
        inst_ok = instance_delta_at_most(counts, 0.0, theta, m, eps, delta_target)
        add("instance_delta", "instance-level", "approximate", d_inst, inst_ok,
            f"Instance-level probabilistic DP (paper, Theorem 1): at this dataset, the privacy loss "
            f"exceeds ε = {e_txt} with probability at most δ = {up(d_inst)}, against every neighbour. "
            "It does not protect other datasets.")
        # the tight profile is never above the probabilistic δ, so it meets whenever that does
        add("tight_instance_delta", "instance-level", "approximate", d_tight,
            True if inst_ok else bool(d_tight <= delta_target),
            f"Tight instance-level (ε, δ)-DP profile: this dataset is (ε = {e_txt}, δ = {up(d_tight)})-DP "
            "against every neighbour (exact hockey-stick divergence; never above the probabilistic δ).")
        add("global_delta", "global", "approximate", d_glob,
            global_delta_at_most(n, theta, m, eps, delta_target),
            f"Global (ε, δ)-DP (Theorem 2): every dataset of size n = {n} is protected with "
            f"ε = {e_txt}, δ = {up(d_glob)}.")
    elif sigma > 0:
        mc = monte_carlo_delta(counts, sigma, theta, m, eps, n_mc=n_mc, rng=np.random.default_rng(mc_seed))
        upper, est, se = float(mc.upper[0]), float(mc.estimate[0]), float(mc.std_error[0])
        add("instance_delta", "instance-level", "approximate", upper, bool(upper <= delta_target),
            f"Instance-level probabilistic DP (Theorem 1, Monte Carlo with {mc.n_mc:,} replicates, seed "
            f"{mc_seed}): estimate δ = {up(est)} ± {up(se, 2)} (standard error); the 95% upper confidence "
            f"bound δ = {up(upper)} is used. It is a statistical, not a certain, bound, and covers this "
            "dataset only.")
        add("global_delta", "global", "none", None, None,
            "No global guarantee is known for σ in (0, 1): the release is only accounted at this dataset.")
    else:
        alpha = -sigma
        z = spec.categories
        d_bound = instance_delta(counts, sigma, theta, m, eps)
        eps_inst = dirichlet_multinomial_pure_epsilon(counts, alpha, m)
        eps_glob = dirichlet_multinomial_pure_epsilon(counts, alpha, m, instance=False)
        inst_pure = z == 1 or dirichlet_multinomial_is_pure(counts, alpha, m, eps)
        add("instance_delta", "instance-level", "pure" if inst_pure else "approximate", d_bound,
            instance_delta_at_most(counts, sigma, theta, m, eps, delta_target),
            f"Instance-level δ bound (Dirichlet–multinomial over z = {z} public categories): "
            f"δ ≤ {up(d_bound)} at ε = {e_txt} (an upper bound, not the exact δ); pure ε-DP at this "
            f"dataset for every ε ≥ {up(eps_inst)} "
            f"({'holds' if inst_pure else 'does NOT hold'} at ε = {e_txt}).")
        glob_ok = dirichlet_multinomial_is_pure(counts, alpha, m, eps, instance=False)
        add("global_pure_dp", "global", "pure", 0.0 if glob_ok else None, glob_ok,
            f"Global pure ε-DP holds iff m ≤ (e^ε − 1)·α, i.e. ε ≥ {up(eps_glob)} "
            f"({'holds' if glob_ok else 'does NOT hold'} at ε = {e_txt}).")
    return out


def release_report(*, multiplicities, sigma: float, theta: float, m: int, eps: float,
                   delta: float, seed: int | None, columns=None, transforms=None,
                   data_source: str | None = None, bounds_from_data: bool = False,
                   command: str | None = None, n_new_values: int | None = None,
                   n_mc: int = 20000, releases: int = 1) -> dict:
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
    """
    counts = check_multiplicities(multiplicities)
    releases = check_integer("releases", releases, minimum=1, maximum=1000)
    spec = ReleaseSpec(sigma=float(sigma), theta=float(theta), m=int(m), n=int(counts.sum()))
    items = guarantees(spec, counts, eps, delta, n_mc=n_mc)
    warnings = []
    if bounds_from_data:
        warnings.append("The bounds of the base measure were computed from the confidential data; "
                        "they are not private and no guarantee below covers them.")
    if seed is None:
        warnings.append("No seed was recorded: this release cannot be regenerated.")
    for g in items:
        if g.kind == "none":
            warnings.append(f"No {g.scope} guarantee ({g.name}): {g.description}")
        elif g.meets_target is False:
            shown = (f"δ = {format_upper(g.delta)} >" if g.delta is not None else "the condition fails for")
            warnings.append(f"The {g.scope} guarantee '{g.name}' misses the target: {shown} δ target "
                            f"{float(delta)!r} at ε = {float(eps)!r}.")
    composition = _composition(spec, counts, float(eps), float(delta), items, releases)
    if composition and not composition["global_meets_target"]:
        warnings.append(f"After {releases} releases the global guarantee misses the target: δ = "
                        f"{format_upper(composition['global_delta'])} > δ target {float(delta)!r} at ε = {float(eps)!r}.")
    k1 = int(np.sum(counts == 1))
    report = {
        "tool": "bnp-synth",
        "version": __version__,
        "mechanism": "Pitman–Yor posterior predictive (PYPP)",
        "regime": spec.regime,
        "parameters": {"sigma": spec.sigma, "theta": spec.theta, "m": spec.m,
                       "eps": float(eps), "delta_target": float(delta), "seed": seed},
        "data": {"source": data_source, "columns": list(columns) if columns is not None else None,
                 "transforms": transforms, "n": spec.n, "k": int(counts.size), "singletons": k1},
        "release": {"m": spec.m, "new_values": n_new_values, "releases": releases},
        "composition": composition,
        "guarantees": [asdict(g) for g in items],
        "warnings": warnings,
        "command": command,
    }
    if spec.sigma == 0:
        report["data"]["singleton_limit_m"] = singleton_limit(spec.n, spec.theta, float(delta))
    return _jsonable(report)


def _composition(spec: ReleaseSpec, counts, eps: float, delta: float, items, releases: int) -> dict | None:
    """Guarantees of k independent releases (σ = 0): PLD composition and naive (kε, kδ)."""
    if releases == 1:
        return None
    out = {"releases": releases, "eps": eps,
           "naive": [{"name": g.name, "eps": releases * eps,
                      "delta": None if g.delta is None else min(1.0, releases * g.delta)} for g in items]}
    if spec.sigma != 0:
        out["note"] = ("Only naive composition is stated for σ ≠ 0: the exact privacy loss distribution is "
                       "known for σ = 0 (the Audit page estimates it by Monte Carlo for σ in (0, 1)).")
        out["global_delta"], out["global_meets_target"] = None, True
        return out
    from ..privacy import pld   # dp_accounting is loaded only when composition is asked for

    glob = float(pld.pypp_global_loss(spec.n, spec.theta, spec.m).delta(eps, releases))
    inst = float(pld.pypp_instance_loss(counts, spec.theta, spec.m).delta(eps, releases))
    out.update({
        "global_delta": glob, "global_meets_target": bool(glob <= delta),
        "instance_tight_delta": inst,
        "description": (f"After {releases} independent releases from the same data: globally (every dataset of "
                        f"n = {spec.n}) (ε = {eps!r}, δ = {format_upper(glob)})-DP, and at this dataset "
                        f"(ε = {eps!r}, δ = {format_upper(inst)})-DP (tight profile), by composing the privacy "
                        "loss distributions (dp_accounting; δ rounded up). Naive composition would give "
                        f"(kε, kδ) = ({releases * eps!r}, k·δ)."),
    })
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
