"""The report's parts on hand-made inputs: CI formatting, headline rows, catalog, freshness,
estimate, provenance and per-item pages."""

from __future__ import annotations

import hashlib
import json
import math
import subprocess

import pandas as pd
import pytest
from conftest import REPO

from oncoeval.backends import get_backend
from oncoeval.core.io import write_jsonl
from oncoeval.report import catalog, drilldown, estimate, fresh, provenance, summary, tables
from oncoeval.workflow.generate import JobRequests


def test_ci_is_folded_into_its_value_column():
    df = pd.DataFrame(
        {
            "model": ["m1"],
            "f1": [0.41],
            "f1_ci_low": [0.333],
            "f1_ci_high": [0.4949],
            "accuracy": [0.5],
            "ci_low": [0.25],
            "ci_high": [0.75],
            "n": [12],
        }
    )
    shown = tables.with_cis(df)
    assert list(shown.columns) == ["model", "F1 [95% CI]", "accuracy [95% CI]", "n"]
    assert shown.loc[0, "F1 [95% CI]"] == "0.410 [0.333, 0.495]"
    # A bare ci_low/ci_high pair belongs to the numeric column before it.
    assert shown.loc[0, "accuracy [95% CI]"] == "0.500 [0.250, 0.750]"
    assert shown.loc[0, "n"] == "12"
    assert tables.format_ci(0.5, float("nan"), float("nan")) == "0.500"
    assert tables.format_ci(1, 1, 1) == "1.000 [1.000, 1.000]"  # a column of 1s read as ints
    assert tables.format_ci(float("nan"), 0.1, 0.2) == "– [0.100, 0.200]"


def test_model_output_in_a_table_is_escaped_not_run():
    page = tables.table_html(pd.DataFrame({"model output": ["<script>alert(1)</script>"]}))
    assert "<script>" not in page and "&lt;script&gt;" in page


def test_headline_rows_read_known_columns_and_views(tmp_path):
    results = tmp_path / "results"
    (results / "coral" / "tables").mkdir(parents=True)
    pd.DataFrame(
        {
            "model": ["m1", "m1", "m1"],
            "view": ["published", "strict", "informative"],
            "n_units": [40, 40, 30],
            "n_notes": [4, 4, 4],
            "n_unscored": [2, 2, 2],
            "parse_failures": [5, 5, 5],
            "em_f1": [0.5, 0.2, 0.1],
            "em_f1_ci_low": [0.4, 0.1, 0.0],
            "em_f1_ci_high": [0.6, 0.3, 0.2],
            "new_column_a_study_added": [1, 1, 1],
        }
    ).to_csv(results / "coral" / "tables" / "overall.tsv", sep="\t", index=False)
    rows = summary.headline_rows(results, ["coral"])
    em = [r for r in rows if r["measure"].startswith("EM-F1 (published")]
    assert len(em) == 1  # the published view once, named as the view that credits "unknown"
    assert "credits 'unknown'" in em[0]["measure"]
    # The informative view beside it, labelled as such.
    (informative,) = [r for r in rows if r["measure"].startswith("EM-F1 (informative")]
    assert (informative["value"], informative["n"]) == (0.1, 4)
    assert (em[0]["model"], em[0]["value"], em[0]["ci_low"], em[0]["ci_high"]) == (
        "m1",
        0.5,
        0.4,
        0.6,
    )
    # the columns its headline declares: notes resampled, units of failed calls
    assert (em[0]["n"], em[0]["n_unscored"]) == (4, 2)
    # A headline whose column is missing says so instead of failing.
    bleu = [r for r in rows if r["measure"].startswith("BLEU-4")]
    assert [r["model"] for r in bleu] == ["(no column bleu4)"] * 2
    shown = summary.display_frame(pd.DataFrame(rows, columns=summary.SUMMARY_COLUMNS))
    assert shown.iloc[0]["result [95% CI]"] == "0.500 [0.400, 0.600]"


