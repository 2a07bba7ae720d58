"""Every Eval Ever records of one study and evaluated model, written by this module as plain JSON.

Every Eval Ever (``every-eval-ever`` on PyPI) needs Python >= 3.12, newer than the workflow's
environment, so this module writes its two formats itself from the schema (version 0.3.0) and
the tests validate the files with the package's own validator in the tools environment
(``make tools``; see docs/publishing.md):

- the aggregate record ``data/<benchmark>/<developer>/<model>/<uuid>.json``: one evaluation
  result per headline measure, its interval (over whole clusters) and the number of units;
- the instance records ``<uuid>_samples.jsonl`` beside it: one row per scored item and per-item
  score column (an item without a score is not a row: the aggregate counts it as unscored).

The uuid is derived from the study, model and config, so that a rerun overwrites its own files.
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from dataclasses import dataclass
from pathlib import Path

from ..backends import get_backend
from ..core.errors import ConfigError
from ..core.names import slug
from .items import Item

SCHEMA_VERSION = "0.3.0"
BENCHMARK_PREFIX = "oncoeval-"


# The studies' intervals (oncoeval.stats.compare.mean_ci): no bootstrap resamples to count.
INTERVAL_METHOD = (
    "by the measure's declared kind and range: Wilson score interval for a share of "
    "independent units, else a Wilson-type score interval with the effective n of the "
    "cluster-robust standard error, whole clusters"
)


_slug = slug  # a config's ids that fold to one slug are refused (oncoeval.core.names)


def record_uuid(*parts: str) -> str:
    digest = hashlib.sha256("\x1f".join(parts).encode()).digest()[:16]
    return str(uuid.UUID(bytes=digest, version=4))


def model_id(mid: str, record: dict) -> str:
    """``developer/name`` as Hugging Face writes it: the model's hub id where its identity names
    one (``org/name``), else ``oncoeval-config/<id in the config>``."""
    identity = record.get("identity") or {}
    for key in ("model", "model_id", "repo_id", "hub_id"):
        value = identity.get(key) if isinstance(identity, dict) else None
        if isinstance(value, str) and re.fullmatch(r"[\w.-]+/[\w.-]+", value):
            return value
    return f"oncoeval-config/{_slug(mid)}"


def _strings(mapping: dict) -> dict[str, str]:
    return {
        str(k): v if isinstance(v, str) else json.dumps(v, sort_keys=True, default=str)
        for k, v in mapping.items()
        if v is not None
    }


def _model_info(mid: str, record: dict) -> dict:
    backend = record.get("backend") or "unknown"
    try:  # what the backend declares of where its models run (oncoeval.backends.base)
        cls = get_backend(backend)
    except ConfigError:  # a provenance record of a backend this version does not have
        cls = None
    return {
        "name": mid,
        "id": model_id(mid, record),
        "inference_platform": backend,
        "additional_details": {
            "deployment_type": (cls and cls.deployment) or "unknown",
            "model_availability": "open_weights" if cls and cls.open_weights else "unknown",
            **_strings({k: v for k, v in record.items() if k not in ("backend",)}),
        },
    }


def _range(study: str, measure: str) -> tuple[float, float]:
    """The range a headline's value can take, as its study declares it (``Headline.scale``)."""
    from oncoeval.studies import contract

    for headline in contract.study(study).headlines:
        if headline.measure == measure:
            return tuple(float(v) for v in headline.scale)
    return (0.0, 1.0)


@dataclass(frozen=True)
class Evaluation:
    """One study's results for one evaluated model: what both record formats are made from."""

    study: str
    mid: str  # the model's id in the config
    record: dict  # the model's entry in provenance.json
    headlines: list[dict]  # the run's headline measures of this study and model
    items: list[Item]
    data_files: dict[str, str]  # input file -> sha256
    bootstrap: dict  # the config's bootstrap block
    unit: str  # the study's resampling unit
    created: str  # the export's timestamp
    library_version: str

    @property
    def benchmark(self) -> str:
        return BENCHMARK_PREFIX + _slug(self.study)

    @property
    def model(self) -> str:
        return model_id(self.mid, self.record)

    @property
    def evaluation_id(self) -> str:
        return f"{self.benchmark}/{self.model}/{self.created}"


