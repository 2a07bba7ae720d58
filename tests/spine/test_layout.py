"""Every results path is built by oncoeval.core.layout: no other file of the workflow writes one by
hand, so that renaming a results folder edits layout.py alone.

The guard reads the package, the scripts and the rules (docstrings and comments aside, which
describe the layout to a reader); the second test renames the folders in a copy of the workflow
and checks that a dry run's jobs follow.
"""

from __future__ import annotations

import ast
import io
import re
import shutil
import tokenize
from pathlib import Path

from conftest import REPO, run_snakemake

from oncoeval.core import layout

# The folders a study's results lie in, and results/ itself.
STUDY_FOLDERS = {
    layout.PREPARED, layout.REQUESTS, layout.RESPONSES, layout.PARSED, layout.SCORES,
    layout.TABLES, layout.FIGURES, layout.EXPOSURE, layout.REVIEW,
}  # fmt: skip
FOLDERS = STUDY_FOLDERS | {layout.RESULTS}
SEGMENT = "|".join(sorted(STUDY_FOLDERS))
# A path under results/, or one inside a study's folder (``tables/x.tsv``, ``*/responses/*``).
RESULTS_PATH = re.compile(rf"(^|[^\w.-])results/|(^|/|\*)({SEGMENT})/|\{{\}}/({SEGMENT})$")
# Paths that merely share a folder's name: logs and benchmarks mirror the outputs' wildcards,
# rules name their scripts and envs relative to rules/.
NOT_RESULTS = ("logs/", "benchmarks/", "../")
LAYOUT = REPO / "oncoeval" / "core" / "layout.py"
# Not scanned: the Makefile (the run's bookkeeping, results/.config and results/.args, and the
# report's path, which make hands to Snakemake; it names no study folder), bench/ (its own
# bench/results/) and .ci/ (placeholders of a run's files, named by `snakemake --summary`).


def docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def literal(node: ast.AST) -> str | None:
    """A string constant, or an f-string with ``{}`` for each value it formats."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(literal(v) or "{}" for v in node.values)
    return None


def joined_folder(node: ast.AST) -> str | None:
    """A folder's bare name joined into a path: ``root / "tables"``, ``os.path.join(r, "scores")``,
    ``paths("exposure", ...)`` (a study's ResultPaths called with a folder the layout names)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        operands = [node.left, node.right]
    elif isinstance(node, ast.Call):
        func = node.func.func if isinstance(node.func, ast.Call) else node.func
        name = getattr(func, "attr", getattr(func, "id", ""))
        joins = ("join", "joinpath", "Path", "PurePosixPath", "ResultPaths")
        operands = node.args if name in joins or name.endswith("paths") else []
    else:
        return None
    for operand in operands:
        if isinstance(operand, ast.Constant) and operand.value in FOLDERS:
            return operand.value
    return None


def is_results_path(text: str) -> bool:
    return not text.startswith(NOT_RESULTS) and bool(RESULTS_PATH.search(text))


def python_paths(source: str) -> list[tuple[int, str]]:
    tree = ast.parse(source)
    skip, found = docstrings(tree), []
    inside_fstrings = {
        id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in n.values
    }
    for node in ast.walk(tree):
        folder = joined_folder(node)
        if folder:
            found.append((node.lineno, f"{folder!r} joined into a path"))
        if id(node) in skip or id(node) in inside_fstrings:
            continue
        text = literal(node)
        if text is not None and is_results_path(text):
            found.append((node.lineno, text))
    return found


def snakemake_paths(source: str) -> list[tuple[int, str]]:
    """String literals of a Snakefile or rules file (comments are not tokens' strings)."""
    found, before = [], []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.STRING:
            text = literal(ast.parse(token.string, mode="eval").body)
            if text is not None and is_results_path(text):
                found.append((token.start[0], text))
            # paths("tables", ...): a study's ResultPaths called with a folder the layout names
            called = "".join(t.string for t in before[-2:])
            if text in FOLDERS and called.endswith("paths("):
                found.append((token.start[0], f"{text!r} joined into a path"))
        if token.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT):
            before.append(token)
    return found


def workflow_files() -> list[Path]:
    files = sorted((REPO / "oncoeval").rglob("*.py")) + sorted((REPO / "scripts").rglob("*.py"))
    files += sorted((REPO / "rules").glob("*.smk")) + [REPO / "Snakefile"]
    return [f for f in files if f != LAYOUT]