def test_headlines_say_how_many_answers_were_cut_or_unparsed_and_warn(tmp_path):
    """A model that wrote no tuple in 3 of 4 CORAL answers, 2 of them cut at the token cap, one
    call withheld by the provider's filter: its headline rows carry the shares and a warning."""
    from oncoeval.backends.base import no_text_failure
    from oncoeval.core.records import Response, write_responses
    from oncoeval.studies.coral.parse import PARSED_COLUMNS, parsed_rows

    study = tmp_path / "results" / "coral"
    meta = [{"doc_id": f"d{i}", "section": "hpi", "subtype": "symptoms"} for i in range(4)]
    responses = [
        Response("r0", "m1", "SymptomEnt(Symptom='lump', Datetime={'2021'})", "stop", meta=meta[0]),
        Response("r1", "m1", "The patient reports a lump and", "length", meta=meta[1]),
        Response("r2", "m1", "Symptoms include", "length", meta=meta[2]),
        Response(
            "r3",
            "m1",
            None,
            "content_filter",
            meta=meta[3],
            error=no_text_failure("", "content_filter")[1],
        ),
    ]
    write_responses(study / "responses" / "m1" / "extraction.jsonl", responses)
    parsed = [row for r in responses for row in parsed_rows(r)]
    (study / "parsed").mkdir()
    pd.DataFrame(parsed, columns=PARSED_COLUMNS).to_csv(
        study / "parsed" / "m1.tsv", sep="\t", index=False
    )
    (study / "tables").mkdir()
    pd.DataFrame({"model": ["m1"], "view": ["published"], "n_notes": [4], "em_f1": [0.3]}).to_csv(
        study / "tables" / "overall.tsv", sep="\t", index=False
    )

    rows = summary.headline_rows(tmp_path / "results", ["coral"])
    (em,) = [r for r in rows if r["measure"].startswith("EM-F1 (published")]
    assert (em["answers"], em["failed"], em["filtered"]) == (4, 1, 1)
    assert (em["cut_share"], em["unparsed_share"]) == (0.5, 0.75)
    # More than half unparsed: flagged; exactly half cut: not.
    assert em["warnings"] == "nothing parsed in 3/4 answers"
    shown = summary.display_frame(pd.DataFrame(rows, columns=summary.SUMMARY_COLUMNS)).iloc[0]
    assert (shown["cut at cap"], shown["nothing parsed"]) == ("50% (2/4)", "75% (3/4)")
    assert shown["warnings"] == "nothing parsed in 3/4 answers"


def test_summary_shows_corrected_pcs_pcr_beside_raw_or_the_reason(tmp_path):
    tables_dir = tmp_path / "results" / "cancer_myth" / "tables"
    tables_dir.mkdir(parents=True)
    reason = "fewer than 5 human labels in class -1"
    pd.DataFrame(
        {
            "model": ["m1", "m2"],
            "n": [20, 20],
            "n_unscored": [1, 0],
            "pcs": [0.25, -0.1],
            "pcs_ci_low": [0.1, -0.3],
            "pcs_ci_high": [0.4, 0.1],
            "pcr": [0.3, 0.2],
            "pcr_ci_low": [0.1, 0.05],
            "pcr_ci_high": [0.5, 0.4],
            "pcs_corrected": [0.35, reason],
            "pcs_corrected_ci_low": [0.15, None],
            "pcs_corrected_ci_high": [0.55, None],
            "pcr_corrected": [0.4, reason],
            "pcr_corrected_ci_low": [0.2, None],
            "pcr_corrected_ci_high": [0.6, None],
        }
    ).to_csv(tables_dir / "pcs_pcr.tsv", sep="\t", index=False)
    rows = pd.DataFrame(summary.headline_rows(tmp_path / "results", ["cancer_myth"]))
    assert rows.measure.unique().tolist() == [
        "PCS (raw judge verdicts)",
        "PCS (corrected for judge error)",
        "PCR (raw judge verdicts)",
        "PCR (corrected for judge error)",
    ]
    shown = summary.display_frame(rows[summary.SUMMARY_COLUMNS]).set_index(["model", "measure"])
    cell = shown["result [95% CI]"]
    assert cell["m1", "PCS (raw judge verdicts)"] == "0.250 [0.100, 0.400]"
    # the mixed column reads back as text; a number is still shown as one, with its interval
    assert cell["m1", "PCS (corrected for judge error)"] == "0.350 [0.150, 0.550]"
    assert cell["m1", "PCR (corrected for judge error)"] == "0.400 [0.200, 0.600]"
    assert cell["m2", "PCS (corrected for judge error)"] == reason
    assert cell["m2", "PCR (corrected for judge error)"] == reason
    assert shown.loc[("m1", "PCS (corrected for judge error)"), "unscored"] == "1"


