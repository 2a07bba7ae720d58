"""The audit's stages, as rules/exposure.smk runs them: probe requests from the items, one item
table per model from its answers, the study's exposure table."""

from __future__ import annotations

import logging
from pathlib import Path

import pandas as pd

from ..core.io import iter_jsonl, write_table
from ..core.records import read_requests, read_responses, write_requests
from . import audit
from .figure import exposure_figure
from .probes import ProbeSettings, build_probes

log = logging.getLogger(__name__)


def _texts(row: dict, item_id: str, text_key: str):
    """(id, text) of a row: ``text_key`` names a field, or ``field.*.key`` one text per entry
    of a mapping (a CORAL note's sections), each its own item ``{id}:{entry}``."""
    if ".*." not in text_key:
        yield item_id, str(row.get(text_key) or "")
        return
    field, key = text_key.split(".*.")
    for name, entry in (row.get(field) or {}).items():
        yield f"{item_id}:{name}", str((entry or {}).get(key) or "")


def read_items(path, id_key: str, text_key: str) -> list[dict]:
    """``{"item_id", "text"}`` of each prepared item with text, once per id (blank ones cannot
    be probed)."""
    items: dict[str, dict] = {}
    for row in iter_jsonl(path):
        for item_id, text in _texts(row, str(row[id_key]), text_key):
            # an item listed twice (a note in two note sets) is probed once
            if text.strip():
                items.setdefault(item_id, {"item_id": item_id, "text": text})
    return list(items.values())


def probe_requests(items_path, template_path, out, probe: str, params: dict) -> None:
    items = read_items(items_path, params["id_key"], params["text_key"])
    settings = ProbeSettings(
        params["dataset"],
        params["kind"],
        params["seed"],
        params["n_items"],
        params["max_new_tokens"],
    )
    template = Path(template_path).read_text(encoding="utf-8")
    requests, skipped = build_probes(items, probe, template, settings)
    if skipped:
        log.info("%s probe: %d items too short to probe: %s", probe, len(skipped), skipped)
    write_requests(out, requests)


def item_table(request_paths, response_paths, out) -> pd.DataFrame:
    """One row per item and probe (``audit.ITEM_COLUMNS``) from each probe's requests and the
    model's responses."""
    frames = []
    for req_path, resp_path in zip(request_paths, response_paths, strict=True):
        requests = read_requests(req_path)
        probe = requests[0].meta["probe"] if requests else None
        if probe is None:
            continue
        responses = {r.request_id: r for r in read_responses(resp_path)}
        frames.append(audit.item_rows(probe, requests, responses))
    rows = (
        pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=audit.ITEM_COLUMNS)
    )
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    rows.to_csv(out, sep="\t", index=False)
    return rows


def exposure_table(
    item_tables, models, probes, not_run, out_tsv, out_md, out_figure
) -> pd.DataFrame:
    per_model = {
        m: pd.read_csv(path, sep="\t", dtype={"item_id": str})
        for m, path in zip(models, item_tables, strict=True)
    }
    table = audit.exposure_table(per_model, probes, not_run)
    write_table(
        table,
        out_tsv,
        out_md,
        title="Exposure audit: share of items above the controls' 95th percentile",
        notes=[
            "Intervals (95%): Wilson score interval of share_flagged (statsmodels). Unit: item; "
            "each unit its own cluster. n: column n.",
            "share_flagged: items whose probe score is above the 95th percentile of the same "
            "probe on perturbed copies of the items (controls). Verdict: exposed when the interval's lower bound is above "
            f"{audit.CHANCE:.0%} (the share expected by chance), not testable below "
            f"{audit.MIN_ITEMS} items answered. A negative result is not proof of absence "
            "(docs/exposure.md).",
        ],
    )
    exposure_figure(per_model, table, out_figure)
    return table
