r"""What every part of an erasure shares: states, formats, names, the receipt and its hash.

An erasure request moves through explicit states, stored in ``erasure_requests.status``
(``docs/erasure.md``, "Crash-consistent erasure")::

    pending -> approved -> deleting -> deleted -> verifying -> executed (done)
            \-> rejected

``executed`` is the final state ("done"; the name is kept so existing receipts, queries
and dashboards stay valid). ``deleting``, ``deleted`` and ``verifying`` are *in flight*:
a process that stops there (killed, disk full, database gone) leaves a provisional
receipt and a ledger line behind, and :func:`auditor.erasure.queue.run_queue` resumes it.

Receipts hold no personal data (digests, counts, places, times, actors) and carry their
own hash (``receipt_sha256``, :func:`verify_receipt`).
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from auditor.config import Settings
from auditor.erasure import receipts as erasure_receipts
from auditor.errors import InputError
from auditor.hashing import canonical_json, subject_digest
from auditor.lifecycle.audit_key import audit_key
from auditor.logging import scrub
from auditor.store.residue import Hit, Matcher, redact_json

__all__ = [
    "APPROVED",
    "DELETED",
    "DELETING",
    "EXECUTED",
    "IN_FLIGHT",
    "KIND_SHORT",
    "KIND_SUBJECT",
    "KIND_VALUE",
    "LEDGER_FORMAT",
    "PENDING",
    "RECEIPT_FORMAT",
    "REJECTED",
    "STATUSES",
    "VERIFYING",
    "Receipt",
    "Verification",
    "subject_label",
    "verify_receipt",
]

PENDING = "pending"
APPROVED = "approved"
REJECTED = "rejected"
#: In flight: the ledger line and a provisional receipt are written, the delete runs.
DELETING = "deleting"
#: In flight: the delete is committed; storage reclaim and verification remain.
DELETED = "deleted"
#: In flight: the request no longer holds the subject id; the search runs.
VERIFYING = "verifying"
#: Done: the final receipt is stored.
EXECUTED = "executed"
IN_FLIGHT = (DELETING, DELETED, VERIFYING)
STATUSES = (PENDING, APPROVED, DELETING, DELETED, VERIFYING, EXECUTED, REJECTED)

RECEIPT_FORMAT = "memaudit-erasure-receipt/1"
LEDGER_FORMAT = "memaudit-erasure-ledger/1"
KIND_SUBJECT = "subject id"
KIND_VALUE = "identifying value"
KIND_SHORT = erasure_receipts.KIND_SHORT

_ID_CHUNK = 500


# -- small helpers ----------------------------------------------------------------------


def _require(value: str | None, what: str) -> str:
    if value is None or not value.strip():
        raise InputError(f"{what} is required")
    return value.strip()


def _digest(settings: Settings, subject: str) -> str:
    return subject_digest(subject, audit_key(settings))


def subject_label(digest: str) -> str:
    """How an erased subject is named where a name is needed: ``subject#`` + 16 hex digits.

    Args:
        digest: the subject digest.

    Returns:
        The label (no personal data).
    """
    return f"subject#{digest[:16]}"


def _safe_name(name: str | None, subject: str, digest: str, *, is_subject: bool = False) -> str:
    """A requester or actor as it may be recorded: the subject's label if it names them."""
    if name is None:
        return ""
    if is_subject or name == subject or Matcher([subject]).search(name):
        return subject_label(digest)
    return name


def _clean_reason(reason: str | None, subject: str) -> str | None:
    if reason is None or not reason.strip():
        return None
    cleaned = scrub(reason.strip(), limit=500)
    redacted, _changed = redact_json(cleaned, Matcher([subject]))
    return str(redacted)


def _chunks(items: Sequence[str], size: int = _ID_CHUNK) -> Iterable[Sequence[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


# -- results ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Verification:
    """What a search for a subject's data found: places and counts, never values.

    Attributes:
        ok: nothing was found and everything could be searched (a short value matched as
            a whole token is listed in ``hits`` but does not make it false: the receipt
            reports it as something that *may* hold the subject).
        subject_digest: the salted digest of the subject.
        hits: places holding the subject id or one of its identifying values.
        searched: what was searched: tables, columns, files, values.
        unsearchable: places that could not be searched (they make ``ok`` false).
    """

    ok: bool
    subject_digest: str
    hits: tuple[Hit, ...] = ()
    searched: dict[str, int] = field(default_factory=dict)
    unsearchable: tuple[str, ...] = ()
    files: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (no personal data)."""
        return {
            "ok": self.ok,
            "subject_digest": self.subject_digest,
            "hits": [h.as_dict() for h in self.hits],
            "searched": dict(self.searched),
            "unsearchable": list(self.unsearchable),
            "files": list(self.files),
        }


@dataclass(frozen=True)
class Receipt:
    """The proof of one erasure: JSON without personal data, hashed over its content.

    Attributes:
        data: the receipt, ``receipt_sha256`` included (see :func:`verify_receipt`).
    """

    data: dict[str, Any]

    @property
    def request_id(self) -> int:
        """The erasure request the receipt belongs to."""
        return int(self.data["request_id"])

    @property
    def ok(self) -> bool:
        """Whether the receipt is ``verified``: nothing found in any store, nothing that may
        still hold the subject, and the audit chain verifies (see
        :mod:`auditor.erasure.receipts`)."""
        if "verified" in self.data:
            return bool(self.data["verified"])
        sources = self.data.get("sources") or {}
        return bool(
            self.data["verification"]["ok"]
            and self.data["audit_chain"]["ok"]
            and all(s.get("verified") for s in sources.values())
        )

    @property
    def verdict(self) -> str:
        """``verified``, ``not verified``, ``incomplete`` or ``nothing held``."""
        default = erasure_receipts.VERDICT_VERIFIED if self.ok else "not verified"
        return str(self.data.get("verdict", default))

    @property
    def nothing_held(self) -> bool:
        """Nothing of the subject was held (erased before) and nothing was found."""
        return self.verdict == erasure_receipts.VERDICT_NOTHING_HELD

    @property
    def sha256(self) -> str:
        """The receipt's own hash."""
        return str(self.data["receipt_sha256"])

    def as_dict(self) -> dict[str, Any]:
        """A deep copy of the receipt."""
        return copy.deepcopy(self.data)

    def to_json(self) -> str:
        """The receipt as indented JSON."""
        return json.dumps(self.data, ensure_ascii=False, indent=2, sort_keys=True)


def _receipt_hash(data: dict[str, Any]) -> str:
    body = {k: v for k, v in data.items() if k != "receipt_sha256"}
    return hashlib.sha256(canonical_json(body).encode("utf-8")).hexdigest()


def verify_receipt(data: dict[str, Any]) -> bool:
    """Whether a receipt's ``receipt_sha256`` matches its content.

    Args:
        data: a receipt as printed or downloaded.

    Returns:
        True when the hash over the canonical JSON of the rest matches.
    """
    return isinstance(data.get("receipt_sha256"), str) and data["receipt_sha256"] == _receipt_hash(
        data
    )
