"""How a config's study block and judge roles are read: plain reads of the config as written
or as rules/common.smk filled it, with nothing to import from the config checks.

The studies' own workflow modules read their block through here, so a study sits below the
config checks (oncoeval.config.checks, which reads the studies' declarations) and the floors
point one way (CONTRIBUTING.md: the floors).
"""

from __future__ import annotations


def study_block(config: dict, study: str) -> dict:
    """The study's block of ``config`` (the one way to read it): as written, or, once
    rules/common.smk filled it, with every schema default; {} when the config has none."""
    return (config.get("studies") or {}).get(study) or {}


def study_evaluated_models(config: dict, study: str) -> list[str]:
    """The models evaluated by a study: its own ``evaluate`` list, else the global one."""
    return list(study_block(config, study).get("evaluate") or config.get("evaluate") or [])


def judge_ids(value) -> list[str]:
    """The model ids behind one judge role: one id, or a jury's list."""
    return [value] if isinstance(value, str) else list(value or [])
