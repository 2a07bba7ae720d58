"""The coral workflow on notes laid out as the released corpus, with a model whose calls all fail.

The notes carry pre-annotations (PROBLEM, TREATMENT, TEST, SectionAnnotate types, absent from
annotation.conf) and hpi_start/hpi_end, ap_start/ap_end section markers (two HPI pairs in one
note). The model is the real ``openai`` client talking to a local OpenAI-compatible server that
answers 401 to every call (wrong key); the run accepts failed calls (``max_failed_share: 1``).
"""

from __future__ import annotations

import json
import secrets

import pandas as pd
import pytest

from tests.conftest import other_studies_off, run_snakemake, write_config
from tests.fake_openai_server import FakeOpenAIServer

KEY_ENV = "ONCOEVAL_TEST_KEY_" + secrets.token_hex(4).upper()


def entity(ent_id: str, etype: str, text: str, surface: str, nth: int = 1) -> str:
    start = -1
    for _ in range(nth):
        start = text.index(surface, start + 1)
    return f"{ent_id}\t{etype} {start} {start + len(surface)}\t{surface}"


def write_corpus(root):
    note1 = (
        "HISTORY: Breast lump since 03/2021.\n"
        "Exam: normal.\n"
        "HISTORY cont: Mammogram on 04/02/2021.\n"
        "PLAN: Start letrozole.\n"
    )
    ann1 = [
        entity("T1", "hpi_start", note1, "HISTORY"),
        entity("T2", "hpi_end", note1, "03/2021"),
        entity("T3", "hpi_start", note1, "HISTORY", 2),
        entity("T4", "hpi_end", note1, "04/02/2021"),
        entity("T5", "ap_start", note1, "PLAN"),
        entity("T6", "ap_end", note1, "letrozole"),
        entity("T7", "Symptom", note1, "lump"),
        entity("T8", "Datetime", note1, "03/2021"),
        entity("T9", "Radiology", note1, "Mammogram"),
        entity("T10", "MedicationName", note1, "letrozole"),
        entity("T11", "PROBLEM", note1, "Breast lump"),
        entity("T12", "TEST", note1, "Mammogram"),
        entity("T13", "TREATMENT", note1, "letrozole"),
        entity("T14", "SectionAnnotate", note1, "HISTORY: Breast lump since 03/2021."),
        "R1\tHappensAtOnDuring Arg1:T7 Arg2:T8",
        "R2\tTemporal Arg1:T11 Arg2:T12",
        "A1\tNegationModalityVal T10 planned_in_future",
    ]
    note2 = "HPI: Jaundice in June.\nA&P: Gemcitabine continues.\n"
    ann2 = [
        entity("T1", "hpi_start", note2, "HPI"),
        entity("T2", "hpi_end", note2, "June"),
        entity("T3", "ap_start", note2, "A&P"),
        entity("T4", "ap_end", note2, "continues"),
        entity("T5", "Symptom", note2, "Jaundice"),
        entity("T6", "MedicationName", note2, "Gemcitabine"),
        entity("T7", "PROBLEM", note2, "Jaundice"),
    ]
    root.mkdir()
    (root.parent / "metadata.tsv").write_text(
        "doc_id\tcancer_type\tgender\nn1\tbreast\tFemale\nn2\tpancreas\tMale\n"
    )
    for name, text, ann in (("n1", note1, ann1), ("n2", note2, ann2)):
        (root / f"{name}.txt").write_text(text)
        (root / f"{name}.ann").write_text("\n".join(ann) + "\n")


def config(notes, url: str, source: str) -> dict:
    return {
        "models": [
            {
                "id": "api",
                "backend": "openai",
                "model": "model-api",
                "base_url": url,
                "api_key_env": KEY_ENV,
                "max_retries": 0,
                "timeout_s": 5,
            }
        ],
        "evaluate": ["api"],
        "max_failed_share": 1,
        "studies": {
            **other_studies_off("coral"),
            "coral": {
                "enabled": True,
                "evaluate": ["api"],  # the demo's own list names its reference replay
                "notes_dir": str(notes),
                "metadata": str(notes.parent / "metadata.tsv"),
                "sections": {"source": source},
                "subtypes": ["symptoms", "radiology", "prescribed_meds"],
                "max_new_tokens": 32,
            },
        },
        "bootstrap": {"n_resamples": 200, "ci": 0.95, "seed": 0},
    }


