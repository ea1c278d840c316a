"""Validation reports: what `mpigen validate` found, per resource, as kubeconform reports it. Pure.

The kubeconform rendering of `mpigen.outcome`: one `Resource` row per input document and per object
the inputs would produce, each with a kubeconform status: `statusValid`, `statusInvalid` (the input
breaks a rule: exit 1), `statusError` (the input cannot be read at all: exit 1) or `statusSkipped`
(not an MPIJob: passed through, not checked; or a file that cannot be read as YAML and never names an
MPIJob, such as a Helm template). An emitted object that fails Kubernetes' schemas is
`statusInvalid` with `bug: true`: mpigen's fault, never the user's (exit 3 when no input is invalid,
the rule every shell shares: `mpigen.outcome.exit_code`). Field paths in the JSON report are JSON
Pointers (`/spec/replicas`), as kubeconform prints them; the text report uses mpigen's one-line form
(`spec.replicas`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from xml.etree import ElementTree

    from mpigen.inputs.trainjob import Runtimes

from mpigen import inputs as api
from mpigen.inputs.lists import flatten_documents
from mpigen.options import Options
from mpigen.outcome import PLEASE_REPORT, Finding, Placement, exit_code, json_errors
from mpigen.pipeline import check_collisions, process
from mpigen.pipeline import collect_runtimes as pipeline_runtimes
from mpigen.yaml.load import Document, ForeignInput

VALID, INVALID, ERROR, SKIPPED = "statusValid", "statusInvalid", "statusError", "statusSkipped"


class Resource:
    """One resource's line of the report, as kubeconform reports one."""

    __slots__ = (
        "bug",
        "document",
        "filename",
        "findings",
        "kind",
        "msg",
        "name",
        "namespace",
        "status",
        "version",
        "warnings",
    )

    def __init__(  # kubeconform's fields
        self,
        filename: str,
        kind: str,
        name: str,
        version: str,
        status: str,
        findings: list[Finding] | None = None,
        warnings: list[Finding] | None = None,
        msg: str = "",
        bug: bool = False,
        document: int | None = None,
        namespace: str = "",
    ) -> None:
        self.filename = filename
        self.kind = kind
        self.name = name
        self.version = version
        self.status = status
        self.findings: list[Finding] = [] if findings is None else findings  # errors (or schema failures)
        self.warnings: list[Finding] = [] if warnings is None else warnings
        self.msg = msg
        self.bug = bug
        self.document = document  # the input document's position, for findings about it; not reported
        self.namespace = namespace  # named in the JUnit report only, as kubeconform's testcase names it


class Report:
    """Every resource of a validate run, and what each document would output."""

    __slots__ = ("placements", "resources")

    def __init__(self) -> None:
        self.resources: list[Resource] = []
        self.placements: list[Placement] = []  # what each document would output

    def count(self, status: str) -> int:
        return sum(resource.status == status for resource in self.resources)

    @property
    def exit_code(self) -> int:
        bugs = any(resource.bug for resource in self.resources)
        invalid = any(resource.status in (INVALID, ERROR) and not resource.bug for resource in self.resources)
        return exit_code(invalid, bugs)


def check_documents(
    report: Report,
    source: str,
    documents: list[Document] | str,
    options: Options,
    runtimes: Runtimes | None = None,
) -> None:
    """Add to `report` one resource per document of `source` and per object it would produce (a TrainJob
    with the runtimes of the whole input, `collect_runtimes`)."""
    if isinstance(documents, ForeignInput):
        msg = f"{_without_source(str(documents), source)} (names no MPIJob: skipped, not checked)"
        report.resources.append(Resource(source, "", "", "", SKIPPED, msg=msg))
        return
    if isinstance(documents, str):
        report.resources.append(Resource(source, "", "", "", ERROR, msg=_without_source(documents, source)))
        return
    for doc in flatten_documents(documents):
        report.resources += _resources(report, source, doc, options, runtimes)


def collect_runtimes(inputs: list[tuple[str, Any]], options: Options) -> Runtimes | None:
    """The Kubeflow Trainer runtimes of every input (None: none and no TrainJob), collected as the pipeline
    collects them (mpigen.pipeline.collect_runtimes); their own problems are reported at their documents
    by `check_documents`."""
    return pipeline_runtimes([(source, docs) for source, docs in inputs if isinstance(docs, list)], options)[
        0
    ]


def _without_source(problem: str, source: str) -> str:
    """A read problem (`job.yaml: line 4, column 1: ...`) without its file's name, which the resource's
    `filename` already gives (each report names it once)."""
    prefix = f"{source}: "
    return problem.removeprefix(prefix)


