"""Memory explorer (officers): search memories by subject, text, category, status.

Every search that shows memory text is recorded by the service (``memory.searched``: the
ids shown, never the query). Results are kept in the session for the same query and page,
so redrawing the page does not record the same search again.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st
import ui

from auditor import access
from auditor.records import STATUSES
from auditor.source_state import display_status

ANY = "(any)"
RESULT_KEY = "_explorer_result"

actor = ui.page_actor(ui.OFFICER_ROLES)
db = ui.store()
st.title("Memory explorer")
st.caption("Searches are recorded in the audit log (which memories were shown, not the query).")

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
            "status": display_status(m["status"], m.get("extra")),
            "category": m["category"],
            "namespace": m["namespace"],
            "tier": m["trust_tier"],
            "fact": m["fact"][:200],
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
    st.text(memory["fact"])
    st.json({k: v for k, v in memory.items() if k != "fact"}, expanded=1)
