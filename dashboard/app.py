"""memaudit dashboard: the entry point (``memaudit dashboard``).

Sign-in first; then ``st.navigation`` offers only the pages of the signed-in role. Hiding
pages is not the protection: every page passes the actor to the access-checked services
of :mod:`auditor.access.officer` / :mod:`auditor.access.erasure`, which refuse and record
(``access.denied``) whatever ids arrive through the URL or widgets.

Deep links: signed out, every page's address (``/review_queue?finding=...``) shows the
sign-in form, so a link opened in a new tab never says "Page not found"; after sign-in the
same address runs the real page (a page's identity is its URL path) with the link's query
parameters. A reload keeps the session through the signed session cookie (:mod:`ui`).

Signed out, the first run of the process starts one background thread that imports what
the signed-in pages need (pandas, Altair for the charts, the services they call) while the
sign-in form is filled in, so the first page after a cold sign-in does not wait for them.
It imports modules only: no store access, no state, nothing about the person.
"""

from __future__ import annotations

import importlib
import runpy
import sys
import threading
from pathlib import Path

_HERE = Path(__file__).resolve().parent
if str(_HERE) not in sys.path:  # `streamlit run` adds it; AppTest and others may not
    sys.path.insert(0, str(_HERE))

import streamlit as st  # noqa: E402 - after the path fix above
import ui  # noqa: E402

from auditor.access import officer_findings as access_findings  # noqa: E402
from auditor.access.accounts import Actor  # noqa: E402


def _page(name: str, title: str, icon: str, *, default: bool = False) -> st.Page:
    return st.Page(f"views/{name}.py", title=title, icon=icon, url_path=name, default=default)


#: Every page's URL path: signed out, each one shows the sign-in form (deep links).
_ALL_PATHS = (
    "overview",
    "review_queue",
    "memory_explorer",
    "audit_log",
    "rules",
    "erasure_requests",
    "accounts",
    "my_memories",
    "my_data",
    "account",
)


#: What the signed-in pages import first (the rest is imported by the sign-in page too).
_WARM_UP_MODULES = (
    "pandas",
    "altair",
    "auditor.access.erasure",
    "auditor.scan.review",
    "auditor.sources.writeback",
)


def _import_page_modules() -> None:
    for name in _WARM_UP_MODULES:
        try:
            importlib.import_module(name)
        except ImportError:  # the page that needs it will say so when it runs
            pass


@st.cache_resource(show_spinner=False)
def _warm_up() -> bool:
    """Start importing the signed-in pages' modules in the background, once per process."""
    threading.Thread(target=_import_page_modules, name="memaudit-warm-up", daemon=True).start()
    return True


def _sign_in_form() -> None:
    runpy.run_path(str(_HERE / "views" / "sign_in.py"), run_name="__main__")


def _pages(actor: Actor | None) -> dict[str, list[st.Page]]:
    """The pages a role is offered, grouped (sections in the sidebar)."""
    if actor is None:
        return {
            "": [
                _page("sign_in", "Sign in", ":material/login:", default=True),
                *(
                    st.Page(_sign_in_form, title="Sign in", icon=":material/login:", url_path=p)
                    for p in _ALL_PATHS
                ),
            ]
        }
    me = [
        _page("account", "My account", ":material/manage_accounts:"),
        _page("sign_out", "Sign out", ":material/logout:"),
    ]
    if actor.role == "user":
        return {
            "My data": [
                _page("my_memories", "My memories", ":material/psychology:", default=True),
                _page("my_data", "Download or erase", ":material/download:"),
            ],
            "Account": me,
        }
    groups = {
        "Review": [
            _page("overview", "Overview", ":material/insights:", default=True),
            _page("review_queue", "Review queue", ":material/fact_check:"),
            _page("memory_explorer", "Memory explorer", ":material/search:"),
        ],
        "Governance": [
            _page("audit_log", "Audit log", ":material/receipt_long:"),
            _page("rules", "Rules", ":material/rule:"),
            _page("erasure_requests", "Erasure requests", ":material/delete_forever:"),
        ],
    }
    if actor.role == "admin":
        groups["Admin"] = [_page("accounts", "Accounts", ":material/group:")]
    groups["Account"] = me
    return groups


st.set_page_config(page_title="memaudit", page_icon=":material/policy:", layout="wide")
db = ui.store()
ui.oidc_sign_in(db)
actor = ui.current_actor()

if actor is not None and not actor.is_officer and "finding" in st.query_params:
    # A finding link opened in a user's session: the service decides (and records the
    # refusal); the parameter is dropped so the attempt is recorded once.
    finding_id = st.query_params["finding"]
    del st.query_params["finding"]
    ui.call(access_findings.finding_detail, db, actor, finding_id)

ui.session_cookie_ops()
nav = st.navigation(_pages(actor), position="sidebar" if actor is not None else "hidden")
with st.sidebar:
    if actor is not None:
        st.caption(f"Signed in as **{ui.esc(actor.username)}** ({ui.esc(actor.role)})")
    st.caption("memaudit: memory governance and audit")
nav.run()
if actor is None:  # after the sign-in form is drawn: the import does not delay it
    _warm_up()
