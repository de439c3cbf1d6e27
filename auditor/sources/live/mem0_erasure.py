"""The mem0 connector's erasure: ``erase_subject`` and its steps.

:class:`_Mem0Erasure` is the layer of :class:`~auditor.sources.live.mem0.Mem0Connector` that
erases a subject, on the store :class:`~auditor.sources.live.mem0_store._Mem0Store` reads
(what an erasure deletes: the docstring of :mod:`auditor.sources.live.mem0`, and
docs/sources.md, "mem0"):

* :meth:`~_Mem0Erasure._target`: the mem0 entity key and id a memaudit subject maps to;
* :meth:`~_Mem0Erasure.erase_subject`: the subject's memory ids (its owners' memories,
  memaudit's mirror, unattributed text that holds one of its values or names its id), its
  points deleted through mem0's API, then its rows of the history table and its chat turns
  (:meth:`~_Mem0Erasure._purge_history`) and of memaudit's attribution ledger
  (:meth:`~_Mem0Erasure._purge_ledger`); what nobody owns is reported in ``may_hold``
  (:meth:`~_Mem0Erasure._may_hold`);
* :meth:`~_Mem0Erasure._compact`: ``VACUUM`` of every SQLite file of the store;
  :meth:`~_Mem0Erasure._verify`: every byte of every file searched again
  (:meth:`~_Mem0Erasure._scan_roots`), and the owner fields for the subject's id.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from contextlib import closing
from pathlib import Path
from typing import Any

import structlog

from auditor.sources.live.base import ErasureResult, memory_id_for
from auditor.sources.live.mem0_files import _PURGE_SQL, _SQLITE_TIMEOUT, _STORAGE, _has_table
from auditor.sources.live.mem0_owners import names_subject
from auditor.sources.live.mem0_store import _Mem0Store
from auditor.sources.live.mem0_values import (
    _ENTITIES_SUFFIX,
    HISTORY,
    MESSAGES,
    QUARANTINE_SUFFIX,
    QUARANTINED_MESSAGES,
    _Owner,
    _parse_scope,
    _Snapshot,
    _text,
)
from auditor.store.residue import Matcher, search_file

__all__ = ["_Mem0Erasure"]

log = structlog.get_logger(__name__)


class _Mem0Erasure(_Mem0Store):
    """The erasure of a mem0 store (see the module docstring); the base of
    :class:`~auditor.sources.live.mem0.Mem0Connector`."""

    def _target(self, subject: str) -> tuple[str, str] | None:
        """(mem0 entity key, id) a memaudit subject maps to; ("", "") for the unattributed."""
        if subject == self.unattributed:
            return "", ""
        for key, prefix in (
            ("user_id", self.subject_prefix),
            ("agent_id", self.agent_prefix),
            ("run_id", self.run_prefix),
        ):
            if prefix and subject.startswith(prefix) and len(subject) > len(prefix):
                return key, subject[len(prefix) :]
        return None

    def erase_subject(self, subject: str, values: Sequence[str] = ()) -> ErasureResult:
        """Delete every copy of the subject in mem0, compact, then search every file again.

        The application must not hold a local qdrant path meanwhile (``StoreError`` before
        anything is changed): docs/sources.md, "mem0: running applications".
        """
        result = ErasureResult()
        target = self._target(subject)
        min_chars = self.settings.erasure_min_value_chars
        needles = [v for v in dict.fromkeys(values) if v and len(v.strip()) >= min_chars]
        matcher = Matcher(needles)
        if target is None:
            result.notes.append(
                "the subject is not of this source's form; only its values were searched"
            )
            key, ident = "", None
        else:
            key, ident = target
        snap = self._snapshot()
        owners = self._owners(snap)

        def mine(owner: _Owner | None) -> bool:
            # the pull's own mapping: a memory of user u and agent a is user:u's only
            return ident is not None and self._subject(owner) == subject

        memory_ids = self._subject_memory_ids(snap, owners, mine, key, ident, matcher, result)

        # 1. the vector store, through mem0's API (needs a local path free): only when the
        #    snapshot shows something of the subject there, so an erasure that only has
        #    history rows and chat turns to purge works while the application runs
        self._erase_points(snap, memory_ids, mine, key, ident, matcher, result)

        # 2. mem0's SQLite history database
        hist_rows, msg_rows, unattributed_rows = self._purge_history(
            memory_ids,
            subject if ident is not None else None,
            matcher,
            ident if key == "user_id" else None,
        )
        result.counts["mem0.history"] = hist_rows
        result.counts["mem0.messages"] = msg_rows
        if unattributed_rows:
            result.counts["mem0.unattributed_matched_values"] = unattributed_rows
        # 3. memaudit's attribution ledger
        result.counts["attribution_ledger"] = self._purge_ledger(memory_ids)
        if subject != self.unattributed:
            self._may_hold(
                snap, owners, memory_ids, matcher, ident if key == "user_id" else None, result
            )
        # 4. compaction
        result.notes.extend(self._compact())
        # 5. verification
        result.remaining.extend(
            self._verify(subject if ident is not None else None, ident, matcher, result)
        )
        log.info(
            "mem0_erased",
            source=self.config.name,
            counts=result.counts,
            verified=result.verified,
            remaining_places=len(result.remaining),
        )
        return result

    def _subject_memory_ids(
        self,
        snap: _Snapshot,
        owners: dict[str, _Owner],
        mine: Callable[[_Owner | None], bool],
        key: str,
        ident: str | None,
        matcher: Matcher,
        result: ErasureResult,
    ) -> set[str]:
        """The subject's mem0 memory ids (:meth:`erase_subject`): its owners' memories, and
        the unattributed ones that hold one of its values, that memaudit's mirror gives it
        or that name its id."""
        everything = set(owners) | set(snap.history) | set(snap.points) | set(snap.quarantined)
        memory_ids = {
            mid
            for mid in everything
            if mine(
                owners.get(mid)
                or _Owner.of(snap.points.get(mid) or snap.quarantined.get(mid) or {})
            )
        }
        # unattributed text that holds one of the subject's values is the subject's too
        value_ids = {
            mid
            for mid, rows in snap.history.items()
            if mid not in owners
            and matcher
            and any(matcher.search(t) for r in rows for t in (r.old, r.new) if t)
        }
        # memaudit's mirror: the subject's memories the erasure just deleted in memaudit
        name = self.config.name
        mirror_ids = (
            {
                mid
                for mid in snap.history
                if mid not in owners and memory_id_for(name, mid) in self.subject_memory_ids
            }
            if ident is not None
            else set()
        )
        # unattributed text that names the subject's own id as a word ("Carol's ...")
        named_ids = (
            {
                mid
                for mid, rows in snap.history.items()
                if mid not in owners
                and any(names_subject(t, ident) for r in rows for t in (r.old, r.new))
            }
            if key == "user_id"
            else set()
        )
        memory_ids |= value_ids | mirror_ids | named_ids
        if mirror_ids - value_ids:
            result.counts["mem0.attributed_by_memaudit"] = len(mirror_ids - value_ids)
        if named_ids - value_ids - mirror_ids:
            result.counts["mem0.unattributed_named_subject"] = len(
                named_ids - value_ids - mirror_ids
            )
        return memory_ids

    def _erase_points(
        self,
        snap: _Snapshot,
        memory_ids: set[str],
        mine: Callable[[_Owner | None], bool],
        key: str,
        ident: str | None,
        matcher: Matcher,
        result: ErasureResult,
    ) -> None:
        """Step 1 of :meth:`erase_subject`: the subject's points, in mem0's collection and in
        the quarantine and entity collections, deleted through mem0's API."""

        def side_hit(pid: str, payload: dict[str, Any]) -> bool:
            if pid in memory_ids or (key != "" and mine(_Owner.of(payload))):
                return True
            linked = payload.get("linked_memory_ids")
            if isinstance(linked, list) and linked and all(m in memory_ids for m in linked):
                return True
            return bool(matcher) and matcher.search(_text(payload.get("data")) or "")

        live = sorted(pid for pid in snap.points if pid in memory_ids)
        sides = {
            (self.collection + QUARANTINE_SUFFIX, "mem0.quarantine"): sorted(
                pid for pid, p in snap.quarantined.items() if side_hit(pid, p)
            ),
            (self.collection + _ENTITIES_SUFFIX, "mem0.entities"): sorted(
                pid for pid, p in snap.entities.items() if side_hit(pid, p)
            ),
        }
        result.counts["mem0.memories"] = len(live)
        for (_collection, label), doomed in sides.items():
            result.counts[label] = len(doomed)
        if live or any(sides.values()):
            memory = self.memory()
            try:
                if key == "user_id" and ident is not None:
                    memory.delete_all(user_id=ident)  # and whatever came since the snapshot
                for pid in live:
                    if memory.vector_store.get(vector_id=pid) is not None:
                        memory.delete(pid)
                for (collection, _label), doomed in sides.items():
                    if doomed and self._collection_exists(memory, collection):
                        store = self._side_store(memory, collection)
                        for pid in doomed:
                            store.delete(vector_id=pid)
            finally:
                self._close_memory()
        else:
            result.notes.append("nothing of the subject in the vector store: mem0's API not used")

    def _may_hold(
        self,
        snap: _Snapshot,
        owners: dict[str, _Owner],
        purged: set[str],
        matcher: Matcher,
        ident: str | None,
        result: ErasureResult,
    ) -> None:
        """What nobody owns and nothing tied to the subject: it may be the subject's."""
        searched = f"searched for {len(matcher.needles)} of the subject's values" + (
            " and its id as a word" if ident and names_subject(ident, ident) else ""
        )
        left = [mid for mid in snap.history if mid not in owners and mid not in purged]
        result.add_may_hold(
            HISTORY,
            sum(len(snap.history[mid]) for mid in left),
            f"history rows of {len(left)} memories mem0 deleted before memaudit saw their "
            f"owner: no owner can be found; {searched}, none found",
        )
        turns = sum(
            1
            for m in snap.messages
            if not m.scope.get("user_id")
            and not (matcher and matcher.search(m.content or ""))
            and not names_subject(m.content, ident)
        )
        result.add_may_hold(
            MESSAGES,
            turns,
            f"chat turns of session scopes without a user_id: no owner can be found; "
            f"{searched}, none found",
        )

    def _purge_history(
        self,
        memory_ids: set[str],
        subject: str | None,
        matcher: Matcher,
        ident: str | None = None,
    ) -> tuple[int, int, int]:
        hist = msgs = unattributed = 0
        with closing(self._write_history_db()) as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                if _has_table(conn, "history"):
                    for mid in sorted(memory_ids):
                        hist += conn.execute(
                            "DELETE FROM history WHERE memory_id = ?", (mid,)
                        ).rowcount
                for table in ("messages", QUARANTINED_MESSAGES):
                    if not _has_table(conn, table):
                        continue
                    doomed: list[str] = []
                    select_sql, delete_sql = _PURGE_SQL[table]
                    for rid, scope, content in conn.execute(select_sql).fetchall():
                        parsed = _parse_scope(scope)
                        owner = _Owner(
                            parsed.get("user_id"), parsed.get("agent_id"), parsed.get("run_id")
                        )
                        if subject is not None and self._subject(owner) == subject:
                            doomed.append(rid)
                        elif not parsed.get("user_id") and (
                            (matcher and matcher.search(_text(content) or ""))
                            or names_subject(_text(content), ident)
                        ):
                            doomed.append(rid)
                            unattributed += 1
                    for rid in doomed:
                        msgs += conn.execute(delete_sql, (rid,)).rowcount
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        return hist, msgs, unattributed

    def _purge_ledger(self, memory_ids: set[str]) -> int:
        if self.attribution_path is None or not self.attribution_path.is_file():
            return 0
        conn = self._ledger_connect()
        if conn is None:
            return 0
        removed = 0
        with closing(conn):
            with conn:
                for mid in sorted(memory_ids):
                    removed += conn.execute(
                        "DELETE FROM attribution WHERE memory_id = ?", (mid,)
                    ).rowcount
            conn.execute("VACUUM")
        return removed

    def _sqlite_files(self) -> list[tuple[str, Path]]:
        files = [("history database", self.history_db)]
        if self.vector_path is not None and (self.vector_path / "collection").is_dir():
            for storage in sorted((self.vector_path / "collection").glob(f"*/{_STORAGE}")):
                files.append((f"qdrant collection {storage.parent.name}", storage))
        return files

    def _compact(self) -> list[str]:
        """VACUUM every SQLite file of the store (free pages keep deleted text otherwise)."""
        notes: list[str] = []
        for label, path in self._sqlite_files():
            if not path.is_file():
                continue
            try:
                with closing(
                    sqlite3.connect(str(path), timeout=_SQLITE_TIMEOUT, isolation_level=None)
                ) as conn:
                    mode = str(conn.execute("PRAGMA journal_mode").fetchone()[0])
                    conn.execute("VACUUM")
                    if mode.lower() == "wal":
                        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                wal = ", WAL truncated" if mode.lower() == "wal" else ""
                notes.append(f"compacted the {label} (VACUUM{wal})")
            except sqlite3.Error as exc:
                notes.append(f"could not compact the {label} ({exc.__class__.__name__})")
        if self.vector_path is None:
            notes.append(
                "the vector store is not a local qdrant path: its files were not compacted or "
                "searched here (a server compacts deleted points in its own time)"
            )
        return notes

    def _scan_roots(self) -> list[tuple[str, Path]]:
        roots: list[tuple[str, Path]] = []
        for suffix in ("", "-wal", "-shm", "-journal"):
            roots.append((f"history database{suffix}", Path(f"{self.history_db}{suffix}")))
        if self.vector_path is not None:
            roots.append(("qdrant path", self.vector_path))
        for i, path in enumerate(self.scan_paths):
            roots.append((f"scan path {i + 1}", path))
        if self.attribution_path is not None:
            roots.append(("attribution ledger", self.attribution_path))
        return roots

    def _verify(
        self, subject: str | None, ident: str | None, matcher: Matcher, result: ErasureResult
    ) -> list[str]:
        """Places where something of the subject is still found (never the values)."""
        remaining: list[str] = []
        min_chars = self.settings.erasure_min_value_chars
        # the subject's own id, in every byte, when it is long enough not to match by chance
        id_matcher = Matcher([ident]) if ident and len(ident) >= min_chars else Matcher([])
        searched = 0
        for label, root in self._scan_roots():
            if not root.exists():
                continue
            files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
            result.searched.append(f"{label} ({len(files)} file(s), every byte)")
            for path in files:
                where = label if path == root else f"{label}: {path.relative_to(root)}"
                searched += 1
                try:
                    found = search_file(path, matcher) + search_file(path, id_matcher)
                except OSError as exc:
                    remaining.append(f"{where}: unreadable ({exc.__class__.__name__})")
                    continue
                if found:
                    remaining.append(f"{where}: {found} match(es)")
        # the id, logically: points, chat-turn scopes, the ledger (short ids included)
        if subject is not None:
            result.searched.append(
                "mem0 points, quarantine and entity collections, chat-turn scopes and the "
                "attribution ledger (owner fields, for the subject's id)"
            )
            snap = self._snapshot()
            for label, points in (
                ("mem0 vector store", snap.points),
                ("quarantine collection", snap.quarantined),
                ("entity collection", snap.entities),
            ):
                n = sum(1 for p in points.values() if self._subject(_Owner.of(p)) == subject)
                if n:
                    remaining.append(f"{label}: {n} point(s) of the subject")
            n = sum(
                1
                for m in snap.messages
                if self._subject(
                    _Owner(m.scope.get("user_id"), m.scope.get("agent_id"), m.scope.get("run_id"))
                )
                == subject
            )
            if n:
                remaining.append(f"mem0 messages: {n} chat turn(s) of the subject")
            n = sum(1 for o in self._ledger_read().values() if self._subject(o) == subject)
            if n:
                remaining.append(f"attribution ledger: {n} row(s) of the subject")
        result.notes.append(
            f"searched {searched} file(s) for {len(matcher.needles)} value(s)"
            + (" and the subject's id" if id_matcher else "")
        )
        return remaining
