"""After the delete: reclaiming storage, verifying that nothing is left, the erasure ledger.

* :func:`reclaim_storage`: SQLite ``VACUUM``, FTS rebuilds, WAL truncation, statistics;
  PostgreSQL ``VACUUM (ANALYZE)``. Each statement holds its own short lock (see
  ``docs/erasure.md``, "Locks"); none is held across the erasure.
* :func:`verify_erasure`: one search of every table, statistics, the database files,
  temporary copies and logs for the subject id and its identifying values
  (:mod:`auditor.store.residue`, one automaton pass per table and file); and, with
  crypto-shredding, that the subject's data key is gone.
* the **erasure ledger** (:func:`ledger_path`, :func:`append_ledger`,
  :func:`read_ledger`): an append-only JSONL file (``0600``, fsynced) with one line per
  erasure, written *before* the delete (write-ahead), so a restore re-applies it even if
  the erasure was interrupted or the live store is lost. No personal data: request id,
  subject digest, time, erased memory ids.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import structlog
from sqlalchemy import column, insert, table, text
from sqlalchemy.exc import SQLAlchemyError

from auditor.erasure.common import (
    KIND_SHORT,
    KIND_SUBJECT,
    KIND_VALUE,
    LEDGER_FORMAT,
    Verification,
    _digest,
    _require,
)
from auditor.erasure.scratch import leftovers, sweep
from auditor.erasure.subjects import other_identifiers
from auditor.errors import InputError
from auditor.hashing import canonical_json
from auditor.store.db import Database
from auditor.store.models import Base
from auditor.store.residue import Hit, Matcher, SearchReport, search_database, search_file

__all__ = [
    "KIND_KEY",
    "append_ledger",
    "keystore",
    "ledger_path",
    "read_ledger",
    "reclaim_storage",
    "sqlite_file",
    "verify_erasure",
]

log = structlog.get_logger(__name__)

_CHECKPOINT_TRIES = 10
#: The kind of a hit that is the subject's data key, still in the key store.
KIND_KEY = "data key"


def keystore(db: Database) -> Any:
    """The subject key store of crypto-shredding, or None when encryption is off.

    Args:
        db: the store.

    Returns:
        A :class:`auditor.store.subject_keys.SubjectKeyStore` or None.
    """
    from auditor.store.subject_keys import keystore_for

    return keystore_for(db.settings)


def _check_key(db: Database, subject: str, report: SearchReport) -> None:
    """A data key that still exists keeps every encrypted copy readable: a finding."""
    try:
        store = keystore(db)
    except Exception as exc:  # noqa: BLE001 - a key store that cannot be asked is not proof
        report.unsearchable.append(f"key store: {type(exc).__name__}")
        return
    if store is None:
        return
    try:
        if store.exists(subject):
            report.hits.append(Hit(f"key store {store.describe()}", KIND_KEY, 1))
    except Exception as exc:  # noqa: BLE001 - idem
        report.unsearchable.append(f"key store {store.describe()}: {type(exc).__name__}")


def sqlite_file(db: Database) -> Path | None:
    database = db.url.database
    if db.dialect != "sqlite" or not database or database == ":memory:":
        return None
    return Path(database).expanduser().resolve()


def reclaim_storage(db: Database) -> dict[str, Any]:
    """Make deleted rows unrecoverable from the database files, as far as the engine allows.

    SQLite: rebuild every FTS index, ``VACUUM`` (when ``erasure_vacuum``), truncate the WAL,
    refresh planner statistics if there are any. PostgreSQL: ``VACUUM ANALYZE`` memaudit's
    tables (``ANALYZE`` only, when ``erasure_vacuum`` is off), so planner statistics stop
    sampling erased values; dead row versions are freed for reuse, not overwritten.

    Args:
        db: the store (no transaction of this process may be open on it).

    Returns:
        What was done (no personal data).
    """
    vacuum = db.settings.erasure_vacuum
    done: dict[str, Any] = {"dialect": db.dialect, "vacuum": "skipped"}
    if db.dialect == "postgresql":
        preparer = db.engine.dialect.identifier_preparer
        verb = "VACUUM (ANALYZE) " if vacuum else "ANALYZE "
        with db.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            for tbl in Base.metadata.sorted_tables:
                conn.exec_driver_sql(verb + preparer.format_table(tbl))
        done["vacuum"] = "VACUUM ANALYZE" if vacuum else "skipped"
        done["statistics"] = "refreshed"
        return done
    fts: list[str] = []
    with db.engine.connect() as conn:
        for name, sql in conn.execute(
            text("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND sql LIKE :p"),
            {"p": "CREATE VIRTUAL TABLE%"},
        ):
            if re.search(r"\busing\s+fts[345]\b", sql or "", re.IGNORECASE):
                fts.append(str(name))
        has_stats = (
            conn.execute(
                text("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = :n"),
                {"n": "sqlite_stat1"},
            ).first()
            is not None
        )
        conn.rollback()
    rebuilt = 0
    for name in fts:
        try:
            with db.engine.begin() as conn:
                conn.execute(insert(table(name, column(name))).values({name: "rebuild"}))
            rebuilt += 1
        except SQLAlchemyError as exc:
            log.warning("erasure_fts_rebuild_failed", table=name, error_type=type(exc).__name__)
    done["fts_rebuilt"] = rebuilt
    raw = db.engine.raw_connection()
    try:
        sqlite_conn: Any = raw.driver_connection
        if has_stats:
            sqlite_conn.execute("ANALYZE")
            done["statistics"] = "refreshed"
        if vacuum:
            sqlite_conn.execute("VACUUM")
            done["vacuum"] = "VACUUM"
        status = "busy"
        for _attempt in range(_CHECKPOINT_TRIES):
            busy, _log_frames, _moved = sqlite_conn.execute(
                "PRAGMA wal_checkpoint(TRUNCATE)"
            ).fetchone()
            if not busy:
                status = "truncated"
                break
            time.sleep(0.1)
        done["wal_checkpoint"] = status
    finally:
        raw.close()
    return done


# -- verification -------------------------------------------------------------------------


def _search_path(
    report: SearchReport, place: str, path: Path, matchers: dict[str, Matcher]
) -> None:
    """Search one file for every kind of needle; a file that cannot be read is reported."""
    for kind, matcher in matchers.items():
        try:
            report.add(place, kind, search_file(path, matcher))
        except OSError as exc:
            report.unsearchable.append(f"{place}: {type(exc).__name__}")


def _search_db_files(db: Database, report: SearchReport, matchers: dict[str, Matcher]) -> list[str]:
    """On SQLite, search the database file and its WAL (free pages included).

    Returns:
        The names of the files searched.
    """
    files = []
    db_file = sqlite_file(db)
    if db_file is not None:
        files = [p for p in (db_file, Path(f"{db_file}-wal")) if p.exists()]
    names = [f"file {p.name}" for p in files]
    for path in files:
        _search_path(report, f"file {path.name}", path, matchers)
    report.files += len(files)
    return names


def _search_copies(
    db: Database, report: SearchReport, matchers: dict[str, Matcher], names: list[str]
) -> None:
    """Search the temporary copies running backups and restores hold (names added)."""
    sweep(db)  # copies of killed backups and restores go first; running ones are searched
    for path in leftovers(db):
        report.files += 1
        names.append(f"temporary copy {path.name}")
        _search_path(report, f"temporary copy {path.name}", path, matchers)


def _search_logs(
    log_paths: Sequence[Path],
    report: SearchReport,
    matchers: dict[str, Matcher],
    names: list[str],
) -> None:
    """Search the log files given (names added); one that is not a file is unsearchable."""
    for path in log_paths:
        path = Path(path)
        if not path.is_file():
            report.unsearchable.append(f"log {path}: not a readable file")
            continue
        report.files += 1
        names.append(f"log {path}")
        _search_path(report, f"log {path}", path, matchers)


def _verdict(
    db: Database, subject: str, report: SearchReport, names: list[str], values: int
) -> Verification:
    """The verification of what ``report`` found (``values``: how many were searched for)."""
    digest = _digest(db.settings, subject)
    definite = [h for h in report.hits if h.kind != KIND_SHORT]  # short: "may hold"
    result = Verification(
        ok=not definite and not report.unsearchable,
        subject_digest=digest,
        hits=tuple(report.hits),
        searched={
            "tables": report.tables,
            "columns": report.columns,
            "files": report.files,
            "values": values,
        },
        unsearchable=tuple(report.unsearchable),
        files=tuple(names),
    )
    log.info(
        "erasure_verified",
        subject_digest=digest[:16],
        ok=result.ok,
        places=len(result.hits),
        tables=report.tables,
    )
    return result


def verify_erasure(
    db: Database,
    subject: str,
    *,
    values: Iterable[str] | None = None,
    short_values: Iterable[str] | None = None,
    log_paths: Sequence[Path] = (),
) -> Verification:
    """Search everywhere for the subject id and its identifying values.

    Every table and every text, JSON and binary column (by reflection, so tables memaudit
    does not own are searched too), planner statistics, on SQLite the database file and its
    WAL (free pages included), temporary copies a running backup or restore holds (those
    of killed ones are removed first: :mod:`auditor.erasure.scratch`), and the log files
    given. With crypto-shredding on, the subject's data key must be gone from the key
    store (a key that still exists is reported as found). One pass per table and per file,
    whatever the number of values. Occurrences inside other people's
    identifiers (``user:ines.duarte-2`` when verifying ``user:ines.duarte``) do not count.

    Args:
        db: the store.
        subject: the subject id (callers taking it from a person resolve it first:
            :func:`auditor.erasure.subjects.resolve_subject`).
        values: identifying values to look for too (memory only; :func:`erase_subject`
            passes the ones it collected before the delete).
        short_values: values shorter than ``erasure_min_value_chars``, matched as whole
            tokens (reported as ``KIND_SHORT``: they may be unrelated text).
        log_paths: log files to search.

    Returns:
        The verification: places and counts, never the values found.

    Raises:
        InputError: no subject.
    """
    subject = _require(subject, "a subject")
    value_list = sorted({v for v in (values or ()) if v and v != subject})
    short_list = sorted({v for v in (short_values or ()) if v and v != subject})
    with db.session() as session:
        others = other_identifiers(session, subject, [subject, *value_list, *short_list])
    matchers = {
        KIND_SUBJECT: Matcher([subject], exclude=others),
        KIND_VALUE: Matcher(value_list, exclude=others),
        KIND_SHORT: Matcher(short_list, exclude=others),
    }
    with db.engine.connect() as conn:
        report = search_database(conn, matchers)
        conn.rollback()
    names = _search_db_files(db, report, matchers)
    _search_copies(db, report, matchers, names)
    _check_key(db, subject, report)
    _search_logs(log_paths, report, matchers, names)
    return _verdict(db, subject, report, names, len(value_list) + len(short_list))


# -- ledger -------------------------------------------------------------------------------


def ledger_path(db: Database) -> Path | None:
    """Where executed erasures are appended: ``erasure_ledger_path``, or beside a SQLite file.

    Args:
        db: the store.

    Returns:
        The ledger file, or None (PostgreSQL without ``erasure_ledger_path``).
    """
    if db.settings.erasure_ledger_path is not None:
        return Path(db.settings.erasure_ledger_path)
    db_file = sqlite_file(db)
    return Path(f"{db_file}.erasures.jsonl") if db_file is not None else None


def append_ledger(path: Path, entry: dict[str, Any]) -> None:
    line = (canonical_json(entry) + "\n").encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, line)
        os.fsync(fd)
    finally:
        os.close(fd)


def read_ledger(path: Path) -> list[dict[str, Any]]:
    """The entries of an erasure ledger file (digests and memory ids, no personal data).

    Args:
        path: the ledger.

    Returns:
        Its entries, oldest first.

    Raises:
        InputError: the file cannot be read or a line is not a ledger entry (named by line).
    """
    entries = []
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"erasure ledger {path}: cannot read it ({type(exc).__name__})") from None
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            raise InputError(f"erasure ledger {path} line {n}: not JSON") from None
        if (
            not isinstance(entry, dict)
            or entry.get("format") != LEDGER_FORMAT
            or not isinstance(entry.get("subject_digest"), str)
            or not isinstance(entry.get("memory_ids", []), list)
        ):
            raise InputError(f"erasure ledger {path} line {n}: not a ledger entry")
        entries.append(entry)
    return entries
