"""CancerGUIDE's chooser review: which of two paths fits a synthetic note.

The chooser decides the synthetic notes whose generator prediction differs from the target
path (``oncoeval.studies.guidelines.synthetic``): shown both paths in both orders, it keeps the
note only if it picks the target both times. The population is every such case of the run's
benchmark (``results/guidelines/synthetic/benchmark.tsv``) with a readable verdict; its
stratum is the chooser's verdict: 1 (``chosen_both_orders``) or 0 (``target_not_chosen``). The
page shows the note and the two paths as Path A and Path B, in an order fixed per case by its
id (the target first in about half), so neither the verdict nor which path is the target is
visible; the reviewer picks the path that fits the note.

The import writes a chooser validation file (``studies.guidelines.chooser_validation``;
oncoeval.studies.guidelines.chooser_validation reads it): item_id, target_path, other_path,
human (``target`` | ``other``), inclusion_probability, after the configured file's rows that
the import did not settle.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pandas as pd

from ..config import checks as oc
from ..core.io import read_jsonl
from ..core.layout import IN_STUDY, ResultPaths
from .plan import answer_hash
from .spec import ReviewStudy, ScaleOption, configured_labels
from .status_rows import estimate_rows

STUDY = "guidelines"
STRATA = {"chosen_both_orders": 1, "target_not_chosen": 0}
COLUMNS = ["item_id", "target_path", "other_path", "human", "inclusion_probability"]


def scale() -> list[ScaleOption]:
    return [
        ScaleOption(0, "Path A fits the note better.", "A"),
        ScaleOption(1, "Path B fits the note better.", "B"),
    ]


def case_id(item_id: str) -> str:
    return hashlib.sha256(f"oncoeval-review|{STUDY}|{item_id}".encode()).hexdigest()[:12]


def population(config: dict, root: Path) -> pd.DataFrame:
    synth = root / ResultPaths(STUDY)("synthetic")
    path = synth / "benchmark.tsv"
    if not path.exists():
        raise SystemExit(f"{path}: missing; run the workflow with a synthetic generator first")
    bench = pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)
    notes = {r["item_id"]: r for r in read_jsonl(synth / "notes.jsonl")}
    rows = []
    for r in bench[bench["decision"].isin(list(STRATA))].itertuples():
        cid = case_id(r.item_id)
        a_is_target = int(cid, 16) % 2 == 0
        a, b = (
            (r.target_path, r.generator_path) if a_is_target else (r.generator_path, r.target_path)
        )
        note = notes.get(r.item_id, {}).get("note", "")
        rows.append(
            {
                "item_id": cid,
                "stratum": STRATA[r.decision],
                "answer_sha256": answer_hash(f"{note}\t{r.target_path}\t{r.generator_path}"),
                "model": "chooser",
                "question_id": r.item_id,
                "note": note,
                "path_a": a,
                "path_b": b,
                "a_is_target": a_is_target,
                "case": r.item_id,
                "target_path": r.target_path,
                "other_path": r.generator_path,
            }
        )
    if not rows:
        raise SystemExit("review: no case the chooser decided to review")
    return pd.DataFrame(rows)


def _configured(config: dict, root: Path):
    from ..studies.guidelines.chooser_validation import read_labels

    return configured_labels(oc.study_block(config, STUDY), "chooser_validation", root, read_labels)


def collected_labels(config: dict, root: Path) -> list:
    df = _configured(config, root)
    if df is None:
        return []
    pop = population(config, root)
    strata = dict(zip(pop["case"], pop["stratum"], strict=True))
    return [
        (int(strata[r.item_id]), r.human == "target")
        for r in df.itertuples()
        if r.item_id in strata
    ]


def record(item: dict, label: int, inclusion_probability: float) -> dict:
    target = (int(label) == 0) == bool(item["a_is_target"])
    return {
        "id": item["item_id"],
        "item_id": item["case"],
        "target_path": item["target_path"],
        "other_path": item["other_path"],
        "human": "target" if target else "other",
        "inclusion_probability": float(inclusion_probability),
    }


def other_labels(config: dict, root: Path) -> list[dict]:
    df = _configured(config, root)
    if df is None:
        return []
    return [
        {"id": case_id(r["item_id"]), **{c: r.get(c, "") for c in COLUMNS}}
        for r in df.to_dict("records")
    ]


def write_labels(records: list[dict], out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", encoding="utf-8") as fh:
        fh.write(
            "# Human labels of CancerGUIDE's chooser cases (make review-import; docs/review.md):\n"
            "# which path fits the note; inclusion_probability: the labelled share of the\n"
            "# case's stratum of the review plan (blank: not drawn by a plan).\n"
        )
        pd.DataFrame(records, columns=COLUMNS).to_csv(fh, sep="\t", index=False)


def status(tables: dict) -> list[dict]:
    """The chooser's sensitivity and specificity for ``target`` (tables/judge_per_class)."""
    path = tables.get(IN_STUDY.table("judge_per_class"))
    if not path or not Path(path).exists():
        return []
    df = pd.read_csv(path, sep="\t", keep_default_na=False, dtype={"class": str})
    df = df[df["class"] == "target"].assign(label="chooser")
    return estimate_rows(
        df,
        "label",
        {"sensitivity": "sensitivity (target fits)", "specificity": "specificity (target fits)"},
        "n_class",
    )


GUIDELINES = ReviewStudy(
    name=STUDY,
    title="CancerGUIDE: which guideline path fits the note?",
    question="Which path through the guideline fits this patient's note better?",
    fields=(("path_a", "Path A"), ("path_b", "Path B")),
    context=(("note", "Synthetic patient note"),),
    positive=1,
    scale=scale,
    population=population,
    collected_labels=collected_labels,
    human_record=record,
    other_labels=other_labels,
    labels_key="chooser_validation",
    labels_file="chooser_validation.tsv",
    write_labels=write_labels,
    hidden=("a_is_target", "case", "target_path", "other_path"),
    rate="share of cases whose target path fits",
    unit="case",
    judge="chooser",
    status_tables=(IN_STUDY.table("judge_per_class"),),
    status_rows=status,
)
