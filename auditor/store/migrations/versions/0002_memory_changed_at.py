"""Memories get changed_at: memaudit's own write time, the incremental-scan watermark.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import auditor.store.types

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("memories", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("changed_at", auditor.store.types.UTCDateTime(timezone=True), nullable=True)
        )
    op.execute("UPDATE memories SET changed_at = updated_at")
    with op.batch_alter_table("memories", schema=None) as batch_op:
        batch_op.alter_column(
            "changed_at",
            existing_type=auditor.store.types.UTCDateTime(timezone=True),
            nullable=False,
        )
        batch_op.create_index(batch_op.f("ix_memories_changed_at"), ["changed_at"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("memories", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_memories_changed_at"))
        batch_op.drop_column("changed_at")
