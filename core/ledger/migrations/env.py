"""Alembic environment of the ledger: run programmatically by :func:`core.ledger.open_ledger`
on the connection it passes in ``config.attributes["connection"]`` (no alembic.ini)."""
from alembic import context

from core.ledger.models import Base

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=Base.metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
