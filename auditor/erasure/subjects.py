"""Which subject an erasure, an export or a verification is about: form, existence, near matches.

A typo must never erase (or "verify") nobody and report success. Every command that takes a
subject from a person (``memaudit erase``, ``erasure request``, ``verify-erasure``,
``export``, the dashboard's erase form) resolves it here first:

1. **Form**: a subject id is ``<kind>:<id>`` (``user:42``; a kind of letters, digits,
   ``_ . -``, a colon, an id without white space), the form every memory record has
   (:mod:`auditor.records`). ``kim``, ``user`` or ``password`` are refused with a clear
   message, and the ``user:`` form of the word is offered when such a subject exists.
2. **Existence**: the store must hold something of the subject (memories in any status,
   consents, dashboard accounts, a waiting erasure request), or have erased it before (a
   subject tombstone with its digest). An unknown subject is refused with the nearest
   existing subjects offered (``difflib``): "no data held for user:olivai.w; did you mean
   user:olivia.w?".

A subject erased before and holding nothing now resolves with ``nothing_held``: the erasure
runs (it cleans what free text may still name it) and its receipt says that nothing was
held, never "verified".

The helpers also list the identifiers that *contain* a subject or one of its values but
belong to someone else (``user:ines.duarte-2`` when erasing ``user:ines.duarte``, the
officer ``daniel.ops`` when a value is ``daniel``): erasure and verification exclude their
occurrences (:class:`auditor.store.residue.Matcher` ``exclude``).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

import ahocorasick
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from auditor.errors import InputError
from auditor.hashing import subject_digest
from auditor.lifecycle.audit_key import audit_key
from auditor.store.db import Database
from auditor.store.models import Consent, ErasureRequest, Memory, Principal, Tombstone

__all__ = [
    "SUBJECT_FORM",
    "SubjectState",
    "check_subject_form",
    "held_counts",
    "known_subjects",
    "near_matches",
    "other_identifiers",
    "resolve_subject",
]

#: ``<kind>:<id>``: the form of every memory record's subject (``auditor.records``).
SUBJECT_FORM = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,31}:[^\s\x00-\x1f\x7f]+$")
_MAX_CHARS = 256
_SUGGESTIONS = 3
_CUTOFF = 0.75
#: Requests that still hold the subject id in clear (waiting, or in flight).
_WAITING = ("pending", "approved", "deleting", "deleted", "verifying")
#: Up to this many needles, plain substring tests beat building an automaton.
_FEW_NEEDLES = 32


def _shown(value: str) -> str:
    """A subject as it may be echoed in an error: printable, bounded."""
    return repr(value[:80] + ("..." if len(value) > 80 else ""))


def check_subject_form(subject: object, *, what: str = "subject") -> str:
    """The subject id, stripped, if it has the subject form; else a clear :class:`InputError`.

    Args:
        subject: what the person typed.
        what: how the argument is called in the message (``subject``, ``SUBJECT``).

    Returns:
        The subject id.

    Raises:
        InputError: empty, too long, or not ``<kind>:<id>``.
    """
    if not isinstance(subject, str) or not subject.strip():
        raise InputError(f"{what} is required (a subject id such as user:42)")
    value = subject.strip()
    if len(value) > _MAX_CHARS:
        raise InputError(f"{what} is longer than {_MAX_CHARS} characters: not a subject id")
    if not SUBJECT_FORM.match(value):
        raise InputError(
            f"{what} {_shown(value)} is not a subject id: expected the form <kind>:<id>, "
            "e.g. user:42 (a kind, a colon, an id without spaces)"
        )
    return value


def known_subjects(session: Session) -> set[str]:
    """Every subject the store holds something of (memories, consents, accounts, waiting
    requests)."""
    found: set[str] = set(session.scalars(select(Memory.subject).distinct()))
    found.update(session.scalars(select(Consent.subject).distinct()))
    found.update(
        s
        for s in session.scalars(
            select(Principal.subject).where(Principal.subject.is_not(None)).distinct()
        )
        if s
    )
    found.update(
        s
        for s in session.scalars(
            select(ErasureRequest.subject).where(
                ErasureRequest.subject.is_not(None), ErasureRequest.status.in_(_WAITING)
            )
        )
        if s
    )
    return found


def near_matches(subject: str, candidates: Iterable[str], n: int = _SUGGESTIONS) -> list[str]:
    """The existing subjects closest to ``subject`` (a typo, a missing ``user:``).

    Args:
        subject: what was typed.
        candidates: existing subjects.
        n: at most this many.

    Returns:
        Up to ``n`` subjects, closest first.
    """
    pool = sorted(set(candidates))
    if not pool:
        return []
    typed = subject.strip()
    out: list[str] = []
    if ":" not in typed:  # `kim` for `user:kim`: offer the subjects whose id is the word
        out.extend(c for c in pool if c.split(":", 1)[-1].lower() == typed.lower())
    out.extend(difflib.get_close_matches(typed, pool, n=n, cutoff=_CUTOFF))
    if ":" not in typed:
        ids = {c.split(":", 1)[-1]: c for c in pool}
        out.extend(ids[i] for i in difflib.get_close_matches(typed, list(ids), n=n, cutoff=0.8))
    seen: list[str] = []
    for c in out:
        if c not in seen and c != typed:
            seen.append(c)
    return seen[:n]


def _suggest(subject: str, candidates: Iterable[str]) -> str:
    close = near_matches(subject, candidates)
    if not close:
        return ""
    return "; did you mean " + " or ".join(close) + "?"


@dataclass(frozen=True)
class SubjectState:
    """What the store holds of a subject.

    Attributes:
        subject: the subject id.
        held: rows held now, per kind (``memories``, ``consents``, ``accounts``,
            ``waiting_requests``).
        erased_before: a subject tombstone says an erasure of it ran before.
    """

    subject: str
    held: dict[str, int] = field(default_factory=dict)
    erased_before: bool = False

    @property
    def nothing_held(self) -> bool:
        """Nothing of the subject is held (it was erased before)."""
        return not any(self.held.values())


def held_counts(
    session: Session, subject: str, *, besides_request: int | None = None
) -> dict[str, int]:
    """What the store holds of a subject now, per kind (no personal data).

    Args:
        session: a session.
        subject: the subject id.
        besides_request: an erasure request not to count (the one being executed).
    """

    def count(stmt: object) -> int:
        return int(session.scalar(stmt) or 0)  # type: ignore[call-overload]

    return {
        "memories": count(
            select(func.count()).select_from(Memory).where(Memory.subject == subject)
        ),
        "consents": count(
            select(func.count()).select_from(Consent).where(Consent.subject == subject)
        ),
        "accounts": count(
            select(func.count()).select_from(Principal).where(Principal.subject == subject)
        ),
        "waiting_requests": count(
            select(func.count())
            .select_from(ErasureRequest)
            .where(
                ErasureRequest.subject == subject,
                ErasureRequest.status.in_(_WAITING),
                ErasureRequest.id != (besides_request or 0),
            )
        ),
    }


def resolve_subject(
    db: Database, subject: object, *, what: str = "subject", allow_erased: bool = True
) -> SubjectState:
    """Check a subject typed by a person: its form, then that the store knows it.

    Args:
        db: the store.
        subject: what was typed.
        what: how the argument is called in messages.
        allow_erased: accept a subject that holds nothing now but was erased before (an
            erasure run again, a verification); ``export`` passes False.

    Returns:
        What the store holds of it.

    Raises:
        InputError: a malformed subject, or one the store has never held (near matches
            offered), or (``allow_erased`` False) one that holds nothing any more.
    """
    try:
        value = check_subject_form(subject, what=what)
    except InputError as exc:
        if not isinstance(subject, str) or not subject.strip():
            raise
        with db.session() as session:  # `alice` for `user:alice`: say which one is meant
            hint = _suggest(subject, known_subjects(session))
        raise InputError(f"{exc}{hint}") from None
    digest = subject_digest(value, audit_key(db.settings))
    with db.session() as session:
        held = held_counts(session, value)
        erased = (
            session.scalar(
                select(Tombstone.id)
                .where(Tombstone.kind == "subject", Tombstone.subject_digest == digest)
                .limit(1)
            )
            is not None
        )
        state = SubjectState(value, held, erased)
        if state.nothing_held and not (erased and allow_erased):
            hint = _suggest(value, known_subjects(session))
            if erased:
                raise InputError(f"no data held for {value}: it was erased before{hint}")
            raise InputError(f"no data held for {value}{hint}")
    return state


def other_identifiers(session: Session, subject: str, needles: Iterable[str]) -> set[str]:
    """Other people's identifiers that contain the subject id or one of its values.

    Other subjects (``user:ines.duarte-2``) and the user names of accounts not bound to the
    subject (``daniel.ops``): an occurrence of a needle inside one of them is theirs.

    Args:
        session: a session.
        subject: the subject being erased.
        needles: the subject id and its identifying values.

    Returns:
        The identifiers to exclude (case-insensitive containment).
    """
    lowered = [n.lower() for n in needles if n and len(n) >= 3]
    if not lowered:
        return set()
    pool: set[str] = known_subjects(session)
    pool.update(
        session.scalars(
            select(Principal.username).where(
                (Principal.subject.is_(None)) | (Principal.subject != subject)
            )
        )
    )
    pool.discard(subject)
    if len(lowered) <= _FEW_NEEDLES:
        return {p for p in pool if p and any(n in p.lower() and n != p.lower() for n in lowered)}
    # many needles (an erasure's values): one automaton pass per identifier
    auto = ahocorasick.Automaton()
    for n in set(lowered):
        auto.add_word(n, n)
    auto.make_automaton()
    out = set()
    for p in pool:
        low = p.lower() if p else ""
        if low and any(n != low for _end, n in auto.iter(low)):
            out.add(p)
    return out
