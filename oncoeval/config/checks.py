"""Config helpers used when the DAG is built (imported by rules/common.smk).

The JSON Schema (config/config.schema.yaml) checks shapes and fills defaults; this module checks
what a schema cannot: references between keys, PHI routing, data files and each used model's
backend checks (an API key variable). Every message names the key it is about. Nothing here
imports torch or transformers: hardware is checked by the backend when its job starts.
"""

from __future__ import annotations

import copy
import functools
import os
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from ..backends import BACKEND_MODULES, get_backend
from ..core import layout, names
from ..core.blocks import study_block, study_evaluated_models
from ..core.errors import ConfigError
from ..core.schema import CONFIG_SCHEMA, fill_schema_defaults, raw_config_schema
from ..core.source import resolve_own_files
from ..models.cache import canonical_json
from ..studies import STUDIES, contract
from .files import file_problems as config_file_problems  # noqa: F401 (for common.smk)

SCHEMAS = CONFIG_SCHEMA.parent / "schemas"


def phi_safe_default(backend: str) -> bool:
    """phi_safe of a model entry that does not say: its backend's (False for an unknown one)."""
    try:
        return get_backend(backend).phi_safe_default
    except ConfigError:
        return False


def models_by_id(config: dict) -> dict[str, dict]:
    models: dict[str, dict] = {}
    for i, model in enumerate(config.get("models") or []):
        if model["id"] in models:
            raise ConfigError(f"models[{i}].id: duplicate model id {model['id']!r}")
        model = dict(model)
        if model.get("phi_safe") is None:
            model["phi_safe"] = phi_safe_default(model["backend"])
        models[model["id"]] = model
    return models


@functools.cache
def study_schema(study: str) -> dict:
    return yaml.safe_load((SCHEMAS / f"{study}.schema.yaml").read_text(encoding="utf-8"))


def filled_study_block(config: dict, study: str) -> dict:
    """The study's config block with every default of its schema filled in."""
    return fill_schema_defaults(study_schema(study), study_block(config, study))


def enabled_studies(config: dict) -> list[str]:
    studies = config.get("studies") or {}
    return [s for s in STUDIES if (studies.get(s) or {}).get("enabled", False)]


def study_judges(config: dict, study: str) -> dict[str, str]:
    """Judge roles of a study (``judges: {role: model_id}``); roles set to null are unused.

    A role may name a jury (a list of model ids, oncoeval.judges.jury) where the study allows.
    """
    judges = study_block(config, study).get("judges") or {}
    return {role: mid for role, mid in judges.items() if mid}


def _marked_model_keys(schema: dict, prefix: str = "") -> list[str]:
    """Dotted keys a schema marks ``x-names-model: true``, in schema order."""
    keys = []
    for key, sub in (schema.get("properties") or {}).items():
        if sub.get("x-names-model"):
            keys.append(prefix + key)
        keys += _marked_model_keys(sub, f"{prefix}{key}.")
    return keys


# Every config key that names a model: the top-level `evaluate` and, per registered study, the
# keys (dotted paths inside the study block) its schema marks with `x-names-model: true`.
TOP_MODEL_KEYS = ("evaluate",)
STUDY_MODEL_KEYS = {s: tuple(_marked_model_keys(study_schema(s))) for s in STUDIES}


@dataclass(frozen=True)
class Route:
    """One (study, model) pair the workflow will build `generate` jobs for, and why."""

    study: str  # a study, or "adhoc"
    model: str
    key: str  # the config key that sends the study's data to the model
    role: str


def _get(block: dict, dotted: str):
    value = block
    for part in dotted.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


def _ids(value) -> list[str]:
    if value is None:
        return []
    if isinstance(value, dict):  # {evaluated id: model id}, e.g. a verifier per evaluated model
        return [v for v in value.values() if v]
    return [v for v in value if v] if isinstance(value, list) else [value]


