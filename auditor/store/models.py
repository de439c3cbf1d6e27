"""SQLAlchemy 2 typed models of the governed store.

Tables: memories, consents, findings (+ finding_memories), scan_runs, audit_events
(+ audit_head), erasure_requests, tombstones, principals (dashboard users),
source_watermarks and import_runs; sources and source_actions (live sources).
``memories.supersedes`` is deliberately not a foreign key: an import mirrors a source
store faithfully, including dangling links, so the audit can report them; the lifecycle
module guards every write made through memaudit.
"""

from __future__ import annotations

import enum
from datetime import datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    UniqueConstraint,
    false,
    true,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

from auditor.store.crypto import EncryptedText
from auditor.store.types import JSONType, UTCDateTime, utcnow

__all__ = [
    "AuditEvent",
    "AuditHead",
    "Base",
    "Consent",
    "ErasureRequest",
    "Finding",
    "FindingMemory",
    "FindingStatus",
    "ImportRun",
    "Memory",
    "MemoryKind",
    "MemoryStatus",
    "Principal",
    "ScanRun",
    "ScanShard",
    "SourceAction",
    "SourceRow",
    "SourceWatermark",
    "Tombstone",
]

NAMING = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


#: Tables in memaudit's database that other libraries create and own: APScheduler's job
#: store, and procrastinate's task queue (PostgreSQL). Migrations leave them alone.
FOREIGN_TABLE_PREFIXES = ("scheduler_jobs", "procrastinate_")


def foreign_table(name: str | None) -> bool:
    """Whether a table belongs to APScheduler or procrastinate, not to memaudit's models."""
    return bool(name) and str(name).startswith(FOREIGN_TABLE_PREFIXES)


class Base(DeclarativeBase):
    """Declarative base with a stable constraint naming convention (for migrations)."""

    metadata = MetaData(naming_convention=NAMING)
    type_annotation_map = {datetime: UTCDateTime(), dict[str, Any]: JSONType}


class MemoryStatus(str, enum.Enum):
    """Lifecycle status of a memory."""

    ACTIVE = "active"
    SUPERSEDED = "superseded"
    EXPIRED = "expired"
    QUARANTINED = "quarantined"
    DELETED = "deleted"


class MemoryKind(str, enum.Enum):
    """Semantic kind of a memory (SEEDS.md section 1)."""

    SEMANTIC = "semantic"
    EPISODIC = "episodic"
    PROCEDURAL = "procedural"
    NOTE = "note"


class FindingStatus(str, enum.Enum):
    """Review status of a finding."""

    OPEN = "open"
    ACKNOWLEDGED = "acknowledged"
    RESOLVED = "resolved"
    DISMISSED = "dismissed"
    SUPPRESSED = "suppressed"


class ImportRun(Base):
    """One import of a source: what was read, from where, and what happened."""

    __tablename__ = "import_runs"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    source_format: Mapped[str] = mapped_column(String(32))
    location: Mapped[str] = mapped_column(Text)
    sha256: Mapped[str | None] = mapped_column(String(64))
    started_at: Mapped[datetime] = mapped_column(default=utcnow)
    finished_at: Mapped[datetime | None]
    status: Mapped[str] = mapped_column(String(32), default="running")
    counts: Mapped[dict[str, Any]] = mapped_column(default=dict)
    errors: Mapped[dict[str, Any]] = mapped_column(default=dict)
    actor: Mapped[str] = mapped_column(String(200), default="memaudit")


