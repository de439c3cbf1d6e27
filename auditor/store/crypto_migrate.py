"""Encrypting an existing plaintext store: ``memaudit keys migrate`` (alias ``encrypt-store``).

Rows whose encrypted columns (:data:`auditor.store.crypto_events.ENCRYPTED_FIELDS`) still
hold clear text are sealed in batches, each batch its own short write transaction, so the
migration can be stopped at any point and run again: it picks up the rows still in
clear (idempotent; sealed values are recognised by their ``enc1:`` prefix and never
sealed twice). ``changed_at`` and ``version`` are left as they were: sealing is not a
change of content, and incremental scans must not re-read the store for it.

Once every row is sealed the old clear text still sits in free pages and the WAL, so the
migration ends with ``VACUUM`` and a truncating WAL checkpoint on SQLite (the file is
rebuilt), and ``VACUUM FULL`` of the encrypted tables on PostgreSQL (the heap is
rewritten; WAL segments already archived, replicas' history and older backups keep the
clear text until they expire: see docs/erasure.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Table, Text, bindparam, func, or_, select, type_coerce, update
from sqlalchemy.sql.elements import ColumnElement

from auditor.errors import ConfigError
from auditor.store.crypto import PREFIX, SealRequest
from auditor.store.crypto_events import ENCRYPTED_FIELDS, binding_for
from auditor.store.db import Database

__all__ = ["MigrateReport", "count_plain", "migrate_store"]

Progress = Callable[[str, int, int], None]


@dataclass
class MigrateReport:
    """What a migration did: rows sealed per table, and whether the store was vacuumed."""

    sealed: dict[str, int] = field(default_factory=dict)
    vacuumed: bool = False
    remaining: dict[str, int] = field(default_factory=dict)


def _plain_condition(table: Table, names: tuple[str, ...]) -> ColumnElement[bool]:
    parts = []
    for name in names:
        col = table.c[name]
        parts.append(col.is_not(None) & ~col.startswith(PREFIX, autoescape=True))
    return or_(*parts)


def count_plain(db: Database) -> dict[str, int]:
    """Rows per table that still hold an encrypted column in clear."""
    out: dict[str, int] = {}
    with db.session() as session:
        for model, names in ENCRYPTED_FIELDS.items():
            table: Table = model.__table__
            cond = _plain_condition(table, names)
            out[table.name] = int(
                session.scalar(select(func.count()).select_from(table).where(cond)) or 0
            )
    return out


def _seal_batch(db: Database, model: type[Any], batch: int) -> int:
    table: Table = model.__table__
    names = ENCRYPTED_FIELDS[model]
    pk = list(table.primary_key.columns)
    extra = [c for c in ("memory_id", "subject", "category") if c in table.c]
    # the encrypted columns are read raw (no decryption): sealed values are written back
    # as they are, never re-sealed (a shredded one would become its placeholder text)
    cols: dict[str, Any] = {c.name: c for c in pk} | {n: table.c[n] for n in extra}
    cols |= {n: type_coerce(table.c[n], Text).label(n) for n in names}
    with db.write() as session:
        rows = session.execute(
            select(*cols.values()).where(_plain_condition(table, names)).limit(batch)
        ).all()
        if not rows:
            return 0
        params = []
        for row in rows:
            values = dict(zip(cols, row, strict=True))
            binding = binding_for(model, values, lambda d, k: d.get(k))
            if binding is None:
                raise ConfigError(f"{table.name} row without its binding columns")
            entry: dict[str, Any] = {f"k_{c.name}": values[c.name] for c in pk}
            for name in names:
                value = values[name]
                if isinstance(value, str) and not value.startswith(PREFIX):
                    value = SealRequest(value, str(values["subject"]), binding)
                entry[f"v_{name}"] = value
            params.append(entry)
        stmt = update(table).where(*(c == bindparam(f"k_{c.name}") for c in pk))
        values_clause: dict[str, Any] = {
            n: bindparam(f"v_{n}", type_=table.c[n].type) for n in names
        }
        if "changed_at" in table.c:
            values_clause["changed_at"] = table.c.changed_at  # sealing is not a change
        session.connection().execute(stmt.values(**values_clause), params)
        return len(rows)


def vacuum(db: Database) -> None:
    """Rebuild the store's files so the clear text of sealed rows is gone from them."""
    if db.dialect == "sqlite":
        raw = db.engine.raw_connection()  # outside SQLAlchemy's BEGIN: VACUUM needs that
        try:
            driver: Any = raw.driver_connection
            driver.execute("VACUUM")
            driver.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            raw.close()
        return
    preparer = db.engine.dialect.identifier_preparer
    with db.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        for model in ENCRYPTED_FIELDS:
            conn.exec_driver_sql("VACUUM FULL " + preparer.format_table(model.__table__))


def migrate_store(
    db: Database,
    *,
    batch: int = 500,
    do_vacuum: bool = True,
    progress: Progress | None = None,
) -> MigrateReport:
    """Seal every encrypted column still in clear, then vacuum (see the module docstring).

    Args:
        db: the store; its key store must be configured.
        batch: rows per transaction.
        do_vacuum: rebuild the files at the end (default on).
        progress: called with (table, rows sealed so far, rows to seal at the start).

    Raises:
        ConfigError: encryption is off (no master key or key folder, or disabled).
    """
    if db.cipher is None:
        raise ConfigError(
            "encryption is off for this store: set MEMAUDIT_MASTER_KEY (or run `memaudit "
            "init`, which creates one beside a SQLite store) and, on PostgreSQL, "
            "MEMAUDIT_KEY_DIR; MEMAUDIT_ENCRYPTION must not be 'off'"
        )
    if batch < 1:
        raise ConfigError(f"--batch must be at least 1 (got {batch})")
    report = MigrateReport()
    todo = count_plain(db)
    for model in ENCRYPTED_FIELDS:
        name = model.__table__.name
        done = 0
        while True:
            n = _seal_batch(db, model, batch)
            if n == 0:
                break
            done += n
            if progress is not None:
                progress(name, done, todo.get(name, done))
        report.sealed[name] = done
    if do_vacuum:
        vacuum(db)
        report.vacuumed = True
    report.remaining = count_plain(db)
    return report
