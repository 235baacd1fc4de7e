"""The public report of a release: what the public release may say (docs/verdicts.md §1–§2, §6).

:func:`public_report` is built from public quantities only — the recipe's public form, ``n``
and ``m`` — with the recipe's mechanism (:func:`core.release.mechanisms.release_mechanism`):
its composed global guarantee and verdict, its attack terms, the data-dependent choices
(:mod:`core.release.choices`). No statistic of the confidential data can enter: the function
never sees them.
"""
from __future__ import annotations

from .. import __version__
from ..data import coarsening_label
from ..formatting import format_upper
from ..privacy import VERDICT_WORDS
from ..validation import check_integer
from .choices import data_dependent_choices
from .mechanisms import release_mechanism

__all__ = ["public_report"]


def _strength_meaning(guarantee) -> str:
    """The verdict in words, with what a weak δ allows for this mechanism (docs/verdicts.md §2)."""
    words = VERDICT_WORDS[guarantee.verdict]
    if guarantee.verdict == "weak" and guarantee.verbatim_probability is not None:
        times = "the release" if guarantee.releases == 1 else f"one of the {guarantee.releases} releases"
        words += (f". Here: a record whose value is unique can appear verbatim in {times} with probability up to "
                  f"{format_upper(guarantee.verbatim_probability)}")
    return words + "."


def public_report(recipe, *, n: int, m: int, m_rule: str | None = None) -> dict:
    """What the public release may say: the guarantee that holds for every dataset of size n.

    Built from public quantities only — the recipe's public form, ``n`` and ``m`` — with the
    recipe's mechanism (docs/verdicts.md §2, §6). PYPP: for σ = 0 the exact global privacy
    profile of the planned releases, 1 − (1 − T₁)^k at every ε; for σ < 0 the global pure ε-DP
    of the Dirichlet–multinomial release, :math:`\\varepsilon \\ge \\log(1 + m/|\\sigma|)`; for
    σ ∈ (0, 1) only an instance-level guarantee exists, whose value depends on the data and is
    kept in the curator's record. Another mechanism (AIM, MST, the histograms): the global
    (ε, δ) of its own accounting, composed over the planned releases. No statistic of the
    confidential data (k, singletons, instance-level δ, summaries) can enter: the function never
    sees them. The choices the data made (bounds, precision, planner settings, coarsening,
    dropped records, an instance-level size rule) are listed with their consequences in
    ``data_dependent_choices`` and named in ``conditional_on`` (:mod:`core.release.choices`).

    Parameters
    ----------
    recipe : core.release.ReleaseRecipe
    n, m : int ≥ 1
    m_rule : str, optional
        How m was chosen, in words.

    Returns
    -------
    dict (JSON-ready)
    """
    n = check_integer("n", n, minimum=1)
    m = check_integer("m", m, minimum=1)
    public = recipe.public()
    eps, target = public.eps, public.delta
    mechanism = release_mechanism(public.mechanism)
    # every choice the data made that the guarantee does not cover (core.release.choices)
    choices = data_dependent_choices(public, n)
    spec = mechanism.spec(public, n, m)
    statement = mechanism.guarantee_of(spec)   # the one guarantee every page and file reads
    warn: list[str] = mechanism.public_caveats(spec)
    if not statement.meets_target:
        aimed = f"ε = {eps:g}" + ("" if target is None else f", δ = {target:g}")   # a pure target has no δ
        warn.append(f"The release misses the target ({aimed}): {statement.description}")
    guarantee = {key: getattr(statement, key)
                 for key in ("name", "scope", "kind", "eps", "delta", "meets_target", "description")}
    return {
        "artifact": "public release",
        "tool": "bnp-synth",
        "version": __version__,
        "mechanism": mechanism.public_block(public, spec),
        "data": {"n": n, "source": public.source, "columns": [c.name for c in public.columns],
                 # public: each column's kind, bounds, rounding and categories are the published recipe's
                 "column_transforms": public.column_dicts(),
                 # public: the transforms are part of the published recipe
                 "coarsening": [t.to_dict() for t in public.coarsening],
                 "coarsening_description": coarsening_label(public.coarsening) if public.coarsening else "none"},
        "release": {"m": m, "size_rule": public.size_rule,
                    "m_chosen_by": m_rule or public.size_rule, "file": "synthetic.csv"},
        "privacy_target": {"eps": eps, "delta": target},
        "releases_planned": public.releases,
        # the verdict of the composed global guarantee (docs/verdicts.md §1)
        "strength": statement.verdict,
        "strength_meaning": _strength_meaning(statement),
        "guarantee": guarantee,
        "attack": None if statement.attack is None else statement.attack.to_dict(),
        "records_exposed": statement.records_exposed,
        "statement_depends_on_data": bool(choices),
        # each with its key (the acknowledgement the gate asks), what the data decided and its consequence
        "data_dependent_choices": [choice.to_dict() for choice in choices],
        # the banner of the card and the pages; the verdict is shown green only when it is empty
        "conditional_on": [choice.title for choice in choices],
        "warnings": warn,
        "notes": ["The seed is not published: with it, and all records but one, anyone could recompute the "
                  "release for each candidate value of the last record.",
                  "recipe.json states every transform and parameter; the mathematics is in docs/mathematics.md "
                  "of bnp-synth."],
    }
