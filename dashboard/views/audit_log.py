"""Audit log (officers): browse the hash-chained events and verify the chain."""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st
import ui

from auditor.access import officer as access

actor = ui.page_actor(ui.OFFICER_ROLES)
db = ui.store()
st.title("Audit log")

left, right = st.columns([3, 2])
with right:
    st.subheader("Verify the hash chain")
    if st.button("Verify the whole chain", key="audit_verify", type="primary"):
        ok, result = ui.call(access.verify_audit_log, db, actor)
        if ok and result is not None:
            st.session_state["_audit_verify"] = result
    result = st.session_state.get("_audit_verify")
    if result is not None:
        if result["ok"]:
            st.success(f"The chain verifies: {result['checked']} events checked.")
        else:
            st.error(
                f"The chain is broken at event {ui.esc(result['first_bad_seq'])} "
                f"({ui.esc(result['first_bad_event_id'])}): {ui.esc(result['reason'])}"
            )

with left:
    row = st.columns(3)
    action = row[0].text_input("Action starts with (e.g. auth., finding.)", key="audit_action")
    by = row[1].text_input("Actor (exact)", key="audit_by")
    size = row[2].selectbox("Rows per page", [25, 50, 100, 200], index=1, key="audit_size")

signature = (action.strip(), by.strip(), int(size))
if st.session_state.get("_audit_sig") != signature:
    st.session_state["_audit_sig"] = signature
    st.session_state["audit_page"] = 1
page_no = int(st.session_state.get("audit_page", 1))
ok, page = ui.call(
    access.audit_log_page,
    db,
    actor,
    page=page_no,
    page_size=int(size),
    action=action.strip() or None,
    by=by.strip() or None,
)
if not ok or page is None:
    st.stop()
nav = st.columns([2, 1, 5])
nav[0].number_input(
    f"Page (of {page.pages}; newest first)",
    min_value=1,
    max_value=page.pages,
    step=1,
    key="audit_page",
)
nav[1].metric("Events", page.total)
ui.table(
    pd.DataFrame(
        [
            {
                "seq": e["seq"],
                "time": e["ts"],
                "actor": e["actor"],
                "action": e["action"],
                "target": e["target_type"],
                "target ids": ", ".join(e["target_ids"][:5])
                + (f" (+{len(e['target_ids']) - 5})" if len(e["target_ids"]) > 5 else ""),
                "details": json.dumps(e["details"], ensure_ascii=False, sort_keys=True),
                "hash": e["hash"][:16],
            }
            for e in page.rows
        ],
        columns=["seq", "time", "actor", "action", "target", "target ids", "details", "hash"],
    ),
    key="audit_table",
)
