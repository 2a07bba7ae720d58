"""The bad-input corpus (issue #13, item 4): every bad input stops before any model call.

Each case starts from the demo inputs, spoils one file in one way, runs the step that reads it
(a study's prepare or request step, or `generate` for replay files) and checks that it stops with
an InputError whose message names the file, the record and the problem, and that the step wrote
nothing a model call could follow (no prepared inputs, no request set, no responses). A bad cache
line or a hostile server's reply fails only its call (tests/test_bad_replies.py). ``test_bad_input_stops_the_workflow_before_generate`` shows
the same through Snakemake for a few of them.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pandas as pd
import pytest
import yaml

from oncoeval.config import checks as oc
from oncoeval.core.errors import InputError
from oncoeval.core.records import read_requests, read_responses
from oncoeval.studies import STUDIES
from oncoeval.workflow.generate import run_generate

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "resources" / "demo"
PROMPTS = REPO / "config" / "prompts"
LATIN1 = "Patient née à Zürich, thérapie".encode("latin-1")  # é as 0xe9: not UTF-8


@dataclass
class Case:
    id: str
    spoil: object  # (inputs) -> path of the spoilt file
    run: object  # (inputs) -> None; the step that reads it
    record: str
    problem: str


class Inputs:
    """Copies of the demo inputs under ``root``, with the output paths each step writes."""

    def __init__(self, root: Path):
        self.root = root
        self.out = root / "out"
        self.out.mkdir()
        for src, name in [
            (DEMO / "side_effects" / "profiles.csv", "profiles.csv"),
            (DEMO / "side_effects" / "reference.tsv", "reference.tsv"),
            (REPO / "resources" / "side_effects" / "site_aliases.tsv", "site_aliases.tsv"),
            (REPO / "resources" / "side_effects" / "side_effect_aliases.tsv", "se_aliases.tsv"),
            (REPO / "resources" / "side_effects" / "matcher_validation.tsv", "validation.tsv"),
            (DEMO / "cancer_myth" / "questions.json", "questions.json"),
            (DEMO / "cancer_myth" / "myths.jsonl", "myths.jsonl"),
            (DEMO / "cancer_myth" / "human_scores.json", "human_scores.json"),
            (
                REPO / "resources" / "method" / "cancer_myth" / "verifier_examples.json",
                "verifier_examples.json",
            ),
            (
                REPO / "resources" / "method" / "cancer_myth" / "initial_valid.json",
                "initial_valid.json",
            ),
            (
                REPO / "resources" / "method" / "cancer_myth" / "initial_invalid.json",
                "initial_invalid.json",
            ),
            (DEMO / "coral" / "metadata.tsv", "metadata.tsv"),
            (DEMO / "coral" / "review_sheet_filled.tsv", "review.tsv"),
            (DEMO / "guidelines" / "guideline.json", "guideline.json"),
            (DEMO / "guidelines" / "labelled_notes.jsonl", "labelled.jsonl"),
            (DEMO / "guidelines" / "unlabelled_notes.jsonl", "unlabelled.jsonl"),
            (REPO / "resources" / "tests" / "probe-requests.jsonl", "requests.jsonl"),
        ]:
            shutil.copy(src, root / name)
        for study in STUDIES:
            shutil.copytree(PROMPTS / study, root / "prompts" / study)
        shutil.copytree(DEMO / "coral" / "notes", root / "notes")

    def __truediv__(self, name: str) -> Path:
        return self.root / name

    def outputs(self) -> list[Path]:
        return sorted(p for p in self.out.rglob("*") if p.is_file())


# ------------------------------------------------------------------------ spoiling helpers
def write(path: Path, text: str | bytes) -> Path:
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def edit(path: Path, old: str, new: str, count: int = 1) -> Path:
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {path}"
    return write(path, text.replace(old, new, count))


def append_bytes(path: Path, data: bytes) -> Path:
    path.write_bytes(path.read_bytes() + data)
    return path


def lines_of(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def edit_json(path: Path, change) -> Path:
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    return write(path, json.dumps(data, indent=1))


def edit_jsonl(path: Path, line: int, change) -> Path:
    rows = [json.loads(x) for x in lines_of(path) if x.strip()]
    change(rows[line - 1])
    return write(path, "".join(json.dumps(r) + "\n" for r in rows))


# ------------------------------------------------------------------------ the steps
def se_prepare_settings() -> dict:
    """prepare's settings from a default study block, filled as rules/common.smk fills it."""
    from oncoeval.config import checks as oc

    block = oc.filled_study_block({}, "side_effects")
    return {
        "form": block["profiles_form"],
        "site_assignment": block["site_assignment"],
        "site_phrases": block["site_phrases"],
        "mentions": block["specify_mentions"],
    }


def se_prepare(f: Inputs, profiles: Path | None = None, **settings) -> None:
    """The side-effects prepare step on ``f``'s files (``profiles``: another profiles file),
    ``settings`` replacing the default block's."""
    from oncoeval.studies.side_effects.prepare import prepare

    prepare(
        se_prepare_inputs(f, profiles or f / "profiles.csv", f / "reference.tsv"),
        se_prepare_outputs(f),
        **{**se_prepare_settings(), **settings},
    )


def se_prepare_inputs(f: Inputs, profiles: Path, reference: Path) -> dict:
    """The side-effects prepare step's named inputs on ``f``'s alias tables."""
    return {
        "profiles": profiles,
        "reference": reference,
        "site_aliases": f / "site_aliases.tsv",
        "side_effect_aliases": f / "se_aliases.tsv",
    }


def se_prepare_outputs(f: Inputs) -> dict:
    return {
        "profiles": f.out / "profiles.jsonl",
        "reference": f.out / "reference.tsv",
        "vocabulary": f.out / "vocabulary.txt",
    }


SE_REGIMES = ("ff", "ff_lsc", "grounded", "grounded_lsc")


def se_requests(f: Inputs) -> None:
    from oncoeval.studies.side_effects.requests import write_list_requests

    templates = {r: f / "prompts" / "side_effects" / f"{r}.txt" for r in SE_REGIMES}
    profiles = [{"profile_id": "p1", "base": "b radiation", "specified": "s", "site": "APBI"}]
    write(f / "profiles.jsonl", json.dumps(profiles[0]) + "\n")
    write(f / "vocabulary.txt", "fatigue\nskin redness\n")
    write_list_requests(
        f / "profiles.jsonl", f / "vocabulary.txt", templates, [3, 5], 32, f.out / "lists.jsonl"
    )


def se_judge(f: Inputs) -> None:
    from oncoeval.studies.side_effects.validation import write_validation_requests

    write_validation_requests(
        f / "validation.tsv",
        f / "prompts" / "side_effects" / "match_llm.txt",
        64,
        f.out / "judge.jsonl",
    )


def cm_prepare(f: Inputs) -> None:
    from oncoeval.studies.cancer_myth.prepare import prepare

    prepare(f / "questions.json", f.out / "items.jsonl")


def cm_myths(f: Inputs) -> None:
    from oncoeval.studies.cancer_myth.data import load_myths

    load_myths(f / "myths.jsonl")


def cm_human(f: Inputs) -> None:
    from oncoeval.studies.cancer_myth.requests import VerifierPrompt, validate_requests

    prompt = VerifierPrompt.from_files(
        f / "prompts" / "cancer_myth" / "verifier.txt",
        f / "prompts" / "cancer_myth" / "verifier_example.txt",
        f / "verifier_examples.json",
        64,
    )
    validate_requests(f / "human_scores.json", f.out / "validation.jsonl", prompt)


def cm_initial(f: Inputs) -> None:
    from oncoeval.studies.cancer_myth.construct import load_initial_examples

    load_initial_examples(f / "initial_valid.json", f / "initial_invalid.json")


def cm_generator(f: Inputs) -> None:
    from oncoeval.studies.cancer_myth.prompts import read_template, render_generator

    myth = {"cancer": "c", "myth": "m", "fact": "f"}
    template = read_template(f / "prompts" / "cancer_myth" / "generator.txt")
    render_generator(template, [], [], myth, 3)


def cm_classifier(f: Inputs) -> None:
    from oncoeval.studies.cancer_myth.prompts import read_template, render_classifier

    tpl = read_template(f / "prompts" / "cancer_myth" / "classifier.txt")
    example = read_template(f / "prompts" / "cancer_myth" / "classifier_example.txt")
    render_classifier(tpl, example, [], "question?", "information")


def coral_metadata(f: Inputs) -> None:
    from oncoeval.studies.coral.prepare import read_metadata

    read_metadata(f / "metadata.tsv", ["breast_01", "breast_02", "pancreas_01", "pancreas_02"])


def coral_prompts(f: Inputs) -> None:
    from oncoeval.studies.coral.requests import build_requests

    items = [{"doc_id": "d1", "sections": {"hpi": {"text": "note text"}}}]
    build_requests(items, ["symptoms", "radiology"], f / "prompts" / "coral", {})


