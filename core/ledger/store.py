"""The ledger: budgets and releases in a database, and the reservation every public release
passes (docs/audit.md §8).

:func:`open_ledger` opens (and creates or migrates, with Alembic) a ledger at a location — an
SQLite file by default, a PostgreSQL server through an SQLAlchemy URL — and returns a
:class:`Ledger`. :meth:`Ledger.reserve` records a release **before** any public byte is
handed out, in one transaction that locks the dataset, re-reads what was spent and refuses
(:class:`BudgetExceeded`, with what remains) a release that would exceed the budget; the
record is ``pending`` until :meth:`Reservation.complete` stores the public output's SHA-256.
A crash in between leaves it ``pending``: shown as incomplete and counted as spent, never
lost.

Concurrency: on SQLite every transaction starts with ``BEGIN IMMEDIATE`` (one writer at a
time, the others wait up to :data:`SQLITE_TIMEOUT` seconds); on PostgreSQL the dataset's row
is locked (``SELECT … FOR UPDATE``) for the read-check-insert. Two processes can never both
read the same spend and both insert. No SQL text is built from input: every statement is an
SQLAlchemy expression with bound parameters.
"""
from __future__ import annotations

import importlib.resources
import json
import math
import os
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.util.exc import CommandError
from sqlalchemy import create_engine, event, func, select, text
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from ..validation import check_budget_value, check_name
from .accounting import Charge, Spend, compose, fraction_text, parse_fraction
from .location import display_location, resolve_location, to_url
from .models import DatasetRow, ReleaseRow

__all__ = ["BudgetExceeded", "DataChanged", "DatasetEntry", "Ledger", "LedgerError", "Preview", "ReleaseEntry",
           "Reservation", "SQLITE_TIMEOUT", "UnknownDataset", "ledger_block", "open_ledger"]

#: Seconds an SQLite writer waits for another to finish before giving up.
SQLITE_TIMEOUT = 60.0
#: Longest dataset name (and person's name) stored.
MAX_NAME = 200
#: Key of the PostgreSQL advisory lock that serialises two first openings (migrations).
_MIGRATION_LOCK = 0x626E7053
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


class LedgerError(ValueError):
    """A ledger operation is refused (the command line answers with exit status 2)."""


class UnknownDataset(LedgerError):
    """No budget is set for the dataset named."""


class DataChanged(LedgerError):
    """The data released under this name differ from those released before (another fingerprint
    or n); pass ``accept_changed_data=True`` to record the release anyway, flagged."""


class BudgetExceeded(LedgerError):
    """The release would take the dataset over its budget; nothing was recorded.

    Attributes
    ----------
    dataset : str
    budget : tuple of float (ε, δ)
    cumulative : tuple of float (ε, δ)
        Spent so far (rounded up).
    remaining : tuple of float (ε, δ)
        ε left, and the largest δ one more release may have (rounded down).
    requested : tuple of float (ε, δ)
        This release's cost (rounded up).
    """

    def __init__(self, message, *, dataset, budget, cumulative, remaining, requested):
        super().__init__(message)
        self.dataset, self.budget, self.cumulative = dataset, budget, cumulative
        self.remaining, self.requested = remaining, requested


def _now() -> datetime:
    return datetime.now(timezone.utc)


def _utc(value: datetime | None) -> datetime | None:
    """A stored time as an aware UTC datetime (SQLite returns it naive)."""
    if value is None:
        return None
    return value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value.astimezone(timezone.utc)


def _iso(value: datetime | None) -> str | None:
    return None if value is None else _utc(value).isoformat(timespec="seconds").replace("+00:00", "Z")


def _name(label: str, value) -> str:
    return check_name(label, value, max_length=MAX_NAME)


