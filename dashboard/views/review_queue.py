"""Review queue (officers): a master-detail queue worked from the keyboard.

* **List**: one page of findings from :func:`auditor.access.officer_findings.review_queue`
  (filtered, sorted and paged in the database; most severe first by default), with the
  columns a reviewer reads first: severity, rule title, subject, a one-line reason and the
  redacted snippet. Selecting a row (Streamlit's dataframe row selection) opens it;
  selecting several makes a bulk selection.
* **Detail**: the redacted evidence with the flagged spans highlighted (built from escaped
  pieces: never memory text as Markdown or HTML), the rule's "why" and known false
  positives, each memory with its chain and provenance and a link to the memory explorer
  (``?memory=ID``), and the other open findings of the same memories.
* **Triage**: next / previous, acknowledge, resolve, dismiss with a reason (the rule's
  known false positives or typed), quarantine and escalate, on buttons with one-key
  shortcuts (:func:`ui.hotkeys`: j/k, a, r, d, q, e; y confirms). After an action the
  next finding opens, in the same script run: the bar's buttons act in ``on_click``
  callbacks, which run before the page is drawn again. The bar's buttons carry the
  session's count of triage clicks that acted, and a click acts only when that count is
  unchanged (then advances it), so one click acts once, on the finding it was drawn for,
  even if it reaches the server twice. Quarantine and every bulk
  action are previewed first (:func:`auditor.access.review.preview_action`) and run only when
  confirmed. Every action is idempotent (``auditor.scan.review``): asking for a state a
  memory is already in succeeds and says so.

The finding in view is in the URL (``?finding=ID``), so a link or a reload opens it.

Row selection is by position in the table: when the page's rows change (after an action,
or another officer's), the selection is cleared, so it never points at other findings.
Reads are recorded once per view (``finding.listed``, ``finding.viewed``, through the
session's :func:`ui.view_log`), not on every rerun.
"""

from __future__ import annotations

import re
from typing import Any

import pandas as pd
import streamlit as st
import ui

from auditor.access import officer_actions as access_actions
from auditor.access import officer_findings as access_findings
from auditor.access import review as access_review
from auditor.config import TIERS
from auditor.rulepack.pack import CATEGORIES, SEVERITIES
from auditor.vocab import FINDING_STATUSES as STATUSES

ANY = "(any)"
FLASH_KEY = "_queue_flash"
SIG_KEY = "_queue_signature"
CURRENT_KEY = "_queue_current"
PENDING_KEY = "_queue_pending"  # an action waiting for its confirmation
LAST_SEL_KEY = "_queue_last_selection"
PAGE_ALL_KEY = "_queue_page_all"  # "select the whole page" for this filter and page
TABLE_GEN_KEY = "_queue_table_gen"  # bumped to clear the table's row selection
INTENT_KEY = "_queue_intent"  # an action clicked and not yet carried out to the end
TURN_KEY = "_queue_turn"  # how many triage clicks acted: the bar's buttons carry it
OTHER_REASON = "(another reason: type it below)"
SORT_DEFAULT = "severity"
HOTKEYS = {
    "j": "tri_next",
    "k": "tri_prev",
    "a": "tri_acknowledge",
    "r": "tri_resolve",
    "d": "tri_dismiss",
    "q": "tri_quarantine",
    "e": "tri_escalate",
    "y": "tri_confirm",
    "n": "tri_cancel",
}
_MASK = re.compile(r"\[[A-Z][A-Z0-9_]{1,40}\]")

actor = ui.page_actor(ui.OFFICER_ROLES)
db = ui.store()
st.title("Review queue")
ui.hotkeys(HOTKEYS)


def _opt(value: str) -> str | None:
    return None if value == ANY else value


def _clear_selection() -> None:
    # A new widget key is a new table in the browser too: no row stays ticked there.
    st.session_state[TABLE_GEN_KEY] = int(st.session_state.get(TABLE_GEN_KEY, 0)) + 1
    st.session_state.pop(LAST_SEL_KEY, None)
    st.session_state.pop(PAGE_ALL_KEY, None)


