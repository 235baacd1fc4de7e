"""The privacy ledger: every public release counted against a dataset's budget, in a
database, across sessions and people (docs/audit.md §8).

* :mod:`.accounting` — :class:`Charge` (what one release costs: exact (ε, δ); σ = 0 is
  (0, T₁)), :func:`charge_of_spec`, :func:`charge_of_guarantee`, :func:`compose` and
  :class:`Spend` (ε = Σ ε_i, δ = 1 − Π (1 − δ_i), exact);
* :mod:`.store` — :func:`open_ledger`, :class:`Ledger` (budgets, :meth:`Ledger.reserve`,
  :meth:`Ledger.preview`), :class:`Reservation`, the refusals and :func:`ledger_block`
  (the ``ledger`` block of ``release.json``);
* :mod:`.location` — where the default ledger lives (``BNP_SYNTH_LEDGER``, a configuration
  file, ``~/.local/share/bnp-synth/ledger.sqlite``);
* :mod:`.fingerprint` — :func:`source_fingerprint` (the ledger's: the data file or sample a
  release was drawn from) and :func:`dataset_fingerprint` (the released view);
* :mod:`.models` and ``migrations/`` — the schema (SQLAlchemy 2) and its Alembic migrations;
* :mod:`.cli` — ``python -m core ledger …`` and the ``release --ledger`` wiring (import it
  as ``core.ledger.cli``; it is not loaded with the package).
"""

from .accounting import CHARGE_KINDS, Charge, Spend, charge_of_guarantee, charge_of_spec, compose
from .fingerprint import dataset_fingerprint, source_fingerprint
from .location import CONFIG_ENV, LEDGER_ENV, default_path, display_location, resolve_location
from .models import RELEASE_STATUSES
from .store import (
    BudgetExceeded,
    DataChanged,
    DatasetEntry,
    Ledger,
    LedgerError,
    Preview,
    ReleaseEntry,
    Reservation,
    UnknownDataset,
    ledger_block,
    open_ledger,
)

__all__ = [
    "BudgetExceeded", "CHARGE_KINDS", "CONFIG_ENV", "Charge", "DataChanged", "DatasetEntry", "LEDGER_ENV", "Ledger",
    "LedgerError", "Preview", "RELEASE_STATUSES", "ReleaseEntry", "Reservation", "Spend", "UnknownDataset",
    "charge_of_guarantee", "charge_of_spec", "compose", "dataset_fingerprint", "default_path", "display_location",
    "ledger_block", "open_ledger", "resolve_location", "source_fingerprint",
]
