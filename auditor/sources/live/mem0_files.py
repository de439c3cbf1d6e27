"""mem0's SQLite files, read in place: the connector's statements, read-only connections
read in pages, and qdrant's pickled points read without running their code.

A local qdrant path is held by one client at a time (the application's), so the mem0
connector (:mod:`auditor.sources.live.mem0`, :mod:`auditor.sources.live.mem0_store`) reads
qdrant's own ``storage.sqlite`` files (``_STORAGE``) and mem0's history database itself:

* :func:`_ro_connect`: a read-only connection (``mode=ro``, ``query_only``) that never
  creates, writes or rolls back the file; :func:`_paged`: rows in rowid order, a page of
  ``_PAGE`` rows per short read transaction, so the application's writers are never
  blocked for long; :func:`_has_table`;
* :func:`_unpickle`: a qdrant point from its pickled bytes (at most ``_MAX_BLOB``) through
  :class:`_PointUnpickler`, which maps qdrant's point models to a stand-in that keeps their
  state and refuses every other global (the bytes are the source's, not trusted);
* the statements: ``_HISTORY_SQL``, ``_MESSAGES_SQL``, ``_QMESSAGES_SQL`` and ``_POINTS_SQL``
  read; ``_QMESSAGES_DDL`` and ``_MOVE_SQL`` move a chat turn into quarantine and back;
  ``_PURGE_SQL`` selects and deletes the chat turns of an erasure. ``_SQLITE_TIMEOUT`` is
  how long a writing connection waits for the application's lock.

The names keep their leading underscore: they are the connector's internals, not an
interface of the package.
"""

from __future__ import annotations

import io
import pickle
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = [
    "_HISTORY_SQL",
    "_MAX_BLOB",
    "_MESSAGES_SQL",
    "_MOVE_SQL",
    "_POINTS_SQL",
    "_PURGE_SQL",
    "_QMESSAGES_DDL",
    "_QMESSAGES_SQL",
    "_SQLITE_TIMEOUT",
    "_STORAGE",
    "_has_table",
    "_paged",
    "_ro_connect",
    "_unpickle",
]

_PAGE = 500
_MAX_BLOB = 16 * 1024 * 1024
_STORAGE = "storage.sqlite"
_SQLITE_TIMEOUT = 30.0

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
