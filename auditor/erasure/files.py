"""Writing files that can hold personal data: owner-only (0600), whatever the umask.

Used for receipts saved with ``memaudit erasure receipt -o`` and meant for every other file
memaudit writes that may hold personal data (``memaudit export -o``). The database, its WAL,
backups, the ledger and the audit key file are created 0600 where they are written
(:mod:`auditor.store.db`, :mod:`auditor.erasure.backup`, :mod:`auditor.erasure.requests`,
:mod:`auditor.erasure.keys`).
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["write_private"]


def write_private(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path``, created or truncated, mode 0600.

    An existing file is truncated and narrowed to 0600 before anything is written.

    Args:
        path: the file.
        text: its new content.

    Raises:
        OSError: the file cannot be written.
    """
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
