"""Measure a page as headless Chromium lays it out at a given window size.

The page is copied beside itself with a probe script appended; once the page's own scripts ran
(the Snakemake report renders with React), the probe writes what it measured (window size,
bounding boxes, what lies above or left of its scroll origin) into the DOM, which
``chromium --dump-dom`` prints. The page's own markup and scripts are unchanged.
"""

from __future__ import annotations

import html
import json
import os
import shutil
import subprocess
from pathlib import Path

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# The window sizes a reader opens the report at: a small laptop to a large desktop monitor.
WINDOWS = ((1366, 768), (1920, 1080), (2560, 1440))

PROBE = """
<script>
(function () {
  function box(el) {
    if (!el) { return null; }
    const r = el.getBoundingClientRect();
    return {top: r.top, left: r.left, bottom: r.bottom, right: r.right};
  }
  function scroller(el) {
    for (let c = el.parentElement; c; c = c.parentElement) {
      const s = getComputedStyle(c);
      if (/(auto|scroll)/.test(s.overflow + s.overflowX + s.overflowY)) { return c; }
    }
    return null;
  }
  function fixed(el) {
    for (let c = el; c; c = c.parentElement) {
      if (getComputedStyle(c).position === 'fixed') { return true; }
    }
    return false;
  }
  // Elements that start above or left of the origin of the box they scroll in: no scrolling
  // brings them into view. Fixed elements do not scroll (a toolbar slid out of view is hidden
  // on purpose).
  function unreachable(root) {
    const out = [];
    root.querySelectorAll('*').forEach(function (el) {
      if (fixed(el)) { return; }
      const r = el.getBoundingClientRect();
      if (r.width === 0 && r.height === 0) { return; }
      const c = scroller(el);
      const origin = c ? c.getBoundingClientRect() : {top: 0, left: 0};
      const top = origin.top - (c ? c.scrollTop : window.scrollY);
      const left = origin.left - (c ? c.scrollLeft : window.scrollX);
      if (r.top < top - 1 || r.left < left - 1) {
        out.push(el.tagName + '#' + el.id + '.' + (typeof el.className === 'string' ? el.className : '') + ' ' + Math.round(r.top) + ',' + Math.round(r.left));
      }
    });
    return out;
  }
  function measure() {
    const target = document.querySelector(%(selector)s);
    const area = target ? (scroller(target) || document.body) : document.body;
    const found = {
      window: [window.innerWidth, window.innerHeight],
      target: box(target),
      unreachable: unreachable(area).concat(unreachable(document.body)).slice(0, 20),
      scroll_width: [area.scrollWidth, area.clientWidth],
      text: target ? target.innerText : '',
      also: Object.fromEntries(%(also)s.map((s) => [s, box(document.querySelector(s))])),
    };
    const pre = document.createElement('pre');
    pre.id = 'oncoeval-probe';
    pre.textContent = JSON.stringify(found);
    document.body.appendChild(pre);
  }
  window.addEventListener('load', function () { setTimeout(measure, 3000); });
})();
</script>
"""


def measure(
    page: Path, selector: str, window: tuple[int, int], fragment: str = "", also=()
) -> dict:
    """What the probe measured on ``page`` at ``window`` (width, height) for ``selector``;
    ``also``: further selectors whose bounding boxes it gives under ``"also"``."""
    probed = page.with_name(f".probe-{window[0]}x{window[1]}-{page.name}")
    source = page.read_text(encoding="utf-8")
    cut = source.rindex("</body>")
    probe = PROBE % {"selector": json.dumps(selector), "also": json.dumps(list(also))}
    probed.write_text(source[:cut] + probe + source[cut:], encoding="utf-8")
    try:
        proc = subprocess.run(
            [
                CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--hide-scrollbars", f"--window-size={window[0]},{window[1]}",
                "--virtual-time-budget=20000", "--dump-dom", probed.as_uri() + fragment,
            ],
            capture_output=True, text=True, timeout=180,
            env={**os.environ, "HOME": os.environ.get("HOME", "/tmp")},
        )  # fmt: skip
    finally:
        probed.unlink()
    assert proc.returncode == 0, proc.stderr[-2000:]
    marker = '<pre id="oncoeval-probe">'
    assert marker in proc.stdout, f"the probe did not run on {page}: {proc.stderr[-2000:]}"
    text = proc.stdout.split(marker, 1)[1].split("</pre>", 1)[0]
    return json.loads(html.unescape(text))


def within(box: dict, window) -> bool:
    """Whether a bounding box lies inside the first screen of a ``window`` (width, height)."""
    width, height = window
    return (
        box["top"] >= 0 and box["left"] >= 0 and box["bottom"] <= height and box["right"] <= width
    )


def first_screen_problems(found: dict) -> list[str]:
    """What keeps a measured element (:func:`measure`) from being read on the first screen:
    absent, not wholly inside the window, a page to scroll sideways, or content above or left
    of the scroll origin ([] when there is none)."""
    if found["target"] is None:
        return ["the element is not on the page"]
    problems = []
    if not within(found["target"], found["window"]):
        problems.append(f"not inside the first screen: {found['target']} in {found['window']}")
    scroll_width, client_width = found["scroll_width"]
    if scroll_width > client_width + 1:
        problems.append(f"scrolls sideways: {scroll_width} px in {client_width} px")
    if found["unreachable"]:
        problems.append(f"out of reach above or left: {found['unreachable']}")
    return problems
