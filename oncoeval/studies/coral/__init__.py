"""CORAL study: zero-shot extraction from BRAT-annotated oncology notes (Sushil et al.).

Stages and files (rules/coral.smk):

- prepare (``prepare.py``, ``brat.py``, ``sections.py``, ``gold.py``): BRAT pairs validated
  against ``annotation.conf`` (pre-annotations skipped and counted) -> ``results/coral/items/
  notes.jsonl`` (metadata and section texts), ``items/sections.tsv`` (which sections were found)
  and ``gold/gold.tsv`` (``view, doc_id, section, subtype, field, value`` plus ``tuple_index,
  primary, field_value``; one row per scored pair string ``value = "<primary> <field_value>"``
  per gold derivation, ``view`` published or clean).
- prompt (``prepare.build_requests``): one request per note, section and subtype, the section
  text first and then the supplement's prompt; one request set ``extraction`` for every model.
- parse (``parse.py``, ``scoring.parsed_rows``): ``parsed/{model}.tsv``, one row per parsed
  (tuple, field, value) with ``status`` ok, or a ``failed`` / ``error`` / ``empty`` row with its
  reason, so every answer is accounted for.
- score (``scoring.py``, ``metrics.py``): ``scores/{model}.tsv``, one row per unit and gold
  view; units of failed calls are ``unscored``.
- aggregate (``aggregate.py``) and expert review (``review.py``): tables and figures.
"""