def coral_notes(f: Inputs) -> None:
    from oncoeval.studies.coral.prepare import prepare

    sections = oc.filled_study_block({}, "coral")["sections"]
    prepare(f / "notes", REPO / "resources" / "coral" / "annotation.conf", None, sections)


def coral_review(f: Inputs) -> None:
    from oncoeval.studies.coral.review import read_sheet

    read_sheet(f / "review.tsv")


def se_prepare_xlsx(name: str):
    """se_prepare with one of its sheets given as an .xlsx workbook."""

    def run(f: Inputs) -> None:
        from oncoeval.studies.side_effects.prepare import prepare

        paths = {
            "profiles": f / "profiles.csv",
            "reference": f / "reference.tsv",
            name: f / f"{name}.xlsx",
        }
        if not paths[name].exists():  # the clean run: the demo sheet as a workbook
            sep = "," if name == "profiles" else "\t"
            pd.read_csv(
                paths[name].with_suffix(".csv" if name == "profiles" else ".tsv"), sep=sep
            ).to_excel(paths[name], index=False)
        prepare(
            se_prepare_inputs(f, paths["profiles"], paths["reference"]),
            se_prepare_outputs(f),
            **se_prepare_settings(),
        )

    return run


def gl_prepare(f: Inputs) -> None:
    from oncoeval.studies.guidelines.prepare import prepare
    from oncoeval.studies.guidelines.workflow import OUTPUTS_PREPARE

    # The stage's declared outputs, each under the test's own folder.
    out = {k: f.out / Path(path).name for k, path in OUTPUTS_PREPARE.items()}
    prepare(f / "guideline.json", f / "labelled.jsonl", f / "unlabelled.jsonl", True, out)


def gl_rollouts(f: Inputs) -> None:
    from oncoeval.studies.guidelines.requests import rollouts_request_set

    write(
        f / "notes.jsonl",
        json.dumps({"patient_id": "p1", "note": "text", "note_set": "labelled"}) + "\n",
    )
    rollouts = {"k": 1, "temperature": 1.0, "top_p": None, "max_new_tokens": 16, "seed": 0}
    template = f / "prompts" / "guidelines" / "predict_path.txt"
    rollouts_request_set(
        f / "guideline.json", f / "notes.jsonl", template, rollouts, f.out / "r.jsonl"
    )


def spine_requests(f: Inputs) -> None:
    read_requests(f / "requests.jsonl")


def spine_replay(f: Inputs) -> None:
    replay = f / "replay.jsonl"
    if not replay.exists():  # the clean run's answers; the case then spoils this file
        write(replay, '{"request_id": "a", "text": "x"}\n{"request_id": "b", "text": "y"}\n')
    model = {"id": "rp", "backend": "replay", "path": str(replay)}
    run_generate(f / "requests.jsonl", f.out / "responses.jsonl", model, f / "cache", "adhoc", "x")


def spoil_replay(text: str | bytes):
    return lambda f: write(f / "replay.jsonl", text)


