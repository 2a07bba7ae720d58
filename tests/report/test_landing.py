"""The report's first screen, the end of a run and the marks of a capped or subset run, on
hand-made result files: leader and ties, warnings, the scope sentence, the terminal's last lines
and the quiet report step's error output."""

from __future__ import annotations

import browser
import pandas as pd
import pytest

from oncoeval.report import build, catalog, landing, summary, summary_html, summary_terminal


def _write(path, frame):
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(path, sep="\t", index=False)


def _pcs_table(results, models, values):
    _write(
        results / "cancer_myth" / "tables" / "pcs_pcr.tsv",
        pd.DataFrame(
            {
                "model": models,
                "n": [20] * len(models),
                "n_unscored": [0, 2, 0][: len(models)],
                "pcs": values,
                "pcs_ci_low": [v - 0.1 for v in values],
                "pcs_ci_high": [v + 0.1 for v in values],
                "pcr": values,
                "pcr_ci_low": [v - 0.1 for v in values],
                "pcr_ci_high": [v + 0.1 for v in values],
            }
        ),
    )


def _headlines(results):
    return pd.DataFrame(summary.headline_rows(results, ["cancer_myth"]))


def test_leader_and_standings_come_from_the_leaderboard(tmp_path):
    results = tmp_path / "results"
    _pcs_table(results, ["a", "b", "c"], [0.5, 0.45, 0.1])
    _write(
        results / "cancer_myth" / "tables" / "leaderboard.tsv",
        pd.DataFrame(
            {
                "measure": ["PCS (raw judge verdicts)"] * 3,
                "model": ["a", "b", "c"],
                "value": [0.5, 0.45, 0.1],
                "rank": [1, 2, 3],
                "best": ["a", "a", "a"],  # the leader, named on every row
                "standing": [
                    "leader",
                    "not separable from the leader at this n",
                    "behind the leader",
                ],
            }
        ),
    )
    frame = landing.landing_frame(_headlines(results), results).set_index("model")
    # One measure per study: the first the study declares, PCS from the raw verdicts.
    assert frame["measure"].unique().tolist() == ["PCS (raw judge verdicts)"]
    assert frame["standing"].to_dict() == {
        "a": "leader",
        "b": "not separable from the leader at this n",
        "c": "behind the leader",
    }
    assert frame.loc["a", "value [95% CI]"] == "0.500 [0.400, 0.600]"
    assert frame.loc["b", "n"] == "20 questions"  # in the study's resampling unit
    assert frame.loc["b", "warnings"] == "2 of 22 unscored"


def test_without_a_leaderboard_the_best_value_is_marked_and_said_untested(tmp_path):
    results = tmp_path / "results"
    _pcs_table(results, ["a", "b"], [0.2, 0.6])
    page = landing.landing_html(_headlines(results), results)
    frame = landing.landing_frame(_headlines(results), results).set_index("model")
    assert frame["standing"].to_dict() == {"a": "", "b": landing.UNTESTED_BEST}
    assert "no test says where the others stand against it" in page and "tied" not in page
    # The table, then a link to the full summary and into the study's report entries.
    assert page.index(f'id="{landing.TABLE_ID}"') < page.index("Full summary")
    assert "report/cancer_myth/tables/pcs_pcr.html" in page
    assert catalog.STUDY_TITLES["cancer_myth"] in page  # the category the study link opens


def test_warnings_name_failed_calls_cut_answers_missing_values_and_stored_answers(tmp_path):
    results = tmp_path / "results"
    _pcs_table(results, ["a", "replayed"], [0.2, 1.0])
    _write(
        results / "cancer_myth" / "tables" / "model_calls.tsv",
        pd.DataFrame(
            {
                "model": ["a", "a", "replayed"],
                "requestset": ["questions", "retry", "questions"],
                "n_requests": [21, 4, 21],
                "n_failed": [3, 1, 0],
                "n_truncated": [15, 0, 0],
                "n_cached": [0, 0, 0],
            }
        ),
    )
    frame = landing.landing_frame(_headlines(results), results, replayed=["replayed"])
    warnings = frame.set_index("model")["warnings"]
    assert warnings["a"] == "4 of 25 calls failed; 15 of 25 answers cut at the token cap"
    assert warnings["replayed"] == "2 of 22 unscored; replayed stored answers, not a model"
    # The summary's own flags come first; a reason in place of a value is named.
    row = pd.Series({"model": "m", "value": "no judge validation", "warnings": "most cut"})
    assert landing.warnings_for(row, {}, ()) == ["most cut", "no value: no judge validation"]


