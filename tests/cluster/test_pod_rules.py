"""The real API server is the judge of mpigen's pod rules (mpigen.checks.pod): seeded mutations of pod
templates across the families of Kubernetes' pod validation (tests/cluster/podmutations.py) are compiled
by mpigen, and the objects with pod templates it renders (validation off, so that they exist) are sent to
the suite's kube-apiserver with a server-side dry run (`POST ...?dryRun=All&fieldValidation=Strict`,
concurrently, with the admin kubeconfig's client certificate). mpigen's verdict (does `render` refuse the
job?) must equal the server's (does it refuse any of the job's objects?) on every case; DEPARTURES lists
where mpigen is deliberately stricter (docs/departures.md). A job whose input mpigen refuses before any
object is built has its mutated template sent as a PodTemplate instead.

MPIGEN_POD_RULES_CASES (default 4800: 150 per family) and MPIGEN_POD_RULES_SEED (default 1) choose the
cases; MPIGEN_POD_RULES_FAMILIES (comma-separated) keeps only those families' cases among them, so that
a large count judges a few families deeply. The agreement per family is printed (with `-s`), and
written as JSON to MPIGEN_POD_RULES_REPORT when set.
Its "same field" column: of the cases the server refused naming fields (HTTP 422), those where mpigen's
rules name one of the same fields."""

from __future__ import annotations

import copy
import http.client
import json
import os
import ssl
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, NamedTuple

import podmutations
import pytest
import yaml
from controlplane import Cluster

import mpigen
from mpigen.checks.pod import check_object, server_path, version_tuple
from mpigen.checks.templates import template_paths
from mpigen.compiler import compile_job
from mpigen.targets import all_kinds

# Kubernetes' kinds and every target's own (a render hands the checks its target's).
PATHS = template_paths(all_kinds())

Obj = dict[str, Any]
POD_KINDS = {
    ("apps/v1", "StatefulSet"): "apis/apps/v1/namespaces/{ns}/statefulsets",
    ("batch/v1", "Job"): "apis/batch/v1/namespaces/{ns}/jobs",
    ("v1", "PodTemplate"): "api/v1/namespaces/{ns}/podtemplates",
}
ATTEMPTS = 5  # per object, on a dropped connection or a 429/5xx
# mpigen's deliberately stricter rules (docs/departures.md): a refusal whose every message holds one of these.
DEPARTURES: tuple[str, ...] = (
    # a pod overhead without a RuntimeClass: the template passes, the RuntimeClass admission refuses its pods
    "set without a runtimeClassName",
    # an object whose JSON passes the 256 KiB of annotations client-side `kubectl apply` stores it in; the
    # server's dry run adds no such annotation (tests/cluster/test_sizes.py applies it for real)
    "with the last-applied-configuration annotation client-side `kubectl apply` adds",
)


class Verdict(NamedTuple):
    refused: bool
    messages: tuple[str, ...]
    fields: frozenset[str] = frozenset()  # the server's: its causes' fields


