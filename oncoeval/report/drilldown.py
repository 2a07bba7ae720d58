"""Per-item pages: for one study and model, every request with its answer, parse and score.

Built from the per-item records: the request sets (``results/{study}/requests/*.jsonl``), the
model's responses, and any per-model table (``parsed``, ``scores``...) that carries a
``request_id`` column. Each answer of the study's evaluated request set (its ``Study.answers``
declaration, oncoeval.studies.contract.Answers) shows, first in its row, what parsed, the
per-item score and, for a judged study, the judge's verdict and reason. The page sorts by any
column (click its header) and filters by text, parse status, error and score range, in plain
JavaScript that runs offline. A compare page per study shows every model's answer and score to
one item side by side. Text of a study marked ``contains_phi`` is left out unless the config's
``report.include_phi_text`` asks for it (oncoeval.report.phi): the row keeps its request id,
parse status, score and verdict.
"""

from __future__ import annotations

import glob
import html
import json
from pathlib import Path

import pandas as pd

from ..core import layout
from ..core.io import iter_jsonl
from ..core.layout import IN_STUDY, ResultPaths
from . import catalog, tables
from .phi import LEFT_OUT as PHI_LEFT_OUT
from .phi import leave_out_text

ANSWER_COLUMNS = ["parse", "parsed", "score", "score note", "verdict", "judge's reason"]
# What an item page shows first, in this order; the request's fields, the input and the study's
# joined per-item tables follow behind the "more columns" control (MORE_COLUMNS).
FIRST_COLUMNS = ["request set", "request_id", "model output", *ANSWER_COLUMNS, "error", "finish"]
# A score given by the study's rule to an answer with nothing parsed (say, 0 for an empty list).
DEFAULTED = "defaulted: nothing parsed; the study's rule scores such an answer"
# Sorting and filtering in the page itself (no library, no network): headers sort on click
# (numbers as numbers, blanks last); the controls filter by text, parse status, error and score.
ITEMS_SCRIPT = """
<script>
(function () {
  const table = document.querySelector('#items table');
  if (!table) { return; }
  const headers = Array.from(table.querySelectorAll('thead th'));
  const column = (name) => headers.findIndex((th) => th.textContent.trim() === name);
  const rows = () => Array.from(table.querySelectorAll('tbody tr'));
  // A missing value ("–") sorts and filters as a blank.
  const cell = (row, i) => {
    const text = i < 0 ? '' : row.children[i].textContent.trim();
    return text === '\u2013' ? '' : text;
  };
  const number = (text) => (text === '' || isNaN(Number(text)) ? null : Number(text));
  const controls = {
    q: document.getElementById('item-search'),
    parse: document.getElementById('item-parse'),
    error: document.getElementById('item-error'),
    min: document.getElementById('item-score-min'),
    max: document.getElementById('item-score-max'),
  };
  // A page without a control (the compare page has the search alone) does not filter by it.
  const value = (name) => (controls[name] ? controls[name].value : '');
  function keep(row) {
    const query = value('q').toLowerCase();
    if (query && !row.textContent.toLowerCase().includes(query)) { return false; }
    const parse = cell(row, column('parse'));
    if (value('parse') === 'parsed' && parse !== 'parsed') { return false; }
    if (value('parse') === 'nothing' && !parse.startsWith('nothing parsed')) { return false; }
    const error = cell(row, column('error'));
    if (value('error') === 'with' && error === '') { return false; }
    if (value('error') === 'without' && error !== '') { return false; }
    const score = number(cell(row, column('score')));
    const low = number(value('min')), high = number(value('max'));
    if ((low !== null || high !== null) && score === null) { return false; }
    if (low !== null && score < low) { return false; }
    if (high !== null && score > high) { return false; }
    return true;
  }
  function filter() {
    let shown = 0;
    rows().forEach(function (row) {
      const match = keep(row);
      row.style.display = match ? '' : 'none';
      if (match) { shown += 1; }
    });
    document.getElementById('item-count').textContent = shown;
  }
  function sortBy(i, ascending) {
    const th = headers[i];
    headers.forEach((h) => delete h.dataset.sorted);
    th.dataset.sorted = ascending ? 'ascending' : 'descending';
    const sign = ascending ? 1 : -1;
    const sorted = rows().sort(function (a, b) {
      const x = cell(a, i), y = cell(b, i);
      const nx = number(x), ny = number(y);
      if (x === '' || y === '') { return (x === '') - (y === ''); }
      if (nx !== null && ny !== null) { return sign * (nx - ny); }
      return sign * x.localeCompare(y);
    });
    const body = table.querySelector('tbody');
    sorted.forEach((row) => body.appendChild(row));
  }
  headers.forEach(function (th, i) {
    th.style.cursor = 'pointer';
    th.title = 'Sort by this column';
    th.addEventListener('click', () => sortBy(i, th.dataset.sorted !== 'ascending'));
  });
  Object.values(controls).filter(Boolean).forEach((c) => c.addEventListener('input', filter));
  // A link may carry the view: page.html#q=TEXT&parse=nothing&error=with&min=0&max=0.5
  // &sort=score&order=descending opens the page filtered and sorted.
  const wanted = new URLSearchParams(location.hash.slice(1));
  for (const [name, control] of Object.entries(controls)) {
    if (control && wanted.has(name)) { control.value = wanted.get(name); }
  }
  if (wanted.has('sort') && column(wanted.get('sort')) >= 0) {
    sortBy(column(wanted.get('sort')), wanted.get('order') !== 'descending');
  }
  filter();
})();
</script>
"""
FILTERS = (
    "<p><input id='item-search' type='search' placeholder='Search the items' size='30'> "
    "<label>parse <select id='item-parse'><option value=''>any</option>"
    "<option value='parsed'>parsed</option><option value='nothing'>nothing parsed</option>"
    "</select></label> "
    "<label>error <select id='item-error'><option value=''>any</option>"
    "<option value='with'>with an error</option><option value='without'>without</option>"
    "</select></label> "
    "<label>score from <input id='item-score-min' type='number' step='any' size='6'></label> "
    "<label>to <input id='item-score-max' type='number' step='any' size='6'></label></p>"
)


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
    """One row per answered request of ``model`` in its own request sets of ``study`` (``catalog.own_response_files``), joined with its per-item rows.

    The answers of the study's evaluated request set lead with their parse, score and verdict
    (:func:`answer_columns`). A per-model table joins on the request's ``meta`` fields it
    carries (and ``request_id``), when they identify its rows: per-request tables (parses,
    rollouts) match one request each, per-unit tables (a patient's scores) repeat on each of
    the unit's requests.
    """
    own = catalog.own_response_files(study, model, root)
    root = Path(root) / ResultPaths(study).root
    rows, meta_keys = [], {}
    for responses_path in own:
        requestset = Path(responses_path).stem
        requests_path = root / IN_STUDY.requests(requestset)
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
    declared = (
        catalog.STUDY_DECLARATIONS[study].answers if study in catalog.STUDY_DECLARATIONS else None
    )
    if declared is not None and len(items):
        items = answer_columns(items, root, model, declared, max_chars, include_text)
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


