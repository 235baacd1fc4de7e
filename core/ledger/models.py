"""The ledger's tables (SQLAlchemy 2 declarative models; schema versioned by the Alembic
migrations in ``core/ledger/migrations``, docs/audit.md §8.3).

Exact values (ε and 1 − δ as rationals) are stored as ``"p/q"`` text next to their
rounded-up floats: the floats are for people and plots, the text for the budget check.
"""
from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

__all__ = ["Base", "DatasetRow", "ReleaseRow", "RELEASE_STATUSES"]

#: ``pending``: recorded before any public byte, not yet confirmed written (a crash leaves it so:
#: shown as incomplete, counted as spent); ``complete``: the public output was written;
#: ``incomplete``: the writing failed after the record (counted as spent).
RELEASE_STATUSES = ("pending", "complete", "incomplete")


class Base(DeclarativeBase):
    pass


class DatasetRow(Base):
    """One dataset under a budget: its name, the fingerprint of the data first released under
    it, n, and the budget (ε, δ) with who set it and when."""

    __tablename__ = "datasets"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String(200), unique=True, nullable=False)
    #: SHA-256 of the prepared frequency table and the column specs; set at the first release.
    fingerprint: Mapped[str | None] = mapped_column(String(64), nullable=True)
    n: Mapped[int | None] = mapped_column(Integer, nullable=True)
    budget_eps: Mapped[float] = mapped_column(Float, nullable=False)
    budget_delta: Mapped[float] = mapped_column(Float, nullable=False)
    set_by: Mapped[str] = mapped_column(String(200), nullable=False)
    set_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)

    releases: Mapped[list["ReleaseRow"]] = relationship(back_populates="dataset", order_by="ReleaseRow.release_index")


class ReleaseRow(Base):
    """One release charged to a dataset: what it costs, the cumulative cost after it, who, when,
    the public output's SHA-256 and its status."""

    __tablename__ = "releases"
    __table_args__ = (UniqueConstraint("dataset_id", "release_index", name="uq_release_index"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    dataset_id: Mapped[int] = mapped_column(ForeignKey("datasets.id", ondelete="RESTRICT"), nullable=False)
    release_index: Mapped[int] = mapped_column(Integer, nullable=False)
    mechanism: Mapped[str] = mapped_column(String(100), nullable=False)
    spec: Mapped[str] = mapped_column(Text, nullable=False)            # JSON, public parameters
    kind: Mapped[str] = mapped_column(String(20), nullable=False)      # accounting.CHARGE_KINDS
    eps: Mapped[float] = mapped_column(Float, nullable=False)          # rounded up
    delta: Mapped[float] = mapped_column(Float, nullable=False)        # rounded up
    eps_exact: Mapped[str] = mapped_column(Text, nullable=False)       # "p/q"
    survival_exact: Mapped[str] = mapped_column(Text, nullable=False)  # 1 − δ, "p/q"
    cumulative_eps: Mapped[float] = mapped_column(Float, nullable=False)
    cumulative_delta: Mapped[float] = mapped_column(Float, nullable=False)
    cumulative_eps_exact: Mapped[str] = mapped_column(Text, nullable=False)
    cumulative_survival_exact: Mapped[str] = mapped_column(Text, nullable=False)
    budget_eps: Mapped[float] = mapped_column(Float, nullable=False)   # the budget in force
    budget_delta: Mapped[float] = mapped_column(Float, nullable=False)
    fingerprint: Mapped[str] = mapped_column(String(64), nullable=False)
    n: Mapped[int] = mapped_column(Integer, nullable=False)
    data_changed: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False)
    created_by: Mapped[str] = mapped_column(String(200), nullable=False)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    completed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    bundle_sha256: Mapped[str | None] = mapped_column(String(64), nullable=True)
    status: Mapped[str] = mapped_column(String(12), nullable=False)

    dataset: Mapped[DatasetRow] = relationship(back_populates="releases")
