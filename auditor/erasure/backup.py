"""Backups, and restores that keep erased subjects erased.

``memaudit backup PATH`` writes:

* on SQLite, a SQLite database file made with SQLite's **online backup API** (consistent
  while the daemon writes; journal mode DELETE, so the file stands alone);
* on PostgreSQL (or with ``--format jsonl``), a **logical JSONL export** of memaudit's own
  tables read in one ``REPEATABLE READ`` snapshot: a header line (format, schema
  revision, tables and column kinds), one line per row, and a trailer with row counts and
  the sha256 of every line before it. It restores into either database and needs neither
  ``pg_dump`` nor a matching server version; ``pg_dump`` remains the tool for whole-cluster
  backups (see ``docs/erasure.md``). A name ending in ``.gz`` is gzip-compressed.

Backup files hold personal data: they are created ``0600``.

``memaudit restore PATH`` never touches the live store before the whole backup has been
read and checked: the file is materialised into a scratch SQLite database (integrity
check, schema revision known, JSONL hash and counts), migrated to the current schema, and
only then copied into the live store **in one transaction**. Inside that transaction:

1. the live store's erasure ledger (tombstones and erasure requests) is read *before* the
   rows are replaced, and merged back afterwards, with the entries of the ledger file
   (``erasure_ledger_path``, by default beside a SQLite store) and any ``--ledger`` files:
   a backup older than an erasure cannot bring the erased subject back;
2. every subject whose salted digest has a subject tombstone is erased again (memories,
   consents, findings, free text, audit events: :mod:`auditor.erasure.requests`), and memories
   with a memory tombstone (retention purges) are deleted again;
3. a ``backup.restored`` audit event records the file's hash and what was re-applied.

Afterwards storage is reclaimed (``VACUUM``) and every re-applied erasure is verified.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import shutil
import sqlite3
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import structlog
from alembic import command
from alembic.script import ScriptDirectory
from alembic.util.exc import CommandError
from sqlalchemy import (
    Integer,
    Table,
    create_engine,
    delete,
    func,
    insert,
    select,
    update,
)
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from auditor.config import Settings
from auditor.erasure.backup_format import (
    _BATCH,
    BACKUP_FORMAT,
    FORMAT_VERSION,
    GZIP_MAGIC,
    SQLITE_MAGIC,
    _check_jsonl,
    _encode,
    _kind,
    _load_jsonl,
)
from auditor.erasure.common import EXECUTED, IN_FLIGHT, RECEIPT_FORMAT
from auditor.erasure.execute import erase_in_session as _erase_in_session
from auditor.erasure.execute import purge_findings as _purge_findings
from auditor.erasure.scratch import register, scratch_dir, sweep
from auditor.erasure.storage import ledger_path, read_ledger, reclaim_storage, verify_erasure
from auditor.erasure.values import identifying_values as _identifying_values
from auditor.errors import InputError, StoreError
from auditor.hashing import subject_digest
from auditor.lifecycle import audit_log
from auditor.lifecycle.audit_key import audit_key
from auditor.store.crypto import raw_select
from auditor.store.db import Database
from auditor.store.models import (
    AuditHead,
    Base,
    Consent,
    ErasureRequest,
    Memory,
    Principal,
    Tombstone,
)
from auditor.store.residue import Matcher
from auditor.store.types import utcnow

__all__ = ["BACKUP_FORMAT", "BackupInfo", "RestoreReport", "backup", "restore"]

log = structlog.get_logger(__name__)

#: Called at step boundaries (``backup-written``, ``restore-materialised``): tests kill the
#: process there to prove a killed backup or restore leaves no copy behind.
crash_hook: Callable[[str], None] | None = None


def _step(name: str) -> None:
    if crash_hook is not None:
        crash_hook(name)


@dataclass(frozen=True)
class BackupInfo:
    """What a backup wrote: where, in which format, at which schema, how many rows."""

    path: Path
    format: str
    revision: str
    rows: dict[str, int]
    sha256: str
    bytes: int

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "path": str(self.path),
            "format": self.format,
            "revision": self.revision,
            "rows": dict(self.rows),
            "sha256": self.sha256,
            "bytes": self.bytes,
        }


@dataclass
class RestoreReport:
    """What a restore did (no personal data: digests, ids and counts)."""

    path: Path
    format: str
    revision: str
    sha256: str
    rows: dict[str, int] = field(default_factory=dict)
    ledger_entries: int = 0
    reapplied: list[dict[str, Any]] = field(default_factory=list)
    memories_purged: int = 0
    storage: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """Whether every re-applied erasure verified."""
        return all(r["verified"] for r in self.reapplied)

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "path": str(self.path),
            "format": self.format,
            "revision": self.revision,
            "sha256": self.sha256,
            "rows": dict(self.rows),
            "ledger_entries": self.ledger_entries,
            "reapplied": list(self.reapplied),
            "memories_purged": self.memories_purged,
            "storage": dict(self.storage),
            "ok": self.ok,
        }


# -- helpers ------------------------------------------------------------------------------


def _file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _scratch_db(db: Database, path: Path) -> Database:
    return Database(db.settings, url=f"sqlite:///{path}")


def _new_private_file(path: Path) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.close(fd)


def _row_counts(source: Database) -> dict[str, int]:
    with source.engine.connect() as conn:
        return {
            t.name: int(conn.execute(select(func.count()).select_from(t)).scalar_one())
            for t in Base.metadata.sorted_tables
        }


# -- backup -------------------------------------------------------------------------------


def backup(
    db: Database,
    path: Path,
    *,
    fmt: str = "auto",
    overwrite: bool = False,
    actor: str = "memaudit",
) -> BackupInfo:
    """Write a consistent backup of the store to ``path``.

    Args:
        db: the store (schema current).
        path: the file to write (atomically: a temporary file is renamed at the end).
        fmt: ``auto`` (SQLite file for SQLite, JSONL for PostgreSQL), ``sqlite`` or
            ``jsonl``.
        overwrite: replace an existing file.
        actor: recorded on the ``backup.created`` audit event.

    Returns:
        What was written.

    Raises:
        InputError: the file exists, its folder does not, or the format does not fit.
        StoreError: the database failed.
    """
    db.require_schema()
    path = Path(path)
    if path.exists() and not overwrite:
        raise InputError(f"backup file {path} exists; choose another name or pass --force")
    if not path.parent.is_dir():
        raise InputError(f"backup folder {path.parent} does not exist")
    if fmt == "auto":
        fmt = "sqlite" if db.dialect == "sqlite" else "jsonl"
    if fmt not in ("sqlite", "jsonl"):
        raise InputError(f"unknown backup format {fmt!r}; expected auto, sqlite or jsonl")
    if fmt == "sqlite" and db.dialect != "sqlite":
        raise InputError(
            "a SQLite-file backup needs a SQLite store; a PostgreSQL store is backed up as jsonl"
        )
    revision = db.current_revision() or ""
    sweep(db)  # copies left by killed backups and restores
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    with register(db, tmp, purpose="backup"):  # the next run removes it if this one dies
        _new_private_file(tmp)
        if fmt == "sqlite":
            rows = _backup_sqlite(db, tmp)
        else:
            rows = _backup_jsonl(db, tmp, revision, gz=path.name.endswith(".gz"))
        _step("backup-written")
        os.replace(tmp, path)
    sha = _file_sha256(path)
    info = BackupInfo(path, fmt, revision, rows, sha, path.stat().st_size)
    with db.write() as session:
        audit_log.append(
            session,
            actor=actor,
            action="backup.created",
            target_type="backup",
            target_ids=[sha],
            details={"format": fmt, "revision": revision, "rows": sum(rows.values())},
            key=audit_key(db.settings),
        )
    log.info("backup_created", format=fmt, revision=revision, rows=sum(rows.values()))
    return info


def _backup_sqlite(db: Database, target: Path) -> dict[str, int]:
    raw = db.engine.raw_connection()
    try:
        source: Any = raw.driver_connection
        dest = sqlite3.connect(target)
        try:
            source.backup(dest)
            dest.execute("PRAGMA journal_mode=DELETE")
        finally:
            dest.close()
    finally:
        raw.close()
    engine = create_engine(f"sqlite:///{target}")
    try:
        with engine.connect() as conn:
            return {
                t.name: int(conn.execute(select(func.count()).select_from(t)).scalar_one())
                for t in Base.metadata.sorted_tables
            }
    finally:
        engine.dispose()


def _backup_jsonl(db: Database, target: Path, revision: str, *, gz: bool) -> dict[str, int]:
    tables = Base.metadata.sorted_tables
    kinds = {t.name: [(c.name, _kind(c)) for c in t.columns] for t in tables}
    digest = hashlib.sha256()
    rows: dict[str, int] = {}
    with target.open("wb") as raw_out:
        out: Any = gzip.GzipFile(fileobj=raw_out, mode="wb") if gz else raw_out

        def emit(obj: dict[str, Any], hashed: bool = True) -> None:
            line = (json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
            if hashed:
                digest.update(line)
            out.write(line)

        emit(
            {
                "format": BACKUP_FORMAT,
                "format_version": FORMAT_VERSION,
                "revision": revision,
                "dialect": db.dialect,
                "created_at": utcnow().isoformat(),
                "tables": [
                    {"name": n, "columns": [list(c) for c in cols]} for n, cols in kinds.items()
                ],
            }
        )
        conn = db.engine.connect()
        if db.dialect == "postgresql":
            conn = conn.execution_options(isolation_level="REPEATABLE READ")
        try:
            with conn.begin():
                for tbl in tables:
                    cols = kinds[tbl.name]
                    n = 0
                    result = conn.execution_options(yield_per=_BATCH).execute(
                        raw_select(tbl).order_by(*tbl.primary_key.columns)  # ciphertext as is
                    )
                    for row in result.mappings():
                        emit({"t": tbl.name, "v": [_encode(row[c], k) for c, k in cols]})
                        n += 1
                    rows[tbl.name] = n
        finally:
            conn.close()
        emit({"end": True, "rows": rows, "sha256": digest.hexdigest()}, hashed=False)
        if gz:
            out.close()
    return rows


# -- reading a backup -----------------------------------------------------------------------


def _known_revision(db: Database, revision: str, path: Path) -> None:
    script = ScriptDirectory.from_config(db.alembic_config())
    try:
        found = script.get_revision(revision)
    except CommandError:
        found = None
    if not revision or found is None:
        raise InputError(
            f"backup {path} is at schema {revision or 'unknown'}, which this memaudit does not "
            f"know (it knows up to {db.head_revision()}): restore it with a newer memaudit"
        )


def _upgrade_to(scratch: Database, revision: str) -> None:
    cfg = scratch.alembic_config()
    with scratch.engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, revision)


def _materialise(db: Database, path: Path, work: Path) -> tuple[Database, str, str]:
    """The backup as a scratch SQLite store at the current schema; (store, format, revision).

    Raises:
        InputError: the file is not a readable memaudit backup (the live store is untouched).
    """
    with path.open("rb") as fh:
        magic = fh.read(16)
    copy = work / "restore.db"
    _new_private_file(copy)  # a full copy of personal data: 0600 before a byte is written
    if magic == SQLITE_MAGIC:
        shutil.copyfile(path, copy)
        try:
            conn = sqlite3.connect(copy)
            try:
                check = conn.execute("PRAGMA quick_check").fetchone()
                if not check or check[0] != "ok":
                    raise InputError(f"backup {path}: the SQLite file is damaged (quick_check)")
                has_version = conn.execute(
                    "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                    ("alembic_version",),
                ).fetchone()
                if has_version is None:
                    raise InputError(f"backup {path}: a SQLite file, but not a memaudit store")
                row = conn.execute("SELECT version_num FROM alembic_version").fetchone()
                revision = str(row[0]) if row else ""
            finally:
                conn.close()
        except sqlite3.DatabaseError as exc:
            raise InputError(f"backup {path}: not a readable SQLite database ({exc})") from None
        _known_revision(db, revision, path)
        scratch = _scratch_db(db, copy)
        try:
            scratch.upgrade()
        except (SQLAlchemyError, StoreError) as exc:
            scratch.dispose()
            raise InputError(
                f"backup {path}: cannot migrate it from schema {revision} "
                f"({type(exc).__name__}); the live store is untouched"
            ) from None
        except Exception:
            scratch.dispose()
            raise
        return scratch, "sqlite", revision
    if magic[:2] == GZIP_MAGIC or magic.lstrip()[:1] == b"{":
        header, _counts = _check_jsonl(path)
        revision = str(header.get("revision") or "")
        _known_revision(db, revision, path)
        scratch = _scratch_db(db, copy)
        try:
            _upgrade_to(scratch, revision)
            _load_jsonl(path, header, scratch)
            scratch.upgrade()
        except (SQLAlchemyError, StoreError) as exc:
            scratch.dispose()
            raise InputError(
                f"backup {path}: its rows do not load into schema {revision} "
                f"({type(exc).__name__}); the live store is untouched"
            ) from None
        except Exception:
            scratch.dispose()
            raise
        return scratch, "jsonl", revision
    raise InputError(
        f"{path} is not a memaudit backup (neither a SQLite database nor a memaudit JSONL backup)"
    )


# -- restore --------------------------------------------------------------------------------


def _rows(session: Session, tbl: Table) -> list[dict[str, Any]]:
    return [dict(r) for r in session.execute(select(tbl)).mappings()]


def _replace_all(session: Session, scratch: Database) -> dict[str, int]:
    tables = Base.metadata.sorted_tables
    for tbl in reversed(tables):
        session.execute(delete(tbl))
    counts: dict[str, int] = {}
    with scratch.engine.connect() as src:
        for tbl in tables:
            n = 0
            batch: list[dict[str, Any]] = []
            result = src.execution_options(yield_per=_BATCH).execute(raw_select(tbl))
            for row in result.mappings():
                batch.append(dict(row))
                if len(batch) >= _BATCH:
                    session.execute(insert(tbl), batch)
                    n += len(batch)
                    batch = []
            if batch:
                session.execute(insert(tbl), batch)
                n += len(batch)
            counts[tbl.name] = n
    return counts


def _reset_sequences(session: Session) -> None:
    """PostgreSQL: move each serial id sequence past the largest id now in its table."""
    if session.get_bind().dialect.name != "postgresql":
        return
    for tbl in Base.metadata.sorted_tables:
        pk = list(tbl.primary_key.columns)
        if len(pk) != 1 or not isinstance(pk[0].type, Integer):
            continue
        col = pk[0]
        session.execute(
            select(
                func.setval(
                    func.pg_get_serial_sequence(tbl.name, col.name),
                    select(func.coalesce(func.max(col), 0) + 1).scalar_subquery(),
                    False,
                )
            )
        )


def _merge_ledger(
    session: Session,
    live_requests: list[dict[str, Any]],
    live_tombstones: list[dict[str, Any]],
    file_entries: Sequence[dict[str, Any]],
) -> None:
    """Bring the live erasure requests, tombstones and ledger-file entries into the restore."""
    req_table = Base.metadata.tables["erasure_requests"]
    tomb_table = Base.metadata.tables["tombstones"]
    restored = {r["id"]: r for r in _rows(session, req_table)}
    remap: dict[int, int] = {}
    for live in live_requests:
        mine = restored.get(live["id"])
        if mine is not None and (mine["subject_digest"], mine["requested_at"]) == (
            live["subject_digest"],
            live["requested_at"],
        ):
            values = {k: v for k, v in live.items() if k != "id"}
            session.execute(update(req_table).where(req_table.c.id == live["id"]).values(values))
            remap[live["id"]] = live["id"]
        elif mine is None:
            session.execute(insert(req_table).values(live))
            remap[live["id"]] = live["id"]
        else:  # the same id means another request in the backup's history
            values = {k: v for k, v in live.items() if k != "id"}
            new_id = session.execute(
                insert(req_table).values(values).returning(req_table.c.id)
            ).scalar_one()
            remap[live["id"]] = int(new_id)
    _reset_sequences(session)
    have = {(t["kind"], t["memory_id"], t["subject_digest"]) for t in _rows(session, tomb_table)}
    for tomb in live_tombstones:
        key = (tomb["kind"], tomb["memory_id"], tomb["subject_digest"])
        if key in have:
            continue
        have.add(key)
        values = {k: v for k, v in tomb.items() if k != "id"}
        values["request_id"] = remap.get(tomb["request_id"]) if tomb["request_id"] else None
        session.execute(insert(tomb_table).values(values))
    requests = {r["id"]: r["subject_digest"] for r in _rows(session, req_table)}
    for entry in file_entries:
        digest = str(entry["subject_digest"])
        request_id = entry.get("request_id")
        if requests.get(request_id) != digest:
            executed = _ledger_time(entry)
            request_id = session.execute(
                insert(req_table)
                .values(
                    subject_digest=digest,
                    requested_by="erasure ledger",
                    requested_at=executed,
                    status=EXECUTED,
                    executed_at=executed,
                    receipt={"format": RECEIPT_FORMAT, "restored_from_ledger": True},
                    user_initiated=False,
                )
                .returning(req_table.c.id)
            ).scalar_one()
            requests[request_id] = digest
        wanted = [("subject", None)] + [("memory", str(m)) for m in entry.get("memory_ids", [])]
        for kind, memory_id in wanted:
            key = (kind, memory_id, digest)
            if key in have:
                continue
            have.add(key)
            session.execute(
                insert(tomb_table).values(
                    kind=kind,
                    memory_id=memory_id,
                    subject_digest=digest,
                    erased_at=_ledger_time(entry),
                    request_id=request_id,
                )
            )


def _ledger_time(entry: dict[str, Any]) -> datetime:
    try:
        parsed = datetime.fromisoformat(str(entry.get("executed_at")).replace("Z", "+00:00"))
    except ValueError:
        return utcnow()
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def _restored_subjects(session: Session) -> set[str]:
    subjects: set[str] = set()
    for col in (Memory.subject, Consent.subject, Principal.subject, ErasureRequest.subject):
        subjects.update(s for s in session.scalars(select(col).distinct()) if s)
    return subjects


def _ledger_entries(db: Database, ledgers: Sequence[Path]) -> list[dict[str, Any]]:
    """The entries of the configured ledger file (when it exists), then of ``ledgers``."""
    entries: list[dict[str, Any]] = []
    configured = ledger_path(db)
    for ledger in [*([configured] if configured and configured.exists() else []), *ledgers]:
        entries.extend(read_ledger(Path(ledger)))
    return entries


def _live_ledger(
    session: Session,
) -> tuple[tuple[int, str], list[dict[str, Any]], list[dict[str, Any]]]:
    """The live store's audit head, erasure requests and tombstones, before the replace."""
    head = session.get(AuditHead, 1)
    live_head = (head.last_seq, head.last_hash) if head is not None else (0, "")
    live_requests = _rows(session, Base.metadata.tables["erasure_requests"])
    live_tombstones = _rows(session, Base.metadata.tables["tombstones"])
    return live_head, live_requests, live_tombstones


