"""Radiation side-effect stress test (Seah et al., CHIL 2026).

The study contract (oncoeval.studies.contract): ``workflow`` (the rules' side), then one module
per stage: ``prepare``, ``requests``, ``parse`` (bullet lists), ``score`` (matching and
per-response scores), ``aggregate`` (bootstrap tables and figures). Helpers: ``profiles`` and
``reference`` (loaders), ``aliases``, ``prompts``, ``matchers`` (semantic matching), ``metrics``,
``validation`` (matcher agreement) and ``reference_replay``.
"""