# ------------------------------------------------------------------------ the corpus
CASES = [
    # side effects: profiles sheet
    Case("profiles/empty", lambda f: write(f / "profiles.csv", ""), se_prepare, "line 1", "empty profile sheet"),
    Case("profiles/blank-lines", lambda f: write(f / "profiles.csv", "\n\n  \n"), se_prepare, "line 1", "empty profile sheet"),
    Case("profiles/latin-1", lambda f: append_bytes(f / "profiles.csv", b"demo99," + LATIN1 + b",x\n"), se_prepare, "line ", "not UTF-8"),
    Case("profiles/header-only", lambda f: write(f / "profiles.csv", lines_of(f / "profiles.csv")[0] + "\n"), se_prepare, "line 2", "no profiles"),
    Case("profiles/wrong-columns", lambda f: edit(f / "profiles.csv", "ProfilesNoLocation", "Base"), se_prepare, "header", "expected columns"),
    Case("profiles/duplicate-id", lambda f: edit(f / "profiles.csv", "demo02,", "demo01,"), se_prepare, "profile_id", "duplicate profile ids ['demo01']"),
    Case("profiles/bad-id", lambda f: edit(f / "profiles.csv", "demo02,", "demo 02,"), se_prepare, "row ", "must match"),
    Case("profiles/ragged-row", lambda f: append_bytes(f / "profiles.csv", b'demo99,"a","b","c"\n'), se_prepare, "line ", "unreadable row"),
    Case("profiles/empty-specified", lambda f: append_bytes(f / "profiles.csv", b'demo99,"radiation therapy",""\n'), se_prepare, "(profile demo99)", "both the base and the specified"),
    Case("profiles/no-added-text", lambda f: append_bytes(f / "profiles.csv", b'demo99,"radiation therapy","radiation therapy"\n'), se_prepare, "(profile demo99)", "adds no text"),
    Case("profiles/unknown-site", lambda f: append_bytes(f / "profiles.csv", b'demo99,"radiation therapy","radiation therapy to the elbow"\n'), se_prepare, "(profile demo99)", "cannot map the added text"),
    # side effects: reference table
    Case("reference/empty", lambda f: write(f / "reference.tsv", ""), se_prepare, "line 1", "empty reference"),
    Case("reference/latin-1", lambda f: append_bytes(f / "reference.tsv", b"APBI\t" + LATIN1 + b"\tshort\tcommon\n"), se_prepare, "line ", "not UTF-8"),
    Case("reference/bad-onset", lambda f: append_bytes(f / "reference.tsv", b"APBI\tnausea\tmedium\tcommon\n"), se_prepare, "row ", "onset 'medium'"),
    Case("reference/bad-frequency", lambda f: append_bytes(f / "reference.tsv", b"APBI\tnausea\tshort\toften\n"), se_prepare, "row ", "frequency 'often'"),
    Case("reference/empty-cell", lambda f: append_bytes(f / "reference.tsv", b"APBI\t\tshort\tcommon\n"), se_prepare, "row ", "empty side_effect"),
    Case("reference/conflict", lambda f: append_bytes(f / "reference.tsv", b"APBI\tfatigue\tlong\trare\n"), se_prepare, "row ", "here but short/common"),
    Case("reference/site-without-profile", lambda f: append_bytes(f / "reference.tsv", b"Brest Only\tnausea\tshort\tcommon\n"), se_prepare, "(site 'Brest Only')", "matches no profile's site"),
    Case("reference/ragged-row", lambda f: append_bytes(f / "reference.tsv", b"APBI\tnausea\tshort\tcommon\textra\tmore\n"), se_prepare, "line ", "unreadable row"),
    # side effects: site alias table
    Case("site-aliases/only-comments", lambda f: write(f / "site_aliases.tsv", "# nothing\n"), se_prepare, "line 1", "empty alias table"),
    Case("site-aliases/latin-1", lambda f: append_bytes(f / "site_aliases.tsv", LATIN1 + b"\tAPBI\n"), se_prepare, "line ", "not UTF-8"),
    Case("site-aliases/missing-column", lambda f: edit(f / "site_aliases.tsv", "alias\tcanonical", "alias\tsite"), se_prepare, "header", "missing ['canonical']"),
    Case("site-aliases/conflict", lambda f: append_bytes(f / "site_aliases.tsv", b"partial breast\tChest Wall\n"), se_prepare, "row ", "already maps to"),
    Case("site-aliases/empty-canonical", lambda f: append_bytes(f / "site_aliases.tsv", b"elbow\t\n"), se_prepare, "row ", "must both be filled"),
    # side effects: prompt templates and the judge
    Case("se-template/empty", lambda f: write(f / "prompts/side_effects/ff.txt", "\n"), se_requests, "line 1", "empty prompt template"),
    Case("se-template/no-profile", lambda f: edit(f / "prompts/side_effects/ff.txt", "{{PATIENT_PROFILE}}", "the patient"), se_requests, "placeholder {{PATIENT_PROFILE}}", "missing from the prompt template"),
    Case("se-template/grounded-no-vocabulary", lambda f: edit(f / "prompts/side_effects/grounded.txt", "{{SIDE_EFFECTS}}", "(list)"), se_requests, "placeholder {{SIDE_EFFECTS}}", "missing from the prompt template"),
    Case("se-template/lsc-no-size", lambda f: edit(f / "prompts/side_effects/ff_lsc.txt", "{{LIST_SIZE}}", "some"), se_requests, "placeholder {{LIST_SIZE}}", "missing from the prompt template"),
    Case("se-template/latin-1", lambda f: write(f / "prompts/side_effects/grounded_lsc.txt", LATIN1), se_requests, "line 1", "not UTF-8"),
    Case("judge-template/no-list-b", lambda f: edit(f / "prompts/side_effects/match_llm.txt", "{{LIST_B}}", "B"), se_judge, "placeholder {{LIST_B}}", "missing from the prompt template"),
    Case("judge-template/empty", lambda f: write(f / "prompts/side_effects/match_llm.txt", ""), se_judge, "line 1", "empty prompt template"),
    Case("validation/empty", lambda f: write(f / "validation.tsv", "# only a comment\n"), se_judge, "line 1", "empty validation table"),
    Case("validation/latin-1", lambda f: append_bytes(f / "validation.tsv", LATIN1 + b"\tfatigue\tyes\n"), se_judge, "line ", "not UTF-8"),
    Case("validation/missing-column", lambda f: edit(f / "validation.tsv", "prediction\treference\tsame", "prediction\treference\tequal"), se_judge, "header", "missing columns ['same']"),
    Case("validation/bad-label", lambda f: append_bytes(f / "validation.tsv", b"tiredness\tfatigue\tmaybe\n"), se_judge, "row ", "same must be yes or no"),
    Case("profiles-xlsx/not-a-workbook", lambda f: write(f / "profiles.xlsx", "profile_id,profile\n"), se_prepare_xlsx("profiles"), "sheet 1", "not a readable .xlsx profile sheet"),
    Case("reference-xlsx/truncated", lambda f: write(f / "reference.xlsx", (f / "reference.xlsx").read_bytes()[:300]), se_prepare_xlsx("reference"), "sheet 1", "not a readable .xlsx reference"),
    # cancer myth: questions
    Case("questions/empty", lambda f: write(f / "questions.json", "  \n"), cm_prepare, "line 1", "no question records"),
    Case("questions/latin-1", lambda f: write(f / "questions.json", b'[{"example_question": "' + LATIN1 + b'"}]'), cm_prepare, "line 1", "not UTF-8"),
    Case("questions/wrapper", lambda f: write(f / "questions.json", json.dumps({"questions": json.loads((f / "questions.json").read_text())})), cm_prepare, "record 1 (key 'questions')", "give the list itself"),
    Case("questions/bad-json", lambda f: edit(f / "questions.json", '"example_question"', 'example_question'), cm_prepare, "record 1 (line ", "not valid JSON"),
    Case("questions/not-an-object", lambda f: edit_json(f / "questions.json", lambda d: d.append(["a list"])), cm_prepare, "record ", "expected a JSON object"),
    Case("questions/missing-question", lambda f: edit_json(f / "questions.json", lambda d: d[1].pop("example_question")), cm_prepare, "record 2", "missing question"),
    Case("questions/empty-correction", lambda f: edit_json(f / "questions.json", lambda d: d[0].update(example_assumption=" ")), cm_prepare, "record 1", "missing correction"),
    Case("questions/bad-category", lambda f: edit_json(f / "questions.json", lambda d: d[0].update(category="astrology")), cm_prepare, "record 1", "unknown category 'astrology'"),
    Case("questions/duplicate-id", lambda f: edit_json(f / "questions.json", lambda d: d.append(dict(d[0]))), cm_prepare, "(id '", "duplicate question id"),
    # cancer myth: myths, human scores, verifier examples, initial pools, templates
    Case("myths/empty", lambda f: write(f / "myths.jsonl", ""), cm_myths, "line 1", "no myth records"),
    Case("myths/missing-fact", lambda f: edit(f / "myths.jsonl", '"fact"', '"facts"'), cm_myths, "record 1", "missing fact"),
    Case("myths/latin-1", lambda f: append_bytes(f / "myths.jsonl", b'{"cancer": "' + LATIN1 + b'"}\n'), cm_myths, "line ", "not UTF-8"),
    Case("human-scores/bad-score", lambda f: edit_json(f / "human_scores.json", lambda d: d[0].update(human_score=2)), cm_human, "record 1 (id 'h1')", "human_score must be -1, 0 or 1"),
    Case("human-scores/missing-answer", lambda f: edit_json(f / "human_scores.json", lambda d: d[0].pop("answer")), cm_human, "record 1 (id 'h1')", "answer must be a non-empty string"),
    Case("human-scores/duplicate-id", lambda f: edit_json(f / "human_scores.json", lambda d: d.append(dict(d[0]))), cm_human, "(id 'h1')", "duplicate id"),
    Case("human-scores/inclusion-probability", lambda f: edit_json(f / "human_scores.json", lambda d: d[0].update(inclusion_probability=1.5)), cm_human, "record 1 (id 'h1')", "inclusion_probability must be a number in (0, 1]"),
    Case("verifier-examples/bad-sharpness", lambda f: edit_json(f / "verifier_examples.json", lambda d: d[0]["score"].update(Sharpness=5)), cm_human, "example 1", "Sharpness"),
    Case("verifier-template/no-question", lambda f: edit(f / "prompts/cancer_myth/verifier.txt", "[Question to Evaluate]", "the question"), cm_human, "placeholder [Question to Evaluate]", "missing from the prompt template"),
    Case("verifier-template/empty-example", lambda f: write(f / "prompts/cancer_myth/verifier_example.txt", "\n\n"), cm_human, "line 1", "empty prompt template"),
    Case("initial-valid/missing-assumption", lambda f: edit_json(f / "initial_valid.json", lambda d: d[0].pop("example_assumption")), cm_initial, "record 1", "example_assumption must be a non-empty string"),
    Case("initial-invalid/missing-reason", lambda f: edit_json(f / "initial_invalid.json", lambda d: d[0].pop("reason")), cm_initial, "record 1", "reason must be a non-empty string"),
    Case("generator-template/no-myth", lambda f: edit(f / "prompts/cancer_myth/generator.txt", "[Myth Information]", "the myth"), cm_generator, "placeholder [Myth Information]", "missing from the prompt template"),
    Case("classifier-template/no-question", lambda f: edit(f / "prompts/cancer_myth/classifier.txt", "[Question]", "it", count=99), cm_classifier, "placeholder [Question]", "missing from the prompt template"),
    # coral: metadata, prompts, notes
    Case("metadata/empty", lambda f: write(f / "metadata.tsv", ""), coral_metadata, "line 1", "empty metadata table"),
    Case("metadata/latin-1", lambda f: append_bytes(f / "metadata.tsv", b"breast_02\t" + LATIN1 + b"\n"), coral_metadata, "line ", "not UTF-8"),
    Case("metadata/no-doc-id", lambda f: edit(f / "metadata.tsv", "doc_id", "document"), coral_metadata, "header", "needs a doc_id column"),
    Case("metadata/duplicate-doc", lambda f: append_bytes(f / "metadata.tsv", b"breast_01\tbreast\tFemale\tWhite\t51-60\n"), coral_metadata, "doc_id 'breast_01'", "duplicate doc_id rows"),
    Case("metadata/unknown-doc", lambda f: append_bytes(f / "metadata.tsv", b"breast_99\tbreast\tFemale\tWhite\t51-60\n"), coral_metadata, "doc_id 'breast_99'", "without a note"),
    Case("coral-prompt/no-task-placeholder", lambda f: edit(f / "prompts/coral/user_template.txt", "{task-specific-prompt}", "the task"), coral_prompts, "placeholder {task-specific-prompt}", "missing from the prompt template"),
    Case("coral-prompt/empty-task", lambda f: write(f / "prompts/coral/tasks/radiology.txt", " \n"), coral_prompts, "line 1", "empty prompt template"),
    Case("coral-prompt/latin-1-system", lambda f: write(f / "prompts/coral/system.txt", LATIN1), coral_prompts, "line 1", "not UTF-8"),
    Case("review-sheet/latin-1", lambda f: append_bytes(f / "review.tsv", b"breast_01\thpi\tsymptoms\t0\tEntity\tSymptom\t" + LATIN1 + b"\t1\t\n"), coral_review, "line ", "not UTF-8"),
    Case("review-sheet/missing-column", lambda f: edit(f / "review.tsv", "\tcategory\t", "\tscore\t"), coral_review, "header", "lacks columns ['category']"),
    Case("review-sheet/bad-category", lambda f: edit(f / "review.tsv", "lump\t1\t", "lump\t7\t"), coral_review, "row 2", "category '7' is not one of"),
    Case("brat/unknown-entity-type", lambda f: append_bytes(f / "notes/breast_01.ann", b"T99\tAlien 0 4\t" + (f / "notes/breast_01.txt").read_bytes()[:4] + b"\n"), coral_notes, "line ", "unknown entity type 'Alien'"),
    Case("brat/offsets-outside", lambda f: append_bytes(f / "notes/breast_01.ann", b"T99\tSymptom 99990 99995\tcough\n"), coral_notes, "line ", "outside the text"),
    Case("brat/missing-entity", lambda f: append_bytes(f / "notes/breast_01.ann", b"R99\tTemporal Arg1:T1 Arg2:T999\n"), coral_notes, "line ", "missing entity T999"),
    # guidelines: tree, notes, templates
    Case("tree/empty", lambda f: write(f / "guideline.json", ""), gl_prepare, "line 1", "empty guideline tree"),
    Case("tree/bad-json", lambda f: edit(f / "guideline.json", '"prefix": "LUNG",', '"prefix": "LUNG"'), gl_prepare, "line ", "not valid JSON"),
    Case("tree/latin-1", lambda f: write(f / "guideline.json", b'{"guideline": "' + LATIN1 + b'"}'), gl_prepare, "line 1", "not UTF-8"),
    Case("tree/schema", lambda f: edit_json(f / "guideline.json", lambda d: d.pop("pages")), gl_prepare, "top level", "does not match the guideline tree schema"),
    Case("tree/unknown-child", lambda f: edit(f / "guideline.json", '"next": "LUNG-1-2"', '"next": "LUNG-1-99"'), gl_prepare, "node LUNG-1-1", "child 'LUNG-1-99' does not exist"),
    Case("tree/duplicate-node", lambda f: edit_json(f / "guideline.json", lambda d: d["pages"][0]["nodes"].append(d["pages"][0]["nodes"][0])), gl_prepare, "node LUNG-1-1", "duplicate node id"),
    Case("notes/missing-note", lambda f: edit_jsonl(f / "labelled.jsonl", 2, lambda r: r.pop("note")), gl_prepare, "record 2 (patient ", "note is missing or empty"),
    Case("notes/duplicate-patient", lambda f: edit_jsonl(f / "unlabelled.jsonl", 1, lambda r: r.update(patient_id="p01")), gl_prepare, "record 1", "duplicate patient_id 'p01'"),
    Case("notes/missing-patient", lambda f: edit_jsonl(f / "unlabelled.jsonl", 1, lambda r: r.pop("patient_id")), gl_prepare, "record 1", "patient_id is missing"),
    Case("notes/latin-1", lambda f: append_bytes(f / "labelled.jsonl", b'{"patient_id": "p99", "note": "' + LATIN1 + b'"}\n'), gl_prepare, "line ", "not UTF-8"),
    Case("notes/bad-json", lambda f: append_bytes(f / "labelled.jsonl", b'{"patient_id": "p99", "note": }\n'), gl_prepare, "line ", "not valid JSON"),
    Case("gl-template/no-note", lambda f: edit(f / "prompts/guidelines/predict_path.txt", "{note}", "the note"), gl_rollouts, "placeholder {note}", "missing from the prompt template"),
    Case("gl-template/empty", lambda f: write(f / "prompts/guidelines/predict_path.txt", ""), gl_rollouts, "line 1", "empty prompt template"),
    # request sets (the adhoc study) and replay files
    Case("requests/duplicate-id", lambda f: append_bytes(f / "requests.jsonl", (f / "requests.jsonl").read_bytes().splitlines(True)[0]), spine_requests, "line 4", "duplicate request_id 'a' (first on line 1)"),
    Case("requests/no-messages", lambda f: edit_jsonl(f / "requests.jsonl", 2, lambda r: r.pop("messages")), spine_requests, "line 2 (request_id 'b')", "messages must be a non-empty list"),
    Case("requests/unknown-param", lambda f: edit_jsonl(f / "requests.jsonl", 1, lambda r: r["params"].update(temprature=0)), spine_requests, "line 1 (request_id 'a')", "unknown params ['temprature']"),
    Case("requests/latin-1", lambda f: append_bytes(f / "requests.jsonl", b'{"request_id": "' + LATIN1 + b'"}\n'), spine_requests, "line 4", "not UTF-8"),
    Case("replay/duplicate-id", spoil_replay('{"request_id": "a", "text": "x"}\n{"request_id": "b", "text": "y"}\n{"request_id": "a", "text": "z"}\n'), spine_replay, "line 3 (request_id 'a')", "duplicate request_id (first on line 1)"),
    Case("replay/bad-json", spoil_replay('{"request_id": "a", "text": "x"}\n{"request_id": "b", text}\n'), spine_replay, "line 2", "not valid JSON"),
    Case("replay/not-an-object", spoil_replay('{"request_id": "a", "text": "x"}\n["not an object"]\n'), spine_replay, "line 2", "expected a JSON object"),
    Case("replay/latin-1", spoil_replay(b'{"request_id": "a", "text": "' + LATIN1 + b'"}\n'), spine_replay, "line 1", "not UTF-8"),
]  # fmt: skip


