"""The review page as a reviewer uses it, in headless Chromium over the DevTools protocol:
keyboard and mouse labels, a note, a reload that keeps them, the download, then its import."""

import asyncio
import json
from pathlib import Path

import pytest

from oncoeval.review.__main__ import main
from tests.live_page import CHROMIUM, browse
from tests.review.inputs import TRICKY, judged_root

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="needs chromium")

KEYS = {  # key -> (code, Windows virtual key code)
    "1": ("Digit1", 49), "2": ("Digit2", 50), "3": ("Digit3", 51), "n": ("KeyN", 78),
    "d": ("KeyD", 68), "k": ("KeyK", 75), "Escape": ("Escape", 27), "ArrowRight": ("ArrowRight", 39),
}  # fmt: skip


async def press(page, key: str):
    code, vk = KEYS[key]
    char = {"text": key} if len(key) == 1 else {}
    kind = "keyDown" if char else "rawKeyDown"
    await page.call(
        "Input.dispatchKeyEvent", type=kind, key=key, code=code, windowsVirtualKeyCode=vk, **char
    )
    await page.call("Input.dispatchKeyEvent", type="keyUp", key=key, code=code)


async def click(page, selector: str):
    box = await page.evaluate(
        f"(function () {{ const r = document.querySelector({json.dumps(selector)})"
        ".getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; })()"
    )
    for kind in ("mousePressed", "mouseReleased"):
        await page.call(
            "Input.dispatchMouseEvent", type=kind, x=box[0], y=box[1], button="left", clickCount=1
        )


def test_label_by_keyboard_and_mouse_reload_download_and_import(tmp_path):
    root = judged_root(tmp_path)
    assert main(["page", "--root", str(root), "--labels", "12", "--reviewer", "ann"]) == 0
    review = root / "results" / "cancer_myth" / "review"
    url = (review / "page-ann.html").as_uri()
    downloads = tmp_path / "downloads"
    downloads.mkdir()

    async def steps(page):
        await page.call(
            "Browser.setDownloadBehavior", behavior="allow", downloadPath=str(downloads)
        )
        await page.wait_for(r"Item 1 of 12 · 0 labelled")
        shown = await page.text()
        await press(page, "3")  # item 1: score 1, then on to item 2
        await press(page, "1")  # item 2: score -1
        await click(page, "#scale button:nth-child(2)")  # item 3: score 0, by mouse
        await press(page, "k")  # back to item 3
        await press(page, "n")
        await page.call("Input.insertText", text="unsure about the dose")
        await press(page, "Escape")
        await page.wait_for(r"Item 3 of 12 · 3 labelled")
        await page.call("Page.reload")
        after = await page.wait_for(r"Item 1 of 12 · 3 labelled")
        chosen = await page.evaluate("document.querySelector('#scale .chosen').innerText")
        await press(page, "ArrowRight")
        await press(page, "ArrowRight")
        note = await page.evaluate("document.getElementById('note').value")
        await press(page, "d")
        for _ in range(40):
            files = list(downloads.glob("*.json"))
            if files:
                break
            await asyncio.sleep(0.25)
        pwned = await page.evaluate("typeof window.pwned")
        # A small laptop's window: a short item, the scale and the note fit without scrolling,
        # and nothing scrolls sideways.
        await page.call(
            "Emulation.setDeviceMetricsOverride",
            width=1366, height=768, deviceScaleFactor=1, mobile=False,
        )  # fmt: skip
        fit = await page.evaluate(
            "[document.getElementById('note').getBoundingClientRect().bottom, window.innerHeight,"
            " document.documentElement.scrollWidth, window.innerWidth]"
        )
        return shown, after, chosen, note, files, pwned, list(page.requested), fit

    shown, after, chosen, note, files, pwned, requested, fit = browse(url, steps)
    assert fit[0] <= fit[1] == 768 and fit[2] <= fit[3] == 1366, fit
    # The text is shown as text; nothing in it ran; nothing was fetched but the file itself.
    assert TRICKY.replace("\u2028", "").split()[0] in shown
    assert pwned == "undefined"
    assert all(u.startswith(("file:", "blob:", "data:")) for u in requested), requested
    # Blinded: neither the model's name nor a verdict is in the file.
    text = (review / "page-ann.html").read_text()
    assert "smollm2" not in text and '"stratum"' not in text
    assert "3 labelled" in after and chosen.startswith("[3] 1")
    assert note == "unsure about the dose"
    assert len(files) == 1
    doc = json.loads(files[0].read_text())
    assert doc["study"] == "cancer_myth" and doc["reviewer"] == "ann"
    assert [x["label"] for x in doc["labels"]] == [1, -1, 0]
    assert doc["labels"][2]["note"] == "unsure about the dose"
    # The downloaded file imports against the plan.
    assert main(["import", "--root", str(root), str(files[0])]) == 0
    human = json.loads((review / "human_scores.json").read_text())
    assert sorted(r["human_score"] for r in human) == [-1, 0, 1]


# A config file given alone stands alone (oncoeval.config.load.load_config): the demo's first.
DEMO = ["--configfile", "config/config.yaml"]


def test_a_contains_phi_study_gets_no_page_unless_text_may_be_shown(tmp_path, capsys):
    root = judged_root(tmp_path)
    phi = tmp_path / "phi.yaml"
    phi.write_text("studies: {cancer_myth: {contains_phi: true}}\n")
    with pytest.raises(SystemExit, match="contains_phi is true"):
        # The demo config with the PHI layer on top, as `make run CONFIG=` layers them
        main(["page", "--root", str(root), *DEMO, "--configfile", str(phi)])
    assert not (root / "results" / "cancer_myth" / "review" / "page.html").exists()
    allowed = tmp_path / "allowed.yaml"
    allowed.write_text(
        "studies: {cancer_myth: {contains_phi: true}}\nreport: {include_phi_text: true}\n"
    )
    assert main(["page", "--root", str(root), *DEMO, "--configfile", str(allowed)]) == 0
    page = Path(root / "results" / "cancer_myth" / "review" / "page.html").read_text()
    assert "marked contains_phi" in page