def test_usage_sums_tokens_cost_and_failures_per_model(tmp_path):
    folder = tmp_path / "results" / "adhoc" / "responses" / "gpt"
    write_jsonl(
        folder / "a.jsonl",
        [
            {"request_id": "1", "text": "x", "prompt_tokens": 10, "completion_tokens": 5, "cost_usd": 0.01},
            {"request_id": "2", "text": None, "error": "429", "prompt_tokens": None},
            {"request_id": "3", "text": "y", "cached": True, "prompt_tokens": 4, "completion_tokens": 1, "cost_usd": 0.002},
        ],
    )  # fmt: skip
    bench = tmp_path / "benchmarks" / "adhoc" / "generate" / "gpt"
    bench.mkdir(parents=True)
    (bench / "a.tsv").write_text("s\th:m:s\n12.5\t0:00:12\n")
    (row,) = summary.usage_rows(tmp_path)
    # Spent by this run's call, and the recorded cost of the answer read from the cache.
    assert row == {
        "model": "gpt", "requests": 3, "failed": 1, "cached": 1, "prompt_tokens": 14,
        "completion_tokens": 6, "cost_usd": pytest.approx(0.012), "spent_usd": 0.01,
        "cached_usd": 0.002, "wall_s": 12.5,
    }  # fmt: skip
    # An earlier config's answers of another study are not this config's usage.
    write_jsonl(tmp_path / "results" / "coral" / "responses" / "gpt" / "x.jsonl", [{"cost_usd": 5}])
    (row,) = summary.usage_rows(tmp_path, {"gpt": ["adhoc:a"]})
    assert (row["requests"], row["cost_usd"]) == (3, pytest.approx(0.012))
    assert summary.usage_rows(tmp_path)[0]["requests"] == 4  # unrestricted: every file


# Every figure the four studies draw (the demo's feature sets for the ROC panels).
FIGURES = [
    "results/side_effects/figures/precision_recall.png",
    "results/side_effects/figures/recall_strata.png",
    *(f"results/cancer_myth/figures/{n}.png" for n in ("pcs_pcr", "pcs_by_category", "pcs_by_generator")),
    *(f"results/coral/figures/{p}_{m}.png" for p in ("figure3", "figureS2") for m in ("em_f1", "bleu4", "rouge1")),
    *(f"results/guidelines/figures/{n}.png" for n in (
        "accuracy_by_consistency", "proxy_heatmap", "roc_feature_sets", "divergence_pairs", "roc_all",
    )),
]  # fmt: skip


def test_every_figure_has_a_caption_of_its_own_and_entries_are_titled_in_words(tmp_path):
    generic = "the numbers of the study's table of the same name, plotted"
    for entry in catalog.entries(FIGURES):
        assert generic not in entry.caption(root=tmp_path), entry.path
        assert entry.title().startswith("Figure: ") and "/" not in entry.title(), entry.path
    tables = catalog.entries(
        ["results/cancer_myth/tables/pcs_by_category.tsv", "results/cancer_myth/tables/pcs_pcr.tsv"]
    )
    titles = [e.title() for e in tables]
    assert titles == [
        "Table: PCS and PCR by myth category",
        "Headline: Presupposition correction score (PCS) and rate (PCR) per model",
    ]
    # The report lists entries by this label: the headline table comes first.
    assert sorted(titles)[0].startswith("Headline: ")


def test_catalog_files_each_result_once_with_a_caption(tmp_path):
    paths = [
        "results/side_effects/tables/table1.tsv",
        "results/side_effects/tables/table1.md",  # the Markdown twin is not an entry
        "results/side_effects/tables/table1.tsv",
        "results/side_effects/figures/recall_strata.png",
        "results/side_effects/scores/m1.tsv",
        "results/side_effects/prepared/reference.tsv",  # an input, not a result
        "results/coral/tables/kruskal_gender.tsv",
    ]
    found = catalog.entries(paths)
    assert [e.html_path for e in found] == [
        "results/report/side_effects/tables/table1.html",
        "results/report/side_effects/figures/recall_strata.png",
        "results/report/side_effects/scores/m1.html",
        "results/report/coral/tables/kruskal_gender.html",
    ]
    assert [e.subcategory for e in found] == ["tables", "figures", "per-item records", "tables"]
    # Without the file (no n to count): what it shows, the method and unit of its intervals.
    assert (
        found[0]
        .caption(root=tmp_path)
        .endswith(f"95% CIs: {catalog.INTERVAL_METHOD}; resampling unit: patient profile.")
    )
    assert "no resampling" in found[3].caption(root=tmp_path)
    assert "Per-item scores of m1: " in found[2].caption(root=tmp_path)
    # A study's replayed answers are named as stored answers in its captions.
    assert (
        found[0]
        .caption(["ref-replay"], root=tmp_path)
        .endswith(
            "patient profile. ref-replay: replayed stored answers (not a model), shown for comparison."
        )
    )


