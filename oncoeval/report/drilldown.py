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
from .phi import LEFT_OUT as PHI_LEFT_OUT
from .phi import leave_out_text

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
    """One row per answered request of ``model`` in ``study``, joined with its per-item rows.

    A per-model table joins on the request's ``meta`` fields it carries (and ``request_id``),
    when they identify its rows: per-request tables (parses, rollouts) match one request each,
    per-unit tables (a patient's scores) repeat on each of the unit's requests.
    """
    root = Path(root) / "results" / study
    rows, meta_keys = [], {}
    for responses_path in sorted(glob.glob(str(root / "responses" / model / "*.jsonl"))):
        requestset = Path(responses_path).stem
        requests_path = root / "requests" / f"{requestset}.jsonl"
        prompts = {}
        if requests_path.exists():
            prompts = {r["request_id"]: r.get("messages") for r in iter_jsonl(requests_path)}
        for resp in iter_jsonl(responses_path):
            rid = resp["request_id"]
            meta = {k: _cell(v) for k, v in (resp.get("meta") or {}).items()}
            meta_keys.update(dict.fromkeys(meta))
            text_in = _truncate(_prompt_text(prompts.get(rid)), max_chars)
            text_out = _truncate(resp.get("text"), max_chars * 2)
            rows.append(
                {
                    "request set": requestset,
                    "request_id": rid,
                    **meta,
                    "input": text_in if include_text else PHI_LEFT_OUT,
                    "model output": text_out if include_text else PHI_LEFT_OUT,
                    "finish": resp.get("finish_reason") or "",
                    "error": resp.get("error") or "",
                }
            )
    items = pd.DataFrame(rows)
    for folder, extra in per_model_tables(root, model):
        keys = [k for k in ["request_id", *meta_keys] if k in extra.columns and k in items]
        if not len(items) or not keys or extra.duplicated(keys).any():
            continue  # rows not identified by the request's fields: shown on its own page
        extra = extra.astype({k: items[k].dtype for k in keys}, errors="ignore")
        values = [c for c in extra.columns if c not in keys]
        extra = extra[keys + values].rename(columns={c: f"{folder}: {c}" for c in values})
        items = items.merge(extra, on=keys, how="left")
    # The joined tables' reasons, parsed values and quotes, and any request meta copied from an
    # input record, are left out by the same rule as every other report page.
    return items if include_text else leave_out_text(items, study)


def per_model_tables(study_root: Path, model: str):
    """(folder, table) of each per-item table of one model: ``{folder}/{model}.tsv|jsonl``."""
    paths = sorted(glob.glob(str(study_root / "*" / f"{model}.tsv")))
    paths += sorted(glob.glob(str(study_root / "*" / f"{model}.jsonl")))
    for path in paths:
        folder = Path(path).parent.name
        if folder == "responses":
            continue
        if path.endswith(".tsv"):
            df = pd.read_csv(path, sep="\t")
        else:
            df = pd.DataFrame([{k: _cell(v) for k, v in row.items()} for row in iter_jsonl(path)])
        yield folder, df


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