# ------------------------------------------------------------------------ issue #24: more doors
DEEP = "[" * 100_000 + "]" * 100_000  # deeper than any JSON decoder follows
LONG_INT = "9" * 5000  # int() refuses it (4,300 digits); json.loads raises ValueError
HUGE = "word " * 600_000  # 3 MB of text in one field
LONE = '"\\ud800"'  # a lone surrogate escape: valid JSON, no text
ZW = "\u200b\u200c\u2060\ufeff"  # only invisible characters


def first_text(path: Path, key: str, raw_value: str) -> Path:
    """The first ``"key": "..."`` string of a JSON file replaced by ``raw_value`` (raw JSON)."""
    import re

    text = path.read_text(encoding="utf-8")
    pattern = rf'"{key}":\s*"(?:[^"\\]|\\.)*"'
    spoilt, n = re.subn(pattern, lambda m: f'"{key}": {raw_value}', text, count=1)
    assert n == 1, f"{key} not in {path}"
    return write(path, spoilt)


def twice(path: Path, key: str) -> Path:
    """The first ``"key":`` of a JSON file given twice in its object."""
    return edit(path, f'"{key}":', f'"{key}": "first", "{key}":')


def se_prepare_assigned(f: Inputs) -> None:
    """Base-form profiles whose sites come from the config's site_assignment map."""
    base = f / "base.csv"
    if not base.exists():
        write(base, "profile_id,profile\nb1,Woman of 60 planned for radiation therapy.\n")
        write(f / "assign.json", json.dumps({"b1": "APBI"}))
    assignment = json.loads((f / "assign.json").read_text())
    se_prepare(f, base, site_assignment=assignment, form="base")


def spoil_assignment(f: Inputs) -> Path:
    write(f / "assign.json", json.dumps({"b1": "APBI", "ghost": "APBI"}))
    return f / "base.csv"


def jsonl_line(path: Path, line: str) -> Path:
    return append_bytes(path, (line + "\n").encode("utf-8"))


MYTH = '{{"cancer": "c", "myth": "m", "fact": {fact}}}'
NOTE = '{{"patient_id": {pid}, "note": {note}}}'
REQ = '{{"request_id": "z", "messages": [{{"role": "user", "content": {content}}}], "params": {params}}}'
Q = "questions.json"


def req(content='"hi"', params="{}") -> str:
    return REQ.format(content=content, params=params)


