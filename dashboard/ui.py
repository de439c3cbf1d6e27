"""What every dashboard page shares: the store, the signed-in actor, safe rendering.

Pages never build SQL: they call the access-checked services (:mod:`auditor.access.officer`,
:mod:`auditor.access.officer_findings`, :mod:`auditor.access.officer_actions`,
:mod:`auditor.access.erasure`, ...) with the signed-in
:class:`~auditor.access.accounts.Actor`, and the services decide. The actor lives in the
server-side session under :data:`ACTOR_KEY` (no widget has that key, so the browser cannot
set it); it is re-checked against its account on every run.

Memory text, ids, namespaces and categories come from imported stores and are untrusted:
they are shown with ``st.text``/``st.code``/``st.json``/dataframes (never Markdown) after
:func:`plain` made bidi overrides and control characters visible, or escaped with
:func:`esc` where a Markdown string is unavoidable (labels, captions): every punctuation
mark escaped, and the characters GFM autolinks start from written as character references.

Sessions survive a reload: sign-in issues a signed, expiring token
(:mod:`auditor.access.sessions`) kept in the ``memaudit_session`` cookie (``SameSite=Strict``,
``Max-Age``, ``Secure`` over HTTPS); a new browser connection without a server-side actor
restores it from the cookie, and sign-out revokes the token and clears the cookie.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import string
import uuid
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import streamlit as st
import structlog

from auditor.access import guard as access_guard
from auditor.access import officer as access
from auditor.access import officer_findings as access_findings
from auditor.access import sessions as access_sessions
from auditor.access import signin
from auditor.access.accounts import Actor
from auditor.config import load_settings
from auditor.errors import AccessDenied, MemauditError
from auditor.logging import configure_logging
from auditor.rulepack.pack import RuleError, RulePack, load_pack
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
    "hotkeys",
    "plain",
    "rule_pack",
    "widget_id",
    "session_cookie_ops",
    "idp_logged_in",
    "oidc_providers",
    "oidc_sign_in",
    "page_actor",
    "sign_in",
    "sign_out",
    "store",
    "table",
    "view_log",
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
OFFICER_ROLES: tuple[str, ...] = access_guard.OFFICER_ROLES
USER_ROLES: tuple[str, ...] = access_guard.USER_ROLES

log = structlog.get_logger("dashboard")

_MD_SPECIAL = frozenset(string.punctuation)
#: Characters GFM's autolink literals start from or need (``www.``, ``http://``, ``a@b.c``):
#: written as character references, which Markdown decodes after links are recognised.
_MD_ENTITY = {".": "&#46;", ":": "&#58;", "@": "&#64;"}
#: Bidi controls (they reorder what is shown: ``0987654321`` read as ``1234567890``) and
#: other invisible format or control characters.
_HIDDEN = re.compile(
    "[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200b-\u200f"
    "\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]"
)
#: The server-side session's token (and its id), to revoke at sign-out.
TOKEN_KEY = "_memaudit_token"
#: A cookie write waiting for the next page run: ("set", token, max_age) or ("clear",).
COOKIE_OP_KEY = "_memaudit_cookie_op"
#: This browser session signed out: do not restore from the cookie it connected with.
SIGNED_OUT_KEY = "_memaudit_signed_out"


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


def plain(value: object) -> str:
    """Untrusted text made safe to show as plain text: bidi overrides, zero-width and control
    characters (newline and tab kept) become visible ``<U+202E>`` marks, so what is shown is
    what is stored, in the order it is stored."""
    return _HIDDEN.sub(lambda m: f"<U+{ord(m.group()):04X}>", str(value))


def widget_id(value: object) -> str:
    """A short, safe widget-key fragment for an untrusted id (keys become CSS classes)."""
    return hashlib.sha256(str(value).encode("utf-8")).hexdigest()[:16]


def esc(value: object) -> str:
    """Escape text for a Markdown context (labels, captions): every ASCII punctuation mark
    gets a backslash, so links, images, emphasis, directives and math cannot be injected;
    ``.``, ``:`` and ``@`` become character references, so no GFM autolink literal
    (``www.x.y``, ``https://...``, ``a@b.c``) can form. Newlines become spaces; hidden
    characters are shown as in :func:`plain`."""
    text = " ".join(plain(value).split())
    return "".join(_MD_ENTITY.get(ch) or ("\\" + ch if ch in _MD_SPECIAL else ch) for ch in text)


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


def call(
    fn: Callable[..., T],
    *args: Any,
    _report: Callable[[str], None] | None = None,
    **kwargs: Any,
) -> tuple[bool, T | None]:
    """Call a service; show a refusal or error on the page instead of a traceback.

    Args:
        fn: the service; ``args`` and ``kwargs`` are passed to it.
        _report: where the error message goes instead of an error box on the page (a
            callback keeps it for the page's next drawing); the message is plain text.

    Returns:
        ``(True, result)``, or ``(False, None)`` after showing the error.
    """
    try:
        return True, fn(*args, **kwargs)
    except AccessDenied as exc:
        message, icon = f"Access denied: {exc}", ":material/block:"
    except MemauditError as exc:
        message, icon = str(exc), ":material/error:"
    except Exception as exc:  # noqa: BLE001 - a page shows an error id, the log has the type
        error_id = uuid.uuid4().hex[:12]
        log.error(
            "dashboard_error",
            error_id=error_id,
            service=getattr(fn, "__name__", "?"),
            error_type=type(exc).__name__,
        )
        message, icon = f"Something went wrong (error id {error_id}); it was logged.", None
    if _report is not None:
        _report(message)
    else:
        st.error(esc(message), icon=icon)
    return False, None


# -- the signed-in actor -------------------------------------------------------------------


def current_actor() -> Actor | None:
    """The signed-in actor, re-checked against its account; None when signed out.

    A session whose account is gone, disabled or changed ends here (recorded when the
    account still exists), and the sign-in page says why.
    """
    actor = st.session_state.get(ACTOR_KEY)
    if actor is None:
        return _actor_from_cookie()
    db = store()
    if isinstance(actor, Actor) and access_sessions.session_valid(db, actor):
        return actor
    if isinstance(actor, Actor):
        access_sessions.record_sign_out(db, actor, "session_ended", session_id=_session_id())
    _reset_session(keep_receipt=True)
    st.session_state[COOKIE_OP_KEY] = ("clear",)
    st.session_state[SIGNED_OUT_KEY] = True
    st.session_state[NOTICE_KEY] = (
        "Your session ended: your account was changed, disabled or removed. Sign in again."
    )
    return None


def _session_id() -> str | None:
    token = st.session_state.get(TOKEN_KEY)
    return access_sessions.session_id_of(store(), token) if token else None


def _actor_from_cookie() -> Actor | None:
    """Restore a session from the ``memaudit_session`` cookie this connection came with.

    The token is checked like every session (signature, expiry, revocation, the account);
    nothing is restored in a browser session that signed out (its cookie snapshot is old).
    """
    if st.session_state.get(SIGNED_OUT_KEY):
        return None
    try:
        token = st.context.cookies.get(access_sessions.SESSION_COOKIE)
    except Exception:  # noqa: BLE001 - no browser context (AppTest, bare mode): no cookie
        return None
    if not token:
        return None
    actor = access_sessions.actor_from_token(store(), token)
    if actor is None:
        st.session_state[COOKIE_OP_KEY] = ("clear",)
        return None
    st.session_state[ACTOR_KEY] = actor
    st.session_state[TOKEN_KEY] = token
    st.session_state[OIDC_TRIED_KEY] = True
    return actor


def session_cookie_ops() -> None:
    """Write (or clear) the session cookie when sign-in or sign-out asked for it.

    Called by the app on every run before the page; a tiny script sets
    ``document.cookie`` (JavaScript cannot set ``HttpOnly``: docs/dashboard.md says why
    that is acceptable here). The value is the signed token only (base64url and dots).
    """
    op = st.session_state.pop(COOKIE_OP_KEY, None)
    if op is None:
        return
    name = access_sessions.SESSION_COOKIE
    if op[0] == "set":
        token, max_age = str(op[1]), int(op[2])
        if not re.fullmatch(r"[A-Za-z0-9_.-]+", token):
            return
        value, age = token, max_age
    else:
        value, age = "", 0
    st.html(
        "<script>(function(){var s=location.protocol==='https:'?'; Secure':'';"
        f"document.cookie='{name}={value}; Path=/; Max-Age={age}; SameSite=Strict'+s;"
        "})();</script>",
        unsafe_allow_javascript=True,
    )


def hotkeys(keys: dict[str, str]) -> None:
    """Keyboard shortcuts: pressing a key clicks the button whose widget key it maps to.

    ``keys`` maps a single key (``j``) to a button's widget key (``tri_next``). Keys typed
    into a text field, a select box or with a modifier are left alone. Works offline (no
    component download); a button that is not on the page is simply not clicked, and a
    stale copy left from the previous script run is never the one clicked. (No ``<`` in the
    script: the HTML around it is parsed first.)
    """
    clean = {k: v for k, v in keys.items() if re.fullmatch(r"[a-z]", k)}
    clean = {k: v for k, v in clean.items() if re.fullmatch(r"[A-Za-z0-9_-]+", v)}
    table_json = json.dumps(clean)
    st.html(
        "<script>(function(){var w=window;"
        "try{if(window.parent&&window.parent.document){w=window.parent;}}catch(x){}"
        "w.__memauditKeys=" + table_json + ";"
        "if(w.__memauditKeysOn){return;}w.__memauditKeysOn=true;"
        "w.document.addEventListener('keydown',function(e){"
        "if(e.ctrlKey||e.metaKey||e.altKey||e.repeat){return;}"
        "var t=e.target,tag=(t&&t.tagName||'').toLowerCase();"
        "if(tag==='input'||tag==='textarea'||tag==='select'||(t&&t.isContentEditable)){return;}"
        "var k=(w.__memauditKeys||{})[e.key];if(!k){return;}"
        "var bs=w.document.querySelectorAll('.st-key-'+k+' button'),b=null;"
        "bs.forEach(function(x){if(!x.closest('[data-stale=true]')){b=x;}});"
        "if(b&&!b.disabled){e.preventDefault();b.click();}"
        "},true);})();</script>",
        unsafe_allow_javascript=True,
    )


#: This session's :class:`auditor.access.officer_findings.ViewLog` (what its audited reads
#: last showed).
VIEW_LOG_KEY = "_memaudit_view_log"


def view_log() -> access_findings.ViewLog:
    """This browser session's view log: a rerun that shows the same findings again is not
    recorded again (``finding.listed``, ``finding.viewed``); a different view is. It is
    dropped with everything else at sign-in and sign-out (:func:`_reset_session`)."""
    log_ = st.session_state.get(VIEW_LOG_KEY)
    if not isinstance(log_, access_findings.ViewLog):
        log_ = access_findings.ViewLog()
        st.session_state[VIEW_LOG_KEY] = log_
    return log_


def _reset_session(*, keep_receipt: bool) -> None:
    """Forget everything of the previous identity (widget values, exports, selections)."""
    receipt = st.session_state.get(RECEIPT_KEY) if keep_receipt else None
    for key in list(st.session_state.keys()):
        del st.session_state[key]
    if receipt is not None:
        st.session_state[RECEIPT_KEY] = receipt


def sign_in(actor: Actor) -> None:
    """Start a session for ``actor`` (after :func:`auditor.access.signin.authenticate` or OIDC)
    and ask for the session cookie that keeps it across reloads."""
    _reset_session(keep_receipt=False)
    st.session_state[ACTOR_KEY] = actor
    st.session_state[OIDC_TRIED_KEY] = True
    issued = access_sessions.issue_token(store(), actor)
    if issued is not None:
        token, _expires = issued
        st.session_state[TOKEN_KEY] = token
        max_age = int(access_sessions.SESSION_TTL.total_seconds())
        st.session_state[COOKIE_OP_KEY] = ("set", token, max_age)


def sign_out(*, notice: str | None = None, record: bool = True) -> None:
    """End the session (recorded as ``auth.signed_out`` while the account exists).

    Args:
        notice: a message for the sign-in page.
        record: write the audit event (not after an erasure: the name must not return).
    """
    actor = st.session_state.get(ACTOR_KEY)
    session_id = _session_id()
    if record and isinstance(actor, Actor):
        access_sessions.record_sign_out(store(), actor, "signed_out", session_id=session_id)
    _reset_session(keep_receipt=True)
    st.session_state[OIDC_TRIED_KEY] = True  # do not sign the OIDC identity in again at once
    st.session_state[SIGNED_OUT_KEY] = True
    st.session_state[COOKIE_OP_KEY] = ("clear",)
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
    (:func:`auditor.access.signin.actor_from_oidc`) finds a pre-registered account and records
    the sign-in or its refusal. A refusal is shown on the sign-in page.
    """
    if st.session_state.get(ACTOR_KEY) is not None or st.session_state.get(OIDC_TRIED_KEY):
        return
    if not oidc_providers() or not idp_logged_in():
        return
    st.session_state[OIDC_TRIED_KEY] = True
    claims = {k: v for k, v in st.user.to_dict().items() if k not in ("tokens", "is_logged_in")}
    try:
        actor = signin.actor_from_oidc(db, claims)
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
    return access.rule_stats(_db, _actor, rule_pack(_db))


def cached_overview(db: Database, actor: Actor, days: int = 30) -> dict[str, Any]:
    """:func:`auditor.access.officer.overview`, cached for 30 s per store and actor."""
    return _overview(store_key(), _actor_key(actor), days, db, actor)


def cached_rule_stats(db: Database, actor: Actor) -> list[dict[str, Any]]:
    """:func:`auditor.access.officer.rule_stats`, cached for 60 s per store and actor."""
    return _rule_stats(store_key(), _actor_key(actor), db, actor)


@st.cache_resource(ttl=300, show_spinner=False, max_entries=4)
def _rule_pack(key: str, rules_dir: str | None) -> RulePack | None:
    try:
        return load_pack(rules_dir, lint=False)
    except RuleError:
        return None


def rule_pack(db: Database) -> RulePack | None:
    """The configured rule pack, loaded once per process and store (kept 5 minutes: an
    edited pack shows within that time); None when it does not load. Loading a pack takes
    seconds, so the pages pass this one to the services instead of loading it per call."""
    rules_dir = db.settings.rules_dir
    return _rule_pack(store_key(), None if rules_dir is None else str(rules_dir))


def clear_caches() -> None:
    """Drop the cached aggregates (after an action changed them)."""
    _overview.clear()
    _rule_stats.clear()
