"""Alembic environment: runs migrations on the connection memaudit hands over."""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection, create_engine

from auditor.store.models import Base, foreign_table

config = context.config
target_metadata = Base.metadata


def _include(
    obj: object, name: str | None, type_: str, reflected: bool, compare_to: object
) -> bool:
    # APScheduler and procrastinate create and own their tables; migrations leave them alone
    return not (type_ == "table" and foreign_table(name))


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=True,
        compare_type=True,
        include_object=_include,
    )
    with context.begin_transaction():
        context.run_migrations()


connection = config.attributes.get("connection")
if connection is not None:
    _run(connection)
else:  # alembic command line (developers generating revisions)
    engine = create_engine(config.get_main_option("sqlalchemy.url") or "sqlite:///memaudit.db")
    with engine.begin() as conn:
        _run(conn)
