"""Read a live web page as headless Chromium renders it, over the DevTools protocol.

``chromium --dump-dom`` prints the page at its load event; a single-page app that fetches its
data afterwards (inspect's log viewer) is then still "Loading". Here Chromium runs with a
DevTools port, and the test polls the page's rendered text until it shows what the test waits
for, recording every URL the page requested on the way (to tell what it tried to fetch from
outside). The client is aiohttp's websocket, already in the workflow's environment.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
import tempfile
import time

import aiohttp

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


class Page:
    """One browser tab on ``url``: ``text()`` is its rendered text, ``requested`` the URLs it
    asked for so far."""

    def __init__(self, ws):
        self.ws = ws
        self.requested: list[str] = []
        self._id = 0

    async def call(self, method: str, **params):
        self._id += 1
        ident = self._id
        await self.ws.send_str(json.dumps({"id": ident, "method": method, "params": params}))
        while True:
            msg = json.loads((await self.ws.receive()).data)
            if msg.get("method") == "Network.requestWillBeSent":
                self.requested.append(msg["params"]["request"]["url"])
            if msg.get("id") == ident:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})

    async def evaluate(self, expression: str):
        result = await self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        return result.get("result", {}).get("value")

    async def text(self) -> str:
        return await self.evaluate("document.body ? document.body.innerText : ''") or ""

    async def wait_for(self, pattern: str, timeout: float = 60) -> str:
        """The page's text once it matches the regular expression ``pattern``."""
        deadline = time.monotonic() + timeout
        text = ""
        while time.monotonic() < deadline:
            text = await self.text()
            if re.search(pattern, text):
                return text
            await asyncio.sleep(0.5)
        raise AssertionError(f"no {pattern!r} on the page after {timeout} s; it shows: {text!r}")

    async def goto(self, url: str):
        await self.call("Page.navigate", url=url)


async def _session(url: str, steps, window=(1366, 900)):
    profile = tempfile.mkdtemp(prefix="oncoeval-chromium-")
    proc = subprocess.Popen(
        [
            CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
            "--no-first-run", "--remote-debugging-address=127.0.0.1",
            "--remote-debugging-port=0", f"--user-data-dir={profile}",
            f"--window-size={window[0]},{window[1]}", "about:blank",
        ],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "HOME": os.environ.get("HOME", "/tmp")},
    )  # fmt: skip
    try:
        port = None
        for line in proc.stderr:  # "DevTools listening on ws://127.0.0.1:PORT/devtools/..."
            found = re.search(r"DevTools listening on ws://127\.0\.0\.1:(\d+)/", line)
            if found:
                port = found.group(1)
                break
        assert port, "chromium did not open its DevTools port"
        async with aiohttp.ClientSession() as http:
            async with http.get(f"http://127.0.0.1:{port}/json/list") as r:
                targets = [t for t in await r.json() if t["type"] == "page"]
            async with http.ws_connect(targets[0]["webSocketDebuggerUrl"], max_msg_size=0) as ws:
                page = Page(ws)
                await page.call("Network.enable")
                await page.call("Page.enable")
                await page.goto(url)
                return await steps(page)
    finally:
        proc.kill()
        proc.wait(timeout=30)
        shutil.rmtree(profile, ignore_errors=True)


def browse(url: str, steps, timeout: float = 240):
    """Open ``url`` in headless Chromium and run ``steps(page)`` (a coroutine function) on it;
    returns what ``steps`` returns."""
    return asyncio.run(asyncio.wait_for(_session(url, steps), timeout))