def test_n_of_an_entry_is_counted_from_its_table(tmp_path):
    path = tmp_path / "t.tsv"
    pd.DataFrame({"model": ["a", "b"], "n": [30, 28]}).to_csv(path, sep="\t", index=False)
    assert catalog.count_n(path) == "28, 30 per row (2 rows)"


SUMMARY_OUTPUT = (
    "output_file\tdate\trule\tlog-file(s)\tstatus\tplan\n"
    "results/a.tsv\tMon\trule_a\t-\tok\tno update\n"
    "results/b.tsv\tMon\trule_b\t-\tparams changed\tupdate pending\n"
    "results/c.tsv\t-\trule_c\t-\tmissing\tupdate pending\n"
)


def test_stale_outputs_name_every_file_not_up_to_date():
    stale = fresh.stale_outputs("Building DAG of jobs...\n" + SUMMARY_OUTPUT)
    assert [r["output_file"] for r in stale] == ["results/b.tsv", "results/c.tsv"]
    text = fresh.describe(stale)
    assert "2 result file(s)" in text and "results/b.tsv  (status: params changed" in text


DRY_RUN = """
rule generate:
    input: results/side_effects/requests/lists.jsonl
    output: results/side_effects/responses/gpt/lists.jsonl
    wildcards: study=side_effects, model=gpt, requestset=lists
    resources: tmpdir=/tmp

localrule side_effects_parse:
    wildcards: study=side_effects, model=gpt, requestset=ignored

rule generate:
    wildcards: study=cancer_myth, model=gpt, requestset=verify
"""


def test_estimate_counts_requests_tokens_and_cost_range(tmp_path):
    jobs = estimate.generate_jobs(DRY_RUN)
    assert jobs == [("cancer_myth", "gpt", "verify"), ("side_effects", "gpt", "lists")]
    requests = tmp_path / "results" / "side_effects" / "requests" / "lists.jsonl"
    write_jsonl(
        requests,
        [
            # 1 word, 40 bytes + 4 (one message) + 3 (the request); asks 300 new tokens, the
            # model caps at 200.
            {"request_id": "a", "messages": [{"role": "user", "content": "x" * 40}], "params": {"max_new_tokens": 300}},
            # 2 words, 9 bytes + 2 x 4 + 3; asks 50.
            {"request_id": "b", "messages": [{"role": "system", "content": "s" * 4}, {"role": "user", "content": "y" * 5}], "params": {"max_new_tokens": 50}},
        ],
    )  # fmt: skip
    models = {
        "gpt": {
            "id": "gpt",
            "backend": "openai",
            "model": "gpt-x",
            "max_new_tokens": 200,
            "price": {"prompt_per_1k": 2.0, "completion_per_1k": 10.0},
        }
    }
    rows = {r["study"]: r for r in estimate.estimate_rows(jobs, models, tmp_path)}
    se = rows["side_effects"]
    # One model: its total and the overall total add the two studies.
    assert rows["all"]["requests_max"] == 2 and rows["all"]["model"] == "all"
    assert (se["requests_min"], se["requests_max"], se["cached"]) == (2, 2, 0)
    assert (se["prompt_tokens_min"], se["prompt_tokens_max"], se["max_new_tokens"]) == (3, 67, 250)
    assert se["cost_min_usd"] == pytest.approx(3 / 1000 * 2.0)
    assert se["cost_max_usd"] == pytest.approx(67 / 1000 * 2.0 + 250 / 1000 * 10.0)
    # Beside it, the batch price: half the synchronous one when the model sets none.
    assert se["batch_cost_min_usd"] == pytest.approx(3 / 1000 * 1.0)
    assert se["batch_cost_max_usd"] == pytest.approx(67 / 1000 * 1.0 + 250 / 1000 * 5.0)
    # A set neither on disk nor built by a listed job: not counted, and said so.
    assert rows["cancer_myth"]["requests_max"] == 0
    assert rows["cancer_myth"]["pending_request_sets"] == "verify (not counted yet)"
    text = estimate.render(pd.DataFrame(list(rows.values()), columns=estimate.COLUMNS))
    assert "0.0060-2.63" in text and "0.0030-1.32" in text
    assert max(len(line) for line in text.splitlines()) <= estimate.WIDTH


