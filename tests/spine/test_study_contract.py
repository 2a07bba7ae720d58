"""Every study has the same shape (oncoeval.studies.contract), taken from the one registry.

A reader who knows one study finds everything in the others at the same place: the same package
modules, scripts and rule names per stage, one result-path helper, outputs declared once, one
function for the final targets, and no schema default repeated in Python.
"""

from __future__ import annotations

import ast
import importlib
import re
from collections.abc import Mapping
from pathlib import PurePosixPath

import pytest
import yaml
from conftest import REPO

from oncoeval.config import checks as oc
from oncoeval.studies import STUDIES, contract
from oncoeval.studies.contract import MODULES, STAGES, Resampling, ResultPaths

DEMO_CONFIG = yaml.safe_load((REPO / "config" / "config.yaml").read_text(encoding="utf-8"))


def rule_names(study: str) -> set[str]:
    text = (REPO / "rules" / f"{study}.smk").read_text(encoding="utf-8")
    return set(re.findall(r"^rule (\w+):", text, flags=re.MULTILINE))


@pytest.mark.parametrize("study", STUDIES)
def test_every_study_has_the_stage_modules_scripts_and_rules(study):
    package = REPO / "oncoeval" / "studies" / study
    missing_modules = [m for m in MODULES if not (package / f"{m}.py").is_file()]
    assert not missing_modules, f"{study}: no module {missing_modules}"
    missing_scripts = [s for s in STAGES if not (REPO / "scripts" / study / f"{s}.py").is_file()]
    assert not missing_scripts, f"{study}: no script {missing_scripts}"
    rules = rule_names(study)
    missing_rules = [f"{study}_{s}" for s in STAGES if f"{study}_{s}" not in rules]
    assert not missing_rules, f"{study}: no rule {missing_rules}"
    # Every rule of the study carries the study's prefix, so `snakemake --list` groups them.
    assert all(r.startswith(f"{study}_") for r in rules), sorted(rules)
    for path in (
        REPO / "rules" / f"{study}.smk",
        REPO / "config" / "schemas" / f"{study}.schema.yaml",
        REPO / "config" / "prompts" / study,
        REPO / "tests" / study,
    ):
        assert path.exists(), path


@pytest.mark.parametrize("study", STUDIES)
def test_every_study_declares_paths_outputs_and_targets_once(study):
    workflow = importlib.import_module(f"oncoeval.studies.{study}.workflow")
    assert isinstance(workflow.paths, ResultPaths) and workflow.paths.study == study
    assert isinstance(workflow.OUTPUTS, Mapping) and workflow.OUTPUTS
    for name, path in workflow.OUTPUTS.items():
        assert isinstance(name, str) and path.startswith(f"results/{study}/"), (name, path)
    # What the report and the summary show of the study comes from the study itself.
    assert workflow.REPORT_TITLE and isinstance(workflow.RESAMPLING, Resampling)
    assert workflow.RESAMPLING.unit and workflow.RESAMPLING.cluster
    assert workflow.HEADLINES and all(h.study == study for h in workflow.HEADLINES)
    # The model comparison (oncoeval.stats.compare) reads the study's per-unit values of its headlines.
    assert all(h.kind in ("mean", "binary") for h in workflow.HEADLINES)
    assert any(h.per_unit for h in workflow.HEADLINES)
    assert callable(workflow.unit_scores) and callable(workflow.comparison_inputs)
    config = {**DEMO_CONFIG, "studies": {**DEMO_CONFIG["studies"]}}
    config["studies"][study] = oc.filled_study_block(config, study)
    block = config["studies"][study]
    targets = contract.final_targets(study, block, oc.study_evaluated_models(config, study))
    assert targets and all(t.startswith(f"results/{study}/") for t in targets), targets
    # The final targets are the published outputs (OUTPUTS), each wildcard filled, but those the
    # run's settings leave out.
    unused = set(getattr(workflow, "unused_outputs", lambda b: ())(block))
    declared = {p for name, p in workflow.OUTPUTS.items() if name not in unused}
    assert declared <= set(targets) | {p for p in declared if "{" in p}, declared - set(targets)
    # No study works its own final targets out.
    assert not hasattr(workflow, "final_targets")


