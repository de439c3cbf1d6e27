"""Live sources: their configuration and the write-back outbox.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-02

* ``sources``: one configured source (name, kind, options without secrets in clear,
  sync schedule, whether quarantine and erasure are carried back, enabled).
* ``source_actions``: the write-back outbox. A quarantine or restore of a source's memory,
  or an erasure, adds a row in its own transaction; the daemon's ``source_sync`` job
  carries it into the source. ``external_id`` and ``subject`` are held only while the row
  waits.

The sync cursor of each source lives in ``source_watermarks`` (``source:<name>``).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

import auditor.store.types

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

_TS = auditor.store.types.UTCDateTime(timezone=True)
_JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    op.create_table(
        "sources",
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("options", _JSON, nullable=False),
        sa.Column("schedule", sa.String(length=100), nullable=False),
        sa.Column("write_back", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("enabled", sa.Boolean(), server_default=sa.true(), nullable=False),
        sa.Column("created_at", _TS, nullable=False),
        sa.Column("updated_at", _TS, nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_sources")),
    )
    op.create_table(
        "source_actions",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("source", sa.String(length=64), nullable=False),
        sa.Column("action", sa.String(length=16), nullable=False),
        sa.Column("memory_id", sa.String(length=128), nullable=True),
        sa.Column("external_id", sa.Text(), nullable=True),
        sa.Column("subject", sa.String(length=256), nullable=True),
        sa.Column("subject_digest", sa.String(length=64), nullable=True),
        sa.Column("erasure_request_id", sa.Integer(), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("result", _JSON, nullable=False),
        sa.Column("created_at", _TS, nullable=False),
        sa.Column("updated_at", _TS, nullable=False),
        sa.Column("done_at", _TS, nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_source_actions")),
    )
    with op.batch_alter_table("source_actions", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_source_actions_memory_id"), ["memory_id"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_source_actions_status_source"), ["status", "source"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("source_actions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_source_actions_status_source"))
        batch_op.drop_index(batch_op.f("ix_source_actions_memory_id"))
    op.drop_table("source_actions")
    op.drop_table("sources")
