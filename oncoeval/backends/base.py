"""Shared base class for backends (see the package docstring for the interface)."""

from __future__ import annotations

from collections.abc import Iterator

from ..records import Request, Response


class BaseBackend:
    name = "base"

    #: model-config keys that never change a response (operational settings); everything else
    #: in the model's entry is identity.
    operational_keys: frozenset[str] = frozenset(
        {"id", "phi_safe", "resources", "threads", "max_failed_share"}
    )

    @classmethod
    def identity(cls, cfg: dict) -> dict:
        return {k: v for k, v in sorted(cfg.items()) if k not in cls.operational_keys}

    @classmethod
    def config_problems(cls, cfg: dict, env=None) -> list[str]:
        return []

    @classmethod
    def answers_digest(cls, cfg: dict, study: str, requestset: str) -> str | None:
        """Digest of stored answers served for one job (replay); None for models."""
        return None

    #: False for backends whose answers are not model calls (replay): they bypass the cache.
    cacheable = True

    def __init__(self, cfg: dict, threads: int = 1, context: dict | None = None):
        self.cfg = cfg
        self.model_id = cfg["id"]
        self.threads = threads
        self.context = context or {}

    def generate(self, requests: list[Request]) -> Iterator[Response]:
        raise NotImplementedError

    def close(self) -> None:
        """Release the model or client; called once at the end of a job."""
