"""The exposure probes of a contains_phi study go only to phi_safe models."""

import pytest

from oncoeval.config import checks as oc
from tests.spine.test_config_layers import ENV, phi_config


@pytest.mark.parametrize("study", ["cancer_myth", "coral"])
def test_probes_of_a_phi_study_are_refused_for_a_model_that_is_not_phi_safe(study):
    config = phi_config(study, "evaluate")
    config["studies"][study]["exposure"] = {"enabled": True}
    routes = [r for r in oc.model_routes(config) if r.model == "remote"]
    assert (f"studies.{study}.exposure", "exposure probes") in [(r.key, r.role) for r in routes]
    problems = [p for p in oc.config_problems(config, env=ENV) if "phi_safe" in p]
    assert any(
        p.startswith(f"studies.{study}.exposure: 'remote' (exposure probes)") for p in problems
    )
    at = next(i for i, m in enumerate(config["models"]) if m["id"] == "remote")
    config["models"][at] = config["models"][at] | {"phi_safe": True}  # not the shared entry
    assert [p for p in oc.config_problems(config, env=ENV) if "phi_safe" in p] == []


def test_no_probe_route_while_the_audit_is_off():
    config = phi_config("cancer_myth", "evaluate")
    assert [r for r in oc.model_routes(config) if r.key.endswith(".exposure")] == []
