"""The per-item records of one study and evaluated model, read from a run's outputs.

One record per request the model answered (``results/{study}/responses/{model}/*.jsonl``), with
its input messages, raw output, finish reason and error, joined with every per-model table that
identifies its rows by the request's fields (parses, judge verdicts, scores; the same join the
per-item report pages make). Columns are sorted into scores (numbers from the ``scores`` table),
judge verdicts and reasons (tables of judged or verified answers), and the rest of the parse.
The run's headline measures for the model come from ``results/summary.tsv``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ..core import layout
from ..core.io import iter_jsonl
from ..core.layout import IN_STUDY, ResultPaths
from ..report.drilldown import per_model_tables
from ..studies import contract
from .phi import Redactor

# Folders of per-model tables whose columns are a judge's verdicts and reasons.
JUDGE_FOLDERS = ("judged", "verdicts", "verified", "matches", "chosen")
# Columns that carry why an item was not scored.
UNSCORED_COLUMNS = ("parse_error", "unscored", "unscored_reason", "parse_failures")
# Columns of the studies' per-item tables whose values are categories the study defines (views,
# regimes, schema fields), never text of the inputs.
CATEGORY_COLUMNS = ("gold_view", "view", "field", "variant", "regime", "section", "subtype",
                    "status", "tuple_name", "method")  # fmt: skip
# Columns of a scores table that are the judge's verdict or reason, not a score of the answer.
VERDICT_COLUMNS = ("reason", "verifier", "verdict", "judge", "retried")


@dataclass
class Item:
    id: str
    requestset: str
    request_id: str
    messages: list
    output: str | None
    finish: str
    error: str
    meta: dict = field(default_factory=dict)
    scores: dict = field(default_factory=dict)
    verdicts: dict = field(default_factory=dict)
    parse: dict = field(default_factory=dict)
    unscored: str = ""
    unit: str | None = None  # the resampling unit this item's scores count towards
    cluster: str | None = None  # the unit's cluster (resampled whole)


def _plain(value):
    """A table cell as JSON: NaN -> None, numpy scalars -> Python."""
    if value is None:
        return None
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def _number(value):
    value = _plain(value)
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        return float(value)
    return None


def resampling(study: str):
    """The study's ``resampling`` (unit and cluster), as its ``Study`` declares it."""
    return contract.study(study).resampling


def resampling_unit(study: str) -> str:
    return str(resampling(study))


def unit_clusters(root, config: dict, study: str, model: str) -> dict[str, str]:
    """unit id -> cluster id of ``model``'s scored units, from the study's ``unit_scores``
    (the per-unit values its intervals and model comparisons resample)."""
    declared = contract.study(study)
    score_path = Path(root) / ResultPaths(study).scores(model)
    if not score_path.exists():
        return {}
    inputs = declared.comparison_inputs(config)
    inputs = {
        k: str(Path(root) / v) if isinstance(v, str) else [str(Path(root) / p) for p in v]
        for k, v in inputs.items()
    }
    units = declared.unit_scores(score_path, inputs)
    return {str(u): str(c) for u, c in zip(units["unit"], units["cluster"], strict=True)}


def place_in_units(items: list[Item], clusters: dict[str, str]) -> None:
    """Each item's unit (its request id, else the first of its request fields, that is a unit)
    and the unit's cluster; an item that is part of a unit without naming it alone (a unit of
    several fields, e.g. a profile under a regime) gets the cluster its fields name."""
    cluster_ids = set(clusters.values())
    for item in items:
        candidates = [item.request_id, *map(str, item.meta.values())]
        unit = next((c for c in candidates if c in clusters), None)
        if unit is not None:
            item.unit, item.cluster = unit, clusters[unit]
        else:
            item.cluster = next((c for c in candidates if c in cluster_ids), None)


def _join_keys(table: pd.DataFrame, meta_keys: list[str], request_ids: set[str]) -> list[str]:
    """The columns that tie a per-model table's rows to requests: ``request_id``, else the
    request's fields the table carries, else a column whose values are the request ids (a
    study's own item id, e.g. Cancer-Myth's ``question_id``)."""
    if "request_id" in table.columns:
        return ["request_id"]
    keys = [k for k in meta_keys if k in table.columns]
    if keys:
        return keys
    for column in table.columns:
        values = set(table[column].dropna().astype(str))
        if values and values <= request_ids:
            return [column]
    return []


def _label(row: dict, varying: list[str], redactor: Redactor) -> str:
    """What tells a request's rows apart (e.g. CORAL's ``published/Datetime``). Under PHI
    redaction only the study's category columns are shown as they are; any other value may be
    text of the note (a parsed symptom, say) and is shown as its hash."""
    return "/".join(
        str(row[c]) if c in CATEGORY_COLUMNS else str(redactor.text(str(row[c]))) for c in varying
    )


