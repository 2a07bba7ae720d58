"""Cancer-Myth (Zhu et al.): patient questions with false presuppositions.

Evaluation: responders answer each question zero-shot, a verifier model scores each answer -1/0/1
(Figure 13), and PCS/PCR are reported overall, by category and by generator. Construction (opt-in):
a generator / responder / verifier loop over myths with per-generator example pools, then
categorisation and Algorithm 1 label balancing.
"""
