"""Meta-classifier over held-out models, ROC curves (logic: aggregate, metaclf)."""

import pandas as pd

from oncoeval.io import setup_script_logging
from oncoeval.stats import BootstrapSettings
from oncoeval.studies.guidelines.aggregate import load_scores, meta_classifier, settings_from

setup_script_logging(snakemake.log[0])
sets = list(snakemake.params.feature_sets)
out = snakemake.output
figures = dict(zip(sets, out.roc, strict=True))
figures["feature_sets"] = out.roc_sets
meta_classifier(
    load_scores(dict(zip(snakemake.params.models, snakemake.input.scores, strict=True))),
    pd.read_csv(snakemake.input.features, sep="\t", dtype={"patient_id": str}),
    pd.read_csv(snakemake.input.proxy, sep="\t"),
    settings_from({"meta_classifier": snakemake.params.meta}),
    sets,
    BootstrapSettings.from_config({"bootstrap": snakemake.params.bootstrap}),
    {
        "table": out.table,
        "table_md": out.table_md,
        "predictions": out.predictions,
        "rows": out.rows,
    },
    figures,
)