MORE_CASES = [
    # strict JSON in the question file (a JSON list: each record named with its line)
    Case("questions/duplicate-key", lambda f: twice(f / Q, "example_question"), cm_prepare, "record 1 (line 2)", "key 'example_question' given twice"),
    Case("questions/nan", lambda f: first_text(f / Q, "from_model", "NaN"), cm_prepare, "record 1", "NaN is not a number"),
    Case("questions/infinity", lambda f: first_text(f / Q, "from_model", "-Infinity"), cm_prepare, "record 1", "-Infinity is not a number"),
    Case("questions/long-integer", lambda f: first_text(f / Q, "from_model", LONG_INT), cm_prepare, "record 1", "an integer of 5000 digits"),
    Case("questions/lone-surrogate", lambda f: first_text(f / Q, "from_model", LONE), cm_prepare, "record 1", "lone surrogate"),
    Case("questions/deep-nesting", lambda f: first_text(f / Q, "from_model", DEEP), cm_prepare, "record 1", "nested too deeply"),
    Case("questions/zero-width-question", lambda f: first_text(f / Q, "example_question", json.dumps(ZW)), cm_prepare, "record 1", "missing question"),
    Case("questions/nbsp-only-correction", lambda f: first_text(f / Q, "example_assumption", json.dumps("\u00a0\u3000 ")), cm_prepare, "record 1", "missing correction"),
    Case("questions/too-long", lambda f: first_text(f / Q, "example_question", json.dumps(HUGE)), cm_prepare, "record 1", "more than the 20,000"),
    Case("questions/id-too-long", lambda f: edit_json(f / Q, lambda d: d[0].update(raw_QID="q" * 500)), cm_prepare, "record 1", "more than the 200"),
    Case("questions/boolean-id", lambda f: edit_json(f / Q, lambda d: d[0].update(raw_QID=True)), cm_prepare, "record 1", "raw_QID True is not an id"),
    Case("questions/nfd-duplicate-id", lambda f: edit_json(f / Q, lambda d: (d[0].update(raw_QID="Qu\u00e9"), d[1].update(raw_QID="Que\u0301"))), cm_prepare, "record 2", "duplicate question id"),
    Case("questions/zero-width-duplicate-id", lambda f: edit_json(f / Q, lambda d: (d[0].update(raw_QID="q7"), d[1].update(raw_QID="q7\u200b"))), cm_prepare, "record 2", "duplicate question id"),
    Case("questions/fullwidth-duplicate-id", lambda f: edit_json(f / Q, lambda d: (d[0].update(raw_QID="q7"), d[1].update(raw_QID="\uff51\uff17"))), cm_prepare, "record 2", "duplicate question id"),
    Case("questions/missing-comma", lambda f: edit(f / Q, "},\n  {", "}\n  {"), cm_prepare, "record 2", "expected ',' or ']'"),
    Case("questions/after-the-list", lambda f: append_bytes(f / Q, b"\n[]\n"), cm_prepare, "record ", "more after the list"),
    # myths (a JSONL stream)
    Case("myths/duplicate-key", lambda f: jsonl_line(f / "myths.jsonl", '{"cancer": "c", "cancer": "d", "myth": "m", "fact": "f"}'), cm_myths, "record ", "key 'cancer' given twice"),
    Case("myths/deep-nesting", lambda f: jsonl_line(f / "myths.jsonl", MYTH.format(fact=DEEP)), cm_myths, "record ", "nested too deeply"),
    Case("myths/long-integer", lambda f: jsonl_line(f / "myths.jsonl", MYTH.format(fact=LONG_INT)), cm_myths, "record ", "an integer of 5000 digits"),
    Case("myths/lone-surrogate", lambda f: jsonl_line(f / "myths.jsonl", MYTH.format(fact=LONE)), cm_myths, "record ", "lone surrogate"),
    Case("myths/nan", lambda f: jsonl_line(f / "myths.jsonl", MYTH.format(fact="NaN")), cm_myths, "record ", "NaN is not a number"),
    Case("myths/zero-width-fact", lambda f: jsonl_line(f / "myths.jsonl", MYTH.format(fact=json.dumps(ZW))), cm_myths, "record ", "missing fact"),
    Case("myths/too-long", lambda f: jsonl_line(f / "myths.jsonl", MYTH.format(fact=json.dumps(HUGE))), cm_myths, "record ", "more than the 20,000"),
    Case("myths/number-fact", lambda f: jsonl_line(f / "myths.jsonl", MYTH.format(fact="3")), cm_myths, "record ", "missing fact"),
    # human scores and verifier examples: a score is -1, 0 or 1 as an integer
    Case("human-scores/boolean-score", lambda f: edit_json(f / "human_scores.json", lambda d: d[0].update(human_score=True)), cm_human, "record 1 (id 'h1')", "human_score must be -1, 0 or 1"),
    Case("human-scores/float-score", lambda f: edit_json(f / "human_scores.json", lambda d: d[0].update(human_score=1.0)), cm_human, "record 1 (id 'h1')", "got 1.0"),
    Case("human-scores/string-score", lambda f: edit_json(f / "human_scores.json", lambda d: d[0].update(human_score="1")), cm_human, "record 1 (id 'h1')", "got '1'"),
    Case("human-scores/nan-score", lambda f: edit(f / "human_scores.json", '"human_score": ', '"human_score": NaN, "x": '), cm_human, "record 1", "NaN is not a number"),
    Case("human-scores/duplicate-key", lambda f: twice(f / "human_scores.json", "answer"), cm_human, "record 1", "key 'answer' given twice"),
    Case("human-scores/zero-width-answer", lambda f: edit_json(f / "human_scores.json", lambda d: d[0].update(answer=ZW)), cm_human, "record 1 (id 'h1')", "answer must be a non-empty string"),
    Case("human-scores/too-long-answer", lambda f: edit_json(f / "human_scores.json", lambda d: d[0].update(answer=HUGE)), cm_human, "record 1 (id 'h1')", "more than the 20,000"),
    Case("human-scores/nfd-duplicate-id", lambda f: edit_json(f / "human_scores.json", lambda d: (d[0].update(id="caf\u00e9"), d[1].update(id="cafe\u0301"))), cm_human, "record 2", "duplicate id"),
    Case("verifier-examples/boolean-sharpness", lambda f: edit_json(f / "verifier_examples.json", lambda d: d[0]["score"].update(Sharpness=True)), cm_human, "example 1", "Sharpness"),
    Case("verifier-examples/string-sharpness", lambda f: edit_json(f / "verifier_examples.json", lambda d: d[0]["score"].update(Sharpness="1")), cm_human, "example 1", "got '1')"),
    Case("verifier-examples/duplicate-key", lambda f: twice(f / "verifier_examples.json", "answer"), cm_human, "record 1", "key 'answer' given twice"),
    Case("verifier-examples/long-integer", lambda f: edit(f / "verifier_examples.json", '"answer":', f'"n": {LONG_INT}, "answer":'), cm_human, "record 1", "an integer of 5000 digits"),
    Case("initial-valid/duplicate-key", lambda f: twice(f / "initial_valid.json", "example_question"), cm_initial, "record 1", "key 'example_question' given twice"),
    Case("initial-invalid/lone-surrogate", lambda f: first_text(f / "initial_invalid.json", "reason", LONE), cm_initial, "record 1", "lone surrogate"),
    # the guideline tree
    Case("tree/duplicate-root", lambda f: edit(f / "guideline.json", '"root": "LUNG-1-1",', '"root": "LUNG-1-1", "root": "LUNG-2-1",'), gl_prepare, "line ", "key 'root' given twice"),
    Case("tree/nan", lambda f: edit(f / "guideline.json", '"version": "demo-1"', '"version": NaN'), gl_prepare, "line ", "NaN is not a number"),
    Case("tree/deep-nesting", lambda f: edit(f / "guideline.json", '"version": "demo-1"', f'"version": {DEEP}'), gl_prepare, "line ", "nested too deeply"),
    Case("tree/long-integer", lambda f: edit(f / "guideline.json", '"version": "demo-1"', f'"version": {LONG_INT}'), gl_prepare, "line ", "an integer of 5000 digits"),
    Case("tree/lone-surrogate", lambda f: edit(f / "guideline.json", '"version": "demo-1"', f'"version": {LONE}'), gl_prepare, "line ", "lone surrogate"),
    # guideline notes (JSONL)
    Case("notes/duplicate-key", lambda f: jsonl_line(f / "labelled.jsonl", '{"patient_id": "p99", "note": "a", "note": "b"}'), gl_prepare, "line ", "key 'note' given twice"),
    Case("notes/deep-nesting", lambda f: jsonl_line(f / "labelled.jsonl", NOTE.format(pid='"p99"', note=DEEP)), gl_prepare, "line ", "nested too deeply"),
    Case("notes/long-integer-id", lambda f: jsonl_line(f / "unlabelled.jsonl", NOTE.format(pid=LONG_INT, note='"n"')), gl_prepare, "line ", "an integer of 5000 digits"),
    Case("notes/lone-surrogate", lambda f: jsonl_line(f / "unlabelled.jsonl", NOTE.format(pid='"p99"', note=LONE)), gl_prepare, "line ", "lone surrogate"),
    Case("notes/nan", lambda f: jsonl_line(f / "unlabelled.jsonl", '{"patient_id": "p99", "note": "n", "age": NaN}'), gl_prepare, "line ", "NaN is not a number"),
    Case("notes/zero-width-note", lambda f: jsonl_line(f / "unlabelled.jsonl", NOTE.format(pid='"p99"', note=json.dumps(ZW))), gl_prepare, "(patient p99)", "note is missing or empty"),
    Case("notes/boolean-id", lambda f: jsonl_line(f / "unlabelled.jsonl", NOTE.format(pid="true", note='"n"')), gl_prepare, "record ", "patient_id is missing"),
    Case("notes/too-long-note", lambda f: jsonl_line(f / "unlabelled.jsonl", NOTE.format(pid='"p99"', note=json.dumps("x" * 1_000_001))), gl_prepare, "(patient p99)", "more than the 1,000,000"),
    Case("notes/fullwidth-duplicate-id", lambda f: jsonl_line(f / "unlabelled.jsonl", NOTE.format(pid='"\uff50\uff10\uff11"', note='"n"')), gl_prepare, "record ", "duplicate patient_id 'p01'"),
    Case("notes/zero-width-duplicate-id", lambda f: jsonl_line(f / "unlabelled.jsonl", NOTE.format(pid='"p01\u200b"', note='"n"')), gl_prepare, "record ", "duplicate patient_id 'p01'"),
    # ad-hoc request sets: params type- and range-checked, strict JSON, capped messages
    Case("requests/temperature-hot", lambda f: jsonl_line(f / "requests.jsonl", req(params='{"temperature": "hot"}')), spine_requests, "line 4 (request_id 'z')", "params.temperature: 'hot' is not a number"),
    Case("requests/temperature-negative", lambda f: jsonl_line(f / "requests.jsonl", req(params='{"temperature": -1}')), spine_requests, "line 4 (request_id 'z')", "params.temperature: -1"),
    Case("requests/temperature-boolean", lambda f: jsonl_line(f / "requests.jsonl", req(params='{"temperature": true}')), spine_requests, "line 4 (request_id 'z')", "params.temperature: True"),
    Case("requests/temperature-nan", lambda f: jsonl_line(f / "requests.jsonl", req(params='{"temperature": NaN}')), spine_requests, "line 4", "NaN is not a number"),
    Case("requests/top-p-above-one", lambda f: jsonl_line(f / "requests.jsonl", req(params='{"top_p": 1.5}')), spine_requests, "line 4 (request_id 'z')", "params.top_p: 1.5"),
    Case("requests/top-k-negative", lambda f: jsonl_line(f / "requests.jsonl", req(params='{"top_k": -3}')), spine_requests, "line 4 (request_id 'z')", "params.top_k: -3"),
    Case("requests/max-tokens-zero", lambda f: jsonl_line(f / "requests.jsonl", req(params='{"max_new_tokens": 0}')), spine_requests, "line 4 (request_id 'z')", "params.max_new_tokens: 0"),
    Case("requests/max-tokens-string", lambda f: jsonl_line(f / "requests.jsonl", req(params='{"max_new_tokens": "40"}')), spine_requests, "line 4 (request_id 'z')", "params.max_new_tokens: '40'"),
    Case("requests/max-tokens-boolean", lambda f: jsonl_line(f / "requests.jsonl", req(params='{"max_new_tokens": true}')), spine_requests, "line 4 (request_id 'z')", "params.max_new_tokens: True"),
    Case("requests/seed-fraction", lambda f: jsonl_line(f / "requests.jsonl", req(params='{"seed": 1.5}')), spine_requests, "line 4 (request_id 'z')", "params.seed: 1.5"),
    Case("requests/stop-number", lambda f: jsonl_line(f / "requests.jsonl", req(params='{"stop": 5}')), spine_requests, "line 4 (request_id 'z')", "params.stop: 5"),
    Case("requests/long-integer-seed", lambda f: jsonl_line(f / "requests.jsonl", req(params=f'{{"seed": {LONG_INT}}}')), spine_requests, "line 4", "an integer of 5000 digits"),
    Case("requests/duplicate-key", lambda f: jsonl_line(f / "requests.jsonl", '{"request_id": "z", "request_id": "y", "messages": []}'), spine_requests, "line 4", "key 'request_id' given twice"),
    Case("requests/deep-nesting", lambda f: jsonl_line(f / "requests.jsonl", req(params=DEEP)), spine_requests, "line 4", "nested too deeply"),
    Case("requests/lone-surrogate", lambda f: jsonl_line(f / "requests.jsonl", req(content=LONE)), spine_requests, "line 4", "lone surrogate"),
    Case("requests/huge-message", lambda f: jsonl_line(f / "requests.jsonl", req(content=json.dumps("x" * 1_000_001))), spine_requests, "line 4 (request_id 'z')", "more than the 1,000,000"),
    Case("requests/content-number", lambda f: jsonl_line(f / "requests.jsonl", req(content="7")), spine_requests, "line 4 (request_id 'z')", "content must be a string"),
    # replay files
    Case("replay/duplicate-key", spoil_replay('{"request_id": "a", "text": "x", "text": "y"}\n'), spine_replay, "line 1", "key 'text' given twice"),
    Case("replay/long-integer", spoil_replay(f'{{"request_id": "a", "text": "x", "n": {LONG_INT}}}\n'), spine_replay, "line 1", "an integer of 5000 digits"),
    Case("replay/lone-surrogate", spoil_replay(f'{{"request_id": "a", "text": {LONE}}}\n'), spine_replay, "line 1", "lone surrogate"),
    Case("replay/deep-nesting", spoil_replay(f'{{"request_id": "a", "text": "x", "m": {DEEP}}}\n'), spine_replay, "line 1", "nested too deeply"),
    Case("replay/overflowing-float", spoil_replay('{"request_id": "a", "text": "x", "latency_s": 1e999}\n'), spine_replay, "line 1", "reads as infinity"),
    Case("replay/nan", spoil_replay('{"request_id": "a", "text": "x", "latency_s": NaN}\n'), spine_replay, "line 1", "NaN is not a number"),
    # tables: one name per column, cells capped, ids matched after NFKC
    Case("profiles/duplicate-column", lambda f: edit(f / "profiles.csv", "ProfilesNoLocation,ProfilesLocation", "ProfilesNoLocation,ProfilesNoLocation"), se_prepare, "header", "column 'ProfilesNoLocation' given twice"),
    Case("profiles/huge-cell", lambda f: append_bytes(f / "profiles.csv", b'demo99,"radiation therapy","radiation therapy ' + b"to the breast " * 150_000 + b'"\n'), se_prepare, "row ", "more than the 20,000"),
    Case("profiles/site-assignment-no-profile", spoil_assignment, se_prepare_assigned, "profile_id 'ghost'", "studies.side_effects.site_assignment names profile 'ghost'"),
    Case("reference/duplicate-column", lambda f: edit(f / "reference.tsv", "site\tside_effect\tonset\tfrequency", "site\tside_effect\tonset\tfrequency\tonset"), se_prepare, "header", "column 'onset' given twice"),
    Case("reference/huge-cell", lambda f: append_bytes(f / "reference.tsv", b"APBI\t" + b"nausea " * 5000 + b"\tshort\tcommon\n"), se_prepare, "row ", "more than the 20,000"),
    Case("site-aliases/duplicate-column", lambda f: edit(f / "site_aliases.tsv", "alias\tcanonical", "alias\talias"), se_prepare, "header", "column 'alias' given twice"),
    Case("site-aliases/huge-cell", lambda f: append_bytes(f / "site_aliases.tsv", b"elbow " * 5000 + b"\tAPBI\n"), se_prepare, "row ", "more than the 20,000"),
    Case("validation/duplicate-column", lambda f: edit(f / "validation.tsv", "prediction\treference\tsame", "prediction\tprediction\tsame"), se_judge, "header", "column 'prediction' given twice"),
    Case("metadata/duplicate-column", lambda f: edit(f / "metadata.tsv", "doc_id\tcancer_type\tgender", "doc_id\tgender\tgender"), coral_metadata, "header", "column 'gender' given twice"),
    Case("metadata/huge-cell", lambda f: append_bytes(f / "metadata.tsv", b"breast_01\t" + b"b" * 20_001 + b"\n"), coral_metadata, "row ", "more than the 20,000"),
    Case("metadata/nfd-duplicate-doc", lambda f: append_bytes(f / "metadata.tsv", "breast_01\u200b\tbreast\tFemale\tWhite\t51-60\n".encode()), coral_metadata, "doc_id 'breast_01'", "duplicate doc_id rows"),
    Case("review-sheet/duplicate-column", lambda f: edit(f / "review.tsv", "\tcategory\tcomment", "\tcategory\tcategory"), coral_review, "header", "column 'category' given twice"),
    Case("review-sheet/huge-cell", lambda f: append_bytes(f / "review.tsv", b"breast_01\thpi\tsymptoms\t0\tEntity\tSymptom\tlump\t1\t" + b"c" * 20_001 + b"\n"), coral_review, "row ", "more than the 20,000"),
    Case("profiles/zero-width-specified", lambda f: append_bytes(f / "profiles.csv", ('demo99,"radiation therapy","' + ZW + '"\n').encode()), se_prepare, "(profile demo99)", "both the base and the specified"),
    Case("reference/zero-width-term", lambda f: append_bytes(f / "reference.tsv", ("APBI\t" + ZW + "\tshort\tcommon\n").encode()), se_prepare, "row ", "empty side_effect"),
    Case("profiles-xlsx/duplicate-column", lambda f: pd.DataFrame([["demo01", "a", "b"]], columns=["profile_id", "ProfilesNoLocation", "ProfilesNoLocation"]).to_excel(f / "profiles.xlsx", index=False) or f / "profiles.xlsx", se_prepare_xlsx("profiles"), "header", "column 'ProfilesNoLocation' given twice"),
    # BRAT notes: UTF-8 named by line, notes capped
    Case("brat/latin-1-txt", lambda f: write(f / "notes/breast_01.txt", LATIN1), coral_notes, "line 1", "not UTF-8"),
    Case("brat/latin-1-ann", lambda f: append_bytes(f / "notes/breast_01.ann", b"#1\tAnnotatorNotes T1\t" + LATIN1 + b"\n"), coral_notes, "line ", "not UTF-8"),
    Case("brat/huge-note", lambda f: append_bytes(f / "notes/breast_01.txt", b"x" * 1_000_001), coral_notes, "the note", "more than the 1,000,000"),
]  # fmt: skip
CASES += MORE_CASES