class Memory(Base):
    """A canonical memory record (DESIGN.md), extended for governance."""

    __tablename__ = "memories"

    memory_id: Mapped[str] = mapped_column(String(128), primary_key=True)
    subject: Mapped[str] = mapped_column(String(256), index=True)
    namespace: Mapped[str] = mapped_column(String(256), default="default")
    kind: Mapped[str] = mapped_column(String(16), default=MemoryKind.SEMANTIC.value)
    category: Mapped[str] = mapped_column(String(64), default="note")
    #: Sealed per subject (:mod:`auditor.store.crypto`) when encryption is on.
    fact: Mapped[str] = mapped_column(EncryptedText("memories.fact"))
    confidence: Mapped[float | None] = mapped_column(Float)
    source_type: Mapped[str | None] = mapped_column(String(32))
    source_session_id: Mapped[str | None] = mapped_column(String(256))
    source_turn: Mapped[int | None] = mapped_column(Integer)
    source_uri: Mapped[str | None] = mapped_column(EncryptedText("memories.source_uri"))
    trust_tier: Mapped[str] = mapped_column(String(16))
    status: Mapped[str] = mapped_column(String(16), default=MemoryStatus.ACTIVE.value, index=True)
    #: Status before a quarantine / soft delete / expiry, for restore.
    prior_status: Mapped[str | None] = mapped_column(String(16))
    #: Who set the status: "source" (the imported record stated it), "chain" (an import
    #: derived it from supersede links; re-derived on every import) or "memaudit" (a
    #: lifecycle action or reviewer; imports never override it).
    status_source: Mapped[str] = mapped_column(String(16), default="memaudit")
    supersedes: Mapped[str | None] = mapped_column(String(128), index=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, index=True)
    expires_at: Mapped[datetime | None]
    deleted_at: Mapped[datetime | None]
    access_count: Mapped[int] = mapped_column(Integer, default=0)
    last_accessed_at: Mapped[datetime | None]
    embedding_ref: Mapped[str | None] = mapped_column(Text)
    content_hash: Mapped[str] = mapped_column(String(64), index=True)
    #: Hash of every imported field: an import that brings the same record changes nothing.
    record_hash: Mapped[str | None] = mapped_column(String(64))
    #: Where the record came from: source format and its id there.
    origin: Mapped[str | None] = mapped_column(String(32))
    external_id: Mapped[str | None] = mapped_column(Text)
    import_run_id: Mapped[int | None] = mapped_column(
        ForeignKey("import_runs.id", ondelete="SET NULL")
    )
    extra: Mapped[dict[str, Any]] = mapped_column(default=dict)
    version: Mapped[int] = mapped_column(Integer, nullable=False, default=1)
    #: When memaudit last wrote the row (insert, import update, lifecycle): the watermark of
    #: incremental scans. ``updated_at`` is the source's own time and cannot serve.
    changed_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow, index=True)

    __mapper_args__ = {"version_id_col": version}
    __table_args__ = (Index(None, "subject", "status"),)


class Consent(Base):
    """An explicit opt-in of one subject for one special category."""

    __tablename__ = "consents"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    subject: Mapped[str] = mapped_column(String(256), index=True)
    category: Mapped[str] = mapped_column(String(64))
    granted_at: Mapped[datetime] = mapped_column(default=utcnow)
    source: Mapped[str | None] = mapped_column(EncryptedText("consents.source"))
    revoked_at: Mapped[datetime | None]

    __table_args__ = (UniqueConstraint("subject", "category", "granted_at"),)


class ScanRun(Base):
    """One scan: when, how, with which rule pack, and what it counted."""

    __tablename__ = "scan_runs"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    mode: Mapped[str] = mapped_column(String(16), default="incremental")
    status: Mapped[str] = mapped_column(String(32), default="running")
    started_at: Mapped[datetime] = mapped_column(default=utcnow)
    finished_at: Mapped[datetime | None]
    rule_pack_hash: Mapped[str | None] = mapped_column(String(64))
    counts: Mapped[dict[str, Any]] = mapped_column(default=dict)
    errors: Mapped[dict[str, Any]] = mapped_column(default=dict)
    duration_s: Mapped[float | None] = mapped_column(Float)
    #: incremental scans: memories changed after this time (the previous watermark)
    since: Mapped[datetime | None]
    #: how many shards the run was split into, and who runs them (inline | procrastinate)
    shard_count: Mapped[int] = mapped_column(Integer, default=1)
    dispatch: Mapped[str] = mapped_column(String(16), default="inline")

    shards: Mapped[list[ScanShard]] = relationship(
        back_populates="run", cascade="all, delete-orphan", passive_deletes=True
    )


class ScanShard(Base):
    """One shard of a scan run: the subjects whose hash falls in it, and its progress.

    ``cursor`` is the last subject whose batch was committed, in the same transaction as
    that batch's findings and counts: a shard taken over after a crash resumes after it, so
    every memory is scanned exactly once per run. ``owner`` is the token of the attempt
    that holds the shard; a batch commits only while its attempt still owns the shard.
    """

    __tablename__ = "scan_shards"

    run_id: Mapped[int] = mapped_column(
        ForeignKey("scan_runs.id", ondelete="CASCADE"), primary_key=True
    )
    shard: Mapped[int] = mapped_column(Integer, primary_key=True)
    status: Mapped[str] = mapped_column(String(16), default="pending")
    owner: Mapped[str | None] = mapped_column(String(64))
    worker: Mapped[str | None] = mapped_column(String(200))
    cursor: Mapped[str | None] = mapped_column(Text)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    memories_scanned: Mapped[int] = mapped_column(Integer, default=0)
    counts: Mapped[dict[str, Any]] = mapped_column(default=dict)
    started_at: Mapped[datetime | None]
    heartbeat_at: Mapped[datetime | None]
    finished_at: Mapped[datetime | None]

    run: Mapped[ScanRun] = relationship(back_populates="shards")


