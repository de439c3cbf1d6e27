"""Memory explorer (officers): search memories by subject, text, category, status.

Every search that shows memory text is recorded by the service (``memory.searched``: the
ids shown, never the query). Results are kept in the session for the same query and page,
so redrawing the page does not record the same search again.

A link ``?memory=ID`` (from a finding in the review queue) opens that one memory, recorded
like a search, with its open findings, each linking back to the review queue
(``?finding=ID``).
"""

from __future__ import annotations

import pandas as pd
import streamlit as st
import ui

from auditor.access import officer as access
from auditor.access import review as access_review
from auditor.records import STATUSES

ANY = "(any)"
RESULT_KEY = "_explorer_result"

actor = ui.page_actor(ui.OFFICER_ROLES)
db = ui.store()
st.title("Memory explorer")
st.caption("Searches are recorded in the audit log (which memories were shown, not the query).")
LINKED_KEY = "_explorer_linked"


def _findings_of(memory_id: str) -> None:
    """The memory's open findings, each a link back to the review queue."""
    ok, found = ui.call(access_review.memory_findings, db, actor, memory_id)
    if not ok or found is None:
        return
    if not found:
        st.caption("No open finding on this memory.")
        return
    st.markdown(f"**Open findings of this memory** ({len(found)})")
    for f in found:
        st.page_link(
            "views/review_queue.py",
            label=ui.esc(f"{f['severity']} · {f['rule_id']} · {f['reason']}"[:160]),
            icon=":material/fact_check:",
            query_params={"finding": f["finding_id"]},
        )


linked_memory = st.query_params.get("memory")
if linked_memory:
    cached_link = st.session_state.get(LINKED_KEY)
    if cached_link is not None and cached_link[0] == linked_memory:
        linked_rows = cached_link[1]
    else:
        ok, found_page = ui.call(
            access.memory_search, db, actor, memory_id=linked_memory, page_size=1
        )
        if not ok or found_page is None:
            st.stop()
        linked_rows = found_page.rows
        st.session_state[LINKED_KEY] = (linked_memory, linked_rows)
    if st.button("Back to search", key="explorer_back"):
        del st.query_params["memory"]
        st.session_state.pop(LINKED_KEY, None)
        st.rerun()
    if not linked_rows:
        st.warning(f"No memory with id {ui.esc(linked_memory)}.")
        st.stop()
    one = linked_rows[0]
    st.markdown(f"**Memory** {ui.esc(one['memory_id'])}")
    st.markdown("**Fact** (as stored; untrusted text)")
    st.text(ui.plain(one["fact"]))
    _findings_of(one["memory_id"])
    st.json({k: v for k, v in one.items() if k != "fact"}, expanded=1)
    st.stop()

with st.form("explorer_form"):
    row = st.columns(3)
    subject = row[0].text_input("Subject (exact, e.g. user:42)", key="explorer_subject")
    text = row[1].text_input("Text contains", key="explorer_text")
    category = row[2].text_input("Category (exact)", key="explorer_category")
    row = st.columns(3)
    status = row[0].selectbox("Status", [ANY, *STATUSES], key="explorer_status")
    namespace = row[1].text_input("Namespace (exact)", key="explorer_namespace")
    page_size = row[2].selectbox("Rows per page", [25, 50, 100, 200], index=1, key="explorer_size")
    searched = st.form_submit_button("Search", key="explorer_search", type="primary")

params = (
    subject.strip() or None,
    text.strip() or None,
    category.strip() or None,
    None if status == ANY else status,
    namespace.strip() or None,
    int(page_size),
)
if searched:
    st.session_state["explorer_page"] = 1
    st.session_state["_explorer_params"] = params
active = st.session_state.get("_explorer_params")
if active is None:
    st.info("Search by subject, text, category, status or namespace.", icon=":material/search:")
    st.stop()

page_no = int(st.session_state.get("explorer_page", 1))
cached = st.session_state.get(RESULT_KEY)
if cached is not None and cached[0] == (active, page_no):
    result = cached[1]
else:
    subj, txt, cat, stat, ns, size = active
    ok, result = ui.call(
        access.memory_search,
        db,
        actor,
        subject=subj,
        text=txt,
        category=cat,
        status=stat,
        namespace=ns,
        page=page_no,
        page_size=size,
    )
    if not ok or result is None:
        st.stop()
    st.session_state[RESULT_KEY] = ((active, page_no), result)

nav = st.columns([2, 1, 5])
nav[0].number_input(
    f"Page (of {result.pages})", min_value=1, max_value=result.pages, step=1, key="explorer_page"
)
nav[1].metric("Matching", result.total)
if not result.rows:
    st.info("No memory matches.", icon=":material/inbox:")
    st.stop()

table = pd.DataFrame(
    [
        {
            "memory_id": m["memory_id"],
            "subject": m["subject"],
            # "quarantined (held in memaudit, still live in the source (failed))" while a
            # write-back has not reached the source (docs/sources.md, reconciliation)
            "status": access.display_status(m["status"], m.get("extra")),
            "category": m["category"],
            "namespace": m["namespace"],
            "tier": m["trust_tier"],
            "fact": ui.plain(m["fact"][:200]),
            "updated_at": m["updated_at"],
        }
        for m in result.rows
    ]
)
ui.table(table, key="explorer_table")

by_id = {m["memory_id"]: m for m in result.rows}
if st.session_state.get("explorer_open") not in ("", None, *by_id):
    st.session_state.pop("explorer_open", None)
chosen = st.selectbox(
    "Show one memory in full",
    ["", *by_id],
    key="explorer_open",
    format_func=lambda m: "(choose a memory)" if not m else m,
)
if chosen:
    memory = by_id[chosen]
    st.markdown("**Fact** (as stored; untrusted text)")
    st.text(ui.plain(memory["fact"]))
    _findings_of(chosen)
    st.json({k: v for k, v in memory.items() if k != "fact"}, expanded=1)
