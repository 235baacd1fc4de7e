"""The one type that carries a privacy statement: :class:`Guarantee` (docs/mathematics.md §3).

Every statement of the project — the guarantee a mechanism of the comparison states, each
guarantee of a PYPP release in the curator report, the guarantee of the public release —
is a :class:`Guarantee`, with one vocabulary for its kind and its scope.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..formatting import format_upper
from .verdict import VERDICTS, AttackTerms

__all__ = ["GUARANTEE_KINDS", "GUARANTEE_SCOPES", "Guarantee"]

#: Pure ε-DP (δ = 0), approximate (ε, δ)-DP, or no privacy.
GUARANTEE_KINDS = ("pure", "approximate", "none")
#: Who is protected: every dataset of size n, the released dataset only, a data-dependent
#: bound computed from the observed records, or nobody.
GUARANTEE_SCOPES = ("global", "instance", "local", "none")
_SCOPE_WORDS = {"global": "global", "instance": "instance-level", "local": "local", "none": "no"}


@dataclass(frozen=True)
class Guarantee:
    """One privacy statement.

    Attributes
    ----------
    kind : {"pure", "approximate", "none"}
        Pure ε-DP (δ = 0), approximate (ε, δ)-DP, or no privacy.
    scope : {"global", "instance", "local", "none"}
        Global: holds for every dataset of size n. Instance: only at the dataset released
        (it depends on the confidential data and is not itself private). Local: a
        data-dependent bound computed from the observed records (seed 004), which contracts
        to a global guarantee only as n → ∞ — not a DP guarantee for this n, and never
        reported as meeting a target. None: no privacy.
    eps : float
        The ε of the statement (∞ for no privacy).
    delta : float or None
        The δ at ``eps`` (0 for pure DP, 1 for no privacy; ``None`` where no value is known
        or where the value may not be published).
    notion : str
        How the guarantee is obtained, in a few words, for the UI.
    name : str
        Short identifier in a report (``instance_delta``, ``tight_instance_delta``,
        ``global_delta``, ``global_pure_dp``, …); empty for a mechanism's own statement.
    meets_target : bool or None
        Whether the statement meets the requested δ target, decided exactly; ``None`` where
        no target applies.
    description : str
        The statement in plain words, as the user reads it (every printed δ and ε threshold
        rounded up, :func:`core.formatting.format_upper`).
    verdict : {"pure", "strong", "weak", "missed"} or None
        For the guarantee of a release (:meth:`core.privacy.Regime.release_guarantee`): the
        verdict of its composed global guarantee against the target (docs/verdicts.md §1);
        ``None`` for a single statement.
    releases : int ≥ 1
        How many independent releases the statement covers (composed).
    attack : AttackTerms or None
        What the best membership test can achieve against the release (docs/verdicts.md §3).
    verbatim_probability : float or None
        Upper bound on the probability that a record whose value is unique in the data
        appears verbatim in the release(s) (docs/verdicts.md §2); ``None`` where none is
        derived (pure releases draw only from a public domain).
    records_exposed : float or None
        n·δ_k rounded up (docs/verdicts.md §1): the expected number of records a mechanism
        allowed by the release's composed δ could publish outright — ``strong`` needs it at
        most 0.01 (decided exactly on the rational δ_k, not on this rounded value). 0 for a
        pure guarantee; ``None`` where no δ is stated.
    """

    kind: str
    scope: str
    eps: float
    delta: float | None
    notion: str = ""
    name: str = ""
    meets_target: bool | None = None
    description: str = ""
    verdict: str | None = None
    releases: int = 1
    attack: AttackTerms | None = None
    verbatim_probability: float | None = None
    records_exposed: float | None = None

    def __post_init__(self):
        if self.verdict is not None and self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {', '.join(VERDICTS)}, got {self.verdict!r}")
        if self.kind not in GUARANTEE_KINDS:
            raise ValueError(f"kind must be 'pure', 'approximate' or 'none', got {self.kind!r}")
        if self.scope not in GUARANTEE_SCOPES:
            raise ValueError(f"scope must be 'global', 'instance', 'local' or 'none', got {self.scope!r}")

    @property
    def is_private(self) -> bool:
        return self.kind != "none"

    @property
    def scope_words(self) -> str:
        """The scope as a reader says it: ``"global"``, ``"instance-level"``, ``"local"``, ``"no"``."""
        return _SCOPE_WORDS[self.scope]

    @property
    def label(self) -> str:
        """A one-line statement for the UI, e.g. ``"pure ε-DP, global (ε = 2.5)"``.

        ε and δ are rounded up (:func:`core.formatting.format_upper`): a printed guarantee is
        never stronger than the computed one.
        """
        if self.kind == "none":
            return "no privacy"
        if self.scope == "local":
            return (f"local, data-dependent ε = {format_upper(self.eps, 6)} "
                    "(computed from the data; not a DP guarantee for this n)")
        if self.kind == "pure":
            return f"pure ε-DP, {self.scope_words} (ε = {format_upper(self.eps, 6)})"
        delta = "unknown" if self.delta is None else format_upper(self.delta, 3)
        return f"approximate (ε, δ)-DP, {self.scope_words} (ε = {format_upper(self.eps, 6)}, δ = {delta})"