def dotted_schema_keys(schema: dict, prefix: str = "") -> set[str]:
    keys = set()
    for key, sub in (schema.get("properties") or {}).items():
        keys.add(prefix + key)
        keys |= dotted_schema_keys(sub, f"{prefix}{key}.")
    return keys


@pytest.mark.parametrize("study", STUDIES)
def test_every_study_declares_its_data_judges_and_captions_by_real_names(study):
    """What config.py and the report read of a study names keys of its schema and files it
    writes, so a typo in a declaration cannot pass silently."""
    workflow = importlib.import_module(f"oncoeval.studies.{study}.workflow")
    block = oc.filled_study_block({}, study)
    keys = dotted_schema_keys(oc.study_schema(study))
    model_keys = set(oc.STUDY_MODEL_KEYS[study])
    for settings in (block, {**block, "construct": True}) if "construct" in block else (block,):
        data = contract.data_keys(study, settings)
        assert set(data) <= keys and all(isinstance(v, bool) for v in data.values()), data
        roles = contract.judge_roles(study, settings) + contract.required_roles(study, settings)
        assert {dotted for dotted, _ in roles} <= model_keys, roles
        assert all(isinstance(p, str) for p in contract.settings_problems(study, settings))
    # A table by its file's name; a per-model output (``scores/{model}.tsv``) by its OUTPUTS key.
    written = {PurePosixPath(p).stem for p in workflow.OUTPUTS.values()} | set(workflow.OUTPUTS)
    for name in ("CAPTIONS", "UNITS"):
        named = set(getattr(workflow, name, {}))
        assert named <= written, f"{study}.{name} names no output: {named - written}"
    folders = {PurePosixPath(p).parts[2] for p in workflow.OUTPUTS.values()}
    assert set(getattr(workflow, "ITEM_FOLDERS", ())) <= folders


# The generic layers: what they know of a study, they read from the study's declarations.
GENERIC = ("oncoeval/config/checks.py", "oncoeval/report")


def test_the_config_checks_and_the_report_name_no_study():
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, STUDIES)) + r")\b")
    named = {}
    for part in GENERIC:
        path = REPO / part
        for source in [path] if path.is_file() else sorted(path.rglob("*.py")):
            hits = pattern.findall(source.read_text(encoding="utf-8"))
            if hits:
                named[str(source.relative_to(REPO))] = sorted(set(hits))
    assert not named, f"studies named in the generic layers: {named}"


def _top_level_names(source: str) -> set[str]:
    names = set()
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return names


def declarations_read() -> set[str]:
    """The names the package outside the studies reads from a study's workflow module: through
    the contract's accessors, or as a getattr or attribute of a workflow module that a study
    defines."""
    studies = [REPO / "oncoeval" / "studies" / s for s in STUDIES]
    text = "\n".join(
        path.read_text(encoding="utf-8")
        for path in sorted((REPO / "oncoeval").rglob("*.py"))
        if not any(path.is_relative_to(folder) for folder in studies)
    )
    defined = set().union(
        *(_top_level_names((folder / "workflow.py").read_text()) for folder in studies)
    )
    accessed = set(
        re.findall(
            r'\b(?:declared|study_declares|_declared_call|_declared)\([^,()]+, "(\w+)"', text
        )
    )
    by_getattr = set(re.findall(r'\bgetattr\([^"]*?, "(\w+)"', text))
    by_attribute = set(
        re.findall(r"\b(?:workflow|module|wf|\w*workflow\w*\([^()]*\))\.(\w+)", text)
    )
    return accessed | ((by_getattr | by_attribute) & defined)


def test_the_contract_docstring_names_every_declaration_the_package_reads():
    read = declarations_read()
    assert {"OUTPUTS", "HEADLINES", "REPORT_TEXT_COLUMNS", "corrected_comparison"} <= read
    missing = sorted(name for name in read if f"``{name}" not in contract.__doc__)
    assert not missing, (
        f"read from a study's workflow.py but not in contract's docstring: {missing}"
    )


def test_the_study_name_check_finds_a_named_study(tmp_path):
    # The same pattern, on a line like those the declarations replaced.
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, STUDIES)) + r")\b")
    assert pattern.findall(f'    if study == "{STUDIES[0]}":') == [STUDIES[0]]
    assert not pattern.findall(f"x_{STUDIES[0]}y = 1")


