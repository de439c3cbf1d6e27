"""Sign out: ends the session (recorded as auth.signed_out) and forgets its state."""

from __future__ import annotations

import streamlit as st
import ui

ui.sign_out(notice="You are signed out.")
st.rerun()
