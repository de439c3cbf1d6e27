"""What every dashboard page shares: the store, the signed-in actor, safe rendering.

Pages never build SQL: they call :mod:`auditor.access` and :mod:`auditor.access_erasure`
with the signed-in :class:`~auditor.accounts.Actor`, and the services decide. The actor
lives in the server-side session under :data:`ACTOR_KEY` (no widget has that key, so the
browser cannot set it); it is re-checked against its account on every run.

Memory text, ids, namespaces and categories come from imported stores and are untrusted:
they are shown with ``st.text``/``st.code``/``st.json``/dataframes (never Markdown), or
escaped with :func:`esc` where a Markdown string is unavoidable (labels, captions).
"""

from __future__ import annotations

import hashlib
import json
import os
import string
import uuid
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import streamlit as st
import structlog

from auditor import access, access_sessions, accounts
from auditor.accounts import Actor
from auditor.config import load_settings
from auditor.errors import AccessDenied, MemauditError
from auditor.logging import configure_logging
from auditor.store.db import Database

__all__ = [
    "ACTOR_KEY",
    "NOTICE_KEY",
    "OFFICER_ROLES",
    "RECEIPT_KEY",
    "USER_ROLES",
    "cached_overview",
    "cached_rule_stats",
    "call",
    "chain_dot",
    "clear_caches",
    "current_actor",
    "esc",
    "idp_logged_in",
    "oidc_providers",
    "oidc_sign_in",
    "page_actor",
    "sign_in",
    "sign_out",
    "store",
    "table",
]

T = TypeVar("T")

ACTOR_KEY = "_memaudit_actor"
#: The last erasure receipt of this browser session: kept across the sign-out an erasure
#: causes, so the person can still download it.
RECEIPT_KEY = "_memaudit_receipt"
#: A one-time message for the sign-in page (why a session ended).
NOTICE_KEY = "_memaudit_notice"
#: An OIDC identity was already mapped (or refused) in this session: do not retry each run.
OIDC_TRIED_KEY = "_memaudit_oidc_tried"
OFFICER_ROLES: tuple[str, ...] = access.OFFICER_ROLES
USER_ROLES: tuple[str, ...] = access.USER_ROLES

log = structlog.get_logger("dashboard")

_MD_SPECIAL = frozenset(string.punctuation)


# -- the store -----------------------------------------------------------------------------


def _env_fingerprint() -> str:
    """Which store and settings this process uses (tests switch stores between apps)."""
    items = sorted((k, v) for k, v in os.environ.items() if k.startswith("MEMAUDIT_"))
    return hashlib.sha256(json.dumps(items).encode("utf-8")).hexdigest()


def _dispose(db: Database) -> None:
    db.dispose()


@st.cache_resource(show_spinner=False, max_entries=8, on_release=_dispose)
def _open_store(fingerprint: str) -> Database:
    settings = load_settings()
    configure_logging(settings.log_level, settings.log_format, digest_key=settings.audit_key())
    db = Database(settings)
    db.require_schema()
    return db


def store_key() -> str:
    """The cache key of the store in use."""
    return _env_fingerprint()


def store() -> Database:
    """The store from the settings (``MEMAUDIT_DATABASE_URL``); stops the page if unusable."""
    try:
        return _open_store(_env_fingerprint())
    except MemauditError as exc:  # the message shows the URL with its password hidden
        st.error(f"The store cannot be opened: {esc(str(exc))}")
        st.stop()


# -- rendering -----------------------------------------------------------------------------


def esc(value: object) -> str:
    """Escape text for a Markdown context (labels, captions): every ASCII punctuation mark
    gets a backslash, so links, images, emphasis, directives and math cannot be injected.
    Newlines become spaces."""
    text = " ".join(str(value).split())
    return "".join("\\" + ch if ch in _MD_SPECIAL else ch for ch in text)


def table(data: Any, key: str, **kwargs: Any) -> None:
    """A read-only table in a container keyed ``key`` (plain-text cells: no Markdown).

    A dataframe without row selection carries no key of its own; the container gives tests
    and screenshots a stable handle.
    """
    with st.container(key=key):
        st.dataframe(data, hide_index=True, **kwargs)


