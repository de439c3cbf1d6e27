"""Text search over encrypted facts: decrypt and filter in Python, in bounded batches.

SQL ``LIKE`` cannot see into ciphertext, so when encryption is on a search for text in
``memories.fact`` reads the candidate rows (every other condition still runs in SQL) in
batches of :data:`BATCH_ROWS` ``(memory_id, fact)`` pairs, decrypts them (the column type
does it) and keeps the ids whose fact contains the text, case-insensitively, in the
query's order. Memory stays bounded by the batch plus the matching ids; the cost grows
with the rows the other conditions leave (a full store of 150,000 memories: see
``benchmarks/crypto_bench.py``). No blind index is kept: tokens of the text, even HMAC'd,
would be one more copy of personal data an erasure has to reach.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import ColumnElement

from auditor.store.models import Memory

__all__ = ["BATCH_ROWS", "search_fact_ids"]

BATCH_ROWS = 2000


def search_fact_ids(
    session: Session,
    text: str,
    conds: Sequence[ColumnElement[bool]],
    order_by: Sequence[Any],
) -> list[str]:
    """The ids of memories matching ``conds`` whose fact contains ``text`` (any case).

    Args:
        session: a read session.
        text: the text to find (matched literally, like an escaped ``ILIKE``).
        conds: the other conditions (applied in SQL).
        order_by: the order of the result.

    Returns:
        Every matching id, in order (the caller pages through them).
    """
    needle = text.lower()
    stmt = (
        select(Memory.memory_id, Memory.fact)
        .where(*conds)
        .order_by(*order_by)
        .execution_options(yield_per=BATCH_ROWS)
    )
    return [mid for mid, fact in session.execute(stmt) if fact and needle in fact.lower()]
