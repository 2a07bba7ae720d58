"""Results others can open and cite: per-item exports (inspect eval logs, Every Eval Ever
records), the reporting checklist, and the Workflow Run RO-Crate of a run.

Every part reads the run's existing outputs (``results/``) and the run's config; none calls a
model. A study marked ``contains_phi`` is exported as hashes and ids (``phi``) unless the config's
``report.include_phi_text`` asks for its text.
"""
