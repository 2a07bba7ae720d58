"""The side-effect matcher's review: pairs of a listed side effect and a reference term.

The matcher (``studies.side_effects.matcher``: the llm matcher's judge, or the lexical or
embedding matcher) pairs each item of a model's list with at most one term of the site's
reference list (``results/side_effects/matches/{model}.jsonl``). Its verdict on a pair (item,
term) is whether it made it. The population is every distinct pair (item text, term) of every
evaluated model's lists, lower-cased, a pair of identical wordings left out (those always
match); its stratum is 1 where the matcher made the pair in any list, else 0. A reviewer says,
on the matcher's own question (config/prompts/side_effects/match_llm.txt), whether the two name
the same side effect, seeing the patient profile and the whole list it came from (the first
list holding the pair).

The import writes a matcher validation file (the format of
``oncoeval.studies.side_effects.validation.read_validation``): the configured file's rows, a
reviewed pair replacing the configured row of the same pair, then one row per settled pair
(``lay``/yes or ``negative``/no, with its ``inclusion_probability``), and a ``term`` row for any
reference term the file did not have. The file's rules hold: a configured row wording a new
term as another term's wording, and a reviewed wording labelled the same as two terms, are
left out, and the import says how many.
"""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path

import pandas as pd

from ..config import checks as oc
from ..core.io import read_jsonl
from ..core.layout import IN_STUDY, ResultPaths
from ..studies.side_effects.aliases import norm_key
from ..studies.side_effects.validation import read_validation
from .plan import answer_hash
from .spec import ReviewStudy, ScaleOption, configured_labels
from .status_rows import estimate_rows

log = logging.getLogger(__name__)
STUDY = "side_effects"
MARK = "\u25b6 "  # marks the labelled item in the list the page shows


def scale() -> list[ScaleOption]:
    """The matcher prompt's own criterion (match_llm.txt), as a yes/no label."""
    return [
        ScaleOption(0, "Not the same side effect."),
        ScaleOption(
            1,
            "The same side effect: different wording is fine, but the clinical meaning must be "
            "the same.",
        ),
    ]


def pair_id(item: str, term: str) -> str:
    return hashlib.sha256(f"oncoeval-review|{STUDY}|{item}|{term}".encode()).hexdigest()[:12]


def _clean(text: str) -> str:
    return " ".join(str(text).split()).lower()


def population(config: dict, root: Path) -> pd.DataFrame:
    """Every distinct (item, term) pair of the evaluated models' matched lists: item_id,
    stratum (1: the matcher paired them somewhere), answer_sha256 and what the page shows."""
    results = root / ResultPaths(STUDY).root
    profiles_path = results / IN_STUDY.prepared("profiles.jsonl")
    profiles = (
        {str(p["profile_id"]): p for p in read_jsonl(profiles_path)}
        if profiles_path.exists()
        else {}
    )
    pairs: dict[tuple[str, str], dict] = {}
    for model in oc.study_evaluated_models(config, STUDY):
        path = results / "matches" / f"{model}.jsonl"
        if not path.exists():
            raise SystemExit(f"{path}: missing; run the workflow first (make run)")
        for rec in read_jsonl(path):
            if rec.get("kind") != "reference" or rec.get("status") != "ok":
                continue
            left = [_clean(x) for x in rec["left"]]
            made = {(left[i], _clean(rec["right"][j])) for i, j in rec["pairs"]}
            for i, item in enumerate(left):
                for raw_term in rec["right"]:
                    term = _clean(raw_term)
                    if not item or norm_key(item) == norm_key(term):
                        continue
                    key = (item, term)
                    if key not in pairs:
                        pairs[key] = _shown(rec, i, item, term, model, profiles)
                    pairs[key]["stratum"] = max(pairs[key]["stratum"], int(key in made))
    if not pairs:
        raise SystemExit("review: no matched side-effect list to review")
    return pd.DataFrame(list(pairs.values()))


def _shown(rec: dict, i: int, item: str, term: str, model: str, profiles: dict) -> dict:
    profile = profiles.get(str(rec["profile_id"]), {})
    listed = [(MARK if k == i else "\u2022 ") + str(x) for k, x in enumerate(rec["left"])]
    return {
        "item_id": pair_id(item, term),
        "stratum": 0,
        "answer_sha256": answer_hash(f"{item}\t{term}"),
        "model": model,
        "question_id": rec["key"],
        "item": item,
        "term": term,
        "list": "\n".join(listed),
        "profile": profile.get(rec.get("variant") or "specified", ""),
    }


def _configured(config: dict, root: Path):
    return configured_labels(oc.study_block(config, STUDY), "validation", root, read_validation)


def collected_labels(config: dict, root: Path) -> list:
    """(matcher verdict, labelled same) of the configured validation rows whose pair is in the
    population (the plan's stratum shares)."""
    df = _configured(config, root)
    if df is None:
        return []
    pop = population(config, root)
    strata = dict(zip(pop["item_id"], pop["stratum"], strict=True))
    out = []
    for row in df.itertuples():
        h = strata.get(pair_id(row.prediction, row.reference))
        if h is not None:
            out.append((int(h), bool(row.same)))
    return out