@dataclass(frozen=True)
class ReleaseEntry:
    """One release as the ledger records it.

    ``status`` is what is stored; :attr:`state` what a reader is told: ``complete``, or
    ``incomplete`` for a ``pending`` (recorded, output not confirmed: a crash, or a release
    being written now) or ``incomplete`` record — counted as spent either way.
    """

    dataset: str
    index: int
    mechanism: str
    spec: dict
    charge: Charge
    eps: float
    delta: float
    cumulative_eps: float
    cumulative_delta: float
    budget_eps: float
    budget_delta: float
    fingerprint: str
    n: int
    data_changed: bool
    by: str
    at: datetime
    completed_at: datetime | None
    sha256: str | None
    status: str

    @property
    def state(self) -> str:
        return "complete" if self.status == "complete" else "incomplete"

    def to_dict(self) -> dict:
        """JSON-ready (times in ISO 8601 UTC; exact values as ``"p/q"`` under ``exact``)."""
        return {"dataset": self.dataset, "release_index": self.index, "mechanism": self.mechanism,
                "spec": self.spec, "kind": self.charge.kind, "eps": self.eps, "delta": self.delta,
                "cumulative": {"eps": self.cumulative_eps, "delta": self.cumulative_delta},
                "budget": {"eps": self.budget_eps, "delta": self.budget_delta},
                "exact": self.charge.to_state(), "fingerprint": self.fingerprint, "n": self.n,
                "data_changed": self.data_changed, "by": self.by, "at": _iso(self.at),
                "completed_at": _iso(self.completed_at), "bundle_sha256": self.sha256, "status": self.status,
                "state": self.state}


@dataclass(frozen=True)
class DatasetEntry:
    """A dataset, its budget and its releases (in order), with the composed spend."""

    name: str
    fingerprint: str | None
    n: int | None
    budget_eps: float
    budget_delta: float
    set_by: str
    set_at: datetime
    releases: tuple[ReleaseEntry, ...] = ()
    spend: Spend = field(default_factory=Spend)

    @property
    def cumulative(self) -> tuple[float, float]:
        """(ε, δ) spent so far, rounded up."""
        return self.spend.eps_up, self.spend.delta_up

    @property
    def remaining(self) -> tuple[float, float]:
        """(ε left, largest δ of one more release), rounded down (:meth:`Spend.remaining`)."""
        return self.spend.remaining(self.budget_eps, self.budget_delta)

    @property
    def incomplete(self) -> int:
        return sum(r.state == "incomplete" for r in self.releases)

    def to_dict(self) -> dict:
        eps, delta = self.cumulative
        eps_left, delta_left = self.remaining
        return {"dataset": self.name, "fingerprint": self.fingerprint, "n": self.n,
                "budget": {"eps": self.budget_eps, "delta": self.budget_delta, "set_by": self.set_by,
                           "set_at": _iso(self.set_at)},
                "cumulative": {"eps": eps, "delta": delta,
                               "exact": {"eps": fraction_text(self.spend.eps),
                                         "survival": fraction_text(self.spend.survival)}},
                "remaining": {"eps": eps_left, "delta_next_release": delta_left},
                "releases": [r.to_dict() for r in self.releases]}


@dataclass(frozen=True)
class Preview:
    """What one more release would do (read only, no lock: :meth:`Ledger.reserve` decides).

    Attributes
    ----------
    fits : bool
    dataset : DatasetEntry
    after : Spend
        The spend if the release were made.
    data_changed : bool
        The fingerprint differs from the last one released under the name.
    """

    fits: bool
    dataset: DatasetEntry
    after: Spend
    data_changed: bool


def ledger_block(entry: ReleaseEntry) -> dict:
    """The ``ledger`` block of ``release.json`` and the card: ``{dataset, release_index,
    cumulative: {eps, delta}, budget: {eps, delta}}`` (public: no fingerprint, no person)."""
    return {"dataset": entry.dataset, "release_index": entry.index,
            "cumulative": {"eps": entry.cumulative_eps, "delta": entry.cumulative_delta},
            "budget": {"eps": entry.budget_eps, "delta": entry.budget_delta}}


def _charge_of(row: ReleaseRow) -> Charge:
    return Charge(row.kind, parse_fraction(row.eps_exact), parse_fraction(row.survival_exact))


def _release_entry(name: str, row: ReleaseRow) -> ReleaseEntry:
    return ReleaseEntry(
        dataset=name, index=row.release_index, mechanism=row.mechanism, spec=json.loads(row.spec),
        charge=_charge_of(row), eps=row.eps, delta=row.delta, cumulative_eps=row.cumulative_eps,
        cumulative_delta=row.cumulative_delta, budget_eps=row.budget_eps, budget_delta=row.budget_delta,
        fingerprint=row.fingerprint, n=row.n, data_changed=bool(row.data_changed), by=row.created_by,
        at=_utc(row.created_at), completed_at=_utc(row.completed_at), sha256=row.bundle_sha256, status=row.status)


