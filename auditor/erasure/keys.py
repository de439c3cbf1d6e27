"""The audit HMAC key by default: created at ``memaudit init``, kept outside the database.

Every subject digest (receipts, tombstones, the erasure ledger, log lines, audit events) and
the audit chain itself use the audit HMAC key when there is one
(:func:`auditor.lifecycle.machine.audit_key`); without it a digest is an unkeyed SHA-256 that can be
reversed by guessing ids (``user:4242424`` in seconds). So ``memaudit init`` creates one
unless one is given:

* ``MEMAUDIT_AUDIT_HMAC_KEY`` (or ``MEMAUDIT_SECRETS_DIR/memaudit_audit_hmac_key``) is set:
  it wins, nothing is created;
* else, with ``MEMAUDIT_SECRETS_DIR`` set: the key is written there as
  ``memaudit_audit_hmac_key`` (the secret file the settings read);
* else, for a SQLite store: beside the database file, ``<database>.audit-hmac-key``
  (read by :mod:`auditor.config` whenever the settings name that database);
* else (PostgreSQL without a secrets folder): nothing can be created safely (a key must be
  shared by every replica); ``init`` says so and digests stay unkeyed.

The key is 32 random bytes from :mod:`secrets`, written hex-encoded to a new file created
``0600`` (``O_EXCL``: an existing key is never overwritten). A store whose audit log
already holds events is never given a new key by ``init``: its chain was hashed without
it and would no longer verify (see "Rotation" in ``docs/erasure.md``).
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from pydantic import SecretStr
from sqlalchemy import func, select

from auditor.config import SECRET_FILE_NAME, sqlite_key_file
from auditor.store.db import Database
from auditor.store.models import AuditEvent
from auditor.store.subject_keys import (
    MASTER_KEY_ENV,
    encryption_disabled,
    key_dir_for,
    master_key_location,
)

__all__ = [
    "KeyOutcome",
    "ensure_audit_key",
    "ensure_master_key",
    "key_file_for",
    "write_key_file",
]


@dataclass(frozen=True)
class KeyOutcome:
    """What :func:`ensure_audit_key` did.

    Attributes:
        status: ``configured`` (a key was given), ``created``, ``existing`` (the key file
            was there already), ``unkeyed-log`` (the log has events hashed without a key:
            none created), ``no-location`` (PostgreSQL without a secrets folder).
        path: the key file, when there is one.
        message: one line for the operator (no key material).
    """

    status: str
    path: Path | None
    message: str


def key_file_for(db: Database) -> Path | None:
    """Where the store's key file lives: the secrets folder, or beside a SQLite file.

    Args:
        db: the store.

    Returns:
        The path, or None when there is no safe default (PostgreSQL, no secrets folder).
    """
    secrets_dir = os.environ.get("MEMAUDIT_SECRETS_DIR")
    if secrets_dir:
        return Path(secrets_dir) / SECRET_FILE_NAME
    return sqlite_key_file(db.url.render_as_string(hide_password=False))


def write_key_file(path: Path) -> str:
    """Create a new key file (0600, never overwriting) and return the key.

    Args:
        path: the file to create.

    Returns:
        The key (hex, 64 characters).

    Raises:
        FileExistsError: the file exists.
    """
    key = secrets.token_hex(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, (key + "\n").encode("ascii"))
        os.fsync(fd)
    finally:
        os.close(fd)
    os.chmod(path, 0o600)
    return key


def ensure_audit_key(db: Database) -> KeyOutcome:
    """Create the audit HMAC key at ``init`` unless one is given (see the module docstring).

    On success the key is also set on ``db.settings``, so the rest of the process uses it.

    Args:
        db: the store, its schema already created.

    Returns:
        What was done.
    """
    if db.settings.audit_hmac_key is not None:
        return KeyOutcome("configured", None, "audit HMAC key: configured")
    path = key_file_for(db)
    if path is None:
        return KeyOutcome(
            "no-location",
            None,
            "audit HMAC key: none (PostgreSQL): set MEMAUDIT_AUDIT_HMAC_KEY or "
            "MEMAUDIT_SECRETS_DIR and run init again; digests are unkeyed until then",
        )
    if path.exists():
        os.chmod(path, 0o600)
        db.settings.audit_hmac_key = SecretStr(path.read_text(encoding="utf-8").strip())
        return KeyOutcome("existing", path, f"audit HMAC key: {path}")
    with db.session() as session:
        events = int(session.scalar(select(func.count()).select_from(AuditEvent)) or 0)
    if events:
        return KeyOutcome(
            "unkeyed-log",
            None,
            f"audit HMAC key: none; the audit log holds {events} events hashed without a key, "
            "so none is created (see docs/erasure.md, Rotation)",
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    key = write_key_file(path)
    db.settings.audit_hmac_key = SecretStr(key)
    return KeyOutcome("created", path, f"audit HMAC key: created {path} (0600); back it up")


def ensure_master_key(db: Database) -> KeyOutcome:
    """Create the master key of encryption at rest at ``init`` unless one is given.

    Same places and rules as the audit HMAC key (``MEMAUDIT_MASTER_KEY``, the secrets
    folder's ``memaudit_master_key``, or ``<database>.master-key`` beside a SQLite store;
    0600, ``O_EXCL``), plus a key folder for the data keys per subject
    (:mod:`auditor.store.subject_keys`). Off with ``MEMAUDIT_ENCRYPTION=off``. On success
    the store's cipher is attached, so the rest of ``init`` (the demo) writes encrypted.

    Args:
        db: the store, its schema already created.

    Returns:
        What was done (``disabled``, ``configured``, ``existing``, ``created``,
        ``no-location``).
    """
    url = db.url.render_as_string(hide_password=False)
    if encryption_disabled():
        return KeyOutcome("disabled", None, "encryption at rest: off (MEMAUDIT_ENCRYPTION=off)")
    folder = key_dir_for(url)
    if folder is None:
        return KeyOutcome(
            "no-location",
            None,
            "encryption at rest: off: a PostgreSQL store needs MEMAUDIT_KEY_DIR (a folder for "
            "the subject keys, outside the database) and a master key; run init again",
        )
    path = master_key_location(url)
    if os.environ.get(MASTER_KEY_ENV):
        status, message = "configured", f"encryption at rest: on (keys in {folder})"
    elif path is not None and path.exists():
        os.chmod(path, 0o600)
        status, message = "existing", f"encryption at rest: on, master key {path}"
    elif path is None:
        return KeyOutcome(
            "no-location",
            None,
            "encryption at rest: off: set MEMAUDIT_MASTER_KEY or MEMAUDIT_SECRETS_DIR "
            "and run init again",
        )
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_key_file(path)
        status = "created"
        message = (
            f"encryption at rest: on, master key created {path} (0600); back it up apart "
            "from the database: without it nothing encrypted can be read"
        )
    db.refresh_keystore()
    from auditor.store.crypto_migrate import count_plain

    clear = sum(count_plain(db).values())
    if clear:
        message += f"; {clear} rows are still in clear: run `memaudit encrypt-store`"
    return KeyOutcome(status, path if status != "configured" else None, message)
