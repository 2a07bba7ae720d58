"""Clinician review: a planned sample of judged answers (plan), a blinded offline labelling page
(page, build), and the import of reviewers' label files as the study's human labels (importer).
docs/review.md describes it."""
