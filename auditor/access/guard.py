"""The guard every access-checked service passes through, and what the services share.

One access policy, not copies of it: :func:`guard` turns a refusal (:class:`Denied`) into
an ``access.denied`` audit event, written in its own transaction after the refused call's
transaction rolled back, and raises :class:`~auditor.errors.AccessDenied`;
:func:`require_role` re-reads the actor's account on every call, so a stale session (or an
``Actor`` built by hand) gets nothing; :func:`own_memory` refuses "not yours" and "does not
exist" alike (no existence oracle). The services of :mod:`auditor.access.officer`,
:mod:`auditor.access.review`, :mod:`auditor.access.user` and :mod:`auditor.access.erasure`
all use these.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from auditor.access.accounts import Actor
from auditor.errors import AccessDenied, InputError
from auditor.hashing import subject_digest
from auditor.lifecycle import audit_log
from auditor.lifecycle.audit_key import audit_key
from auditor.rulepack.pack import Rule, RuleError, RulePack, load_pack
from auditor.store.db import Database
from auditor.store.models import Memory, Principal

__all__ = [
    "ADMIN_ROLES",
    "MAX_BULK",
    "MAX_PAGE_SIZE",
    "OFFICER_ROLES",
    "USER_ROLES",
    "Denied",
    "Page",
    "digest",
    "guard",
    "own_memory",
    "pack_or_default",
    "paging",
    "require_role",
    "rules_by_id",
]

OFFICER_ROLES: tuple[str, ...] = ("officer", "admin")
ADMIN_ROLES: tuple[str, ...] = ("admin",)
USER_ROLES: tuple[str, ...] = ("user",)
#: Largest page any listing returns, whatever the caller asks for.
MAX_PAGE_SIZE = 200
#: Most findings one bulk action takes.
MAX_BULK = 500


@dataclass(frozen=True)
class Page:
    """One page of a listing: its rows, and how many rows match in all."""

    rows: list[dict[str, Any]]
    total: int
    page: int
    page_size: int

    @property
    def pages(self) -> int:
        """How many pages the listing has (at least 1)."""
        return max(1, -(-self.total // self.page_size))


# -- authorisation ------------------------------------------------------------------------


class Denied(Exception):
    """Internal: a refusal on its way to :func:`guard`, which records and re-raises it."""

    def __init__(
        self,
        reason: str,
        message: str,
        target_type: str = "service",
        target_ids: Sequence[str] = (),
    ) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message
        self.target_type = target_type
        self.target_ids = [str(t)[:128] for t in target_ids]


@contextlib.contextmanager
def guard(db: Database, actor: Actor, attempted: str) -> Iterator[None]:
    """Turn a refusal into an ``access.denied`` audit event and :class:`AccessDenied`.

    The event is written in its own transaction, after the refused call's transaction
    rolled back, so the refusal is recorded and nothing else of the call is.
    """
    try:
        yield
    except Denied as denied:
        with db.write() as session:
            audit_log.append(
                session,
                actor=actor.username,
                action="access.denied",
                target_type=denied.target_type,
                target_ids=denied.target_ids,
                details={"attempted": attempted, "reason": denied.reason, "role": actor.role},
                key=audit_key(db.settings),
            )
        raise AccessDenied(denied.message) from None


def require_role(session: Session, actor: Actor, roles: tuple[str, ...], attempted: str) -> None:
    """Refuse unless the actor has one of ``roles`` and still matches its stored account."""
    if not isinstance(actor, Actor):
        raise TypeError(f"{attempted} needs an Actor (from auditor.access.accounts), not {actor!r}")
    if actor.role not in roles:
        raise Denied("role", f"{attempted} needs the {' or '.join(roles)} role")
    p = session.scalar(select(Principal).where(Principal.username == actor.username))
    if p is None or p.disabled or p.role != actor.role or p.subject != actor.subject:
        raise Denied(
            "stale_session",
            "your session no longer matches your account; sign in again",
            "principal",
            [actor.username],
        )


def own_memory(session: Session, actor: Actor, memory_id: str, *, lock: bool = False) -> Memory:
    """The actor's own memory, or a refusal that is the same for "not yours" and "none"."""
    query = select(Memory).where(Memory.memory_id == memory_id)
    if lock:
        query = query.with_for_update()
    memory = session.scalar(query) if isinstance(memory_id, str) and memory_id else None
    if memory is None or memory.subject != actor.subject:
        raise Denied(
            "not_found" if memory is None else "other_subject",
            f"memory {str(memory_id)[:128]!r} is not one of your memories",
            "memory",
            [str(memory_id)],
        )
    return memory


# -- small helpers shared by the services -------------------------------------------------


def paging(page: int, page_size: int) -> tuple[int, int, int]:
    if page < 1:
        raise InputError("page numbers start at 1")
    if page_size < 1:
        raise InputError("page_size must be 1 or more")
    size = min(page_size, MAX_PAGE_SIZE)
    return page, size, (page - 1) * size


def pack_or_default(db: Database, pack: RulePack | None) -> RulePack | None:
    """The given pack, else the configured one, else None when it does not load."""
    if pack is not None:
        return pack
    try:
        return load_pack(db.settings.rules_dir, lint=False)
    except RuleError:
        return None


def rules_by_id(pack: RulePack | None) -> dict[str, Rule]:
    return {r.id: r for r in pack.rules} if pack is not None else {}


def digest(db: Database, subject: str) -> str:
    return subject_digest(subject, audit_key(db.settings))
