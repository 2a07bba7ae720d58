"""`replay` backend: answers from stored texts instead of a model.

It re-scores outputs produced elsewhere (a secure enclave, a published release) without calling
any model, and makes workflow tests deterministic. ``path`` is either one JSONL file or a folder
holding ``{study}/{requestset}.jsonl`` or ``{requestset}.jsonl`` files. Each stored row has
``text`` and is found by ``request_id`` (``match_by: request_id``, the default) or by the exact
prompt (``match_by: prompt``: the row's ``messages`` list, or its ``prompt`` string compared with
the request's last user message). A request with no stored answer becomes an ``error`` row, and
so does a stored reply the provider filtered (``finish_reason: content_filter``); a stored
``refused: true`` is carried through.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from pathlib import Path

from ..core.errors import ConfigError, InputError
from ..core.io import files_sha256, iter_jsonl_lines, sha256_file
from ..core.records import Request, Response
from ..models.cache import canonical_json
from . import failures
from .base import BaseBackend, no_text_failure


@functools.lru_cache(maxsize=4096)
def _digest_of(path: str, size: int, mtime_ns: int) -> str:
    return sha256_file(path)[:16]


def _digest(path: Path) -> str:
    # Keyed by size and mtime: building a DAG asks for one file's digest once per job.
    stat = path.stat()
    return _digest_of(str(path), stat.st_size, stat.st_mtime_ns)


def _last_user_message(messages: list[dict]) -> str:
    users = [m["content"] for m in messages if m.get("role") == "user"]
    return users[-1] if users else ""


CONFIG_SCHEMA = {
    "properties": {
        "path": {
            "description": (
                "JSONL file of responses, or a folder of {requestset}.jsonl files (required, "
                "no default)."
            ),
            "type": "string",
        },
        "match_by": {
            "description": "How stored rows are found.",
            "enum": ["request_id", "prompt"],
            "default": "request_id",
        },
    },
    "required": ["path"],
}


class Backend(BaseBackend):
    name = "replay"
    CONFIG_SCHEMA = CONFIG_SCHEMA
    phi_safe_default = True  # stored texts; nothing leaves the machine
    # Replay has no model to cache; each job's signature holds the digest of the file it reads.
    cacheable = False
    replays = True
    input_keys = ("path",)  # the replayed answers are the run's inputs
    path_keys = input_keys

    @classmethod
    def job_resources(cls, cfg: dict, machine: dict) -> dict:
        return {"mem_mb": 1000, "runtime": 30}  # reads a file; no model

    @classmethod
    def config_problems(cls, cfg: dict, env=None) -> list[str]:
        path = cfg.get("path")
        if not path:
            return [f"models[{cfg['id']}].path: a replay model needs a file or folder of responses"]
        if not Path(path).exists():
            return [f"models[{cfg['id']}].path: {path} does not exist"]
        return []

    @classmethod
    def provenance(cls, cfg: dict, root) -> dict:
        return {
            **super().provenance(cfg, root),
            "replayed_files": files_sha256(cfg["path"], root),
            "note": "stored answers replayed, not a model",
        }

    @classmethod
    def answers_digest(cls, cfg: dict, study: str, requestset: str) -> str | None:
        """The content hash of the file this job reads ("none" when it has none).

        Part of the job's `generate` params: replacing or editing a replay file reruns the jobs
        that read it (and the tables below them), and no other.
        """
        path = Path(cfg["path"])
        if not path.exists():
            return "missing"
        source = cls._resolve(path, {"study": study, "requestset": requestset})
        return "none" if source is None else _digest(source)

    @classmethod
    def text_logprobs_problem(cls, cfg: dict) -> str | None:
        return None  # replays a stored row's ``token_logprobs`` (none stored: not answered)

    def __init__(self, cfg: dict, threads: int = 1, context: dict | None = None):
        cfg = self.filled(cfg)
        super().__init__(cfg, threads)
        self.match_by = cfg["match_by"]
        context = context or {}
        self.source = self._resolve(Path(cfg["path"]), context)
        self.by_id: dict[str, dict] = {}
        self.by_prompt: dict[str, dict] = {}
        if self.source is not None:
            first_line: dict[str, int] = {}
            for lineno, row in iter_jsonl_lines(self.source):
                if "request_id" in row:
                    rid = str(row["request_id"])
                    if rid in first_line:  # which answer to replay would be a guess
                        raise InputError(
                            self.source,
                            f"line {lineno} (request_id {rid!r})",
                            f"duplicate request_id (first on line {first_line[rid]})",
                        )
                    first_line[rid] = lineno
                    self.by_id[rid] = row
                if "messages" in row:
                    self.by_prompt[canonical_json(row["messages"])] = row
                if "prompt" in row:
                    self.by_prompt[str(row["prompt"])] = row

    @staticmethod
    def _resolve(path: Path, context: dict) -> Path | None:
        if path.is_file():
            return path
        if not path.is_dir():
            raise ConfigError(f"replay path {path} does not exist")
        name = f"{context.get('requestset', '')}.jsonl"
        for candidate in (path / context.get("study", "") / name, path / name):
            if candidate.is_file():
                return candidate
        return None  # no file for this request set: every request becomes an error row

    def _lookup(self, request: Request) -> dict | None:
        if self.match_by == "prompt":
            return self.by_prompt.get(canonical_json(request.messages)) or self.by_prompt.get(
                _last_user_message(request.messages)
            )
        return self.by_id.get(request.request_id)

    def generate(self, requests: list[Request]) -> Iterator[Response]:
        for request in requests:
            row = self._lookup(request)
            if row is None or not isinstance(row.get("text"), str):
                where = self.source or self.cfg["path"]
                yield Response(
                    request.request_id,
                    self.model_id,
                    None,
                    error=f"replay: no stored text for this request in {where}",
                    error_kind=failures.REPLAY,
                )
                continue
            finish = row.get("finish_reason", "stop")
            # A stored reply the provider filtered is no answer (base.no_text_failure).
            kind, problem = no_text_failure(row["text"], finish) or (None, None)
            yield Response(
                request.request_id,
                self.model_id,
                None if problem else row["text"],
                finish_reason=finish,
                prompt_tokens=row.get("prompt_tokens"),
                completion_tokens=row.get("completion_tokens"),
                latency_s=0.0,
                error=f"replay: {problem}" if problem else None,
                error_kind=kind,
                refused=bool(row.get("refused", False)),
                token_logprobs=row.get("token_logprobs"),
            )
