"""Item pages sort and filter in a real browser (headless Chromium), offline, from a link."""

from __future__ import annotations

import re

import pytest
from test_report_units import _judged_study
from test_report_workflow import CHROMIUM, rendered_dom

from oncoeval.report import drilldown

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="Debian's chromium is not installed (.ci/run installs it)"
)
GOOD = '{"Reason": "Corrects it.", "Sharpness": 1}'
PARTLY = '{"Reason": "Hedges.", "Sharpness": 0}'


def shown_rows(dom: str) -> list[str]:
    """The request ids of the rows the page shows, in order (hidden rows left out)."""
    body = dom[dom.index("<tbody") :]
    rows = re.findall(r"<tr([^>]*)>(.*?)</tr>", body, flags=re.S)
    ids = []
    for attributes, cells in rows:
        if "display: none" in attributes:
            continue
        first = re.findall(r"<td[^>]*>(.*?)</td>", cells, flags=re.S)
        ids.append(first[1].strip())  # request set, then request_id
    return ids


def test_item_page_filters_by_parse_status_and_sorts_by_score_in_chromium(tmp_path):
    answers = ["Not needed.", "Maybe.", "Unsure and", "It is fine."]
    verdicts = [GOOD, PARTLY, "unreadable", GOOD]
    root = _judged_study(tmp_path, "m1", answers, verdicts)
    page = tmp_path / "items.html"
    page.write_text(drilldown.items_page(root, "cancer_myth", "m1"), encoding="utf-8")
    everything = rendered_dom(page.as_uri())
    assert shown_rows(everything) == ["0", "1", "2", "3"]
    # The unreadable verdict only; then the scored answers, lowest score first.
    assert shown_rows(rendered_dom(page.as_uri() + "#parse=nothing")) == ["2"]
    assert shown_rows(rendered_dom(page.as_uri() + "#max=0.5&sort=score")) == ["1"]
    ranked = shown_rows(rendered_dom(page.as_uri() + "#sort=score&order=ascending&parse=parsed"))
    assert ranked[0] == "1" and set(ranked) == {"0", "1", "3"}
    assert "id='item-count'>3<" in rendered_dom(page.as_uri() + "#parse=parsed").replace('"', "'")
    # A search in the link (the words of the judge's reason of answer 1).
    assert shown_rows(rendered_dom(page.as_uri() + "#q=hedges")) == ["1"]
