"""The ledger's first schema: datasets and releases (docs/audit.md §8.3).

Revision ID: 0001
Revises:
"""
import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "datasets",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("name", sa.String(200), nullable=False, unique=True),
        sa.Column("fingerprint", sa.String(64), nullable=True),
        sa.Column("n", sa.Integer, nullable=True),
        sa.Column("budget_eps", sa.Float, nullable=False),
        sa.Column("budget_delta", sa.Float, nullable=False),
        sa.Column("set_by", sa.String(200), nullable=False),
        sa.Column("set_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "releases",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("dataset_id", sa.Integer, sa.ForeignKey("datasets.id", ondelete="RESTRICT"), nullable=False),
        sa.Column("release_index", sa.Integer, nullable=False),
        sa.Column("mechanism", sa.String(100), nullable=False),
        sa.Column("spec", sa.Text, nullable=False),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("eps", sa.Float, nullable=False),
        sa.Column("delta", sa.Float, nullable=False),
        sa.Column("eps_exact", sa.Text, nullable=False),
        sa.Column("survival_exact", sa.Text, nullable=False),
        sa.Column("cumulative_eps", sa.Float, nullable=False),
        sa.Column("cumulative_delta", sa.Float, nullable=False),
        sa.Column("cumulative_eps_exact", sa.Text, nullable=False),
        sa.Column("cumulative_survival_exact", sa.Text, nullable=False),
        sa.Column("budget_eps", sa.Float, nullable=False),
        sa.Column("budget_delta", sa.Float, nullable=False),
        sa.Column("fingerprint", sa.String(64), nullable=False),
        sa.Column("n", sa.Integer, nullable=False),
        sa.Column("data_changed", sa.Boolean, nullable=False),
        sa.Column("created_by", sa.String(200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("completed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("bundle_sha256", sa.String(64), nullable=True),
        sa.Column("status", sa.String(12), nullable=False),
        sa.UniqueConstraint("dataset_id", "release_index", name="uq_release_index"),
    )


def downgrade() -> None:
    op.drop_table("releases")
    op.drop_table("datasets")