def _run(finding_ids: list[str], action: str, *, in_callback: bool = False, **kwargs: Any) -> bool:
    """Run an action; report each outcome in the flash message. True when it ran.

    In a callback (``in_callback``) an error goes to the flash message too, and nothing
    is drawn: a callback that draws can be cut short by the next browser message.
    """
    report = _flash_error if in_callback else None
    ok, outcomes = ui.call(
        access_actions.act_on_findings, db, actor, finding_ids, action, _report=report, **kwargs
    )
    if not ok or outcomes is None:
        return False
    _clear_selection()  # the rows change: a selection by position would point elsewhere
    done = [o for o in outcomes if o.ok]
    failed = [o for o in outcomes if not o.ok]
    if len(outcomes) == 1:
        o = outcomes[0]
        message = f"{action}: {o.message}" if o.ok else f"{action} failed: {o.error}"
        rows: list[dict[str, Any]] = []
    else:
        message = f"{action}: {len(done)} done" + (f", {len(failed)} failed" if failed else "")
        already = sum(1 for o in done if o.already)
        if already:
            message += f" ({already} already in that state)"
        rows = [
            {"finding_id": o.finding_id, "ok": o.ok, "result": o.message or o.error or ""}
            for o in outcomes
        ]
    st.session_state[FLASH_KEY] = ("ok" if not failed else "warn", message, rows)
    ui.clear_caches()
    return True


def _go(finding_id: str | None) -> None:
    """Open ``finding_id`` (None: none). Session state first; the page's drawing puts it in
    the address (``?finding=``), so a callback cut short still leaves the cursor moved."""
    st.session_state.pop(PENDING_KEY, None)
    if finding_id is None:
        st.session_state.pop(CURRENT_KEY, None)
        if "finding" in st.query_params:
            del st.query_params["finding"]
    else:
        st.session_state[CURRENT_KEY] = finding_id


def _step(current: str | None, ids: list[str], step: int) -> str | None:
    """The finding ``step`` rows from ``current`` on the page (the first when it is not)."""
    if not ids:
        return None
    if current not in ids:
        return ids[0]
    i = ids.index(current) + step
    return ids[i] if 0 <= i < len(ids) else None


def _after_action(current: str, ids: list[str]) -> None:
    """Open the finding after the one just worked (it may leave the list)."""
    nxt = _step(current, ids, 1) or _step(current, ids, -1)

    _go(nxt if nxt != current else None)


def _fresh(turn: int, current: str | None) -> bool:
    """True for the first click of the bar drawn at ``turn`` for ``current`` (then the turn
    advances).

    A click that reaches the server again, or one on a bar drawn before an action, finds
    the turn passed or comes from a page that showed another finding (the address it was
    sent from names the finding in view), and does nothing: it never acts on the finding
    opened after it. Redrawing the page without an action keeps the turn (a rerun in
    between loses no key).
    """
    shown = st.query_params.get("finding")
    if turn != st.session_state.get(TURN_KEY, 0) or shown not in (None, current):
        return False
    st.session_state[TURN_KEY] = turn + 1
    return True


def _flash_error(message: str) -> None:
    st.session_state[FLASH_KEY] = ("error", message, [])


def _on_triage(turn: int, action: str, current: str, ids: list[str]) -> None:
    """A triage-bar button (or its key): act on ``current``, the finding the bar was drawn
    for, then open the next one of ``ids`` (the page as drawn) when it leaves the list."""
    if not _fresh(turn, current):
        return
    if action in ("next", "prev"):
        _go(_step(current, ids, 1 if action == "next" else -1))
    elif action == "quarantine":
        st.session_state[PENDING_KEY] = ("one", "quarantine", [current], None)
    elif action == "acknowledge":  # the finding stays in view
        _intend([current], "acknowledge", {}, current, ids, advance=False)
    elif action == "dismiss":
        choice = st.session_state.get("tri_reason_pick")
        typed = str(st.session_state.get("tri_note") or "").strip()
        reason = typed if (choice in (None, OTHER_REASON) or typed) else str(choice)
        if not reason:
            _flash_error(
                "Dismissing needs a reason: pick one of the known false positives or type one."
            )
        else:
            _intend([current], "dismiss", {"reason": reason}, current, ids, advance=True)
    else:  # resolve, escalate
        note = st.session_state.get("tri_note") or None
        _intend([current], action, {"reason": note}, current, ids, advance=True)


