"""The connector interface: read a live store, report what it hides, carry actions back.

A connector is read-only against its source except in the write-back methods, which the
sync engine calls only for sources configured with ``write_back = true`` and only for an
action a reviewer (or an erasure) asked for.

Records a connector yields are memaudit's canonical raw records (the jsonl import format:
``auditor.records``) wrapped in :class:`auditor.sources.files.base.SourceItem`, with:

* ``external_id``: the item's id in the source (stable across syncs);
* ``memory_id``: :func:`memory_id_for` (source name + external id), so a re-sync updates
  the same memory and two sources never collide;
* ``source``: ``{"type": <provenance type>, "uri": "<kind>://<source name>/<external id>"}``;
* ``extra``: at least ``source_name``, ``source_kind``, ``external_id`` and
  ``source_status`` (what the source itself says: ``live``, ``deleted``, ``history``,
  ``expired``, ``orphan``...); connectors add what their rules need, e.g.
  ``retained_in`` (``"mem0.history"``), ``orphan_vector`` or ``expired_unswept``.

Text the source still keeps but does not show (mem0's history of deleted memories, raw
chat turns, vectors without an item) is yielded as memories too, with a status that says
so (``deleted`` / ``superseded``) and ``extra.retained_in``: the rule pack's source rules
(``rules/ma-src-*.yaml``) turn them into findings, and erasure knows where they live.
"""

from __future__ import annotations

import abc
import hashlib
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from auditor.config import Settings
from auditor.errors import MemauditError
from auditor.sources.files.base import SourceItem

__all__ = [
    "Connector",
    "ErasureResult",
    "NotSupported",
    "SourceConfig",
    "memory_id_for",
    "valid_source_name",
]

_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")


def valid_source_name(name: str) -> bool:
    """A source name: lower-case letters, digits, ``_`` and ``-``, 1 to 64 characters."""
    return bool(_NAME.match(name))


def memory_id_for(source_name: str, external_id: str) -> str:
    """The memory id of a source's item: stable, and distinct across sources."""
    digest = hashlib.sha256(f"{source_name}\0{external_id}".encode()).hexdigest()[:32]
    return f"src_{source_name[:40]}_{digest}"


class NotSupported(MemauditError):
    """The source kind cannot do this (e.g. write back a status it has no column for)."""


@dataclass(frozen=True)
class SourceConfig:
    """One configured source.

    Attributes:
        name: unique name (see :func:`valid_source_name`).
        kind: a key of :data:`auditor.sources.live.KINDS`.
        options: the connection and mapping (never a secret in clear: a connection URL
            refers to its password as ``${ENV_VAR}`` or ``${secret:name}``, resolved by
            the registry when the connector is opened).
        schedule: the sync schedule (crontab, ``every 15m`` or ``off``).
        write_back: whether quarantine and erasure may be carried into the source.
    """

    name: str
    kind: str
    options: dict[str, Any] = field(default_factory=dict)
    schedule: str = "every 15m"
    write_back: bool = False


@dataclass
class ErasureResult:
    """What erasing a subject in a source did, and what verification found afterwards.

    Attributes:
        counts: rows / entries / files removed, per place (``"mem0.history"``: 3, ...).
        remaining: places where something of the subject was still found (never values).
        notes: what the operator must know (e.g. "compacted the qdrant collection").
        searched: the places the verification searched (tables, columns, files, with
            how: ``"mem0 history database (bytes)"``); never values.
        may_hold: places that may still hold the subject although nothing of it was
            found there, because no method can tell (e.g. text mem0 no longer attributes
            to anyone): ``{"place": ..., "count": ..., "reason": ...}``; never values.
    """

    counts: dict[str, int] = field(default_factory=dict)
    remaining: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    searched: list[str] = field(default_factory=list)
    may_hold: list[dict[str, Any]] = field(default_factory=list)

    def add_may_hold(self, place: str, count: int, reason: str) -> None:
        """Record a place that may still hold the subject (``count`` rows / files / ...)."""
        if count > 0:
            self.may_hold.append({"place": place, "count": int(count), "reason": reason})

    @property
    def verified(self) -> bool:
        """Nothing of the subject was found, and nothing that was not searchable may hold it."""
        return not self.remaining and not self.may_hold

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready (places and counts only)."""
        return {
            "counts": dict(self.counts),
            "remaining": list(self.remaining),
            "notes": list(self.notes),
            "searched": list(self.searched),
            "may_hold": [dict(m) for m in self.may_hold],
            "verified": self.verified,
        }


class Connector(abc.ABC):
    """A live external store.

    Args:
        config: the source's configuration (secrets already resolved by the registry in
            ``options``; never log ``options``).
        settings: memaudit's settings.
    """

    kind: ClassVar[str]
    #: Write-back actions this kind supports: a subset of {"quarantine", "restore", "erase"}.
    supports: ClassVar[frozenset[str]] = frozenset()

    def __init__(self, config: SourceConfig, settings: Settings) -> None:
        self.config = config
        self.settings = settings
        #: memaudit's mirror, set by the sync engine before :meth:`pull`: external id ->
        #: the subject memaudit filed the item under at earlier syncs. A source that
        #: forgets owners (mem0's history after a delete) attributes its rows from it.
        self.known_subjects: dict[str, str] = {}
        #: set by the outbox before :meth:`erase_subject`: the memaudit memory ids
        #: (:func:`memory_id_for`) of the subject's items the erasure just deleted in
        #: memaudit, so the source's rows of them are the subject's whatever it forgot.
        self.subject_memory_ids: frozenset[str] = frozenset()

    @abc.abstractmethod
    def test(self) -> dict[str, Any]:
        """Check the source can be read; return counts (items, subjects...), never data.

        Raises:
            InputError / StoreError: the source is unreachable or not what its kind expects,
                with a message naming the source and the problem.
        """

    @abc.abstractmethod
    def pull(self, cursor: str | None) -> Iterator[SourceItem]:
        """Yield the items to sync (read-only). ``cursor`` is what :meth:`next_cursor`
        returned after the previous pull (None: a full pull)."""

    def next_cursor(self) -> str | None:
        """After :meth:`pull` was consumed: the cursor for the next incremental pull, or
        None when the kind only does full pulls."""
        return None

    def live_ids(self) -> set[str] | None:
        """External ids of every item the source holds now (to notice deletions), or None
        when this kind cannot list them cheaply (then only full pulls detect deletions)."""
        return None

    # -- write-back (only for sources with write_back = true) ---------------------------

    def quarantine(self, external_ids: Sequence[str]) -> None:
        """Take items out of what the source serves to its agent, keeping them recoverable."""
        raise NotSupported(f"source {self.config.name!r} ({self.kind}) cannot quarantine")

    def restore(self, external_ids: Sequence[str]) -> None:
        """Undo :meth:`quarantine`."""
        raise NotSupported(f"source {self.config.name!r} ({self.kind}) cannot restore")

    def erase_subject(self, subject: str, values: Sequence[str] = ()) -> ErasureResult:
        """Delete every copy of a subject's data in the source, compact, then verify.

        Args:
            subject: the subject as memaudit names it; the connector maps it to the
                source's own (mem0 ``user_id``, a LangGraph namespace, a column value)
                with the same mapping it uses when pulling.
            values: identifying values the subject's memories held (searched for in the
                verification; kept in memory only, never logged).
        """
        raise NotSupported(f"source {self.config.name!r} ({self.kind}) cannot erase")

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release connections and files."""
