"""The review page: one self-contained HTML file (inline CSS and JavaScript, no network).

The items, the scale and the rubric travel as one JSON document inside a
``<script type="application/json">`` element, with ``<``, ``>``, ``&`` and the two JavaScript
line separators written as ``\\uXXXX`` escapes so that no text can close the element; the
script puts every string on the page through ``textContent``, never as markup. The model's name
and the judge's verdict are not in the file at all. Labels autosave in the browser's
localStorage (keyed by study, plan and reviewer) and leave it only through "Download labels".
"""

from __future__ import annotations

import html
import json
from pathlib import Path

LABEL_FORMAT = "oncoeval-review-labels/1"


def script_json(data) -> str:
    """JSON safe inside a <script> element (and for JSON.parse)."""
    text = json.dumps(data, ensure_ascii=False)
    for raw, escaped in (
        ("&", "\\u0026"),
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(raw, escaped)
    return text


CSS = """
* { box-sizing: border-box; }
body { font: 15px/1.45 system-ui, sans-serif; margin: 0; color: #1b1b1b; background: #fafafa; }
header { background: #24425f; color: #fff; padding: 8px 16px; display: flex; gap: 16px;
  align-items: center; flex-wrap: wrap; }
header h1 { font-size: 17px; margin: 0; flex: 1 1 300px; }
header label { font-size: 13px; }
main { max-width: 1100px; margin: 0 auto; padding: 10px 16px 40px; }
.banner { background: #fff4d6; border: 1px solid #e0c060; padding: 8px 12px; margin: 8px 0; }
.field h2 { font-size: 13px; text-transform: uppercase; letter-spacing: .03em; color: #555;
  margin: 10px 0 2px; }
.field div { background: #fff; border: 1px solid #ddd; padding: 8px 10px; white-space: pre-wrap; }
#context { display: grid; grid-template-columns: repeat(auto-fit, minmax(320px, 1fr)); gap: 0 12px; }
#context .field div { max-height: 16em; overflow: auto; }
#scale { display: flex; gap: 8px; margin: 12px 0 6px; flex-wrap: wrap; }
#scale button { flex: 1 1 200px; text-align: left; padding: 8px; border: 2px solid #999;
  background: #fff; cursor: pointer; font: inherit; font-size: 13px; }
#scale button.chosen { border-color: #1d6b2f; background: #e3f4e6; }
#scale button b { font-size: 15px; }
#others { margin: 6px 0; }
textarea { width: 100%; height: 3.2em; font: inherit; }
nav { display: flex; gap: 8px; align-items: center; margin-top: 6px; flex-wrap: wrap; }
#progress { flex: 1; }
.keys { font-size: 12px; color: #444; }
kbd { border: 1px solid #aaa; border-radius: 3px; padding: 0 4px; background: #fff; }
"""

BODY = """
<header>
  <h1 id="title"></h1>
  <label>Reviewer <input id="reviewer" size="14" aria-label="Reviewer name"></label>
  <button id="download" type="button">Download labels</button>
</header>
<main>
  <div id="intro"></div>
  <div class="keys">Keys: <span id="keynums"></span> label (in the order shown)
  and go on; <kbd>&rarr;</kbd>/<kbd>j</kbd> next, <kbd>&larr;</kbd>/<kbd>k</kbd> previous,
  <kbd>u</kbd> next unlabelled; <kbd>n</kbd> note (<kbd>Esc</kbd> leaves it);
  <kbd>d</kbd> download.</div>
  <section id="item" aria-live="polite">
    <div id="fields"></div>
    <p id="ask"></p>
    <div id="others"></div>
    <div id="scale" role="group" aria-label="Label"></div>
    <nav>
      <button id="prev" type="button">&larr; Previous</button>
      <button id="next" type="button">Next &rarr;</button>
      <span id="progress"></span>
    </nav>
    <label for="note">Note (optional)</label>
    <textarea id="note"></textarea>
    <div id="context"></div>
  </section>
</main>
"""

SCRIPT = r"""
(function () {
  const D = JSON.parse(document.getElementById('review-data').textContent);
  const $ = function (id) { return document.getElementById(id); };
  const reviewerBox = $('reviewer');
  reviewerBox.value = localStorage.getItem('oncoeval-review-reviewer') || D.reviewer || '';
  function storeKey() {
    return 'oncoeval-review:' + D.study + ':' + D.plan_id + ':' + D.mode + ':' + reviewerBox.value;
  }
  let state = {};
  function load() {
    try { state = JSON.parse(localStorage.getItem(storeKey()) || '{}'); } catch (e) { state = {}; }
  }
  function save() { localStorage.setItem(storeKey(), JSON.stringify(state)); }
  load();
  let at = 0;
  $('title').textContent = D.title + (D.mode === 'adjudicate' ? ' (adjudication)' : '');
  const intro = $('intro');
  D.notices.forEach(function (text) {
    const p = document.createElement('p'); p.className = 'banner'; p.textContent = text;
    intro.appendChild(p);
  });
  $('ask').textContent = D.question;
  const buttons = D.scale.map(function (opt, i) {
    const b = document.createElement('button');
    b.type = 'button';
    const head = document.createElement('b');
    head.textContent = '[' + (i + 1) + '] ' + (opt.name || opt.value);
    b.appendChild(head);
    b.appendChild(document.createTextNode(' ' + opt.wording));
    b.addEventListener('click', function () { choose(opt.value); });
    $('scale').appendChild(b);
    return b;
  });
  function current() { return D.items[at]; }
  function entry() { return state[current().item_id] || {}; }
  function done() { return D.items.filter(function (it) { return state[it.item_id] && state[it.item_id].label !== undefined; }).length; }
  D.scale.forEach(function (opt, i) {
    const k = document.createElement('kbd'); k.textContent = String(i + 1);
    $('keynums').appendChild(k); $('keynums').appendChild(document.createTextNode(' '));
  });
  function fill(box, fields, it) {
    box.textContent = '';
    fields.forEach(function (f) {
      const wrap = document.createElement('div'); wrap.className = 'field';
      const h = document.createElement('h2'); h.textContent = f[1];
      const body = document.createElement('div'); body.textContent = it[f[0]];
      wrap.appendChild(h); wrap.appendChild(body); box.appendChild(wrap);
    });
  }
  function show() {
    const it = current();
    fill($('fields'), D.fields, it);
    fill($('context'), D.context || [], it);
    const others = $('others');
    others.textContent = it.others ? 'Reviewers\' labels: ' + it.others : '';
    const e = entry();
    buttons.forEach(function (b, i) {
      const on = e.label === D.scale[i].value;
      b.classList.toggle('chosen', on);
      b.setAttribute('aria-pressed', on ? 'true' : 'false');
    });
    $('note').value = e.note || '';
    $('progress').textContent = 'Item ' + (at + 1) + ' of ' + D.items.length + ' \u00b7 ' + done() + ' labelled';
  }
  function update(fields) {
    const it = current();
    state[it.item_id] = Object.assign({}, entry(), fields, {answer_sha256: it.answer_sha256});
    save();
  }
  function choose(value) { update({label: value}); go(1); }
  function go(step) { at = Math.max(0, Math.min(D.items.length - 1, at + step)); show(); }
  function nextOpen() {
    for (let k = 1; k <= D.items.length; k++) {
      const j = (at + k) % D.items.length;
      const e = state[D.items[j].item_id];
      if (!e || e.label === undefined) { at = j; show(); return; }
    }
  }
  $('note').addEventListener('input', function () { update({note: $('note').value}); });
  $('prev').addEventListener('click', function () { go(-1); });
  $('next').addEventListener('click', function () { go(1); });
  reviewerBox.addEventListener('change', function () {
    localStorage.setItem('oncoeval-review-reviewer', reviewerBox.value); load(); show();
  });
  function download() {
    const labels = D.items.filter(function (it) { return state[it.item_id] && state[it.item_id].label !== undefined; })
      .map(function (it) {
        const e = state[it.item_id];
        return {item_id: it.item_id, label: e.label, note: e.note || '', answer_sha256: e.answer_sha256};
      });
    const out = {format: D.format, study: D.study, plan_id: D.plan_id, mode: D.mode,
      reviewer: reviewerBox.value, labels: labels};
    const blob = new Blob([JSON.stringify(out, null, 1)], {type: 'application/json'});
    const a = document.createElement('a');
    a.href = URL.createObjectURL(blob);
    a.download = 'labels-' + D.study + '-' + D.mode + '-' + (reviewerBox.value || 'reviewer').replace(/[^A-Za-z0-9_-]/g, '_') + '.json';
    document.body.appendChild(a); a.click(); a.remove();
  }
  $('download').addEventListener('click', download);
  document.addEventListener('keydown', function (ev) {
    const typing = ev.target.tagName === 'TEXTAREA' || ev.target.tagName === 'INPUT';
    if (typing) { if (ev.key === 'Escape') { ev.target.blur(); } return; }
    if (ev.ctrlKey || ev.metaKey || ev.altKey) { return; }
    const n = parseInt(ev.key, 10);
    if (n >= 1 && n <= D.scale.length) { choose(D.scale[n - 1].value); }
    else if (ev.key === 'ArrowRight' || ev.key === 'j') { go(1); }
    else if (ev.key === 'ArrowLeft' || ev.key === 'k') { go(-1); }
    else if (ev.key === 'u') { nextOpen(); }
    else if (ev.key === 'n') { ev.preventDefault(); $('note').focus(); }
    else if (ev.key === 'd') { download(); }
    else { return; }
    ev.preventDefault();
  });
  show();
})();
"""


def render(data: dict) -> str:
    """The page of ``data`` (study, title, question, fields, scale, items, notices, plan_id,
    mode, reviewer)."""
    payload = {"format": LABEL_FORMAT, **data}
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; "
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'\">"
        f"<title>{html.escape(data['title'])}</title><style>{CSS}</style></head><body>"
        f"{BODY}<script type='application/json' id='review-data'>{script_json(payload)}</script>"
        f"<script>{SCRIPT}</script></body></html>\n"
    )


def write(path, data: dict) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render(data), encoding="utf-8")
    return path
