"""Per-item pages: for one study and model, every request with its answer, parse and score.

Built from the per-item records: the request sets (``results/{study}/requests/*.jsonl``), the
model's responses, and any per-model table (``parsed``, ``scores``...) that carries a
``request_id`` column. A search box filters the rows. Text of a study marked ``contains_phi``
is left out unless the config's ``report.include_phi_text`` asks for it.
"""

from __future__ import annotations

import glob
import html
import json
from pathlib import Path

import pandas as pd

from ..io import iter_jsonl
from . import tables

PHI_LEFT_OUT = "(left out: the study's inputs are marked contains_phi)"
SEARCH_SCRIPT = """
<script>
function filterItems(query) {
  query = query.toLowerCase();
  let shown = 0;
  document.querySelectorAll('#items tbody tr').forEach(function (row) {
    const match = row.textContent.toLowerCase().includes(query);
    row.style.display = match ? '' : 'none';
    if (match) { shown += 1; }
  });
  document.getElementById('item-count').textContent = shown;
}
const box = document.getElementById('item-search');
box.addEventListener('input', function (event) { filterItems(event.target.value); });
// A link may carry a search: page.html#q=TEXT opens the page filtered.
if (location.hash.startsWith('#q=')) {
  box.value = decodeURIComponent(location.hash.slice(3));
  filterItems(box.value);
}
</script>
"""


def _truncate(text, limit: int) -> str:
    if text is None:
        return ""
    text = str(text)
    return (
        text if len(text) <= limit else text[:limit] + f" … [{len(text) - limit} more characters]"
    )


def _prompt_text(messages) -> str:
    return "\n\n".join(f"[{m.get('role')}] {m.get('content', '')}" for m in messages or [])


def item_rows(root, study: str, model: str, max_chars: int = 600, include_text: bool = True):
    """One dict per answered request of ``model`` in ``study``, joined with its per-item rows."""
    root = Path(root) / "results" / study
    rows = []
    for responses_path in sorted(glob.glob(str(root / "responses" / model / "*.jsonl"))):
        requestset = Path(responses_path).stem
        requests_path = root / "requests" / f"{requestset}.jsonl"
        prompts = {}
        if requests_path.exists():
            prompts = {r["request_id"]: r.get("messages") for r in iter_jsonl(requests_path)}
        for resp in iter_jsonl(responses_path):
            rid = resp["request_id"]
            rows.append(
                {
                    "request set": requestset,
                    "request_id": rid,
                    "input": _truncate(_prompt_text(prompts.get(rid)), max_chars)
                    if include_text
                    else PHI_LEFT_OUT,
                    "model output": _truncate(resp.get("text"), max_chars * 2)
                    if include_text
                    else PHI_LEFT_OUT,
                    "finish": resp.get("finish_reason") or "",
                    "error": resp.get("error") or "",
                }
            )
    items = pd.DataFrame(rows)
    for extra in per_model_tables(root, model):
        if len(items) and "request_id" in extra.columns:
            extra = extra.drop_duplicates("request_id")
            keep = [c for c in extra.columns if c not in items.columns or c == "request_id"]
            items = items.merge(extra[keep], on="request_id", how="left")
    return items


def per_model_tables(study_root: Path, model: str):
    """Per-item tables of one model (``{folder}/{model}.tsv`` or ``.jsonl``) with request ids."""
    for path in sorted(glob.glob(str(study_root / "*" / f"{model}.tsv"))):
        df = pd.read_csv(path, sep="\t")
        if "request_id" in df.columns:
            yield df.rename(
                columns={
                    c: f"{Path(path).parent.name}: {c}" for c in df.columns if c != "request_id"
                }
            )
    for path in sorted(glob.glob(str(study_root / "parsed" / f"{model}.jsonl"))):
        df = pd.DataFrame([{k: _cell(v) for k, v in row.items()} for row in iter_jsonl(path)])
        if "request_id" in df.columns:
            yield df.rename(columns={c: f"parsed: {c}" for c in df.columns if c != "request_id"})


def _cell(value):
    return json.dumps(value, ensure_ascii=False) if isinstance(value, dict | list) else value


def items_page(
    root, study: str, model: str, max_chars: int = 600, include_text: bool = True
) -> str:
    items = item_rows(root, study, model, max_chars, include_text)
    failed = int((items["error"] != "").sum()) if len(items) else 0
    intro = (
        f"<p class='caption'>Every request of {html.escape(study)} answered by "
        f"<b>{html.escape(model)}</b>: the input (truncated to {max_chars} characters), the raw "
        f"model output, how it parsed and scored, and any error. {len(items)} items, "
        f"{failed} failed calls. Showing <span id='item-count'>{len(items)}</span>.</p>"
        "<p><input id='item-search' type='search' placeholder='Search the items' size='40'></p>"
    )
    body = intro + (
        tables.table_html(items, "items", max_rows=100000) if len(items) else "<p>No items.</p>"
    )
    return tables.page(f"{study} · {model}: per-item records", body, SEARCH_SCRIPT)