def _on_confirm(turn: int, current: str, ids: list[str]) -> None:
    """Run the action waiting for its confirmation (one finding, or a bulk selection)."""
    if not _fresh(turn, current):
        return
    pending = st.session_state.pop(PENDING_KEY, None)
    if pending is None:
        return
    scope, action, targets, pending_reason = pending
    kwargs: dict[str, Any] = {}
    if pending_reason and str(pending_reason).strip():
        kwargs["reason"] = str(pending_reason).strip()
    advance = scope == "one" and current in targets
    _intend(list(targets), action, kwargs, current, ids, advance=advance)


def _intend(
    targets: list[str],
    action: str,
    kwargs: dict[str, Any],
    current: str,
    ids: list[str],
    *,
    advance: bool,
) -> None:
    """Keep the action in the session, then carry it out (:func:`_carry_out`)."""
    st.session_state[INTENT_KEY] = (targets, action, kwargs, current, ids, advance)
    _carry_out()


def _carry_out() -> None:
    """Run the action a click asked for, then open the next finding; forget it last.

    Streamlit stops a script run (callbacks too) at any session-state access when the
    browser sends another message, so a callback can be cut short after the action and
    before the cursor moved. The page calls this again at the start of every run: an
    action still kept is run again (every action is idempotent) and the cursor moved.
    """
    intent = st.session_state.get(INTENT_KEY)
    if intent is None:
        return
    targets, action, kwargs, current, ids, advance = intent
    if _run(targets, action, in_callback=True, **kwargs) and advance:
        _after_action(current, ids)
    st.session_state.pop(INTENT_KEY, None)


def _on_cancel(turn: int, current: str) -> None:
    if _fresh(turn, current):
        st.session_state.pop(PENDING_KEY, None)


_carry_out()  # an action whose callback was cut short
flash = st.session_state.pop(FLASH_KEY, None)
if flash is not None:
    kind, message, rows = flash
    {"ok": st.success, "error": st.error}.get(kind, st.warning)(ui.esc(message))
    if rows:
        ui.table(pd.DataFrame(rows), key="queue_flash_outcomes")

# -- filters ---------------------------------------------------------------------------------

# Rule titles and the rule filter come from the rule pack (loaded once per process): no
# statistics query on every rerun.
pack = ui.rule_pack(db)
titles = {r.id: r.title for r in pack.rules} if pack is not None else {}
rule_ids = list(titles)

with st.expander("Filters and sorting", expanded=False, key="queue_filters_expander"):
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
    sort_key = row3[0].selectbox(
        "Sort by",
        access_findings.QUEUE_SORTS,
        index=access_findings.QUEUE_SORTS.index(SORT_DEFAULT),
        key="queue_sort",
    )
    descending = row3[1].toggle("Descending", value=True, key="queue_desc")
    page_size = row3[2].selectbox("Rows per page", [25, 50, 100, 200], index=1, key="queue_size")

