# The coral study (CORAL): BRAT notes -> gold + requests -> generate -> parsed tuples -> per-unit
# scores -> tables, figures and the expert-review sheet. Logic: oncoeval/studies/coral/.

from oncoeval.studies.coral import workflow as coral_wf

# The coral block with its schema defaults filled in.
CORAL = coral_wf.settings(study_block("coral"))


localrules:
    coral_prepare,
    coral_requests,
    coral_parse,
    coral_score,
    coral_aggregate,
    coral_review_sheet,
    coral_review_table,


rule coral_prepare:
    input:
        notes=lambda wc: (
            coral_wf.note_files(CORAL["notes_dir"]) if CORAL["notes_dir"] else []
        ),
        conf=CORAL["annotation_conf"],
        metadata=[CORAL["metadata"]] if CORAL["metadata"] else [],
    output:
        notes_items="results/coral/items/notes.jsonl",
        sections="results/coral/items/sections.tsv",
        gold="results/coral/gold/gold.tsv",
    log:
        "logs/coral/prepare.log",
    conda:
        "../envs/cpu.yaml"
    params:
        notes_dir=CORAL["notes_dir"],
        sections=CORAL["sections"],
        limit=ITEM_LIMIT,
    script:
        "../scripts/coral/prepare.py"


rule coral_requests:
    input:
        notes_items="results/coral/items/notes.jsonl",
        system=coral_wf.prompt_files([])["system"],
        template=coral_wf.prompt_files([])["template"],
        tasks=coral_wf.prompt_files(CORAL["subtypes"])["tasks"],
    output:
        "results/coral/requests/extraction.jsonl",
    log:
        "logs/coral/requests.log",
    conda:
        "../envs/cpu.yaml"
    params:
        subtypes=CORAL["subtypes"],
        max_new_tokens=CORAL["max_new_tokens"],
        temperature=CORAL["temperature"],
    script:
        "../scripts/coral/requests.py"


rule coral_parse:
    input:
        "results/coral/responses/{model}/extraction.jsonl",
    output:
        "results/coral/parsed/{model}.tsv",
    log:
        "logs/coral/parse/{model}.log",
    conda:
        "../envs/cpu.yaml"
    script:
        "../scripts/coral/parse.py"


rule coral_score:
    input:
        parsed="results/coral/parsed/{model}.tsv",
        gold="results/coral/gold/gold.tsv",
    output:
        "results/coral/scores/{model}.tsv",
    log:
        "logs/coral/score/{model}.log",
    conda:
        "../envs/cpu.yaml"
    script:
        "../scripts/coral/score.py"


rule coral_aggregate:
    input:
        scores=lambda wc: expand(
            "results/coral/scores/{model}.tsv", model=evaluated_models("coral")
        ),
        notes_items="results/coral/items/notes.jsonl",
    output:
        tables=expand(
            "results/coral/tables/{table}.{ext}",
            table=coral_wf.TABLES,
            ext=["tsv", "md"],
        ),
        figures=expand("results/coral/figures/{figure}.png", figure=coral_wf.FIGURES),
    log:
        "logs/coral/aggregate.log",
    conda:
        "../envs/cpu.yaml"
    params:
        models=lambda wc: evaluated_models("coral"),
        bootstrap=config["bootstrap"],
    script:
        "../scripts/coral/aggregate.py"


rule coral_review_sheet:
    input:
        "results/coral/parsed/{model}.tsv",
    output:
        "results/coral/review/{model}_sheet.xlsx",
    log:
        "logs/coral/review_sheet/{model}.log",
    conda:
        "../envs/cpu.yaml"
    script:
        "../scripts/coral/review_sheet.py"


rule coral_review_table:
    input:
        sheet=lambda wc: CORAL["review"]["sheet"],
    output:
        tsv="results/coral/tables/expert_review.tsv",
        md="results/coral/tables/expert_review.md",
    log:
        "logs/coral/review_table.log",
    conda:
        "../envs/cpu.yaml"
    script:
        "../scripts/coral/review_table.py"


STUDY_TARGETS["coral"] = lambda: coral_wf.targets(CORAL, evaluated_models("coral"))