def _key_values(items: pd.DataFrame, keys) -> pd.Series:
    """Each row's answer key: its meta fields named ``keys``, else (one key) its request id."""

    def column(k):
        if k in items:
            return items[k].astype(str)
        return items["request_id"].astype(str) if len(keys) == 1 else pd.Series("", items.index)

    parts = [column(k) for k in keys]
    return pd.Series(list(zip(*parts, strict=True)), index=items.index)


def _grouped(table: pd.DataFrame, keys) -> pd.Series:
    return pd.Series(
        list(zip(*(table[k].astype(str) for k in keys), strict=True)), index=table.index
    )


def answer_columns(items, study_root: Path, model, declared, max_chars, include_text):
    """``parse``, ``parsed``, ``score`` and (judged studies) ``verdict`` and ``judge's reason``
    of each answer of the evaluated request set, placed after the model output."""
    answer = items["request set"] == declared.requestset
    key = _key_values(items, declared.keys)
    new = pd.DataFrame(index=items.index, columns=ANSWER_COLUMNS, dtype=object).fillna("")
    parsed_path = study_root / declared.parsed.format(model=model)
    if parsed_path.exists():
        table = _read(parsed_path)
        if len(table):
            groups = _grouped(table, declared.keys)
            ok = table.index.isin(table.query(declared.ok, engine="python").index)
            for k, part in table.groupby(groups, sort=False):
                rows = answer & (key == k)
                good = part[ok[part.index]]
                if len(good):
                    status = "parsed"
                else:  # why, unless it may quote the text of a contains_phi study
                    why = part[declared.reason].iloc[0] if declared.reason and include_text else ""
                    status = f"nothing parsed: {why}" if why else "nothing parsed"
                new.loc[rows, "parse"] = status
                if declared.value and len(good):
                    values = "; ".join(str(v) for v in good[declared.value] if str(v))
                    new.loc[rows, "parsed"] = (
                        _truncate(values, max_chars) if include_text else PHI_LEFT_OUT
                    )
                for column, shown in zip(
                    declared.verdict, ("verdict", "judge's reason"), strict=False
                ):
                    if column not in part.columns:  # e.g. a jury's verdicts carry no reason
                        continue
                    value = _text(part[column].iloc[0])
                    new.loc[rows, shown] = (
                        value if include_text or shown == "verdict" else PHI_LEFT_OUT
                    )
    if declared.score is not None:
        score_path = study_root / declared.score.table.format(model=model)
        if score_path.exists():
            scores = pd.read_csv(score_path, sep="\t")
            means = _item_scores(scores, declared.score)
            if means is not None:
                unit = _key_values(items, declared.score.keys)
                new["score"] = [
                    _score(means.get(u)) if a else "" for u, a in zip(unit, answer, strict=True)
                ]
                credited = _credited(scores, declared.score)
                new["score note"] = [
                    credited.get(u, "") if a else "" for u, a in zip(unit, answer, strict=True)
                ]
    # A score beside "nothing parsed" that no credit explains is the study's default.
    unexplained = new["parse"].str.startswith("nothing parsed") & (new["score"] != "")
    new.loc[unexplained & (new["score note"] == ""), "score note"] = DEFAULTED
    if not (new["score note"] != "").any():
        new = new.drop(columns=["score note"])
    if not declared.verdict:
        new = new.drop(columns=["verdict", "judge's reason"])
    at = items.columns.get_loc("model output") + 1
    for offset, column in enumerate(new.columns):
        items.insert(at + offset, column, new[column])
    return items


