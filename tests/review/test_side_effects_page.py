"""The side-effect matcher's review page at 1366x768 in headless Chromium: the pair, the
question, both labels and the progress on the first screen; the list and the profile below."""

import asyncio
import json

import pytest

from oncoeval.review.__main__ import main
from tests.live_page import CHROMIUM, _session
from tests.review.test_page_browser import press
from tests.review.test_side_effects import matched_root

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="needs chromium")

FIRST_SCREEN = """JSON.stringify((function () {
  const box = function (q) { const r = document.querySelector(q).getBoundingClientRect();
    return [r.top, r.bottom, r.right]; };
  return {height: innerHeight, width: innerWidth, scroll: document.documentElement.scrollWidth,
    fields: box('#fields'), ask: box('#ask'), scale: box('#scale'), progress: box('#progress'),
    font: parseFloat(getComputedStyle(document.querySelector('#fields .field div')).fontSize),
    context: document.getElementById('context').innerText};
})())"""


def test_the_first_screen_at_1366x768_holds_the_pair_and_its_labels(tmp_path):
    root = matched_root(tmp_path)
    args = ["page", "--root", str(root), "--study", "side_effects", "--reviewer", "ann"]
    assert main([*args, "--labels", "30"]) == 0
    url = (root / "results" / "side_effects" / "review" / "page-ann.html").as_uri()

    async def steps(page):
        await page.call(
            "Emulation.setDeviceMetricsOverride",
            width=1366, height=768, deviceScaleFactor=1, mobile=False,
        )  # fmt: skip
        await page.wait_for(r"Item 1 of 30 · 0 labelled")
        found = json.loads(await page.evaluate(FIRST_SCREEN))
        await press(page, "3")  # not on this two-label scale: nothing happens
        await press(page, "2")  # "the same side effect", then on to item 2
        after = await page.wait_for(r"Item 2 of 30 · 1 labelled")
        return found, after

    found, after = asyncio.run(asyncio.wait_for(_session(url, steps, (1366, 768)), 240))
    assert (found["height"], found["width"]) == (768, 1366)
    assert found["scroll"] <= found["width"]  # no sideways scrolling
    for part in ("fields", "ask", "scale", "progress"):
        top, bottom, right = found[part]
        assert 0 <= top and bottom <= found["height"] and right <= found["width"], (part, found)
    assert found["font"] >= 14
    assert "\u25b6" in found["context"] and "Profile " in found["context"]
    assert "Keys: 1 2 label" in after
