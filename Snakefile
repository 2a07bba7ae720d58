from snakemake.utils import min_version

min_version("9.0")


configfile: "config/config.yaml"


report: "report/workflow.rst"


include: "rules/common.smk"
include: "rules/generate.smk"
include: "rules/adhoc.smk"
include: "rules/side_effects.smk"
include: "rules/cancer_myth.smk"
include: "rules/coral.smk"
include: "rules/guidelines.smk"
include: "rules/report.smk"


rule all:
    default_target: True
    input:
        get_final_output(),
        report_targets(),


onsuccess:
    print(terminal_summary("."))