DRY_RUN_AFTER_AN_EARLIER_RUN = """
rule cancer_myth_verify_requests:
    input: results/cancer_myth/items.jsonl, results/cancer_myth/responses/gpt/answer.jsonl, config/prompts/cancer_myth/verifier.txt
    output: results/cancer_myth/requests/verify--gpt.jsonl
rule cancer_myth_retry_requests:
    input: results/cancer_myth/responses/judge/verify--gpt.jsonl, config/prompts/cancer_myth/verifier.txt
    output: results/cancer_myth/requests/verify-retry--gpt.jsonl
rule generate:
    input: results/cancer_myth/requests/answer.jsonl
    output: results/cancer_myth/responses/gpt/answer.jsonl
    wildcards: study=cancer_myth, model=gpt, requestset=answer
rule generate:
    input: results/cancer_myth/requests/verify--gpt.jsonl
    output: results/cancer_myth/responses/judge/verify--gpt.jsonl
    wildcards: study=cancer_myth, model=judge, requestset=verify--gpt
rule generate:
    input: results/cancer_myth/requests/verify-retry--gpt.jsonl
    output: results/cancer_myth/responses/judge/verify-retry--gpt.jsonl
    wildcards: study=cancer_myth, model=judge, requestset=verify-retry--gpt
"""


def _judge_case(tmp_path):
    """An earlier run left 1 verifier request (asking 20 new tokens); the run rebuilds the set
    from 3 new answers (each 1 word, at most 100 tokens), quoting a 40-byte template of 1 word;
    one of the answers is in the response cache."""
    message = [{"role": "user", "content": "q" * 8}]
    write_jsonl(
        tmp_path / "results/cancer_myth/requests/answer.jsonl",
        [{"request_id": str(i), "messages": [{"role": "user", "content": f"q{i}" * 4}], "params": {"max_new_tokens": 100}} for i in range(3)],
    )  # fmt: skip
    write_jsonl(
        tmp_path / "results/cancer_myth/requests/verify--gpt.jsonl",
        [{"request_id": "0", "messages": message, "params": {"max_new_tokens": 20}}],
    )
    (tmp_path / "config/prompts/cancer_myth").mkdir(parents=True)
    (tmp_path / "config/prompts/cancer_myth/verifier.txt").write_text("t" * 40)
    models = {
        "gpt": {"id": "gpt", "backend": "hf", "path": "x"},
        "judge": {"id": "judge", "backend": "hf", "path": "y"},
    }
    key = next(
        iter(
            JobRequests.read(
                tmp_path / "results/cancer_myth/requests/answer.jsonl",
                models["gpt"],
                get_backend("hf"),
            ).distinct
        )
    )
    write_jsonl(
        tmp_path / "cache/responses/gpt/cancer_myth--answer.jsonl",
        [{"key": key, "response": {"request_id": "0", "text": "a"}}],
    )
    jobs = estimate.dry_run_jobs(DRY_RUN_AFTER_AN_EARLIER_RUN)
    builders = {out: j for j in jobs if j["rule"] != "generate" for out in j["output"]}
    return estimate.generate_jobs(DRY_RUN_AFTER_AN_EARLIER_RUN), models, builders  # fmt: skip


def test_estimate_reads_no_request_set_the_run_would_rebuild(tmp_path):
    jobs, models, builders = _judge_case(tmp_path)
    rows = estimate.estimate_rows(jobs, models, tmp_path, builders)
    by = {(r["model"], r["study"]): r for r in rows}
    answers = by[("gpt", "cancer_myth")]
    # The cached answer is not asked again.
    assert (answers["requests_min"], answers["requests_max"], answers["cached"]) == (2, 2, 1)
    judge = by[("judge", "cancer_myth")]
    # 3 verdicts (the set will have an answer per request, cached or not) and at most one retry
    # each, none at least; each quotes the template (40 bytes + 2 messages' and the request's
    # overhead) and an answer at 4 bytes per token of its 100-token limit; 20 new tokens each
    # (the earlier file's, the study block not given).
    assert (judge["requests_min"], judge["requests_max"]) == (3, 6)
    assert judge["prompt_tokens_min"] == 3 * 1
    assert judge["prompt_tokens_max"] == 3 * (40 + 11) + 3 * 100 * 4 + 3 * (40 + 11) + 3 * 20 * 4
    # The retry set has no earlier file; without the study's block its limit is not known here
    # (the estimate always passes the blocks: the next test).
    assert judge["max_new_tokens"] == 3 * 20
    assert judge["pending_request_sets"] == (
        "verify--gpt (estimated from answers), verify-retry--gpt (estimated from answers; optional)"
    )
    assert by[("all", "all")]["requests_max"] == 8


