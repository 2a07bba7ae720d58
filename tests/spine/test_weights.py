"""Local models' weights staged once, before any job loads them (oncoeval.backends.weights)."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
from conftest import run_snakemake, write_config

from oncoeval.backends import weights
from oncoeval.report.provenance import model_record

COMMIT = "a" * 40
TEMPLATE = "{% for m in messages %}{{ m['content'] }}{% endfor %}"


def hub_model(cache: Path, repo: str = "org/tiny") -> Path:
    """A model in the layout of the Hugging Face cache: snapshot files link to blobs named by
    their sha256 (large files) and a ref names the commit of `main`."""
    root = cache / f"models--{repo.replace('/', '--')}"
    snapshot = root / "snapshots" / COMMIT
    snapshot.mkdir(parents=True)
    (root / "blobs").mkdir()
    (root / "refs").mkdir()
    (root / "refs" / "main").write_text(COMMIT)
    files = {
        "model.safetensors": b"weights " * 100,
        "tokenizer.json": b'{"model": {}}',
        "tokenizer_config.json": json.dumps({"chat_template": TEMPLATE}).encode(),
    }
    for name, content in files.items():
        blob = root / "blobs" / hashlib.sha256(content).hexdigest()
        blob.write_bytes(content)
        (snapshot / name).symlink_to(os.path.relpath(blob, snapshot))
    return snapshot


@pytest.fixture
def hub(tmp_path, monkeypatch):
    cache = tmp_path / "hub"
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("ONCOEVAL_MODEL_STORE", str(tmp_path / "store"))
    return cache


def test_a_hub_model_is_staged_with_its_commit_and_the_hashes_of_its_files(hub):
    snapshot = hub_model(hub)
    cfg = {"id": "tiny", "backend": "hf", "path": "org/tiny"}
    record = weights.stage(cfg)
    assert record["revision"] == COMMIT and record["folder"] == str(snapshot)
    content = (snapshot / "model.safetensors").read_bytes()
    assert record["weights"] == {
        "model.safetensors": {"size": len(content), "sha256": hashlib.sha256(content).hexdigest()}
    }
    assert set(record["tokenizer_sha256"]) == {"tokenizer.json", "tokenizer_config.json"}
    assert record["chat_template_sha256"] == hashlib.sha256(TEMPLATE.encode()).hexdigest()
    # The same model pinned to its commit stages the same; another commit is not in the cache.
    assert weights.stage({**cfg, "revision": COMMIT})["weights"] == record["weights"]
    with pytest.raises(weights.WeightsError, match=r"'tiny': org/tiny: not in the local .*b{40}"):
        weights.stage({**cfg, "revision": "b" * 40})


def test_a_hub_file_changed_since_its_revision_fails_naming_the_model_and_the_file(hub):
    snapshot = hub_model(hub)
    blob = (snapshot / "model.safetensors").resolve()
    blob.write_bytes(b"weights edited in place")
    cfg = {"id": "tiny", "backend": "vllm", "path": "org/tiny", "revision": COMMIT}
    with pytest.raises(weights.WeightsError) as err:
        weights.stage(cfg)
    assert str(err.value).startswith(f"model 'tiny': {snapshot / 'model.safetensors'}: ")
    assert f"differs from revision {COMMIT}" in str(err.value)


def half_sharded(folder: Path) -> None:
    """Weights in two shards by their index, of which only the first is there."""
    (folder / "model-00001-of-00002.safetensors").write_bytes(b"one")
    index = {
        "weight_map": {
            "a": "model-00001-of-00002.safetensors",
            "b": "model-00002-of-00002.safetensors",
        }
    }
    (folder / "model.safetensors.index.json").write_text(json.dumps(index))


def test_a_shard_listed_in_the_index_but_missing_fails_naming_it(tmp_path, monkeypatch):
    monkeypatch.setenv("ONCOEVAL_MODEL_STORE", str(tmp_path / "store"))
    folder = tmp_path / "llama"
    folder.mkdir()
    half_sharded(folder)
    cfg = {"id": "llama", "backend": "hf", "path": str(folder)}
    with pytest.raises(
        weights.WeightsError, match=r"model 'llama': .*model-00002-of-00002\.safetensors: missing"
    ):
        weights.stage(cfg)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(weights.WeightsError, match="no weights file"):
        weights.stage({**cfg, "path": str(empty)})


def test_the_staged_record_goes_into_the_models_provenance(hub, tmp_path):
    hub_model(hub)
    cfg = {"id": "tiny", "backend": "vllm", "path": "org/tiny"}
    path = tmp_path / weights.record_path("tiny")
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(weights.stage(cfg)))
    assert model_record(cfg, tmp_path)["staged_weights"]["revision"] == COMMIT
    assert "staged_weights" not in model_record({**cfg, "id": "other"}, tmp_path)


@pytest.mark.slow
def test_a_missing_weights_file_fails_the_run_before_any_generate_job(workdir, tmp_path):
    folder = tmp_path / "local-model"
    folder.mkdir()
    half_sharded(folder)
    requests = tmp_path / "q.jsonl"
    requests.write_text(
        json.dumps({"request_id": "q0", "messages": [{"role": "user", "content": "hi"}]}) + "\n"
    )
    config = {
        "models": [{"id": "mine", "backend": "vllm", "path": str(folder)}],
        "evaluate": ["mine"],
        "adhoc": {"try": str(requests)},
    }
    proc = run_snakemake(
        workdir, "--show-failed-logs", configfile=write_config(workdir, config), check=False
    )
    assert proc.returncode != 0
    out = proc.stdout + proc.stderr
    assert "rule stage_weights" in out and "rule generate" not in out, out[-4000:]
    assert f"model 'mine': {folder / 'model-00002-of-00002.safetensors'}: missing" in out
    assert not (workdir / "logs" / "adhoc" / "generate").exists()