def model_routes(config: dict) -> list[Route]:
    """Every (study, model) whose `generate` jobs the workflow will build, with the key behind it.

    Roles a run does not use (a classifier without construction) send nothing and are left out;
    the `generate` rule refuses any job whose pair is not listed here (common.smk), so a route
    missing from this function fails when the DAG is built instead of slipping past the checks.
    """
    routes: list[Route] = []
    for study in enabled_studies(config):
        block = filled_study_block(config, study)
        key = f"studies.{study}.evaluate" if block.get("evaluate") else "evaluate"
        for mid in study_evaluated_models(config, study):
            routes.append(Route(study, mid, key, "evaluated"))
        # The exposure audit probes each evaluated model with the study's items (its own route,
        # so a PHI refusal names the audit too).
        if (block.get("exposure") or {}).get("enabled"):
            for mid in study_evaluated_models(config, study):
                routes.append(Route(study, mid, f"studies.{study}.exposure", "exposure probes"))
        for dotted, role in contract.judge_roles(study, block):
            for mid in _ids(_get(block, dotted)):
                routes.append(Route(study, mid, f"studies.{study}.{dotted}", role))
    for name in config.get("adhoc") or {}:
        for mid in config.get("evaluate") or []:
            routes.append(Route("adhoc", mid, "evaluate", f"ad-hoc set {name}"))
    return routes


def used_models(config: dict) -> dict[str, set[str]]:
    """Model id -> the studies (and ad-hoc sets) that send it data."""
    used: dict[str, set[str]] = {}
    for route in model_routes(config):
        label = (
            route.study if route.study != "adhoc" else route.role.replace("ad-hoc set ", "adhoc:")
        )
        used.setdefault(route.model, set()).add(label)
    return used


def phi_problem(config: dict, models: dict, route: Route) -> str | None:
    """Why this route may not send its study's data to its model, or None."""
    if route.study == "adhoc" or not study_block(config, route.study).get("contains_phi"):
        return None
    if route.model in models and not models[route.model]["phi_safe"]:
        return (
            f"{route.key}: {route.model!r} ({route.role}) is not phi_safe, but "
            f"studies.{route.study}.contains_phi is true: PHI may not be sent to it. Set "
            f"models[{route.model}].phi_safe: true only if your data agreement allows this "
            "endpoint."
        )
    return None


# Set by `make estimate` (oncoeval.report.estimate) for its Snakemake runs, which call no model:
# the API key and endpoint variables of the config's models need not be set then.
NO_MODEL_CALLS_ENV = "ONCOEVAL_NO_MODEL_CALLS"


class _EveryVariableSet(dict):
    """The environment as a run that calls no model sees it: every variable counts as set."""

    def get(self, key, default=None):
        return super().get(key) or "unused: this run calls no model"


