#!/usr/bin/env python3
"""A fake kubectl for the runtime-script tests: scripted answers, every call recorded.

It understands exactly the calls mpigen's runtime scripts make, and fails loudly (exit 99) on any
other. `$FAKE_KUBECTL_DIR` holds `scenario.json`, `{"KEY": [answer, ...]}` with KEY one of
`get pod NAME`, `get job NAME`, `get secret NAME`, `patch KIND NAME`, `scale statefulset NAME`, `delete KIND NAME`; each call consumes the
next answer for its key and the last one repeats. The fake appends each call's argv to `calls.jsonl`
and keeps its position in `state.json`.

Answers: `"NotFound"`, `"Forbidden"` and `"Refused"` fail the way kubectl does. Otherwise a pod's
answer is its Ready status (`"True"`, `"False"`, `""` for none), a job's answer is
`{"uid": ..., "conditions": {"TYPE": "True"|"False"}}`, a secret's `{"resourceVersion": ..., "privatekey":
base64 or ""}`, and a patch, scale or delete answer is `"ok"` (or `"Conflict"`: the resourceVersion is stale).
Keys without answers: gets are NotFound, patch, scale and delete succeed.
Error texts follow kubectl 1.37 and 1.20 against a real API server.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

RESOURCES = {  # kubectl's names for a kind: (resource for messages, API group, printed kind)
    "pod": ("pods", "", "pod"),
    "secret": ("secrets", "", "secret"),
    "job": ("jobs.batch", "batch", "job.batch"),
    "statefulset": ("statefulsets.apps", "apps", "statefulset.apps"),
    "serviceaccount": ("serviceaccounts", "", "serviceaccount"),
    "role": (
        "roles.rbac.authorization.k8s.io",
        "rbac.authorization.k8s.io",
        "role.rbac.authorization.k8s.io",
    ),
    "rolebinding": (
        "rolebindings.rbac.authorization.k8s.io",
        "rbac.authorization.k8s.io",
        "rolebinding.rbac.authorization.k8s.io",
    ),
}
REFUSED = "The connection to the server 10.96.0.1:443 was refused - did you specify the right host or port?"
UNSUPPORTED = 99


class Unsupported(Exception):
    """A call the runtime scripts are not expected to make."""


def error_text(answer: str, verb: str, kind: str, name: str) -> str:
    """What kubectl prints for a failed request."""
    resource, group, _ = RESOURCES[kind]
    if answer == "NotFound":
        return f'Error from server (NotFound): {resource} "{name}" not found'
    if answer == "Conflict":
        return (
            f'Error from server (Conflict): Operation cannot be fulfilled on {resource} "{name}": the object '
            "has been modified; please apply your changes to the latest version and try again"
        )
    if answer == "Conflict":
        return (
            f'Error from server (Conflict): Operation cannot be fulfilled on {resource} "{name}": the object '
            "has been modified; please apply your changes to the latest version and try again"
        )
    if answer == "Forbidden":
        plural = resource.split(".")[0]
        return (
            f'Error from server (Forbidden): {resource} "{name}" is forbidden: User '
            f'"system:serviceaccount:default:fake" cannot {verb} resource "{plural}" in API group '
            f'"{group}" in the namespace "default"'
        )
    return REFUSED


class Cluster:
    """The scripted answers and how many of each have been used."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.answers: dict[str, list[Any]] = json.loads((folder / "scenario.json").read_text())
        state = folder / "state.json"
        self.used: dict[str, int] = json.loads(state.read_text()) if state.exists() else {}

    def next(self, key: str, default: Any) -> Any:
        answers = self.answers.get(key) or [default]
        position = self.used.get(key, 0)
        self.used[key] = position + 1
        return answers[min(position, len(answers) - 1)]

    def save(self) -> None:
        (self.folder / "state.json").write_text(json.dumps(self.used))


def option(args: list[str], flag: str) -> str:
    """The value of `-o VALUE`-style flag, removing both from args."""
    at = args.index(flag)
    value = args[at + 1]
    del args[at : at + 2]
    return value


def get_pods(cluster: Cluster, names: list[str], out: list[str], err: list[str]) -> int:
    answers = [cluster.next(f"get pod {name}", "NotFound") for name in names]
    if "Refused" in answers:
        err.append(REFUSED)
        return 1
    rc = 0
    for name, answer in zip(names, answers):
        if answer in ("NotFound", "Forbidden"):
            err.append(error_text(answer, "get", "pod", name))
            rc = 1
        else:
            out.append(f"{name}   {answer or '<none>'}")
    return rc