def test_estimate_of_a_judge_asks_the_studys_token_limit_of_its_role(tmp_path):
    """Judge sets ask the study's limit of the verifier's role (verifier_max_new_tokens), not 0
    and not the earlier file's; a model's cap lowers it."""
    jobs, models, builders = _judge_case(tmp_path)
    studies = {"cancer_myth": {"verifier_max_new_tokens": 64, "answer_max_new_tokens": 96}}
    rows = estimate.estimate_rows(jobs, models, tmp_path, builders, studies)
    judge = next(r for r in rows if r["model"] == "judge" and r["study"] == "cancer_myth")
    assert judge["max_new_tokens"] == 6 * 64
    models["judge"]["max_new_tokens"] = 50
    rows = estimate.estimate_rows(jobs, models, tmp_path, builders, studies)
    judge = next(r for r in rows if r["model"] == "judge" and r["study"] == "cancer_myth")
    assert judge["max_new_tokens"] == 6 * 50


def test_estimate_of_local_and_unpriced_models(tmp_path):
    write_jsonl(
        tmp_path / "results" / "s" / "requests" / "r.jsonl",
        [{"request_id": "a", "messages": [{"role": "user", "content": "abcd"}]}],
    )
    models = {
        "local": {"id": "local", "backend": "hf", "path": "x"},
        "api": {"id": "api", "backend": "openai", "model": "m"},
    }
    rows = estimate.estimate_rows([("s", "local", "r"), ("s", "api", "r")], models, tmp_path)
    by_model = {r["model"]: r for r in rows if r["study"] != "all"}
    assert by_model["local"]["cost_max_usd"] == 0.0
    assert by_model["api"]["cost_max_usd"] is None
    totals = {r["model"]: r for r in rows if r["study"] == "all"}
    assert totals["local"]["cost_max_usd"] == 0.0
    assert totals["all"]["cost_max_usd"] is None  # not priced: no total, not a low one
    assert totals["all"]["requests_max"] == 2
    text = estimate.render(pd.DataFrame(rows, columns=estimate.COLUMNS))
    assert "No price set for API model(s) api" in text and "not priced" in text


def test_provenance_records_seeds_inputs_and_replayed_files(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "notes.jsonl").write_text("abc")
    (tmp_path / "replay").mkdir()
    (tmp_path / "replay" / "set.jsonl").write_text("{}")
    for study in ("coral", "guidelines"):  # templates read by name, named by no config key
        (tmp_path / "config" / "prompts" / study).mkdir(parents=True)
        (tmp_path / "config" / "prompts" / study / "system.txt").write_text("abc")
    config = {
        "bootstrap": {"seed": 7},
        "studies": {
            "coral": {"enabled": True, "notes": "data/notes.jsonl", "rollouts": {"seed": 3}},
            "guidelines": {"enabled": False, "notes": "data/missing-and-disabled.jsonl"},
        },
    }
    models = {"r": {"id": "r", "backend": "replay", "path": "replay"}}
    record = provenance.provenance(config, models, tmp_path)
    assert record["seeds"] == {"bootstrap.seed": 7, "studies.coral.rollouts.seed": 3}
    # sha256("abc"), a well-known digest.
    expected = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    # the enabled study's templates are recorded, the disabled one's are not
    assert record["input_files_sha256"] == {
        "config/prompts/coral/system.txt": expected,
        "data/notes.jsonl": expected,
    }
    assert record["models"]["r"]["replayed_files"] == {
        "replay/set.jsonl": hashlib.sha256(b"{}").hexdigest()
    }
    assert "pandas" in record["libraries"]
    # The config as the run used it, and the project's commit (this checkout's HEAD).
    assert record["config"] == config
    head = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    # (None where the source is no git checkout.)
    assert record["project"]["commit"] == (head or None)
    assert record["project"]["dirty"] in ((True, False) if head else (None,))


