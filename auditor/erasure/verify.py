"""``memaudit verify-erasure``: a fresh search, judged together with the erasure's receipt.

The identifying values of an erased subject (its facts, the PII in them) are never kept
after the erasure, so a later, standalone verification can search only for the subject
id. That alone cannot prove an erasure ("searched 6 files for 0 values" is not a pass).
This check therefore passes only when both hold:

1. a fresh search of every table, statistics, the SQLite file and WAL and the logs given
   finds neither the subject id nor anything else it can look for; and
2. the latest erasure of the subject that held data has a receipt whose verdict is
   ``verified`` (its values were searched for everywhere right after the delete, and
   nothing could still hold the subject).

Anything else is reported as incomplete, with the reason, and ``verify-erasure`` exits 1.
An unknown subject is refused with near matches offered (:mod:`auditor.erasure.subjects`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sqlalchemy import select

from auditor.erasure.receipts import VERDICT_NOTHING_HELD
from auditor.erasure.requests import EXECUTED, Receipt, verify_erasure
from auditor.erasure.subjects import resolve_subject
from auditor.hashing import subject_digest
from auditor.lifecycle.audit_key import audit_key
from auditor.store.db import Database
from auditor.store.models import ErasureRequest

__all__ = ["latest_receipt", "verify_subject"]


def latest_receipt(db: Database, digest: str) -> dict[str, Any] | None:
    """The receipt of the latest executed erasure of the subject that held something.

    Args:
        db: the store.
        digest: the subject digest.

    Returns:
        The receipt, or None when no such erasure has one.
    """
    with db.session() as session:
        for receipt in session.scalars(
            select(ErasureRequest.receipt)
            .where(ErasureRequest.subject_digest == digest, ErasureRequest.status == EXECUTED)
            .order_by(ErasureRequest.id.desc())
        ):
            if not isinstance(receipt, dict) or "verification" not in receipt:
                continue  # closed with another request, or no receipt written
            if receipt.get("verdict") == VERDICT_NOTHING_HELD:
                continue
            return dict(receipt)
    return None


def verify_subject(db: Database, subject: str, *, log_paths: Sequence[Path] = ()) -> dict[str, Any]:
    """Search for the subject now and judge the result with the erasure's receipt.

    Args:
        db: the store.
        subject: the subject id (refused when malformed or never held).
        log_paths: log files to search too.

    Returns:
        The verification (places and counts, never values) with ``complete``,
        ``incomplete`` (reasons), ``receipt`` (request id, verdict, hash) and ``ok``: true
        only when nothing was found and the search is complete.

    Raises:
        InputError: a malformed or unknown subject.
    """
    state = resolve_subject(db, subject)
    result = verify_erasure(db, state.subject, log_paths=log_paths).as_dict()
    digest = subject_digest(state.subject, audit_key(db.settings))
    incomplete: list[str] = []
    if not state.nothing_held:
        held = ", ".join(f"{n} {kind}" for kind, n in state.held.items() if n)
        incomplete.append(f"the store holds data of the subject ({held}): it was not erased")
    receipt = latest_receipt(db, digest)
    summary: dict[str, Any] | None = None
    if receipt is None:
        incomplete.append(
            "no erasure of this subject has a receipt: its identifying values were never "
            "searched for, and only the subject id was searched now"
        )
    else:
        verdict = Receipt(receipt).verdict
        summary = {
            "request_id": receipt.get("request_id"),
            "verdict": verdict,
            "receipt_sha256": receipt.get("receipt_sha256"),
        }
        if not Receipt(receipt).ok:
            incomplete.append(
                f"the receipt of erasure request {receipt.get('request_id')} is {verdict}: "
                "see its stores' found and may_hold entries"
            )
    result.update(
        {
            "complete": not incomplete,
            "incomplete": incomplete,
            "receipt": summary,
            "ok": bool(result["ok"]) and not incomplete,
        }
    )
    return result
