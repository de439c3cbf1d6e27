"""Overview (officers): findings by category and severity over time, scans, the oldest."""

from __future__ import annotations

import pandas as pd
import streamlit as st
import ui

from auditor.rulepack.pack import CATEGORIES

SEVERITY_COLOURS = {"critical": "#7f0000", "high": "#d7301f", "medium": "#fc8d59", "low": "#fdcc8a"}

actor = ui.page_actor(ui.OFFICER_ROLES)
db = ui.store()

st.title("Overview")
days = st.select_slider(
    "Window (days)", options=[7, 14, 30, 90, 180, 365], value=30, key="overview_days"
)
ok, data = ui.call(ui.cached_overview, db, actor, int(days))
if not ok or data is None:
    st.stop()

open_ = data["open"]
cols = st.columns(5)
cols[0].metric("Open findings", open_["total"])
for col, severity in zip(cols[1:], ("critical", "high", "medium", "low"), strict=True):
    col.metric(severity.capitalize(), open_["by_severity"].get(severity, 0))

oldest = data["oldest_untriaged"]
st.subheader("Oldest untriaged finding")
if oldest is None:
    st.success("No open finding waits for triage.", icon=":material/done_all:")
else:
    st.text(
        f"{oldest['finding_id']}  {oldest['severity']}  {oldest['category']}  "
        f"{oldest['rule_id']}  first seen {oldest['first_seen']} ({oldest['age_days']} days)"
    )
    st.page_link(
        "views/review_queue.py",
        label="Open it in the review queue",
        icon=":material/arrow_forward:",
        query_params={"finding": oldest["finding_id"]},
    )

by_day = pd.DataFrame(data["by_day"], columns=["day", "category", "severity", "count"])
left, right = st.columns(2)
with left:
    st.subheader("New findings by category")
    if by_day.empty:
        st.caption("No finding in this window.")
    else:
        st.bar_chart(
            # every category in the legend, also those with no finding in the window
            by_day.pivot_table(
                index="day", columns="category", values="count", aggfunc="sum"
            ).reindex(columns=list(CATEGORIES), fill_value=0),
            x_label="day (UTC)",
            y_label="findings",
        )
with right:
    st.subheader("New findings by severity")
    if not by_day.empty:
        by_severity = by_day.pivot_table(
            index="day", columns="severity", values="count", aggfunc="sum"
        )
        present = [s for s in SEVERITY_COLOURS if s in by_severity.columns]
        st.bar_chart(
            by_severity[present],
            x_label="day (UTC)",
            y_label="findings",
            color=[SEVERITY_COLOURS[s] for s in present],
        )

left, right = st.columns(2)
with left:
    st.subheader("Open by category")
    ui.table(
        pd.DataFrame(
            [(c, open_["by_category"].get(c, 0)) for c in CATEGORIES],
            columns=["category", "open findings"],
        ),
        key="overview_by_category",
    )
with right:
    st.subheader("All findings by status")
    ui.table(
        pd.DataFrame(sorted(data["by_status"].items()), columns=["status", "findings"]),
        key="overview_by_status",
    )

st.subheader("Scan history and health")
scans = data["scans"]
if not scans:
    st.warning("No scan has run yet: start the daemon or run `memaudit scan`.")
else:
    last = scans[0]
    failed = [s for s in scans if s["status"] not in ("completed", "running")]
    errors = sum(int(s.get("error_count") or 0) for s in scans)
    health = st.columns(3)
    health[0].metric("Last scan", str(last["status"]), help=str(last["started_at"]))
    health[1].metric("Failed scans (recent)", len(failed))
    health[2].metric("Detector errors (recent)", errors)
    ui.table(pd.DataFrame(scans), key="overview_scans")
st.caption(f"Generated {ui.esc(data['generated_at'])} (cached for 30 seconds).")