def _erased_digests(session: Session) -> dict[str, int | None]:
    """Subject digest -> request id of every subject to erase again (tombstoned or in flight)."""
    erased = {
        d: rid
        for d, rid in session.execute(
            select(Tombstone.subject_digest, Tombstone.request_id).where(
                Tombstone.kind == "subject"
            )
        )
    }
    # an erasure interrupted before its delete committed (no tombstone yet, no
    # ledger file on PostgreSQL by default) is re-applied too; the queue resumes it
    for d, rid in session.execute(
        select(ErasureRequest.subject_digest, ErasureRequest.id).where(
            ErasureRequest.status.in_(IN_FLIGHT)
        )
    ):
        erased.setdefault(d, rid)
    return erased


def _reapply_erasures(
    session: Session,
    report: RestoreReport,
    erased: dict[str, int | None],
    *,
    settings: Settings,
    key: bytes | None,
    actor: str,
) -> list[tuple[str, set[str], dict[str, Any]]]:
    """Erase again every restored subject whose digest is in ``erased``.

    Returns:
        (subject, its identifying values, their stats) per re-applied erasure, in the
        order of ``report.reapplied`` (for the verification after the restore).
    """
    reapplied: list[tuple[str, set[str], dict[str, Any]]] = []
    for subject in sorted(_restored_subjects(session)):
        digest = subject_digest(subject, key)
        if digest not in erased:
            continue
        values, stats = _identifying_values(session, subject, settings)
        outcome = _erase_in_session(
            session,
            settings,
            subject,
            digest=digest,
            request_id=None,
            actor=actor,
            matcher=Matcher([subject, *values]),
            action="erasure.reapplied",
        )
        reapplied.append((subject, values, stats))
        report.reapplied.append(
            {
                "request_id": erased[digest],
                "subject_digest": digest,
                "counts": outcome.counts,
                "notes": outcome.notes,
            }
        )
    return reapplied


