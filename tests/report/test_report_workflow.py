"""The report of a real workflow run (replayed answers, no model): summary first, every table and
figure the run writes in it once, as HTML with a caption, the stale-results refusal, the
rendered page in headless Chromium (its first screen at three window sizes), and `make run`'s
last lines, for a capped and subset run and when nothing is left to do."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import browser
import pandas as pd
import pytest
import reader
from conftest import link_workflow, run_snakemake, workflow_env, write_config
from helpers import MAKE, replayed, run_make
from scipy import stats

from oncoeval.report import catalog, drilldown, landing, summary_terminal, tables
from oncoeval.studies import STUDIES as STUDY_IDS

# Four studies, answered by stored answers only: the side-effects, Cancer-Myth and CORAL reference
# sets and the guidelines demo's two replays (no synthetic supervision, which needs a generator
# model). The Cancer-Myth set is judged by its stored verdicts, as in the demo (verifier_for).
CONFIG = replayed("side_effects", "cancer_myth", "coral", "guidelines")
STUDIES = ("side_effects", "cancer_myth", "coral", "guidelines")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    workdir = link_workflow(tmp_path_factory.mktemp("report-run"))
    config = write_config(workdir, CONFIG)
    proc = run_snakemake(workdir, configfile=config)
    run_snakemake(workdir, "--report", "results/report.html", configfile=config)
    return workdir, config, proc.stdout + proc.stderr


def edge_low(g: int) -> float:
    """The lower bound of the 95% interval of a mean at the top of [0, 1] over g clusters (or
    units): no spread, so Wilson's bound with n = g and t at g - 1 df, g / (g + t^2)."""
    t = stats.t.ppf(0.975, g - 1)
    return g / (g + t * t)


def report_index(html: str) -> tuple[dict, dict]:
    """The report's ``results`` (path -> entry) and ``categories`` as its page embeds them."""

    def embedded(name):
        start = html.index(f"var {name} = {{") + len(f"var {name} = ")
        end = html.index(";\n", start)
        return json.loads(html[start:end])

    return embedded("results"), embedded("categories")


def test_summary_has_each_study_and_model_with_cis(run):
    workdir, _, log = run
    cells = pd.read_csv(workdir / "results" / "summary.tsv", sep="\t")
    # A corrected rate's cell holds the reason where no correction can be made.
    headline = cells.assign(value=pd.to_numeric(cells["value"], errors="coerce"))
    assert set(headline["study"]) == set(STUDIES)
    f1 = headline[headline["measure"] == "F1, free-form (ff)"].iloc[0]
    # The stored reference answers list exactly the reference: F1 1 in every profile, so no
    # spread over 6 profiles: the effective-n bound (oncoeval.stats.compare.mean_ci).
    assert (f1["model"], f1["value"], f1["ci_high"]) == ("side-effects-reference-replay", 1.0, 1.0)
    assert f1["ci_low"] == pytest.approx(edge_low(6), rel=1e-5)
    assert (f1["n"], f1["n_unscored"]) == (6, 0)
    # The stored gold tuples: exact-match F1 1 on the published view.
    em = headline[headline["measure"].str.startswith("EM-F1 (published")].iloc[0]
    assert (em["model"], em["value"], em["n"], em["n_unscored"]) == (
        "coral-reference-replay",
        1.0,
        4,
        0,
    )
    # Beside each headline, what the model did: 48 lists, none cut, none unparsed, no warning.
    assert (f1["answers"], f1["cut_share"], f1["unparsed_share"], f1["failed"]) == (48, 0, 0, 0)
    assert headline["warnings"].isna().all()
    # The stored answers that correct each false presupposition, with their stored verdicts:
    # PCS and PCR 1 over the 21 demo questions, none unscored.
    myth = headline[headline["study"] == "cancer_myth"].set_index("measure")
    pcs_pcr = pd.read_csv(workdir / "results/cancer_myth/tables/pcs_pcr.tsv", sep="\t")
    pcs_pcr = pcs_pcr.set_index("model")
    for measure in ("PCS (raw judge verdicts)", "PCR (raw judge verdicts)"):
        row = myth.loc[measure]
        assert (row["model"], row["value"], row["ci_high"]) == (
            "cancer-myth-reference-replay", 1.0, 1.0,
        )  # fmt: skip
        # no spread: n = G, the question clusters (myths); PCS on [-1, 1], PCR on [0, 1]
        g = int(pcs_pcr.loc["cancer-myth-reference-replay", "n_clusters"])
        low = edge_low(g) if measure.startswith("PCR") else -1 + 2 * edge_low(g)
        assert row["ci_low"] == pytest.approx(low, rel=1e-5)
        assert (row["n"], row["n_unscored"]) == (21, 0)
    corrected = cells[cells["measure"] == "PCS (corrected for judge error)"]["value"]
    assert corrected.tolist() == ["no judge validation (human_scores not set)"]
    overlap = headline[headline["measure"] == "path overlap"].set_index("model")["value"]
    assert overlap["demo-oracle-replay"] == 1.0 and overlap["demo-noisy-replay"] < 1.0
    md = (workdir / "results" / "summary.md").read_text()
    assert tables.format_ci(1.0, edge_low(6), 1.0) in md
    usage = pd.read_csv(workdir / "results" / "usage.tsv", sep="\t").set_index("model")
    assert usage.loc["side-effects-reference-replay", "requests"] == 48
    assert usage.loc["demo-noisy-replay", "failed"] == 0
    # The end-of-run table in the terminal.
    assert "OncoEval results" in log and "side-effects-reference-replay" in log


