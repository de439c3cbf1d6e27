"""What an erasure receipt may claim: per store, what was deleted, searched, and may remain.

A receipt is a legal statement, so it never overstates (issue 11, item 1). For memaudit's
own store and for each live source it lists:

* ``deleted``: what was removed (counts);
* ``searched``: where and for how many values (tables, columns, files; values are counted,
  never printed);
* ``found``: places where the subject id or one of its values was still found;
* ``may_hold``: places that may still hold the subject, each with its reason (a place that
  could not be searched, rows without an owner, a source configured without write-back,
  short values that can only be matched as whole tokens, a detector that was unavailable);
* ``verified``: nothing found **and** nothing that may hold the subject.

``verified`` at the top is true only when every store verified and the audit chain holds.
``verdict`` says it in one word: ``verified``, ``not verified`` (something was found),
``incomplete`` (nothing found, but a copy may exist where the search could not reach) or
``nothing held`` (the subject was erased before; only its id could be searched for).

``limits`` names what no SQL search can reach (PostgreSQL's dead row versions, WAL and
replicas): stated on every PostgreSQL receipt, see ``docs/erasure.md``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from auditor.store.residue import Hit

__all__ = [
    "KIND_SHORT",
    "VERDICT_INCOMPLETE",
    "VERDICT_NOTHING_HELD",
    "VERDICT_NOT_VERIFIED",
    "VERDICT_VERIFIED",
    "ReceiptFacts",
    "assess",
]

#: The kind of needle of a short value matched as a whole token.
KIND_SHORT = "short value (whole token)"
VERDICT_VERIFIED = "verified"
VERDICT_NOT_VERIFIED = "not verified"
VERDICT_INCOMPLETE = "incomplete"
VERDICT_NOTHING_HELD = "nothing held"

_DELETED_KEYS = (
    "memories",
    "consents",
    "principals",
    "findings_deleted",
    "findings_updated",
    "finding_links_deleted",
    "audit_events_redacted",
    "other_requests_closed",
    "tombstones",
)
_PG_LIMIT = (
    "PostgreSQL: dead row versions in data files, index entries, WAL segments, archives and "
    "replicas are below SQL and were not searched; they keep erased text until overwritten "
    "or expired (docs/erasure.md, PostgreSQL caveats)"
)


@dataclass
class ReceiptFacts:
    """What the erasure knows when it writes the receipt (no personal data).

    Attributes:
        dialect: ``sqlite`` or ``postgresql``.
        counts: the erasure's counts.
        hits: what verification found.
        searched: tables, columns, files, values searched by verification.
        files: names of the files searched (database file, WAL, logs).
        unsearchable: places verification could not search.
        value_stats: how the identifying values were collected.
        held_before: what the store held of the subject just before the erasure.
        sources: per write-back source, what its connector reported.
        read_only_sources: source name -> the subject's items it held (sources without
            write-back: not erased there).
        unowned: ``<kind>:<source>`` subjects of rows without an owner -> row count.
        min_value_chars: the ``erasure_min_value_chars`` setting.
        chain_ok: whether the audit chain verifies.
    """

    dialect: str
    counts: dict[str, Any]
    hits: tuple[Hit, ...]
    searched: dict[str, int]
    files: list[str]
    unsearchable: tuple[str, ...]
    value_stats: dict[str, Any]
    held_before: dict[str, int] = field(default_factory=dict)
    sources: dict[str, dict[str, Any]] = field(default_factory=dict)
    read_only_sources: dict[str, int] = field(default_factory=dict)
    unowned: dict[str, int] = field(default_factory=dict)
    min_value_chars: int = 6
    chain_ok: bool = True


def _own_may_hold(facts: ReceiptFacts, nothing_held: bool) -> list[dict[str, str]]:
    out: list[dict[str, str]] = []
    for place in facts.unsearchable:
        out.append({"place": place, "reason": "could not be searched"})
    for hit in facts.hits:
        if hit.kind == KIND_SHORT:
            out.append(
                {
                    "place": hit.place,
                    "reason": f"{hit.count} match(es) of a value of the subject shorter than "
                    f"{facts.min_value_chars} characters, matched as a whole token: it may be "
                    "unrelated text; check it",
                }
            )
    stats = facts.value_stats
    if stats.get("too_short_to_search"):
        out.append(
            {
                "place": "every table and file",
                "reason": f"{stats['too_short_to_search']} value(s) of the subject shorter than "
                "3 characters cannot be searched for",
            }
        )
    if stats.get("pii_detector") not in (None, "ok"):
        out.append(
            {
                "place": "every table and file",
                "reason": f"the PII detector was {stats['pii_detector']}: PII copied out of the "
                "subject's facts was searched for only as part of whole facts",
            }
        )
    values = int(stats.get("searched", 0)) + int(stats.get("short_searched", 0))
    if not nothing_held and facts.held_before.get("memories", 0) and values == 0:
        out.append(
            {
                "place": "every table and file",
                "reason": "no identifying value could be collected from the subject's memories: "
                "only the subject id was searched for",
            }
        )
    for subject_kind, rows in sorted(facts.unowned.items()):
        out.append(
            {
                "place": f"memories of {subject_kind} ({rows} rows)",
                "reason": "rows without an owner (their owner was gone from the source before "
                "memaudit first synced it): they may hold this subject's data and were searched "
                "only for the values memaudit knew of the subject",
            }
        )
    if nothing_held:
        out.append(
            {
                "place": "memaudit",
                "reason": "nothing was held for this subject (it was erased before): only the "
                "subject id could be searched for",
            }
        )
    return out


def _own_store(facts: ReceiptFacts, nothing_held: bool) -> dict[str, Any]:
    found = [h.as_dict() for h in facts.hits if h.kind != KIND_SHORT]
    may_hold = _own_may_hold(facts, nothing_held)
    stats = facts.value_stats
    store: dict[str, Any] = {
        "deleted": {k: facts.counts[k] for k in _DELETED_KEYS if k in facts.counts},
        "searched": {
            "tables": facts.searched.get("tables", 0),
            "columns": facts.searched.get("columns", 0),
            "files": list(facts.files),
            "statistics": "pg_stats" if facts.dialect == "postgresql" else "sqlite_stat4",
            "values": {
                "subject_id": 1,
                "identifying": int(stats.get("searched", 0)),
                "short_whole_tokens": int(stats.get("short_searched", 0)),
            },
        },
        "found": found,
        "may_hold": may_hold,
        "verified": not found and not may_hold,
    }
    if facts.dialect == "postgresql":
        store["limits"] = [_PG_LIMIT]
    return store


def _source_store(name: str, result: dict[str, Any]) -> dict[str, Any]:
    may_hold: list[dict[str, Any]] = []
    for entry in result.get("may_hold") or []:
        if isinstance(entry, dict):
            item: dict[str, Any] = {
                "place": str(entry.get("place", name)),
                "reason": str(entry.get("reason") or "reported by the connector"),
            }
            if isinstance(entry.get("count"), int):
                item["count"] = entry["count"]
            may_hold.append(item)
        else:
            may_hold.append({"place": str(entry), "reason": "reported by the connector"})
    if result.get("error"):
        may_hold.append({"place": f"source {name}", "reason": "the erasure there failed"})
    if result.get("status") == "skipped":
        may_hold.append({"place": f"source {name}", "reason": "the erasure there did not run"})
    found = [
        {"place": str(p), "kind": "subject data", "count": 1} for p in result.get("remaining") or []
    ]
    searched = result.get("searched")
    return {
        "deleted": dict(result.get("counts") or {}),
        "searched": searched if searched is not None else "not reported by the connector",
        "found": found,
        "may_hold": may_hold,
        "notes": list(result.get("notes") or []),
        "verified": bool(result.get("verified")) and not found and not may_hold,
    }


def assess(facts: ReceiptFacts) -> dict[str, Any]:
    """The receipt's ``stores``, ``verified`` and ``verdict`` fields.

    Args:
        facts: what the erasure did and found.

    Returns:
        ``{"stores": ..., "verified": bool, "verdict": str}``.
    """
    nothing_held = not any(facts.held_before.values())
    stores: dict[str, Any] = {"memaudit": _own_store(facts, nothing_held)}
    for name, result in sorted(facts.sources.items()):
        stores[f"source {name}"] = _source_store(name, result)
    for name, items in sorted(facts.read_only_sources.items()):
        reason = (
            f"configured without write-back: the subject's {items} item(s) there were not "
            "erased (erase them in the source)"
            if items
            else "configured without write-back: not erased or searched; it may hold the subject"
        )
        stores[f"source {name}"] = {
            "deleted": {},
            "searched": "not searched",
            "found": [],
            "may_hold": [{"place": f"source {name}", "reason": reason}],
            "notes": [],
            "verified": False,
        }
    verified = facts.chain_ok and all(s["verified"] for s in stores.values())
    any_found = any(s["found"] for s in stores.values())
    if verified:
        verdict = VERDICT_VERIFIED
    elif any_found or not facts.chain_ok:
        verdict = VERDICT_NOT_VERIFIED
    elif nothing_held:
        verdict = VERDICT_NOTHING_HELD
    else:
        verdict = VERDICT_INCOMPLETE
    return {"stores": stores, "verified": verified, "verdict": verdict}
