"""A user's config gets the documented defaults, never the demo's; every config problem at once;
`only=` / `limit=`; every config the docs name builds its DAG; PHI on every route (issues #14,
#13 item 1)."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest
import yaml
from snakemake.utils import validate

from oncoeval.config import checks as oc
from oncoeval.core.io import cap_jsonl, read_jsonl, write_jsonl
from tests.conftest import REPO, dry_run_jobs, layered, run_snakemake, write_config

SCHEMA = REPO / "config" / "config.schema.yaml"
DEMO = "resources/demo/"
REPLAY = {"id": "m", "backend": "replay", "path": "replay"}
API = {"id": "remote", "backend": "openai", "model": "gpt-4o", "api_key_env": "ONCOEVAL_TEST_KEY"}
ENV = {"ONCOEVAL_TEST_KEY": "sk-test"}

# The data a user names for each study (stand-ins: copies of the demo files outside resources/).
USER_DATA = {
    "side_effects": {
        "profiles": "side_effects/profiles.csv",
        "reference": "side_effects/reference.tsv",
    },
    "cancer_myth": {"questions": "cancer_myth/questions.json"},
    "coral": {"notes_dir": "coral/notes"},
    "guidelines": {
        "guideline": "guidelines/guideline.json",
        "labelled_notes": "guidelines/labelled_notes.jsonl",
    },
}
# What a study needs besides its data (its required judge).
USER_JUDGES = {"cancer_myth": {"judges": {"verifier": "m"}}}


def resolve(config: dict) -> dict:
    """The config as rules/common.smk leaves it (schema defaults filled, study blocks too)."""
    config = copy.deepcopy(config)
    oc.fill_config_defaults(config)
    for study in oc.STUDIES:
        config["studies"].setdefault(study, {})
        validate(config["studies"][study], str(REPO / f"config/schemas/{study}.schema.yaml"))
    return config


def schema_defaults(schema: dict) -> dict:
    """Every default of a study schema, nested objects filled in as a validator fills them."""
    out = {}
    for key, sub in schema.get("properties", {}).items():
        if "default" in sub:
            value = copy.deepcopy(sub["default"])
            if isinstance(value, dict) and "properties" in sub:
                value = {**schema_defaults(sub), **value}
            out[key] = value
    return out


def strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)


def user_config(study: str, root: Path) -> dict:
    data = {key: str(root / rel) for key, rel in USER_DATA[study].items()}
    return {
        "models": [REPLAY],
        "evaluate": ["m"],
        "studies": {study: {"enabled": True, **data, **USER_JUDGES.get(study, {})}},
    }


@pytest.mark.parametrize("study", oc.STUDIES)
def test_user_config_resolves_to_schema_defaults_and_no_demo_path(study, tmp_path):
    resolved = resolve(user_config(study, tmp_path))
    schema = yaml.safe_load((REPO / f"config/schemas/{study}.schema.yaml").read_text())
    named = {"enabled", *USER_DATA[study], *USER_JUDGES.get(study, {})}
    block = resolved["studies"][study]
    for key, default in schema_defaults(schema).items():
        if key not in named:
            assert block[key] == default, f"studies.{study}.{key}: {block[key]!r} != {default!r}"
    top = yaml.safe_load(SCHEMA.read_text())["properties"]
    assert resolved["bootstrap"] == schema_defaults(top["bootstrap"])
    assert resolved["only"] is None and resolved["limit"] is None
    # no setting of any study (enabled or not) points into the demo
    assert not [s for s in strings(resolved) if DEMO in s]
    # the only problems: the user's own data files, absent here
    data_problems = {p.split(":")[0] for p in oc.config_problems(resolved) if "studies." in p}
    assert data_problems == {f"studies.{study}.{k}" for k in USER_DATA[study]}


def test_demo_values_do_not_reach_a_user_run(workdir):
    """Through Snakemake: a --configfile alone builds requests with the schema's token limits
    (1000 and 1000), not the demo's (160 and 96)."""
    for study in ("side_effects", "cancer_myth"):
        for rel in USER_DATA[study].values():
            src = REPO / DEMO / rel
            (workdir / "data" / rel).parent.mkdir(parents=True, exist_ok=True)
            (workdir / "data" / rel).write_bytes(src.read_bytes())
    (workdir / "replay").mkdir()
    config = user_config("side_effects", workdir / "data")
    config["studies"].update(user_config("cancer_myth", workdir / "data")["studies"])
    path = write_config(workdir, config, demo=False)
    run_snakemake(
        workdir,
        "-p",
        "results/side_effects/requests/lists.jsonl",
        "results/cancer_myth/requests/answer.jsonl",
        configfile=path,
    )
    lists = list(read_jsonl(workdir / "results/side_effects/requests/lists.jsonl"))
    answers = list(read_jsonl(workdir / "results/cancer_myth/requests/answer.jsonl"))
    assert {r["params"]["max_new_tokens"] for r in lists} == {1000}
    assert {r["params"]["max_new_tokens"] for r in answers} == {1000}


