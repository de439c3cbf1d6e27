"""Review queue (officers): filters, server-side paging and sorting, detail, actions, bulk.

Everything goes through :mod:`auditor.access`: the queue page comes from the database one
page at a time (``review_queue``), the detail from ``finding_detail`` (redacted evidence,
no memory text), and every action from ``act_on_findings`` (audited, one savepoint per
finding, so one failure does not undo the others).
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st
import ui

from auditor import access
from auditor.config import TIERS
from auditor.findings import STATUSES
from auditor.rules import CATEGORIES, SEVERITIES

ANY = "(any)"
FLASH_KEY = "_queue_flash"
SIG_KEY = "_queue_signature"
ACTION_HELP = {
    "acknowledge": "seen, being worked on",
    "resolve": "the problem is fixed",
    "dismiss": "a false positive: needs a reason; optionally suppress the fingerprint",
    "quarantine": "quarantine every memory of the finding, then resolve it",
    "restore": "restore every memory of the finding, then resolve it",
    "supersede": "another memory of the same subject replaces the finding's memory",
    "escalate": "severity one step up, assigned to an admin (or the admins' queue)",
    "reopen": "open a closed finding again",
}

actor = ui.page_actor(ui.OFFICER_ROLES)
db = ui.store()
st.title("Review queue")

flash = st.session_state.pop(FLASH_KEY, None)
if flash is not None:
    kind, message, rows = flash
    (st.success if kind == "ok" else st.warning)(message)
    if rows:
        ui.table(pd.DataFrame(rows), key="queue_flash_outcomes")


def _opt(value: str) -> str | None:
    return None if value == ANY else value


def action_form(prefix: str, finding_ids: list[str]) -> None:
    """One action on ``finding_ids`` (a single finding or a bulk selection)."""
    with st.form(f"{prefix}_action_form", clear_on_submit=False):
        action = st.selectbox(
            "Action",
            access.ACTIONS,
            format_func=lambda a: f"{a}: {ACTION_HELP.get(a, '')}",
            key=f"{prefix}_action",
        )
        reason = st.text_input(
            "Reason (required to dismiss; recorded, scrubbed of personal data)",
            key=f"{prefix}_reason",
        )
        cols = st.columns(3)
        suppress = cols[0].checkbox("Suppress the fingerprint (dismiss)", key=f"{prefix}_suppress")
        superseding = cols[1].text_input(
            "Superseding memory id (supersede)", key=f"{prefix}_superseding"
        )
        approve = cols[1].checkbox(
            "I approve a lower tier replacing a higher one (supersede)",
            key=f"{prefix}_approve_override",
        )
        assignee = cols[2].text_input(
            "Assign to admin (escalate; empty: the admins' queue)", key=f"{prefix}_assignee"
        )
        submitted = st.form_submit_button(
            f"Apply to {len(finding_ids)} finding{'s' if len(finding_ids) != 1 else ''}",
            key=f"{prefix}_apply",
            type="primary",
            disabled=not finding_ids,
        )
    if not submitted:
        return
    kwargs: dict[str, Any] = {"reason": reason.strip() or None}
    if action == "dismiss":
        kwargs["suppress"] = suppress
    if action == "supersede":
        kwargs["superseding_memory_id"] = superseding.strip() or None
        kwargs["approve_tier_override"] = approve
    if action == "escalate" and assignee.strip():
        kwargs["assignee"] = assignee.strip()
    ok, outcomes = ui.call(access.act_on_findings, db, actor, finding_ids, action, **kwargs)
    if not ok or outcomes is None:
        return
    ui.clear_caches()
    done = [o for o in outcomes if o.ok]
    failed = [o for o in outcomes if not o.ok]
    rows = [
        {"finding_id": o.finding_id, "ok": o.ok, "status": o.status, "error": o.error}
        for o in outcomes
    ]
    message = f"{action}: {len(done)} done" + (f", {len(failed)} failed" if failed else "")
    st.session_state[FLASH_KEY] = ("ok" if not failed else "warn", message, rows)
    st.rerun()


# -- filters ---------------------------------------------------------------------------------

ok, stats = ui.call(ui.cached_rule_stats, db, actor)
rule_ids = [r["id"] for r in stats or []]

with st.expander("Filters and sorting", expanded=True, key="queue_filters_expander"):
    row1 = st.columns(4)
    status = row1[0].selectbox("Status", [*STATUSES, ANY], index=0, key="queue_status")
    rule = row1[1].selectbox("Rule", [ANY, *rule_ids], key="queue_rule")
    category = row1[2].selectbox("Category", [ANY, *CATEGORIES], key="queue_category")
    severity = row1[3].selectbox("Severity", [ANY, *SEVERITIES], key="queue_severity")
    row2 = st.columns(4)
    subject = row2[0].text_input("Subject (exact, e.g. user:42)", key="queue_subject")
    namespace = row2[1].text_input("Namespace (exact)", key="queue_namespace")
    tier = row2[2].selectbox("Trust tier", [ANY, *TIERS], key="queue_tier")
    older = row2[3].number_input(
        "Older than (days)", min_value=0, max_value=36500, value=0, step=1, key="queue_age"
    )
    row3 = st.columns(3)
    sort_key = row3[0].selectbox("Sort by", access.QUEUE_SORTS, key="queue_sort")
    descending = row3[1].toggle("Descending", value=True, key="queue_desc")
    page_size = row3[2].selectbox("Rows per page", [25, 50, 100, 200], index=1, key="queue_size")

try:
    flt = access.QueueFilter(
        status=_opt(status),
        rule_id=_opt(rule),
        category=_opt(category),
        severity=_opt(severity),
        subject=subject.strip() or None,
        namespace=namespace.strip() or None,
        trust_tier=_opt(tier),
        older_than_days=int(older) or None,
    )
except ValueError as exc:
    st.error(ui.esc(str(exc)))
    st.stop()
sort = f"-{sort_key}" if descending else sort_key

signature = repr((flt, sort, page_size))
if st.session_state.get(SIG_KEY) != signature:  # new filters: back to page 1, no selection
    st.session_state[SIG_KEY] = signature
    st.session_state["queue_page"] = 1
    st.session_state.pop("queue_selection", None)

page_no = int(st.session_state.get("queue_page", 1))
ok, page = ui.call(access.review_queue, db, actor, flt, page_no, int(page_size), sort)
if not ok or page is None:
    st.stop()
if page_no > page.pages:
    st.session_state["queue_page"] = page.pages
    st.rerun()

nav = st.columns([2, 1, 5])
nav[0].number_input(
    f"Page (of {page.pages})", min_value=1, max_value=page.pages, step=1, key="queue_page"
)
nav[1].metric("Matching", page.total)

# -- the page of findings ----------------------------------------------------------------------

rows = page.rows
by_id = {r["finding_id"]: r for r in rows}
table = pd.DataFrame(
    [
        {
            "finding_id": r["finding_id"],
            "severity": r["severity"],
            "category": r["category"],
            "rule": r["rule_id"],
            "status": r["status"],
            "age (days)": r["age_days"],
            "first seen": r["first_seen"],
            "subjects": ", ".join(sorted({m["subject"] for m in r["memories"]})),
            "namespaces": ", ".join(sorted({m["namespace"] for m in r["memories"]})),
            "tiers": ", ".join(sorted({m["trust_tier"] for m in r["memories"]})),
            "memories": len(r["memories"]),
            "assignee": r["assignee"] or "",
        }
        for r in rows
    ],
    columns=[
        "finding_id",
        "severity",
        "category",
        "rule",
        "status",
        "age (days)",
        "first seen",
        "subjects",
        "namespaces",
        "tiers",
        "memories",
        "assignee",
    ],
)
if not rows:
    st.info("No finding matches these filters.", icon=":material/inbox:")
ui.table(table, key="queue_table")


def _label(fid: str) -> str:
    r = by_id.get(fid)
    if r is None:
        return fid
    return f"{fid} · {r['severity']} · {r['category']} · {r['rule_id']}"


# -- bulk actions ------------------------------------------------------------------------------

st.subheader("Act on several findings")
if st.button("Select the whole page", key="queue_select_page", disabled=not rows):
    st.session_state["queue_selection"] = list(by_id)
selection = st.multiselect(
    "Selected findings", list(by_id), format_func=_label, key="queue_selection"
)
action_form("bulk", list(selection))

# -- one finding in detail ---------------------------------------------------------------------

st.subheader("Finding detail")
linked = st.query_params.get("finding")
options = [""] + ([linked] if linked and linked not in by_id else []) + list(by_id)
if linked and "queue_open" not in st.session_state:
    st.session_state["queue_open"] = linked
if st.session_state.get("queue_open") not in options:  # the page changed under it
    st.session_state.pop("queue_open", None)
chosen = st.selectbox(
    "Open a finding",
    options,
    format_func=lambda f: "(choose a finding)" if not f else _label(f),
    key="queue_open",
)
if not chosen:
    st.caption("Choose a finding above (or open a link with ?finding=ID).")
    st.stop()
if st.query_params.get("finding") != chosen:
    st.query_params["finding"] = chosen

ok, detail = ui.call(access.finding_detail, db, actor, chosen)
if not ok or detail is None:
    st.stop()
finding = detail["finding"]
rule_info = detail["rule"]
cols = st.columns(4)
cols[0].metric("Severity", finding["severity"])
cols[1].metric("Status", finding["status"])
cols[2].metric("Category", finding["category"])
cols[3].metric("Rule", finding["rule_id"])

st.markdown("**Why it was flagged**")
evidence = finding.get("evidence") or {}
if rule_info is not None:
    st.markdown(f"{ui.esc(rule_info['title'])}")
    st.caption(ui.esc(rule_info["description"]))
else:
    st.caption("This rule is no longer in the rule pack.")
if evidence.get("reason"):
    st.text(f"Detector: {evidence.get('detector')} - {evidence['reason']}")
if rule_info is not None and rule_info["false_positives"]:
    with st.expander("Known false positives of this rule", key="detail_fp_expander"):
        for fp in rule_info["false_positives"]:
            st.text(f"- {fp}")
st.markdown("**Redacted evidence**")
st.json(evidence, expanded=1)
st.text(
    f"first seen {finding['first_seen']}, last seen {finding['last_seen']}, "
    f"assignee {finding['assignee'] or '-'}, resolution {finding['resolution'] or '-'}"
    f" by {finding['resolved_by'] or '-'}"
)

for i, item in enumerate(detail["memories"]):
    memory = item["memory"]
    st.markdown(f"**Memory {i + 1}:** {ui.esc(memory['memory_id'])}")
    left, right = st.columns(2)
    with left:
        st.text(
            f"subject {memory['subject']}\nnamespace {memory['namespace']}\n"
            f"kind {memory['kind']} · category {memory['category']}\n"
            f"status {memory['status']} · trust tier {memory['trust_tier']}\n"
            f"created {memory['created_at']} · updated {memory['updated_at']}"
        )
        st.markdown("Provenance")
        st.json(item["provenance"], expanded=1)
    with right:
        st.markdown("Supersede chain (oldest first)")
        st.graphviz_chart(ui.chain_dot(item["chain"]))
        st.text(ui.chain_text(item["chain"]))
        if item["chain_dangling_link"]:
            st.warning("The chain has a dangling link (a supersedes id that does not exist).")
        if item["chain_cycle"]:
            st.warning("The chain has a cycle.")

st.subheader("Act on this finding")
action_form("detail", [chosen])
