"""`kubectl get -o json` on the suite's own control planes, read over HTTPS in this process.

The cluster tests poll objects (`Cluster.wait_for` with `Cluster.get`) hundreds of times; a kubectl
process per look costs about 70 ms of CPU, more than the rest of the look together, and the suite is
bound by CPU. `Reader.get` answers the calls kubectl would answer plainly — a resource (or several,
comma-separated) by its name, plural, singular, short or `plural.group` name, an optional object name,
`-n`/`--namespace`, `-l`/`--selector`, `-A`/`--all-namespaces` — with the same JSON (a named object as
the server returns it but for its managedFields, as kubectl leaves them out; otherwise a `List` whose items carry their apiVersion and kind, in the server's
order). Anything else, and a resource name that several API groups serve (kubectl's priorities choose
there), returns None, and the caller asks kubectl. tests/cluster/test_restget.py holds it to kubectl.
"""

from __future__ import annotations

import json
import ssl
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

AMBIGUOUS = "ambiguous"


@dataclass(frozen=True)
class Resource:
    group_version: str  # "v1", "batch/v1"
    plural: str
    namespaced: bool
    kind: str

    def path(self, namespace: str | None) -> str:
        root = "/api/v1" if self.group_version == "v1" else f"/apis/{self.group_version}"
        return f"{root}/namespaces/{namespace}/{self.plural}" if namespace else f"{root}/{self.plural}"


@dataclass(frozen=True)
class Call:
    resources: list[str]
    name: str | None
    namespace: str | None
    selector: str | None
    all_namespaces: bool


def parse(argv: tuple[str, ...]) -> Call | None:
    """The `kubectl get` arguments this reader answers, or None."""
    positional: list[str] = []
    namespace = selector = None
    all_namespaces = False
    words = iter(argv)
    for word in words:
        if word in ("-n", "--namespace", "-l", "--selector"):
            value = next(words, None)
            if value is None:
                return None
            if word in ("-n", "--namespace"):
                namespace = value
            else:
                selector = value
        elif word.startswith(("--namespace=", "--selector=")):
            key, value = word.split("=", 1)
            namespace, selector = (value, selector) if key == "--namespace" else (namespace, value)
        elif word in ("-A", "--all-namespaces"):
            all_namespaces = True
        elif word.startswith("-") or "/" in word:
            return None
        else:
            positional.append(word)
    if not positional or len(positional) > 2:
        return None
    resources = positional[0].split(",")
    name = positional[1] if len(positional) == 2 else None
    if not all(resources) or (name is not None and (len(resources) > 1 or all_namespaces)):
        return None
    return Call(resources, name, namespace, selector, all_namespaces)


def shown(obj: dict[str, Any]) -> dict[str, Any]:
    """`obj` as kubectl prints it: without its managedFields (`--show-managed-fields=false`)."""
    obj.get("metadata", {}).pop("managedFields", None)
    return obj


class Refused(AssertionError):
    """The server refused a read; `reason` is its Status reason (NotFound, Forbidden, ...)."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


class Reader:
    """Reads the API of one control plane as its admin (the client certificate of `pki`)."""

    def __init__(self, server: str, pki: Path) -> None:
        self.server = server
        self.context = ssl.create_default_context(cafile=str(pki / "ca.crt"))
        self.context.load_cert_chain(str(pki / "admin.crt"), str(pki / "admin.key"))
        self.lock = threading.Lock()
        self.table: dict[str, Resource | str] = {}

    def get(self, argv: tuple[str, ...]) -> Any | None:
        """What `kubectl get <argv> -o json` prints, parsed; None when kubectl should answer. A
        refusal (an object that is not there) raises AssertionError, as Cluster.kubectl does."""
        call = parse(argv)
        if call is None:
            return None
        found = [self.resource(name) for name in call.resources]
        if any(resource is None for resource in found):
            return None
        resources = [resource for resource in found if resource is not None]
        namespace = None if call.all_namespaces else (call.namespace or "default")
        if call.name is not None:
            (resource,) = resources
            where = namespace if resource.namespaced else None
            return shown(self.read(f"{resource.path(where)}/{urllib.parse.quote(call.name)}", argv))
        items = []
        for resource in resources:
            query = f"?labelSelector={urllib.parse.quote(call.selector)}" if call.selector else ""
            listed = self.read(resource.path(namespace if resource.namespaced else None) + query, argv)
            for item in listed["items"]:
                items.append(shown({"apiVersion": resource.group_version, "kind": resource.kind, **item}))
        return {"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}}

    def resource(self, name: str) -> Resource | None:
        """The resource kubectl would take `name` for, from discovery (read again once on a miss:
        a CRD may have come since); None where it is unknown or several groups serve it."""
        with self.lock:
            if name not in self.table:
                self.table = self.discover()
            found = self.table.get(name)
        return found if isinstance(found, Resource) else None

    def discover(self) -> dict[str, Resource | str]:
        """Every name of every resource of the groups' preferred versions; empty (kubectl answers,
        and the next call reads again) while a group's version cannot be read, as just after its CRD
        is created: a name that seemed unique could then be another group's too."""
        table: dict[str, Resource | str] = {}
        versions = ["v1"] + [
            group["preferredVersion"]["groupVersion"] for group in self.read("/apis", ())["groups"]
        ]
        for group_version in versions:
            path = "/api/v1" if group_version == "v1" else f"/apis/{group_version}"
            group = group_version.rpartition("/")[0]
            try:
                listed_resources = self.read(path, ())["resources"]
            except AssertionError:
                return {}
            for listed in listed_resources:
                if "/" in listed["name"]:
                    continue  # a subresource
                resource = Resource(group_version, listed["name"], listed["namespaced"], listed["kind"])
                own = [listed["name"], listed.get("singularName") or ""]
                names = {*own, *listed.get("shortNames", [])}
                if group:
                    names |= {f"{word}.{group}" for word in own if word}
                for key in names - {""}:
                    table[key] = resource if table.get(key, resource) == resource else AMBIGUOUS
        return table

    def read(self, path: str, argv: tuple[str, ...]) -> Any:
        """The JSON at `path`; a 429 with Retry-After is retried as client-go retries it (up to 10
        times), any other refusal raises AssertionError in kubectl's words."""
        request = urllib.request.Request(self.server + path, headers={"Accept": "application/json"})
        for attempt in range(11):
            try:
                with urllib.request.urlopen(request, context=self.context, timeout=60) as response:
                    return json.load(response)
            except urllib.error.HTTPError as refused:
                body = refused.read()
                wait = refused.headers.get("Retry-After")
                if refused.code == 429 and wait and attempt < 10:
                    time.sleep(min(int(wait), 10))
                    continue
                try:
                    status = json.loads(body)
                except ValueError:
                    status = {"message": body.decode(errors="replace").strip()}
                reason = str(status.get("reason", refused.code))
                raise Refused(
                    f"kubectl get {' '.join(argv)} failed (1):\nError from server "
                    f"({reason}): {status.get('message', '')} [GET {path}]",
                    reason,
                ) from None
        raise AssertionError("unreachable")
