"""Every study has the same shape (oncoeval.studies.contract), taken from the one registry.

A reader who knows one study finds everything in the others at the same place: the same package
modules, scripts and rule names per stage, one result-path helper, outputs declared once, one
function for the final targets, and no schema default repeated in Python.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import importlib.util
import re
import sys
from collections.abc import Mapping
from pathlib import PurePosixPath

import pytest
import yaml
from conftest import REPO

from oncoeval.config import checks as oc
from oncoeval.studies import STUDIES, contract
from oncoeval.studies.contract import (
    MODULES,
    STAGES,
    Headline,
    Output,
    Resampling,
    ResultPaths,
    Study,
)

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
    declared = contract.study(study)
    assert isinstance(declared, Study) and declared.name == study
    assert isinstance(declared.paths, ResultPaths) and declared.paths.study == study
    assert isinstance(declared.outputs, Mapping) and declared.outputs
    for name, output in declared.outputs.items():
        assert isinstance(output, Output), (name, output)
        assert isinstance(name, str) and output.path.startswith(f"results/{study}/"), name
    # What the report and the summary show of the study comes from the study itself.
    assert declared.title and isinstance(declared.resampling, Resampling)
    assert declared.resampling.unit and declared.resampling.cluster
    assert declared.headlines and all(h.study == study for h in declared.headlines)
    # The model comparison (oncoeval.stats.compare) reads the study's per-unit values of its headlines.
    assert all(h.kind in ("mean", "binary") for h in declared.headlines)
    assert any(h.per_unit for h in declared.headlines)
    assert callable(declared.unit_scores) and callable(declared.comparison_inputs)
    config = {**DEMO_CONFIG, "studies": {**DEMO_CONFIG["studies"]}}
    config["studies"][study] = oc.filled_study_block(config, study)
    block = config["studies"][study]
    targets = contract.final_targets(study, block, oc.study_evaluated_models(config, study))
    assert targets and all(t.startswith(f"results/{study}/") for t in targets), targets
    # The final targets are the published outputs, each wildcard filled, but those the run's
    # settings leave out.
    unused = set(declared.unused_outputs(block) if declared.unused_outputs else ())
    paths = {o.path for name, o in declared.outputs.items() if name not in unused}
    assert paths <= set(targets) | {p for p in paths if "{" in p}, paths - set(targets)


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
    declared = contract.study(study)
    block = oc.filled_study_block({}, study)
    keys = dotted_schema_keys(oc.study_schema(study))
    model_keys = set(oc.STUDY_MODEL_KEYS[study])
    for settings in (block, {**block, "construct": True}) if "construct" in block else (block,):
        data = contract.data_keys(study, settings)
        assert set(data) <= keys and all(isinstance(v, bool) for v in data.values()), data
        roles = contract.judge_roles(study, settings) + contract.required_roles(study, settings)
        assert {dotted for dotted, _ in roles} <= model_keys, roles
        assert all(isinstance(p, str) for p in contract.settings_problems(study, settings))
    # A figure's table is one of the study's tables; its folders hold its outputs.
    tables = {PurePosixPath(o.path).stem for o in declared.outputs.values()}
    drawn = {o.table for o in declared.outputs.values() if o.table}
    assert drawn <= tables, drawn - tables
    folders = {PurePosixPath(o.path).parts[2] for o in declared.outputs.values()}
    assert set(declared.item_folders) <= folders


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


def test_the_contract_docstring_and_contributing_describe_every_field():
    """Each field of a study's declaration (``Study``), of its outputs (``Output``) and of its
    headlines (``Headline``) is described where a study's author reads."""
    contributing = (REPO / "CONTRIBUTING.md").read_text(encoding="utf-8")
    for kind in (Study, Output, Headline):
        names = [f.name for f in dataclasses.fields(kind)]
        missing = [n for n in names if f"``{n}" not in contract.__doc__ and kind is not Headline]
        assert not missing, f"{kind.__name__} fields not in contract's docstring: {missing}"
        missing = [n for n in names if f"`{n}" not in contributing]
        assert not missing, f"{kind.__name__} fields not in CONTRIBUTING.md: {missing}"