# ---------------------------------------------------------------- all problems at once


def test_every_problem_is_reported_in_one_message(tmp_path):
    config = resolve(
        {
            "models": [REPLAY, API],
            "evaluate": ["m", "gpt5"],
            "studies": {
                "cancer_myth": {"enabled": True, "construct": True},
                "coral": {"enabled": True, "contains_phi": True, "notes_dir": "nowhere/notes"},
            },
        }
    )
    config["studies"]["coral"]["review"]["model"] = "remote"
    problems = oc.config_problems(config, env={})
    message = oc.format_problems(problems)
    expected = [
        "evaluate: unknown model id 'gpt5'",
        "studies.cancer_myth.questions: not set",
        "studies.cancer_myth.judges.verifier: needs a model id",
        "studies.cancer_myth.judges.classifier: needs a model id (construct is true",
        "studies.cancer_myth.construction.generators: needs a model id",
        "studies.cancer_myth.construction.myths: not set",
        f"studies.coral.notes_dir: 'nowhere/notes': {oc.MISSING_FILE}",
        "studies.coral.review.model: 'remote' (review model) is not phi_safe",
        "models[remote].api_key_env",
    ]
    for fragment in expected:
        assert fragment in message, f"{fragment!r} not in:\n{message}"
    assert message.startswith(f"{len(problems)} problems:")


def test_an_unused_judge_role_is_not_required(tmp_path):
    """No Cancer-Myth classifier needs naming when construct is false."""
    config = resolve(user_config("cancer_myth", REPO / DEMO))
    assert config["studies"]["cancer_myth"]["judges"].get("classifier") is None
    assert [p for p in oc.config_problems(config) if p.startswith("studies.")] == []


def test_schema_problems_are_all_listed():
    bad = {
        "models": [{"id": "m", "backend": "llamafile"}, {"id": "Bad Id", "backend": "replay"}],
        "studies": {"coral": {"enabled": "yes", "max_new_tokens": 0}},
        "limit": 0,
        "bogus": 1,
    }
    problems = oc.schema_problems(bad, SCHEMA)
    assert problems == [
        "(top level): Additional properties are not allowed ('bogus' was unexpected)",
        "limit: 0 is less than the minimum of 1",
        "models[0].backend: 'llamafile' is not one of ['hf', 'openai', 'replay', 'vllm']",
        "models[1]: 'path' is a required property",
        "models[1].id: 'Bad Id' does not match '^[a-z0-9_-][a-z0-9._-]{0,63}$'",
        "studies.coral.enabled: 'yes' is not of type 'boolean'",
        "studies.coral.max_new_tokens: 0 is less than the minimum of 1",
    ]


