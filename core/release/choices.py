"""The choices the confidential data may make about a release, and what each one costs
(docs/verdicts.md §4, docs/mathematics.md §2.6).

A guarantee describes a mechanism fixed before the data are seen. Anything the data decide
about the release — the bounds of the base measure, the precision of new values, the
settings found by the release planner, the mechanism chosen by comparing candidates on the
data, a coarsening built or chosen by looking at the data, the records dropped for a missing
value, the release size chosen at the instance — lies outside it. Each such choice is a :class:`DataDependentChoice`: the public report lists
it, the verdict is shown green only when none remains, the release card and every page
with a verdict carry a "conditional on" banner naming them, and the gate
(:mod:`core.release.gate`) asks a separate acknowledgement for each, naming its consequence.

:func:`data_dependent_choices` reads them off a recipe alone (its public form and n): the
app's pages, the public report, the card and the command line all call it, so they name the
same choices in the same words.
"""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CHOICE_TITLES", "DataDependentChoice", "data_dependent_choices"]

#: Every data-dependent choice a recipe can hold, by key, as an acknowledgement names it.
CHOICE_TITLES = {
    "bounds_from_data": "the bounds were read off the confidential data",
    "precision_from_data": "the precision of new values was read off the confidential data",
    "settings_from_data": "the settings were chosen with the release planner on the confidential data",
    "mechanism_from_data": "the mechanism was chosen by comparing candidates' utility on the confidential data",
    "coarsening_from_data": "the coarsening was built or chosen by looking at the confidential data",
    "dropped_missing": "records with a missing value were dropped, so n depends on the confidential data",
    "instance_size_rule": "the release size m was chosen at the confidential data (instance-level rule)",
    "instance_accounting": "the guarantee is accounted at the confidential data only (σ in (0, 1))",
}

#: What accepting each choice means, in words (the gate quotes it when asking).
_CONSEQUENCES = {
    "bounds_from_data": "No guarantee covers the bounds of the base measure: the clipping range and the range of "
                        "new values can show an extreme value of one record.",
    "precision_from_data": "No guarantee covers the precision of new values: one record written with more decimals "
                           "(or a fraction in a column of whole numbers) makes new values show them, which tells its "
                           "dataset from a neighbour's.",
    "settings_from_data": "No guarantee covers θ (or α and the grid steps) and m: the planner searched them on the "
                          "confidential data, so the published settings can reflect it (for example whether it "
                          "holds a unique value).",
    "mechanism_from_data": "No guarantee covers which mechanism was released: it was chosen after measuring every "
                           "candidate's utility on the confidential data (docs/verdicts.md §7), so the choice itself "
                           "can reflect the data (for example which mechanism keeps a rare record's region).",
    "coarsening_from_data": "No guarantee covers the coarsening: rounding steps, top/bottom codes or merged "
                            "categories chosen from the data can reflect rare records.",
    "dropped_missing": "The published n counts the records left after dropping, so it tells how many records had a "
                       "missing value; the guarantee protects the records left against a change of one of them, not "
                       "the presence of a record with a missing value.",
    "instance_size_rule": "No guarantee covers m: it is the largest size whose guarantee holds at this dataset, so "
                          "m itself reflects the data (for example whether it holds a unique value).",
    "instance_accounting": "No global guarantee is known: the statement holds at the confidential dataset only and "
                           "is itself computed from it.",
}


@dataclass(frozen=True)
class DataDependentChoice:
    """One choice about a release that the confidential data made.

    Attributes
    ----------
    key : str
        One of :data:`CHOICE_TITLES`: what the gate's acknowledgement names.
    title : str
        The choice in a few words (``CHOICE_TITLES[key]``), as the banners list it.
    statement : str
        What was decided from the data, naming the columns concerned (public: the recipe
        names them).
    consequence : str
        What no guarantee covers as a result, in words.
    """

    key: str
    statement: str

    def __post_init__(self):
        if self.key not in CHOICE_TITLES:
            raise ValueError(f"key must be one of {', '.join(map(repr, CHOICE_TITLES))}, got {self.key!r}")

    @property
    def title(self) -> str:
        return CHOICE_TITLES[self.key]

    @property
    def consequence(self) -> str:
        return _CONSEQUENCES[self.key]

    def to_dict(self) -> dict:
        """``{"key", "title", "statement", "consequence"}`` (JSON-ready; ``release.json``)."""
        return {"key": self.key, "title": self.title, "statement": self.statement, "consequence": self.consequence}


def _names(columns) -> str:
    return ", ".join(repr(str(c)) for c in columns)


def data_dependent_choices(recipe, n: int | None = None) -> list[DataDependentChoice]:
    """The data-dependent choices of a release recipe, in the order the gate asks them.

    Parameters
    ----------
    recipe : core.release.ReleaseRecipe
        The recipe (its public form holds everything read here).
    n : int, optional
        The number of records the release is made from (stated when records were dropped).

    Returns
    -------
    list of DataDependentChoice
        Empty when the data decided nothing the guarantee does not cover.
    """
    found = []
    if recipe.bounds_from_data:
        found.append(DataDependentChoice(
            "bounds_from_data", f"The bounds of {_names(recipe.bounds_from_data)} (the clipping range and the range "
                                "of new values) were read off the confidential data."))
    precision = tuple(getattr(recipe, "precision_from_data", ()))
    if precision:
        found.append(DataDependentChoice(
            "precision_from_data", f"New values of {_names(precision)} are rounded to the precision the confidential "
                                   "records were written with (read off the data), not to public decimals."))
    if recipe.settings_chosen_from_data:
        found.append(DataDependentChoice(
            "settings_from_data", "θ (or α and the grid steps) and m were chosen with the release planner, which "
                                  "searched them on the confidential data."))
    if recipe.mechanism_chosen_from_data:
        found.append(DataDependentChoice(
            "mechanism_from_data", "The mechanism was chosen on the release planner after comparing the candidates' "
                                   "utility, measured on the confidential data."))
    if recipe.coarsening_from_data:
        found.append(DataDependentChoice(
            "coarsening_from_data", f"The coarsening was built or chosen by looking at the confidential data "
                                    f"({'; '.join(recipe.coarsening_from_data)})."))
    if recipe.dropped_missing:
        counted = "" if n is None else f" n = {int(n):,} counts the records left, a number that depends on the " \
                                       "confidential data."
        found.append(DataDependentChoice(
            "dropped_missing", f"Records with a missing value in {_names(recipe.dropped_missing)} were dropped before "
                               f"the mechanism.{counted}"))
    if recipe.size_rule == "instance":
        found.append(DataDependentChoice(
            "instance_size_rule", "The release size m is the largest whose instance-level guarantee meets the target "
                                  "at the confidential data."))
    if recipe.sigma is not None and 0 < recipe.sigma < 1:   # PYPP only (another mechanism has no σ)
        found.append(DataDependentChoice(
            "instance_accounting", "With σ in (0, 1) the release is accounted only at the confidential dataset "
                                   "(Monte Carlo, Theorem 1)."))
    return found