class Finding(Base):
    """One rule firing on one memory (or a pair, for contradictions)."""

    __tablename__ = "findings"

    finding_id: Mapped[str] = mapped_column(String(40), primary_key=True)
    fingerprint: Mapped[str] = mapped_column(String(64), unique=True)
    rule_id: Mapped[str] = mapped_column(String(128), index=True)
    category: Mapped[str] = mapped_column(String(32))
    severity: Mapped[str] = mapped_column(String(16))
    status: Mapped[str] = mapped_column(String(16), default=FindingStatus.OPEN.value)
    evidence: Mapped[dict[str, Any]] = mapped_column(default=dict)
    first_seen: Mapped[datetime] = mapped_column(default=utcnow)
    last_seen: Mapped[datetime] = mapped_column(default=utcnow)
    scan_run_id: Mapped[int | None] = mapped_column(ForeignKey("scan_runs.id", ondelete="SET NULL"))
    assignee: Mapped[str | None] = mapped_column(String(200))
    resolution: Mapped[str | None] = mapped_column(Text)
    resolved_by: Mapped[str | None] = mapped_column(String(200))
    resolved_at: Mapped[datetime | None]

    memories: Mapped[list[FindingMemory]] = relationship(
        back_populates="finding", cascade="all, delete-orphan", passive_deletes=True
    )

    __table_args__ = (Index(None, "status", "category"),)


class FindingMemory(Base):
    """Link between a finding and each memory it is about (ordered by position)."""

    __tablename__ = "finding_memories"

    finding_id: Mapped[str] = mapped_column(
        ForeignKey("findings.finding_id", ondelete="CASCADE"), primary_key=True
    )
    memory_id: Mapped[str] = mapped_column(
        ForeignKey("memories.memory_id", ondelete="CASCADE"), primary_key=True, index=True
    )
    position: Mapped[int] = mapped_column(Integer, default=0)

    finding: Mapped[Finding] = relationship(back_populates="memories")


class AuditEvent(Base):
    """An append-only, hash-chained audit event (details never hold personal data)."""

    __tablename__ = "audit_events"

    seq: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True)
    event_id: Mapped[str] = mapped_column(String(40), unique=True)
    ts: Mapped[datetime]
    actor: Mapped[str] = mapped_column(String(200))
    action: Mapped[str] = mapped_column(String(64), index=True)
    target_type: Mapped[str] = mapped_column(String(32))
    target_ids: Mapped[list[str]] = mapped_column(JSONType, default=list)
    details: Mapped[dict[str, Any]] = mapped_column(default=dict)
    prev_hash: Mapped[str] = mapped_column(String(64))
    hash: Mapped[str] = mapped_column(String(64))


class AuditHead(Base):
    """The single row that records the chain's last event; appenders lock it."""

    __tablename__ = "audit_head"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    last_seq: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), default=0)
    last_hash: Mapped[str] = mapped_column(String(64))


class ErasureRequest(Base):
    """A right-to-erasure request and its receipt (see :mod:`auditor.erasure.requests`).

    ``subject`` holds the subject id in clear only while the request waits (pending or
    approved): it is needed to execute it. Executing or rejecting the request clears it;
    what stays is the salted ``subject_digest``, the decision and the receipt.
    """

    __tablename__ = "erasure_requests"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    subject_digest: Mapped[str] = mapped_column(String(64), index=True)
    requested_by: Mapped[str] = mapped_column(String(200))
    requested_at: Mapped[datetime] = mapped_column(default=utcnow)
    status: Mapped[str] = mapped_column(String(16), default="pending", index=True)
    executed_at: Mapped[datetime | None]
    receipt: Mapped[dict[str, Any]] = mapped_column(default=dict)
    subject: Mapped[str | None] = mapped_column(String(256))
    reason: Mapped[str | None] = mapped_column(Text)
    #: Requested by the subject (a dashboard user), not by an officer: may need approval.
    user_initiated: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    decided_by: Mapped[str | None] = mapped_column(String(200))
    decided_at: Mapped[datetime | None]