try:
    flt = access_findings.QueueFilter(
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
# Most severe first; within a severity, newest first (the service breaks ties by id).
sort = f"-{sort_key}" if descending else sort_key

signature = repr((flt, sort, page_size))
if st.session_state.get(SIG_KEY) != signature:  # new filters: back to page 1, no selection
    st.session_state[SIG_KEY] = signature
    st.session_state["queue_page"] = 1
    _clear_selection()

page_no = int(st.session_state.get("queue_page", 1))
ok, page = ui.call(
    access_findings.review_queue, db, actor, flt, page_no, int(page_size), sort, ui.view_log()
)
if not ok or page is None:
    st.stop()
if page_no > page.pages:
    st.session_state["queue_page"] = page.pages
    st.rerun()

# -- the page of findings (master) -------------------------------------------------------------

rows = page.rows
ids = [r["finding_id"] for r in rows]
# The table's key names its rows: other rows are a new table (in the browser too), so a
# selection, which is by position, never carries over to findings that were not selected.
table_key = f"queue_table_{st.session_state.get(TABLE_GEN_KEY, 0)}_{ui.widget_id(' '.join(ids))}"
if st.session_state.get(LAST_SEL_KEY) and table_key not in st.session_state:
    st.session_state.pop(LAST_SEL_KEY, None)
table = pd.DataFrame(
    [
        {
            "severity": r["severity"],
            "rule": ui.plain(titles.get(r["rule_id"], r["rule_id"])),
            "subject": ui.plain(", ".join(sorted({m["subject"] for m in r["memories"]}))),
            "reason": ui.plain(r.get("reason") or ""),
            "snippet (redacted)": ui.plain(r.get("snippet") or ""),
            "status": r["status"],
            "age (days)": r["age_days"],
            "finding_id": r["finding_id"],
        }
        for r in rows
    ],
    columns=[
        "severity",
        "rule",
        "subject",
        "reason",
        "snippet (redacted)",
        "status",
        "age (days)",
        "finding_id",
    ],
)
head = st.columns([3, 1, 1])
head[0].caption(
    f"Showing {len(rows)} of {page.total} matching findings (page {page.page} of {page.pages}). "
    "Select a row to open it; select several to act on them together. Keys: j/k next and "
    "previous, a acknowledge, r resolve, d dismiss, q quarantine, e escalate, y confirm, "
    "n cancel."
)
head[1].number_input(
    f"Page (of {page.pages})", min_value=1, max_value=page.pages, step=1, key="queue_page"
)
head[2].metric("Matching", page.total)
if not rows:
    st.info("No finding matches these filters.", icon=":material/inbox:")

with st.container(key="queue_list"):
    event = st.dataframe(
        table,
        hide_index=True,
        on_select="rerun",
        selection_mode="multi-row",
        key=table_key,
        column_config={
            "reason": st.column_config.TextColumn(width="large"),
            "snippet (redacted)": st.column_config.TextColumn(width="large"),
        },
    )
selected_rows = [i for i in event.selection.rows if 0 <= i < len(ids)]  # type: ignore[attr-defined]
clicked = [ids[i] for i in selected_rows]
selected = list(clicked)
pick = st.columns([1, 1, 4])
if pick[0].button("Select the whole page", key="queue_select_page", disabled=not rows):
    st.session_state[PAGE_ALL_KEY] = (signature, page_no)
if pick[1].button("Clear the selection", key="queue_clear_selection"):
    _clear_selection()
    st.rerun()
if st.session_state.get(PAGE_ALL_KEY) == (signature, page_no):
    selected = list(ids)

# The finding in view: a link (?finding=), a newly selected row, next/previous.
linked = st.query_params.get("finding")
previous_selection = st.session_state.get(LAST_SEL_KEY, [])
if clicked != previous_selection:
    st.session_state[LAST_SEL_KEY] = clicked
    added = [f for f in clicked if f not in previous_selection]
    if added:
        st.session_state[CURRENT_KEY] = added[-1]
        st.session_state.pop(PENDING_KEY, None)
if CURRENT_KEY not in st.session_state and linked:
    st.session_state[CURRENT_KEY] = linked
current = st.session_state.get(CURRENT_KEY)
if current is None and ids:
    current = ids[0]


# -- bulk: several rows selected ----------------------------------------------------------------

if len(selected) > 1:
    with st.container(border=True, key="queue_bulk"):
        st.markdown(f"**{len(selected)} findings selected**")
        bulk_cols = st.columns([2, 3, 1])
        bulk_action = bulk_cols[0].selectbox(
            "Bulk action",
            ["acknowledge", "resolve", "dismiss", "quarantine", "restore", "escalate", "reopen"],
            format_func=lambda a: f"{a}: {access_actions.ACTION_HELP.get(a, '')}",
            key="bulk_action",
        )
        bulk_reason = bulk_cols[1].text_input(
            "Reason (required to dismiss; recorded, scrubbed of personal data)", key="bulk_reason"
        )
        if bulk_cols[2].button("Preview", key="bulk_preview", type="primary"):
            st.session_state[PENDING_KEY] = ("bulk", bulk_action, list(selected), bulk_reason)
            st.rerun()

# -- one finding in detail ---------------------------------------------------------------------

if current is None:
    st.caption("Nothing to open (or open a link with ?finding=ID).")
    st.stop()
if st.query_params.get("finding") != current:
    st.query_params["finding"] = current

ok, detail = ui.call(access_findings.finding_detail, db, actor, current, pack, ui.view_log())
if not ok or detail is None:
    if st.button("Back to the first finding of the list", key="queue_reset"):
        _go(ids[0] if ids else None)
        st.rerun()
    st.stop()
finding = detail["finding"]
rule_info = detail["rule"]
evidence = finding.get("evidence") or {}
fps: list[str] = list(rule_info["false_positives"]) if rule_info is not None else []


def _highlighted(snippet: str) -> str:
    """Markdown of a redacted snippet with every mask ([EMAIL], [SECRET]...) highlighted,
    built from escaped pieces only: no text of the snippet can become Markdown."""
    out: list[str] = []
    pos = 0
    for m in _MASK.finditer(snippet):
        out.append(ui.esc(snippet[pos : m.start()]))
        out.append(f":orange-background[**{ui.esc(m.group())}**]")
        pos = m.end()
    out.append(ui.esc(snippet[pos:]))
    return "".join(out) or "_(no snippet)_"


st.divider()
position = f"{ids.index(current) + 1} of {len(ids)} on this page" if current in ids else "linked"
title = rule_info["title"] if rule_info is not None else finding["rule_id"]
st.subheader(f"{ui.esc(title)}")
st.caption(
    ui.esc(
        f"{finding['severity']} · {finding['category']} · {finding['status']} · "
        f"finding {finding['finding_id']} · {position}"
    )
)

# triage bar: the keyboard path (the callbacks act before the next drawing of the page)
turn = int(st.session_state.get(TURN_KEY, 0))
closed = finding["status"] in ("resolved", "dismissed", "suppressed")
bar = st.columns(8)
for col, (label, key, tri_action, disabled) in zip(
    bar,
    (
        ("← Previous (k)", "tri_prev", "prev", _step(current, ids, -1) is None),
        ("Next (j) →", "tri_next", "next", _step(current, ids, 1) is None),
        ("Acknowledge (a)", "tri_acknowledge", "acknowledge", False),
        ("Resolve (r)", "tri_resolve", "resolve", False),
        ("Dismiss (d)", "tri_dismiss", "dismiss", False),
        ("Quarantine (q)", "tri_quarantine", "quarantine", False),
        ("Escalate (e)", "tri_escalate", "escalate", closed),
    ),
    strict=False,
):
    col.button(
        label,
        key=key,
        disabled=disabled,
        on_click=_on_triage,
        args=(turn, tri_action, current, list(ids)),
    )

reason_cols = st.columns([2, 3])
reason_cols[0].selectbox(
    "Dismiss reason (the rule's known false positives)",
    [*fps, OTHER_REASON],
    key="tri_reason_pick",
)
reason_cols[1].text_input(
    "Note or another reason (recorded, scrubbed of personal data)", key="tri_note"
)

# a destructive or bulk action waiting for its confirmation
pending = st.session_state.get(PENDING_KEY)
if pending is not None:
    scope, action, targets, pending_reason = pending
    ok, preview = ui.call(access_review.preview_action, db, actor, targets, action)
    if ok and preview is not None:
        with st.container(border=True, key="queue_confirm"):
            st.warning(f"This {ui.esc(preview.sentence())}.", icon=":material/preview:")
            confirm_cols = st.columns([1, 1, 4])
            confirm_cols[0].button(
                "Confirm (y)",
                key="tri_confirm",
                type="primary",
                on_click=_on_confirm,
                args=(turn, current, list(ids)),
            )
            confirm_cols[1].button(
                "Cancel (n)", key="tri_cancel", on_click=_on_cancel, args=(turn, current)
            )

left, right = st.columns([3, 2])
with left:
    st.markdown("**Redacted evidence** (flagged parts highlighted)")
    snippets = evidence.get("snippets") or {}
    if not snippets:
        st.caption("This finding has no snippet.")
    for mid, snippet in snippets.items():
        with st.container(border=True):
            st.caption(ui.esc(f"memory {mid}"))
            st.markdown(_highlighted(str(snippet)))
    context = [str(c) for c in evidence.get("context_ids") or []]
    if context:  # e.g. the newer memory of a superseded one left active: shown, not flagged
        st.caption(
            ui.esc(
                "Also about, not flagged and not acted on: "
                + ", ".join(f"memory {c}" for c in context)
            )
        )
    if evidence.get("reason"):
        st.text(ui.plain(f"Detector {evidence.get('detector')}: {evidence['reason']}"))
with right:
    st.markdown("**Why this rule flags**")
    if rule_info is not None:
        st.caption(ui.esc(rule_info["description"]))
        if fps:
            st.markdown("**Known false positives**")
            for fp in fps:
                st.text(ui.plain(f"- {fp}"))
    else:
        st.caption("This rule is no longer in the rule pack.")
    st.text(
        ui.plain(
            f"first seen {finding['first_seen']}, last seen {finding['last_seen']}\n"
            f"assignee {finding['assignee'] or '-'}, resolution {finding['resolution'] or '-'}"
            f" by {finding['resolved_by'] or '-'}"
        )
    )

related = detail.get("related") or []
if related:
    st.markdown(f"**Other open findings of the same memory** ({len(related)})")
    for r in related:
        cols = st.columns([5, 1])
        cols[0].caption(
            ui.esc(f"{r['severity']} · {titles.get(r['rule_id'], r['rule_id'])} · {r['reason']}")
        )
        if cols[1].button("Open", key=f"queue_related_{ui.widget_id(r['finding_id'])}"):
            _go(r["finding_id"])
            st.rerun()

for i, item in enumerate(detail["memories"]):
    memory = item["memory"]
    mid = memory["memory_id"]
    st.markdown(f"**Memory {i + 1}:** {ui.esc(mid)}")
    st.page_link(
        "views/memory_explorer.py",
        label="Open in the memory explorer",
        icon=":material/search:",
        query_params={"memory": str(mid)},
    )
    mleft, mright = st.columns(2)
    with mleft:
        st.text(
            ui.plain(
                f"subject {memory['subject']}\nnamespace {memory['namespace']}\n"
                f"kind {memory['kind']} · category {memory['category']}\n"
                f"status {memory['status']} · trust tier {memory['trust_tier']}\n"
                f"created {memory['created_at']} · updated {memory['updated_at']}"
            )
        )
        with st.expander("Provenance", key=f"queue_prov_{i}"):
            st.json(item["provenance"], expanded=1)
    with mright:
        st.markdown("Supersede chain (oldest first)")
        st.graphviz_chart(ui.chain_dot(item["chain"]))
        st.text(ui.plain(ui.chain_text(item["chain"])))
        if item["chain_dangling_link"]:
            st.warning("The chain has a dangling link (a supersedes id that does not exist).")
        if item["chain_cycle"]:
            st.warning("The chain has a cycle.")

# the full action form (supersede, restore, reopen, suppress...) for what the bar lacks
with st.expander("More actions on this finding", key="queue_more_actions"):
    with st.form("detail_action_form", clear_on_submit=False):
        action = st.selectbox(
            "Action",
            access_actions.ACTIONS,
            format_func=lambda a: f"{a}: {access_actions.ACTION_HELP.get(a, '')}",
            key="detail_action",
        )
        reason = st.text_input(
            "Reason (required to dismiss or suppress; recorded, scrubbed of personal data)",
            key="detail_reason",
        )
        more = st.columns(2)
        superseding = more[0].text_input(
            "Superseding memory id (supersede)", key="detail_superseding"
        )
        approve = more[0].checkbox(
            "I approve a lower tier replacing a higher one (supersede)",
            key="detail_approve_override",
        )
        assignee = more[1].text_input(
            "Assign to admin (escalate; empty: the admins' queue)", key="detail_assignee"
        )
        submitted = st.form_submit_button("Apply to 1 finding", key="detail_apply", type="primary")
    if submitted:
        extra: dict[str, Any] = {"reason": reason.strip() or None}
        if action == "supersede":
            extra["superseding_memory_id"] = superseding.strip() or None
            extra["approve_tier_override"] = approve
        if action == "escalate" and assignee.strip():
            extra["assignee"] = assignee.strip()
        if action in ("quarantine", "delete", "restore"):
            st.session_state[PENDING_KEY] = ("one", action, [current], extra["reason"])
            st.rerun()
        elif _run([current], action, **extra):
            st.rerun()
