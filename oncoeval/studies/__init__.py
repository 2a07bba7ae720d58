"""One subpackage per study: its loaders, prompts, parsers, metrics and tables.

``STUDIES`` is the registry: the one list of studies. The workflow, the config checks, the report
and the tests all take their study list from it, so a study is registered by one line here.
A study's declaration (``STUDY``, a ``contract.Study``) is loaded by ``contract.study(name)``.
"""

STUDIES = ("side_effects", "cancer_myth", "coral", "guidelines")