@pytest.fixture
def inputs(tmp_path) -> Inputs:
    return Inputs(tmp_path)


def test_the_corpus_is_large_and_covers_every_loader():
    assert len(CASES) >= 150
    assert len({c.id for c in CASES}) == len(CASES)
    loaders = {c.id.split("/")[0] for c in CASES}
    assert len(loaders) >= 20


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_bad_input_stops_naming_file_record_and_problem(case: Case, inputs: Inputs):
    case.run(inputs)  # the untouched demo inputs pass
    for old in inputs.outputs():
        old.unlink()
    bad = case.spoil(inputs)
    with pytest.raises(InputError) as info:
        case.run(inputs)
    message = str(info.value)
    assert str(bad) in message or os.path.basename(bad) in message, message
    assert info.value.record and case.record in str(info.value.record), message
    assert case.problem in message, message
    assert inputs.outputs() == []  # nothing written that a model call could follow


# ------------------------------------------------------------------------ accepted variants
def test_a_byte_order_mark_is_accepted_everywhere(inputs: Inputs):
    """Files saved by spreadsheet programs start with a UTF-8 BOM; they read like the rest."""
    for name in ("profiles.csv", "reference.tsv", "questions.json", "guideline.json"):
        path = inputs / name
        path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    append = inputs / "labelled.jsonl"
    append.write_bytes(b"\xef\xbb\xbf" + append.read_bytes())
    se_prepare(inputs)
    cm_prepare(inputs)
    gl_prepare(inputs)
    items = [json.loads(x) for x in lines_of(inputs.out / "items.jsonl")]
    assert len(items) == len(json.loads((DEMO / "cancer_myth/questions.json").read_text()))
    assert len(lines_of(inputs.out / "profiles.jsonl")) == 6


