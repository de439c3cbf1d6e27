"""Property test: no sequence of lifecycle calls can break the store's invariants."""

from __future__ import annotations

import tempfile
from collections import Counter
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from auditor.config import load_settings
from auditor.errors import MemauditError
from auditor.lifecycle import audit_log
from auditor.lifecycle.machine import Lifecycle
from auditor.store.db import Database
from auditor.store.models import Memory
from auditor.testing import make_record

IDS = [f"m{i}" for i in range(5)]
SOURCES = ["explicit_statement", "inferred", "external_content"]

operation = st.one_of(
    st.tuples(st.just("add"), st.sampled_from(IDS), st.sampled_from(SOURCES)),
    st.tuples(
        st.just("supersede_new"),
        st.sampled_from(IDS),
        st.sampled_from(IDS),
        st.sampled_from(SOURCES),
        st.booleans(),
    ),
    st.tuples(
        st.just("supersede_existing"), st.sampled_from(IDS), st.sampled_from(IDS), st.booleans()
    ),
    st.tuples(
        st.sampled_from(["soft_delete", "quarantine", "expire", "restore"]), st.sampled_from(IDS)
    ),
)


def _apply(lc: Lifecycle, op: tuple[object, ...]) -> None:
    kind = op[0]
    if kind == "add":
        lc.add(make_record(memory_id=op[1], subject="user:p", source={"type": op[2]}), actor="prop")
    elif kind == "supersede_new":
        _k, old, new, src, approve = op
        lc.supersede(
            str(old),
            make_record(memory_id=new, subject="user:p", source={"type": src}),
            actor="prop",
            approved_by="rev" if approve else None,
        )
    elif kind == "supersede_existing":
        _k, old, new, approve = op
        lc.supersede(str(old), str(new), actor="prop", approved_by="rev" if approve else None)
    else:
        getattr(lc, str(kind))(op[1], actor="prop")


def _check(db: Database) -> None:
    with db.session() as s:
        rows = {m.memory_id: m for m in s.scalars(select(Memory))}
        assert audit_log.verify(s).ok
    successors = Counter(m.supersedes for m in rows.values() if m.supersedes)
    assert all(n == 1 for n in successors.values()), "fork"
    for m in rows.values():
        if m.supersedes is not None:
            assert m.supersedes in rows, "dangling link"
        if m.status == "active" and any(
            o.supersedes == m.memory_id and o.status == "active" for o in rows.values()
        ):
            raise AssertionError(f"{m.memory_id} is active but has an active successor")
        if m.status == "superseded":  # replaced by something: its successor links to it
            assert any(o.supersedes == m.memory_id for o in rows.values()), "unlinked"
        seen, link = {m.memory_id}, m.supersedes
        while link is not None:
            assert link not in seen, "cycle"
            seen.add(link)
            link = rows[link].supersedes


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(operation, min_size=1, max_size=25))
def test_invariants_hold_under_any_sequence(ops: list[tuple[object, ...]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        db = Database(load_settings(database_url=f"sqlite:///{Path(tmp) / 'p.db'}"))
        db.upgrade()
        lc = Lifecycle(db)
        try:
            for op in ops:
                try:
                    _apply(lc, op)
                except MemauditError:
                    pass  # refused transitions are fine; what matters is the state after
                _check(db)
        finally:
            db.dispose()
