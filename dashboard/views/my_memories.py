"""My memories (users): everything remembered about me, where it came from, why flagged.

Only the signed-in user's own subject is ever asked for: the services take it from the
account, and a memory id typed here or passed as ``?memory=ID`` that is not one of theirs
is refused (and recorded as ``access.denied``) by :func:`auditor.access.my_memory`.
"""

from __future__ import annotations

import streamlit as st
import ui

from auditor import access
from auditor.errors import AccessDenied, MemauditError

OPEN_KEY = "mm_open_id"
DENIED_KEY = "_mm_denied"
FLASH_KEY = "_mm_flash"
NEXT_KEY = "_mm_next_open"

actor = ui.page_actor(ui.USER_ROLES)
db = ui.store()
st.title("My memories")
st.caption(
    "Everything AI agents remembered about you, including what was replaced, hidden or "
    "deleted and is still held. You can correct or delete a memory, download everything, "
    "or have everything erased (Download or erase)."
)

flash = st.session_state.pop(FLASH_KEY, None)
if flash is not None:
    st.success(flash)

if NEXT_KEY in st.session_state:  # set by an action below, applied before the widget exists
    st.session_state[OPEN_KEY] = st.session_state.pop(NEXT_KEY)
linked = st.query_params.get("memory")
if linked is not None:  # a link to one memory: open it (the service decides whose it is)
    st.session_state[OPEN_KEY] = linked
    del st.query_params["memory"]


def _open(memory_id: str) -> None:
    st.session_state[OPEN_KEY] = memory_id


# -- one memory --------------------------------------------------------------------------------

st.text_input("Memory id", key=OPEN_KEY, help="Open one memory: pick it below or paste its id.")
memory_id = str(st.session_state.get(OPEN_KEY) or "").strip()
if memory_id:
    denied = st.session_state.get(DENIED_KEY)
    if denied is not None and denied[0] == memory_id:  # shown again, not asked (and logged) again
        st.error(f"Access denied: {ui.esc(denied[1])}", icon=":material/block:")
        memory = None
    else:
        try:
            memory = access.my_memory(db, actor, memory_id)
        except AccessDenied as exc:
            st.session_state[DENIED_KEY] = (memory_id, str(exc))
            st.error(f"Access denied: {ui.esc(str(exc))}", icon=":material/block:")
            memory = None
        except MemauditError as exc:
            st.error(ui.esc(str(exc)))
            memory = None
    if memory is not None:
        with st.container(border=True, key="mm_detail"):
            st.markdown(f"**Memory** {ui.esc(memory['memory_id'])}")
            st.text(memory["fact"])
            source = memory["source"]
            st.text(
                f"status {memory['status']} · trust tier {memory['trust_tier']} · "
                f"category {memory['category']} · namespace {memory['namespace']}\n"
                f"from {source['type'] or 'unknown source'}"
                + (f", session {source['session_id']}" if source["session_id"] else "")
                + (f", turn {source['turn']}" if source["turn"] is not None else "")
                + (f", {source['uri']}" if source["uri"] else "")
                + f" ({memory['origin'] or 'direct'})\n"
                f"created {memory['created_at']} · updated {memory['updated_at']}"
                + (f" · expires {memory['expires_at']}" if memory["expires_at"] else "")
                + (f" · deleted {memory['deleted_at']}" if memory["deleted_at"] else "")
            )
            for flag in memory["flags"]:
                st.warning(
                    f"Flagged ({ui.esc(flag['severity'])}, {ui.esc(flag['status'])}): "
                    f"{ui.esc(flag['title'])}. {ui.esc(flag['reason'] or '')}",
                    icon=":material/flag:",
                )
            if len(memory["chain"]) > 1:
                st.markdown("History (oldest first)")
                st.graphviz_chart(ui.chain_dot(memory["chain"]))
                st.text(ui.chain_text(memory["chain"]))
            with st.form("mm_correct_form", clear_on_submit=True):
                new_fact = st.text_area("What is true instead", key="mm_correct_text")
                correct = st.form_submit_button("Correct it", key="mm_correct_submit")
            if correct:
                ok, new = ui.call(access.correct_my_memory, db, actor, memory_id, new_fact)
                if ok and new is not None:
                    st.session_state[FLASH_KEY] = (
                        f"Corrected: the new memory {new['memory_id']} replaces the old one."
                    )
                    st.session_state[NEXT_KEY] = new["memory_id"]
                    st.rerun()
            row = st.columns([2, 1])
            sure = row[0].checkbox(
                "Delete this memory (it is hidden at once and purged after the retention time)",
                key="mm_delete_confirm",
            )
            if row[1].button("Delete", key="mm_delete", disabled=not sure):
                ok, _ = ui.call(access.delete_my_memory, db, actor, memory_id)
                if ok:
                    st.session_state[FLASH_KEY] = "Deleted at your request."
                    st.rerun()

# -- everything, grouped -----------------------------------------------------------------------

ok, data = ui.call(access.my_memories, db, actor)
if not ok or data is None:
    st.stop()
counts = data["counts"]
cols = st.columns(1 + len(counts["by_status"]))
cols[0].metric("Memories held", counts["memories"])
for col, (status, n) in zip(cols[1:], counts["by_status"].items(), strict=True):
    col.metric(status.capitalize(), n)
if not data["groups"]:
    st.info("Nothing is remembered about you.", icon=":material/inbox:")

for gi, group in enumerate(data["groups"]):
    flagged = sum(1 for m in group["memories"] if m["flags"])
    label = f"{group['category']} · {group['namespace']} ({len(group['memories'])})"
    if flagged:
        label += f" · {flagged} flagged"
    with st.expander(ui.esc(label), expanded=gi < 3, key=f"mm_group_{gi}"):
        for m in group["memories"]:
            st.text(m["fact"] if len(m["fact"]) <= 600 else m["fact"][:600] + " ...")
            source = m["source"]["type"] or "unknown source"
            row = st.columns([5, 1])
            row[0].caption(
                ui.esc(
                    f"{m['memory_id']} · {m['status']} · {m['trust_tier']} tier · from {source} "
                    f"· created {m['created_at']}"
                    + (f" · replaced by {m['superseded_by']}" if m["superseded_by"] else "")
                )
            )
            row[1].button(
                "Open", key=f"mm_open_{m['memory_id']}", on_click=_open, args=(m["memory_id"],)
            )
            for flag in m["flags"]:
                st.caption(
                    ui.esc(
                        f"flagged: {flag['title']} ({flag['severity']}, {flag['status']})"
                        + (f": {flag['reason']}" if flag["reason"] else "")
                    )
                )
            st.divider()