def record(item: dict, label: int, inclusion_probability: float) -> dict:
    """One reviewed row of the matcher validation file."""
    same = int(label) == 1
    return {
        "id": item["item_id"],
        "prediction": item["item"],
        "reference": item["term"],
        "same": "yes" if same else "no",
        "kind": "lay" if same else "negative",
        "inclusion_probability": float(inclusion_probability),
    }


def other_labels(config: dict, root: Path) -> list[dict]:
    """The configured validation file's rows (each with the id of its pair)."""
    df = _configured(config, root)
    if df is None:
        return []
    return [
        {
            "id": pair_id(r.prediction, r.reference),
            "prediction": r.prediction,
            "reference": r.reference,
            "same": "yes" if r.same else "no",
            "kind": r.kind,
            "inclusion_probability": "",
        }
        for r in df.itertuples()
    ]


HEADER = (
    "# Matcher validation set of the side_effects study: the configured file's rows and the\n"
    "# pairs a clinician review settled (make review-import; docs/review.md). Columns as in\n"
    "# resources/side_effects/matcher_validation.tsv; inclusion_probability: the labelled\n"
    "# share of the pair's stratum of the review plan (blank: not drawn by a plan).\n"
)


def write_labels(records: list[dict], out: Path) -> None:
    """The validation TSV: ``records`` plus a term row for each new reference term. The
    file's rules hold: a configured row that words a new term as another term's wording is
    left out (a term is no wording of another), and so is a reviewed wording labelled the
    same as two terms; the import says how many."""
    df = pd.DataFrame(records, columns=["id", *COLUMNS]).fillna("")
    terms = set(df.loc[df["kind"] == "term", "reference"])
    new_terms = sorted(set(df["reference"]) - terms)
    reviewed = df["inclusion_probability"].astype(str) != ""
    left_out = df[~reviewed & df["prediction"].isin(new_terms)]
    df = df.drop(left_out.index)
    rows = [
        {"id": "", "prediction": t, "reference": t, "same": "yes", "kind": "term",
         "inclusion_probability": ""}
        for t in new_terms
    ]  # fmt: skip
    df = pd.concat([df, pd.DataFrame(rows, columns=df.columns)], ignore_index=True)
    reviewed = df["inclusion_probability"].astype(str) != ""
    yes = df[df["same"] == "yes"].groupby("prediction")["reference"].nunique()
    dropped = df[reviewed & df["prediction"].isin(set(yes[yes > 1].index))]
    df = df.drop(dropped.index)
    for what, gone in (
        ("configured rows that word a new reference term as another term", left_out),
        ("reviewed pairs whose wording is labelled the same as two reference terms", dropped),
    ):
        if len(gone):
            names = ", ".join(sorted(set(gone["prediction"])))
            log.warning("left out %d %s (%s)", len(gone), what, names)
            print(f"review-import: left out {len(gone)} {what} ({names})")
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", encoding="utf-8") as fh:
        fh.write(HEADER)
        df[COLUMNS].to_csv(fh, sep="\t", index=False)


COLUMNS = ["prediction", "reference", "same", "kind", "inclusion_probability"]


def status(tables: dict) -> list[dict]:
    """Each configured matcher's sensitivity and specificity for ``same`` = yes on the
    validation pairs (tables/judge_per_class, written by the matcher validation rule)."""
    path = tables.get(IN_STUDY.table("judge_per_class"))
    if not path or not Path(path).exists():
        return []
    df = pd.read_csv(path, sep="\t", keep_default_na=False, dtype={"class": str})
    df = df[df["class"] == "yes"].assign(label=lambda d: "matcher " + d["judge"].astype(str))
    return estimate_rows(
        df,
        "label",
        {"sensitivity": "sensitivity (same side effect)",
         "specificity": "specificity (same side effect)"},
        "n_class",
    )  # fmt: skip


SIDE_EFFECTS = ReviewStudy(
    name=STUDY,
    title="Side effects: does the listed side effect name the reference term?",
    question=(
        "Do the listed side effect and the reference term name the same side effect? "
        "Different wording is fine, but the clinical meaning must be the same."
    ),
    fields=(
        ("item", "Listed side effect (from the model's list)"),
        ("term", "Reference side effect (the clinician reference for this site)"),
    ),
    context=(
        ("list", "The model's whole list (\u25b6 marks the item)"),
        ("profile", "Patient profile the list answers"),
    ),
    positive=1,
    scale=scale,
    population=population,
    collected_labels=collected_labels,
    human_record=record,
    other_labels=other_labels,
    labels_key="validation",
    labels_file="matcher_validation.tsv",
    write_labels=write_labels,
    unit="pair",
    judge="matcher",
    status_tables=(IN_STUDY.table("judge_per_class"),),
    status_rows=status,
)