@pytest.mark.slow
def test_corpus_layout_loads_and_failed_calls_are_never_scored(workdir):
    notes = workdir / "corpus"
    write_corpus(notes)
    with FakeOpenAIServer(api_key="sk-the-right-key") as server:
        # read by headings, the marker types are unknown: prepare stops, naming file and line
        cfg = write_config(workdir, config(notes, server.url, "headings"))
        proc = run_snakemake(
            workdir,
            "-p",
            "results/coral/gold/gold.tsv",
            configfile=cfg,
            env={KEY_ENV: "sk-wrong"},
            check=False,
        )
        assert proc.returncode != 0
        log = (workdir / "logs/coral/prepare.log").read_text()
        assert f"{notes / 'n1.ann'}, line 1: unknown entity type 'hpi_start'" in log
        assert not (workdir / "results/coral/gold/gold.tsv").exists()
        assert server.stats()["total_calls"] == 0  # before any model is called

        cfg = write_config(workdir, config(notes, server.url, "markers"))
        run_snakemake(workdir, configfile=cfg, env={KEY_ENV: "sk-wrong"})
        # the first 401 stops the queue: only the calls already in flight reach the server
        statuses = server.stats()["statuses"]
        assert set(statuses) == {"401"} and 1 <= statuses["401"] <= 2 * 2 * 3

    responses = [
        json.loads(line)
        for line in (workdir / "results/coral/responses/api/extraction.jsonl").open()
    ]
    # every request (notes x sections x subtypes) is answered by the key's refusal
    assert len(responses) == 2 * 2 * 3 and all("401" in r["error"] for r in responses)
    log = (workdir / "logs/coral/prepare.log").read_text()
    assert (
        "skipped pre-annotations (types not in annotation.conf): PROBLEM: 2, SectionAnnotate: 1, "
        "TEST: 1, TREATMENT: 1, relations to pre-annotations: 1" in log
    )
    sections = pd.read_csv(workdir / "results/coral/items/sections.tsv", sep="\t")
    assert sections["found"].all() and (sections["skip_chars"] == 0).all()
    gold = pd.read_csv(workdir / "results/coral/gold/gold.tsv", sep="\t", dtype=str)
    published = gold[gold["view"] == "published"]
    # n1's HPI is its two marker pairs: the lump and the mammogram, not the exam line between
    n1_hpi = published[(published["doc_id"] == "n1") & (published["section"] == "hpi")]
    assert sorted(set(n1_hpi["value"])) == [
        "Mammogram unknown",
        "lump 03/2021",
    ]

    scores = pd.read_csv(workdir / "results/coral/scores/api.tsv", sep="\t")
    assert scores["unscored"].all()
    assert scores[["bleu4", "rouge1", "em_precision", "em_recall", "em_f1"]].isna().all().all()
    for table in ("overall", "by_field", "by_task", "by_cancer_type"):
        t = pd.read_csv(workdir / f"results/coral/tables/{table}.tsv", sep="\t")
        assert len(t) and (t["n_unscored"] == t["n_units"]).all(), table
        assert t[["bleu4", "rouge1", "em_f1"]].isna().all().all(), table
        assert "unscored" in (workdir / f"results/coral/tables/{table}.md").read_text()
    for table in ("kruskal_gender", "kruskal_race"):
        t = pd.read_csv(workdir / f"results/coral/tables/{table}.tsv", sep="\t")
        assert (t["n_unscored"] > 0).all() and t["p_value"].isna().all(), table
    sheet = pd.read_excel(workdir / "results/coral/review/api_sheet.xlsx")
    assert len(sheet) == 0  # failed calls are no answers to review
