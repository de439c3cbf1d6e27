"""Triage benchmark: an officer works 20 findings of the review queue in a real browser.

Usage::

    .venv/bin/python benchmarks/triage_bench.py                       # 20 findings per path
    .venv/bin/python benchmarks/triage_bench.py --count 10
    .venv/bin/python benchmarks/triage_bench.py --source /tmp/old-checkout   # before/after
    .venv/bin/python benchmarks/triage_bench.py --source /tmp/old-checkout --python .venv/bin/python

It does what ``tests/test_browser.py`` does: a scratch SQLite store loaded with the demo
(``memaudit init --demo``, ``memaudit scan --full``), ``memaudit dashboard --demo-accounts``
on a free port, and Debian's Chromium (``/usr/bin/chromium``, headless) driven by
Playwright. ``--source DIR`` serves another checkout's dashboard (with that checkout's
``.venv`` when it has one, or the interpreter ``--python`` names: its ``PYTHONPATH`` puts
the checkout first), so a before/after pair comes from one machine; the browser side is
this script's.

What it prints:

* **sign-in, cold**: the first page load of a freshly started dashboard (until the sign-in
  form is usable) and the sign-in itself (from the click until the officer's first page has
  finished rendering); then the same in a second browser context (the process is warm);
* **keyboard path**: on the review queue, ``r`` resolves the finding in view and opens the
  next one: 1 interaction per finding;
* **mouse path**: click a row of the queue's table (the first, or the second when the
  first is already open: the detail opens for it), then click "Resolve (r)": 2
  interactions per finding.

A finding's time runs from the first interaction until the next finding is shown and its
triage buttons can be used (the script run finished, nothing on the page is stale). The
figures are the median and the 90th percentile over the findings, and the audit events the
triage wrote per finding (every action is recorded; reads are recorded once per view).

Issue 14's target: fewer than 6 interactions and well under 3 s per finding.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = Path("/usr/bin/chromium")
OFFICER = "demo-officer"
OFFICER_PW = "officer password for the triage benchmark"
USER_PW = "user password for the triage benchmark"
TIMEOUT_MS = 60_000
#: One triage step taking longer than this is stuck (the next finding never opened).
STEP_TIMEOUT_MS = 20_000

#: The page has finished a script run: no "Running..." indicator and nothing stale.
_IDLE_JS = (
    "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')"
    " && !document.querySelector('[data-stale=\"true\"]')"
)
#: ... and the finding in view is not ``arg`` and can be resolved.
_NEXT_READY_JS = (
    "(old) => { const m = location.search.match(/[?&]finding=([^&#]+)/);"
    " if (!m || m[1] === old) return false;"
    " if (document.querySelector('[data-testid=\"stStatusWidget\"]')) return false;"
    " if (document.querySelector('[data-stale=\"true\"]')) return false;"
    " const b = document.querySelector('.st-key-tri_resolve button');"
    " if (!b || b.disabled) return false;"
    " return document.body.innerText.includes('finding ' + decodeURIComponent(m[1])); }"
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


#: The interpreter that serves (``--python``); None: the source's ``.venv``, else this one.
PYTHON: str | None = None


def _python(source: Path) -> str:
    if PYTHON is not None:
        return PYTHON
    venv = source / ".venv" / "bin" / "python"
    return str(venv) if venv.exists() else sys.executable


def _env(source: Path, db_url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMAUDIT_")}
    env |= {
        "MEMAUDIT_DATABASE_URL": db_url,
        "MEMAUDIT_DEMO_OFFICER_PASSWORD": OFFICER_PW,
        "MEMAUDIT_DEMO_USER_PASSWORD": USER_PW,
        "MEMAUDIT_LOG_FORMAT": "json",
        "PYTHONPATH": str(source),
    }
    return env


def _memaudit(source: Path, env: dict[str, str], *args: str) -> None:
    done = subprocess.run(
        [_python(source), "-m", "auditor", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        cwd=source,
    )
    if done.returncode != 0:
        raise SystemExit(f"memaudit {' '.join(args)} failed:\n{done.stderr[-3000:]}")


class Dashboard:
    """``memaudit dashboard`` on a scratch demo store, as a subprocess."""

    def __init__(self, source: Path, folder: Path) -> None:
        self.source = source
        self.folder = folder
        self.db_path = folder / "triage.db"
        self.env = _env(source, f"sqlite:///{self.db_path}")
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = folder / "dashboard.log"
        self.proc: subprocess.Popen[bytes] | None = None

    def prepare(self) -> None:
        _memaudit(self.source, self.env, "init", "--demo")
        _memaudit(self.source, self.env, "scan", "--full")

    def start(self) -> float:
        """Start the server; return the seconds until its health check answered."""
        started = time.monotonic()
        with self.log.open("w") as out:
            self.proc = subprocess.Popen(
                [
                    _python(self.source),
                    "-m",
                    "auditor",
                    "dashboard",
                    "--port",
                    str(self.port),
                    "--demo-accounts",
                ],
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=self.folder,
            )
        deadline = started + 120
        while True:
            try:
                with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        return time.monotonic() - started
            except OSError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"the dashboard did not start:\n{self.log.read_text()[-3000:]}")
            time.sleep(0.1)

    def stop(self) -> None:
        if self.proc is None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()

    def audit_events(self) -> dict[str, int]:
        """Audit events by action (the action names are not encrypted)."""
        with sqlite3.connect(self.db_path) as con:
            rows = con.execute("SELECT action, count(*) FROM audit_events GROUP BY action")
            return {str(a): int(n) for a, n in rows}

    def last_seq(self) -> int:
        with sqlite3.connect(self.db_path) as con:
            (n,) = con.execute("SELECT coalesce(max(seq), 0) FROM audit_events").fetchone()
            return int(n)

    def resolved_since(self, seq: int) -> list[str]:
        """The findings resolved (``finding.resolve`` events) after event ``seq``."""
        with sqlite3.connect(self.db_path) as con:
            rows = con.execute(
                "SELECT target_ids FROM audit_events WHERE action = 'finding.resolve' AND seq > ?",
                (seq,),
            )
            return [str(t) for (ids,) in rows for t in json.loads(ids) if str(t).startswith("fnd_")]

    def open_findings(self) -> int:
        with sqlite3.connect(self.db_path) as con:
            (n,) = con.execute("SELECT count(*) FROM findings WHERE status = 'open'").fetchone()
            return int(n)


def _idle(page: Any) -> None:
    page.wait_for_function(_IDLE_JS, timeout=TIMEOUT_MS, polling=20)


def _current(page: Any) -> str:
    value = page.evaluate("() => (location.search.match(/[?&]finding=([^&#]+)/) || [null, ''])[1]")
    return str(value)


def _sign_in(page: Any, url: str) -> tuple[float, float]:
    """Open the dashboard and sign in: (seconds to the form, seconds from the click to the
    officer's first page rendered)."""
    t0 = time.monotonic()
    page.goto(url)
    page.get_by_label("User name").wait_for(timeout=TIMEOUT_MS)
    _idle(page)
    form = time.monotonic() - t0
    page.get_by_label("User name").fill(OFFICER)
    page.get_by_label("Password", exact=True).fill(OFFICER_PW)
    t1 = time.monotonic()
    page.get_by_role("button", name="Sign in").click()
    page.get_by_text(f"Signed in as {OFFICER}").wait_for(timeout=TIMEOUT_MS)
    page.get_by_role("heading", name="Overview").wait_for(timeout=TIMEOUT_MS)
    _idle(page)
    return form, time.monotonic() - t1


def _open_queue(page: Any, url: str) -> None:
    page.goto(f"{url}/review_queue")
    page.get_by_role("heading", name="Review queue").wait_for(timeout=TIMEOUT_MS)
    page.wait_for_function(_NEXT_READY_JS, arg="", timeout=TIMEOUT_MS, polling=20)
    page.get_by_role("heading", name="Review queue").click()  # focus off any field
    page.wait_for_function("() => window.__memauditKeysOn === true", timeout=TIMEOUT_MS)


def _keyboard_one(page: Any) -> tuple[str, int]:
    fid = _current(page)
    page.keyboard.press("r")
    page.wait_for_function(_NEXT_READY_JS, arg=fid, timeout=STEP_TIMEOUT_MS, polling=20)
    return fid, 1


def _row_box(page: Any, row: int) -> tuple[float, float]:
    """Where to click to select ``row`` of the queue's table (its row-marker column)."""
    grid = page.locator(".st-key-queue_list [data-testid='stDataFrame']").first
    grid.wait_for(timeout=TIMEOUT_MS)
    box = grid.bounding_box()
    assert box is not None
    header = 35.0  # glide-data-grid's default header and row heights in Streamlit
    height = 35.0
    return box["x"] + 16, box["y"] + header + height * row + height / 2


def _mouse_one(page: Any) -> tuple[str, int]:
    """Click the table's first row (the second when the first is the finding in view: the
    detail opens for the row clicked), then "Resolve (r)"."""
    before = _current(page)
    position = page.get_by_text(re.compile(r"\d+ of \d+ on this page")).first.inner_text()
    match = re.search(r"(\d+) of \d+ on this page", position)
    x, y = _row_box(page, 1 if match and match.group(1) == "1" else 0)
    page.mouse.click(x, y)
    page.wait_for_function(_NEXT_READY_JS, arg=before, timeout=STEP_TIMEOUT_MS, polling=20)
    fid = _current(page)
    page.locator(".st-key-tri_resolve button").click()
    page.wait_for_function(_NEXT_READY_JS, arg=fid, timeout=STEP_TIMEOUT_MS, polling=20)
    return fid, 2


def _triage(page: Any, count: int, one: Callable[[Any], tuple[str, int]]) -> dict[str, Any]:
    """Work ``count`` findings; a path that gets stuck is reported with what it managed."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    times: list[float] = []
    interactions = 0
    worked: list[str] = []
    stuck = None
    for i in range(count):
        t = time.monotonic()
        try:
            fid, n = one(page)
        except PlaywrightTimeout:
            stuck = f"stuck at finding {i + 1}: the page did not open the next finding"
            break
        times.append(time.monotonic() - t)
        interactions += n
        worked.append(fid)
    if len(set(worked)) != len(worked):
        raise SystemExit(f"the same finding was worked twice: {worked}")
    return {
        "times": times,
        "interactions": interactions / max(1, len(worked)),
        "worked": worked,
        "stuck": stuck,
    }


def _p90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.9 * len(ordered)) - 1)]


def run(source: Path, count: int) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="memaudit-triage-bench-") as tmp:
        dash = Dashboard(source, Path(tmp))
        dash.prepare()
        if dash.open_findings() < 2 * count + 2:
            raise SystemExit(f"the demo store has {dash.open_findings()} open findings only")
        out["server_start"] = dash.start()
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(
                    executable_path=str(CHROMIUM),
                    args=["--no-sandbox"] if os.geteuid() == 0 else [],
                )
                try:
                    context = browser.new_context(viewport={"width": 1400, "height": 1500})
                    page = context.new_page()
                    out["cold_form"], out["cold_sign_in"] = _sign_in(page, dash.url)
                    warm = browser.new_context(viewport={"width": 1400, "height": 1500})
                    out["warm_form"], out["warm_sign_in"] = _sign_in(warm.new_page(), dash.url)
                    warm.close()

                    for name, one in (("keyboard", _keyboard_one), ("mouse", _mouse_one)):
                        _open_queue(page, dash.url)
                        events_before = dash.audit_events()
                        seq = dash.last_seq()
                        out[name] = _triage(page, count, one)
                        out[name]["unseen"] = sorted(
                            set(dash.resolved_since(seq)) - set(out[name]["worked"])
                        )
                        if out[name]["stuck"]:
                            shot = Path(tempfile.gettempdir()) / f"triage-bench-{name}.png"
                            page.screenshot(path=str(shot), full_page=True)
                            out[name]["stuck"] += f" (the page: {shot})"
                        out[name]["events"] = _diff(events_before, dash.audit_events())
                finally:
                    browser.close()
        finally:
            dash.stop()
        with sqlite3.connect(dash.db_path) as con:
            worked = out["keyboard"]["worked"] + out["mouse"]["worked"] or ["-"]
            marks = ",".join("?" * len(worked))
            statuses = {
                s
                for (s,) in con.execute(
                    f"SELECT status FROM findings WHERE finding_id IN ({marks})",  # noqa: S608
                    worked,
                )
            }
        if statuses - {"resolved"}:
            raise SystemExit(f"not every worked finding is resolved: {statuses}")
    return out


def _diff(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    return {
        k: after.get(k, 0) - before.get(k, 0) for k in sorted(after) if after[k] != before.get(k, 0)
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=20, help="findings per path")
    parser.add_argument(
        "--source", type=Path, default=ROOT, help="the checkout whose dashboard is served"
    )
    parser.add_argument(
        "--python",
        help="the interpreter that serves (default: the source's .venv/bin/python); one "
        "interpreter for both sides of a before/after pair rules out two installs' differences",
    )
    args = parser.parse_args()
    global PYTHON
    PYTHON = args.python
    if not CHROMIUM.exists():
        raise SystemExit(f"{CHROMIUM} is missing (apt-get install chromium)")
    source = args.source.resolve()
    print(f"triage benchmark: {args.count} findings per path; dashboard from {source}")
    fig = run(source, args.count)
    print(f"server start (until the health check answers): {fig['server_start']:.2f} s")
    print(
        f"sign-in, cold process:  first page {fig['cold_form']:.2f} s, "
        f"sign-in click to the overview {fig['cold_sign_in']:.2f} s, "
        f"total {fig['cold_form'] + fig['cold_sign_in']:.2f} s"
    )
    print(
        f"sign-in, warm process:  first page {fig['warm_form']:.2f} s, "
        f"sign-in click to the overview {fig['warm_sign_in']:.2f} s"
    )
    print(f"{'path':<10}{'interactions':>14}{'median s':>10}{'p90 s':>8}{'max s':>8}  audit events")
    for name in ("keyboard", "mouse"):
        r = fig[name]
        times = r["times"] or [math.nan]
        done = max(1, len(r["worked"]))
        per = {k: round(v / done, 2) for k, v in r["events"].items()}
        print(
            f"{name:<10}{r['interactions']:>14.0f}{statistics.median(times):>10.2f}"
            f"{_p90(times):>8.2f}{max(times):>8.2f}  per finding {per}"
        )
        if r["stuck"]:
            print(f"  {name}: {len(r['worked'])} findings worked, then {r['stuck']}")
        if r["unseen"]:
            print(
                f"  {name}: {len(r['unseen'])} more findings were resolved without being "
                "shown (one click acted twice)"
            )


if __name__ == "__main__":
    main()
