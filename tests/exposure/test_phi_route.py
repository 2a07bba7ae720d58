"""The exposure probes of a contains_phi study go only to phi_safe models."""

from oncoeval import config as oc
from tests.spine.test_config_layers import ENV, phi_config


def test_probes_of_a_phi_study_are_refused_for_a_model_that_is_not_phi_safe():
    config = phi_config("cancer_myth", "evaluate")
    config["studies"]["cancer_myth"]["exposure"] = {"enabled": True}
    routes = [r for r in oc.model_routes(config) if r.model == "remote"]
    assert ("studies.cancer_myth.exposure", "exposure probes") in [(r.key, r.role) for r in routes]
    problems = [p for p in oc.config_problems(config, env=ENV) if "phi_safe" in p]
    assert any(
        p.startswith("studies.cancer_myth.exposure: 'remote' (exposure probes)") for p in problems
    )
    next(m for m in config["models"] if m["id"] == "remote")["phi_safe"] = True
    assert [p for p in oc.config_problems(config, env=ENV) if "phi_safe" in p] == []


def test_no_probe_route_while_the_audit_is_off():
    config = phi_config("cancer_myth", "evaluate")
    assert [r for r in oc.model_routes(config) if r.key.endswith(".exposure")] == []