def hand_built(path: Path) -> list[str]:
    source = path.read_text(encoding="utf-8")
    found = python_paths(source) if path.suffix == ".py" else snakemake_paths(source)
    return [f"{path.relative_to(REPO)}:{line}: {text}" for line, text in found]


def test_the_guard_sees_a_hand_built_path():
    """Each way of writing a results path by hand is caught; logs, scripts and prose are not."""
    caught = [
        'x = root / "results" / study / "tables" / "leaderboard.tsv"',
        'x = f"results/{study}/tables/model_calls.tsv"',
        'x = "tables/table1.tsv"',
        'x = glob.glob(str(root / "*/responses/*/*.jsonl"))',
        'x = os.path.join(study_root, "scores")',
        'x = f"{study_root}/responses"',
        'x = paths("tables", "extra.tsv")',
        'x = ResultPaths(study)("exposure", f"{model}.tsv")',
        'x = f"no responses in results/ yet"',
    ]
    for line in caught:
        assert python_paths(line), line
    passed = [
        '"""Reads results/{study}/tables/x.tsv."""',
        'x = "logs/{study}/exposure/table.log"',
        'x = {"scores": paths.scores("{model}")}',
        'x = "config/prompts/exposure"',
        'subcategory = "figures"',
    ]
    for line in passed:
        assert not python_paths(line), line
    rules = 'rule r:\n    output:\n        "results/{study}/figures/x.png",  # results/ here\n'
    assert [text for _, text in snakemake_paths(rules)] == ["results/{study}/figures/x.png"]
    rules = 'rule r:\n    output:\n        s_wf.paths("scores", "x.tsv"),\n        s_wf.paths("own", "x.tsv"),\n'
    assert [text for _, text in snakemake_paths(rules)] == ["'scores' joined into a path"]


def test_results_paths_are_built_by_the_layout_alone():
    found = [hit for path in workflow_files() for hit in hand_built(path)]
    assert not found, (
        "results paths built by hand (take them from oncoeval.core.layout):\n  "
        + "\n  ".join(found)
    )


def dry_run_outputs(workdir: Path) -> set[str]:
    """Every output file of a forced dry run of the demo config."""
    proc = run_snakemake(workdir, "-n", "--forceall", "--detailed-summary")
    rows = [line.split("\t") for line in proc.stdout.splitlines()]
    header = rows.index(next(r for r in rows if r[:1] == ["output_file"]))
    return {r[0] for r in rows[header + 1 :] if r and r[0]}


def test_renaming_a_folder_edits_the_layout_alone(tmp_path):
    """A copy of the workflow whose layout.py names other folders runs the demo's DAG with the
    same files in the renamed folders, and none in the old ones."""
    renames = {layout.TABLES: "tabs", layout.FIGURES: "figs", layout.SCORES: "per_item"}
    runs = {}
    for name in ("as_is", "renamed"):
        copy = tmp_path / name
        copy.mkdir()
        shutil.copy(REPO / "Snakefile", copy / "Snakefile")
        for part in ("rules", "scripts", "oncoeval", "config", "envs", "report"):
            shutil.copytree(REPO / part, copy / part, ignore=shutil.ignore_patterns("__pycache__"))
        (copy / "resources").symlink_to(REPO / "resources")
        if name == "renamed":
            text = LAYOUT.read_text(encoding="utf-8")
            for old, new in renames.items():
                text, n = re.subn(rf'^(\w+) = "{old}"$', rf'\1 = "{new}"', text, flags=re.M)
                assert n == 1, old
            (copy / "oncoeval" / "core" / "layout.py").write_text(text, encoding="utf-8")
        runs[name] = dry_run_outputs(copy)

    def moved(path: str) -> str:
        parts = path.split("/")
        if parts[0] == "results" and len(parts) > 3:
            # results/{study}/<folder>/... and results/report/{study}/<folder>/...
            i = 3 if parts[1] == layout.REPORT else 2
            parts[i] = renames.get(parts[i], parts[i])
        return "/".join(parts)

    as_is, renamed = runs["as_is"], runs["renamed"]
    assert any(f"/{layout.TABLES}/" in p for p in as_is)
    assert renamed == {moved(p) for p in as_is}
    assert not [p for p in renamed if set(p.split("/")) & set(renames)]
