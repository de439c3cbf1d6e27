"""My memories (users): everything remembered about me, where it came from, why flagged.

Only the signed-in user's own subject is ever asked for: the services take it from the
account, and a memory id typed here or passed as ``?memory=ID`` that is not one of theirs
is refused (and recorded as ``access.denied``) by :func:`auditor.access.user.my_memory`.

Plain words: where a memory came from and why it was flagged are said the way a person
would (:data:`SOURCE_WORDS`, :data:`FLAG_WORDS`), and each action says what it will do. A
memory opened with its "Open" button is drawn right below that button (where the person is
looking); one opened by id or link is drawn at the top. The delete confirmation is keyed by
the memory and cleared after every action, so it never carries over to another memory.
"""

from __future__ import annotations

import streamlit as st
import ui

from auditor.access import user as access_user
from auditor.errors import AccessDenied, MemauditError

OPEN_KEY = "mm_open_id"
DENIED_KEY = "_mm_denied"
FLASH_KEY = "_mm_flash"
NEXT_KEY = "_mm_next_open"
#: The memory opened with its "Open" button (drawn in place, not at the top).
INLINE_KEY = "_mm_inline"

SOURCE_WORDS = {
    "explicit_statement": "something you said",
    "inferred": "something an assistant guessed about you (not something you said)",
    "external_content": "something read in a web page or document",
    "tool_output": "something a tool returned",
    "system": "a setting of the system",
    "import": "imported from another store",
}
FLAG_WORDS = {
    "sensitive": "it may reveal sensitive personal information (such as health, beliefs, "
    "or an identity number)",
    "secret": "it looks like a password, key or other secret",
    "injection": "it reads like an instruction to the assistant rather than a fact about you",
    "contradiction": "it disagrees with another memory about you",
    "expired": "it is older than the time it should be kept",
    "duplicate": "it repeats another memory",
    "lifecycle": "its history with other memories is inconsistent",
    "trust": "a less reliable source tried to replace something more reliable",
}
STATE_WORDS = {
    "open": "a reviewer will look at it",
    "acknowledged": "a reviewer is looking at it",
    "resolved": "a reviewer dealt with it",
    "dismissed": "a reviewer found no problem",
    "suppressed": "a reviewer found no problem",
}
STATUS_WORDS = {
    "active": "in use",
    "superseded": "replaced by a newer memory (kept as history)",
    "expired": "expired (no longer used)",
    "quarantined": "held back for review (not used)",
    "deleted": "deleted (hidden; purged after the retention time)",
}

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
    st.session_state[INLINE_KEY] = memory_id


def _source_words(source: dict[str, object]) -> str:
    kind = str(source.get("type") or "")
    return SOURCE_WORDS.get(kind, "an unknown source")


def _flag_words(flag: dict[str, object]) -> str:
    why = FLAG_WORDS.get(str(flag.get("category")), "a rule flagged it")
    state = STATE_WORDS.get(str(flag.get("status")), str(flag.get("status")))
    return f"Flagged because {why}; {state}."


def _forget_confirmations() -> None:
    for key in [k for k in st.session_state if str(k).startswith("mm_delete_confirm_")]:
        del st.session_state[key]


