import functools
import sys
import time

from snakemake.utils import min_version

# This workflow's own folder comes first on sys.path, so that its oncoeval package is the one
# imported, also when another Snakefile uses it as a module (a snakedeploy deployment; there
# `workflow.basedir` is that Snakefile's folder, `workflow.current_basedir` this one's).
# Snakemake 9's `include` does the same for local Snakefiles, undocumented; this says it here.
sys.path.insert(0, workflow.current_basedir.get_path_or_uri(secret_free=True))

from oncoeval.workflow import waves
from oncoeval.workflow.calls import print_failed_calls

min_version("9.19")


# The demo config applies only when the user gives no --configfile: a user's config starts from
# the schema's documented defaults and inherits no demo data, token caps or judges.
if not workflow.overwrite_configfiles:

    configfile: "config/config.yaml"


report: "report/workflow.rst"


# Jobs' outcome records older than this run are not reported at its end.
RUN_STARTED = time.time()


include: "rules/common.smk"
include: "rules/generate.smk"
include: "rules/adhoc.smk"


# One rules file per registered study (oncoeval.studies.STUDIES): registering a study adds its rules.
for _study in oc.STUDIES:

    include: f"rules/{_study}.smk"


include: "rules/compare.smk"
include: "rules/exposure.smk"
include: "rules/report.smk"


rule all:
    default_target: True
    input:
        run_wf.final_targets(config),
        report_targets.report_targets(config, workflow.rules),


# A capped or subset run says so as its jobs start (and in every table, caption and summary).
# Once the DAG is built: the run's `generate` jobs per model and their waves, which a job that
# loads a local model's engine reads to answer the model's other ready request sets; jobs are
# ordered by wave, so that a wave's requests are all built when its first job loads the engine
# and answers them (oncoeval.workflow.waves).
onstart:
    if RUN_SCOPE:
        print(f"OncoEval: {RUN_SCOPE}")
    depths = waves.order_by_wave(workflow.dag)
    # On a cluster, one submission per local model and wave (split only to fit its runtime).
    waves.group_by_wave(
        workflow, depths, functools.partial(run_wf.model_cfg, config)
    )
    waves.write_plan(workflow.dag)


# The end of every run names the model calls that failed, per model and study, and prints the
# headline results, tokens and cost.
onsuccess:
    waves.retire_plan()
    print_failed_calls("logs", since=RUN_STARTED)
    print_run_end(".")


onerror:
    waves.retire_plan()
    print_failed_calls("logs", since=RUN_STARTED)