def get_job(cluster: Cluster, name: str, output: str, out: list[str], err: list[str]) -> int:
    answer = cluster.next(f"get job {name}", "NotFound")
    if isinstance(answer, str):
        err.append(error_text(answer, "get", "job", name))
        return 1
    if output == "jsonpath={.metadata.uid}":
        out.append(answer.get("uid", ""))
    elif output.startswith('jsonpath={range .status.conditions[?(@.status=="True")]}'):
        out.append("".join(f"{t} " for t, s in answer.get("conditions", {}).items() if s == "True"))
    else:
        raise Unsupported(output)
    return 0


def get_secret(cluster: Cluster, name: str, output: str, out: list[str], err: list[str]) -> int:
    answer = cluster.next(f"get secret {name}", "NotFound")
    if isinstance(answer, str):
        err.append(error_text(answer, "get", "secret", name))
        return 1
    if output != "jsonpath={.metadata.resourceVersion} {.data.ssh-privatekey}":
        raise Unsupported(output)
    out.append(f"{answer['resourceVersion']} {answer['privatekey']}")
    return 0


def change(cluster: Cluster, verb: str, kind: str, name: str, out: list[str], err: list[str]) -> int:
    answer = cluster.next(f"{verb} {kind} {name}", "ok")
    if answer != "ok":
        # kubectl patch and scale GET the object first: NotFound and Forbidden name that request.
        err.append(error_text(answer, "get" if answer == "NotFound" else verb, kind, name))
        return 1
    out.append(f"{RESOURCES[kind][2]}/{name} {'patched' if verb == 'patch' else 'scaled'}")
    return 0


def delete(cluster: Cluster, kind: str, name: str, out: list[str], err: list[str]) -> int:
    answer = cluster.next(f"delete {kind} {name}", "ok")
    if answer != "ok":
        err.append(error_text(answer, "delete", kind, name))
        return 1
    out.append(f'{RESOURCES[kind][2]} "{name}" deleted')
    return 0


def run(cluster: Cluster, args: list[str], out: list[str], err: list[str]) -> int:
    """Answer one kubectl call; raise Unsupported for anything the scripts should not do."""
    args = list(args)
    if args[:2] == ["get", "pod"] and "--no-headers" in args:
        args.remove("--no-headers")
        if not option(args, "-o").startswith("custom-columns=NAME:.metadata.name,READY:"):
            raise Unsupported("columns")
        return get_pods(cluster, args[2:], out, err)
    if args[:2] == ["get", "job"] and len(args) == 5:
        output = option(args, "-o")
        return get_job(cluster, args[2], output, out, err)
    if args[:2] == ["get", "secret"] and len(args) == 5:
        output = option(args, "-o")
        return get_secret(cluster, args[2], output, out, err)
    if args[0] == "patch" and len(args) == 6 and args[3] == "--type=merge" and args[4] == "-p":
        json.loads(args[5])  # must be JSON, as the API server insists
        return change(cluster, "patch", args[1], args[2], out, err)
    if args[:2] == ["scale", "statefulset"] and args[3:] == ["--replicas=0"]:
        return change(cluster, "scale", "statefulset", args[2], out, err)
    if args[0] == "delete" and len(args) == 4 and args[3] == "--wait=false":
        return delete(cluster, args[1], args[2], out, err)
    raise Unsupported(" ".join(args))


def main(argv: list[str]) -> int:
    folder = Path(os.environ["FAKE_KUBECTL_DIR"])
    with (folder / "calls.jsonl").open("a") as log:
        log.write(json.dumps(argv) + "\n")
    cluster = Cluster(folder)
    out: list[str] = []
    err: list[str] = []
    try:
        rc = run(cluster, argv, out, err)
    except (Unsupported, ValueError, IndexError, KeyError) as exc:
        sys.stderr.write(f"fake kubectl: unsupported call {argv!r}: {exc!r}\n")
        return UNSUPPORTED
    cluster.save()
    sys.stdout.write("".join(f"{line}\n" for line in out))
    sys.stderr.write("".join(f"{line}\n" for line in err))
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