def config_problems(config: dict, env: dict | None = None) -> list[str]:
    """Every problem of the config that a schema cannot see, each naming its key and value.

    Checks that need the job's hardware (CUDA for quantization, an installed vLLM) are the
    backend's, made when its job starts: the DAG is often built on a login node without a GPU.
    """
    env = os.environ if env is None else env
    if os.environ.get(NO_MODEL_CALLS_ENV):
        env = _EveryVariableSet(env)
    problems: list[str] = []
    seen: set[str] = set()
    for i, model in enumerate(config.get("models") or []):
        if model["id"] in seen:
            problems.append(f"models[{i}].id: duplicate model id {model['id']!r}")
        seen.add(model["id"])
    models = {}
    for model in config.get("models") or []:
        model = dict(model)
        if model.get("phi_safe") is None:
            model["phi_safe"] = phi_safe_default(model["backend"])
        models.setdefault(model["id"], model)

    def unknown(key: str, mid) -> None:
        if mid not in models:
            problems.append(f"{key}: unknown model id {mid!r}; defined: {sorted(models)}")

    for mid in config.get("evaluate") or []:
        unknown("evaluate", mid)
    for study in enabled_studies(config):
        block = filled_study_block(config, study)
        for dotted in STUDY_MODEL_KEYS[study]:
            value = _get(block, dotted)
            # A marked mapping ({evaluated id: model id}) names models by its keys too.
            for mid in _ids(value) + (list(value) if isinstance(value, dict) else []):
                unknown(f"studies.{study}.{dotted}", mid)
            named = value
            if isinstance(named, list) and len(set(named)) < len(named):
                twice = sorted({m for m in named if named.count(m) > 1})
                problems.append(
                    f"studies.{study}.{dotted}: {twice} named more than once; a jury of one "
                    "model twice is that model's verdict counted twice. Name each juror once."
                )
        if not study_evaluated_models(config, study):
            problems.append(f"studies.{study}: enabled, but no model is evaluated (evaluate: [])")
        for dotted, why in contract.required_roles(study, block):
            if not _ids(_get(block, dotted)):
                problems.append(f"studies.{study}.{dotted}: needs a model id ({why})")
        problems += data_problems(study, block)
        problems += contract.settings_problems(study, block)
    problems += store_problems(config)
    problems += names.collision_problems(
        "models[].id", [m["id"] for m in config.get("models") or []]
    )
    problems += names.collision_problems("adhoc", list(config.get("adhoc") or {}))
    for route in model_routes(config):
        problem = phi_problem(config, models, route)
        if problem:
            problems.append(problem)
    for mid in sorted(used_models(config)):
        if mid not in models:
            continue
        cfg = models[mid]
        problems += get_backend(cfg["backend"]).config_problems(cfg, env=env)
    return list(dict.fromkeys(problems))


# Keys whose value is a path: `~` and `$VAR` in them are expanded (expand_paths); a model
# entry's are its backend's `path_keys`.
TOP_PATH_KEYS = ("cache_dir", "model_store")
_UNEXPANDED = re.compile(r"\$\{?(\w+)")


def _expanded(key: str, value, problems: list[str]):
    """``value`` with ``~`` and ``$VAR``/``${VAR}`` expanded; a problem when one cannot be."""
    if not isinstance(value, str) or not (value.startswith("~") or "$" in value):
        return value
    out = os.path.expandvars(os.path.expanduser(value))
    left = _UNEXPANDED.findall(out)
    if left:
        problems.append(
            f"{key}: {value!r} names the environment variable {left[0]!r}, which is not set; "
            "set it, or write the path out"
        )
    elif out.startswith("~"):
        problems.append(f"{key}: {value!r}: no such user's home folder; write the path out")
    return out


def expand_paths(config: dict) -> list[str]:
    """Expand ``~`` and ``$VAR`` in the config's path values, in place (the top level's
    ``cache_dir`` and ``model_store``, each model's ``path`` and ``gguf_file``, the ad-hoc sets
    and each study's data keys); the problems of those that cannot be expanded."""
    problems: list[str] = []
    for key in TOP_PATH_KEYS:
        if key in config:
            config[key] = _expanded(key, config[key], problems)
    for i, model in enumerate(config.get("models") or []):
        keys = (
            get_backend(model["backend"]).path_keys
            if model.get("backend") in BACKEND_MODULES
            else ()
        )
        for key in keys:
            if key in model:
                model[key] = _expanded(f"models[{i}].{key}", model[key], problems)
    for name, path in list((config.get("adhoc") or {}).items()):
        config["adhoc"][name] = _expanded(f"adhoc.{name}", path, problems)
    for study in enabled_studies(config):
        block = study_block(config, study)
        for dotted in contract.data_keys(study, block):
            *parents, last = dotted.split(".")
            holder = _get(block, ".".join(parents)) if parents else block
            if isinstance(holder, dict) and last in holder:
                holder[last] = _expanded(f"studies.{study}.{dotted}", holder[last], problems)
    return problems


RESULTS = layout.RESULTS


