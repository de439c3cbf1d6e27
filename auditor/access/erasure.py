"""Access-checked erasure services: what the dashboard calls for the right to erasure.

Wrappers over :mod:`auditor.erasure.requests` that take the signed-in
:class:`~auditor.access.accounts.Actor` first and enforce, like :mod:`auditor.access.officer`:

* a **user** may request the erasure of their own subject only (the subject comes from
  their account, never from the caller), list their own requests and download the
  receipts of their own requests;
* an **officer** or **admin** lists every request (with the subject of the ones that still
  wait), approves or rejects waiting requests (never their own: four eyes, enforced by
  :func:`auditor.erasure.requests.approve_erasure`), erases a subject at once, and downloads any
  receipt.

Each call first re-reads the actor's account (a stale or hand-built actor is refused);
every refusal raises :class:`~auditor.errors.AccessDenied` and appends an ``access.denied``
audit event. A user asking for a receipt of another subject's request, or of a request that
does not exist, gets the same refusal.

An erasure deletes the dashboard accounts bound to the subject, the requesting user's
included: :func:`request_my_erasure` therefore returns the receipt itself when the
erasure ran at once, since the user can no longer sign in to fetch it afterwards. The
request names its requester by the subject's label (``subject#...``), never by the
account name, which is the subject's data as well.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from auditor.access.accounts import Actor
from auditor.access.guard import OFFICER_ROLES, USER_ROLES, Denied, guard, require_role
from auditor.erasure import requests as erasure
from auditor.erasure.common import verify_receipt
from auditor.errors import InputError, NotFoundError
from auditor.hashing import subject_digest
from auditor.lifecycle.audit_key import audit_key
from auditor.store.db import Database

__all__ = [
    "verify_receipt",
    "ErasureOutcome",
    "approve_erasure_request",
    "erase_subject_now",
    "erasure_receipt",
    "erasure_requests",
    "my_erasure_receipt",
    "my_erasure_requests",
    "reject_erasure_request",
    "request_my_erasure",
]

#: Statuses of a request that still waits for a decision or for execution.
_WAITING = (erasure.PENDING, erasure.APPROVED, *erasure.IN_FLIGHT)  # not done yet


@dataclass(frozen=True)
class ErasureOutcome:
    """What an erasure request came to.

    Attributes:
        request_id: the erasure request.
        status: ``pending`` (waits for an officer), ``approved`` (waits for the daemon) or
            ``executed``.
        receipt: the receipt (no personal data) once executed, else None.
        existing: the request was already waiting; no new one was recorded.
    """

    request_id: int
    status: str
    receipt: dict[str, Any] | None = None
    existing: bool = False


def _own_digest(db: Database, actor: Actor) -> str:
    assert actor.subject is not None  # a user actor always has one
    return subject_digest(actor.subject, audit_key(db.settings))


def _check_request_id(request_id: object) -> int:
    if isinstance(request_id, bool) or not isinstance(request_id, int) or request_id < 1:
        raise InputError("an erasure request id is a positive whole number")
    return request_id


# -- user: their own subject --------------------------------------------------------------


def request_my_erasure(db: Database, actor: Actor, *, reason: str | None = None) -> ErasureOutcome:
    """Ask for everything about the actor's own subject to be erased.

    With ``erasure_requires_approval`` the request waits for an officer (``pending``);
    otherwise it is executed at once and the receipt is returned. A request of the same
    subject that already waits is returned instead of recording a second one.

    Args:
        db: the store.
        actor: a user (the subject is theirs; it cannot be chosen).
        reason: why, optional (kept scrubbed; no personal data please).

    Returns:
        The outcome, with the receipt when the erasure ran.

    Raises:
        AccessDenied: the actor is not a user, or the session is stale.
    """
    with guard(db, actor, "request_my_erasure"), db.session() as session:
        require_role(session, actor, USER_ROLES, "request_my_erasure")
    subject = actor.subject
    assert subject is not None  # a user actor always has one
    digest = _own_digest(db, actor)
    for row in erasure.list_requests(db):
        if row["subject_digest"] == digest and row["status"] in _WAITING:
            return ErasureOutcome(int(row["request_id"]), str(row["status"]), existing=True)
    # The requester is recorded by the subject's label, not the account name: the name is
    # the subject's data too (the erasure deletes the account), and an immediate erasure
    # writes its requester as the actor of its own events and receipt.
    request_id = erasure.request_erasure(
        db,
        subject,
        requested_by=erasure.subject_label(digest),
        reason=reason,
        user_initiated=True,
    )
    status = next(
        (str(r["status"]) for r in erasure.list_requests(db) if r["request_id"] == request_id),
        erasure.EXECUTED,
    )
    receipt = erasure.get_receipt(db, request_id) if status == erasure.EXECUTED else None
    return ErasureOutcome(request_id, status, receipt)


def my_erasure_requests(db: Database, actor: Actor) -> list[dict[str, Any]]:
    """The actor's own erasure requests, newest first (no subject id, no receipt body).

    Raises:
        AccessDenied: the actor is not a user, or the session is stale.
    """
    with guard(db, actor, "my_erasure_requests"), db.session() as session:
        require_role(session, actor, USER_ROLES, "my_erasure_requests")
    digest = _own_digest(db, actor)
    return [r for r in erasure.list_requests(db) if r["subject_digest"] == digest]


def my_erasure_receipt(db: Database, actor: Actor, request_id: int) -> dict[str, Any]:
    """The receipt of one of the actor's own erasure requests.

    Raises:
        AccessDenied: the actor is not a user, or the request is not theirs (or does not
            exist: the same refusal).
        InputError: a malformed id, or the request has no receipt yet.
    """
    with guard(db, actor, "my_erasure_receipt"), db.session() as session:
        require_role(session, actor, USER_ROLES, "my_erasure_receipt")
        rid = request_id if isinstance(request_id, int) and not isinstance(request_id, bool) else 0
        row = next((r for r in erasure.list_requests(db) if r["request_id"] == rid), None)
        if row is None or row["subject_digest"] != _own_digest(db, actor):
            raise Denied(
                "not_found" if row is None else "other_subject",
                f"erasure request {str(request_id)[:32]!r} is not one of your requests",
                "erasure_request",
                [str(request_id)],
            )
    return erasure.get_receipt(db, rid)


# -- officer ------------------------------------------------------------------------------


def erasure_requests(db: Database, actor: Actor, status: str | None = None) -> list[dict[str, Any]]:
    """Every erasure request, newest first; waiting ones with their subject (to decide them).

    Raises:
        AccessDenied: the actor is not an officer or admin.
        InputError: an unknown status.
    """
    with guard(db, actor, "erasure_requests"), db.session() as session:
        require_role(session, actor, OFFICER_ROLES, "erasure_requests")
    return erasure.list_requests(db, status, include_subject=True)


def approve_erasure_request(
    db: Database, actor: Actor, request_id: int, *, execute: bool = True
) -> dict[str, Any] | None:
    """Approve a pending request (never one's own), and by default execute it now.

    Args:
        db: the store.
        actor: an officer or admin (recorded as the approver).
        request_id: the pending request.
        execute: run the erasure now; otherwise the daemon's erasure queue runs it.

    Returns:
        The receipt when executed, else None.

    Raises:
        AccessDenied: the actor is not an officer or admin.
        NotFoundError: no such request.
        InputError: the request is not pending, or the actor requested it.
    """
    rid = _check_request_id(request_id)
    with guard(db, actor, "approve_erasure_request"), db.session() as session:
        require_role(session, actor, OFFICER_ROLES, "approve_erasure_request")
    receipt = erasure.approve_erasure(db, rid, actor=actor.username, execute=execute)
    return receipt.as_dict() if receipt is not None else None


def reject_erasure_request(
    db: Database, actor: Actor, request_id: int, *, reason: str | None = None
) -> None:
    """Reject a waiting request (its subject id is cleared from the row).

    Raises:
        AccessDenied: the actor is not an officer or admin.
        NotFoundError: no such request.
        InputError: the request was already executed or rejected.
    """
    rid = _check_request_id(request_id)
    with guard(db, actor, "reject_erasure_request"), db.session() as session:
        require_role(session, actor, OFFICER_ROLES, "reject_erasure_request")
    erasure.reject_erasure(db, rid, actor=actor.username, reason=reason)


def erasure_receipt(db: Database, actor: Actor, request_id: int) -> dict[str, Any]:
    """The stored receipt of any executed or rejected request.

    Raises:
        AccessDenied: the actor is not an officer or admin.
        NotFoundError: no such request.
        InputError: the request has no receipt yet.
    """
    rid = _check_request_id(request_id)
    with guard(db, actor, "erasure_receipt"), db.session() as session:
        require_role(session, actor, OFFICER_ROLES, "erasure_receipt")
    return erasure.get_receipt(db, rid)


def erase_subject_now(
    db: Database, actor: Actor, subject: str, *, reason: str | None = None
) -> dict[str, Any]:
    """Erase a subject at once, on the officer's own authority; returns the receipt.

    Raises:
        AccessDenied: the actor is not an officer or admin.
        InputError: no subject, a subject that is not ``<kind>:<id>``, or one the store
            never held: the message offers the nearest existing subjects ("no data held
            for user:olivai.w; did you mean user:olivia.w?"). Nothing is recorded then.
        NotFoundError: the erasure finished without a receipt (should not happen).
    """
    if not isinstance(subject, str) or not subject.strip():
        raise InputError("a subject is required (e.g. user:42)")
    with guard(db, actor, "erase_subject_now"), db.session() as session:
        require_role(session, actor, OFFICER_ROLES, "erase_subject_now")
    request_id = erasure.request_erasure(
        db, subject.strip(), requested_by=actor.username, reason=reason, user_initiated=False
    )
    try:
        return erasure.get_receipt(db, request_id)
    except InputError as exc:  # an officer's request always runs at once
        raise NotFoundError(f"erasure request {request_id} has no receipt: {exc}") from None
