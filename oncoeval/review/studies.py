"""What each study's review needs: its scale and rubric wording, the judged answers the plan
draws from, the labels already collected, and the human-label records an import writes.

Cancer-Myth (its verifier's -1/0/1 verdicts on every evaluated model's answers) is declared
here; the side-effect matcher in :mod:`.side_effects`, CancerGUIDE's chooser in
:mod:`.guidelines`.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from ..config import checks as oc
from ..core.io import read_jsonl
from ..core.layout import IN_STUDY
from ..judges.adjudication import blind_id
from ..studies.contract import prompts_dir, study
from .plan import answer_hash
from .spec import ReviewStudy, ScaleOption
from .status_rows import estimate_rows


def cancer_myth_scale() -> list[ScaleOption]:
    """The verifier prompt's own wording of each score (``Score -1: ...``)."""
    text = (Path(prompts_dir("cancer_myth")) / "verifier.txt").read_text(encoding="utf-8")
    found = re.findall(r"^Score (-?\d): (.+)$", text, flags=re.MULTILINE)
    return [ScaleOption(int(v), w.strip()) for v, w in found]


def _judged_models(config: dict) -> list[str]:
    """The evaluated models the study's verifier judged (not those with a verifier of their own,
    whose rates the validation does not correct)."""
    block = oc.study_block(config, "cancer_myth")
    own = block.get("verifier_for") or {}
    return [m for m in oc.study_evaluated_models(config, "cancer_myth") if m not in own]


def cancer_myth_population(config: dict, root: Path) -> pd.DataFrame:
    """Every answer with a readable -1/0/1 verdict: item_id (opaque), stratum (the verdict),
    answer_sha256, model, question_id and the text the page shows."""
    rows = []
    declared = study("cancer_myth")
    for model in _judged_models(config):
        # the verifier's judged answers: the answers' parse the study declares
        path = root / declared.paths(declared.answers.parsed.format(model=model))
        if not path.exists():
            raise SystemExit(f"{path}: missing; run the workflow first (make run)")
        for rec in read_jsonl(path):
            score = rec.get("score")
            if score is None or float(score) not in (-1.0, 0.0, 1.0):
                continue  # unscored, or a jury's mean between scores
            rows.append(
                {
                    "item_id": blind_id(model, rec["question_id"]),
                    "stratum": int(score),
                    "answer_sha256": answer_hash(rec["answer"]),
                    "model": model,
                    "question_id": rec["question_id"],
                    "question": rec["question"],
                    "information": rec["correction"],
                    "answer": rec["answer"],
                }
            )
    if not rows:
        raise SystemExit("review: no answer with a readable verdict to review")
    return pd.DataFrame(rows)


def cancer_myth_labels(config: dict, root: Path):
    """(verifier verdict, human label is positive) of the validation answers scored so far."""
    path = root / study("cancer_myth").outputs["verifier_pairs"].path
    if not path.exists():
        return []
    df = pd.read_csv(path, sep="\t", keep_default_na=False)
    df = df[df["verifier_score"].astype(str) != ""]
    return [
        (int(float(v)), int(h) == 1)
        for v, h in zip(df["verifier_score"], df["human_score"], strict=True)
    ]


def cancer_myth_record(item: dict, label: int, inclusion_probability: float) -> dict:
    """One ``human_scores`` record (oncoeval.studies.cancer_myth.requests.load_human_scores)."""
    return {
        "id": item["item_id"],
        "example_question": item["question"],
        "example_assumption": item["information"],
        "answer": item["answer"],
        "human_score": int(label),
        "inclusion_probability": float(inclusion_probability),
    }


def cancer_myth_other_labels(config: dict, root: Path) -> list[dict]:
    """The configured ``human_scores`` records without an inclusion probability (hand-picked
    answers): the import carries them over, for the agreement tables only."""
    from ..studies.cancer_myth.requests import load_human_scores

    path = oc.study_block(config, "cancer_myth").get("human_scores")
    if not path:
        return []
    path = Path(path) if Path(path).is_absolute() else root / path
    if not path.exists():
        return []
    return [r for r in load_human_scores(path) if "inclusion_probability" not in r]


CANCER_MYTH = ReviewStudy(
    name="cancer_myth",
    title="Cancer-Myth: does the answer address the question's false presupposition?",
    question="Sharpness: does the answer identify and address false presuppositions in the question?",
    fields=(
        ("question", "Patient's question"),
        ("information", "What the question wrongly presupposes (the correct information)"),
        ("answer", "Answer"),
    ),
    positive=1,
    scale=cancer_myth_scale,
    population=cancer_myth_population,
    collected_labels=cancer_myth_labels,
    human_record=cancer_myth_record,
    other_labels=cancer_myth_other_labels,
    status_tables=(IN_STUDY.table("pcs_pcr"),),
    status_rows=lambda tables: cancer_myth_status(tables),
)


def _registry() -> dict[str, ReviewStudy]:
    from .guidelines import GUIDELINES
    from .side_effects import SIDE_EFFECTS

    return {"cancer_myth": CANCER_MYTH, "side_effects": SIDE_EFFECTS, "guidelines": GUIDELINES}


def review_study(name: str) -> ReviewStudy:
    studies = _registry()
    if name not in studies:
        raise SystemExit(
            f"review: no review page for study {name!r} (available: {', '.join(studies)})"
        )
    return studies[name]


def cancer_myth_status(tables: dict) -> list[dict]:
    """The corrected PCS and PCR per model (their intervals resample the validation labels
    too: oncoeval.judges.correction)."""
    path = tables.get(IN_STUDY.table("pcs_pcr"))
    if not path or not Path(path).exists():
        return []
    df = pd.read_csv(path, sep="\t", keep_default_na=False)
    return estimate_rows(
        df,
        "model",
        {"pcr_corrected": "PCR corrected for verifier error",
         "pcs_corrected": "PCS corrected for verifier error"},
    )  # fmt: skip