# Where the package, the scripts and the rules could load a module by name.
LOADED_BY_NAME = re.compile(r"import_module\(([^()]*(?:\([^()]*\))?[^()]*)\)")


def test_a_study_module_is_loaded_in_one_place():
    """Only ``contract.study`` loads a study's module by name: every other reader takes the
    ``Study`` value it returns."""
    loads = []
    for path in sorted(
        [*(REPO / "oncoeval").rglob("*.py"), *(REPO / "scripts").rglob("*.py")]
        + [*(REPO / "rules").glob("*.smk"), REPO / "Snakefile"]
    ):
        for call in LOADED_BY_NAME.findall(path.read_text(encoding="utf-8")):
            if "studies" in call or "workflow" in call:
                loads.append((str(path.relative_to(REPO)), call))
    assert loads == [("oncoeval/studies/contract.py", 'f"oncoeval.studies.{name}.workflow"')]
    assert LOADED_BY_NAME.findall('importlib.import_module(f"x.studies.{s}.workflow")')


def test_a_misspelt_field_fails_when_the_study_is_imported(tmp_path):
    """A declaration names its fields as keywords of ``Study`` and ``Output``: a typo is a
    TypeError when the module is imported, not a caption silently left out."""
    source = (REPO / "oncoeval/studies/coral/workflow.py").read_text(encoding="utf-8")

    def imported(text: str):
        path = tmp_path / "misspelt.py"
        path.write_text(text, encoding="utf-8")
        # a module of the study's package, so that its relative imports resolve
        spec = importlib.util.spec_from_file_location("oncoeval.studies.coral._misspelt", path)
        spec.loader.exec_module(importlib.util.module_from_spec(spec))

    imported(source)  # as written, it imports
    assert source.count("    summary_note=") == 1
    with pytest.raises(TypeError, match="summary_notes"):
        imported(source.replace("    summary_note=", "    summary_notes="))
    assert source.count('"caption": "Scores per extraction task."') == 1
    with pytest.raises(TypeError, match="captoin"):
        imported(
            source.replace('"caption": "Scores per extraction', '"captoin": "Scores per extraction')
        )
    with pytest.raises(ValueError, match="by_tsk"):
        imported(source.replace('"by_task": {"caption"', '"by_tsk": {"caption"'))


def test_an_output_is_found_by_its_path_the_exact_one_first():
    declared = contract.study("guidelines")
    roc = declared.output_of("results/guidelines/figures/roc_lexical.png")
    assert roc == declared.outputs["roc"] and roc.table == "meta_classifier"
    # "roc_feature_sets" is a figure of its own, not the per-feature-set pattern's
    assert (
        declared.output_of("results/guidelines/figures/roc_feature_sets.png")
        == (declared.outputs["roc_feature_sets"])
    )
    assert declared.output_of("results/guidelines/rollouts/m1.tsv").caption.startswith("Rollouts")
    assert declared.output_of("results/guidelines/rollouts/a/b.tsv") is None


def test_a_module_without_its_study_declaration_is_refused(monkeypatch):
    import types

    module = types.ModuleType("oncoeval.studies.nothing.workflow")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    with pytest.raises(TypeError, match="STUDY is not the Study of nothing"):
        contract.study("nothing")


def test_the_summary_reads_the_n_column_a_headline_declares(tmp_path):
    """CORAL's overall table counts units, notes and clusters; its headlines declare n_notes,
    which the summary shows whatever other count columns come first."""
    from oncoeval.report import summary

    table = tmp_path / "coral" / "tables" / "overall.tsv"
    table.parent.mkdir(parents=True)
    row = {"model": "m", "view": "published", "n": 99, "n_units": 10, "n_notes": 3}
    row |= {"n_unscored": 2, "parse_failures": 7, "em_f1": 0.5, "bleu4": 0.4, "rouge1": 0.3}
    table.write_text("\t".join(row) + "\n" + "\t".join(map(str, row.values())) + "\n")
    rows = [r for r in summary.headline_rows(tmp_path, ["coral"]) if r["model"] == "m"]
    assert rows and {(r["n"], r["n_unscored"], r["unit"]) for r in rows} == {(3, 2, "note")}


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