def store_problems(config: dict, root: str | os.PathLike = ".") -> list[str]:
    """A cache or model store inside ``results/``: what is there is published (the crate, the
    report), and raw answers of a ``contains_phi`` study must not be."""
    problems = []
    results = (Path(root) / RESULTS).resolve()
    for key in TOP_PATH_KEYS:
        value = config.get(key)
        if not isinstance(value, str) or not value:
            continue
        path = (Path(root) / value).resolve()
        if path == results or results in path.parents:
            problems.append(
                f"{key}: {value!r} lies inside {RESULTS}/, whose files are published (the crate, "
                f"the report): raw answers and model files would ship with them. Put the "
                f"{key} outside {RESULTS}/ (by default it is {raw_config_schema()['properties'][key]['default']})"
            )
    return problems


def data_problems(study: str, block: dict) -> list[str]:
    """Data keys of an enabled study (its ``data_keys``) that are missing, or name a file that
    does not exist. None of them has a default: a user who enables a study names its data (the
    demo config names the demo's)."""
    problems = []
    for dotted, required in contract.data_keys(study, block).items():
        value = _get(block, dotted)
        if not value:
            if required:
                problems.append(
                    f"studies.{study}.{dotted}: not set; the study needs it (there is no default "
                    "data set: name your own file)"
                )
        elif not Path(value).exists():
            problems.append(f"studies.{study}.{dotted}: {value!r}: {MISSING_FILE}")
    return problems


# The problem text of a data path that does not exist (tests recognise a user's absent data by it).
MISSING_FILE = "no such file or folder"


ITEM_LIMIT_ENV = "ONCOEVAL_ITEM_LIMIT"


def apply_only(config: dict) -> list[str]:
    """Narrow the run to the studies and models named by ``only`` (in place); problems found.

    ``only`` is a comma-separated list (or a YAML list) of study names and model ids, e.g.
    ``--config only=<study>`` or ``only=<study>,gpt-4o``. Named studies run and no
    other; named models are the only ones evaluated (judges stay as configured), and a study
    that evaluates none of them is switched off.
    """
    only = config.get("only")
    if not only:
        return []
    names = [n.strip() for n in (only.split(",") if isinstance(only, str) else only)]
    names = [n for n in names if n]
    model_ids = {m["id"] for m in config.get("models") or []}
    problems = [
        f"only: {n!r} is neither a study ({', '.join(STUDIES)}) nor a model id; defined: "
        f"{sorted(model_ids)}"
        for n in names
        if n not in STUDIES and n not in model_ids
    ]
    studies = [n for n in names if n in STUDIES]
    chosen = [n for n in names if n not in STUDIES and n in model_ids]
    blocks = config.setdefault("studies", {})
    if studies:
        for study in STUDIES:
            blocks.setdefault(study, {})["enabled"] = study in studies
    if chosen:
        for study in enabled_studies(config):
            kept = [m for m in study_evaluated_models(config, study) if m in chosen]
            blocks[study]["evaluate"] = kept
            if not kept:
                blocks[study]["enabled"] = False
        config["evaluate"] = [m for m in config.get("evaluate") or [] if m in chosen]
        if not enabled_studies(config) and not config.get("adhoc"):
            problems.append(f"only: no study left that evaluates {chosen}")
    return problems


def export_item_limit(config: dict, env: dict | None = None) -> None:
    """Hand ``limit`` to the jobs (their tables say the run was capped); unset when there is none."""
    env = os.environ if env is None else env
    if config.get("limit"):
        env[ITEM_LIMIT_ENV] = str(int(config["limit"]))
    else:
        env.pop(ITEM_LIMIT_ENV, None)


def item_limit(config: dict) -> int | None:
    """The per-study item cap of a smoke run (``limit``), or None for every item."""
    return int(config["limit"]) if config.get("limit") else None


