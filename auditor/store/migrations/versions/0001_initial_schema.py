"""Initial schema: memories, consents, findings, scans, audit log, erasure, principals.

Revision ID: 0001
Revises:
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

import auditor.store.types

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:

    op.create_table(
        "audit_events",
        sa.Column("seq", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("event_id", sa.String(length=40), nullable=False),
        sa.Column("ts", auditor.store.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("actor", sa.String(length=200), nullable=False),
        sa.Column("action", sa.String(length=64), nullable=False),
        sa.Column("target_type", sa.String(length=32), nullable=False),
        sa.Column(
            "target_ids",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column(
            "details",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("prev_hash", sa.String(length=64), nullable=False),
        sa.Column("hash", sa.String(length=64), nullable=False),
        sa.PrimaryKeyConstraint("seq", name=op.f("pk_audit_events")),
        sa.UniqueConstraint("event_id", name=op.f("uq_audit_events_event_id")),
    )
    with op.batch_alter_table("audit_events", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_audit_events_action"), ["action"], unique=False)

    op.create_table(
        "audit_head",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("last_seq", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("last_hash", sa.String(length=64), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_audit_head")),
    )
    op.create_table(
        "consents",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("subject", sa.String(length=256), nullable=False),
        sa.Column("category", sa.String(length=64), nullable=False),
        sa.Column("granted_at", auditor.store.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("source", sa.Text(), nullable=True),
        sa.Column("revoked_at", auditor.store.types.UTCDateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_consents")),
        sa.UniqueConstraint(
            "subject",
            "category",
            "granted_at",
            name=op.f("uq_consents_subject_category_granted_at"),
        ),
    )
    with op.batch_alter_table("consents", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_consents_subject"), ["subject"], unique=False)

    op.create_table(
        "erasure_requests",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("subject_digest", sa.String(length=64), nullable=False),
        sa.Column("requested_by", sa.String(length=200), nullable=False),
        sa.Column("requested_at", auditor.store.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("executed_at", auditor.store.types.UTCDateTime(timezone=True), nullable=True),
        sa.Column(
            "receipt",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_erasure_requests")),
    )
    with op.batch_alter_table("erasure_requests", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_erasure_requests_subject_digest"), ["subject_digest"], unique=False
        )

    op.create_table(
        "import_runs",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("source_format", sa.String(length=32), nullable=False),
        sa.Column("location", sa.Text(), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=True),
        sa.Column("started_at", auditor.store.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("finished_at", auditor.store.types.UTCDateTime(timezone=True), nullable=True),
        sa.Column("status", sa.String(length=32), nullable=False),
        sa.Column(
            "counts",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column(
            "errors",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("actor", sa.String(length=200), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_import_runs")),
    )
    op.create_table(
        "principals",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("username", sa.String(length=200), nullable=False),
        sa.Column("display_name", sa.String(length=200), nullable=True),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("subject", sa.String(length=256), nullable=True),
        sa.Column("password_hash", sa.Text(), nullable=True),
        sa.Column("created_at", auditor.store.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("disabled", sa.Boolean(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_principals")),
        sa.UniqueConstraint("username", name=op.f("uq_principals_username")),
    )
    op.create_table(
        "scan_runs",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("mode", sa.String(length=16), nullable=False),
        sa.Column("status", sa.String(length=32), nullable=False),
        sa.Column("started_at", auditor.store.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("finished_at", auditor.store.types.UTCDateTime(timezone=True), nullable=True),
        sa.Column("rule_pack_hash", sa.String(length=64), nullable=True),
        sa.Column(
            "counts",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column(
            "errors",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("duration_s", sa.Float(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_scan_runs")),
    )
    op.create_table(
        "source_watermarks",
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("position", sa.Text(), nullable=True),
        sa.Column("updated_at", auditor.store.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column(
            "details",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_source_watermarks")),
    )
    op.create_table(
        "findings",
        sa.Column("finding_id", sa.String(length=40), nullable=False),
        sa.Column("fingerprint", sa.String(length=64), nullable=False),
        sa.Column("rule_id", sa.String(length=128), nullable=False),
        sa.Column("category", sa.String(length=32), nullable=False),
        sa.Column("severity", sa.String(length=16), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column(
            "evidence",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("first_seen", auditor.store.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("last_seen", auditor.store.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("scan_run_id", sa.Integer(), nullable=True),
        sa.Column("assignee", sa.String(length=200), nullable=True),
        sa.Column("resolution", sa.Text(), nullable=True),
        sa.Column("resolved_by", sa.String(length=200), nullable=True),
        sa.Column("resolved_at", auditor.store.types.UTCDateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["scan_run_id"],
            ["scan_runs.id"],
            name=op.f("fk_findings_scan_run_id_scan_runs"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("finding_id", name=op.f("pk_findings")),
        sa.UniqueConstraint("fingerprint", name=op.f("uq_findings_fingerprint")),
    )
    with op.batch_alter_table("findings", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_findings_rule_id"), ["rule_id"], unique=False)
        batch_op.create_index(
            batch_op.f("ix_findings_status_category"), ["status", "category"], unique=False
        )

    op.create_table(
        "memories",
        sa.Column("memory_id", sa.String(length=128), nullable=False),
        sa.Column("subject", sa.String(length=256), nullable=False),
        sa.Column("namespace", sa.String(length=256), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("category", sa.String(length=64), nullable=False),
        sa.Column("fact", sa.Text(), nullable=False),
        sa.Column("confidence", sa.Float(), nullable=True),
        sa.Column("source_type", sa.String(length=32), nullable=True),
        sa.Column("source_session_id", sa.String(length=256), nullable=True),
        sa.Column("source_turn", sa.Integer(), nullable=True),
        sa.Column("source_uri", sa.Text(), nullable=True),
        sa.Column("trust_tier", sa.String(length=16), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("prior_status", sa.String(length=16), nullable=True),
        sa.Column("status_source", sa.String(length=16), nullable=False),
        sa.Column("supersedes", sa.String(length=128), nullable=True),
        sa.Column("created_at", auditor.store.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", auditor.store.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("expires_at", auditor.store.types.UTCDateTime(timezone=True), nullable=True),
        sa.Column("deleted_at", auditor.store.types.UTCDateTime(timezone=True), nullable=True),
        sa.Column("access_count", sa.Integer(), nullable=False),
        sa.Column(
            "last_accessed_at", auditor.store.types.UTCDateTime(timezone=True), nullable=True
        ),
        sa.Column("embedding_ref", sa.Text(), nullable=True),
        sa.Column("content_hash", sa.String(length=64), nullable=False),
        sa.Column("record_hash", sa.String(length=64), nullable=True),
        sa.Column("origin", sa.String(length=32), nullable=True),
        sa.Column("external_id", sa.Text(), nullable=True),
        sa.Column("import_run_id", sa.Integer(), nullable=True),
        sa.Column(
            "extra",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["import_run_id"],
            ["import_runs.id"],
            name=op.f("fk_memories_import_run_id_import_runs"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("memory_id", name=op.f("pk_memories")),
    )
    with op.batch_alter_table("memories", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_memories_content_hash"), ["content_hash"], unique=False
        )
        batch_op.create_index(batch_op.f("ix_memories_status"), ["status"], unique=False)
        batch_op.create_index(batch_op.f("ix_memories_subject"), ["subject"], unique=False)
        batch_op.create_index(
            batch_op.f("ix_memories_subject_status"), ["subject", "status"], unique=False
        )
        batch_op.create_index(batch_op.f("ix_memories_supersedes"), ["supersedes"], unique=False)
        batch_op.create_index(batch_op.f("ix_memories_updated_at"), ["updated_at"], unique=False)

    op.create_table(
        "tombstones",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("memory_id", sa.String(length=128), nullable=False),
        sa.Column("subject_digest", sa.String(length=64), nullable=False),
        sa.Column("erased_at", auditor.store.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("request_id", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(
            ["request_id"],
            ["erasure_requests.id"],
            name=op.f("fk_tombstones_request_id_erasure_requests"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_tombstones")),
    )
    with op.batch_alter_table("tombstones", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_tombstones_memory_id"), ["memory_id"], unique=False)
        batch_op.create_index(
            batch_op.f("ix_tombstones_subject_digest"), ["subject_digest"], unique=False
        )

    op.create_table(
        "finding_memories",
        sa.Column("finding_id", sa.String(length=40), nullable=False),
        sa.Column("memory_id", sa.String(length=128), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["finding_id"],
            ["findings.finding_id"],
            name=op.f("fk_finding_memories_finding_id_findings"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["memory_id"],
            ["memories.memory_id"],
            name=op.f("fk_finding_memories_memory_id_memories"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("finding_id", "memory_id", name=op.f("pk_finding_memories")),
    )
    with op.batch_alter_table("finding_memories", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_finding_memories_memory_id"), ["memory_id"], unique=False
        )

    audit_head = sa.table(
        "audit_head",
        sa.column("id", sa.Integer),
        sa.column("last_seq", sa.Integer),
        sa.column("last_hash", sa.String),
    )
    op.bulk_insert(audit_head, [{"id": 1, "last_seq": 0, "last_hash": "0" * 64}])


def downgrade() -> None:

    with op.batch_alter_table("finding_memories", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_finding_memories_memory_id"))

    op.drop_table("finding_memories")
    with op.batch_alter_table("tombstones", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_tombstones_subject_digest"))
        batch_op.drop_index(batch_op.f("ix_tombstones_memory_id"))

    op.drop_table("tombstones")
    with op.batch_alter_table("memories", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_memories_updated_at"))
        batch_op.drop_index(batch_op.f("ix_memories_supersedes"))
        batch_op.drop_index(batch_op.f("ix_memories_subject_status"))
        batch_op.drop_index(batch_op.f("ix_memories_subject"))
        batch_op.drop_index(batch_op.f("ix_memories_status"))
        batch_op.drop_index(batch_op.f("ix_memories_content_hash"))

    op.drop_table("memories")
    with op.batch_alter_table("findings", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_findings_status_category"))
        batch_op.drop_index(batch_op.f("ix_findings_rule_id"))

    op.drop_table("findings")
    op.drop_table("source_watermarks")
    op.drop_table("scan_runs")
    op.drop_table("principals")
    op.drop_table("import_runs")
    with op.batch_alter_table("erasure_requests", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_erasure_requests_subject_digest"))

    op.drop_table("erasure_requests")
    with op.batch_alter_table("consents", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_consents_subject"))

    op.drop_table("consents")
    op.drop_table("audit_head")
    with op.batch_alter_table("audit_events", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_audit_events_action"))

    op.drop_table("audit_events")
