"""Figure 2: every proxy's agreement with the expert labels across models (logic: aggregate)."""

from oncoeval.io import setup_script_logging
from oncoeval.stats import BootstrapSettings
from oncoeval.studies.guidelines.aggregate import proxy_agreement

setup_script_logging(snakemake.log[0])
proxy_agreement(
    list(snakemake.input.proxy),
    snakemake.input.cross,
    snakemake.input.table1,
    BootstrapSettings.from_config({"bootstrap": snakemake.params.bootstrap}),
    dict(snakemake.output.items()),
)
