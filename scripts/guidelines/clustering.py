"""Appendix F: k-means on consistency features (logic: aggregate.clustering)."""

import pandas as pd

from oncoeval.io import setup_script_logging
from oncoeval.stats import BootstrapSettings
from oncoeval.studies.guidelines.aggregate import clustering

setup_script_logging(snakemake.log[0])
clustering(
    pd.read_csv(snakemake.input.rows, sep="\t", dtype={"patient_id": str}),
    int(snakemake.params.seed),
    BootstrapSettings.from_config({"bootstrap": snakemake.params.bootstrap}),
    snakemake.output.table,
    snakemake.output.table_md,
)