def aggregate(ev: Evaluation, detailed: dict) -> dict:
    """The aggregate record; ``detailed`` is its ``detailed_evaluation_results`` (the instance
    file's path, row count and checksum)."""
    results = []
    for h in ev.headlines:
        if h["value"] is None:
            continue  # a measure the run could not compute (its note says why)
        low, high = _range(ev.study, h["measure"])
        details = _strings({"source_table": h["source"], "n_unscored": h["n_unscored"]})
        score = {"score": float(h["value"]), "details": details}
        if h["ci_low"] is not None and h["ci_high"] is not None:
            score["uncertainty"] = {
                "confidence_interval": {
                    "lower": float(h["ci_low"]),
                    "upper": float(h["ci_high"]),
                    "confidence_level": float(ev.bootstrap["ci"]),
                    "method": f"{INTERVAL_METHOD}; unit: {ev.unit}",
                },
                **({"num_samples": int(h["n"])} if h["n"] is not None else {}),
            }
        results.append(
            {
                "evaluation_result_id": _slug(h["measure"]),
                "evaluation_name": f"{ev.study}: {h['measure']}",
                "source_data": {
                    "dataset_name": ev.study,
                    "source_type": "other",
                    "additional_details": {f"sha256:{p}": s for p, s in ev.data_files.items()},
                },
                "evaluation_timestamp": ev.created,
                "metric_config": {
                    "evaluation_description": h["measure"],
                    "lower_is_better": False,
                    "score_type": "continuous",
                    "min_score": low,
                    "max_score": high,
                },
                "score_details": score,
            }
        )
    unscored = sum(1 for i in ev.items if not i.scores)
    return {
        "schema_version": SCHEMA_VERSION,
        "evaluation_id": ev.evaluation_id,
        "evaluation_timestamp": ev.created,
        "retrieved_timestamp": ev.created,
        "source_metadata": {
            "source_name": "OncoEval",
            "source_type": "evaluation_run",
            "source_organization_name": "OncoEval run",
            "evaluator_relationship": "third_party",
            "additional_details": _strings(
                {"resampling_unit": ev.unit, "unscored_items": unscored}
            ),
        },
        "eval_library": {"name": "oncoeval", "version": ev.library_version},
        "model_info": _model_info(ev.mid, ev.record),
        "evaluation_results": results,
        "detailed_evaluation_results": detailed,
    }


def _input_text(item: Item) -> str:
    return "\n\n".join(f"[{m['role']}] {m['content']}" for m in item.messages)


def instance_rows(ev: Evaluation):
    for item in ev.items:
        raw = _input_text(item)
        for name, value in sorted(item.scores.items()):
            yield {
                "schema_version": SCHEMA_VERSION,
                "evaluation_id": ev.evaluation_id,
                "model_id": ev.model,
                "evaluation_name": f"{ev.study}: {name}",
                "sample_id": item.id,
                "sample_hash": hashlib.sha256(raw.encode()).hexdigest(),
                "interaction_type": "single_turn",
                "input": {"raw": raw, "reference": []},
                "output": {"raw": [item.output or ""]},
                "answer_attribution": [
                    {
                        "turn_idx": 0,
                        "source": "output.raw",
                        "extracted_value": json.dumps(item.parse, sort_keys=True, default=str),
                        "extraction_method": f"oncoeval {ev.study} parser",
                        "is_terminal": True,
                    }
                ],
                "evaluation": {"score": float(value), "is_correct": float(value) == 1.0},
                "error": item.error or None,
                "metadata": _strings(
                    {
                        "request_set": item.requestset,
                        "request_id": item.request_id,
                        "judge": item.verdicts or None,
                        "unit": item.unit,
                        "cluster": item.cluster,
                        **{f"field:{k}": v for k, v in item.meta.items()},
                    }
                ),
            }


def write(out_root, ev: Evaluation, config_digest: str) -> Path:
    """Write the aggregate and instance records under ``out_root/data/``; returns the aggregate."""
    developer, name = ev.model.split("/", 1)
    rid = record_uuid(ev.study, ev.mid, config_digest)
    folder = Path("data") / ev.benchmark / developer / name
    rows_rel = f"{folder.as_posix()}/{rid}_samples.jsonl"
    (Path(out_root) / folder).mkdir(parents=True, exist_ok=True)
    rows = list(instance_rows(ev))
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    (Path(out_root) / rows_rel).write_text(text, encoding="utf-8")
    detailed = {
        "format": "jsonl",
        "file_path": rows_rel,
        "hash_algorithm": "sha256",
        "checksum": hashlib.sha256(text.encode()).hexdigest(),
        "total_rows": len(rows),
    }
    path = Path(out_root) / folder / f"{rid}.json"
    agg = aggregate(ev, detailed)
    path.write_text(json.dumps(agg, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path
