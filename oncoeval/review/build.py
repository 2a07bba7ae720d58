"""`make review`: draw (or reuse) a study's review plan and write its page.

Writes under ``results/{study}/review/``: ``plan.tsv`` (the drawn answers: item id, stratum,
stratum size, planned labels, inclusion probability, answer hash, page order),
``half_width.tsv`` (labels -> expected half-width of the corrected positive share, planned and
simple random), ``items.jsonl`` (what the page shows and what an import writes into the human
labels, with the model and question behind each opaque id) and ``page.html`` (or
``page-{reviewer}.html``). An existing plan is kept, so every reviewer labels the same answers;
``--replan`` draws a new one.
"""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path

import pandas as pd

from ..config import checks as oc
from ..core.io import read_jsonl, write_jsonl
from ..core.layout import ResultPaths
from ..report.phi import shows_phi_text
from . import page, plan, studies

log = logging.getLogger(__name__)


def review_dir(root: Path, study: str) -> Path:
    return root / ResultPaths(study).review()


def plan_id(plan_df: pd.DataFrame) -> str:
    """The plan's fingerprint: its items and their answers."""
    text = "\n".join(
        f"{i}\t{h}" for i, h in zip(plan_df["item_id"], plan_df["answer_sha256"], strict=True)
    )
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def read_plan(root: Path, study: str) -> tuple[pd.DataFrame, dict]:
    """The plan's rows and its items (item_id -> record)."""
    where = review_dir(root, study)
    if not (where / "plan.tsv").exists():
        raise SystemExit(f"{where / 'plan.tsv'}: missing; draw the plan first (make review)")
    df = pd.read_csv(where / "plan.tsv", sep="\t", dtype={"item_id": str, "answer_sha256": str})
    items = {r["item_id"]: r for r in read_jsonl(where / "items.jsonl")}
    return df, items


def make_plan(root: Path, config: dict, study: str, settings: plan.PlanSettings):
    spec = studies.review_study(study)
    pop = spec.population(config, root)
    strata = sorted(pop["stratum"].unique())
    shares = plan.stratum_positive_shares(
        strata, spec.positive, spec.collected_labels(config, root)
    )
    drawn = plan.draw(pop, shares, settings)
    sizes = pop.groupby("stratum").size().to_dict()
    table = plan.half_width_table(sizes, shares, settings)
    where = review_dir(root, study)
    where.mkdir(parents=True, exist_ok=True)
    drawn[plan.PLAN_COLUMNS].to_csv(where / "plan.tsv", sep="\t", index=False)
    table.to_csv(where / "half_width.tsv", sep="\t", index=False, float_format="%.4f")
    keep = ["item_id", "model", "question_id", "answer_sha256"]
    keep += [f for f, _ in spec.fields + spec.context] + list(spec.hidden)
    write_jsonl(where / "items.jsonl", drawn[keep].to_dict("records"))
    log.info("plan: %d answers of %d, by stratum %s", len(drawn), len(pop), sizes)
    return drawn, table, shares


def stale_plan(drawn: pd.DataFrame, pop: pd.DataFrame) -> str:
    """Why the kept plan no longer describes the run's judged answers ('' when it does): its
    inclusion probabilities hold for the strata it was drawn from."""
    then = {int(k): int(v) for k, v in drawn.groupby("stratum")["n_stratum"].first().items()}
    now = {int(k): int(v) for k, v in pop.groupby("stratum").size().items()}
    if then == now:
        return ""
    return (
        f"the plan was drawn from strata of sizes {then}; the run's judged answers now give "
        f"{now}: draw a new plan (--replan) before labelling"
    )


def notices(config: dict, study: str, table: pd.DataFrame, settings: plan.PlanSettings, n: int):
    spec = studies.review_study(study)
    target = settings.target_half_width
    need = plan.labels_for(table, target)
    need_srs = plan.labels_for(table, target, "half_width_random")
    out = [
        f"The model's name and the {spec.judge}'s verdict are hidden. Label each {spec.unit} on "
        "the scale below; labels are kept in this browser only until you press Download labels "
        "and send the file. Nothing leaves this machine otherwise.",
        f"{n} {spec.unit}s, drawn at random within the {spec.judge}'s verdicts (review plan, "
        "fixed seed). "
        + (
            f"About {need} labels give the corrected rate "
            f"({spec.rate or f'share of label {spec.positive}'}) an "
            f"expected half-width of {target:g}"
            + (f"; a simple random sample would need {need_srs}." if need_srs else ".")
            if need
            else f"No number of labels reaches an expected half-width of {target:g} here."
        ),
    ]
    if oc.study_block(config, study).get("contains_phi"):
        out.insert(0, "This study's inputs are marked contains_phi; the run's settings "
                   "(report.include_phi_text) allow showing their text here. Keep this file "
                   "where the data may be.")  # fmt: skip
    return out


def build(
    root: Path,
    config: dict,
    study: str,
    reviewer: str = "",
    settings: plan.PlanSettings | None = None,
    replan: bool = False,
    mode: str = "label",
    others: dict | None = None,
) -> Path:
    """The page of ``study``'s plan (drawn first where there is none, or with ``replan``)."""
    if not shows_phi_text(config, study):
        raise SystemExit(
            f"review: studies.{study}.contains_phi is true and report.include_phi_text is false: "
            "the page would show the study's text, so it is not written"
        )
    settings = settings or plan.PlanSettings.from_config(config)
    spec = studies.review_study(study)
    where = review_dir(root, study)
    if replan or not (where / "plan.tsv").exists():
        make_plan(root, config, study, settings)
    drawn, items = read_plan(root, study)
    stale = stale_plan(drawn, spec.population(config, root))
    if stale:
        log.warning("%s", stale)
        print(f"review: {stale}")
    table = pd.read_csv(where / "half_width.tsv", sep="\t")
    shown = [
        {"item_id": i, "answer_sha256": items[i]["answer_sha256"]}
        | {f: items[i][f] for f, _ in spec.fields + spec.context}
        | ({"others": others[i]} if others and i in others else {})
        for i in drawn["item_id"]
        if mode == "label" or (others and i in others)
    ]
    data = {
        "study": study,
        "title": spec.title,
        "question": spec.question,
        "fields": [list(f) for f in spec.fields],
        "context": [list(f) for f in spec.context],
        "scale": [
            {"value": o.value, "wording": o.wording, "name": o.name or str(o.value)}
            for o in spec.scale()
        ],
        "items": shown,
        "notices": notices(config, study, table, settings, len(drawn)),
        "plan_id": plan_id(drawn),
        "mode": mode,
        "reviewer": reviewer,
    }
    name = "page" if mode == "label" else "adjudicate"
    out = where / (f"{name}-{safe(reviewer)}.html" if reviewer else f"{name}.html")
    page.write(out, data)
    return out


def safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in name)