def add_collisions(report: Report) -> None:
    """Mark the documents that would write an object another document writes too (two jobs with one
    name, or a passed-through object that a job also generates): checked across every input."""
    for finding in check_collisions(report.placements):
        position = finding.document if finding.document else None
        key = (finding.source, position, finding.kind, finding.name)
        row = next(r for r in report.resources if (r.filename, r.document, r.kind, r.name) == key)
        row.status, row.msg = (
            INVALID,
            "; ".join(filter(None, [row.msg if row.status == INVALID else "", finding.issue.text()])),
        )
        row.findings.append(finding)


def _resources(
    report: Report, source: str, doc: Document, options: Options, runtimes: Runtimes | None = None
) -> list[Resource]:
    data = doc.data
    kind, name, version = _identity(data)
    position = doc.index if doc.total > 1 else None
    if isinstance(data, dict) and not api.claims(data):
        report.placements += process([(source, [doc])], options).placements
        msg = "not an MPIJob: passed through unchanged, not checked"
        if api.foreign_mpijob(data):
            msg = api.foreign_warning(data).message
        return [
            Resource(
                source, kind, name, version, SKIPPED, msg=msg, document=position, namespace=_namespace(data)
            )
        ]
    if not isinstance(data, dict) and not _holds_mpijob(data):
        # some other tool's document (an Ansible playbook, a JSON array): no MPIJob to check, as the
        # pre-commit hook passes every YAML and JSON file here; one that holds an MPIJob is an error below
        msg = f"not a Kubernetes object but a {'list' if isinstance(data, list) else 'scalar'}, holding no MPIJob: skipped, not checked"
        return [Resource(source, "", "", "", SKIPPED, msg=msg, document=position)]
    result = process([(source, [doc])], options, runtimes)
    report.placements += result.placements
    job = Resource(
        source,
        kind,
        name,
        version,
        INVALID if result.errors else VALID,
        result.errors,
        result.warnings,
        document=position,
    )
    job.namespace = _namespace(data)
    if result.errors:
        job.msg = "; ".join(finding.issue.text() for finding in result.errors)
        return [job]
    out = [job]
    for obj in result.objects:
        meta = obj["metadata"]
        bugs = [f for f in result.invalid_output if (f.kind, f.name) == (obj["kind"], meta["name"])]
        status = INVALID if bugs else VALID
        resource = Resource(
            source,
            obj["kind"],
            meta["name"],
            obj["apiVersion"],
            status,
            bugs,
            bug=bool(bugs),
            namespace=_namespace(obj),
        )
        if bugs:
            resource.msg = (
                f"mpigen produced an object that fails Kubernetes' schemas ({PLEASE_REPORT}): "
                + "; ".join(finding.issue.text() for finding in bugs)
            )
        out.append(resource)
    return out


def _holds_mpijob(data: Any) -> bool:
    """Whether a mapping anywhere in `data` has a kind that names an MPIJob, in any case."""
    stack = [data]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            kind = value.get("kind")
            if isinstance(kind, str) and kind.lower() == "mpijob":
                return True
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return False


def _identity(data: Any) -> tuple[str, str, str]:
    if not isinstance(data, dict):
        return "", "", ""
    meta = data.get("metadata")
    name = meta.get("name") if isinstance(meta, dict) else None
    return tuple(
        str(value) if isinstance(value, str) else ""
        for value in (data.get("kind"), name, data.get("apiVersion"))
    )  # type: ignore[return-value]


def _namespace(data: Any) -> str:
    meta = data.get("metadata") if isinstance(data, dict) else None
    namespace = meta.get("namespace") if isinstance(meta, dict) else None
    return namespace if isinstance(namespace, str) else ""


def to_json(report: Report) -> str:
    resources = []
    for resource in report.resources:
        entry: dict[str, Any] = {
            "filename": resource.filename,
            "kind": resource.kind,
            "name": resource.name,
            "version": resource.version,
            "status": resource.status,
            "msg": resource.msg,
        }
        if resource.findings:
            entry["validationErrors"] = json_errors(resource.findings)
        if resource.warnings:
            entry["warnings"] = json_errors(resource.warnings)
        resources.append(entry)
    summary = {
        "valid": report.count(VALID),
        "invalid": report.count(INVALID),
        "errors": report.count(ERROR),
        "skipped": report.count(SKIPPED),
    }
    return json.dumps({"resources": resources, "summary": summary}, indent=2) + "\n"


