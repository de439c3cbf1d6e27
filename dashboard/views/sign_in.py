"""Sign in: a local user name and password, or OIDC when Streamlit's [auth] is configured."""

from __future__ import annotations

import json

import streamlit as st
import ui

from auditor.access import erasure as access_erasure
from auditor.access import signin
from auditor.errors import AuthError

db = ui.store()
st.title("memaudit")
st.caption("Memory governance and audit: sign in to review findings or to see your own data.")

notice = st.session_state.pop(ui.NOTICE_KEY, None)
if notice:
    st.warning(ui.esc(notice), icon=":material/info:")

receipt = st.session_state.get(ui.RECEIPT_KEY)
if receipt is not None:
    # An erasure just ran in this browser session and removed the account with the data:
    # the receipt (no personal data) stays downloadable until the tab is closed.
    st.success(
        f"Your data was erased (request {ui.esc(receipt.get('request_id'))}). "
        "Download the receipt: it proves what was done and holds no personal data.",
        icon=":material/verified:",
    )
    st.download_button(
        "Download erasure receipt (JSON)",
        data=json.dumps(receipt, indent=2, sort_keys=True),
        file_name=f"erasure-receipt-{receipt.get('request_id')}.json",
        mime="application/json",
        key="signin_receipt_download",
    )
    st.caption(
        f"Receipt hash {ui.esc(receipt.get('receipt_sha256', ''))}; "
        f"{'verifies' if access_erasure.verify_receipt(receipt) else 'DOES NOT verify'}."
    )

with st.form("sign_in_form", clear_on_submit=True):
    username = st.text_input("User name", key="signin_username", autocomplete="username")
    password = st.text_input(
        "Password", type="password", key="signin_password", autocomplete="current-password"
    )
    submitted = st.form_submit_button("Sign in", key="signin_submit", type="primary")

if submitted:
    try:
        actor = signin.authenticate(db, username, password)
    except AuthError as exc:  # one message for unknown user and wrong password
        st.error(ui.esc(str(exc)), icon=":material/block:")
    else:
        ui.sign_in(actor)
        st.rerun()

providers = ui.oidc_providers()
if providers:
    st.divider()
    st.caption("Or sign in with your organisation's identity provider:")
    for i, provider in enumerate(providers):
        label = "Sign in with single sign-on" if provider is None else f"Sign in with {provider}"
        if st.button(label, key=f"signin_oidc_{i}"):
            if provider is None:
                st.login()
            else:
                st.login(provider)
    if ui.idp_logged_in():
        st.caption("You are signed in at the identity provider but have no memaudit session.")
        if st.button("Sign out of the identity provider", key="signin_oidc_logout"):
            st.logout()
