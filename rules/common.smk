"""Python side of the workflow: the config checked and filled, and the run's models.

The helpers the rules call (targets, a job's model and resources, comparison inputs) are in
oncoeval/workflow/dag.py and oncoeval/workflow/report.py; rules call them with `config`.
"""

import os

from snakemake.utils import min_version

from oncoeval.config import checks as oc
from oncoeval.core import layout
from oncoeval.workflow import dag as run_wf
from oncoeval.core.source import SOURCE

min_version("9.19")


# Every problem of the config is reported at once, before any job; a clean config is filled
# with every schema default, narrowed by `only=` and sorted (oncoeval.workflow.dag.settle_config).
# The schema is config/config.schema.yaml with each backend's part (oncoeval.config.checks.config_schema).
# The config files are read again first, strictly (duplicate keys, tags, size, alias
# expansion; oncoeval.config.files): Snakemake's own reader lets those pass.
_problems = oc.config_file_problems(workflow.configfiles) or run_wf.settle_config(
    config
)
if _problems:
    raise WorkflowError(f"config: {oc.format_problems(_problems)}")
MODELS = oc.models_by_id(config)
# The (study, model) pairs whose data routes were checked above; `generate` refuses any other.
GENERATE_ROUTES = {(r.study, r.model) for r in oc.model_routes(config)}
# A capped run (limit=N) says so in every table it writes (oncoeval.core.io.write_table).
oc.export_item_limit(config)
ITEM_LIMIT = oc.item_limit(config)

# The GGUF conversion store is shared by every hf job of the run.
os.environ.setdefault("ONCOEVAL_MODEL_STORE", config["model_store"])

# Scripts import the oncoeval package of this workflow's source (oncoeval.core.source; not
# `workflow.basedir`, which is the deploying Snakefile's folder when this runs as a module), in
# the venv, in `--sdm conda` envs (which do not install it) and in SLURM jobs (sbatch
# --export=ALL passes the variable on).
oc.put_first_on_pythonpath(str(SOURCE))

# Ad-hoc request sets are a study in file names and wildcards (rules/adhoc.smk).
STUDY_NAMES = list(oc.STUDIES) + [run_wf.ADHOC]
# Every results path comes from oncoeval.core.layout; this one's `{study}` is the rules' wildcard.
ANY_STUDY = layout.ResultPaths("{study}")


wildcard_constraints:
    study="|".join(STUDY_NAMES),
    model="|".join(sorted(MODELS)) or "NO_MODELS",
    requestset=r"[A-Za-z0-9._-]+",
