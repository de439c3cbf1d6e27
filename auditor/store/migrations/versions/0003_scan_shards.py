"""Scan shards: runs split by subject hash; on PostgreSQL, procrastinate's task tables.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-29

On PostgreSQL this revision also installs the schema of procrastinate (the task queue
that spreads shards over replicas), as shipped by the pinned procrastinate release. Its
tables, types and functions all carry the ``procrastinate_`` prefix; a later procrastinate
release that adds a migration gets a memaudit revision applying it
(``tests/test_shards.py`` fails when the installed release brings one we do not know).
"""

from __future__ import annotations

from importlib import resources

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

import auditor.store.types

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

_JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")
_TS = auditor.store.types.UTCDateTime(timezone=True)


def upgrade() -> None:
    with op.batch_alter_table("scan_runs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("since", _TS, nullable=True))
        batch_op.add_column(
            sa.Column("shard_count", sa.Integer(), nullable=False, server_default="1")
        )
        batch_op.add_column(
            sa.Column("dispatch", sa.String(length=16), nullable=False, server_default="inline")
        )
    op.create_table(
        "scan_shards",
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("shard", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("owner", sa.String(length=64), nullable=True),
        sa.Column("worker", sa.String(length=200), nullable=True),
        sa.Column("cursor", sa.Text(), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("memories_scanned", sa.Integer(), nullable=False),
        sa.Column("counts", _JSON, nullable=False),
        sa.Column("started_at", _TS, nullable=True),
        sa.Column("heartbeat_at", _TS, nullable=True),
        sa.Column("finished_at", _TS, nullable=True),
        sa.ForeignKeyConstraint(
            ["run_id"],
            ["scan_runs.id"],
            name=op.f("fk_scan_shards_run_id_scan_runs"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("run_id", "shard", name=op.f("pk_scan_shards")),
    )
    bind = op.get_bind()
    if bind.dialect.name == "postgresql":
        exists = bind.execute(sa.text("SELECT to_regclass('procrastinate_jobs')")).scalar()
        if exists is None:
            schema_sql = (resources.files("procrastinate.sql") / "schema.sql").read_text("utf-8")
            # the DB-API sees a parameterless statement with "%" in it: escape them
            bind.exec_driver_sql(schema_sql.replace("%", "%%"))


def downgrade() -> None:
    op.drop_table("scan_shards")
    with op.batch_alter_table("scan_runs", schema=None) as batch_op:
        batch_op.drop_column("dispatch")
        batch_op.drop_column("shard_count")
        batch_op.drop_column("since")
