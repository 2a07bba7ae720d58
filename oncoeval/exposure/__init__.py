"""The exposure audit: has an evaluated model seen a study's test items?

Black-box probes built from the study's own items (``probes``), the same probes on perturbed
copies the model cannot have seen (the controls), each answer scored (``scoring``), and per
model and probe the share of items that beat the controls' 95th percentile with its interval
and a verdict (``audit``). docs/exposure.md says what the audit can and cannot show.
"""

# The report's caption of results/{study}/figures/exposure.png (oncoeval.exposure.figure).
FIGURE_CAPTION = (
    "Exposure probe scores per model: each dot is one item (blue) or its perturbed control "
    "(grey), jittered sideways; the black bar is the controls' 95th percentile, which an item "
    "must beat to be flagged; each label gives flagged/n and the verdict."
)