class ApiServer:
    """Server-side dry runs over one keep-alive HTTPS connection per thread."""

    def __init__(self, kubeconfig: Path, namespace: str) -> None:
        config = yaml.safe_load(kubeconfig.read_text())
        cluster, user = config["clusters"][0]["cluster"], config["users"][0]["user"]
        if "client-certificate" not in user:
            pytest.skip("the differential pod test needs a kubeconfig with a client certificate")
        self.context = ssl.create_default_context(cafile=cluster["certificate-authority"])
        self.context.load_cert_chain(user["client-certificate"], user["client-key"])
        self.host = cluster["server"].removeprefix("https://")
        self.namespace = namespace
        self.local = threading.local()
        self.opened: list[http.client.HTTPSConnection] = []
        self.lock = threading.Lock()

    def _connection(self) -> http.client.HTTPSConnection:
        if getattr(self.local, "connection", None) is None:
            self.local.connection = http.client.HTTPSConnection(self.host, context=self.context, timeout=60)
            with self.lock:
                self.opened.append(self.local.connection)
        connection: http.client.HTTPSConnection = self.local.connection
        return connection

    def close(self) -> None:
        for connection in self.opened:
            connection.close()

    def dry_run(self, obj: Obj) -> Verdict:
        path = POD_KINDS[(obj["apiVersion"], obj["kind"])].format(ns=self.namespace)
        body = json.dumps(obj).encode()
        for attempt in range(ATTEMPTS):
            try:
                connection = self._connection()
                connection.request(
                    "POST",
                    f"/{path}?dryRun=All&fieldValidation=Strict",
                    body,
                    {"Content-Type": "application/json", "Accept": "application/json"},
                )
                response = connection.getresponse()
                status = json.loads(response.read() or b"{}")
            except (OSError, http.client.HTTPException):
                self.local.connection.close()
                self.local.connection = None
                if attempt == ATTEMPTS - 1:
                    raise
                time.sleep(attempt + 1)
                continue
            if response.status in (200, 201):
                return Verdict(False, ())
            if response.status in (400, 422):
                causes = (status.get("details") or {}).get("causes") or []
                return Verdict(
                    True, (status.get("message", ""),), frozenset(c.get("field", "") for c in causes)
                )
            if attempt == ATTEMPTS - 1 or response.status < 429:
                template = json.dumps(obj.get("spec", obj).get("template"))[:800]
                raise AssertionError(
                    f"dry run of {obj['kind']}: HTTP {response.status}: {status}\ntemplate: {template}"
                )
            time.sleep(attempt + 1)  # 429, or 5xx from an overloaded machine: the verdict is still to come
        raise AssertionError("unreachable")


def _pod_objects(case: podmutations.Case, namespace: str) -> tuple[list[Obj], Verdict]:
    """The job's objects with pod templates (rendered without validation when mpigen refuses the job)
    and mpigen's own verdict."""
    job = copy.deepcopy(case.job)
    job["metadata"]["namespace"] = namespace
    try:
        objects = compile_job(job, mpigen.Options()).objects
        mine = Verdict(False, ())
    except mpigen.CompileError as exc:
        mine = Verdict(True, tuple(issue.text() for issue in exc.issues))
        try:
            objects = compile_job(job, mpigen.Options(validate=False)).objects
        except mpigen.CompileError:  # refused while planning: the server judges the template itself
            template = case.job["spec"]["mpiReplicaSpecs"][case.role]["template"]
            objects = [
                {
                    "apiVersion": "v1",
                    "kind": "PodTemplate",
                    "metadata": {"name": f"case-{case.number}"},
                    "template": template,
                }
            ]
    return [obj for obj in objects if (obj.get("apiVersion"), obj.get("kind")) in POD_KINDS], mine


def _fields(objects: list[Obj]) -> set[str]:
    """The fields mpigen's pod rules name in these objects, as the server names them."""
    return {server_path(v.path) for obj in objects for v in check_object(obj, version_tuple("1.37"), PATHS)}


def _key(obj: Obj) -> str:
    return json.dumps(obj, sort_keys=True)


