"""Input schemas: the JSON Schema (draft 2020-12) of an MPIJob document, one per input apiVersion.

Each schema is generated from its front's pydantic models (fields, types, bounds; `additionalProperties:
false` wherever a model forbids extra fields), then given the rules the front checks after parsing where
JSON Schema can state them exactly: a required, well-formed job name, the `mpigen.dev/*` option
annotations, the pod template's required containers, and each version's sizing rules. The schema never
refuses a document mpigen compiles; what it cannot state (sizing against per-node counts, worker pod
names that grow with the worker count, command-line options) is left to `mpigen validate`.

Pod templates are plain mappings in the models: mpigen checks them against Kubernetes' strict
PodTemplateSpec schema of the selected Kubernetes version, so the input schema does not repeat it.

A developer tool, not part of the installed package; run from the repository's top:

    python tools/schemagen.py            rewrite schemas/mpijob-*.json
    python tools/schemagen.py --check    exit 1 naming every stale file
"""

from __future__ import annotations

import importlib
import json
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from mpigen import inputs as api
from mpigen import names
from mpigen.inputs import schema_file
from mpigen.inputs.annotations import ANNOTATIONS, PREFIX
from mpigen.inputs.model import pydantic_model
from mpigen.options import OPTION_TABLE, OptionSpec
from mpigen.targets.operator.limits import REVISION_HASH_LENGTH

Schema = dict[str, Any]
DRAFT = "https://json-schema.org/draft/2020-12/schema"
ID_BASE = "https://mpigen.dev/schemas/"
REGENERATE = "python tools/schemagen.py"

# annotated_types constraint attribute (pydantic's ge=, le=, ...) -> JSON Schema keyword.
_BOUNDS = {"ge": "minimum", "le": "maximum", "gt": "exclusiveMinimum", "lt": "exclusiveMaximum"}


# --- models to schema -------------------------------------------------------------------------------


def model_schema(model: type[BaseModel]) -> Schema:
    """A model as an inline object schema: its fields, which are required, and whether extras pass."""
    checks = model.__pydantic_decorators__
    if checks.validators or checks.field_validators or checks.model_validators:
        raise TypeError(f"{model.__name__}: validators have no JSON Schema; state them as rules here")
    schema: Schema = {"type": "object", "properties": {}}
    for name, field in model.model_fields.items():
        schema["properties"][field.alias or name] = field_schema(field)
    required = [field.alias or name for name, field in model.model_fields.items() if field.is_required()]
    if required:
        schema["required"] = required
    if model.model_config.get("extra") == "forbid":
        schema["additionalProperties"] = False
    if model.__doc__:
        schema["description"] = " ".join(model.__doc__.split())
    return schema


def field_schema(field: FieldInfo) -> Schema:
    schema = type_schema(field.annotation, field.metadata)
    if field.default is not None and not field.is_required():
        schema["default"] = field.default
    return schema


def type_schema(annotation: Any, metadata: list[Any]) -> Schema:
    origin, args = get_origin(annotation), get_args(annotation)
    if annotation is Any:
        return {}
    if origin in (Union, types.UnionType):
        present = [arg for arg in args if arg is not type(None)]
        inner = (
            type_schema(present[0], metadata)
            if len(present) == 1
            else {"anyOf": [type_schema(arg, metadata) for arg in present]}
        )
        return allow_null(inner) if len(present) < len(args) else inner
    if origin is Literal:
        return {"const": args[0]} if len(args) == 1 else {"enum": list(args)}
    if annotation in (bool, str):
        return {"type": "boolean" if annotation is bool else "string"}
    if annotation is int:
        return {"type": "integer", **_bounds(metadata)}
    if origin is dict:
        values = type_schema(args[1], [])
        return {"type": "object", **({"additionalProperties": values} if values else {})}
    if origin is list:
        return {"type": "array", "items": type_schema(args[0], [])}
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return model_schema(annotation)
    raise TypeError(f"no JSON Schema for {annotation!r}")