def _dataset_entry(session: Session, ds: DatasetRow) -> DatasetEntry:
    rows = session.scalars(select(ReleaseRow).where(ReleaseRow.dataset_id == ds.id)
                           .order_by(ReleaseRow.release_index)).all()
    return DatasetEntry(name=ds.name, fingerprint=ds.fingerprint, n=ds.n, budget_eps=ds.budget_eps,
                        budget_delta=ds.budget_delta, set_by=ds.set_by, set_at=_utc(ds.set_at),
                        releases=tuple(_release_entry(ds.name, r) for r in rows),
                        spend=compose(_charge_of(r) for r in rows))


class Reservation:
    """A release recorded as ``pending``: write the public output, then :meth:`complete`.

    Used as a context manager, an exception inside marks it ``incomplete`` (still counted)."""

    def __init__(self, ledger: "Ledger", entry: ReleaseEntry, row_id: int):
        self.ledger, self.entry, self._row_id = ledger, entry, row_id

    @property
    def block(self) -> dict:
        """:func:`ledger_block` of the reserved release."""
        return ledger_block(self.entry)

    def complete(self, bundle_sha256: str) -> ReleaseEntry:
        """Mark the release written, with the SHA-256 (hex) of its public output."""
        if not isinstance(bundle_sha256, str) or not _SHA256.match(bundle_sha256):
            raise ValueError(f"bundle_sha256 must be 64 lowercase hexadecimal digits, got {bundle_sha256!r}")
        return self._finish("complete", bundle_sha256)

    def fail(self) -> ReleaseEntry:
        """Mark the release ``incomplete``: recorded, its output not (fully) written; still counted."""
        return self._finish("incomplete", None)

    def _finish(self, status: str, sha: str | None) -> ReleaseEntry:
        with Session(self.ledger.engine) as session, session.begin():
            row = session.get(ReleaseRow, self._row_id)
            if row.status != "pending":
                raise LedgerError(f"release {row.release_index} of {self.entry.dataset!r} is already {row.status}")
            row.status, row.bundle_sha256, row.completed_at = status, sha, _now()
            session.flush()
            self.entry = _release_entry(self.entry.dataset, row)
        return self.entry

    def __enter__(self) -> "Reservation":
        return self

    def __exit__(self, kind, value, traceback) -> None:
        if kind is not None and self.entry.status == "pending":
            self.fail()