def test_every_table_and_figure_the_run_writes_is_in_the_report_once(run):
    workdir, _, _ = run
    results, categories = report_index((workdir / "results" / "report.html").read_text())
    listed = [p for subcats in categories.values() for paths in subcats.values() for p in paths]
    assert len(listed) == len(set(listed)), "an entry is listed twice"
    written = set()
    for study in STUDIES:
        root = workdir / "results" / study
        written |= {str(p.relative_to(workdir)) for p in root.glob("tables/*.tsv")}
        written |= {str(p.relative_to(workdir)) for p in root.rglob("*.png")}
    expected = {catalog.entry_for(p).html_path for p in written}
    assert expected <= set(listed), sorted(expected - set(listed))
    for study in STUDIES:
        title = catalog.STUDY_TITLES[study]
        assert {"tables", "figures", "per-item records"} <= set(categories[title])
    assert categories[catalog.SUMMARY_CATEGORY] and "results/report/provenance.html" in listed
    for path in listed:
        entry = results[path]
        assert entry["caption"].strip(), f"{path} has no caption"
        if "/tables/" in path or "/figures/" in path:
            assert entry["labels"]["n"], path
    # Replayed answers are named as stored answers, never passed off as a model.
    caption = results["results/report/coral/tables/overall.html"]["caption"]
    assert "coral-reference-replay: replayed stored answers (not a model)" in caption
    caption = results["results/report/cancer_myth/tables/pcs_pcr.html"]["caption"]
    assert "cancer-myth-reference-replay: replayed stored answers (not a model)" in caption
    figure = results["results/report/side_effects/figures/precision_recall.png"]["caption"]
    assert "side-effects-reference-replay: replayed stored answers (not a model)" in figure
    items = results["results/report/guidelines/drilldown/demo-oracle-replay.html"]
    assert items["labels"]["entry"] == "items of demo-oracle-replay (stored answers)"
    summary = (workdir / "results" / "summary.html").read_text()
    assert "demo-noisy-replay, demo-oracle-replay, side-effects-reference-replay" in summary
    # Tables are HTML pages, readable where the report shows them; TSVs stay for machines.
    table = results["results/report/side_effects/tables/table1.html"]
    assert table["mime_type"] == "text/html"
    page = (workdir / "results/report/side_effects/tables/table1.html").read_text()
    assert "F1 [95% CI]" in page and tables.format_ci(1.0, edge_low(6), 1.0) in page
    assert (workdir / "results/side_effects/tables/table1.tsv").exists()


