"""A backend owns its facts: adding one is its module plus one registry line (issue #18, item 3).

The test-only backend `tiny` (tests/spine/tiny_backend/tiny.py) is registered the way a new
backend is, by one entry in ``BACKEND_MODULES``, and nothing else of the code base names it: the
config schema and its defaults, phi_safe, the generate job's resources, threads and inputs, and
the conversion its jobs wait for all come from its module.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from oncoeval import backends
from oncoeval.backends.base import LOCAL_MODEL_KEYS
from oncoeval.config import checks as oc
from oncoeval.core.io import write_jsonl
from oncoeval.core.schema import raw_config_schema
from oncoeval.report import estimate, provenance
from tests.conftest import REPO, run_snakemake, write_config
from tests.spine.test_study_contract import repeated_defaults, schema_defaults

TINY_DIR = Path(__file__).resolve().parent / "tiny_backend"
TINY = {"id": "t", "backend": "tiny", "weights": "w/small.tiny"}


@pytest.fixture
def tiny_registered(monkeypatch):
    monkeypatch.syspath_prepend(str(TINY_DIR))
    monkeypatch.setitem(backends.BACKEND_MODULES, "tiny", "tiny")


def test_the_schema_of_a_registered_backend_comes_from_its_module(tiny_registered):
    assert oc.schema_problems({"models": [TINY]}) == []
    config = {"models": [dict(TINY)]}
    oc.fill_config_defaults(config)
    assert config["models"][0]["speed"] == 3  # the module's default
    problems = oc.schema_problems(
        {"models": [{"id": "t", "backend": "tiny", "speed": 0, "path": "x"}]}
    )
    assert any(p.startswith("models[0]: 'weights' is a required property") for p in problems)
    assert any(p.startswith("models[0].speed: 0 is less than the minimum of 1") for p in problems)
    # `path` is no key of tiny's (it is of hf's): refused as for any backend
    (problem,) = oc.schema_problems({"models": [{**TINY, "path": "x"}]})
    assert problem == "models[0]: Unevaluated properties are not allowed ('path' was unexpected)"


def test_an_unregistered_backend_is_refused_by_the_schema():
    problems = oc.schema_problems({"models": [TINY]})
    assert "models[0].backend: 'tiny' is not one of ['hf', 'openai', 'replay', 'vllm']" in problems


def test_phi_default_resources_and_threads_come_from_the_backend(tiny_registered):
    assert oc.models_by_id({"models": [TINY]})["t"]["phi_safe"] is True
    assert oc.phi_safe_default("openai") is False and oc.phi_safe_default("nope") is False
    # the machine block's schema defaults (mem_mb 4000) reach the backend, which decides
    assert oc.generate_resources(TINY) == {"mem_mb": 4001, "runtime": 7}
    assert oc.generate_resources({**TINY, "resources": {"mem_mb": 500}})["mem_mb"] == 501
    assert oc.generate_threads(TINY) == 3
    assert backends.extra_inputs(TINY) == ["results/models/tiny-small.json"]
    assert backends.conversions({"t": TINY}) == {"tiny-small": "w/small.tiny"}


def test_the_estimate_and_the_provenance_ask_the_backend(tiny_registered, tmp_path):
    write_jsonl(
        tmp_path / "results" / "s" / "requests" / "r.jsonl",
        # 400 characters of one word; at most 50 new tokens
        [{"request_id": "a", "messages": [{"role": "user", "content": "x" * 400}]}],
    )
    row, *totals = estimate.estimate_rows(
        [("s", "t", "r")], {"t": {**TINY, "max_new_tokens": 50}}, tmp_path
    )
    assert [t["study"] for t in totals] == ["all", "all"]  # the model's total, the overall one
    # a cent per 1,000 tokens: at least 1 token (one word) -> $0.00001; at most 407 (400 bytes
    # and the chat format's 7) and 50 new -> $0.00457
    assert (row["cost_min_usd"], row["cost_max_usd"]) == (
        pytest.approx(0.00001),
        pytest.approx(0.00457),
    )
    record = provenance.model_record(TINY, tmp_path)
    assert record["backend"] == "tiny" and record["weights_file"] == "small.tiny"


def test_a_workflow_run_converts_generates_and_schedules_through_the_backend(workdir, tmp_path):
    """Through Snakemake, with `tiny` registered in every process of the run (sitecustomize):
    the generate job waits for tiny's conversion, asks for tiny's resources and threads, and
    answers with tiny's model."""
    weights = tmp_path / "small.tiny"
    weights.write_text("tiny weights\n")
    requests = tmp_path / "req.jsonl"
    requests.write_text(
        '{"request_id": "q1", "messages": [{"role": "user", "content": "abc"}], "params": {}}\n'
    )
    config = {
        "models": [{**TINY, "weights": str(weights)}],
        "evaluate": ["t"],
        "adhoc": {"try": str(requests)},
    }
    cfg = write_config(workdir, config)
    env = {
        "PYTHONPATH": os.pathsep.join([str(TINY_DIR), str(REPO), os.environ.get("PYTHONPATH", "")])
    }
    target = "results/adhoc/responses/t/try.jsonl"
    # (a dry run with 3 cores, so that Snakemake does not cap tiny's 3 threads)
    dry = run_snakemake(workdir, "-n", "--cores", "3", target, configfile=cfg, env=env)
    out = dry.stdout + dry.stderr
    generate = out[out.index("rule generate:") :].split("\n\n")[0]
    assert "results/models/tiny-small.json" in generate, generate
    assert re.search(r"threads: 3\b", generate) and "mem_mb=4001" in generate, generate
    assert "runtime=7" in generate and "gpu=0" in generate, generate
    convert = out[out.index("rule convert_model:") :].split("\n\n")[0]
    assert str(weights) in convert, convert

    run_snakemake(workdir, target, configfile=cfg, env=env)
    manifest = json.loads((workdir / "results/models/tiny-small.json").read_text())
    assert manifest == {"source": str(weights), "name": "tiny-small", "converted_by": "tiny"}
    (row,) = [json.loads(line) for line in (workdir / target).read_text().splitlines()]
    assert row["request_id"] == "q1" and row["text"] == "cba" and row["model"] == "t"