class Ledger:
    """A privacy ledger (use :func:`open_ledger`).

    Attributes
    ----------
    location : str
        The path or URL it was opened at.
    engine : sqlalchemy.engine.Engine
    """

    def __init__(self, engine: Engine, location: str):
        self.engine, self.location = engine, location

    def __repr__(self) -> str:
        return f"<Ledger {display_location(self.location)}>"

    def __enter__(self) -> "Ledger":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self.engine.dispose()

    # ------------------------------------------------------------------ budgets
    def set_budget(self, name: str, eps: float, delta: float = 0.0, *, by: str) -> DatasetEntry:
        """Set (or change) the budget (ε, δ) of dataset ``name``, recording who and when.

        The releases already made stay counted; a budget lowered below the spend refuses
        every further release.
        """
        name, by = _name("dataset", name), _name("by", by)
        eps, delta = check_budget_value("eps", eps, math.inf), check_budget_value("delta", delta, 1.0)
        for attempt in (0, 1):   # a first budget set by two people at once: the second updates
            try:
                with Session(self.engine) as session, session.begin():
                    ds = session.scalars(select(DatasetRow).where(DatasetRow.name == name).with_for_update()).first()
                    now = _now()
                    if ds is None:
                        ds = DatasetRow(name=name, budget_eps=eps, budget_delta=delta, set_by=by, set_at=now,
                                        created_at=now)
                        session.add(ds)
                    else:
                        ds.budget_eps, ds.budget_delta, ds.set_by, ds.set_at = eps, delta, by, now
                    session.flush()
                    return _dataset_entry(session, ds)
            except IntegrityError:
                if attempt:
                    raise
        raise AssertionError("unreachable")

    def dataset(self, name: str) -> DatasetEntry:
        """The dataset ``name`` with its releases; :class:`UnknownDataset` if it has no budget."""
        name = _name("dataset", name)
        with Session(self.engine) as session, session.begin():
            ds = session.scalars(select(DatasetRow).where(DatasetRow.name == name)).first()
            if ds is None:
                raise UnknownDataset(_unknown(name))
            return _dataset_entry(session, ds)

    def datasets(self) -> list[DatasetEntry]:
        """Every dataset, by name."""
        with Session(self.engine) as session, session.begin():
            return [_dataset_entry(session, ds)
                    for ds in session.scalars(select(DatasetRow).order_by(DatasetRow.name)).all()]

    def release_count(self) -> int:
        """How many releases the ledger holds, of every dataset and status."""
        with Session(self.engine) as session, session.begin():
            return session.scalar(select(func.count()).select_from(ReleaseRow))

    # ------------------------------------------------------------------ releases
    def preview(self, name: str, charge: Charge, *, fingerprint: str | None = None,
                n: int | None = None) -> Preview:
        """Whether one more release costing ``charge`` fits (read only; for a page to show the
        remaining budget beside the verdict). :meth:`reserve` decides."""
        entry = self.dataset(name)
        after = entry.spend.plus(charge)
        changed = _changed(entry.fingerprint, entry.n, fingerprint, n) if fingerprint is not None else False
        return Preview(after.within(entry.budget_eps, entry.budget_delta), entry, after, changed)

    def reserve(self, name: str, charge: Charge, *, fingerprint: str, n: int, by: str, mechanism: str = "pypp",
                spec: dict | None = None, accept_changed_data: bool = False) -> Reservation:
        """Record a release as ``pending`` before any public byte is written.

        In one transaction: lock the dataset, re-read every release charged to it, compose
        (:func:`core.ledger.compose`), refuse if the budget would be exceeded, else insert.

        Parameters
        ----------
        name : str
            The dataset (its budget must be set).
        charge : Charge
            The release's cost (:func:`core.ledger.charge_of_spec`).
        fingerprint : str
            :func:`core.ledger.dataset_fingerprint` of the data released.
        n : int
            Records in the data released.
        by : str
            Who releases (the login identity where the app has one, the OS user on the command line).
        mechanism : str
        spec : dict, optional
            The release's public parameters (JSON-ready).
        accept_changed_data : bool
            Record the release although the data differ from the last ones released under
            ``name`` (flagged ``data_changed``); otherwise :class:`DataChanged` is raised.

        Raises
        ------
        UnknownDataset, DataChanged, BudgetExceeded
            Nothing is recorded.
        """
        name, by = _name("dataset", name), _name("by", by)
        if not isinstance(charge, Charge):
            raise ValueError(f"charge must be a core.ledger.Charge, got {type(charge).__name__}")
        if not isinstance(fingerprint, str) or not _SHA256.match(fingerprint):
            raise ValueError(f"fingerprint must be a SHA-256 in hex (core.ledger.dataset_fingerprint), got "
                             f"{fingerprint!r}")
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ValueError(f"n must be an integer ≥ 1, got {n!r}")
        spec_text = json.dumps(spec or {}, sort_keys=True, allow_nan=False)
        mechanism = _name("mechanism", mechanism)
        with Session(self.engine) as session, session.begin():
            ds = session.scalars(select(DatasetRow).where(DatasetRow.name == name).with_for_update()).first()
            if ds is None:
                raise UnknownDataset(_unknown(name))
            changed = _changed(ds.fingerprint, ds.n, fingerprint, n)
            if changed and not accept_changed_data:
                raise DataChanged(f"the data released under {name!r} have changed since its last release (another "
                                  f"file: its fingerprint differs): nothing "
                                  "was recorded. Every release still counts against the one budget; accept the change "
                                  "explicitly to record this release, flagged (--accept-changed-data), or use "
                                  "another dataset name with its own budget.")
            rows = session.scalars(select(ReleaseRow).where(ReleaseRow.dataset_id == ds.id)
                                   .order_by(ReleaseRow.release_index)).all()
            spend = compose(_charge_of(r) for r in rows)
            after = spend.plus(charge)
            if not after.within(ds.budget_eps, ds.budget_delta):
                raise _exceeded(ds, spend, charge)
            now = _now()
            ds.fingerprint, ds.n = fingerprint, n      # the latest data released under the name
            row = ReleaseRow(
                dataset_id=ds.id, release_index=len(rows) + 1, mechanism=mechanism, spec=spec_text,
                kind=charge.kind, eps=_up(charge.eps), delta=_up(charge.delta),
                eps_exact=fraction_text(charge.eps), survival_exact=fraction_text(charge.survival),
                cumulative_eps=after.eps_up, cumulative_delta=after.delta_up,
                cumulative_eps_exact=fraction_text(after.eps), cumulative_survival_exact=fraction_text(after.survival),
                budget_eps=ds.budget_eps, budget_delta=ds.budget_delta, fingerprint=fingerprint, n=n,
                data_changed=changed, created_by=by, created_at=now, completed_at=None, bundle_sha256=None,
                status="pending")
            session.add(row)
            session.flush()
            entry = _release_entry(name, row)
            row_id = row.id
        return Reservation(self, entry, row_id)