def _bounds(metadata: list[Any]) -> Schema:
    bounds: Schema = {}
    for constraint in metadata:
        found = [
            (keyword, getattr(constraint, attr))
            for attr, keyword in _BOUNDS.items()
            if hasattr(constraint, attr)
        ]
        if len(found) != 1:
            raise TypeError(f"no JSON Schema for the constraint {constraint!r}")
        bounds.update(found)
    return bounds


def allow_null(schema: Schema) -> Schema:
    if "enum" in schema or "const" in schema:
        values = schema.pop("enum", None) or [schema.pop("const")]
        return {**schema, "enum": [*values, None]}
    if isinstance(schema.get("type"), str):
        return {**schema, "type": [schema["type"], "null"]}
    return schema if not schema else {"anyOf": [schema, {"type": "null"}]}


def forbid_null(schema: Schema) -> None:
    kinds = schema.get("type")
    if isinstance(kinds, list):
        kinds = [kind for kind in kinds if kind != "null"]
        schema["type"] = kinds[0] if len(kinds) == 1 else kinds
    if "enum" in schema:
        schema["enum"] = [value for value in schema["enum"] if value is not None]


# --- rules the fronts check after parsing -----------------------------------------------------------


def at(schema: Schema, *path: str) -> Schema:
    """The schema of the field at `path` (field names from the document's root)."""
    for name in path:
        schema = schema["properties"][name]
    return schema


def require(schema: Schema, *fields: str) -> None:
    """Make `fields` of the object `schema` required and not null (the front refuses them missing)."""
    required = schema.setdefault("required", [])
    for name in fields:
        if name not in required:
            required.append(name)
        forbid_null(schema["properties"][name])


def name_max_length() -> int:
    """The longest job name whose fixed derived names fit their limits (mpigen.targets.operator.limits)."""
    label = names.DNS1123_LABEL_MAX
    return min(
        label - len(names.launcher("")),
        label - len(names.cleanup("")),
        label - 1 - REVISION_HASH_LENGTH - len(names.worker_set("")),
    )


_DNS1123_LABEL = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
# mpigen.options.MAX_COUNT is nine nines: a whole number of at most nine digits (ASCII), leading zeros allowed.
_POSITIVE = {"type": "string", "pattern": "^0*[1-9][0-9]{0,8}$"}
_IMAGE = {"type": "string", "pattern": "^[!-~]+$"}
_DNS1123_SUBDOMAIN = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"

# mpigen.placement's grammar; the parser also bounds the key's parts' lengths and the slice size.
_LABEL_KEY = "([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?"
_TOPOLOGY = {
    "type": "string",
    "pattern": f"^((required|preferred):{_LABEL_KEY}|slice:{_LABEL_KEY}:0*[1-9][0-9]{{0,9}})$",
}

_KUBE_VERSION = {"type": "string", "pattern": "^\\s*v?[0-9]+\\.[0-9]+(\\.[0-9]+)?\\s*$"}

# The schema of each kind of option value (mpigen.options.ValueKind), as mpigen.inputs.annotations parses it.
_VALUE_SCHEMAS: dict[str, Schema] = {
    "count": _POSITIVE,
    "image": _IMAGE,
    "dns-subdomain": {
        "type": "string",
        "pattern": _DNS1123_SUBDOMAIN,
        "maxLength": names.DNS1123_SUBDOMAIN_MAX,
    },
    "namespace": {"type": "string", "pattern": _DNS1123_LABEL, "maxLength": names.DNS1123_LABEL_MAX},
    "dns-label": {"type": "string", "pattern": _DNS1123_LABEL, "maxLength": names.DNS1123_LABEL_MAX},
    "kube-version": _KUBE_VERSION,
    "switch": {"enum": ["true", "false"]},
    "topology": _TOPOLOGY,
}


