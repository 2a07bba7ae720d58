"""CancerGUIDE (guideline decision-tree path prediction): rollouts, proxy benchmarks, meta-classifier.

Modules: ``tree`` (guideline trees), ``notes`` (labelled and unlabelled notes), ``parse`` (model
answers to paths), ``metrics`` (path overlap, treatment match, self-consistency), ``consensus``
(cross-model labels), ``synthetic`` (synthetic supervision), ``proxies`` (the six proxy
benchmarks and their agreement with experts), ``metaclf`` (meta-classifier and clustering),
``divergence`` (error analysis), ``prompts`` (request sets).
"""
