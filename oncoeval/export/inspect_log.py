"""An inspect eval log (``.eval``) per study and evaluated model, written with inspect-ai's own
log API (``inspect_ai.log.write_eval_log``), so that ``inspect view`` opens it and
``inspect_ai.log.read_eval_log`` reads every sample back.

A sample is one request: its input messages, the model's output, the per-item scores (one
inspect ``Score`` per score column), and in its metadata the request set and id, the request's
fields, the parse, the judge verdicts and reasons, why it was unscored, and the study's
resampling unit. The log's results hold the run's headline measures with their intervals.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from inspect_ai.log import (
    EvalConfig,
    EvalDataset,
    EvalLog,
    EvalMetric,
    EvalResults,
    EvalSample,
    EvalScore,
    EvalSpec,
    write_eval_log,
)
from inspect_ai.model import (
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    ModelOutput,
)
from inspect_ai.scorer import Score

from ..core.format import finite
from .items import Item

MESSAGE_TYPES = {"system": ChatMessageSystem, "assistant": ChatMessageAssistant}


def _messages(item: Item) -> list:
    return [
        MESSAGE_TYPES.get(m["role"], ChatMessageUser)(content=m["content"] or "")
        for m in item.messages
    ]


def sample(item: Item, model: str, unit: str) -> EvalSample:
    output = ModelOutput.from_content(model=model, content=item.output or "")
    if item.finish == "length":
        output.choices[0].stop_reason = "max_tokens"
    # inspect view's answer column shows a score's ``answer``: the model's output. An item
    # left unscored carries no score (its reason is in the metadata), never a NaN.
    answer = item.output or ""
    scores = {
        name: Score(value=finite(value), answer=answer, explanation=item.unscored or None)
        for name, value in item.scores.items()
        if finite(value) is not None
    }
    return EvalSample(
        id=item.id,
        epoch=1,
        input=_messages(item),
        target="",
        messages=[*_messages(item), ChatMessageAssistant(content=item.output or "")],
        output=output,
        scores=scores,
        error=None,
        metadata={
            "request_set": item.requestset,
            "request_id": item.request_id,
            "request_fields": item.meta,
            "finish_reason": item.finish,
            "call_error": item.error or None,
            "parse": item.parse,
            "judge": item.verdicts,
            "unscored_reason": item.unscored or None,
            "resampling_unit": unit,
            "unit": item.unit,
            "cluster": item.cluster,
        },
    )


def eval_log(
    study: str,
    model: str,
    items: list[Item],
    headlines: list[dict],
    unit: str,
    model_record: dict,
    created: datetime | None = None,
    redacted: bool = False,
) -> EvalLog:
    created = created or datetime.now(UTC)
    # A headline without a value (no judge validation, too few models) is left out of the
    # metrics, which inspect shows as numbers; the log's metadata keeps it with its reason.
    metrics = {
        h["measure"]: EvalMetric(
            name=h["measure"],
            value=finite(h["value"]),
            params={
                **{k: finite(h[k]) for k in ("ci_low", "ci_high", "n", "n_unscored")},
                "note": h["note"],
            },
        )
        for h in headlines
        if finite(h["value"]) is not None
    }
    without = {
        h["measure"]: h.get("note") or "no value" for h in headlines if h["measure"] not in metrics
    }
    score_names = sorted({name for item in items for name in item.scores})
    spec = EvalSpec(
        created=created.isoformat(),
        task=f"oncoeval/{study}",
        dataset=EvalDataset(name=study, samples=len(items), sample_ids=[i.id for i in items]),
        model=model,
        config=EvalConfig(),
        metadata={
            "study": study,
            "resampling_unit": unit,
            "model_provenance": model_record,
            "phi_redacted": redacted,
            "headlines_without_value": without,
        },
    )
    results = EvalResults(
        total_samples=len(items),
        completed_samples=sum(1 for i in items if not i.error),
        scores=[
            EvalScore(
                name="headline",
                scorer="oncoeval",
                metrics=metrics,
                scored_samples=len(items),
                metadata={"per_item_scores": score_names},
            )
        ],
    )
    return EvalLog(
        status="success",
        eval=spec,
        results=results,
        samples=[sample(item, model, unit) for item in items],
    )


def write(log: EvalLog, path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_eval_log(log, str(path))
    return path
