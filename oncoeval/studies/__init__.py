"""One subpackage per study: its loaders, prompts, parsers, metrics and tables.

``STUDIES`` is the registry: the one list of studies. The workflow, the config checks, the report
and the tests all take their study list from it, so a study is registered by one line here.
"""

import importlib
from types import ModuleType

STUDIES = ("side_effects", "cancer_myth", "coral", "guidelines")


def study_workflow(study: str) -> ModuleType:
    """The study's rules-side module, ``oncoeval.studies.{study}.workflow`` (here, below every
    floor that loads it, so that none imports the workflow module to reach a study)."""
    return importlib.import_module(f"oncoeval.studies.{study}.workflow")
