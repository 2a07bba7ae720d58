"""Table 3 and Figure 3: self-consistency vs accuracy (logic: aggregate)."""

from oncoeval.io import setup_script_logging
from oncoeval.stats import BootstrapSettings
from oncoeval.studies.guidelines.aggregate import consistency_accuracy, load_scores

setup_script_logging(snakemake.log[0])
out = snakemake.output
consistency_accuracy(
    load_scores(dict(zip(snakemake.params.models, snakemake.input.scores, strict=True))),
    BootstrapSettings.from_config({"bootstrap": snakemake.params.bootstrap}),
    int(snakemake.params.bins),
    out.table,
    out.table_md,
    out.bins,
    out.bins_md,
    out.figure,
)