def _log_restored(
    session: Session,
    report: RestoreReport,
    live_head: tuple[int, str],
    *,
    actor: str,
    key: bytes | None,
) -> None:
    """The ``backup.restored`` audit event (the file's hash, what was re-applied)."""
    audit_log.append(
        session,
        actor=actor,
        action="backup.restored",
        target_type="backup",
        target_ids=[report.sha256],
        details={
            "format": report.format,
            "revision": report.revision,
            "rows": sum(report.rows.values()),
            "reapplied": len(report.reapplied),
            "memories_purged": report.memories_purged,
            "live_head_seq": live_head[0],
            "live_head_hash": live_head[1],
        },
        key=key,
    )


def _restore_in_session(
    session: Session,
    scratch: Database,
    report: RestoreReport,
    entries: Sequence[dict[str, Any]],
    *,
    settings: Settings,
    key: bytes | None,
    actor: str,
) -> list[tuple[str, set[str], dict[str, Any]]]:
    """The restore transaction: replace the rows, merge the ledger, re-apply the erasures
    and purges, and record ``backup.restored``.

    Returns:
        What :func:`_reapply_erasures` re-applied.
    """
    live_head, live_requests, live_tombstones = _live_ledger(session)
    session.expunge_all()
    report.rows = _replace_all(session, scratch)
    _reset_sequences(session)
    _merge_ledger(session, live_requests, live_tombstones, entries)
    _reset_sequences(session)
    erased = _erased_digests(session)
    reapplied = _reapply_erasures(session, report, erased, settings=settings, key=key, actor=actor)
    report.memories_purged = _purge_tombstoned(session)
    _log_restored(session, report, live_head, actor=actor, key=key)
    return reapplied


