"""The workflow's report: HTML tables, the summary page, per-item pages, provenance, estimates."""
