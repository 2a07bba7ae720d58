import time

from snakemake.utils import min_version

from oncoeval.calls import print_failed_calls

min_version("9.0")


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
include: "rules/report.smk"


rule all:
    default_target: True
    input:
        get_final_output(),
        report_targets(),


# A capped or subset run says so as its jobs start (and in every table, caption and summary).
onstart:
    if RUN_SCOPE:
        print(f"OncoEval: {RUN_SCOPE}")


# The end of every run names the model calls that failed, per model and study, and prints the
# headline results, tokens and cost.
onsuccess:
    print_failed_calls("logs", since=RUN_STARTED)
    print_run_end(".")


onerror:
    print_failed_calls("logs", since=RUN_STARTED)