def test_a_capped_or_subset_run_names_itself_first_in_every_caption(tmp_path):
    assert catalog.run_scope() == ""
    capped = catalog.run_scope(limit=5)
    assert capped == (
        "Capped run (limit=5: each study used only its first 5 items); not a full result."
    )
    both = catalog.config_scope({"limit": 2, "only": "cancer_myth,gpt-4o"})
    assert both.startswith("Capped run (limit=2")
    assert "subset run (only=cancer_myth,gpt-4o" in both
    entry = catalog.Entry("cancer_myth", "results/cancer_myth/tables/pcs_pcr.tsv")
    assert entry.caption(scope=capped, root=tmp_path).startswith(capped + " Presupposition")
    assert not entry.caption(root=tmp_path).startswith("Capped")


def test_summary_files_and_last_screen_name_the_scope_and_totals(tmp_path, capsys):
    results = tmp_path / "results"
    _pcs_table(results, ["a"], [0.25])
    (results / "cancer_myth" / "responses" / "a").mkdir(parents=True)
    (results / "cancer_myth" / "responses" / "a" / "questions.jsonl").write_text(
        '{"request_id": "1", "text": "x", "prompt_tokens": 10, "completion_tokens": 5,'
        ' "cost_usd": 0.01}\n{"request_id": "2", "text": null, "error": "429"}\n'
    )
    scope = catalog.run_scope(limit=3)
    out = {k: tmp_path / f"out.{k}" for k in ("tsv", "md", "html", "fragment", "usage")}
    summary_html.write_summary(tmp_path, out, ["cancer_myth"], scope=scope)
    assert set(pd.read_csv(out["tsv"], sep="\t")["scope"]) == {scope}
    for key in ("md", "html", "fragment"):
        assert scope in out[key].read_text(), key
    (results / "summary.tsv").write_bytes(out["tsv"].read_bytes())
    (results / "usage.tsv").write_bytes(out["usage"].read_bytes())
    assert summary_terminal.main(["--root", str(tmp_path), "--report", "results/report.html"]) == 0
    lines = capsys.readouterr().out.rstrip("\n").splitlines()
    assert lines[-1] == "Report: results/report.html"
    assert lines[-2] == ("Total: 2 calls (1 failed, 0 cached); tokens in/out 10/5; cost $0.0100.")
    assert lines[1] == "OncoEval results (results/summary.md)" and lines[2] == f"!! {scope}"
    assert any("0.250 [0.150, 0.350]" in line for line in lines)


def test_the_run_end_hook_leaves_the_table_to_make_run(tmp_path, monkeypatch, capsys):
    results = tmp_path / "results"
    _pcs_table(results, ["a"], [0.25])
    out = {"tsv": results / "summary.tsv", "md": tmp_path / "s.md", "html": tmp_path / "s.html"}
    out |= {"fragment": tmp_path / "f.html", "usage": results / "usage.tsv"}
    summary_html.write_summary(tmp_path, out, ["cancer_myth"])
    summary_terminal.print_run_end(tmp_path)
    assert "OncoEval results" in capsys.readouterr().out
    monkeypatch.setenv(summary_terminal.END_SUMMARY_ENV, "1")
    summary_terminal.print_run_end(tmp_path)
    assert capsys.readouterr().out == ""


def test_a_failed_report_step_shows_the_error_without_progress_lines():
    output = "\n".join(
        [
            "Building DAG of jobs...",
            "Creating report...",
            "Loading script code for rule report_table",
            "Adding table1.html (3.1 KB).",
            "WorkflowError:",
            "File results/summary.html marked for report but does not exist.",
        ]
    )
    shown = build.shown_on_failure(output)
    assert "Adding" not in shown and "Loading script code" not in shown
    assert "File results/summary.html marked for report but does not exist." in shown


def test_the_last_screen_fits_100_columns_with_long_names_reasons_and_warnings():
    """The headline table keeps, within 100 columns: model, measure, value with its interval,
    n, unscored, and per model the answers cut, unparsed, failed and filtered and its warnings;
    long model ids, measure names and reasons wrap instead of widening the table."""
    long_model = "meta-llama-3.1-70b-instruct-awq-int4-local-replica"  # 50 characters
    headline = pd.DataFrame(
        [
            {
                "study": "coral", "model": long_model,
                "measure": "EM-F1 (published view, credits 'unknown')", "value": 0.2857,
                "ci_low": 0.1, "ci_high": 0.45, "n": 40, "n_unscored": 0, "answers": 40,
                "cut_share": 0.95, "unparsed_share": 1.0, "failed": 3, "filtered": 1,
                "warnings": "nothing parsed in 40/40 answers; 38/40 answers cut at the token cap",
            },
            {
                "study": "cancer_myth", "model": long_model,
                "measure": "PCS (corrected for judge error)",
                "value": "no judge validation (human_scores not set)", "ci_low": None,
                "ci_high": None, "n": 21, "n_unscored": 0, "answers": 21, "cut_share": 1.0,
                "unparsed_share": 0.0, "failed": 0, "filtered": 0, "warnings": None,
            },
        ]
    )  # fmt: skip
    usage = pd.DataFrame(
        [
            [long_model, 61, 3, 12, 123456, 65432, 1.5, 1.25, 0.25, 1234.5],
            # An unpriced model with many tokens: the widest cells each column can hold.
            ["cancer-myth-reference-verdicts", 99999, 9999, 99999, 9999999, 999999, None, None,
             None, 99999.9],
        ],
        columns=summary.USAGE_COLUMNS,
    )  # fmt: skip
    lines = []
    for study in ("coral", "cancer_myth"):
        lines += summary_terminal.terminal_study_block(study, headline)
    lines += summary_terminal.terminal_usage(usage)
    lines.append(summary_terminal.usage_total(usage))
    too_wide = [line for line in lines if len(line) > summary_terminal.TERMINAL_WIDTH]
    assert not too_wide, too_wide
    text = "\n".join(lines)
    for shown in (
        "0.286 [0.100, 0.450]", "95% (38/40)", "100% (40/40)", "nothing parsed in 40/40",
        "no judge", "$1.2500", "123456/65432",
    ):  # fmt: skip
        assert shown in text, shown
    # The model's id, wrapped, is all there.
    assert "meta-llama-3.1-70b-instruct-awq" in text and "replica" in text