def value_schema(spec: OptionSpec) -> Schema:
    return {"enum": list(spec.choices)} if spec.kind == "choice" else _VALUE_SCHEMAS[spec.kind]


# Annotation key (after mpigen.dev/) -> (schema of its value, what it sets), from mpigen.options.OPTION_TABLE.
OPTION_ANNOTATIONS: dict[str, tuple[Schema, str]] = {
    spec.flag: (value_schema(spec), spec.summary) for spec in OPTION_TABLE
}


def add_metadata_rules(document: Schema) -> None:
    """metadata.name is required, a DNS-1123 label starting with a letter that leaves room for the
    derived names; metadata.namespace is a DNS-1123 label; `mpigen.dev/*` annotations are known options."""
    require(document, "metadata")
    meta = at(document, "metadata")
    require(meta, "name")
    at(meta, "name").update(pattern="^[a-z]([-a-z0-9]*[a-z0-9])?$", maxLength=name_max_length())
    at(meta, "namespace").update(pattern=_DNS1123_LABEL, maxLength=names.DNS1123_LABEL_MAX)
    if set(OPTION_ANNOTATIONS) != set(ANNOTATIONS):
        raise KeyError(
            f"OPTION_ANNOTATIONS must describe exactly mpigen.inputs.annotations.ANNOTATIONS: {sorted(ANNOTATIONS)}"
        )
    annotations = at(meta, "annotations")
    annotations["properties"] = {
        PREFIX + key: {**value, "description": text} for key, (value, text) in OPTION_ANNOTATIONS.items()
    }
    known = sorted(PREFIX + key for key in OPTION_ANNOTATIONS)
    annotations["propertyNames"] = {
        "anyOf": [{"not": {"pattern": "^" + PREFIX.replace(".", "\\.")}}, {"enum": known}]
    }


def set_pod_template(parent: Schema, field: str, description: str) -> None:
    """A required pod template: an object with at least one container, its full schema Kubernetes'."""
    parent["properties"][field] = {
        "type": "object",
        "description": description + " A Kubernetes PodTemplateSpec: mpigen checks it against Kubernetes' "
        "strict PodTemplateSpec schema of the selected Kubernetes version (mpigen.dev/kube-version or "
        "--kube-version; the newest shipped by default), so only its required parts are stated here.",
        "required": ["spec"],
        "properties": {
            "spec": {
                "type": "object",
                "required": ["containers"],
                "properties": {"containers": {"type": "array", "minItems": 1, "items": {"type": "object"}}},
            }
        },
    }
    require(parent, field)


def add_v1alpha1_rules(document: Schema) -> None:
    spec = at(document, "spec")
    sizing = ("gpus", "processingUnits", "replicas")
    spec["oneOf"] = [{"required": [field], "properties": {field: {"type": "integer"}}} for field in sizing]
    for field in ("gpus", "processingUnits"):
        # mpi-operator v0.2.0 deploy/crd/crd-v1alpha1.yaml: 1, 2, 4 or a multiple of 8.
        at(spec, field)["anyOf"] = [{"enum": [1, 2, 4]}, {"multipleOf": 8}]
    set_pod_template(spec, "template", "The pod of the launcher and of every worker.")


def add_v1alpha2_rules(document: Schema) -> None:
    specs = at(document, "spec", "mpiReplicaSpecs")
    require(specs, "Launcher", "Worker")
    launcher, worker = at(specs, "Launcher"), at(specs, "Worker")
    at(launcher, "replicas")["enum"] = [1, None]
    require(worker, "replicas")
    at(worker, "replicas")["minimum"] = 1
    set_pod_template(launcher, "template", "The launcher's pod, which runs mpirun.")
    set_pod_template(worker, "template", "The pod of every worker.")


_QUANTITY = {
    "anyOf": [
        {"type": "integer"},
        {
            "type": "string",
            "pattern": "^[+-]?([0-9]+(\\.[0-9]*)?|\\.[0-9]+)([KMGTPE]i|[numkMGTPE]|[eE][+-]?[0-9]+)?$",
        },
    ]
}