def to_text(report: Report) -> str:
    lines = []
    for resource in report.resources:
        if resource.status == ERROR:
            lines.append(f"{resource.filename}: {resource.msg}")
        lines += [finding.text() for finding in resource.findings + resource.warnings]
    return "".join(line + "\n" for line in lines)


def summary_line(report: Report) -> str:
    files = len({resource.filename for resource in report.resources})
    return (
        f"Summary: {len(report.resources)} resources found in {files} files - Valid: {report.count(VALID)}, "
        f"Invalid: {report.count(INVALID)}, Errors: {report.count(ERROR)}, Skipped: {report.count(SKIPPED)}"
    )


def _who(resource: Resource) -> str:
    """What a TAP line names after the file: the kind and name, or the document of an unnamed one."""
    if resource.kind and resource.name:
        return f"{resource.kind}/{resource.name}"
    return resource.kind or (f"document {resource.document}" if resource.document else "")


def to_tap(report: Report) -> str:
    """TAP version 13, as kubeconform's `-output tap` writes it: one line per resource, numbered from 1,
    `ok`, `not ok ... : message` or `ok N #skip`, and the plan line `1..N` last."""
    lines = ["TAP version 13"]
    for number, resource in enumerate(report.resources, 1):
        who = _who(resource)
        subject = _tap_text(resource.filename + (f" ({who})" if who else ""))
        if resource.status == VALID:
            lines.append(f"ok {number} - {subject}")
        elif resource.status == SKIPPED:
            lines.append(f"ok {number} #skip - {subject}")
        else:
            lines.append(f"not ok {number} - {subject}: {_tap_text(resource.msg)}")
    lines.append(f"1..{len(report.resources)}")
    return "".join(line + "\n" for line in lines)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _tap_text(text: str) -> str:
    """A description on one line, its `#` escaped (TAP reads `# SKIP` or `# TODO` after one)."""
    return _one_line(text).replace("\\", "\\\\").replace("#", "\\#")


def to_junit(report: Report) -> str:
    """JUnit XML, as kubeconform's `-output junit` writes it: `<testsuites name="kubeconform">` with one
    `<testsuite>` per input file (in the order first seen) and one `<testcase>` per resource, named
    `namespace/name` with classname `Kind@apiVersion`; an invalid resource has a `<failure>`, an
    unreadable input an `<error>`, a skipped one `<skipped>`. No `time` attributes: the report is the
    same bytes on every run."""
    # deferred: xml.etree only for `validate -o junit`
    from xml.etree import ElementTree

    suites: dict[str, list[Resource]] = {}
    for resource in report.resources:
        suites.setdefault(resource.filename, []).append(resource)
    root = ElementTree.Element("testsuites", _counts("mpigen", report.resources))
    for number, (filename, resources) in enumerate(suites.items(), 1):
        suite = ElementTree.SubElement(
            root, "testsuite", {"name": filename, "id": str(number), **_counts(None, resources)}
        )
        for resource in resources:
            _testcase(suite, resource)
    ElementTree.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ElementTree.tostring(root, encoding="unicode") + "\n"


def _counts(name: str | None, resources: list[Resource]) -> dict[str, str]:
    def count(status: str) -> str:
        return str(sum(resource.status == status for resource in resources))

    counts = {
        "tests": str(len(resources)),
        "failures": count(INVALID),
        "errors": count(ERROR),
        "skipped": count(SKIPPED),
    }
    return {"name": name, **counts} if name else counts


def _testcase(suite: ElementTree.Element, resource: Resource) -> None:
    # deferred: xml.etree only for `validate -o junit`
    from xml.etree import ElementTree

    name = resource.name or (f"document {resource.document}" if resource.document else resource.filename)
    name = f"{resource.namespace}/{name}" if resource.namespace and resource.name else name
    classname = f"{resource.kind}@{resource.version}" if resource.kind else ""
    case = ElementTree.SubElement(suite, "testcase", {"name": name, "classname": classname})
    if resource.status == INVALID:
        failure = ElementTree.SubElement(
            case,
            "failure",
            {"message": _one_line(resource.msg), "type": "bug" if resource.bug else "invalid"},
        )
        failure.text = "\n".join(finding.text() for finding in resource.findings) or None
    elif resource.status == ERROR:
        ElementTree.SubElement(case, "error", {"message": _one_line(resource.msg), "type": "unreadable"})
    elif resource.status == SKIPPED:
        ElementTree.SubElement(case, "skipped", {"message": _one_line(resource.msg)})


# The one table of report formats: `validate -o`'s choices are its keys.
FORMATS: dict[str, Callable[[Report], str]] = {
    "text": to_text,
    "json": to_json,
    "junit": to_junit,
    "tap": to_tap,
}
