"""Erasure requests (officers): approve or reject waiting requests, receipts, erase now.

Approving a request one made oneself is refused (four eyes). Receipts hold no personal
data: the subject digest, counts per store, times, actors and the verification result.
"""

from __future__ import annotations

import json
from typing import Any

import pandas as pd
import streamlit as st
import ui

from auditor.access import erasure as access_erasure

FLASH_KEY = "_erasure_flash"

actor = ui.page_actor(ui.OFFICER_ROLES)
db = ui.store()
st.title("Erasure requests")

flash = st.session_state.pop(FLASH_KEY, None)
if flash is not None:
    st.success(flash)

ok, listed = ui.call(access_erasure.erasure_requests, db, actor)
if not ok or listed is None:
    st.stop()
requests: list[dict[str, Any]] = listed
waiting = [r for r in requests if r["status"] in ("pending", "approved") and r.get("subject")]
pending = [r for r in requests if r["status"] == "pending"]
with_receipt = [r for r in requests if r.get("receipt_sha256")]

cols = st.columns(3)
cols[0].metric("Waiting for approval", len(pending))
cols[1].metric("Waiting for execution", len(waiting) - len(pending))
cols[2].metric("With a receipt", len(with_receipt))
ui.table(
    pd.DataFrame(
        requests,
        columns=[
            "request_id",
            "status",
            "subject",
            "requested_by",
            "requested_at",
            "user_initiated",
            "decided_by",
            "executed_at",
            "verified",
            "receipt_sha256",
        ],
    ),
    key="erasure_table",
)


def _label(request_id: int) -> str:
    row = next((r for r in requests if r["request_id"] == request_id), {})
    who = row.get("subject") or str(row.get("subject_digest", ""))[:12]
    return f"#{request_id} · {row.get('status')} · {who}"


st.subheader("Decide a pending request")
if not pending:
    st.caption("No request waits for approval.")
else:
    with st.form("erasure_decide_form"):
        request_id = st.selectbox(
            "Request", [r["request_id"] for r in pending], format_func=_label, key="erasure_pick"
        )
        execute = st.checkbox(
            "Execute at once (otherwise the daemon's erasure queue runs it)",
            value=True,
            key="erasure_execute",
        )
        reason = st.text_input("Reason (for a rejection; no personal data)", key="erasure_reason")
        buttons = st.columns(2)
        approve = buttons[0].form_submit_button("Approve", key="erasure_approve", type="primary")
        reject = buttons[1].form_submit_button("Reject", key="erasure_reject")
    if approve:
        with st.spinner("Erasing and verifying..."):
            ok, receipt = ui.call(
                access_erasure.approve_erasure_request, db, actor, int(request_id), execute=execute
            )
        if ok:
            st.session_state[FLASH_KEY] = f"Request {request_id} approved" + (
                f" and executed (receipt {receipt['receipt_sha256'][:16]})." if receipt else "."
            )
            ui.clear_caches()
            st.rerun()
    if reject:
        ok, _ = ui.call(
            access_erasure.reject_erasure_request,
            db,
            actor,
            int(request_id),
            reason=reason.strip() or None,
        )
        if ok:
            st.session_state[FLASH_KEY] = f"Request {request_id} rejected."
            st.rerun()

st.subheader("Receipts")
if not with_receipt:
    st.caption("No receipt yet.")
else:
    rid = st.selectbox(
        "Request",
        [r["request_id"] for r in with_receipt],
        format_func=_label,
        key="erasure_receipt_pick",
    )
    ok, receipt = ui.call(access_erasure.erasure_receipt, db, actor, int(rid))
    if ok and receipt is not None:
        verified = receipt.get("verification", {}).get("ok")
        verdict = receipt.get("verdict") or (
            "passed" if verified else "not passed" if verified is False else "-"
        )
        st.text(
            f"status {receipt.get('status')} · verification {verdict} · "
            "receipt hash "
            + ("matches" if access_erasure.verify_receipt(receipt) else "DOES NOT match")
        )
        st.download_button(
            "Download receipt (JSON)",
            data=json.dumps(receipt, indent=2, sort_keys=True),
            file_name=f"erasure-receipt-{rid}.json",
            mime="application/json",
            key="erasure_receipt_download",
        )
        with st.expander("Receipt", key="erasure_receipt_expander"):
            st.json(receipt, expanded=2)

st.subheader("Erase a subject now")
st.caption(
    "On your own authority (for example a verified request received by mail). It cannot be "
    "undone: every copy of the subject's data is deleted, then searched for."
)
with st.form("erasure_now_form", clear_on_submit=True):
    subject = st.text_input("Subject (e.g. user:42)", key="erasure_now_subject")
    again = st.text_input("Type the subject again to confirm", key="erasure_now_confirm")
    why = st.text_input("Reason (no personal data)", key="erasure_now_reason")
    erase_now = st.form_submit_button("Erase now", key="erasure_now_submit")
if erase_now:
    if not subject.strip() or subject.strip() != again.strip():
        st.error("Type the same subject twice to confirm.")
    else:
        with st.spinner("Erasing and verifying..."):
            ok, receipt = ui.call(
                access_erasure.erase_subject_now, db, actor, subject, reason=why.strip() or None
            )
        if ok and receipt is not None:
            verdict = receipt.get("verdict") or (
                "verified" if receipt["verification"]["ok"] else "not verified"
            )
            st.session_state[FLASH_KEY] = (
                f"Request {receipt['request_id']}: nothing was held for this subject "
                "(erased before); only its id was searched for."
                if verdict == "nothing held"
                else f"Erased: request {receipt['request_id']}, verification passed."
                if verdict == "verified"
                else f"Erased: request {receipt['request_id']}, receipt {verdict}: see its "
                "stores (found, may hold)."
            )
            ui.clear_caches()
            st.rerun()
