"""CORAL study: zero-shot extraction from BRAT-annotated oncology notes (Sushil et al.).

Stages, their rules (rules/coral.smk, ``coral_<stage>``) and files (``workflow.paths`` and
``workflow.OUTPUTS``):

- prepare (``prepare.py``, ``brat.py``, ``sections.py``, ``gold.py``): BRAT pairs validated
  against ``annotation.conf`` (pre-annotations skipped and counted) -> ``results/coral/items/
  notes.jsonl`` (metadata and section texts), ``items/sections.tsv`` (which sections were found)
  and ``gold/gold.tsv`` (``view, doc_id, section, subtype, field, value`` plus ``tuple_index,
  primary, field_value``; one row per scored pair string ``value = "<primary> <field_value>"``
  per gold derivation, ``view`` published or clean).
- requests (``requests.py``): one request per note, section and subtype, the section
  text first and then the supplement's prompt; one request set ``extraction`` for every model.
- parse (``parse.py``): ``parsed/{model}.tsv``, one row per parsed
  (tuple, field, value) with ``status`` ok, or a ``failed`` / ``error`` / ``empty`` row with its
  reason, so every answer is accounted for.
- score (``score.py``, ``metrics.py``): ``scores/{model}.tsv``, one row per unit and gold
  view; units of failed calls are ``unscored``.
- aggregate (``aggregate.py``): tables and figures.
- expert review (``review.py``): ``coral_review_requests`` writes the review model's sheet,
  ``coral_review_parse`` reads the filled sheet back into ``tables/expert_review``.
"""