# ------------------------------------------------------------------------ generate-time inputs
# A cache line of the wrong shape no longer stops a job: it is skipped with a warning naming file
# and line (issue #36; tests/test_bad_replies.py, with the rest of the hostile-server corpus).


class _HtmlHandler(BaseHTTPRequestHandler):
    def do_POST(self):  # a proxy's login page, answered with 200
        body = b"<html><body>Please sign in</body></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_an_html_body_with_status_200_is_a_named_failed_call(inputs, monkeypatch):
    """Not a crash and not an answer: each request fails, saying what the server sent."""
    monkeypatch.setenv("BAD_INPUT_KEY", "sk-test")
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _HtmlHandler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
        model = {"id": "gpt", "backend": "openai", "model": "m", "base_url": url}
        model.update(api_key_env="BAD_INPUT_KEY", max_retries=0)
        counts = run_generate(
            inputs / "requests.jsonl", inputs.out / "r.jsonl", model, inputs / "cache", "a", "b",
            max_failed_share=1.0,  # accepted, so that the error rows can be read back
        )  # fmt: skip
    finally:
        httpd.shutdown()
    responses = read_responses(inputs.out / "r.jsonl")
    assert counts["errors"] == len(responses) == 3
    for resp in responses:
        assert resp.text is None
        assert "not a chat completion" in resp.error and "<html>" in resp.error
        assert url in resp.error
    assert not list((inputs / "cache").rglob("*.jsonl"))  # failed calls are never cached


def test_the_shipped_guideline_templates_hold_what_each_builder_fills():
    """The guideline text is optional context; every other field must have its placeholder."""
    from oncoeval.studies.guidelines.prompts import fill, read_template

    folder = PROMPTS / "guidelines"
    built = {
        "synth_record.txt": {"path": "P"},
        "synth_note_unstructured.txt": {"path": "P", "example": "E"},
        "synth_note_structured.txt": {"path": "P", "example": "E", "record": "R"},
        "choose_path.txt": {"note": "N", "path_a": "A", "path_b": "B"},
        "predict_path.txt": {"note": "N"},
    }
    for name, fields in built.items():
        text = fill(read_template(folder / name), guideline="G", **fields)
        assert all(value in text for value in fields.values()), name
    with pytest.raises(InputError, match="placeholder {record}"):
        fill(
            read_template(folder / "synth_note_unstructured.txt"), path="P", example="E", record="R"
        )


def test_a_template_survives_copies_into_requests(inputs):
    """A template put straight into a message (CORAL's system prompt) is copied by asdict."""
    import copy
    import pickle

    from oncoeval.core.inputs import read_template
    from oncoeval.core.records import Request, write_requests

    system = read_template(inputs / "prompts" / "coral" / "system.txt", strip=True)
    for clone in (copy.deepcopy(system), pickle.loads(pickle.dumps(system))):
        assert clone == system and clone.path == system.path
    write_requests(inputs.out / "r.jsonl", [Request("r", [{"role": "system", "content": system}])])
    assert read_requests(inputs.out / "r.jsonl")[0].messages[0]["content"] == str(system)


def test_a_cache_line_that_is_not_utf8_is_asked_again_not_served_garbled(tmp_path):
    from oncoeval.models.cache import ResponseCache

    cache = ResponseCache(tmp_path, "m", "job")
    good = {"key": "k1", "response": {"request_id": "a", "text": "fine"}}
    garbled = b'{"key": "k2", "response": {"request_id": "b", "text": "' + LATIN1 + b'"}}\n'
    cache.path.write_bytes(json.dumps(good).encode() + b"\n" + garbled)
    assert cache.load() == {"k1": good["response"]}


# ------------------------------------------------------------------------ the config check
def config_check(over: dict) -> list[str]:
    """The problems the workflow's config check finds in the demo config with ``over`` on top
    (what rules/common.smk runs before any job)."""
    import yaml
    from conftest import layered

    cfg = layered(yaml.safe_load((REPO / "config" / "config.yaml").read_text()), over)
    problems = oc.schema_problems(cfg)
    if problems:
        return problems
    oc.fill_config_defaults(cfg)
    for study in oc.STUDIES:
        cfg["studies"][study] = oc.filled_study_block(cfg, study)
    return oc.config_problems(cfg, env={})


PROBES = str(REPO / "resources" / "tests" / "probe-requests.jsonl")
CONFIG_CASES = {
    "jury-twice": (
        {"studies": {"cancer_myth": {"judges": {"verifier": ["smollm2", "smollm2"]}}}},
        "studies.cancer_myth.judges.verifier: ['smollm2'] named more than once",
    ),
    "list-size-min-above-max": (
        {"studies": {"side_effects": {"list_size": [30, 20]}}},
        "studies.side_effects.list_size: [30, 20] has its minimum above its maximum",
    ),
    "bad-heading-regex": (
        {"studies": {"coral": {"sections": {"headings": {"hpi": "(HISTORY"}}}}},
        "studies.coral.sections.headings.hpi: '(HISTORY' is not a valid regular expression",
    ),
    "bad-heading-any-regex": (
        {"studies": {"coral": {"sections": {"heading_any": "[A-Z"}}}},
        "studies.coral.sections.heading_any: '[A-Z' is not a valid regular expression",
    ),
    "adhoc-name-with-space": ({"adhoc": {"my set": PROBES}}, "'my set' does not match"),
    "adhoc-name-with-slash": ({"adhoc": {"../x": PROBES}}, "'../x' does not match"),
    # Names are path components (#36): no `.`/`..`, no hidden file, a length a file name fits.
    "adhoc-name-dotdot": ({"adhoc": {"..": PROBES}}, "'..' does not match"),
    "adhoc-name-dot": ({"adhoc": {".": PROBES}}, "'.' does not match"),
    "adhoc-name-240-chars": ({"adhoc": {"s" * 240: PROBES}}, "does not match"),
    "adhoc-names-folding-together": (
        {"adhoc": {"Probe": PROBES, "probe": PROBES}},
        "adhoc: ['Probe', 'probe'] differ only in case or punctuation",
    ),
    "model-id-dotdot": (
        {"models": [{"id": "..", "backend": "replay", "path": "x"}]},
        "'..' does not match",
    ),
    "model-id-dot": (
        {"models": [{"id": ".", "backend": "replay", "path": "x"}]},
        "'.' does not match",
    ),
    "model-id-too-long": (
        {"models": [{"id": "m" * 65, "backend": "replay", "path": "x"}]},
        "does not match",
    ),
    "model-ids-folding-together": (
        {
            "models": [
                {"id": "ref.a", "backend": "replay", "path": "x"},
                {"id": "ref_a", "backend": "replay", "path": "x"},
            ],
            "evaluate": ["ref.a"],
            "studies": {s: {"enabled": False} for s in oc.STUDIES},
        },
        "models[].id: ['ref.a', 'ref_a'] differ only in case or punctuation",
    ),
}


@pytest.mark.parametrize("case", sorted(CONFIG_CASES))
def test_a_bad_setting_is_named_by_the_config_check(case):
    over, expected = CONFIG_CASES[case]
    problems = config_check(over)
    assert any(expected in p for p in problems), problems


def test_the_demo_config_passes_the_config_check():
    assert config_check({}) == []


