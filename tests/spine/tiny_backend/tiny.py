"""`tiny`: a test-only backend, written as a new backend is (CONTRIBUTING.md, "Adding a backend").

It owns its facts like the real ones: its keys of a model entry, phi_safe by default, the
resources and threads of its jobs, one conversion of its weights file (``*.tiny``) that its
`generate` jobs wait for, the cost of its calls (a cent per 1,000 tokens, prompt or answer)
and its provenance (the weights file's name). It answers each request with its last user
message reversed.
"""

from __future__ import annotations

import json
from pathlib import Path

from oncoeval.backends.base import BaseBackend
from oncoeval.core.records import Response

CONFIG_SCHEMA = {
    "properties": {
        "weights": {"description": "A *.tiny file (required, no default).", "type": "string"},
        "speed": {"description": "Cores per job.", "type": "integer", "minimum": 1, "default": 3},
        "resources": {"$ref": "#/$defs/resources"},
    },
    "required": ["weights"],
}


def checkpoint_name(weights: str) -> str:
    return f"tiny-{Path(weights).stem}"


class Backend(BaseBackend):
    name = "tiny"
    CONFIG_SCHEMA = CONFIG_SCHEMA
    phi_safe_default = True
    converts = (".tiny",)

    @classmethod
    def job_resources(cls, cfg: dict, machine: dict) -> dict:
        return {"mem_mb": machine["mem_mb"] + 1, "runtime": 7}

    @classmethod
    def job_threads(cls, cfg: dict) -> int:
        return cls.filled(cfg)["speed"]

    @classmethod
    def conversions(cls, cfg: dict) -> dict[str, str]:
        return {checkpoint_name(cfg["weights"]): cfg["weights"]}

    @classmethod
    def extra_inputs(cls, cfg: dict) -> list[str]:
        return [f"results/models/{name}.json" for name in cls.conversions(cfg)]

    @classmethod
    def convert(cls, source: str, manifest: str, name: str) -> dict:
        info = {"source": source, "name": name, "converted_by": cls.name}
        Path(manifest).parent.mkdir(parents=True, exist_ok=True)
        Path(manifest).write_text(json.dumps(info) + "\n")
        return info

    @classmethod
    def cost_bounds(cls, cfg, prompt_tokens, max_new_tokens):
        return prompt_tokens / 1e5, (prompt_tokens + max_new_tokens) / 1e5

    @classmethod
    def provenance(cls, cfg: dict, root) -> dict:
        return {"weights_file": Path(cfg["weights"]).name}

    def generate(self, requests):
        for request in requests:
            text = [m["content"] for m in request.messages if m["role"] == "user"][-1]
            yield Response(request.request_id, self.model_id, text[::-1], finish_reason="stop")
