"""Rules (officers): the pack, each rule's status, hits and false-positive rate from reviews."""

from __future__ import annotations

import pandas as pd
import streamlit as st
import ui

actor = ui.page_actor(ui.OFFICER_ROLES)
db = ui.store()
st.title("Rules")
st.caption(
    "Hits are every finding a rule raised; the false-positive rate is dismissed or suppressed "
    "findings over findings a person reviewed (resolved, dismissed, suppressed)."
)
ok, stats = ui.call(ui.cached_rule_stats, db, actor)
if not ok or stats is None:
    st.stop()
table = pd.DataFrame(
    [
        {
            "rule": r["id"],
            "title": r["title"],
            "maturity": r["status"],
            "severity": r["severity"],
            "category": r["category"],
            "action": r["action"],
            "hits": r["hits"],
            "open": r["open"],
            "reviewed": r["reviewed"],
            "false positives": r["false_positives"],
            "FP rate": r["false_positive_rate"],
        }
        for r in stats
    ]
)
cols = st.columns(3)
cols[0].metric("Rules in the pack", len(stats))
cols[1].metric("Rules that fired", sum(1 for r in stats if r["hits"]))
cols[2].metric("Reviewed findings", sum(r["reviewed"] for r in stats))
ui.table(
    table,
    key="rules_table",
    column_config={"FP rate": st.column_config.NumberColumn(format="percent")},
)
reviewed = table[table["reviewed"] > 0]
if not reviewed.empty:
    st.subheader("False-positive rate of reviewed rules")
    st.bar_chart(reviewed.set_index("rule")["FP rate"], y_label="FP rate")
