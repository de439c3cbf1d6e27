"""The interface every source adapter implements.

A source reads an external memory store and yields :class:`SourceItem` objects: either a raw
canonical record (a mapping in the import format of DESIGN.md, validated later by
:func:`auditor.records.parse_record`) or an error for one unreadable item, always with its
location. Problems with the whole source (file missing, not a zip) raise
:class:`~auditor.errors.InputError` from :meth:`Source.open` or :meth:`Source.items`.

Sources never touch the database; :mod:`auditor.sources.importer` writes what they yield.
"""

from __future__ import annotations

import abc
import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from auditor.errors import InputError

if TYPE_CHECKING:
    from auditor.config import Settings

__all__ = ["Source", "SourceItem", "file_sha256"]


@dataclass(frozen=True)
class SourceItem:
    """One item read from a source.

    Attributes:
        location: where it is, e.g. ``"line 12"``, ``"entry notes/a.md"``, ``"key 'lang'"``.
        raw: the canonical raw record, or None when the item could not be read.
        error: why the item could not be read (never its content), or None.
        consumed: progress units (bytes) consumed since the previous item.
        external_id: the item's id in the source store, when it differs from memory_id.
    """

    location: str
    raw: dict[str, Any] | None = None
    error: str | None = None
    consumed: int = 0
    external_id: str | None = None


def file_sha256(path: Path, chunk: int = 1 << 20) -> str:
    """sha256 (hex) of a file, read in chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(chunk):
            digest.update(block)
    return digest.hexdigest()


class Source(abc.ABC):
    """A readable memory store.

    Args:
        path: the file or folder.
        settings: limits (record size, zip limits).
        subject: the subject for sources whose items do not name one (kv, state, Memoryfield).
        namespace: the namespace to record (defaults per source).
    """

    format: ClassVar[str]

    def __init__(
        self,
        path: Path,
        settings: Settings,
        *,
        subject: str | None = None,
        namespace: str | None = None,
    ) -> None:
        self.path = Path(path)
        self.settings = settings
        self.subject = subject
        self.namespace = namespace
        self.sha256: str | None = None
        if not self.path.exists():
            raise InputError(f"{self.path}: no such file or folder")

    @property
    def location(self) -> str:
        """A printable name of the source (its path)."""
        return str(self.path)

    @property
    def total(self) -> int | None:
        """Total progress units (bytes) when known, for a progress bar."""
        try:
            return self.path.stat().st_size if self.path.is_file() else None
        except OSError:
            return None

    @abc.abstractmethod
    def items(self) -> Iterator[SourceItem]:
        """Yield every item of the source, in order, in bounded memory."""

    def require_subject(self) -> str:
        """The ``--subject`` given for sources that need one.

        Raises:
            InputError: none was given.
        """
        if not self.subject:
            raise InputError(
                f"{self.path}: the {self.format} format does not name whom the memories are "
                "about; pass --subject user:<id>"
            )
        return self.subject
