"""Erasure: pending requests keep their subject until executed; subject tombstones.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01

* ``erasure_requests`` gets ``subject`` (held in clear only while a request waits for
  approval or for the daemon; cleared when it is executed or rejected), ``reason``,
  ``user_initiated``, ``decided_by``, ``decided_at`` and an index on ``status`` (the
  daemon's queue looks up approved requests).
* ``tombstones`` gets ``kind`` (``memory`` or ``subject``); ``memory_id`` becomes optional,
  because a subject tombstone names no memory. Existing rows are memory tombstones.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import auditor.store.types

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

_TS = auditor.store.types.UTCDateTime(timezone=True)


def upgrade() -> None:
    with op.batch_alter_table("erasure_requests", schema=None) as batch_op:
        batch_op.add_column(sa.Column("subject", sa.String(length=256), nullable=True))
        batch_op.add_column(sa.Column("reason", sa.Text(), nullable=True))
        batch_op.add_column(
            sa.Column("user_initiated", sa.Boolean(), nullable=False, server_default=sa.false())
        )
        batch_op.add_column(sa.Column("decided_by", sa.String(length=200), nullable=True))
        batch_op.add_column(sa.Column("decided_at", _TS, nullable=True))
        batch_op.create_index(batch_op.f("ix_erasure_requests_status"), ["status"], unique=False)
    with op.batch_alter_table("tombstones", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("kind", sa.String(length=16), nullable=False, server_default="memory")
        )
        batch_op.alter_column("memory_id", existing_type=sa.String(length=128), nullable=True)


def downgrade() -> None:
    op.execute(sa.text("DELETE FROM tombstones WHERE memory_id IS NULL"))
    with op.batch_alter_table("tombstones", schema=None) as batch_op:
        batch_op.alter_column("memory_id", existing_type=sa.String(length=128), nullable=False)
        batch_op.drop_column("kind")
    with op.batch_alter_table("erasure_requests", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_erasure_requests_status"))
        batch_op.drop_column("decided_at")
        batch_op.drop_column("decided_by")
        batch_op.drop_column("user_initiated")
        batch_op.drop_column("reason")
        batch_op.drop_column("subject")