def _up(value) -> float:
    return Spend(eps=value).eps_up


def _changed(old_fp: str | None, old_n: int | None, fingerprint: str, n: int | None) -> bool:
    # The records, not the view: n differs between releases of other columns of one file (or
    # with missing values dropped), which are releases of the same dataset.
    return old_fp is not None and old_fp != fingerprint


def _unknown(name: str) -> str:
    return (f"no budget is set for dataset {name!r}: a disclosure-review board sets one first "
            f"(python -m core ledger PATH budget {name} --eps E --delta D)")


def _exceeded(ds: DatasetRow, spend: Spend, charge: Charge) -> BudgetExceeded:
    eps_left, delta_left = spend.remaining(ds.budget_eps, ds.budget_delta)
    cumulative = (spend.eps_up, spend.delta_up)
    requested = (_up(charge.eps), _up(charge.delta))
    message = (f"the release is refused: it would exceed the budget of dataset {ds.name!r} (ε = {ds.budget_eps:g}, "
               f"δ = {ds.budget_delta:g}). Spent in {spend.releases} release{'s' if spend.releases != 1 else ''}: "
               f"ε = {cumulative[0]:.6g}, δ = {cumulative[1]:.6g}; this release costs ε = {requested[0]:.6g}, "
               f"δ = {requested[1]:.6g}. Remaining: ε = {eps_left:.6g}, and one more release may have δ ≤ "
               f"{delta_left:.6g}. Nothing was recorded.")
    return BudgetExceeded(message, dataset=ds.name, budget=(ds.budget_eps, ds.budget_delta), cumulative=cumulative,
                          remaining=(eps_left, delta_left), requested=requested)


# ---------------------------------------------------------------------- opening
def _sqlite_hooks(engine: Engine) -> None:
    """Every SQLite transaction begins IMMEDIATE: it takes the write lock at BEGIN, so two
    reservations cannot both read the same spend (the pysqlite driver's own deferred BEGIN is
    switched off)."""

    @event.listens_for(engine, "connect")
    def _connect(dbapi_connection, record):
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(connection):
        connection.exec_driver_sql("BEGIN IMMEDIATE")


def _migrate(engine: Engine) -> None:
    """Bring the schema to the newest revision (Alembic, migrations shipped in the package)."""
    config = Config()
    config.set_main_option("script_location", str(importlib.resources.files("core.ledger") / "migrations"))
    with engine.begin() as connection:
        if engine.dialect.name == "postgresql":   # two first openings at once: one migrates, the other waits
            connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _MIGRATION_LOCK})
        config.attributes["connection"] = connection
        try:
            command.upgrade(config, "head")
        except CommandError as exc:
            raise LedgerError(f"the ledger's schema is not one this version knows (written by a newer bnp-synth?): "
                              f"{exc}") from None


def open_ledger(location: str | os.PathLike | None = None, *, config=None) -> Ledger:
    """Open the ledger at ``location`` (created and migrated as needed).

    Parameters
    ----------
    location : str or path, optional
        A file path (SQLite) or an SQLAlchemy URL (``postgresql+psycopg://…``); ``None`` or
        ``"default"`` resolves the default (:func:`core.ledger.resolve_location`:
        ``BNP_SYNTH_LEDGER``, the configuration file, ``~/.local/share/bnp-synth/ledger.sqlite``).
    config : mapping, optional
        The caller's ``[ledger]`` configuration section (see :func:`core.ledger.resolve_location`).

    Returns
    -------
    Ledger
    """
    where = resolve_location(location, config=config)
    url = make_url(to_url(where))
    if url.get_backend_name() == "sqlite":
        if not url.database or url.database == ":memory:":
            raise ValueError("the ledger must be a file or a server: an in-memory SQLite database is lost on exit")
        path = Path(url.database)
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        if not path.exists():   # the ledger holds fingerprints of confidential data: owner only
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600))
        engine = create_engine(url, connect_args={"timeout": SQLITE_TIMEOUT})
        _sqlite_hooks(engine)
    else:
        engine = create_engine(url, pool_pre_ping=True)
    _migrate(engine)
    return Ledger(engine, where)