def generic_files() -> list[Path]:
    """Every file of the code base outside oncoeval/backends/: the package, the rules, the
    Snakefile and the scripts."""
    package = [
        p
        for p in sorted((REPO / "oncoeval").rglob("*.py"))
        if p.relative_to(REPO / "oncoeval").parts[0] != "backends"
    ]
    rules = sorted((REPO / "rules").glob("*.smk"))
    return package + rules + [REPO / "Snakefile"] + sorted((REPO / "scripts").glob("*.py"))


def code_of(path: Path) -> str:
    return "\n".join(line.split("#")[0] for line in path.read_text(encoding="utf-8").splitlines())


def test_no_backend_is_named_outside_its_module_and_the_registry():
    """No code outside oncoeval/backends/ names a backend: what differs between backends is
    asked of them (their facts: ``deployment``, ``replays``, ``shares_engine``...)."""
    modules = [m.rsplit(".", 1)[1] for m in backends.BACKEND_MODULES.values()]
    # "replay" is also a word (a replay's folder, a failure's kind): only compared it is a name.
    names = sorted({n for n in [*backends.BACKEND_MODULES, *modules] if n != "replay"})
    files = generic_files()
    assert len(files) > 100  # every file, not a chosen few
    for path in files:
        code = code_of(path)
        named = [
            n for n in names if re.search(rf"[\"']{n}[\"']|backends\.{n}\b|\b{n}_backend\b", code)
        ]
        named += re.findall(r"[=!]=\s*[\"'](replay)[\"']|[\"'](replay)[\"']\s*[=!]=", code)
        assert not named, f"{path.relative_to(REPO)} names backends {named}"


def test_every_backend_declares_its_keys_with_descriptions():
    for name, backend in backends.backends().items():
        keys = backend.CONFIG_SCHEMA["properties"]
        assert keys, name
        for key, sub in keys.items():
            assert "description" in sub or "$ref" in sub, f"{name}.{key} has no description"


#: (file, key) pairs of the generic code that may name a backend's key, and why.
KEY_EXEMPT = {
    # provenance.json's field every backend's record has (BaseBackend.provenance)
    ("oncoeval/export/checklist.py", "revision"),
}


def test_the_generic_code_names_no_key_of_a_backend():
    """What only some backends have (quantization, concurrency, dtype, reasoning...) is read by
    those backends: the spend cap asks for ``spend_round``, provenance for ``decoding_keys``."""
    generic_keys = set(raw_config_schema()["$defs"]["model"]["properties"]) | {"resources"}
    own = set()
    for backend in backends.backends().values():
        own |= set(backend.CONFIG_SCHEMA["properties"]) - generic_keys
    own -= {"model", "path"}  # openai's and the local models' keys, and words every file uses
    for path in generic_files():
        name = path.relative_to(REPO).as_posix()
        code = code_of(path)
        named = sorted(
            k for k in own if re.search(rf"[\"']{k}[\"']", code) and (name, k) not in KEY_EXEMPT
        )
        assert not named, f"{name} reads backend keys {named}"


def test_no_backend_default_is_repeated_in_the_package():
    """A backend reads its filled entry (``filled``); no schema default is written twice."""
    hits = {}
    for name, backend in backends.backends().items():
        defaults = schema_defaults(backend.CONFIG_SCHEMA)
        for path in sorted((REPO / "oncoeval").rglob("*.py")):
            found = repeated_defaults(path.read_text(encoding="utf-8"), defaults)
            if found:
                hits[f"{name}: {path.relative_to(REPO)}"] = found
    assert not hits, hits


def test_local_model_backends_share_one_schema_fragment():
    hf, vllm = backends.get_backend("hf"), backends.get_backend("vllm")
    for key in LOCAL_MODEL_KEYS:
        if key != "path":  # hf also takes embedded:NAME, and says so
            assert hf.CONFIG_SCHEMA["properties"][key] == vllm.CONFIG_SCHEMA["properties"][key]
            assert hf.CONFIG_SCHEMA["properties"][key] == LOCAL_MODEL_KEYS[key]