def _verify_reapplied(
    db: Database,
    report: RestoreReport,
    reapplied: list[tuple[str, set[str], dict[str, Any]]],
) -> None:
    """Verify every re-applied erasure; the result goes on its ``report.reapplied`` entry."""
    for (subject, values, stats), entry in zip(reapplied, report.reapplied, strict=True):
        verification = verify_erasure(db, subject, values=values)
        entry["verified"] = verification.ok
        entry["verification"] = {**verification.as_dict(), "values": stats}


def restore(
    db: Database,
    path: Path,
    *,
    actor: str,
    ledgers: Sequence[Path] = (),
) -> RestoreReport:
    """Replace the store's content by a backup, then re-apply every erasure since.

    Args:
        db: the live store (created if it is not initialised yet).
        path: a backup written by :func:`backup` (SQLite file or JSONL, any known schema).
        actor: who restores (audit log).
        ledgers: further erasure ledger files to re-apply (besides the live store's
            tombstones and the configured ledger file).

    Returns:
        The report; ``ok`` is False when a re-applied erasure did not verify.

    Raises:
        InputError: the file is not a readable memaudit backup, or a ledger is unreadable;
            the live store is untouched then.
        StoreError: the database failed (the restore transaction is rolled back).
    """
    if not actor or not actor.strip():
        raise InputError("an actor is required (--by WHO)")
    path = Path(path)
    if not path.is_file():
        raise InputError(f"backup file not found: {path}")
    entries = _ledger_entries(db, ledgers)
    if db.current_revision() is None:
        db.upgrade()
    db.require_schema()
    sha = _file_sha256(path)
    settings = db.settings
    key = audit_key(settings)
    sweep(db)  # copies left by killed backups and restores
    work_dir = scratch_dir(db) / f"restore-{uuid.uuid4().hex[:12]}"
    with register(db, work_dir, purpose="restore") as work:
        work.mkdir(mode=0o700, parents=True)
        scratch, fmt, revision = _materialise(db, path, Path(work))
        _step("restore-materialised")
        report = RestoreReport(path, fmt, revision, sha, ledger_entries=len(entries))
        try:
            with db.write() as session:
                reapplied = _restore_in_session(
                    session, scratch, report, entries, settings=settings, key=key, actor=actor
                )
        finally:
            scratch.dispose()
    report.storage = reclaim_storage(db)
    _verify_reapplied(db, report, reapplied)
    log.info(
        "backup_restored",
        format=fmt,
        revision=revision,
        rows=sum(report.rows.values()),
        reapplied=len(report.reapplied),
        ok=report.ok,
    )
    return report


def _purge_tombstoned(session: Session) -> int:
    """Delete restored memories whose id has a tombstone (purged or erased since)."""
    ids = sorted(
        set(
            session.scalars(
                select(Memory.memory_id).where(
                    Memory.memory_id.in_(
                        select(Tombstone.memory_id).where(Tombstone.memory_id.is_not(None))
                    )
                )
            )
        )
    )
    if not ids:
        return 0
    _purge_findings(session, set(ids), set(), Matcher([]), {})
    for start in range(0, len(ids), 500):
        session.execute(delete(Memory).where(Memory.memory_id.in_(ids[start : start + 500])))
    return len(ids)