def _dot(value: object) -> str:
    return str(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")[:80]


def chain_dot(chain: Sequence[dict[str, Any]]) -> str:
    """A supersede chain (oldest first) as a Graphviz graph: old -> new, this one bold."""
    lines = [
        "digraph chain {",
        "rankdir=LR;",
        'node [shape=box, style="rounded,filled", fillcolor="#f0f2f6", fontsize=10];',
    ]
    for i, link in enumerate(chain):
        if link.get("hidden"):
            label = "(another subject's memory)"
        else:
            label = (
                f"{_dot(link.get('memory_id'))}\\n{_dot(link.get('status'))} · "
                f"{_dot(link.get('trust_tier'))}"
            )
        extra = ', penwidth=2.5, fillcolor="#ffe8a3"' if link.get("current") else ""
        lines.append(f'n{i} [label="{label}"{extra}];')
    for i in range(len(chain) - 1):
        lines.append(f'n{i} -> n{i + 1} [label="superseded by", fontsize=9];')
    lines.append("}")
    return "\n".join(lines)


def chain_text(chain: Sequence[dict[str, Any]]) -> str:
    """The same chain as one line of plain text (oldest first)."""
    parts = []
    for link in chain:
        if link.get("hidden"):
            parts.append("(another subject's memory)")
            continue
        mark = "*" if link.get("current") else ""
        parts.append(f"{mark}{link.get('memory_id')} [{link.get('status')}]{mark}")
    return "  ->  ".join(parts)


# -- calling services ----------------------------------------------------------------------


def call(fn: Callable[..., T], *args: Any, **kwargs: Any) -> tuple[bool, T | None]:
    """Call a service; show a refusal or error on the page instead of a traceback.

    Returns:
        ``(True, result)``, or ``(False, None)`` after showing the error.
    """
    try:
        return True, fn(*args, **kwargs)
    except AccessDenied as exc:
        st.error(f"Access denied: {esc(str(exc))}", icon=":material/block:")
    except MemauditError as exc:
        st.error(esc(str(exc)), icon=":material/error:")
    except Exception as exc:  # noqa: BLE001 - a page shows an error id, the log has the type
        error_id = uuid.uuid4().hex[:12]
        log.error(
            "dashboard_error",
            error_id=error_id,
            service=getattr(fn, "__name__", "?"),
            error_type=type(exc).__name__,
        )
        st.error(f"Something went wrong (error id {error_id}); it was logged.")
    return False, None


# -- the signed-in actor -------------------------------------------------------------------


def current_actor() -> Actor | None:
    """The signed-in actor, re-checked against its account; None when signed out.

    A session whose account is gone, disabled or changed ends here (recorded when the
    account still exists), and the sign-in page says why.
    """
    actor = st.session_state.get(ACTOR_KEY)
    if actor is None:
        return None
    db = store()
    if isinstance(actor, Actor) and access_sessions.session_valid(db, actor):
        return actor
    if isinstance(actor, Actor):
        access_sessions.record_sign_out(db, actor, "session_ended")
    _reset_session(keep_receipt=True)
    st.session_state[NOTICE_KEY] = (
        "Your session ended: your account was changed, disabled or removed. Sign in again."
    )
    return None


def _reset_session(*, keep_receipt: bool) -> None:
    """Forget everything of the previous identity (widget values, exports, selections)."""
    receipt = st.session_state.get(RECEIPT_KEY) if keep_receipt else None
    for key in list(st.session_state.keys()):
        del st.session_state[key]
    if receipt is not None:
        st.session_state[RECEIPT_KEY] = receipt


def sign_in(actor: Actor) -> None:
    """Start a session for ``actor`` (after :func:`auditor.accounts.authenticate` or OIDC)."""
    _reset_session(keep_receipt=False)
    st.session_state[ACTOR_KEY] = actor
    st.session_state[OIDC_TRIED_KEY] = True


def sign_out(*, notice: str | None = None, record: bool = True) -> None:
    """End the session (recorded as ``auth.signed_out`` while the account exists).

    Args:
        notice: a message for the sign-in page.
        record: write the audit event (not after an erasure: the name must not return).
    """
    actor = st.session_state.get(ACTOR_KEY)
    if record and isinstance(actor, Actor):
        access_sessions.record_sign_out(store(), actor, "signed_out")
    _reset_session(keep_receipt=True)
    st.session_state[OIDC_TRIED_KEY] = True  # do not sign the OIDC identity in again at once
    if notice:
        st.session_state[NOTICE_KEY] = notice
    if isinstance(actor, Actor) and actor.auth_method == "oidc" and idp_logged_in():
        st.logout()


def idp_logged_in() -> bool:
    """Whether an identity is signed in through ``st.login`` (OIDC)."""
    try:
        return bool(st.user.get("is_logged_in"))
    except Exception:  # noqa: BLE001 - no auth configured: nobody is logged in through it
        return False


# -- OIDC (st.login) -----------------------------------------------------------------------


def oidc_providers() -> list[str | None]:
    """The OIDC providers of Streamlit's ``[auth]`` secrets (None: the default one).

    Empty when no ``[auth]`` section is configured: OIDC sign-in is then not offered.
    """
    try:
        auth = st.secrets.get("auth")
    except Exception:  # noqa: BLE001 - no secrets file at all
        return []
    if not auth or not hasattr(auth, "items"):
        return []
    named: list[str | None] = [k for k, v in auth.items() if hasattr(v, "items")]
    if "client_id" in auth:
        return [None, *named]
    return named


def oidc_sign_in(db: Database) -> None:
    """Map an identity that signed in through ``st.login`` to its memaudit account, once.

    The claims come from the ID token Streamlit validated; the mapping
    (:func:`auditor.accounts.actor_from_oidc`) finds a pre-registered account and records
    the sign-in or its refusal. A refusal is shown on the sign-in page.
    """
    if st.session_state.get(ACTOR_KEY) is not None or st.session_state.get(OIDC_TRIED_KEY):
        return
    if not oidc_providers() or not idp_logged_in():
        return
    st.session_state[OIDC_TRIED_KEY] = True
    claims = {k: v for k, v in st.user.to_dict().items() if k not in ("tokens", "is_logged_in")}
    try:
        actor = accounts.actor_from_oidc(db, claims)
    except MemauditError as exc:
        st.session_state[NOTICE_KEY] = str(exc)
        return
    sign_in(actor)


def page_actor(roles: Sequence[str]) -> Actor:
    """The actor for a page that needs one of ``roles``; stops the page otherwise.

    Navigation offers only the pages of the actor's role, and the services check again:
    this is the third line, for a page reached some other way.
    """
    actor = current_actor()
    if actor is None or actor.role not in roles:
        st.error("Access denied: this page is not available to you.", icon=":material/block:")
        st.stop()
    return actor


# -- cached readers (aggregates only; keyed by store and actor) -----------------------------


def _actor_key(actor: Actor) -> tuple[str, str, str | None, str]:
    return (actor.username, actor.role, actor.subject, actor.auth_method)


@st.cache_data(ttl=30, show_spinner=False, max_entries=64)
def _overview(
    key: str, actor_key: tuple[str, str, str | None, str], days: int, _db: Database, _actor: Actor
) -> dict[str, Any]:
    return access.overview(_db, _actor, days=days)


@st.cache_data(ttl=60, show_spinner=False, max_entries=64)
def _rule_stats(
    key: str, actor_key: tuple[str, str, str | None, str], _db: Database, _actor: Actor
) -> list[dict[str, Any]]:
    return access.rule_stats(_db, _actor)


def cached_overview(db: Database, actor: Actor, days: int = 30) -> dict[str, Any]:
    """:func:`auditor.access.overview`, cached for 30 s per store and actor."""
    return _overview(store_key(), _actor_key(actor), days, db, actor)


def cached_rule_stats(db: Database, actor: Actor) -> list[dict[str, Any]]:
    """:func:`auditor.access.rule_stats`, cached for 60 s per store and actor."""
    return _rule_stats(store_key(), _actor_key(actor), db, actor)


def clear_caches() -> None:
    """Drop the cached aggregates (after an action changed them)."""
    _overview.clear()
    _rule_stats.clear()
