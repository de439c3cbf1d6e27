"""Temporary copies of the store (backup and restore): one known place, 0600, never left.

A backup is written to a temporary file beside its target and renamed at the end; a
restore materialises the backup into a scratch SQLite database first. Both are full
copies of personal data. A process killed half-way (``kill -9``, a full disk, a reboot)
must not leave them lying around where no erasure can see them, so:

* every temporary copy is **registered** before it is created: a small marker file (JSON:
  the path, the process id, the host, the time; no personal data) in the *scratch folder*
  of the store, :func:`scratch_dir`;
* restore scratch databases live **inside** the scratch folder (created ``0700``, files
  ``0600``); backup temporaries live beside their target (a rename must not cross file
  systems) and are registered there;
* :func:`sweep` removes every registered copy whose process is gone (and any unregistered
  file in the folder older than a run), and is called at the start of every backup,
  restore and erasure verification;
* :func:`leftovers` lists what is still there (a copy a *running* backup or restore is
  writing): erasure verification searches those files byte by byte
  (:func:`auditor.erasure.storage.verify_erasure`).

The scratch folder: beside a SQLite store, ``<database>.scratch/``; otherwise beside the
erasure ledger (``<ledger>.scratch/``); otherwise ``<tmp>/memaudit-scratch-<uid>/``.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import structlog

from auditor.processes import alive_here, host_name, owner_record
from auditor.store.db import Database

__all__ = ["leftovers", "register", "scratch_dir", "sweep"]

log = structlog.get_logger(__name__)

_MARKER_SUFFIX = ".copy.json"


def scratch_dir(db: Database) -> Path:
    """The store's scratch folder (not created here).

    Args:
        db: the store.

    Returns:
        The folder where temporary copies are registered (and restore scratch lives).
    """
    database = db.url.database
    if db.dialect == "sqlite" and database and database != ":memory:":
        path = Path(database).expanduser().resolve()
        return path.with_name(f"{path.name}.scratch")
    if db.settings.erasure_ledger_path is not None:
        ledger = Path(db.settings.erasure_ledger_path).expanduser().resolve()
        return ledger.with_name(f"{ledger.name}.scratch")
    return Path(tempfile.gettempdir()) / f"memaudit-scratch-{os.getuid()}"


def _ensure(folder: Path) -> Path:
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    with contextlib.suppress(OSError):
        folder.chmod(0o700)
    return folder


def _markers(folder: Path) -> Iterator[tuple[Path, dict[str, object]]]:
    if not folder.is_dir():
        return
    for marker in sorted(folder.glob(f"*{_MARKER_SUFFIX}")):
        try:
            data = json.loads(marker.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = {}
        yield marker, data if isinstance(data, dict) else {}


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        for child in sorted(path.rglob("*"), reverse=True):
            with contextlib.suppress(OSError):
                child.rmdir() if child.is_dir() and not child.is_symlink() else child.unlink()
        with contextlib.suppress(OSError):
            path.rmdir()
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


@contextlib.contextmanager
def register(db: Database, path: Path, *, purpose: str) -> Iterator[Path]:
    """Register a temporary copy for as long as the block runs; remove it afterwards.

    The marker is written (``0600``, fsynced) before the caller creates ``path``, so a
    kill at any point leaves a marker that the next :func:`sweep` acts on.

    Args:
        db: the store the copy is made from or for.
        path: the temporary file or folder the caller will create.
        purpose: ``backup`` or ``restore`` (recorded in the marker).

    Yields:
        ``path``.
    """
    folder = _ensure(scratch_dir(db))
    marker = folder / f"{purpose}-{uuid.uuid4().hex[:12]}{_MARKER_SUFFIX}"
    body = json.dumps(
        {
            "path": str(Path(path).resolve()),
            **owner_record(),
            "purpose": purpose,
            "created": time.time(),
        }
    ).encode("utf-8")
    fd = os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, body)
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        yield path
    finally:
        _remove(Path(path))
        with contextlib.suppress(FileNotFoundError):
            marker.unlink()


def sweep(db: Database) -> list[str]:
    """Remove the temporary copies of processes that are gone (killed backups, restores).

    Args:
        db: the store.

    Returns:
        What was removed: the purpose and file name of each copy (no personal data).
    """
    folder = scratch_dir(db)
    removed: list[str] = []
    registered: set[Path] = set()
    for marker, data in _markers(folder):
        target = Path(str(data.get("path", "")))
        registered.add(target)
        pid, host = data.get("pid"), str(data.get("host", ""))
        # another machine's process cannot be checked from here: its copy is kept
        if isinstance(pid, int) and (
            host[:200] != host_name() or alive_here(pid, str(data.get("started") or ""))
        ):
            continue
        if str(target) and target.exists():
            _remove(target)
            removed.append(f"{data.get('purpose', 'copy')} {target.name}")
        with contextlib.suppress(FileNotFoundError):
            marker.unlink()
    if folder.is_dir():  # unregistered leftovers (a marker lost with its disk write)
        for child in folder.iterdir():
            if child.name.endswith(_MARKER_SUFFIX) or child.resolve() in registered:
                continue
            _remove(child)
            removed.append(f"unregistered {child.name}")
    if removed:
        log.warning("scratch_copies_removed", count=len(removed))
    return removed


def leftovers(db: Database) -> list[Path]:
    """Temporary copies still present after a sweep (a backup or restore is running).

    Args:
        db: the store.

    Returns:
        Files to search (a folder's files are listed one by one).
    """
    out: list[Path] = []
    for _marker, data in _markers(scratch_dir(db)):
        target = Path(str(data.get("path", "")))
        if target.is_file():
            out.append(target)
        elif target.is_dir():
            out.extend(p for p in sorted(target.rglob("*")) if p.is_file())
    return out