def config_schema(schema_path: str | os.PathLike = CONFIG_SCHEMA) -> dict:
    """The workflow's JSON Schema: config/config.schema.yaml with each registered backend's part
    and one ``studies`` property per registered study.

    A model entry's ``backend`` must name a registered backend, and the entry is checked against
    that backend's ``CONFIG_SCHEMA`` (its keys, their defaults and descriptions); each study's
    block is a ``$ref`` to its own schema. Adding a backend or a study touches no schema file.
    """
    schema = yaml.safe_load(Path(schema_path).read_text(encoding="utf-8"))
    studies = schema["properties"]["studies"]
    studies["properties"] = {s: {"$ref": f"schemas/{s}.schema.yaml"} for s in STUDIES}
    studies["additionalProperties"] = False
    model = schema["$defs"]["model"]
    model["properties"]["backend"]["enum"] = list(BACKEND_MODULES)
    model["allOf"] = [
        {
            # `required`: an entry without a backend matches no branch (its one problem is the
            # missing backend, not every backend's required keys).
            "if": {"properties": {"backend": {"const": name}}, "required": ["backend"]},
            "then": copy.deepcopy(get_backend(name).CONFIG_SCHEMA),
        }
        for name in BACKEND_MODULES
    ]
    return schema


def _validator(schema_path: str | os.PathLike, fill_defaults: bool = False):
    """A validator of the workflow's schema, the study schemas reachable through their $ref."""
    import jsonschema
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012

    schema_path = Path(schema_path)
    registry = Registry()
    for study in STUDIES:
        rel = f"schemas/{study}.schema.yaml"
        contents = yaml.safe_load((schema_path.parent / rel).read_text(encoding="utf-8"))
        registry = registry.with_resource(rel, Resource.from_contents(contents, DRAFT202012))
    cls = jsonschema.Draft202012Validator
    if fill_defaults:
        # As Snakemake's validate(set_default=True) does (the jsonschema FAQ's recipe): a
        # missing key with a default gets it before the object is checked further.
        check_properties = cls.VALIDATORS["properties"]

        def properties_with_defaults(validator, properties, instance, schema):
            if isinstance(instance, dict):
                for key, sub in properties.items():
                    if "default" in sub:
                        instance.setdefault(key, copy.deepcopy(sub["default"]))
            yield from check_properties(validator, properties, instance, schema)

        cls = jsonschema.validators.extend(cls, {"properties": properties_with_defaults})
    return cls(config_schema(schema_path), registry=registry)


def fill_config_defaults(config: dict, schema_path: str | os.PathLike = CONFIG_SCHEMA) -> None:
    """Validate ``config`` against the workflow's schema, filling its defaults in place.

    Model entries get their backend's defaults. Call ``schema_problems`` first: this raises at
    the first problem.
    """
    _validator(schema_path, fill_defaults=True).validate(config)


def fill_workflow_config(config: dict) -> dict:
    """``config`` as the workflow holds it, filled in place: the schema's defaults (model entries
    their backend's), then each study's block (the default-filling validator does not follow the
    $ref into a study's schema). Call ``schema_problems`` first."""
    fill_config_defaults(config)
    for study in STUDIES:
        config["studies"][study] = filled_study_block(config, study)
    # The demo's and the schemas' resources/ files, read from the workflow's source when the
    # run's folder is another one (a snakedeploy deployment; oncoeval.core.source).
    resolve_own_files(config)
    return config


def schema_problems(config: dict, schema_path: str | os.PathLike = CONFIG_SCHEMA) -> list[str]:
    """Every place where ``config`` breaks the JSON Schema (the study schemas included), each as
    ``key.path: what is wrong`` -- all of them, where a validator stops at the first."""
    validator = _validator(schema_path)
    problems = []
    for error in sorted(validator.iter_errors(config), key=lambda e: list(map(str, e.path))):
        message = error.message
        if error.validator == "unevaluatedProperties" and isinstance(error.instance, dict):
            message = _unknown_keys_message(validator, error)
            if message is None:  # only a consequence of another problem of the entry
                continue
        message = message if len(message) < 300 else message[:300] + "..."
        problem = f"{key_path(error.absolute_path) or '(top level)'}: {message}"
        if problem not in problems:  # one line per problem
            problems.append(problem)
    return problems