def test_pod_rules_agree_with_the_api_server(cluster: Cluster, namespace: str) -> None:
    families = os.environ.get("MPIGEN_POD_RULES_FAMILIES", "")
    chosen = set(families.split(",")) if families else set(podmutations.ALL_FAMILIES)
    assert chosen <= set(podmutations.ALL_FAMILIES), (
        f"no such family: {chosen - set(podmutations.ALL_FAMILIES)}"
    )
    cases = [
        podmutations.case(int(os.environ.get("MPIGEN_POD_RULES_SEED", "1")), n)
        for n in range(int(os.environ.get("MPIGEN_POD_RULES_CASES", "4800")))
        if podmutations.family(n) in chosen
    ]
    server = ApiServer(cluster.admin_kubeconfig, namespace)
    started = time.perf_counter()
    prepared = [(case, *_pod_objects(case, namespace)) for case in cases]
    unique = {_key(obj): obj for _, objects, _ in prepared for obj in objects}
    compiled = time.perf_counter()
    try:
        with ThreadPoolExecutor(max_workers=8) as pool:
            verdicts = dict(zip(unique, pool.map(server.dry_run, unique.values()), strict=True))
    finally:
        server.close()
    judged = time.perf_counter()
    tally: dict[str, Counter[str]] = {f: Counter() for f in podmutations.ALL_FAMILIES if f in chosen}
    disagreements = []
    for case, objects, mine in prepared:
        theirs = [verdicts[_key(obj)] for obj in objects]
        refused = any(v.refused for v in theirs)
        count = tally[case.family]
        count["cases"] += 1
        count["server refused"] += refused
        stricter = (
            mine.refused and not refused and all(any(d in m for d in DEPARTURES) for m in mine.messages)
        )
        if mine.refused == refused or stricter:
            count["agree"] += 1
            server_fields = frozenset().union(*(v.fields for v in theirs))
            if refused and server_fields:
                count["same field"] += bool(server_fields & _fields(objects))
                count["field compared"] += 1
        else:
            disagreements.append((case, mine, [v for v in theirs if v.refused]))
    _report(tally, len(unique))
    print(
        f"mpigen: {compiled - started:.1f} s for {len(cases)} cases; the server: {judged - compiled:.1f} s for {len(unique)} dry runs"
    )
    assert not disagreements, (
        "\n".join(
            f"case {case.number} ({case.family}, {case.role}): mpigen {'refuses' if mine.refused else 'accepts'}, the server "
            f"{'refuses' if theirs else 'accepts'}\n  template: {json.dumps(case.job['spec']['mpiReplicaSpecs'][case.role]['template'])[:400]}\n"
            f"  mpigen: {[m[:300] for m in mine.messages[:2]]}\n  server: {[v.messages[0][:300] for v in theirs][:2]}"
            for case, mine, theirs in disagreements[:40]
        )
        + f"\n{len(disagreements)} disagreements"
    )


def _report(tally: dict[str, Counter[str]], objects: int) -> None:
    lines = [f"{'family':<12} {'cases':>6} {'accepted':>9} {'refused':>8} {'agree':>6} {'same field':>11}"]
    for family, count in tally.items():
        accepted = count["cases"] - count["server refused"]
        lines.append(
            f"{family:<12} {count['cases']:>6} {accepted:>9} {count['server refused']:>8} {count['agree']:>6} "
            f"{count['same field']:>5}/{count['field compared']:<5}"
        )
    print(f"\npod rules against kube-apiserver ({objects} distinct objects dry-run):\n" + "\n".join(lines))
    if target := os.environ.get("MPIGEN_POD_RULES_REPORT"):
        Path(target).write_text(json.dumps({f: dict(c) for f, c in tally.items()}, indent=1, sort_keys=True))


GOLDEN = Path(__file__).resolve().parents[2] / "golden"
POD_GOLDEN = sorted(
    path.name
    for path in GOLDEN.glob("error-pod-*")
    if "the API server would refuse" in (path / "errors.txt").read_text()
)


def test_pod_golden_cases_are_refused_by_the_api_server_too(cluster: Cluster, namespace: str) -> None:
    """Each golden case of a pod rule (the issue's examples: dnsPolicy: Sometimes, `cpu: one`, ...): the
    objects its job gives without mpigen's checks are refused by the server."""
    assert len(POD_GOLDEN) >= 13
    server = ApiServer(cluster.admin_kubeconfig, namespace)
    try:
        for name in POD_GOLDEN:
            job = yaml.safe_load((GOLDEN / name / "input.yaml").read_text())
            job["metadata"]["namespace"] = namespace
            objects = compile_job(job, mpigen.Options(validate=False)).objects
            verdicts = [
                server.dry_run(obj) for obj in objects if (obj["apiVersion"], obj["kind"]) in POD_KINDS
            ]
            assert any(v.refused for v in verdicts), f"{name}: the API server accepts what mpigen refuses"
    finally:
        server.close()