def add_run_policy_rules(spec: Schema, controller: str) -> None:
    """runPolicy (v2beta1, v1): what mpigen.inputs.runpolicy checks after parsing."""
    from mpigen.inputs.runpolicy import MULTIKUEUE

    run = at(spec, "runPolicy")
    at(run, "activeDeadlineSeconds")["minimum"] = 1
    at(run, "managedBy")["enum"] = [controller, MULTIKUEUE, None]
    at(run, "managedBy").pop("type", None)
    at(run, "schedulingPolicy", "minResources")["additionalProperties"] = _QUANTITY


def add_v2beta1_rules(document: Schema) -> None:
    from mpigen.inputs.v2beta1 import CONTROLLER

    spec = at(document, "spec")
    specs = at(spec, "mpiReplicaSpecs")
    require(specs, "Launcher")
    launcher, worker = at(specs, "Launcher"), at(specs, "Worker")
    at(launcher, "replicas")["enum"] = [1, None]
    require(worker, "replicas")
    at(worker, "replicas")["minimum"] = 1
    at(spec, "sshAuthMountPath")["pattern"] = "^(/.*)?$"
    add_run_policy_rules(spec, CONTROLLER)
    set_pod_template(launcher, "template", "The launcher's pod, which runs mpirun.")
    set_pod_template(worker, "template", "The pod of every worker (sshd).")


def add_v1_rules(document: Schema) -> None:
    from mpigen.inputs.v1 import CONTROLLER

    spec = at(document, "spec")
    specs = at(spec, "mpiReplicaSpecs")
    require(specs, "Launcher")
    launcher, worker = at(specs, "Launcher"), at(specs, "Worker")
    at(launcher, "replicas")["enum"] = [1, None]
    # A launcher that always restarts never finishes (mpigen.inputs.v1).
    at(launcher, "restartPolicy")["enum"] = ["OnFailure", "Never", "ExitCode", None]
    at(worker, "replicas")["minimum"] = 0
    add_run_policy_rules(spec, CONTROLLER)
    set_pod_template(launcher, "template", "The launcher's pod, which runs mpirun.")
    set_pod_template(worker, "template", "The pod of every worker.")
    for parent in (launcher, worker):
        # mpi_validation.go: every container of every replica has a name and an image.
        containers = at(parent, "template", "spec", "containers")
        containers["items"] = {"type": "object", "required": ["name", "image"]}


# --- descriptions -----------------------------------------------------------------------------------

