"""My account: who I am signed in as, and changing my own local password."""

from __future__ import annotations

import streamlit as st
import ui

from auditor.access import admin as access_admin
from auditor.access.accounts import ROLES

actor = ui.page_actor(ROLES)
db = ui.store()

st.title("My account")
st.text(f"User name: {actor.username}")
st.text(f"Role: {actor.role}")
if actor.subject is not None:
    st.text(f"Subject: {actor.subject}")
st.text(f"Signed in with: {'single sign-on' if actor.auth_method == 'oidc' else 'password'}")

st.subheader("Change my password")
with st.form("account_password_form", clear_on_submit=True):
    current = st.text_input("Current password", type="password", key="account_current_password")
    new = st.text_input("New password", type="password", key="account_new_password")
    again = st.text_input("New password again", type="password", key="account_new_password2")
    submitted = st.form_submit_button("Change password", key="account_password_submit")
if submitted:
    if new != again:
        st.error("The two new passwords differ.")
    else:
        ok, _ = ui.call(access_admin.change_my_password, db, actor, current, new)
        if ok:
            st.success("Password changed.")