# Sentences a caption must not carry: the catalog's fallbacks for a file no study describes,
# and stale ones (a summary note once said no correction was applied above corrected rows).
STALE = (
    *catalog.FALLBACK_MARKS,
    "no judge-error correction applied",
    "No resampling: one row per item",
    "each figure shows the same numbers",
)
# How an interval is made, in the words the captions use (oncoeval.report.catalog).
METHODS = re.compile(r"bootstrap|Wilson|Student-t|standard error")


def caption_text(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


def test_every_entry_has_a_caption_saying_what_n_and_method(run):
    """Every entry of the report (study tables and figures, comparison tables, per-item pages,
    the summary and the run page) says what it shows, its n, and for a table with intervals
    how they were made and what they resample; tables count their n from their own file."""
    workdir, _, _ = run
    results, _ = report_index((workdir / "results" / "report.html").read_text())
    assert len(results) > 60  # every table and figure of the four studies
    for path, entry in results.items():
        text = caption_text(entry["caption"])
        assert len(text) > 40, (path, text)
        assert not [s for s in STALE if s in text], (path, text)
        assert re.search(r"\bn: \S", text), (path, text)
        source = catalog.entry_for(path.replace("results/report/", "results/", 1))
        if source is None:  # the summary, item pages, the compare page, the run page
            continue
        assert source.description() in text, path  # what it shows, from the study
        if source.kind == "figure":
            if re.search(r"\bCIs?\b", source.description()):
                assert "Resampling unit of the CIs: " in text, (path, text)
            continue
        tsv = workdir / source.path.replace(".html", ".tsv")
        assert f"n: {catalog.count_n(tsv)}." in text, (path, text)
        columns = list(pd.read_csv(tsv, sep="\t", nrows=0).columns)
        if tables.ci_pairs(columns):
            assert "95% CIs: " in text and "resampling unit: " in text, (path, text)
            assert METHODS.search(text.split("95% CIs: ")[1]), (path, text)
        else:
            assert "No intervals" in text, (path, text)
    # The page of one model's items counts its answers; the compare page its items and models.
    items = caption_text(
        results["results/report/guidelines/drilldown/demo-noisy-replay.html"]["caption"]
    )
    assert "n: 28 answers, one row each (per request set: rollouts 28)." in items
    compare = caption_text(results["results/report/guidelines/drilldown/compare.html"]["caption"])
    assert "n: 28 items (rows) of the request set rollouts, 2 models." in compare


# A value and its interval, and an amount of money, as any page writes them.
INTERVAL = re.compile(r"(-?\d+(?:\.\d+)?) \[(-?\d+(?:\.\d+)?), (-?\d+(?:\.\d+)?)\]")
DOLLARS = re.compile(r"\$\d+(?:\.\d+)?")


def test_numbers_print_alike_on_every_page_and_the_terminal(run):
    """One headline value with its interval reads the same on the landing page, the summary
    (page, Markdown, terminal) and its study's table page; every interval anywhere has three
    decimals, every amount of money four, every count none (oncoeval.report.tables)."""
    workdir, _, _ = run
    results = workdir / "results"
    cells = pd.read_csv(results / "summary.tsv", sep="\t")
    row = cells[(cells["model"] == "demo-noisy-replay") & (cells["measure"] == "path overlap")]
    (value, low, high) = row[["value", "ci_low", "ci_high"]].astype(float).iloc[0]
    shown = tables.format_ci(value, low, high)
    assert re.fullmatch(r"0\.\d{3} \[0\.\d{3}, 0\.\d{3}\]", shown), shown
    terminal = summary_terminal.terminal_summary(workdir)
    pages = {
        "landing": (results / "report" / "landing.html").read_text(),
        "summary.html": (results / "summary.html").read_text(),
        "summary.md": (results / "summary.md").read_text(),
        "terminal": terminal,
        "table": (results / "report/guidelines/tables/table1_expert.html").read_text(),
    }
    for name, text in pages.items():
        assert shown in text, name
    pages |= {
        str(p.relative_to(results)): p.read_text() for p in (results / "report").rglob("*.html")
    }
    pages["provenance"] = (results / "report" / "provenance.html").read_text()
    for name, text in pages.items():
        for interval in INTERVAL.findall(text):
            assert all(re.fullmatch(r"-?\d+\.\d{3}", v) for v in interval), (name, interval)
        for amount in DOLLARS.findall(text):
            assert re.fullmatch(r"\$\d+\.\d{4}", amount), (name, amount)
    # A share of answers reads alike in the summary page and the terminal.
    share = tables.format_share(0.0, 28)
    assert share == "0% (0/28)" and share in pages["summary.html"] and share in terminal
    # Counts are whole numbers in every table page, also where a column reads back as floats.
    for page in (results / "report").rglob("*.html"):
        if "/drilldown/" in str(page) or "<table" not in page.read_text():
            continue
        for df in pd.read_html(io.StringIO(page.read_text()), thousands=None):
            for column in (c for c in df.columns if isinstance(c, str)):
                # Headers are in words: "n units", "unscored", "TP" (oncoeval.core.format).
                name = column.lower().replace(" ", "_")
                if tables.is_count_column(name) or name == "unscored":
                    decimals = [v for v in df[column].astype(str) if re.fullmatch(r"\d+\.\d+", v)]
                    assert not decimals, (str(page), column, decimals[:3])


def test_no_page_table_or_terminal_line_shows_nan_an_id_title_or_a_snake_case_header(run):
    """Every text file and page the run writes (the study tables' Markdown, the report's
    pages, the summary) and the terminal's results read as words: "–" or a reason for a
    missing value, the study's name in titles, headers in words (oncoeval.core.format)."""
    workdir, _, _ = run
    results = workdir / "results"
    # report.html is Snakemake's own page (its scripts); its entries are the pages read here.
    files = [
        p for p in results.rglob("*") if p.suffix in (".md", ".html", ".txt")
        and p.name != "report.html"
    ]  # fmt: skip
    assert len(files) > 100
    found = [
        problem
        for path in files
        for problem in reader.problems(path.relative_to(workdir), path.read_text(), STUDY_IDS)
    ]
    terminal = summary_terminal.terminal_summary(workdir)
    found += reader.problems(Path("terminal"), terminal, STUDY_IDS)
    assert not found, "\n".join(found)
    # A table page's title is its study's name and the entry's label, as the report lists it.
    page = (results / "report/side_effects/tables/leaderboard.html").read_text()
    title = (
        "Side effects · Table: Models ranked per headline measure with their values and intervals"
    )
    assert reader.titles(page)[0] == title
    # The guidelines headline states one n in one unit, the leaderboard's: 22 rollouts of 11
    # patients, on the summary, the landing and in the terminal alike.
    board = pd.read_csv(results / "guidelines/tables/leaderboard.tsv", sep="\t")
    assert set(board["n_units"]) == {22} and set(board["n_clusters"]) == {11}
    for text in (
        (results / "summary.md").read_text(),
        reader.visible_text((results / "report/landing.html").read_text()),
    ):
        assert "22 rollouts in 11 patients" in text
    assert "22 rollouts in" in terminal  # its n column wraps after "in"


def test_report_refuses_results_of_another_config_naming_them(run):
    workdir, config, _ = run
    fresh = [sys.executable, "-m", "oncoeval.report.fresh", "--workflow-profile", "none"]
    ok = subprocess.run(
        [*fresh, f"--configfile={config}"], cwd=workdir, env=workflow_env(), capture_output=True, text=True
    )  # fmt: skip
    assert ok.returncode == 0, ok.stderr
    other = write_config(workdir, {**CONFIG, "bootstrap": {"seed": 1}}, "other-config.yaml")
    refused = subprocess.run(
        [*fresh, f"--configfile={other}"], cwd=workdir, env=workflow_env(), capture_output=True, text=True
    )  # fmt: skip
    assert refused.returncode == 1
    assert "The report is not built" in refused.stderr
    assert "results/side_effects/tables/table1.tsv" in refused.stderr


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def rendered_dom(url: str) -> str:
    """The page's DOM after its scripts ran, from headless Chromium."""
    proc = subprocess.run(
        [
            CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
            "--virtual-time-budget=20000", "--dump-dom", url,
        ],
        capture_output=True, text=True, timeout=120,
        env={**os.environ, "HOME": os.environ.get("HOME", "/tmp")},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


@pytest.mark.skipif(
    CHROMIUM is None, reason="Debian's chromium is not installed (.ci/run installs it)"
)
def test_report_renders_in_headless_chromium(run):
    workdir, _, _ = run
    report = workdir / "results" / "report.html"
    source = report.read_text()
    dom = rendered_dom(report.as_uri())
    # The landing's headline table is an element of the rendered page, not only in the source
    # (where the report's script holds it as an escaped string); the full summary is an entry.
    marker = f'id="{landing.TABLE_ID}"'
    assert marker not in source and marker in dom
    # A headline value with its interval as summary.tsv holds it (never of zero width).
    cells = pd.read_csv(workdir / "results" / "summary.tsv", sep="\t").dropna(subset=["value"])
    first = cells.iloc[0]
    assert first["ci_low"] < first["ci_high"]
    assert tables.format_ci(float(first["value"]), first["ci_low"], first["ci_high"]) in dom
    assert "results/summary.html" in report_index(source)[0]
    # A drill-down page, opened filtered by a search, shows only the matching items.
    page = workdir / "results/report/guidelines/drilldown/demo-noisy-replay.html"
    dom = rendered_dom(page.as_uri() + "#q=p02%23")
    rows = dom.split("<tbody>")[1].split("</tbody>")[0].split("<tr")[1:]
    hidden = [r for r in rows if 'style="display: none;"' in r]
    assert len(rows) == 28 and len(rows) - len(hidden) == 2  # p02's two rollouts
    assert '<span id="item-count">2</span>' in dom


@pytest.mark.skipif(
    CHROMIUM is None, reason="Debian's chromium is not installed (.ci/run installs it)"
)
@pytest.mark.parametrize("window", browser.WINDOWS, ids=lambda w: f"{w[0]}x{w[1]}")
def test_report_opens_on_the_headline_table_at_every_window_size(run, window):
    workdir, _, _ = run
    found = browser.measure(workdir / "results" / "report.html", f"#{landing.TABLE_ID}", window)
    # The whole table inside the first screen, nothing to scroll sideways to, and nothing of the
    # landing page above or left of where scrolling starts.
    assert browser.first_screen_problems(found) == [], found
    # Per study its first headline, each model's value with its CI as the summary has it.
    cells = pd.read_csv(workdir / "results" / "summary.tsv", sep="\t")
    for study in STUDIES:
        assert landing.short_title(study) in found["text"]
        rows = cells[cells["study"] == study]
        first = rows[rows["measure"] == rows["measure"].iloc[0]]
        for _, r in first.iterrows():
            shown = tables.format_ci(float(r["value"]), r["ci_low"], r["ci_high"])
            assert r["model"] in found["text"] and shown in found["text"], (study, shown)
    assert "replayed stored answers, not a model" in found["text"]


# One evaluated model's item page per study (the first of the config's evaluate list).
ITEM_PAGES = {study: CONFIG["studies"][study]["evaluate"][0] for study in STUDIES}


@pytest.mark.skipif(
    CHROMIUM is None, reason="Debian's chromium is not installed (.ci/run installs it)"
)
@pytest.mark.parametrize("window", browser.WINDOWS, ids=lambda w: f"{w[0]}x{w[1]}")
def test_item_page_of_each_study_starts_on_its_items(run, window):
    workdir, _, _ = run
    for study, model in ITEM_PAGES.items():
        page = workdir / f"results/report/{study}/drilldown/{model}.html"
        found = browser.measure(page, "#items", window)
        assert found["target"] is not None, (study, found)
        top, left = found["target"]["top"], found["target"]["left"]
        assert 0 <= top < found["window"][1] / 2 and left >= 0, (study, found["target"])
        assert found["unreachable"] == [], (study, found["unreachable"])
        header, *rows = [line.split("\t") for line in found["text"].strip().splitlines()]
        assert rows, study  # a header and its items
        if study == "cancer_myth":
            # A judged study's page shows each answer's verdict beside it (the stored verdicts
            # of the reference answers: 1, the false presupposition corrected).
            verdicts = {row[header.index("verdict")] for row in rows if len(row) == len(header)}
            assert verdicts == {"1"}, verdicts


# The window sizes the pages must fit: a small laptop and a desktop monitor.
FIT_WINDOWS = browser.WINDOWS[:2]


@pytest.mark.skipif(
    CHROMIUM is None, reason="Debian's chromium is not installed (.ci/run installs it)"
)
@pytest.mark.parametrize("window", FIT_WINDOWS, ids=lambda w: f"{w[0]}x{w[1]}")
def test_item_pages_show_output_parse_and_score_on_the_first_screen(run, window):
    """Each study's item page leads with the answer, its parse and its score, inside the first
    screen and the page's width; the study's further columns wait behind "more columns"."""
    workdir, _, _ = run
    for study, model in ITEM_PAGES.items():
        page = workdir / f"results/report/{study}/drilldown/{model}.html"
        headers = reader.html_headers(page.read_text())
        cells = {c: f"#items th:nth-child({headers.index(c) + 1})" for c in ("score", "parse")}
        found = browser.measure(page, "#items table", window, also=cells.values())
        table, (scroll, content) = found["target"], found["scroll_width"]
        # The table takes the page's width, and nothing is left to scroll sideways to.
        assert table["right"] - table["left"] >= 0.9 * content, (study, table, content)
        assert scroll <= content + 1, (study, scroll, content)
        for name, selector in cells.items():
            assert browser.within(found["also"][selector], found["window"]), (study, name)
        # The request's fields and the joined tables are there, behind the control.
        shown = found["text"].splitlines()[0].split("\t")
        assert shown.index("score") < 6 and len(shown) < len(headers), shown
        assert "more columns" in page.read_text()


@pytest.mark.skipif(
    CHROMIUM is None, reason="Debian's chromium is not installed (.ci/run installs it)"
)
@pytest.mark.parametrize("window", FIT_WINDOWS, ids=lambda w: f"{w[0]}x{w[1]}")
def test_a_table_page_takes_the_width_of_the_page(run, window):
    workdir, _, _ = run
    for name in ("side_effects/tables/table1", "guidelines/tables/leaderboard"):
        page = workdir / f"results/report/{name}.html"
        found = browser.measure(page, "#table table", window)
        table, (scroll, content) = found["target"], found["scroll_width"]
        assert table["right"] - table["left"] >= 0.9 * content, (name, table, content)
        assert content >= 0.9 * (window[0] - 60), (name, content)  # the body's width
        assert scroll <= content + 1, (name, scroll, content)


def test_a_credited_or_defaulted_score_says_so_on_its_row(run):
    """CORAL's published view credits an answer with nothing parsed where the gold is
    unknown: its row says so beside the score."""
    workdir, _, _ = run
    page = workdir / "results/report/coral/drilldown/coral-reference-replay.html"
    rows = pd.read_html(io.StringIO(page.read_text()), thousands=None, keep_default_na=False)[0]
    rows = rows.astype(str)
    nothing = rows[rows["parse"].str.startswith("nothing parsed") & (rows["score"] != "")]
    assert len(nothing), "the demo has answers with nothing parsed and a score"
    assert nothing["score note"].str.startswith("credited: the gold is 'unknown'").all()
    assert not rows[rows["parse"] == "parsed"]["score note"].str.startswith("defaulted").any()
    # The compare page puts the same note beside each model's score.
    side = drilldown.compare_rows(workdir, "coral", ["coral-reference-replay"]).fillna("")
    model = "coral-reference-replay"
    credited = side[side[f"{model}: parse"].str.startswith("nothing parsed")]
    assert len(credited) == len(nothing)
    assert credited[f"{model}: score note"].str.startswith("credited: ").all()


def assert_ends_on_results(output: str, scope: str = "") -> list[str]:
    """The last lines are the results, then the report's path; nothing of the report step."""
    lines = output.rstrip("\n").splitlines()
    assert lines[-1] == "Report: results/report.html", lines[-5:]
    assert lines[-2].startswith("Total: "), lines[-5:]
    start = max(
        i for i, line in enumerate(lines) if line == "OncoEval results (results/summary.md)"
    )
    assert sum(line.startswith("OncoEval results") for line in lines) == 1  # printed once
    assert not [line for line in lines[start:] if "oncoeval.report" in line]  # after the report
    if scope:  # wrapped to the terminal's width like every line of the results
        blank = lines.index("", start + 1)
        shown = " ".join(line.strip() for line in lines[start + 1 : blank])
        assert shown == f"!! {scope}", lines[start : blank + 1]
    # The whole terminal, the run's progress too (oncoeval.workflow.terminal), fits 100 columns.
    too_wide = [line for line in lines if len(line) > summary_terminal.TERMINAL_WIDTH]
    assert not too_wide and summary_terminal.TERMINAL_WIDTH == 100, too_wide
    for noise in ("Adding ", "Loading script code", "RuntimeWarning", "never awaited", "license",
                  "localrule ", "Finished jobid", "Select jobs to execute"):  # fmt: skip
        assert not [line for line in lines if noise in line], noise
    return lines[start:]


@pytest.mark.slow
@pytest.mark.skipif(MAKE is None, reason="make is not installed")
def test_make_run_of_a_capped_subset_says_so_and_ends_on_its_results(tmp_path):
    workdir = link_workflow(tmp_path / "capped")
    config = write_config(workdir, CONFIG)
    args = "--config only=side_effects limit=2"
    scope = catalog.run_scope(limit=2, only="side_effects")
    first = run_make(workdir, "run", f"CONFIG={config}", f"ARGS={args}")
    assert first.returncode == 0, first.stdout[-3000:]
    # The run's header (folded to the terminal's width, oncoeval.workflow.terminal).
    assert f"OncoEval: {scope}" in " ".join(first.stdout.split())
    shown = assert_ends_on_results(first.stdout, scope)
    f1 = pd.read_csv(workdir / "results/summary.tsv", sep="\t").iloc[0]
    value = tables.format_ci(float(f1["value"]), f1["ci_low"], f1["ci_high"])
    assert any("side-effects-reference-replay" in line and value in line for line in shown)
    # The summary files and the report's landing and captions name the cap and the subset.
    assert set(pd.read_csv(workdir / "results/summary.tsv", sep="\t")["scope"]) == {scope}
    for name in ("summary.md", "summary.html", "report/landing.html"):
        assert scope in (workdir / "results" / name).read_text(), name
    # Nothing left to do: Snakemake's onsuccess hook does not run, the results still end it.
    again = run_make(workdir, "run", f"CONFIG={config}", f"ARGS={args}")
    assert again.returncode == 0, again.stdout[-3000:]
    assert "Nothing to be done" in again.stdout
    assert_ends_on_results(again.stdout, scope)
    # `make report` alone builds the report of the last run's config and arguments; without
    # them the freshness check would refuse (the captions' params name the scope).
    (workdir / "results" / "report.html").unlink()
    report = run_make(workdir, "report")
    assert report.returncode == 0, report.stdout[-3000:]
    assert report.stdout.rstrip("\n").splitlines()[-1] == "Report: results/report.html"
    assert "Adding " not in report.stdout
    results, _ = report_index((workdir / "results" / "report.html").read_text())
    assert results and all(scope in entry["caption"] for entry in results.values())
