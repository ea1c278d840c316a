"""A recording fake Kubernetes API server, so that tests can run the real kubectl against it.

It serves just enough discovery for kubectl to map `pod`, `job`, `statefulset`, `serviceaccount`,
`role` and `rolebinding`, answers GET, PATCH, PUT and DELETE on a fixed set of named objects (404 for any
other), and records every request as `Request(verb, group, resource, name)` in RBAC terms, so a test
can check each one against a Role's rules. Plain HTTP on 127.0.0.1, no authentication.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self

VERBS = {"GET": "get", "PATCH": "patch", "PUT": "update", "DELETE": "delete"}
KINDS = {  # resource -> (group, version, kind, short names)
    "pods": ("", "v1", "Pod", ["po"]),
    "serviceaccounts": ("", "v1", "ServiceAccount", ["sa"]),
    "jobs": ("batch", "v1", "Job", []),
    "statefulsets": ("apps", "v1", "StatefulSet", ["sts"]),
    "roles": ("rbac.authorization.k8s.io", "v1", "Role", []),
    "rolebindings": ("rbac.authorization.k8s.io", "v1", "RoleBinding", []),
}
SUBRESOURCES = {"statefulsets/scale": "Scale", "pods/exec": "PodExecOptions"}
_OBJECT_PATH = re.compile(
    r"/(?:api|apis/(?P<group>[^/]+))/v1/namespaces/[^/]+/(?P<res>[^/]+)/(?P<name>[^/]+)(?:/(?P<sub>[^/]+))?\Z"
)


@dataclass(frozen=True)
class Request:
    """One API request in the terms of an RBAC rule."""

    verb: str
    group: str
    resource: str  # with its subresource: "statefulsets/scale"
    name: str


@dataclass
class World:
    """The objects that exist, by resource and name, as JSON-ready dicts (metadata is added)."""

    objects: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    requests: list[Request] = field(default_factory=list)


def pod(ready: str | None) -> dict[str, Any]:
    """A pod whose Ready condition has this status (None: no conditions yet)."""
    conditions = [] if ready is None else [{"type": "Ready", "status": ready}]
    return {"status": {"phase": "Running" if ready else "Pending", "conditions": conditions}}


def job(uid: str, **conditions: str) -> dict[str, Any]:
    """A Job with this uid and conditions (type=status)."""
    found = [{"type": t, "status": s} for t, s in conditions.items()]
    return {"metadata": {"uid": uid}, "status": {"conditions": found}}


def discovery(path: str) -> dict[str, Any] | None:
    """The discovery document at `path`, or None."""
    if path == "/api":
        return {"kind": "APIVersions", "versions": ["v1"]}
    groups = sorted({g for g, *_ in KINDS.values() if g})
    if path == "/apis":
        return {
            "kind": "APIGroupList",
            "apiVersion": "v1",
            "groups": [
                {
                    "name": g,
                    "versions": [{"groupVersion": f"{g}/v1", "version": "v1"}],
                    "preferredVersion": {"groupVersion": f"{g}/v1", "version": "v1"},
                }
                for g in groups
            ],
        }
    for group in [""] + groups:
        if path == ("/api/v1" if not group else f"/apis/{group}/v1"):
            return _resource_list(group)
    return None


def _resource_list(group: str) -> dict[str, Any]:
    verbs = ["delete", "get", "list", "patch", "update"]
    resources = [
        {
            "name": res,
            "singularName": "",
            "namespaced": True,
            "kind": kind,
            "verbs": verbs,
            "shortNames": short,
        }
        for res, (g, _, kind, short) in KINDS.items()
        if g == group
    ]
    resources += [
        {"name": sub, "singularName": "", "namespaced": True, "kind": kind, "verbs": verbs}
        for sub, kind in SUBRESOURCES.items()
        if KINDS[sub.split("/")[0]][0] == group
    ]
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": f"{group}/v1".lstrip("/"),
        "resources": resources,
    }


def answer(world: World, method: str, path: str) -> tuple[int, dict[str, Any]]:
    """Record the request and return (status, body)."""
    found = discovery(path)
    if found is not None:
        return 200, found
    match = _OBJECT_PATH.match(path)
    if not match or match["res"] not in KINDS:
        return 404, _status(404, "NotFound", f"no route {path}")
    res, name, sub = match["res"], match["name"], match["sub"]
    world.requests.append(Request(VERBS[method], match["group"] or "", f"{res}/{sub}" if sub else res, name))
    plural = res if not match["group"] else f"{res}.{match['group']}"
    if name not in world.objects.get(res, {}):
        return 404, _status(404, "NotFound", f'{plural} "{name}" not found', name=name, kind=res)
    if method == "DELETE":
        return 200, _object(res, name, sub, world.objects[res].pop(name))
    return 200, _object(res, name, sub, world.objects[res][name])


def _object(res: str, name: str, sub: str | None, body: dict[str, Any]) -> dict[str, Any]:
    group, version, kind, _ = KINDS[res]
    meta = {"name": name, "namespace": "default", "resourceVersion": "1", **body.get("metadata", {})}
    if sub == "scale":
        return {"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": meta, "spec": {"replicas": 0}}
    api_version = f"{group}/{version}" if group else version
    return {**body, "kind": kind, "apiVersion": api_version, "metadata": meta}


def _status(code: int, reason: str, message: str, **details: str) -> dict[str, Any]:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "status": "Failure",
        "reason": reason,
        "code": code,
        "message": message,
        "details": details,
    }


class FakeAPIServer:
    """Serve `world` on 127.0.0.1 in a thread; use as a context manager."""

    def __init__(self, world: World) -> None:
        self.world = world
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        world = self.world

        class Handler(BaseHTTPRequestHandler):
            def _reply(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                code, body = answer(world, self.command, self.path.split("?")[0])
                data = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_PATCH = do_PUT = do_DELETE = _reply

            def log_message(self, format: str, *args: Any) -> None:
                """Stay quiet: the world's request list is the log."""

        return Handler

    def kubeconfig(self, path: Path) -> Path:
        """Write a kubeconfig for this server (namespace default) to `path`."""
        host, port = self._server.server_address[:2]
        server = f"http://{host!s}:{port}"
        path.write_text(
            json.dumps(
                {
                    "apiVersion": "v1",
                    "kind": "Config",
                    "clusters": [{"name": "fake", "cluster": {"server": server}}],
                    "users": [{"name": "fake", "user": {"token": "fake"}}],
                    "contexts": [
                        {
                            "name": "fake",
                            "context": {"cluster": "fake", "user": "fake", "namespace": "default"},
                        }
                    ],
                    "current-context": "fake",
                }
            )
        )
        return path

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