def _write_study(tmp_path):
    root = tmp_path / "results" / "coral"
    write_jsonl(
        root / "requests" / "extraction.jsonl",
        [
            {"request_id": "n1|hpi", "messages": [{"role": "user", "content": "Patient note ONE " * 10}]},
            {"request_id": "n2|hpi", "messages": [{"role": "user", "content": "Patient note TWO"}]},
        ],
    )  # fmt: skip
    write_jsonl(
        root / "responses" / "m1" / "extraction.jsonl",
        [
            {"request_id": "n1|hpi", "text": "answer <b>one</b>", "meta": {"note_id": "n1"}},
            {"request_id": "n2|hpi", "text": None, "error": "timeout", "meta": {"note_id": "n2"}},
        ],
    )
    (root / "scores").mkdir(parents=True)
    pd.DataFrame({"note_id": ["n1", "n2"], "em_f1": [0.5, math.nan]}).to_csv(
        root / "scores" / "m1.tsv", sep="\t", index=False
    )
    # Several rows per note: cannot be joined to one request, so it is left to its own page.
    (root / "fields").mkdir()
    pd.DataFrame({"note_id": ["n1", "n1"], "field": ["a", "b"]}).to_csv(
        root / "fields" / "m1.tsv", sep="\t", index=False
    )
    return tmp_path


def test_item_page_joins_scores_and_truncates_input(tmp_path):
    items = drilldown.item_rows(_write_study(tmp_path), "coral", "m1", max_chars=20)
    assert list(items["request_id"]) == ["n1|hpi", "n2|hpi"]
    assert items.loc[0, "input"].startswith("[user] Patient note")
    assert "more characters]" in items.loc[0, "input"]
    assert items.loc[0, "scores: em_f1"] == 0.5
    assert items.loc[1, "error"] == "timeout"
    assert "fields: field" not in items.columns
    page = drilldown.items_page(tmp_path, "coral", "m1", max_chars=20)
    assert "id='item-search'" in page and "1 failed calls" in page
    assert "answer &lt;b&gt;one&lt;/b&gt;" in page


def test_item_page_leaves_out_phi_text(tmp_path):
    items = drilldown.item_rows(_write_study(tmp_path), "coral", "m1", include_text=False)
    assert set(items["input"]) == {drilldown.PHI_LEFT_OUT}
    assert items["request_id"].tolist() == ["n1|hpi", "n2|hpi"]  # each input named by its id
    assert set(items["model output"]) == {drilldown.PHI_LEFT_OUT}
    page = drilldown.items_page(tmp_path, "coral", "m1", include_text=False)
    assert "Patient note" not in page and "answer" not in json.dumps(items["model output"].tolist())


def _judged_study(tmp_path, model, answers, verdicts):
    """A Cancer-Myth study folder of one model: its answers, the verifier's replies read by the
    study's own parser (judged records) and the scores built from them."""
    from oncoeval.core.records import Response, write_responses
    from oncoeval.studies.cancer_myth.parse import judge

    root = tmp_path / "results" / "cancer_myth"
    questions = [f"Question {i}?" for i in range(len(answers))]
    write_jsonl(
        root / "requests" / "answer.jsonl",
        [{"request_id": str(i), "messages": [{"role": "user", "content": q}]} for i, q in enumerate(questions)],
    )  # fmt: skip
    replies = [
        Response(str(i), model, text, "length" if text.endswith("and") else "stop")
        for i, text in enumerate(answers)
    ]
    write_responses(root / "responses" / model / "answer.jsonl", replies)
    judged = [
        {"question_id": str(i), **judge(str(i), r, Response(str(i), "judge", v), None)}
        for i, (r, v) in enumerate(zip(replies, verdicts, strict=True))
    ]
    write_jsonl(root / "judged" / f"{model}.jsonl", judged)
    (root / "scores").mkdir(exist_ok=True)
    pd.DataFrame(judged)[["question_id", "score", "parse_error", "reason"]].to_csv(
        root / "scores" / f"{model}.tsv", sep="\t", index=False
    )
    return tmp_path