def _item_scores(scores: pd.DataFrame, declared) -> pd.Series | None:
    """The declared score per answer (or unit), averaged over its rows; None when the table
    lacks the declared columns (a table of another shape: no score column rather than a crash).
    """
    if not {declared.column, *declared.keys} <= set(scores.columns):
        return None
    if declared.where:
        try:
            scores = scores.query(declared.where, engine="python")
        except NameError:  # a column the view names is missing
            return None
    values = pd.to_numeric(scores[declared.column], errors="coerce")
    return values.groupby(_grouped(scores, declared.keys)).mean()


def _credited(scores: pd.DataFrame, declared) -> dict:
    """answer key -> the study's sentence for a score credited by its rule (with how many of
    the answer's rows were credited, when not all), for answers with a credited row."""
    if not declared.credited or declared.credited[0] not in scores.columns:
        return {}
    column, sentence = declared.credited
    if declared.where:
        try:
            scores = scores.query(declared.where, engine="python")
        except NameError:
            return {}
    flags = scores[column].astype(str).str.lower().isin(("true", "1", "1.0"))
    out = {}
    for key, part in flags.groupby(_grouped(scores, declared.keys)):
        if part.any():
            share = "" if part.all() else f" ({int(part.sum())} of {len(part)} rows)"
            out[key] = sentence + share
    return out


def _text(value) -> str:
    """A verdict as written: whole numbers without a decimal point, text as it is."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _score(value) -> str:
    return "" if value is None or pd.isna(value) else tables.format_number(float(value))


def _read(path: Path) -> pd.DataFrame:
    if path.suffix == ".tsv":
        df = pd.read_csv(path, sep="\t", keep_default_na=False)
    else:
        df = pd.DataFrame([{k: _cell(v) for k, v in r.items()} for r in iter_jsonl(path)])
    df = df.reset_index(drop=True).astype(object)
    return df.where(df.notna(), "")


def per_model_tables(study_root: Path, model: str):
    """(folder, table) of each per-item table of one model: ``{folder}/{model}.tsv|jsonl``."""
    paths = sorted(glob.glob(str(study_root / "*" / f"{model}.tsv")))
    paths += sorted(glob.glob(str(study_root / "*" / f"{model}.jsonl")))
    for path in paths:
        folder = Path(path).parent.name
        if folder == layout.RESPONSES:
            continue
        if path.endswith(".tsv"):
            df = pd.read_csv(path, sep="\t")
        else:
            df = pd.DataFrame([{k: _cell(v) for k, v in row.items()} for row in iter_jsonl(path)])
        yield folder, df


def _cell(value):
    return json.dumps(value, ensure_ascii=False) if isinstance(value, dict | list) else value


def first_columns_first(items: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """The table with :data:`FIRST_COLUMNS` first (those it has), then the input, the
    request's fields and the joined tables; and how many columns come first."""
    first = [c for c in FIRST_COLUMNS if c in items.columns]
    rest = [c for c in items.columns if c not in first]
    rest = [c for c in ("input",) if c in rest] + [c for c in rest if c != "input"]
    return items[first + rest], len(first)