def test_workflow_stops_with_every_problem_before_any_job(workdir):
    config = {
        "models": [REPLAY],
        "evaluate": ["m", "nobody"],
        "studies": {"guidelines": {"enabled": True}, "side_effects": {"enabled": True}},
    }
    proc = run_snakemake(
        workdir, "-n", configfile=write_config(workdir, config, demo=False), check=False
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    for fragment in (
        "evaluate: unknown model id 'nobody'",
        "studies.guidelines.guideline: not set",
        "studies.guidelines.labelled_notes: not set",
        "studies.side_effects.profiles: not set",
        "studies.side_effects.reference: not set",
    ):
        assert fragment in out, out[-3000:]
    assert not (workdir / "results").exists()


# ---------------------------------------------------------------- only= / limit=


def demo_config() -> dict:
    return resolve(yaml.safe_load((REPO / "config/config.yaml").read_text()))


def test_only_picks_studies_and_models():
    config = demo_config()
    assert oc.apply_only({**config, "only": None}) == []
    picked = copy.deepcopy(config)
    picked["only"] = "cancer_myth,coral"
    assert oc.apply_only(picked) == []
    assert oc.enabled_studies(picked) == ["cancer_myth", "coral"]
    # a model: only the studies that evaluate it run, and only it is evaluated there
    picked = copy.deepcopy(config)
    picked["only"] = ["demo-oracle-replay"]
    assert oc.apply_only(picked) == []
    assert oc.enabled_studies(picked) == ["guidelines"]
    assert oc.study_evaluated_models(picked, "guidelines") == ["demo-oracle-replay"]
    assert oc.study_judges(picked, "guidelines") == {"chooser": "smollm2", "generator": "smollm2"}
    picked = copy.deepcopy(config)
    picked["only"] = "cancer_myth,typo"
    defined = sorted(m["id"] for m in config["models"])
    assert oc.apply_only(picked) == [
        "only: 'typo' is neither a study (side_effects, cancer_myth, coral, guidelines) nor a "
        f"model id; defined: {defined}"
    ]


def test_cap_keeps_the_first_items_per_group(tmp_path):
    path = tmp_path / "notes.jsonl"
    rows = [{"id": i, "note_set": "labelled" if i < 4 else "unlabelled"} for i in range(7)]
    write_jsonl(path, rows)
    assert cap_jsonl(path, 2, group_by="note_set") == 4
    assert [r["id"] for r in read_jsonl(path)] == [0, 1, 4, 5]
    assert cap_jsonl(path, 3) == 3
    assert [r["id"] for r in read_jsonl(path)] == [0, 1, 4]
    assert cap_jsonl(path, None) == 3


def test_only_and_limit_from_the_command_line(workdir):
    """`--config only=cancer_myth limit=2`: one study, its first two questions, tables say so."""
    (workdir / "replay").mkdir()  # an empty replay: every answer is an error row, counted
    config = write_config(workdir, {"models": [dict(REPLAY, id="smollm2")]}, demo=False)
    demo = yaml.safe_load((REPO / "config/config.yaml").read_text())
    # SmolLM2 alone (its stored reference set and verdicts left out of this run).
    demo["studies"]["cancer_myth"].update(evaluate=["smollm2"], verifier_for=None)
    config.write_text(yaml.safe_dump({**demo, "models": [dict(REPLAY, id="smollm2")]}))
    jobs = dry_run_jobs(workdir, "--config", "only=cancer_myth", "limit=2", configfile=config)
    assert jobs["cancer_myth_prepare"] == 1
    assert not [r for r in jobs if r.split("_")[0] in ("side", "coral", "guidelines")]
    run_snakemake(workdir, "--config", "only=cancer_myth", "limit=2", configfile=config)
    items = list(read_jsonl(workdir / "results/cancer_myth/items.jsonl"))
    demo = json.loads((REPO / DEMO / "cancer_myth/questions.json").read_text())
    assert [i["question"] for i in items] == [q["example_question"] for q in demo[:2]]
    for md in (workdir / "results/cancer_myth/tables").glob("*.md"):
        assert "Capped run (limit=2)" in md.read_text(), md
    assert not (workdir / "results/side_effects").exists()


# ---------------------------------------------------------------- PHI on every route


def annotated_model_keys() -> set[str]:
    """Every key the schemas mark as naming a model (`x-names-model: true`)."""
    found = set()

    def walk(schema, prefix):
        for key, sub in (schema.get("properties") or {}).items():
            path = f"{prefix}{key}"
            if sub.get("x-names-model"):
                found.add(path)
            walk(sub, f"{path}.")

    walk(yaml.safe_load(SCHEMA.read_text()), "")
    for study in oc.STUDIES:
        walk(
            yaml.safe_load((REPO / f"config/schemas/{study}.schema.yaml").read_text()),
            f"studies.{study}.",
        )
    return found


def test_every_model_naming_key_is_known_to_the_check():
    listed = set(oc.TOP_MODEL_KEYS) | {
        f"studies.{s}.{k}" for s, keys in oc.STUDY_MODEL_KEYS.items() for k in keys
    }
    assert annotated_model_keys() == listed
    # a schema key whose description talks of a model id but is not marked would slip past
    for path in (SCHEMA, *sorted((REPO / "config/schemas").glob("*.yaml"))):
        text = path.read_text()
        for line in text.splitlines():
            if re.search(r"model id|Model (evaluated|writing|choosing|whose)", line):
                assert "x-names-model" in line or "x-names-model" in text, line


def phi_config(study: str, key: str) -> dict:
    """An enabled study with contains_phi, whose `key` alone names the API model, used."""
    config = resolve(user_config(study, REPO / DEMO))
    block = config["studies"][study]
    block["contains_phi"] = True
    if study == "cancer_myth":
        block["construct"] = True
        block["construction"].update(myths=str(REPO / DEMO / "cancer_myth/myths.jsonl"))
        block["judges"].update(classifier="m")
        block["construction"]["generators"] = ["m"]
    if study == "side_effects":
        block["matcher"]["method"] = "llm"
        block["judges"]["matcher"] = "m"
    config["models"].append(API)
    target = block
    *parents, leaf = key.split(".")
    for part in parents:
        target = target[part]
    target[leaf] = ["remote"] if isinstance(target.get(leaf), list) else "remote"
    return config


@pytest.mark.parametrize(
    "study,key",
    [(s, k) for s, keys in oc.STUDY_MODEL_KEYS.items() for k in keys],
)
def test_phi_reaches_no_unsafe_model_by_any_key(study, key):
    config = phi_config(study, key)
    routes = [r for r in oc.model_routes(config) if r.model == "remote"]
    assert routes, f"studies.{study}.{key} sends nothing to the model it names"
    problems = oc.config_problems(config, env=ENV)
    assert [p for p in problems if "phi_safe" in p] == [
        f"studies.{study}.{key}: 'remote' ({routes[0].role}) is not phi_safe, but "
        f"studies.{study}.contains_phi is true: PHI may not be sent to it. Set "
        "models[remote].phi_safe: true only if your data agreement allows this endpoint."
    ], problems
    # an unknown id in the same key is named by its key
    config = phi_config(study, key)
    config["models"] = [m for m in config["models"] if m["id"] != "remote"]
    assert any(
        p.startswith(f"studies.{study}.{key}: unknown model id 'remote'")
        for p in oc.config_problems(config, env=ENV)
    )


def test_generate_jobs_match_the_checked_routes(workdir):
    """The DAG's generate jobs are exactly the routes the check saw (common.smk refuses others):
    construction, review, judges and evaluation in one config."""
    config = yaml.safe_load((REPO / "config/config.yaml").read_text())
    config["studies"]["cancer_myth"].update(
        construct=True,
        construction={
            "myths": f"{DEMO}cancer_myth/myths.jsonl",
            "max_myths": 1,
            "generators": ["demo-noisy-replay"],
            "responder": "demo-oracle-replay",
        },
    )
    config["studies"]["coral"]["review"]["model"] = "demo-oracle-replay"
    config["studies"]["coral"]["evaluate"] = ["smollm2", "demo-oracle-replay"]
    path = write_config(workdir, config, demo=False)
    proc = run_snakemake(workdir, "-n", configfile=path)
    pairs = set(re.findall(r"results/(\w+)/responses/([a-z0-9._-]+)/", proc.stdout + proc.stderr))
    routes = {(r.study, r.model) for r in oc.model_routes(resolve(config))}
    assert pairs <= routes
    assert ("cancer_myth", "demo-noisy-replay") in pairs  # construction generator
    assert ("cancer_myth", "demo-oracle-replay") in pairs  # construction responder
    assert ("coral", "demo-oracle-replay") in pairs  # review model (evaluated too)


# ---------------------------------------------------------------- every config the docs name

# The demo's files of each data key: stand-ins for a user's data in the dry runs below.
DEMO_DATA = {
    "side_effects": {
        "profiles": f"{DEMO}side_effects/profiles.csv",
        "reference": f"{DEMO}side_effects/reference.tsv",
    },
    "cancer_myth": {
        "questions": f"{DEMO}cancer_myth/questions.json",
        "human_scores": f"{DEMO}cancer_myth/human_scores.json",
        "construction.myths": f"{DEMO}cancer_myth/myths.jsonl",
    },
    "coral": {
        "notes_dir": f"{DEMO}coral/notes",
        "metadata": f"{DEMO}coral/metadata.tsv",
        "review.sheet": f"{DEMO}coral/review_sheet_filled.tsv",
    },
    "guidelines": {
        "guideline": f"{DEMO}guidelines/guideline.json",
        "labelled_notes": f"{DEMO}guidelines/labelled_notes.jsonl",
        "unlabelled_notes": f"{DEMO}guidelines/unlabelled_notes.jsonl",
    },
}


def doc_configs() -> dict[str, list[dict]]:
    """Name -> the config files (as dicts, layered in order) of every config the docs name."""
    demo = yaml.safe_load((REPO / "config/config.yaml").read_text())
    out = {
        f"config/paper/{p.name}": [yaml.safe_load(p.read_text())]
        for p in sorted((REPO / "config/paper").glob("*.yaml"))
    }
    out["config/demo-construct.yaml"] = [
        demo,
        yaml.safe_load((REPO / "config/demo-construct.yaml").read_text()),
    ]
    docs = [REPO / "README.md", REPO / "config/README.md", *sorted((REPO / "docs").glob("**/*.md"))]
    for doc in docs:
        blocks = re.findall(r"```yaml\n(.*?)```", doc.read_text(), flags=re.S)
        for i, block in enumerate(blocks):
            out[f"{doc.relative_to(REPO)} yaml block {i}"] = [yaml.safe_load(block)]
    return out


def dummy_env(config: dict) -> dict:
    env = {}
    for model in config.get("models") or []:
        if model["backend"] == "openai":
            env[model.get("api_key_env") or "OPENAI_API_KEY"] = "sk-dummy"
            if model.get("azure"):
                env[model["azure"].get("endpoint_env") or "AZURE_OPENAI_ENDPOINT"] = "https://x"
    return env


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(doc_configs()))
def test_every_config_the_docs_name_builds_its_dag(name, workdir):
    layers = doc_configs()[name]
    merged = {}
    for layer in layers:
        merged = layered(merged, copy.deepcopy(layer))
    env = dummy_env(merged)
    # 1. as written, the only problems are the user's own data files being absent
    problems = oc.schema_problems(merged, SCHEMA)
    assert problems == [], problems
    problems = oc.config_problems(resolve(merged), env=env)
    assert all(oc.MISSING_FILE in p for p in problems), problems
    # 2. with stand-ins for those files, the DAG builds
    for study, keys in DEMO_DATA.items():
        block = (merged.get("studies") or {}).get(study)
        for dotted, demo_path in keys.items():
            *parents, leaf = dotted.split(".")
            target = block
            for part in parents:
                target = (target or {}).get(part)
            if target and target.get(leaf) and not Path(target[leaf]).exists():
                target[leaf] = demo_path
    path = workdir / "docs-config.yaml"
    path.write_text(yaml.safe_dump(merged))
    run_snakemake(workdir, "-n", configfile=path, env=env)