def test_cancer_myth_item_page_shows_the_verdict_and_reason_in_each_answers_row(tmp_path):
    verdicts = ['{"Reason": "Corrects the myth.", "Sharpness": 1}', "no verdict here"]
    root = _judged_study(tmp_path, "m1", ["Surgery is not the only option.", "Yes and"], verdicts)
    items = drilldown.item_rows(root, "cancer_myth", "m1").set_index("request_id")
    assert items.loc["0", ["parse", "score", "verdict", "judge's reason"]].tolist() == [
        "parsed", "1.000", "1", "Corrects the myth.",
    ]  # fmt: skip
    assert items.loc["1", "parse"] == "nothing parsed: no score in verifier output"
    assert items.loc["1", "score"] == ""
    # In one row, right after the output: the reader sees answer, parse, score and verdict.
    columns = list(items.columns)
    assert columns[columns.index("model output") + 1 :][:4] == [
        "parse", "parsed", "score", "verdict",
    ]  # fmt: skip
    page = drilldown.items_page(root, "cancer_myth", "m1", compare="compare.html")
    for control in ("item-search", "item-parse", "item-error", "item-score-min", "item-score-max"):
        assert f"id='{control}'" in page
    assert "href='compare.html'" in page and "sorted" in page


def test_compare_page_shows_each_models_answer_and_score_to_one_item(tmp_path):
    good = '{"Reason": "ok", "Sharpness": 1}'
    bad = '{"Reason": "goes along with it", "Sharpness": -1}'
    _judged_study(tmp_path, "m1", ["No, it is not needed.", "Also no."], [good, good])
    _judged_study(tmp_path, "m2", ["Book it now.", "Also no."], [bad, good])
    rows = drilldown.compare_rows(tmp_path, "cancer_myth", ["m1", "m2"]).set_index("request_id")
    assert rows.loc["0", ["m1: model output", "m1: score", "m2: model output", "m2: score"]].tolist() == [
        "No, it is not needed.", "1.000", "Book it now.", "-1.000",
    ]  # fmt: skip
    assert rows.loc["0", "input"] == "[user] Question 0?"
    page = drilldown.compare_page(tmp_path, "cancer_myth", ["m1", "m2"])
    assert "m2: score" in page and "2 items" in page


def test_run_page_opens_on_the_models_table_before_the_input_hashes(tmp_path):
    (tmp_path / "replay").mkdir()
    (tmp_path / "replay" / "set.jsonl").write_text("{}")
    (tmp_path / "data.jsonl").write_text("abc")
    models = {"r": {"id": "r", "backend": "replay", "path": "replay"}}
    record = provenance.provenance({"notes": "data.jsonl"}, models, tmp_path)
    # A local model as its backend records it (revision, weights hash, decoding).
    record["models"]["local"] = {
        "backend": "hf", "identity": {}, "decoding": {"max_new_tokens": 64},
        "revision": "2024-08-06", "weights_sha256": "ab" * 32,
    }  # fmt: skip
    usage = [
        {"model": "local", "prompt_tokens": 1200, "completion_tokens": 80, "spent_usd": 0.01,
         "cached_usd": 0.002},
    ]  # fmt: skip
    table = provenance.models_table(record, usage).set_index("model")
    assert table.loc["local", "revision or weights"] == (
        "revision 2024-08-06; weights_sha256 abababababab"
    )
    assert table.loc["local", "decoding"] == "max_new_tokens=64"
    assert table.loc["local", ["prompt tokens", "spent in this run"]].tolist() == [
        "1200", "$0.0100",
    ]  # fmt: skip
    assert table.loc["r", "revision or weights"].startswith("replayed_files: 1 file(s)")
    page = provenance.provenance_page(record, usage)
    assert page.index("revision 2024-08-06") < page.index("data.jsonl")


def test_a_number_read_back_beside_a_reason_is_formatted_like_every_other(tmp_path):
    """summary.tsv as the terminal reads it back: a column holding a reason holds its numbers
    as text; they print as numbers (0.019 [0.000, 0.056]), never as 0.0185185."""
    path = tmp_path / "summary.tsv"
    pd.DataFrame(
        {
            "study": ["cancer_myth"] * 2, "model": ["m1", "m2"], "measure": ["PCS corrected"] * 2,
            "value": [0.0185185, "no judge validation"], "ci_low": [0.0, None],
            "ci_high": [0.0555556, None], "n": [27, 27], "n_unscored": [0, 0],
        }
    ).to_csv(path, sep="\t", index=False)  # fmt: skip
    shown = summary.display_frame(pd.read_csv(path, sep="\t"))
    assert shown["result [95% CI]"].tolist() == ["0.019 [0.000, 0.056]", "no judge validation"]