_ONE_SIZING = " Exactly one of gpus, processingUnits and replicas is set."
_COMMON = {
    "metadata.name": (
        "The job's name, the stem of every generated object's name: a DNS-1123 label that starts with a "
        "letter, short enough for the derived names (fewer characters with many workers)."
    ),
    "metadata.namespace": (
        "Namespace of the generated objects (default: the namespace option, else none, so that "
        "`kubectl apply -n` decides)."
    ),
    "metadata.annotations": "mpigen.dev/<option> annotations set mpigen's render options for this job.",
    "spec.backoffLimit": "Retries of the launcher Job before the job fails (default 6).",
    "spec.activeDeadlineSeconds": (
        "Seconds the launcher Job may run before it is stopped; takes precedence over backoffLimit."
    ),
    "status": "Ignored: mpigen compiles the desired state.",
}
# Field (dotted path from the document's root) -> description, per apiVersion.
DESCRIPTIONS: dict[str, dict[str, str]] = {
    "kubeflow.org/v1alpha1": {
        **_COMMON,
        "spec.gpus": (
            "Total GPUs (1, 2, 4 or a multiple of 8): workers of gpusPerNode GPUs each, or one worker if "
            "fewer." + _ONE_SIZING
        ),
        "spec.gpusPerNode": "GPUs per node (default: the gpus-per-node option, 8).",
        "spec.processingUnits": (
            "Total processing units of processingResourceType (1, 2, 4 or a multiple of 8): workers of "
            "processingUnitsPerNode units each, or one worker if fewer." + _ONE_SIZING
        ),
        "spec.processingUnitsPerNode": "Units per node (default: the processing-units-per-node option, 1).",
        "spec.processingResourceType": (
            "The resource counted as processing units (default: the processing-resource-type option, "
            "nvidia.com/gpu)."
        ),
        "spec.slotsPerWorker": "MPI slots per worker in the hostfile (default: the units per worker, or 1).",
        "spec.launcherOnMaster": "Run the launcher on a control-plane node (node-role.kubernetes.io/control-plane).",
        "spec.replicas": (
            "Number of workers; units per worker come from the processing resource's limit of "
            "containers[0]." + _ONE_SIZING
        ),
    },
    "kubeflow.org/v1alpha2": {
        **_COMMON,
        "spec.slotsPerWorker": "MPI slots per worker in the hostfile (default 1).",
        "spec.cleanPodPolicy": (
            "None (default) keeps the workers after the launcher finishes; Running and All scale them to 0."
        ),
        "spec.mpiReplicaSpecs": "One Launcher, which runs mpirun, and the Workers it starts ranks in.",
        "spec.mpiReplicaSpecs.Launcher.replicas": "Always 1.",
        "spec.mpiReplicaSpecs.Launcher.restartPolicy": (
            "Never keeps a failed launcher pod; anything else becomes OnFailure."
        ),
        "spec.mpiReplicaSpecs.Worker.replicas": "Number of worker pods.",
        "spec.mpiReplicaSpecs.Worker.restartPolicy": (
            "Workers belong to a StatefulSet and always restart; other values are ignored with a warning."
        ),
    },
}

_RUN_POLICY = {
    "spec.runPolicy": "How the job runs and is cleaned up, as for the Kubeflow operators.",
    "spec.runPolicy.cleanPodPolicy": (
        "None (default) keeps the workers after the launcher finishes; Running and All scale them to 0."
    ),
    "spec.runPolicy.ttlSecondsAfterFinished": "Seconds after which Kubernetes deletes the finished launcher Job.",
    "spec.runPolicy.activeDeadlineSeconds": "Seconds the launcher Job may run before it is stopped (>= 1).",
    "spec.runPolicy.backoffLimit": "Retries of the launcher Job before the job fails (default: the Job's, 6).",
    "spec.runPolicy.suspend": "true renders a suspended launcher Job and no running workers.",
    "spec.runPolicy.managedBy": "The controller of the job; another than the operator's is refused.",
    "spec.runPolicy.schedulingPolicy": "What the PodGroup asks of the gang scheduler (mpigen.dev/gang-scheduler).",
}

DESCRIPTIONS["kubeflow.org/v2beta1"] = {
    **{key: value for key, value in _COMMON.items() if not key.startswith("spec.")},
    **_RUN_POLICY,
    "spec.slotsPerWorker": "MPI slots per worker in the hostfile (default 1).",
    "spec.runLauncherAsWorker": "The launcher is also a host of the hostfile (listed first).",
    "spec.sshAuthMountPath": "Where the SSH key pair is mounted in the launcher and workers (default /root/.ssh).",
    "spec.launcherCreationPolicy": (
        "AtStartup (default) starts the launcher at once; WaitForWorkersReady holds mpirun until every "
        "worker pod is Ready."
    ),
    "spec.mpiImplementation": "OpenMPI (default), Intel or MPICH: the hostfile syntax and the launcher's variables.",
    "spec.mpiReplicaSpecs": "One Launcher, which runs mpirun, and the Workers it starts ranks in over SSH.",
    "spec.mpiReplicaSpecs.Launcher.replicas": "Always 1.",
    "spec.mpiReplicaSpecs.Launcher.restartPolicy": "OnFailure (default) or Never.",
    "spec.mpiReplicaSpecs.Worker.replicas": "Number of worker pods (>= 1).",
    "spec.mpiReplicaSpecs.Worker.restartPolicy": (
        "Ignored with a warning: workers belong to a StatefulSet and always restart."
    ),
}