def more_columns(n_first: int, extra, table_id: str = "items") -> str:
    """A "more columns" control (``<details>``) that shows the table's columns after the
    first ``n_first`` when opened; closed, the page shows only the first ones (CSS alone)."""
    if not len(extra):
        return ""
    cells = f"#{table_id} td:nth-child(n+{n_first + 1}), #{table_id} th:nth-child(n+{n_first + 1})"
    names = ", ".join(tables.column_label(c) for c in extra)
    return (
        f"<style>details#more-columns:not([open]) ~ {cells} {{ display: none; }}</style>"
        f"<details id='more-columns'><summary>more columns ({len(extra)}): the input, the "
        "request's fields and the study's per-item tables</summary>"
        f"<p class='caption'>{html.escape(names)}</p></details>"
    )


def items_page(
    root, study: str, model: str, max_chars: int = 600, include_text: bool = True, compare=None
) -> str:
    items = item_rows(root, study, model, max_chars, include_text)
    items, n_first = first_columns_first(items) if len(items) else (items, 0)
    failed = int((items["error"] != "").sum()) if len(items) else 0
    link = (
        f" <a href='{html.escape(compare)}'>Compare the models' answers item by item.</a>"
        if compare
        else ""
    )
    intro = (
        f"<p class='caption'>Every request of {html.escape(catalog.study_name(study))} "
        f"answered by <b>{html.escape(model)}</b>, one row each: the raw model output, what "
        "parsed from it, the item's score (and why, where the study's rule credits or "
        "defaults it) and, for a judged study, the judge's verdict and reason; then error and "
        f"finish reason; the input (truncated to {max_chars} characters) and the study's "
        f"further columns behind 'more columns'. {len(items)} items, {failed} failed calls. "
        f"Showing <span id='item-count'>{len(items)}</span>. Click a column header to "
        f"sort.{link}</p>" + FILTERS
    )
    more = more_columns(n_first, items.columns[n_first:]) if len(items) else ""
    body = intro + (
        more + tables.table_html(items, "items", max_rows=100000)
        if len(items)
        else "<p>No items.</p>"
    )
    title = f"{catalog.study_name(study)} · {model}: answers item by item"
    return tables.page(title, body, ITEMS_SCRIPT)


def compare_rows(root, study: str, models, max_chars: int = 600, include_text: bool = True):
    """One row per answer of the study's evaluated request set: its input once, then each
    model's output, parse and score side by side."""
    declared = (
        catalog.STUDY_DECLARATIONS[study].answers if study in catalog.STUDY_DECLARATIONS else None
    )
    merged = None
    for model in models:
        items = item_rows(root, study, model, max_chars, include_text)
        if not len(items):
            continue
        if declared is not None:
            items = items[items["request set"] == declared.requestset]
        shown = [
            c for c in ("model output", "parse", "score", "score note", "verdict") if c in items
        ]
        part = items[["request_id", "input", *shown]].rename(
            columns={c: f"{model}: {c}" for c in shown}
        )
        if merged is None:
            merged = part
        else:
            merged = merged.merge(part.drop(columns="input"), on="request_id", how="outer")
    return merged if merged is not None else pd.DataFrame()


def compare_page(root, study: str, models, max_chars: int = 600, include_text: bool = True):
    rows = compare_rows(root, study, models, max_chars, include_text)
    intro = (
        f"<p class='caption'>The answers of {len(models)} models to each item of "
        f"{html.escape(catalog.study_name(study))} side by side: per model, its output, what "
        "parsed, the item's score and why, where the study's rule credits or defaults it. "
        f"{len(rows)} items. Showing <span id='item-count'>{len(rows)}</span>. Click a "
        "column header to sort.</p>"
        "<p><input id='item-search' type='search' placeholder='Search the items' size='30'></p>"
    )
    body = intro + (
        tables.table_html(rows, "items", max_rows=100000) if len(rows) else "<p>No items.</p>"
    )
    title = f"{catalog.study_name(study)}: the models' answers side by side"
    return tables.page(title, body, ITEMS_SCRIPT)
