"""Where a run's results lie: every path under ``results/`` is built here, and only here.

Rules, scripts, the report, the exports and the readers of a run's files take their paths from
this module, so that renaming a folder (``tables``, ``figures``, ...) edits this file alone
(tests/spine/test_layout.py holds the rest of the code to it). Paths are strings relative to
the run's folder, since Snakemake rules take strings; wildcards pass through as written
(``ResultPaths("{study}").scores("{model}")``). A reader of a run joins one to the run's root:
``Path(root) / summary("tsv")``.
"""

from __future__ import annotations

RESULTS = "results"

# A study's folders under results/{study}/ (a study's own further folders are named by its
# workflow.py through its ResultPaths: ``paths("gold", "gold.tsv")``).
PREPARED = "prepared"
REQUESTS = "requests"
RESPONSES = "responses"
PARSED = "parsed"
SCORES = "scores"
TABLES = "tables"
FIGURES = "figures"
EXPOSURE = "exposure"
REVIEW = "review"

# The run's folders under results/.
REPORT = "report"  # the report's pages: per study, then as in the study's folder
DRILLDOWN = "drilldown"  # per study, the item pages
ESTIMATE = "estimate"
MODELS = "models"  # weights records and converted checkpoints' manifests
EXPORT = "export"
PUBLISH = "publish"

# Tables every study has beside its own (the comparison's and the calls').
MODEL_COMPARISON = "model_comparison"
LEADERBOARD = "leaderboard"
MODEL_CALLS = "model_calls"


def results(*parts: str) -> str:
    """``results/<parts...>`` (``results("")``: the folder with its slash, ``results/``)."""
    return "/".join((RESULTS, *parts))


class ResultPaths:
    """Paths under ``results/<study>/``, or relative to that folder (``relative=True``, as a
    headline's table or an answer's parse table is declared; also ``paths.rel``).

    Strings, since Snakemake rules take strings; wildcards are passed through as written, e.g.
    ``paths.scores("{model}")``.
    """

    def __init__(self, study: str, relative: bool = False):
        self.study = study
        self.root = "" if relative else results(study)

    @property
    def rel(self) -> ResultPaths:
        """The same paths relative to the study's folder."""
        return ResultPaths(self.study, relative=True)

    def __call__(self, *parts: str) -> str:
        return "/".join(p for p in (self.root, *parts) if p)

    def prepared(self, name: str) -> str:
        return self(PREPARED, name)

    def requests(self, requestset: str) -> str:
        return self(REQUESTS, f"{requestset}.jsonl")

    def responses(self, model: str = "", requestset: str = "") -> str:
        """A model's answers to a request set; without a set, its folder of answers; without a
        model, the study's folder of answers."""
        return self(RESPONSES, model, f"{requestset}.jsonl" if requestset else "")

    def parsed(self, model: str, suffix: str = "jsonl") -> str:
        return self(PARSED, f"{model}.{suffix}")

    def scores(self, model: str) -> str:
        return self(SCORES, f"{model}.tsv")

    def table(self, name: str, ext: str = "tsv") -> str:
        """A table's file (``ext=""``: its path without suffix, as a report entry is named)."""
        return self(TABLES, f"{name}.{ext}" if ext else name)

    def tables(self, *names: str, folder: str = TABLES) -> dict[str, str]:
        """Each table's two outputs: ``name`` (its TSV) and ``name_md`` (its Markdown copy), the
        names ``oncoeval.core.io.write_table`` is handed."""
        out = {}
        for name in names:
            out[name] = self(folder, f"{name}.tsv")
            out[f"{name}_md"] = self(folder, f"{name}.md")
        return out

    def figure(self, name: str) -> str:
        return self(FIGURES, f"{name}.png")

    def exposure(self, model: str) -> str:
        """The exposure audit's per-item table of a model."""
        return self(EXPOSURE, f"{model}.tsv")

    def review(self, *parts: str) -> str:
        """The clinician review's folder, or a file in it."""
        return self(REVIEW, *parts)

    def log(self, *parts: str) -> str:
        return "/".join(("logs", self.study, *parts)) + ".log"


# Paths inside any study's folder, relative to it (``IN_STUDY.table(LEADERBOARD)``).
IN_STUDY = ResultPaths("", relative=True)


# The run's own files under results/.
def summary(ext: str = "tsv") -> str:
    return results(f"summary.{ext}")


USAGE = results("usage.tsv")
PROVENANCE = results("provenance.json")
REPORT_HTML = results("report.html")


def report_page(*parts: str) -> str:
    """A page of the report under ``results/report/``."""
    return results(REPORT, *parts)


def drilldown(study: str, model: str) -> str:
    """The item page of a model (``model="compare"``: the models side by side)."""
    return report_page(study, DRILLDOWN, f"{model}.html")


LANDING = report_page("landing.html")
PROVENANCE_PAGE = report_page("provenance.html")
ESTIMATE_MODELS = results(ESTIMATE, "models.json")
ESTIMATE_TABLE = results(ESTIMATE, "estimate.tsv")


def weights_record(model: str) -> str:
    return results(MODELS, "weights", f"{model}.json")


def checkpoint_manifest(name: str) -> str:
    """What the `convert_model` rule writes for a converted checkpoint."""
    return results(MODELS, f"{name}.json")