DESCRIPTIONS["kubeflow.org/v1"] = {
    **{key: value for key, value in _COMMON.items() if not key.startswith("spec.")},
    **_RUN_POLICY,
    "spec.runPolicy.backoffLimit": (
        "Retries of the launcher Job before the job fails (default: none with restartPolicy Never, as "
        "the operator's launcher pod; else the Job's, 6)."
    ),
    "spec.slotsPerWorker": "MPI slots per worker in the hostfile (default 1).",
    "spec.cleanPodPolicy": "Deprecated: spec.runPolicy.cleanPodPolicy, which wins when both are set.",
    "spec.mainContainer": "The Worker container kubexec.sh runs ranks in (kubectl exec --container).",
    "spec.mpiReplicaSpecs": "One Launcher, which runs mpirun, and the Workers it starts ranks in (kubectl exec).",
    "spec.mpiReplicaSpecs.Launcher.replicas": "Always 1.",
    "spec.mpiReplicaSpecs.Launcher.restartPolicy": "Never (default; ExitCode acts as Never) or OnFailure.",
    "spec.mpiReplicaSpecs.Worker.replicas": "Number of worker pods (default 0).",
    "spec.mpiReplicaSpecs.Worker.restartPolicy": (
        "Ignored with a warning: workers belong to a StatefulSet and always restart."
    ),
}

RULES: dict[str, Callable[[Schema], None]] = {
    "kubeflow.org/v1alpha1": add_v1alpha1_rules,
    "kubeflow.org/v1alpha2": add_v1alpha2_rules,
    "kubeflow.org/v1": add_v1_rules,
    "kubeflow.org/v2beta1": add_v2beta1_rules,
}


# --- documents ----------------------------------------------------------------------------------------


def input_schema(api_version: str, kind: str, module: str) -> Schema:
    """The whole input schema of one front."""
    model: type[BaseModel] = pydantic_model(importlib.import_module(f"mpigen.inputs.{module}").MPIJob)
    document = model_schema(model)
    add_metadata_rules(document)
    RULES[api_version](document)
    for path, text in DESCRIPTIONS[api_version].items():
        at(document, *path.split("."))["description"] = text
    return {
        "$schema": DRAFT,
        "$id": ID_BASE + schema_file(api_version, kind),
        "title": f"{kind} ({api_version})",
        **document,
        "description": (
            f"A Kubeflow {kind} of apiVersion {api_version}, as mpigen compiles it. Unknown fields are "
            "errors. Generated from mpigen's input models."
        ),
    }


def render(schema: Schema) -> str:
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def generate() -> dict[str, str]:
    """File name -> text of every input schema."""
    return {
        schema_file(api_version, kind): render(input_schema(api_version, kind, module))
        for (api_version, kind), module in api.FRONTS.items()
    }


def schemas_dir() -> Path:
    """Where the schemas live: the repository's schemas/ (shipped as the package mpigen.schemas)."""
    return Path(__file__).resolve().parent.parent / "schemas"


def stale_files(directory: Path) -> list[str]:
    """Files under `directory` that differ from what `generate` gives (or are missing)."""
    stale = []
    for name, text in generate().items():
        path = directory / name
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            stale.append(name)
    return stale


def main(argv: list[str]) -> int:
    directory = schemas_dir()
    if argv == ["--check"]:
        stale = stale_files(directory)
        for name in stale:
            print(f"{directory / name}: stale; regenerate with: {REGENERATE}", file=sys.stderr)
        return 1 if stale else 0
    if argv:
        print(f"usage: {REGENERATE} [--check]", file=sys.stderr)
        return 2
    for name, text in generate().items():
        (directory / name).write_text(text, encoding="utf-8")
        print(directory / name)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
