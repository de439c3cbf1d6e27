"""Whose is a mem0 row that mem0 no longer attributes? (issue 11, item 2)

mem0's ``history`` table has no ``user_id``: a row belongs to whoever owns its
``memory_id``, which mem0 forgets when the memory is deleted (``delete``, ``delete_all``).
The connector (:mod:`auditor.sources.live.mem0`) first asks mem0 itself (live and
quarantined points, entity links) and memaudit's attribution ledger; this module adds the
other traces, weakest last:

1. **memaudit's mirror**: the subject memaudit filed the memory under at an earlier sync
   (``Connector.known_subjects``, external id -> subject, set by the sync engine), and, in
   an erasure, the memaudit memory ids of the subject that the erasure just deleted
   (``Connector.subject_memory_ids``: ``memory_id_for(source, mem0 id)`` is compared, so
   nothing about the memory has to survive in memaudit);
2. **actor_id**: a history row whose ``actor_id`` (mem0 copies the message's ``name``)
   is exactly the id of one known user of the store;
3. in an erasure only, **the subject's id in the text**: an unattributed row or chat turn
   that names the subject's own id as a whole word (``carol`` in "Carol's passport ..."),
   for ids of at least three characters that are not only digits. It is purged with the
   subject and counted (``mem0.unattributed_named_subject``).

What is still nobody's after all of it is reported by an erasure in ``may_hold`` (place,
count, reason) and raised by the sync as a finding (``MA-SRC-006``), never guessed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

__all__ = ["OwnerHint", "hints_from_subjects", "names_subject", "owners_by_actor"]

_WORD = re.compile(r"[\w.@+-]+", re.UNICODE)


@dataclass(frozen=True)
class OwnerHint:
    """An owner found for a mem0 memory id: which entity key, its id, and how."""

    key: str  # user_id | agent_id | run_id
    ident: str
    how: str  # memaudit | actor_id


def hints_from_subjects(
    known: Mapping[str, str], prefixes: Mapping[str, str], unattributed: str
) -> dict[str, OwnerHint]:
    """External id -> owner, from memaudit's mirror (subjects memaudit filed items under).

    Args:
        known: external id -> memaudit subject.
        prefixes: entity key -> subject prefix (``{"user_id": "user:", ...}``).
        unattributed: the source's unattributed subject (never a hint).
    """
    out: dict[str, OwnerHint] = {}
    for external, subject in known.items():
        if not subject or subject == unattributed or ":" in external:
            continue  # history versions and chat turns have ids of their own
        for key, prefix in prefixes.items():
            if prefix and subject.startswith(prefix) and len(subject) > len(prefix):
                out[external] = OwnerHint(key, subject[len(prefix) :], "memaudit")
                break
    return out


def owners_by_actor(
    actors: Mapping[str, Iterable[str | None]], known_users: set[str]
) -> dict[str, OwnerHint]:
    """Memory id -> owner, when its history rows name exactly one known user as actor."""
    out: dict[str, OwnerHint] = {}
    for mid, names in actors.items():
        found = {n for n in names if n and n in known_users}
        if len(found) == 1:
            out[mid] = OwnerHint("user_id", found.pop(), "actor_id")
    return out


def names_subject(text: str | None, ident: str | None) -> bool:
    """Whether ``text`` names ``ident`` as a whole word (case-insensitive; ids of 3+
    characters that are not only digits: a short or numeric id would match by chance)."""
    if not text or not ident or len(ident) < 3 or ident.isdigit():
        return False
    wanted = ident.casefold()
    for word in _WORD.findall(text.casefold()):
        if word == wanted or word.strip(".") == wanted:
            return True
    return False