# The content area the Snakemake report gives its landing in a 1366x768 window, beside its menu
# (measured in headless Chromium: 916 px wide, 20 px from the top of a 681 px high view).
REPORT_CONTENT = (916, 20)
LONG_WARNINGS = (
    "most answers cut at the token cap (38/40); nothing parsed in 40/40 answers; 2 of 48 calls "
    "failed"
)


@pytest.mark.skipif(browser.CHROMIUM is None, reason="Debian's chromium is not installed")
def test_a_demo_sized_headline_table_fits_a_small_laptops_first_screen(tmp_path):
    """Ten models in four studies, long model ids, the longest standings, n in two units and
    long warnings: the whole table lies inside the first screen of a 1366x768 window in
    the width the report leaves it, every value, n and warning in it."""
    results = tmp_path / "results"
    models = {
        "side_effects": ["smollm2", "side-effects-reference-replay"],
        "cancer_myth": ["smollm2", "cancer-myth-reference-replay"],
        # A user's long model id wraps rather than widening the table.
        "coral": [
            "smollm2",
            "coral-reference-replay",
            "meta-llama-3.1-70b-instruct-awq-int4-local",
        ],
        "guidelines": ["smollm2", "demo-oracle-replay", "demo-noisy-replay"],
    }
    # The demo's n per study: units, and the clusters they lie in.
    counts = {
        "side_effects": (6, 6),
        "cancer_myth": (21, 21),
        "coral": (4, 2),
        "guidelines": (22, 11),
    }
    rows, boards = [], {}
    for study, names in models.items():
        measure = catalog.STUDY_DECLARATIONS[study].headlines[0].measure
        unit = summary._unit_words(catalog.STUDY_DECLARATIONS[study].resampling)
        n, clusters = counts[study]
        for i, model in enumerate(names):
            rows.append(
                {
                    "study": study, "model": model, "measure": measure,
                    "value": 0.9 - 0.3 * i, "ci_low": 0.5 - 0.3 * i, "ci_high": 1.0 - 0.3 * i,
                    "n": n, "n_clusters": clusters, "unit": unit, "n_unscored": 0,
                    "warnings": LONG_WARNINGS if model == "smollm2" else None,
                }
            )  # fmt: skip
        standing = [
            "leader",
            "not separable from the leader at this n",
            "equivalent to the leader within ±0.05",
        ]
        boards[study] = pd.DataFrame(
            {"measure": measure, "model": names, "standing": standing[: len(names)]}
        )
        _write(results / study / "tables" / "leaderboard.tsv", boards[study])
    headlines = pd.DataFrame(rows)
    replayed = [m for names in models.values() for m in names if m != "smollm2"]
    fragment = landing.landing_html(headlines, results, replayed)
    width, top = REPORT_CONTENT
    page = tmp_path / "landing.html"
    page.write_text(
        # The report's sans-serif type (Tailwind's default stack).
        f"<!DOCTYPE html><html><body style='margin: {top}px 0 0 0; width: {width}px; "
        "font-family: ui-sans-serif, system-ui, sans-serif'>"
        f"{fragment}</body></html>",
        encoding="utf-8",
    )
    # The window is the content area's width, as high as the report's 1366x768 window.
    found = browser.measure(page, f"#{landing.TABLE_ID}", (width, 768))
    assert found["window"][1] == 681, found["window"]
    assert browser.first_screen_problems(found) == [], found
    text = found["text"]
    for shown in (
        "0.900 [0.500, 1.000]", "22 rollouts in 11 patients", "not separable at this n",
        "equivalent within ±0.05", LONG_WARNINGS, "replayed stored answers, not a model",
        "demo-noisy-replay",
    ):  # fmt: skip
        assert shown in text, shown