class Tombstone(Base):
    """What is left of an erased memory or subject: no content, enough to refuse a re-import.

    ``kind`` is ``memory`` (an erased or purged memory id) or ``subject`` (an erased subject:
    ``memory_id`` is empty and ``subject_digest`` names it). Restoring a backup re-applies
    every subject tombstone.
    """

    __tablename__ = "tombstones"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    kind: Mapped[str] = mapped_column(String(16), default="memory", server_default="memory")
    memory_id: Mapped[str | None] = mapped_column(String(128), index=True)
    subject_digest: Mapped[str] = mapped_column(String(64), index=True)
    erased_at: Mapped[datetime] = mapped_column(default=utcnow)
    request_id: Mapped[int | None] = mapped_column(
        ForeignKey("erasure_requests.id", ondelete="SET NULL")
    )


class Principal(Base):
    """A dashboard user: an end user bound to one subject, an officer, or an admin.

    ``password_hash`` is an argon2 hash (None: the account signs in through OIDC only).
    ``oidc_issuer`` and ``oidc_subject`` bind the account to one OIDC identity once it has
    signed in through it; ``email`` (lower case) is how a pre-registered account is found
    the first time. ``failed_sign_ins`` and ``locked_until`` hold a brute-force lockout.
    """

    __tablename__ = "principals"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    username: Mapped[str] = mapped_column(String(200), unique=True)
    display_name: Mapped[str | None] = mapped_column(String(200))
    role: Mapped[str] = mapped_column(String(16))
    subject: Mapped[str | None] = mapped_column(String(256))
    password_hash: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    disabled: Mapped[bool] = mapped_column(Boolean, default=False)
    email: Mapped[str | None] = mapped_column(String(320), unique=True)
    oidc_issuer: Mapped[str | None] = mapped_column(String(512))
    oidc_subject: Mapped[str | None] = mapped_column(String(256))
    password_changed_at: Mapped[datetime | None]
    last_sign_in_at: Mapped[datetime | None]
    failed_sign_ins: Mapped[int] = mapped_column(Integer, default=0)
    locked_until: Mapped[datetime | None]

    __table_args__ = (UniqueConstraint("oidc_issuer", "oidc_subject"),)


class SourceWatermark(Base):
    """How far a scan or a source sync has got: position and time."""

    __tablename__ = "source_watermarks"

    name: Mapped[str] = mapped_column(String(200), primary_key=True)
    position: Mapped[str | None] = mapped_column(Text)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)
    details: Mapped[dict[str, Any]] = mapped_column(default=dict)


class SourceRow(Base):
    """A configured live source (:mod:`auditor.sources.registry`).

    ``options`` never holds a secret in clear: secrets are ``${ENV_VAR}`` or
    ``${secret:NAME}`` references, resolved only when the connector is opened.
    """

    __tablename__ = "sources"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    kind: Mapped[str] = mapped_column(String(32))
    options: Mapped[dict[str, Any]] = mapped_column(default=dict)
    schedule: Mapped[str] = mapped_column(String(100), default="every 15m")
    write_back: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    enabled: Mapped[bool] = mapped_column(Boolean, default=True, server_default=true())
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)


class SourceAction(Base):
    """The write-back outbox: an action to carry into a source (:mod:`auditor.sources.outbox`).

    ``external_id`` (quarantine, restore) and ``subject`` (erase) are held only while the
    action waits: they are cleared when it is done or cancelled. ``result`` holds counts,
    never values.
    """

    __tablename__ = "source_actions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    source: Mapped[str] = mapped_column(String(64))
    action: Mapped[str] = mapped_column(String(16))
    memory_id: Mapped[str | None] = mapped_column(String(128), index=True)
    external_id: Mapped[str | None] = mapped_column(Text)
    subject: Mapped[str | None] = mapped_column(String(256))
    subject_digest: Mapped[str | None] = mapped_column(String(64))
    erasure_request_id: Mapped[int | None] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(16), default="pending")
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    error: Mapped[str | None] = mapped_column(Text)
    result: Mapped[dict[str, Any]] = mapped_column(default=dict)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)
    done_at: Mapped[datetime | None]

    __table_args__ = (Index(None, "status", "source"),)
