"""The report in a real browser: headless Chromium driven over the DevTools Protocol.

The report is served from a loopback http.server. A small CDP client (websockets)
records every request the page attempts (Network.requestWillBeSent), console and log
errors, uncaught exceptions and JavaScript dialogs, then reads the DOM text.
"""

from __future__ import annotations

import asyncio
import base64
import functools
import http.server
import itertools
import json
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest
from support.reports import PLANTED_SCRIPT

CHROMIUM = Path("/usr/bin/chromium")
websockets = pytest.importorskip("websockets", reason="the browser test drives Chromium over CDP with the websockets package")

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="/usr/bin/chromium is absent (Debian: apt-get install chromium)"),
]
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-default-apps", "--disable-extensions", "--remote-debugging-port=0", "--remote-allow-origins=*"]


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep pytest output clean
        pass


@pytest.fixture(scope="module")
def server(report_dir):
    handler = functools.partial(Quiet, directory=str(report_dir))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")
def browser():
    profile = Path(tempfile.mkdtemp(prefix="aces-chromium-"))
    proc = subprocess.Popen([str(CHROMIUM), *FLAGS, f"--user-data-dir={profile}", "about:blank"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    port_file = profile / "DevToolsActivePort"
    deadline = time.monotonic() + 30
    while not (port_file.is_file() and len(port_file.read_text().splitlines()) >= 2):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"chromium did not start its DevTools endpoint (exit {proc.poll()})")
        time.sleep(0.1)
    port, path = port_file.read_text().splitlines()[:2]
    yield f"ws://127.0.0.1:{port}{path}"
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    shutil.rmtree(profile, ignore_errors=True)


FIRST_SCREEN = (1400, 900)
VERDICT_JS = """(() => Array.from(document.querySelectorAll('tr.verdict-row')).map(r => {
  const b = r.getBoundingClientRect();
  return {skill: r.dataset.skill, status: r.dataset.status, top: b.top, bottom: b.bottom,
          visible: b.top >= 0 && b.bottom <= window.innerHeight && b.height > 0, text: r.innerText};
}))()"""


PHONE = (390, 844)
# Each verdict row's lift and verdict cells: inside the viewport on both axes (seen without scrolling).
CELLS_JS = """(() => Array.from(document.querySelectorAll('tr.verdict-row')).map(r => {
  const inside = c => { const b = c.getBoundingClientRect();
    return b.left >= 0 && b.right <= window.innerWidth && b.top >= 0 && b.bottom <= window.innerHeight && b.width > 0; };
  return {skill: r.dataset.skill, lift: inside(r.cells[1]), verdict: inside(r.querySelector('td.verdict-cell .tag')),
          verdict_text: r.querySelector('td.verdict-cell .tag').innerText};
}))()"""


async def _visit(ws_url: str, url: str, screenshot: Path | None = None, size: tuple[int, int] = FIRST_SCREEN) -> dict:
    """Open ``url`` in a fresh tab; return requests, errors, dialogs and DOM facts.

    With ``screenshot``, the tab is ``size`` (default 1400x900, a laptop's first screen; 390x844 is a
    phone's, emulated as mobile): the verdict rows' and cells' positions and the page's width are read
    from the DOM and a PNG of that screen is written there."""
    ids = itertools.count(1)
    events: list[dict] = []
    pending: dict[int, asyncio.Future] = {}
    async with websockets.connect(ws_url, max_size=None) as ws:
        async def reader():
            async for raw in ws:
                msg = json.loads(raw)
                if "id" in msg and msg["id"] in pending:
                    pending.pop(msg["id"]).set_result(msg)
                else:
                    events.append(msg)

        task = asyncio.create_task(reader())

        async def send(method: str, params: dict | None = None, session: str | None = None) -> dict:
            i = next(ids)
            pending[i] = asyncio.get_running_loop().create_future()
            payload = {"id": i, "method": method, "params": params or {}}
            if session:
                payload["sessionId"] = session
            await ws.send(json.dumps(payload))
            reply = await asyncio.wait_for(pending[i], 30)
            assert "error" not in reply, reply
            return reply.get("result", {})

        target = (await send("Target.createTarget", {"url": "about:blank"}))["targetId"]
        session = (await send("Target.attachToTarget", {"targetId": target, "flatten": True}))["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            await send(f"{domain}.enable", session=session)
        if screenshot is not None:
            await send("Emulation.setDeviceMetricsOverride", {"width": size[0], "height": size[1],
                                                              "deviceScaleFactor": 1, "mobile": size[0] < 700},
                       session=session)
        await send("Page.navigate", {"url": url}, session=session)
        deadline = time.monotonic() + 30
        while not any(e.get("method") == "Page.loadEventFired" and e.get("sessionId") == session for e in events):
            assert time.monotonic() < deadline, "page did not finish loading"
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.3)  # let late console messages and requests arrive

        async def evaluate(expr: str):
            res = await send("Runtime.evaluate", {"expression": expr, "returnByValue": True}, session=session)
            return res["result"].get("value")

        facts = {
            "text": await evaluate("document.body.innerText"),
            "content": await evaluate("document.body.textContent"),
            "scripts": await evaluate("document.querySelectorAll('script').length"),
            "images_ok": await evaluate("Array.from(document.images).every(i => i.complete && i.naturalWidth > 0)"),
            "n_images": await evaluate("document.images.length"),
            "details": await evaluate("document.querySelectorAll('details').length"),
        }
        if screenshot is not None:
            facts["verdict_rows"] = await evaluate(VERDICT_JS)
            facts["viewport"] = await evaluate("[window.innerWidth, window.innerHeight]")
            facts["scroll_width"] = await evaluate("document.documentElement.scrollWidth")
            facts["cells"] = await evaluate(CELLS_JS)
            facts["summary"] = await evaluate("document.getElementById('first-summary').innerText")
            shot = await send("Page.captureScreenshot", {"format": "png"}, session=session)
            screenshot.write_bytes(base64.b64decode(shot["data"]))
        await send("Target.closeTarget", {"targetId": target})
        task.cancel()
    mine = [e for e in events if e.get("sessionId") == session]
    facts["requests"] = [e["params"]["request"]["url"] for e in mine if e["method"] == "Network.requestWillBeSent"]
    facts["console_errors"] = [e["params"] for e in mine if e["method"] == "Runtime.consoleAPICalled"
                               and e["params"]["type"] in ("error", "assert")]
    facts["log_errors"] = [e["params"]["entry"] for e in mine if e["method"] == "Log.entryAdded"
                           and e["params"]["entry"]["level"] == "error"]
    facts["exceptions"] = [e["params"] for e in mine if e["method"] == "Runtime.exceptionThrown"]
    facts["dialogs"] = [e["params"] for e in mine if e["method"] == "Page.javascriptDialogOpening"]
    return facts


def _check_clean(facts: dict, origin: str) -> None:
    outside = [u for u in facts["requests"] if not u.startswith((origin + "/", "data:"))]
    assert outside == [], f"requests left the report's origin: {outside}"
    assert facts["console_errors"] == [] and facts["log_errors"] == [] and facts["exceptions"] == []
    assert facts["dialogs"] == [] and facts["scripts"] == 0


def test_index_renders_offline_without_console_errors(browser, server):
    facts = asyncio.run(_visit(browser, f"{server}/index.html"))
    _check_clean(facts, server)
    assert [u for u in facts["requests"] if not u.startswith("data:")] == [f"{server}/index.html"]
    assert facts["n_images"] == 7 and facts["images_ok"]
    assert "Verdict per skill" in facts["text"] and "Missingness" in facts["text"]


def test_first_screen_at_1400x900_shows_every_skills_verdict_row(browser, server, report_dir, tmp_path_factory):
    from aces_bench.records.summary import ReportSummary

    shot = tmp_path_factory.mktemp("screen") / "first-screen.png"
    facts = asyncio.run(_visit(browser, f"{server}/index.html", screenshot=shot))
    _check_clean(facts, server)
    assert facts["viewport"] == list(FIRST_SCREEN)
    s = ReportSummary.model_validate_json((report_dir / "summary.json").read_text())
    rows = {r.group["skill"]: r for r in s.by_skill if r.outcome == s.headline_outcome}
    seen = {v["skill"]: v for v in facts["verdict_rows"]}
    assert set(seen) == set(rows) and all(v["visible"] for v in seen.values()), facts["verdict_rows"]
    for skill, r in rows.items():  # the row shows summary.json's numbers, not its own
        assert f"{r.lift:+.3f}" in seen[skill]["text"] and f"{r.n_cases} · {r.n}" in seen[skill]["text"]
    png = shot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert int.from_bytes(png[16:20], "big") == 1400 and int.from_bytes(png[20:24], "big") == 900


def test_skill_page_shows_the_planted_script_as_text(browser, server):
    facts = asyncio.run(_visit(browser, f"{server}/skills/invoice-reconciler.html"))
    _check_clean(facts, server)
    assert facts["details"] > 10
    # textContent includes folded <details>; the planted string is there as text, not as an element.
    assert PLANTED_SCRIPT in facts["content"]
    assert "paired cases" in facts["text"]


def test_the_request_log_does_catch_an_outside_request(browser):
    # Control: the same recorder sees a page's attempt to reach another host.
    page = "data:text/html,<p>x</p><img src='http://aces-bench.invalid/pixel.png'>"
    facts = asyncio.run(_visit(browser, page))
    assert "http://aces-bench.invalid/pixel.png" in facts["requests"]


@pytest.mark.parametrize("size", [PHONE, FIRST_SCREEN], ids=["phone-390x844", "laptop-1400x900"])
def test_the_first_screen_shows_every_verdict_and_lift_without_sideways_scrolling(browser, server, size,
                                                                                   tmp_path_factory):
    """Issue 36: at 390 px the page was 1,044 px wide and the verdict column off screen."""
    shot = tmp_path_factory.mktemp("screen") / f"first-screen-{size[0]}.png"
    facts = asyncio.run(_visit(browser, f"{server}/index.html", screenshot=shot, size=size))
    _check_clean(facts, server)
    assert facts["viewport"] == list(size)
    assert facts["scroll_width"] <= size[0], f"the page is {facts['scroll_width']} px wide at {size[0]}"
    assert facts["cells"] and all(c["lift"] and c["verdict"] for c in facts["cells"]), facts["cells"]
    assert len(facts["summary"].split()) <= 60, facts["summary"]
    png = shot.read_bytes()
    assert int.from_bytes(png[16:20], "big") == size[0]