def _unknown_keys_message(validator, error) -> str | None:
    """The keys an ``unevaluatedProperties`` error should name, or None when there are none.

    When a backend's part of a model entry (an ``allOf`` branch) fails, JSON Schema counts none
    of its keys as evaluated, so the error would list the entry's valid keys as unexpected beside
    the real problem. Keys declared by the entry's schema or by a branch whose condition holds
    are known; only the others are reported.
    """
    schema, instance = error.schema, error.instance
    known = set(schema.get("properties", {}))
    branches = [part for part in schema.get("allOf", []) if "if" in part]
    matched = [p for p in branches if validator.evolve(schema=p["if"]).is_valid(instance)]
    if branches and not matched:  # an unknown backend: that error says it, no key can be judged
        return None
    for part in [p for p in schema.get("allOf", []) if "if" not in p] + matched:
        known |= set((part.get("then") or part).get("properties", {}))
    unknown = [key for key in instance if key not in known]
    if not unknown:
        return None
    names = ", ".join(repr(key) for key in unknown)
    verb = "was" if len(unknown) == 1 else "were"
    return f"Unevaluated properties are not allowed ({names} {verb} unexpected)"


def key_path(parts) -> str:
    """``['models', 0, 'backend']`` -> ``models[0].backend``."""
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def format_problems(problems: list[str]) -> str:
    if len(problems) == 1:
        return problems[0]
    return f"{len(problems)} problems:\n" + "\n".join(f"  - {p}" for p in problems)


def model_signature(cfg: dict, study: str | None = None, requestset: str | None = None) -> str:
    """What the model's outputs depend on, as one string for the `generate` rule's params.

    Changing an operational setting (batch size, concurrency, resources, price, phi_safe) does not
    change it, so such edits rerun nothing. Given a job's study and request set, it also holds a
    digest of the stored answers a backend serves for that job (replay), so editing them reruns
    the jobs that read them, and only those.
    """
    backend = get_backend(cfg["backend"])
    signature = {"backend": cfg["backend"], **backend.identity(cfg)}
    if study is not None:
        digest = backend.answers_digest(cfg, study, requestset)
        if digest is not None:
            signature["answers_digest"] = digest
    return canonical_json(signature)


def generate_resources(cfg: dict) -> dict:
    """Resources the `generate` job for this model asks the scheduler for (its backend's)."""
    backend = get_backend(cfg["backend"])
    machine_schema = raw_config_schema()["$defs"]["resources"]
    # The backend's default block first (an API's longer runtime), then each key's default.
    machine = fill_schema_defaults(machine_schema, backend.filled(cfg).get("resources") or {})
    return backend.job_resources(cfg, machine)


def sort_mappings_in_place(config: dict) -> None:
    """Order every mapping of ``config`` by key, recursively (lists keep their order).

    Snakemake compares ``params`` by their text; a dict passed as a param would otherwise rerun
    its job when the YAML lists the same keys in another order.
    """

    def ordered(value):
        if isinstance(value, dict):
            return {k: ordered(value[k]) for k in sorted(value, key=str)}
        if isinstance(value, list):
            return [ordered(v) for v in value]
        return value

    items = ordered(dict(config))
    config.clear()
    config.update(items)


def put_first_on_pythonpath(folder: str, env: dict | None = None) -> None:
    """Make ``folder`` the first PYTHONPATH entry of this process and every job it starts."""
    env = os.environ if env is None else env
    parts = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and p != folder]
    env["PYTHONPATH"] = os.pathsep.join([folder, *parts])


def generate_threads(cfg: dict) -> int:
    """Cores the `generate` job for this model asks Snakemake for (its backend's)."""
    return get_backend(cfg["backend"]).job_threads(cfg)