def _detail(memory: dict[str, object]) -> None:
    """One memory in full, with what correcting and deleting it will do."""
    mid = str(memory["memory_id"])
    wid = ui.widget_id(mid)
    status_words = STATUS_WORDS.get(str(memory["status"]), str(memory["status"]))
    with st.container(border=True, key=f"mm_detail_{wid}"):
        st.markdown(f"**Memory** {ui.esc(mid)}")
        st.text(ui.plain(memory["fact"]))
        source = memory["source"]
        assert isinstance(source, dict)
        st.text(
            ui.plain(
                f"Where it came from: {_source_words(source)}"
                + (f" ({source['uri']})" if source.get("uri") else "")
                + f"\nWhat happens to it: {status_words}"
                + f"\nWhen: remembered {memory['created_at']}, last changed {memory['updated_at']}"
                + (f", expires {memory['expires_at']}" if memory["expires_at"] else "")
                + (f", deleted {memory['deleted_at']}" if memory["deleted_at"] else "")
            )
        )
        flags = memory["flags"]
        assert isinstance(flags, list)
        for flag in flags:
            st.warning(ui.esc(_flag_words(flag)), icon=":material/flag:")
        chain = memory.get("chain") or []
        assert isinstance(chain, list)
        if len(chain) > 1:
            st.markdown("History (oldest first)")
            st.graphviz_chart(ui.chain_dot(chain))
            st.text(ui.plain(ui.chain_text(chain)))
        sensitive = any(f.get("category") in ("sensitive", "secret") for f in flags)
        st.caption(
            "**Correct it**: write what is true instead. Your words replace this memory"
            + (
                "; because it was flagged as sensitive, the old text is removed, not kept "
                "as history."
                if sensitive
                else "; the old memory is kept as history, marked as replaced."
            )
        )
        with st.form(f"mm_correct_form_{wid}", clear_on_submit=True):
            new_fact = st.text_area("What is true instead", key=f"mm_correct_text_{wid}")
            correct = st.form_submit_button("Correct it", key=f"mm_correct_submit_{wid}")
        if correct:
            ok, new = ui.call(access_user.correct_my_memory, db, actor, mid, new_fact)
            if ok and new is not None:
                removed = " The old text was removed." if new.get("removed_old_text") else ""
                st.session_state[FLASH_KEY] = (
                    f"Corrected: the new memory {new['memory_id']} replaces the old one.{removed}"
                )
                st.session_state[NEXT_KEY] = new["memory_id"]
                _forget_confirmations()
                st.rerun()
        st.caption(
            "**Delete it**: it is hidden from the assistants at once and purged after the "
            "retention time. To remove everything at once, use Download or erase."
        )
        row = st.columns([2, 1])
        confirm_key = f"mm_delete_confirm_{wid}"
        sure = row[0].checkbox(
            "Delete this memory (it is hidden at once and purged after the retention time)",
            key=confirm_key,
        )
        if row[1].button("Delete", key=f"mm_delete_{wid}", disabled=not sure):
            ok, _ = ui.call(access_user.delete_my_memory, db, actor, mid)
            _forget_confirmations()
            if ok:
                st.session_state[FLASH_KEY] = "Deleted at your request."
                st.rerun()


# -- one memory --------------------------------------------------------------------------------

st.text_input("Memory id", key=OPEN_KEY, help="Open one memory: pick it below or paste its id.")
memory_id = str(st.session_state.get(OPEN_KEY) or "").strip()
if st.session_state.get(INLINE_KEY) not in (None, memory_id):
    st.session_state.pop(INLINE_KEY, None)  # an id typed or linked: drawn at the top
memory = None
if memory_id:
    denied = st.session_state.get(DENIED_KEY)
    if denied is not None and denied[0] == memory_id:  # shown again, not asked (and logged) again
        st.error(f"Access denied: {ui.esc(denied[1])}", icon=":material/block:")
        memory = None
    else:
        try:
            memory = access_user.my_memory(db, actor, memory_id, ui.rule_pack(db))
        except AccessDenied as exc:
            st.session_state[DENIED_KEY] = (memory_id, str(exc))
            st.error(f"Access denied: {ui.esc(str(exc))}", icon=":material/block:")
            memory = None
        except MemauditError as exc:
            st.error(ui.esc(str(exc)))
            memory = None
    if memory is not None and st.session_state.get(INLINE_KEY) != memory_id:
        _detail(memory)
        memory = None

# -- everything, grouped -----------------------------------------------------------------------

ok, data = ui.call(access_user.my_memories, db, actor, ui.rule_pack(db))
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
    holds_open = memory is not None and any(m["memory_id"] == memory_id for m in group["memories"])
    with st.expander(ui.esc(label), expanded=gi < 3 or holds_open, key=f"mm_group_{gi}"):
        for m in group["memories"]:
            fact = ui.plain(m["fact"])
            st.text(fact if len(fact) <= 600 else fact[:600] + " ...")
            row = st.columns([5, 1])
            row[0].caption(
                ui.esc(
                    f"{STATUS_WORDS.get(m['status'], m['status'])} · "
                    f"{_source_words(m['source'])} · remembered {m['created_at']}"
                    + (" · replaced by a newer memory" if m["superseded_by"] else "")
                    + f" · id {m['memory_id']}"
                )
            )
            row[1].button(
                "Open", key=f"mm_open_{m['memory_id']}", on_click=_open, args=(m["memory_id"],)
            )
            for flag in m["flags"]:
                st.caption(ui.esc(_flag_words(flag)))
            if memory is not None and m["memory_id"] == memory_id:
                _detail(memory)  # opened with the button above: drawn where the person looks
            st.divider()