# ------------------------------------------------------------------------ config files (#36)
DEMO_CONFIG = (REPO / "config" / "config.yaml").read_text(encoding="utf-8")
BOMB = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{c}: &{c} [{', '.join(['*' + p] * 10)}]\n"
    for p, c in zip("abcdefgh", "bcdefghi", strict=True)
)  # 10**9 leaves in 9 lines
CONFIG_FILE_CASES = {
    # A second contains_phi would switch PHI routing off; both lines are named.
    "duplicate-key": (
        DEMO_CONFIG.replace(
            "  coral:\n", "  coral:\n    contains_phi: true\n    contains_phi: false\n", 1
        ),
        "the key 'contains_phi' is given twice in one mapping (lines ",
    ),
    "duplicate-top-key": (
        DEMO_CONFIG + "cache_dir: elsewhere\ncache_dir: again\n",
        "cache_dir: the key",
    ),
    "python-tag": (
        DEMO_CONFIG + "limit: !!python/name:os.system\n",
        "the tag 'tag:yaml.org,2002:python/name:os.system' is not allowed",
    ),
    "custom-tag": (DEMO_CONFIG + "limit: !secret 3\n", "the tag '!secret' is not allowed"),
    "alias-bomb": (BOMB, "more than the 200,000 a config may hold"),
    "too-large": (
        DEMO_CONFIG + "#" * 1_100_000 + "\n",
        "more than the 1,000,000 a config file may have",
    ),
    "json-duplicate-key": (
        '{"limit": 2,\n\t"limit": 3}',
        "the key 'limit' is given twice in one object",
    ),
    "not-a-mapping": ("- a\n- b\n", "holds a mapping of keys at its top level"),
}


@pytest.mark.parametrize("case", sorted(CONFIG_FILE_CASES))
def test_a_bad_config_file_is_refused_before_validation(tmp_path, case):
    """What rules/common.smk runs on every config file first (oncoeval.config.files): the file, the
    key and the lines are named, quickly, and nothing of it is used."""
    import time

    text, expected = CONFIG_FILE_CASES[case]
    path = tmp_path / "bad.yaml"
    path.write_text(text, encoding="utf-8")
    start = time.monotonic()
    (problem,) = oc.config_file_problems([path])
    assert time.monotonic() - start < 5
    assert str(path) in problem and expected in problem, problem


def test_the_demo_config_files_read_strictly():
    configs = sorted((REPO / "config").glob("*.yaml"))
    configs = [p for p in configs if "schema" not in p.name]
    assert configs and oc.config_file_problems(configs) == []


def test_home_and_variables_in_paths_are_expanded_and_an_unset_one_refused(monkeypatch):
    from oncoeval.workflow import dag as run_wf

    monkeypatch.setenv("ONCOEVAL_TEST_SCRATCH", "/tmp/oncoeval-scratch")
    monkeypatch.delenv("ONCOEVAL_TEST_UNSET", raising=False)
    cfg = yaml.safe_load(DEMO_CONFIG)
    cfg.update(cache_dir="~/oncoeval-cache", model_store="$ONCOEVAL_TEST_SCRATCH/models")
    assert run_wf.settle_config(cfg) == []
    assert cfg["cache_dir"] == str(Path.home() / "oncoeval-cache")
    assert cfg["model_store"] == "/tmp/oncoeval-scratch/models"
    cfg = yaml.safe_load(DEMO_CONFIG)
    cfg["cache_dir"] = "${ONCOEVAL_TEST_UNSET}/cache"
    problems = run_wf.settle_config(cfg)
    assert any(p.startswith("cache_dir:") and "'ONCOEVAL_TEST_UNSET'" in p for p in problems)


def test_a_verifier_example_scored_true_stops_the_config_check(tmp_path):
    """A method file is checked with the data, before the evaluated models are called (not at
    the verifier's requests, after them)."""
    src = REPO / "resources" / "method" / "cancer_myth" / "verifier_examples.json"
    examples = json.loads(src.read_text(encoding="utf-8"))
    examples[1]["score"]["Sharpness"] = True
    path = tmp_path / "verifier_examples.json"
    path.write_text(json.dumps(examples), encoding="utf-8")
    problems = config_check({"studies": {"cancer_myth": {"verifier_examples": str(path)}}})
    assert any(
        p.startswith("studies.cancer_myth.verifier_examples:")
        and "example 2" in p
        and "got True" in p
        for p in problems
    ), problems


# ------------------------------------------------------------------------ accepted variants (#24)
def test_crlf_cells_are_normalised_and_reach_no_prompt(inputs: Inputs):
    """A spreadsheet's CRLF line ends in a profile cell read as LF: no \\r in any profile."""
    path = inputs / "profiles.csv"
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    se_prepare(inputs)
    text = (inputs.out / "profiles.jsonl").read_text(encoding="utf-8")
    assert "\\r" not in text and "\\n" in text  # JSON-escaped line ends: LF only
    assert len(lines_of(inputs.out / "profiles.jsonl")) == 6


def test_a_template_saved_with_crlf_puts_no_carriage_return_in_a_prompt(inputs: Inputs):
    path = inputs / "prompts" / "side_effects" / "ff.txt"
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    se_requests(inputs)
    requests = read_requests(inputs.out / "lists.jsonl")
    assert requests and all("\r" not in m["content"] for r in requests for m in r.messages)


def test_a_reference_term_in_nfc_nfd_or_with_a_zero_width_space_is_one_term(inputs: Inputs):
    """n_ref counts distinct terms: "nausée" in NFC, in NFD and with a zero-width space is one."""
    se_prepare(inputs)
    before = pd.read_csv(inputs.out / "reference.tsv", sep="\t")
    n_apbi = int((before["site"] == "APBI").sum())
    for old in inputs.outputs():
        old.unlink()
    spellings = ["naus\u00e9e", "nause\u0301e", "naus\u00e9\u200be"]
    rows = "".join(f"APBI\t{s}\tshort\tcommon\n" for s in spellings)
    append_bytes(inputs / "reference.tsv", rows.encode("utf-8"))
    se_prepare(inputs)
    after = pd.read_csv(inputs.out / "reference.tsv", sep="\t")
    assert int((after["site"] == "APBI").sum()) == n_apbi + 1


def test_a_metadata_doc_id_with_a_zero_width_space_finds_its_note(inputs: Inputs):
    from oncoeval.studies.coral.prepare import read_metadata

    path = inputs / "metadata.tsv"
    edit(path, "breast_02\t", "breast_\u200b02\t")
    meta = read_metadata(path, ["breast_01", "breast_02", "pancreas_01", "pancreas_02"])
    assert meta.set_index("doc_id").loc["breast_02", "race_ethnicity"] == "Asian"


def test_a_surrogate_pair_and_a_100_digit_integer_are_kept(inputs: Inputs):
    """Only what cannot be text or a number is refused: an emoji written as a surrogate-pair
    escape, and an integer within the limit, read as they are."""
    first_text(inputs / Q, "example_question", '"Is \\ud83d\\ude00 ok?"')
    edit_json(inputs / Q, lambda d: d[0].update(raw_QID=int("9" * 100)))
    cm_prepare(inputs)
    item = json.loads(lines_of(inputs.out / "items.jsonl")[0])
    assert item["question"] == "Is \U0001f600 ok?" and item["question_id"] == "9" * 100


def test_prepare_is_quick_on_a_profile_at_the_cell_limit(inputs: Inputs):
    """A profile of 20,000 characters (the cell limit) prepares in seconds, not minutes."""
    import time

    from oncoeval.core.inputs import FIELD_LIMITS

    filler = "Long history. " * (FIELD_LIMITS["cell"] // 15)
    row = f'demo99,"{filler}radiation therapy","{filler}radiation (APBI) therapy"\n'
    append_bytes(inputs / "profiles.csv", row.encode())
    start = time.monotonic()
    se_prepare(inputs)
    assert time.monotonic() - start < 20
    assert len(lines_of(inputs.out / "profiles.jsonl")) == 7


def _script_log(tmp_path, error: str) -> tuple[int, str]:
    """(exit status, log) of a job script that sets up its log and raises ``error``."""
    import subprocess
    import sys

    log = tmp_path / "job.log"
    script = (
        "from oncoeval.core.io import setup_script_logging\n"
        "from oncoeval.core.errors import InputError\n"
        f"setup_script_logging({str(log)!r})\n"
        f"raise {error}\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True)
    return proc.returncode, log.read_text()


def test_a_clean_stop_prints_the_message_and_a_defect_its_traceback(tmp_path):
    """A script's uncaught InputError ends it with its message only (Snakemake shows the log of
    a failed job: a traceback there reads as a crash); any other error keeps its traceback."""
    rc, log = _script_log(tmp_path, "InputError('d.csv', 'row 3', 'empty profile')")
    assert (rc, log.strip()) == (1, "InputError: d.csv, row 3: empty profile")
    rc, log = _script_log(tmp_path, "ValueError('a defect')")
    assert rc == 1 and "Traceback" in log and "ValueError: a defect" in log