def schema_defaults(schema: dict) -> dict[str, list]:
    """Every key of a schema (nested objects and $defs included) with a telling default."""
    found: dict[str, list] = {}

    def walk(node):
        if not isinstance(node, dict):
            return
        for key, sub in (node.get("properties") or {}).items():
            if isinstance(sub, dict) and "default" in sub:
                value = sub["default"]
                # null, empty lists and empty mappings are every `.get` fallback; not telling.
                if value not in (None, [], {}):
                    found.setdefault(key, []).append(value)
            walk(sub)
        for sub in (node.get("$defs") or {}).values():
            walk(sub)
        for key in ("items", "additionalProperties"):
            walk(node.get(key))
        for key in ("oneOf", "anyOf", "allOf"):
            for sub in node.get(key) or []:
                walk(sub)

    walk(schema)
    return found


def _literal(node):
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return NotImplemented


def _same(value, default) -> bool:
    return type(value) is type(default) and value == default


def repeated_defaults(source: str, defaults: dict[str, list]) -> list[str]:
    """Places in ``source`` that restate a schema default: ``x.get("key", default)``, a
    ``"key": default`` entry, a ``key=default`` parameter or a ``key: T = default`` field."""
    hits = []

    def check(key, value_node, node):
        if key in defaults:
            value = _literal(value_node)
            if any(_same(value, d) for d in defaults[key]):
                hits.append((node.lineno, f"line {node.lineno}: {key} = {value!r}"))

    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("get", "setdefault", "pop")
            and len(node.args) == 2
            and isinstance(node.args[0], ast.Constant)
        ):
            check(node.args[0].value, node.args[1], node)
        elif isinstance(node, ast.Dict):
            for k, v in zip(node.keys, node.values, strict=True):
                if isinstance(k, ast.Constant) and isinstance(k.value, str):
                    check(k.value, v, node)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            positional = list(zip(node.args.args[::-1], node.args.defaults[::-1], strict=False))
            keyword = [
                (a, d)
                for a, d in zip(node.args.kwonlyargs, node.args.kw_defaults, strict=True)
                if d
            ]
            for arg, default in positional + keyword:
                check(arg.arg, default, node)
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    if item.value is not None:
                        check(item.target.id, item.value, item)
    return [text for _, text in sorted(hits)]


def test_the_repeated_default_check_finds_each_form():
    defaults = {"threshold": [0.5], "regimes": [["a", "b"]], "strict": [True]}
    source = (
        "x = block.get('threshold', 0.5)\n"
        "D = {'regimes': ['a', 'b']}\n"
        "def f(strict=True): pass\n"
        "class C:\n    threshold: float = 0.5\n"
        "ok = block.get('threshold', 0.6)\n"
        "also_ok = block.get('strict', 1)\n"
    )
    assert [h.split(":")[0] for h in repeated_defaults(source, defaults)] == [
        "line 1",
        "line 2",
        "line 3",
        "line 5",
    ]


@pytest.mark.parametrize("study", STUDIES)
def test_no_schema_default_is_repeated_in_the_study_package(study):
    defaults = schema_defaults(oc.study_schema(study))
    hits = {
        str(path.relative_to(REPO)): found
        for path in sorted((REPO / "oncoeval" / "studies" / study).glob("*.py"))
        if (found := repeated_defaults(path.read_text(encoding="utf-8"), defaults))
    }
    assert not hits, f"schema defaults repeated in code (read the filled block instead): {hits}"


def test_no_model_or_run_default_is_repeated_outside_the_studies():
    top = yaml.safe_load((REPO / "config" / "config.schema.yaml").read_text(encoding="utf-8"))
    defaults = schema_defaults(top)
    package = REPO / "oncoeval"
    hits = {
        str(path.relative_to(REPO)): found
        for path in sorted(package.rglob("*.py"))
        if "studies" not in path.relative_to(package).parts
        if (found := repeated_defaults(path.read_text(encoding="utf-8"), defaults))
    }
    assert not hits, f"schema defaults repeated in code (read the filled config instead): {hits}"
