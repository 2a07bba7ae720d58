"""CancerGUIDE (guideline decision-tree path prediction): rollouts, proxy benchmarks, meta-classifier.

The study's shape (oncoeval.studies.contract): ``workflow`` (result paths, declared outputs,
final targets, rule helpers) and one module per stage, ``prepare``, ``requests`` (also the
synthetic-supervision request sets), ``parse`` (model answers to paths), ``score`` (per-note
scores, per-model proxies, the synthetic benchmark) and ``aggregate`` (tables and figures).
Helpers: ``tree`` (guideline trees), ``notes`` (labelled and unlabelled notes), ``metrics``
(path overlap, treatment match, self-consistency), ``consensus`` (cross-model labels),
``synthetic`` (synthetic supervision), ``proxies`` (the six proxy benchmarks and their agreement
with experts), ``metaclf`` (meta-classifier and clustering), ``divergence`` (error analysis),
``compliance``, ``prompts`` (request sets).
"""
