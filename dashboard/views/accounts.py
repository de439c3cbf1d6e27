"""Accounts (admins): list, add, change role or password, disable, enable, delete."""

from __future__ import annotations

import pandas as pd
import streamlit as st
import ui

from auditor.access import admin as access_admin
from auditor.access.accounts import ROLES

FLASH_KEY = "_accounts_flash"

actor = ui.page_actor(("admin",))
db = ui.store()
st.title("Accounts")

flash = st.session_state.pop(FLASH_KEY, None)
if flash is not None:
    st.success(flash)

ok, listed = ui.call(access_admin.list_accounts, db, actor)
if not ok or listed is None:
    st.stop()
ui.table(pd.DataFrame([a.as_dict() for a in listed]), key="accounts_table")


def _done(message: str) -> None:
    st.session_state[FLASH_KEY] = message
    st.rerun()


st.subheader("Add an account")
with st.form("accounts_add_form", clear_on_submit=True):
    row = st.columns(3)
    username = row[0].text_input("User name", key="accounts_add_username")
    role = row[1].selectbox("Role", ROLES, key="accounts_add_role")
    subject = row[2].text_input("Subject (users only, e.g. user:42)", key="accounts_add_subject")
    row = st.columns(3)
    password = row[0].text_input(
        "Password (empty: single sign-on only)", type="password", key="accounts_add_password"
    )
    email = row[1].text_input("E-mail (matches a single sign-on)", key="accounts_add_email")
    display = row[2].text_input("Display name", key="accounts_add_display")
    add = st.form_submit_button("Add account", key="accounts_add_submit", type="primary")
if add:
    ok, account = ui.call(
        access_admin.add_account,
        db,
        actor,
        username,
        role=role,
        subject=subject.strip() or None,
        password=password or None,
        display_name=display.strip() or None,
        email=email.strip() or None,
    )
    if ok and account is not None:
        _done(f"Added {account.role} {account.username}.")

st.subheader("Change an account")
names = [a.username for a in listed]
target = st.selectbox("Account", names, key="accounts_target")
with st.form("accounts_role_form", clear_on_submit=True):
    role_cols = st.columns(2)
    new_role = role_cols[0].selectbox("New role", ROLES, key="accounts_role")
    new_subject = role_cols[1].text_input("Subject (users only)", key="accounts_role_subject")
    set_role = st.form_submit_button("Set role", key="accounts_role_submit")
if set_role and target:
    ok, account = ui.call(
        access_admin.set_account_role,
        db,
        actor,
        target,
        new_role,
        subject=new_subject.strip() or None,
    )
    if ok and account is not None:
        _done(f"{account.username} is now {account.role}.")
with st.form("accounts_password_form", clear_on_submit=True):
    new_password = st.text_input("New password", type="password", key="accounts_password")
    set_password = st.form_submit_button("Set password", key="accounts_password_submit")
if set_password and target:
    ok, _ = ui.call(access_admin.set_account_password, db, actor, target, new_password)
    if ok:
        _done(f"Password set for {target}.")
row = st.columns(3)
if row[0].button("Disable", key="accounts_disable", disabled=not target):
    ok, _ = ui.call(access_admin.disable_account, db, actor, target)
    if ok:
        _done(f"Disabled {target}.")
if row[1].button("Enable (and unlock)", key="accounts_enable", disabled=not target):
    ok, _ = ui.call(access_admin.enable_account, db, actor, target)
    if ok:
        _done(f"Enabled {target}.")
confirm = row[2].checkbox("I really want to delete it", key="accounts_delete_confirm")
if row[2].button("Delete", key="accounts_delete", disabled=not (target and confirm)):
    ok, _ = ui.call(access_admin.delete_account, db, actor, target)
    if ok:
        _done(f"Deleted {target}.")
