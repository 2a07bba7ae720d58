"""The optional `vllm` backend: refused clearly where vLLM is missing, never imported early."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

from oncoeval.backends import get_backend
from oncoeval.backends.vllm_offline import sampling_kwargs
from oncoeval.errors import ConfigError

CFG = {
    "id": "llama8b",
    "backend": "vllm",
    "path": "/models/llama-3-8b-instruct",
    "dtype": "bfloat16",
    "gpu_memory_utilization": 0.85,
    "max_model_len": 4096,
}


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="vllm is installed")
def test_vllm_backend_is_refused_with_a_clear_message_where_vllm_is_missing():
    with pytest.raises(ConfigError) as refused:
        get_backend("vllm")(CFG, threads=1)
    message = str(refused.value)
    assert "models[llama8b].backend" in message
    assert "pip install 'oncoeval[vllm]'" in message


def test_looking_up_the_backend_does_not_import_vllm():
    code = (
        "import sys; from oncoeval.backends import get_backend; "
        "get_backend('vllm').identity({'id': 'x', 'backend': 'vllm', 'path': 'p'}); "
        "print('vllm' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_memory_settings_are_not_part_of_the_model_identity():
    identity = get_backend("vllm").identity(CFG)
    assert "gpu_memory_utilization" not in identity and "max_model_len" not in identity
    assert identity["path"] == CFG["path"] and identity["dtype"] == "bfloat16"


def test_greedy_requests_carry_no_seed_and_sampled_ones_their_own():
    assert sampling_kwargs({"temperature": 0, "max_new_tokens": 5, "seed": 9}) == {
        "max_tokens": 5,
        "temperature": 0.0,
    }
    sampled = sampling_kwargs({"temperature": 0.7, "top_p": 0.9, "seed": 9, "stop": "##"})
    assert sampled["seed"] == 9 and sampled["top_p"] == 0.9 and sampled["stop"] == ["##"]
