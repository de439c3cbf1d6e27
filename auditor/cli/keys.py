"""The ``memaudit keys`` commands and ``memaudit encrypt-store``.

Registered by :mod:`auditor.cli.main`.

``keys status`` says whether encryption at rest is on, where the subject keys live and how
many rows are still in clear; ``keys migrate`` (alias ``encrypt-store``) seals an existing
plaintext store in batches, resumable, then vacuums; ``keys rotate-master`` re-wraps every
subject key under a new master key. No output carries key material or personal data.
"""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path
from typing import Any

import click

from auditor.cli.context import Ctx
from auditor.errors import ConfigError, InputError

__all__ = ["register_keys_commands"]


def _status(db: Any) -> dict[str, Any]:
    from auditor.store.crypto_migrate import count_plain
    from auditor.store.subject_keys import LocalKeyStore, encryption_disabled

    keystore = db.keystore
    data: dict[str, Any] = {
        "encryption": "on" if keystore is not None else "off",
        "disabled_by_env": encryption_disabled(),
        "keys": keystore.describe() if keystore is not None else None,
        "subject_keys": len(keystore.key_files()) if isinstance(keystore, LocalKeyStore) else None,
        "rows_in_clear": count_plain(db),
    }
    return data


def _migrate(db: Any, batch: int, no_vacuum: bool, as_json: bool) -> None:
    from auditor.store.crypto_migrate import migrate_store

    def progress(table: str, done: int, total: int) -> None:
        if not as_json:
            click.echo(f"{table}: {done}/{total} sealed", err=True)

    report = migrate_store(db, batch=batch, do_vacuum=not no_vacuum, progress=progress)
    data = {"sealed": report.sealed, "vacuumed": report.vacuumed, "remaining": report.remaining}
    if as_json:
        click.echo(json.dumps(data, indent=2, sort_keys=True))
        return
    sealed = ", ".join(f"{k} {v}" for k, v in report.sealed.items())
    left = sum(report.remaining.values())
    click.echo(
        f"sealed: {sealed}; vacuumed: {'yes' if report.vacuumed else 'no'}; "
        f"rows still in clear: {left}"
    )


_batch = click.option(
    "--batch", default=500, show_default=True, help="Rows sealed per transaction."
)
_no_vacuum = click.option(
    "--no-vacuum",
    is_flag=True,
    help="Skip the final VACUUM (the old clear text then stays in free pages and the WAL).",
)
_json = click.option("--json", "as_json", is_flag=True, help="Print a JSON report.")


@click.group("keys")
def keys_group() -> None:
    """Encryption at rest: subject keys (crypto-shredding) and the master key.

    Memory text, source URIs and consent sources are sealed with AES-GCM under a data
    key per subject, wrapped by the master key (MEMAUDIT_MASTER_KEY, the secret file
    memaudit_master_key, or <database>.master-key beside a SQLite store). Erasing a
    subject destroys its key. See docs/erasure.md.
    """


@keys_group.command("status")
@_json
@click.pass_obj
def keys_status(c: Ctx, as_json: bool) -> None:
    """Whether encryption is on, where keys live, rows still in clear."""
    data = _status(c.db())
    if as_json:
        click.echo(json.dumps(data, indent=2, sort_keys=True))
        return
    click.echo(f"encryption at rest: {data['encryption']}")
    if data["keys"]:
        click.echo(f"keys: {data['keys']}; subject keys: {data['subject_keys']}")
    for table, n in data["rows_in_clear"].items():
        click.echo(f"{table}: {n} rows in clear")


@keys_group.command("migrate")
@_batch
@_no_vacuum
@_json
@click.pass_obj
def keys_migrate(c: Ctx, batch: int, no_vacuum: bool, as_json: bool) -> None:
    """Encrypt a plaintext store in batches (resumable, idempotent), then VACUUM.

    Stop it at any time and run it again: it carries on with the rows still in clear.
    """
    _migrate(c.db(), batch, no_vacuum, as_json)


@click.command("encrypt-store")
@_batch
@_no_vacuum
@_json
@click.pass_obj
def encrypt_store(c: Ctx, batch: int, no_vacuum: bool, as_json: bool) -> None:
    """Encrypt an existing plaintext store (same as `memaudit keys migrate`)."""
    _migrate(c.db(), batch, no_vacuum, as_json)


@keys_group.command("rotate-master")
@click.option(
    "--new-key-file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="File holding the new master key (64 hex characters). Default: generate one.",
)
@click.pass_obj
def rotate_master(c: Ctx, new_key_file: Path | None) -> None:
    """Re-wrap every subject key under a new master key (stop memaudit first).

    A master key read from a file (beside the SQLite store or in MEMAUDIT_SECRETS_DIR)
    is replaced there; one given in MEMAUDIT_MASTER_KEY must then be changed by you
    (the new key is written to --new-key-file, or to a new 0600 file it names).
    """
    from auditor.erasure.keys import write_key_file
    from auditor.store.subject_keys import (
        MASTER_KEY_ENV,
        LocalKeyStore,
        master_key_location,
        parse_master_key,
    )

    db = c.db()
    keystore = db.keystore
    if not isinstance(keystore, LocalKeyStore):
        raise ConfigError("encryption at rest is off for this store: nothing to rotate")
    url = db.url.render_as_string(hide_password=False)
    generated = None
    if new_key_file is not None and new_key_file.exists():
        try:
            raw = new_key_file.read_text(encoding="ascii")
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"--new-key-file {new_key_file}: cannot read: {exc}") from None
        new = parse_master_key(raw, str(new_key_file))
    else:
        generated = new_key_file or Path(f"{master_key_location(url) or 'memaudit'}.new")
        new = bytes.fromhex(write_key_file(generated))
        click.echo(f"new master key written to {generated} (0600)", err=True)
    count = keystore.rewrap(new)
    click.echo(f"re-wrapped {count} key files", err=True)
    path = master_key_location(url)
    if not os.environ.get(MASTER_KEY_ENV) and path is not None and path.is_file():
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, (new.hex() + "\n").encode("ascii"))
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
        click.echo(f"master key replaced in {path}", err=True)
        if generated is not None and new_key_file is None:
            generated.unlink()  # the key is in place: no second copy left lying around
    else:
        click.echo(
            "now set MEMAUDIT_MASTER_KEY to the new key everywhere memaudit runs",
            err=True,
        )


def register_keys_commands(cli: click.Group) -> None:
    """Add the ``keys`` group and ``encrypt-store`` to the ``memaudit`` group."""
    cli.add_command(keys_group)
    cli.add_command(encrypt_store)
