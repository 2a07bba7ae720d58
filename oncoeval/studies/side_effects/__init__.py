"""Radiation side-effect stress test (Seah et al., CHIL 2026).

Stages: ``profiles`` and ``reference`` (prepare), ``prompts`` (requests), ``parse`` (bullet
lists), ``matchers`` (semantic matching), ``metrics`` (per-response scores), ``tables``
(bootstrap aggregates and figures), ``validation`` (matcher agreement).
"""
