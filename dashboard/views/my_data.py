"""Download or erase (users): all my data as JSON, and erasing everything about me.

The erasure is requested for the signed-in user's own subject only (the service takes it
from the account). It deletes every copy, the user's own dashboard account included; the
receipt (no personal data) stays downloadable in this browser tab after the sign-out.
"""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st
import ui

from auditor.access import erasure as access_erasure
from auditor.access import user as access_user

FLASH_KEY = "_my_data_flash"
CONFIRM_WORD = "ERASE"

actor = ui.page_actor(ui.USER_ROLES)
db = ui.store()
st.title("Download or erase my data")

flash = st.session_state.pop(FLASH_KEY, None)
if flash is not None:
    st.info(flash)

st.subheader("Download everything about me")
st.caption(
    "A JSON file with every memory, finding and consent held about you. It is put together "
    "when you click, for you only, and its download address stops working right after."
)


def _my_export() -> bytes:
    # Runs when the button is clicked (a deferred download): the service checks the
    # account again and records the export. The file is not kept in the session, so no
    # download address stays valid until sign-out.
    data = access_user.export_my_data(db, actor)
    return json.dumps(data, ensure_ascii=False, indent=2).encode("utf-8")


st.download_button(
    "Download my data (JSON)",
    data=_my_export,
    file_name="my-data.json",
    mime="application/json",
    key="my_export_download",
    type="primary",
    on_click="ignore",
)

st.subheader("My erasure requests")
ok, requests = ui.call(access_erasure.my_erasure_requests, db, actor)
requests = requests or []
if not requests:
    st.caption("You have not asked for an erasure.")
else:
    ui.table(
        pd.DataFrame(
            requests,
            columns=["request_id", "status", "requested_at", "decided_at", "receipt_sha256"],
        ),
        key="my_requests_table",
    )
    with_receipt = [r["request_id"] for r in requests if r.get("receipt_sha256")]
    if with_receipt:
        rid = st.selectbox("Receipt of request", with_receipt, key="my_receipt_pick")
        ok, receipt = ui.call(access_erasure.my_erasure_receipt, db, actor, int(rid))
        if ok and receipt is not None:
            st.download_button(
                "Download receipt (JSON)",
                data=json.dumps(receipt, indent=2, sort_keys=True),
                file_name=f"erasure-receipt-{rid}.json",
                mime="application/json",
                key="my_receipt_download",
            )
waiting = [r for r in requests if r["status"] in ("pending", "approved")]

st.subheader("Erase everything about me")
if waiting:
    st.info(
        f"Your erasure request {waiting[0]['request_id']} is {waiting[0]['status']}: "
        "an officer approves it, then everything is erased.",
        icon=":material/hourglass_top:",
    )
else:
    st.warning(
        "This deletes every memory about you, every finding and consent, and your account. "
        "It cannot be undone. You get a receipt that proves it was done.",
        icon=":material/warning:",
    )
    with st.form("my_erase_form"):
        understood = st.checkbox(
            "I understand that this cannot be undone", key="my_erase_understood"
        )
        word = st.text_input(f"Type {CONFIRM_WORD} to confirm", key="my_erase_word")
        reason = st.text_input("Why (optional; no personal data)", key="my_erase_reason")
        erase = st.form_submit_button("Erase everything", key="my_erase_submit", type="primary")
    if erase:
        if not understood or word.strip() != CONFIRM_WORD:
            st.error(f"Tick the box and type {CONFIRM_WORD} to confirm.")
        else:
            with st.spinner("Erasing and verifying..."):
                ok, outcome = ui.call(
                    access_erasure.request_my_erasure, db, actor, reason=reason.strip() or None
                )
            if ok and outcome is not None:
                if outcome.receipt is not None:
                    st.session_state[ui.RECEIPT_KEY] = outcome.receipt
                    # The account went with the data: end the session without writing the
                    # user's name into the audit log again.
                    ui.sign_out(record=False)
                    st.rerun()
                st.session_state[FLASH_KEY] = (
                    f"Erasure request {outcome.request_id} is {outcome.status}: "
                    "an officer approves it, then everything is erased."
                )
                st.rerun()
