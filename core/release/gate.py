"""The gate before anything public (docs/verdicts.md §4).

A public release is refused when its verdict is ``missed``, with a message saying what would
meet the target. A ``weak`` release needs an explicit acknowledgement of what its δ allows,
and so does each choice the confidential data made about the release
(:mod:`core.release.choices`: bounds, precision, planner settings, coarsening, dropped
records, an instance-level size rule) — one acknowledgement per choice, each naming its
consequence. The acknowledgements are recorded in ``release.json`` as ``acknowledged``. Every
byte holding released rows passes here: the app's public zip and synthetic CSV, and the
command line's ``--public-bundle`` and ``--out``.
"""
from __future__ import annotations

from .choices import CHOICE_TITLES
from .mechanisms import release_mechanism

__all__ = ["ACKNOWLEDGEMENTS", "AcknowledgementRequired", "PublicationRefused", "check_publication",
           "required_acknowledgements", "spec_of_public_report"]

#: What a curator can accept, each in a few words: a weak verdict, and each data-dependent choice.
ACKNOWLEDGEMENTS = {
    "weak": "the guarantee is weak (n·δ > 0.01)",
    **CHOICE_TITLES,
}


class PublicationRefused(ValueError):
    """The public release is refused: its composed global guarantee misses the target."""


class AcknowledgementRequired(ValueError):
    """The public release needs acknowledgements that were not given.

    Attributes
    ----------
    missing : dict of str to str
        Each acknowledgement not given, with the consequence in words.
    """

    def __init__(self, message: str, missing: dict[str, str]):
        super().__init__(message)
        self.missing = missing


def spec_of_public_report(report: dict):
    """The release spec a public report states (public quantities only): a
    :class:`core.privacy.ReleaseSpec` for PYPP, a :class:`core.release.mechanisms.MechanismSpec`
    for another mechanism (its one-release guarantee as the report records it). Either has
    ``m``, ``n``, ``eps``, ``delta``, ``releases``, ``sigma`` and ``theta`` (``None`` for a
    mechanism other than PYPP)."""
    return release_mechanism(report["mechanism"]["name"]).spec_of_report(report)


def required_acknowledgements(report: dict) -> dict[str, str]:
    """What the curator must accept before this public release, each with its consequence
    in words: ``weak`` for a weak verdict, and one key per data-dependent choice (empty for a
    ``pure`` or ``strong`` release the data decided nothing about).

    Parameters
    ----------
    report : dict
        The public report (:func:`core.release.public_report`).
    """
    needed = {}
    if report["strength"] == "weak":
        needed["weak"] = report["strength_meaning"]
    for choice in report["data_dependent_choices"]:
        needed[choice["key"]] = f"{choice['statement']} {choice['consequence']}"
    return needed


def check_publication(report: dict, acknowledged=()) -> list[str]:
    """Decide whether the public release may be written; returns the acknowledgements it
    records (sorted), or raises.

    Parameters
    ----------
    report : dict
        The public report (:func:`core.release.public_report`).
    acknowledged : iterable of str
        What the curator accepted, from :data:`ACKNOWLEDGEMENTS` (the app's checkboxes; the
        command line's ``--acknowledge KEY``, or ``--accept-weak`` for all of them).

    Raises
    ------
    PublicationRefused
        The verdict is ``missed``; the message says what would meet the target.
    AcknowledgementRequired
        The release is ``weak``, or the data made a choice about it, and that was not
        acknowledged; ``missing`` names what.
    ValueError
        ``acknowledged`` names something unknown.
    """
    accepted = set(acknowledged)
    unknown = accepted - set(ACKNOWLEDGEMENTS)
    if unknown:
        raise ValueError(f"acknowledged must name only {', '.join(map(repr, ACKNOWLEDGEMENTS))}, got "
                         f"{', '.join(map(repr, sorted(unknown)))}")
    if report["strength"] == "missed":
        spec = spec_of_public_report(report)
        aimed = f"ε = {spec.eps:g}" + ("" if spec.delta is None else f", δ = {spec.delta:g}")   # pure: no δ
        advice = release_mechanism(report["mechanism"]["name"]).meeting_advice(spec)
        raise PublicationRefused(f"the public release is refused: it misses the target ({aimed}). {advice}")
    needed = required_acknowledgements(report)
    missing = {key: text for key, text in needed.items() if key not in accepted}
    if missing:
        raise AcknowledgementRequired("the public release needs an explicit acknowledgement: "
                                      + " ".join(f"{ACKNOWLEDGEMENTS[key]} — {text}" for key, text in missing.items()),
                                      missing)
    return sorted(needed)
