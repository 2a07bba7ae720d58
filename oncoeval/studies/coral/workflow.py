"""Helpers that rules/coral.smk calls while building the DAG (file lists and final targets)."""

from __future__ import annotations

from pathlib import Path

from .tasks import SUBTYPES

PROMPT_DIR = "config/prompts/coral"
TABLES = ("overall", "by_field", "by_task", "by_cancer_type", "kruskal_gender", "kruskal_race")
FIGURES = (
    "figure3_bleu4",
    "figure3_rouge1",
    "figure3_em_f1",
    "figureS2_bleu4",
    "figureS2_rouge1",
    "figureS2_em_f1",
)


def note_files(notes_dir: str) -> list[str]:
    """Every .txt and .ann under the notes folder (inputs of the prepare rule)."""
    root = Path(notes_dir)
    if not root.is_dir():
        return [notes_dir]  # a missing folder: Snakemake reports the missing input by name
    return sorted(str(p) for p in root.rglob("*") if p.suffix in (".txt", ".ann"))


def prompt_files(subtypes) -> dict[str, list[str] | str]:
    unknown = [s for s in subtypes if s not in SUBTYPES]
    if unknown:
        raise ValueError(f"studies.coral.subtypes: unknown {unknown}; known: {list(SUBTYPES)}")
    return {
        "system": f"{PROMPT_DIR}/system.txt",
        "template": f"{PROMPT_DIR}/user_template.txt",
        "tasks": [f"{PROMPT_DIR}/tasks/{s}.txt" for s in subtypes],
    }


def review_model(block: dict, models: list[str]) -> str | None:
    review = block.get("review") or {}
    return review.get("model") or (models[0] if models else None)


def targets(block: dict, models: list[str]) -> list[str]:
    out = ["results/coral/gold/gold.tsv", "results/coral/items/sections.tsv"]
    out += [f"results/coral/scores/{m}.tsv" for m in models]
    out += [f"results/coral/tables/{t}.{ext}" for t in TABLES for ext in ("tsv", "md")]
    out += [f"results/coral/figures/{f}.png" for f in FIGURES]
    reviewer = review_model(block, models)
    if reviewer:
        out.append(f"results/coral/review/{reviewer}_sheet.xlsx")
    if (block.get("review") or {}).get("sheet"):
        out += ["results/coral/tables/expert_review.tsv", "results/coral/tables/expert_review.md"]
    return out


SCHEMA = Path(__file__).resolve().parents[3] / "config" / "schemas" / "coral.schema.yaml"


def _with_defaults(schema: dict, value):
    if schema.get("type") == "object" or "properties" in schema:
        value = dict(value or {})
        for key, sub in (schema.get("properties") or {}).items():
            if key not in value and "default" in sub:
                value[key] = sub["default"]
            if key in value and isinstance(value[key], dict | type(None)) and "properties" in sub:
                value[key] = _with_defaults(sub, value[key])
    return value


def settings(block: dict | None, schema_path: str | Path = SCHEMA) -> dict:
    """The coral block with the schema's defaults filled in (nested blocks too).

    Snakemake's ``validate`` does not fill defaults inside referenced sub-schemas, so the study
    does it here from the same schema file: one place for every default.
    """
    import yaml

    schema = yaml.safe_load(Path(schema_path).read_text(encoding="utf-8"))
    return _with_defaults(schema, block or {})