def _is_verdict(folder: str, column: str) -> bool:
    return folder in JUDGE_FOLDERS or column in VERDICT_COLUMNS or column.startswith("judge")


def study_items(root, study: str, model: str, redactor: Redactor) -> list[Item]:
    """Every request of ``model`` in ``study``, as it may be exported under ``redactor``,
    with the rows of each per-model table that belong to it."""
    study_root = Path(root) / ResultPaths(study).root
    items: list[Item] = []
    for path in sorted((study_root / IN_STUDY.responses(model)).glob("*.jsonl")):
        requests = {}
        request_path = study_root / IN_STUDY.requests(path.stem)
        if request_path.exists():
            requests = {r["request_id"]: r for r in iter_jsonl(request_path)}
        for resp in iter_jsonl(path):
            rid = str(resp["request_id"])
            request = requests.get(resp["request_id"]) or {}
            items.append(
                Item(
                    id=f"{path.stem}/{rid}",
                    requestset=path.stem,
                    request_id=rid,
                    messages=[
                        {"role": m.get("role", "user"),
                         "content": redactor.text(m.get("content", ""))}
                        for m in request.get("messages") or []
                    ],
                    output=redactor.text(resp.get("text")),
                    finish=str(resp.get("finish_reason") or ""),
                    error=str(resp.get("error") or ""),
                    meta={k: _plain(v) for k, v in (request.get("meta") or resp.get("meta") or {}).items()},
                )
            )  # fmt: skip
    meta_keys = list(dict.fromkeys(k for i in items for k in i.meta))
    ids = {i.request_id for i in items}
    for folder, table in per_model_tables(study_root, model):
        keys = _join_keys(table, meta_keys, ids)
        if not keys:
            continue  # rows not tied to requests (a per-model summary): not per-item
        groups: dict[tuple, list[dict]] = {}
        for row in table.to_dict("records"):
            groups.setdefault(tuple(str(_plain(row[k])) for k in keys), []).append(row)
        for item in items:
            key = (item.request_id,) if keys == ["request_id"] else None
            if key is None and all(k in item.meta for k in keys):
                key = tuple(str(item.meta[k]) for k in keys)
            if key is None and len(keys) == 1:
                key = (item.request_id,)
            rows = groups.get(key, [])
            if rows:
                _attach(item, folder, rows, keys, redactor)
    return items


def _attach(item: Item, folder: str, rows: list[dict], keys: list[str], redactor: Redactor):
    columns = [c for c in rows[0] if c not in keys]
    varying = [
        c for c in columns
        if len(rows) > 1 and not isinstance(_plain(rows[0][c]), int | float | bool)
        and len({str(r[c]) for r in rows}) > 1
    ]  # fmt: skip
    for row in rows:
        label = _label(row, varying, redactor) if len(rows) > 1 else ""
        for column in columns:
            value = _plain(row[column])
            if value is None or value == "" or column in varying:
                continue
            name = f"{label}:{column}" if label else column
            number = _number(value)
            if column in UNSCORED_COLUMNS:
                if value not in (False, 0, 0.0):
                    reason = (
                        f"{name}={value}"
                        if number is not None
                        else f"{folder}:{name}: {redactor.text(value)}"
                    )
                    item.unscored = "; ".join(filter(None, [item.unscored, reason]))
            elif _is_verdict(folder, column):
                item.verdicts[f"{folder}:{name}"] = (
                    value if number is not None else redactor.text(value)
                )
            elif folder == layout.SCORES and number is not None and not isinstance(value, bool):
                item.scores[name] = number
            else:
                item.parse[f"{folder}:{name}"] = (
                    value if number is not None else redactor.text(value)
                )


def headlines(root, study: str, model: str) -> list[dict]:
    """The summary's headline rows of ``model`` in ``study`` (measure, value, CI, n)."""
    path = Path(root) / layout.summary()
    if not path.exists():
        return []
    df = pd.read_csv(path, sep="\t")
    df = df[(df["study"] == study) & (df["model"] == model)]
    out = []
    for _, r in df.iterrows():
        value = pd.to_numeric(pd.Series([r["value"]]), errors="coerce").iloc[0]
        out.append(
            {
                "measure": r["measure"],
                "value": _plain(value),
                "note": None if _plain(value) is not None else str(r["value"]),
                "ci_low": _plain(r.get("ci_low")),
                "ci_high": _plain(r.get("ci_high")),
                "n": _plain(r.get("n")),
                "n_unscored": _plain(r.get("n_unscored")),
                "source": r.get("source"),
            }
        )
    return out
