"""Runtime scripts: render wait-for-workers.sh, cleanup.sh and ssh-keygen.sh and run them in real POSIX shells.

The scripts run in dash and busybox ash against `fakekubectl/fake_kubectl.py`, whose answers are
scripted per object and which records every call, so the tests assert on exact kubectl calls, exit
codes and messages. Three tests run the real kubectl (the test extra's) against a recording fake API
server, to check the output formats the scripts parse and that every request they make is allowed
by the Role rules `mpigen.targets.shared.scripts` states.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fakekubectl.apiserver import FakeAPIServer, Request, World, job, pod
from jobs import V2BETA1, make_job

import mpigen
from mpigen.targets.shared.scripts import (
    cleanup_role_rules,
    keygen_role_rules,
    owner_patch,
    render_cleanup_script,
    render_keygen_script,
    render_wait_script,
)

FAKE_KUBECTL = Path(__file__).resolve().parents[2] / "fakekubectl" / "fake_kubectl.py"
SHELLS = {"dash": ["dash"], "busybox": ["busybox", "sh"]}
UID = "6f1c0c57-3c1b-4d2e-9a4f-0123456789ab"
LAUNCHER, STS, SELF = "pi-launcher", "pi-worker", "pi-cleanup"
FORBIDDEN = "Error from server (Forbidden)"


@dataclass
class Result:
    """One finished script run."""

    rc: int
    out: str
    err: str
    calls: list[list[str]]

    def count(self, *prefix: str) -> int:
        return sum(1 for call in self.calls if call[: len(prefix)] == list(prefix))


@pytest.fixture(params=sorted(SHELLS))
def shell(request: pytest.FixtureRequest, script_tools: Callable[[str], str]) -> list[str]:
    """Each POSIX shell the scripts must run in (installed by the suite; skipped when it cannot be)."""
    command = SHELLS[request.param]
    return [script_tools(command[0]), *command[1:]]


class FakeKubectl:
    """A folder with the fake's scenario, call log and a `kubectl` wrapper to pass to the renderers."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.path = folder / "kubectl"
        self.path.write_text(
            f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -I -S {shlex.quote(str(FAKE_KUBECTL))} "$@"\n'
        )
        self.path.chmod(0o755)

    def run(self, shell: list[str], script: str, answers: dict[str, list[Any]], path: str = "") -> Result:
        """Run `shell -c script` (as the clean-up Job does) against these scripted answers."""
        (self.folder / "scenario.json").write_text(json.dumps(answers))
        env = {**os.environ, "FAKE_KUBECTL_DIR": str(self.folder), "PATH": path + os.environ["PATH"]}
        done = subprocess.run(
            [*shell, "-c", script], check=False, capture_output=True, text=True, env=env, timeout=30
        )
        log = self.folder / "calls.jsonl"
        calls = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
        return Result(done.returncode, done.stdout, done.stderr, calls)


@pytest.fixture
def kubectl(tmp_path: Path) -> FakeKubectl:
    return FakeKubectl(tmp_path)


def wait_script(kubectl: FakeKubectl, workers: int, **options: Any) -> str:
    options = {"timeout_seconds": 600, "interval_seconds": 0, **options}
    return render_wait_script(pod_prefix="pi-worker", workers=workers, kubectl=str(kubectl.path), **options)


def cleanup_script(kubectl: FakeKubectl | str, **options: Any) -> str:
    options = {"interval_seconds": 0, "missing_grace_seconds": 0, **options}
    path = kubectl if isinstance(kubectl, str) else str(kubectl.path)
    return render_cleanup_script(
        launcher_job=LAUNCHER, statefulset=STS, self_job=SELF, self_rbac=SELF, kubectl=path, **options
    )


def pod_batches(result: Result) -> list[list[str]]:
    """The pod names of each `get pod` call, in order."""
    return [
        [a for a in call[2:] if a.startswith("pi-worker-")]
        for call in result.calls
        if call[:2] == ["get", "pod"]
    ]


def launcher(*conditions: str, uid: str = UID) -> Any:
    """A Job answer whose listed conditions are True."""
    return {"uid": uid, "conditions": dict.fromkeys(conditions, "True")}


# --- rendering -------------------------------------------------------------------------------------

UNSAFE_NAMES = ["job;reboot", "$(id)", "`id`", "Job", "a b", "", "-x", "x-", "j\nk", "a'b", "x" * 64, "a.b"]


@pytest.mark.parametrize("name", UNSAFE_NAMES)
def test_wait_renderer_rejects_unsafe_names(name: str) -> None:
    with pytest.raises(ValueError, match="DNS-1123"):
        render_wait_script(pod_prefix=name, workers=2)


@pytest.mark.parametrize("name", UNSAFE_NAMES)
@pytest.mark.parametrize("field", ["launcher_job", "statefulset", "self_job", "self_rbac"])
def test_cleanup_renderer_rejects_unsafe_names(field: str, name: str) -> None:
    names = {"launcher_job": LAUNCHER, "statefulset": STS, "self_job": SELF, "self_rbac": SELF, field: name}
    with pytest.raises(ValueError, match=field):
        render_cleanup_script(**names)  # type: ignore[arg-type]  # mypy cannot see the keys are all str


def test_wait_renderer_rejects_pod_names_too_long() -> None:
    render_wait_script(pod_prefix="p" * 60, workers=100)  # p...p-99 has 63 characters
    with pytest.raises(ValueError, match="last worker pod"):
        render_wait_script(pod_prefix="p" * 60, workers=1000)


@pytest.mark.parametrize(
    "options",
    [
        {"workers": 0},
        {"workers": True},
        {"workers": 2.0},
        {"timeout_seconds": -1},
        {"timeout_seconds": 2**63},  # `[ "$elapsed" -ge "$timeout" ]` fails on it: the wait never ends
        {"interval_seconds": "5"},
        {"batch_size": 0},
        {"kubectl": "kubectl; reboot"},
        {"kubectl": ""},
    ],
)
def test_wait_renderer_rejects_bad_values(options: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        render_wait_script(**{"pod_prefix": "pi-worker", "workers": 2, **options})


@pytest.mark.parametrize(
    "options",
    [{"interval_seconds": -1}, {"missing_grace_seconds": None}, {"action": "delete"}, {"kubectl": "$K"}],
)
def test_cleanup_renderer_rejects_bad_values(options: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        cleanup_script(str(options.pop("kubectl", "kubectl")), **options)


def test_wait_script_does_not_grow_with_workers() -> None:
    small = render_wait_script(pod_prefix="pi-worker", workers=8)
    big = render_wait_script(pod_prefix="pi-worker", workers=8000)
    assert abs(len(big) - len(small)) < 10
    assert big == render_wait_script(pod_prefix="pi-worker", workers=8000)


def v1_config_data() -> dict[str, str]:
    """A kubeflow.org/v1 job's ConfigMap: kubexec.sh with `--container`, discover_hosts.sh with slots."""
    from jobs import V1, make_job

    import mpigen

    objects = mpigen.compile(make_job(V1, mainContainer="worker", slotsPerWorker=2))
    data: dict[str, str] = next(obj for obj in objects if obj["kind"] == "ConfigMap")["data"]
    return data


def rendered_scripts() -> dict[str, str]:
    v1 = v1_config_data()
    return {
        "kubexec.sh": v1["kubexec.sh"],
        "discover_hosts.sh": v1["discover_hosts.sh"],
        "wait-for-workers.sh": render_wait_script(pod_prefix="pi-worker", workers=8),
        "cleanup.sh": cleanup_script("kubectl", interval_seconds=30, missing_grace_seconds=300),
        "ssh-keygen.sh": render_keygen_script(
            secret="pi-ssh", self_job="pi-ssh-keygen", self_rbac="pi-ssh-keygen", keys_dir="/keys"
        ),
    }


@pytest.mark.parametrize("name", sorted(rendered_scripts()))
def test_scripts_parse(shell: list[str], name: str) -> None:
    done = subprocess.run(
        [*shell, "-n", "-c", rendered_scripts()[name]], check=False, capture_output=True, text=True
    )
    assert (done.returncode, done.stderr) == (0, "")


@pytest.mark.parametrize("name", sorted(rendered_scripts()))
def test_scripts_pass_shellcheck(name: str, tmp_path: Path, script_tools: Callable[[str], str]) -> None:
    script = tmp_path / name
    script.write_text(rendered_scripts()[name])
    done = subprocess.run(
        [script_tools("shellcheck"), "--shell=sh", str(script)], check=False, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout


# --- wait-for-workers ------------------------------------------------------------------------------


def test_wait_all_ready_at_once(shell: list[str], kubectl: FakeKubectl) -> None:
    answers = {f"get pod pi-worker-{i}": ["True"] for i in range(3)}
    result = kubectl.run(shell, wait_script(kubectl, 3), answers)
    assert (result.rc, result.err) == (0, "")
    assert pod_batches(result) == [["pi-worker-0", "pi-worker-1", "pi-worker-2"]]
    assert result.out.splitlines()[-1] == "all 3 workers ready"


def test_wait_compares_the_largest_timeout_an_option_takes(shell: list[str], kubectl: FakeKubectl) -> None:
    from mpigen.options import MAX_COUNT

    answers = {"get pod pi-worker-0": ["False", "True"]}
    result = kubectl.run(shell, wait_script(kubectl, 1, timeout_seconds=MAX_COUNT), answers)
    assert (result.rc, result.err) == (0, "")
    assert f"timeout {MAX_COUNT}s" in result.out and result.out.splitlines()[-1] == "all 1 workers ready"


def test_wait_polls_only_pods_not_yet_ready(shell: list[str], kubectl: FakeKubectl) -> None:
    answers = {
        "get pod pi-worker-0": ["True"],
        "get pod pi-worker-1": ["NotFound", "", "True"],
        "get pod pi-worker-2": ["NotFound", "NotFound", "False", "True"],
    }
    result = kubectl.run(shell, wait_script(kubectl, 3), answers)
    assert (result.rc, result.err) == (0, "")
    assert pod_batches(result) == [
        ["pi-worker-0", "pi-worker-1", "pi-worker-2"],
        ["pi-worker-1", "pi-worker-2"],
        ["pi-worker-1", "pi-worker-2"],
        ["pi-worker-2"],
    ]
    lines = result.out.splitlines()
    assert lines[1].startswith("waiting for 2/3 workers: pi-worker-1 pi-worker-2 (")
    assert "waiting for 1/3 workers: pi-worker-2 (" in result.out
    assert lines[-1] == "all 3 workers ready"


def test_wait_asks_for_pods_in_batches(shell: list[str], kubectl: FakeKubectl) -> None:
    answers = {f"get pod pi-worker-{i}": ["True"] for i in range(5)} | {
        "get pod pi-worker-3": ["False", "True"]
    }
    result = kubectl.run(shell, wait_script(kubectl, 5, batch_size=2), answers)
    assert result.rc == 0
    assert pod_batches(result) == [
        ["pi-worker-0", "pi-worker-1"],
        ["pi-worker-2", "pi-worker-3"],
        ["pi-worker-4"],
        ["pi-worker-3"],
    ]


def test_wait_times_out_naming_the_pods(shell: list[str], kubectl: FakeKubectl) -> None:
    answers = {"get pod pi-worker-0": ["True"], "get pod pi-worker-2": ["False"]}
    result = kubectl.run(shell, wait_script(kubectl, 3, timeout_seconds=1, interval_seconds=1), answers)
    assert result.rc == 1
    assert result.err.startswith("timed out after ")
    assert result.err.endswith("s; not Ready: 2/3 workers: pi-worker-1 pi-worker-2\n")
    assert "all 3 workers ready" not in result.out


def test_wait_lists_at_most_ten_pods(shell: list[str], kubectl: FakeKubectl) -> None:
    result = kubectl.run(shell, wait_script(kubectl, 25, timeout_seconds=0), {})
    assert result.rc == 1
    names = " ".join(f"pi-worker-{i}" for i in range(10))
    assert result.err.endswith(f"s; not Ready: 25/25 workers: {names} and 15 more\n")
    assert len(pod_batches(result)) == 1


def test_wait_shows_each_kubectl_error_once(shell: list[str], kubectl: FakeKubectl) -> None:
    answers = {
        "get pod pi-worker-0": ["Forbidden", "Forbidden", "Refused", "Forbidden", "True"],
        "get pod pi-worker-1": ["True"],
    }
    result = kubectl.run(shell, wait_script(kubectl, 2), answers)
    assert result.rc == 0
    assert result.err.splitlines() == [
        (
            'kubectl: Error from server (Forbidden): pods "pi-worker-0" is forbidden: User '
            '"system:serviceaccount:default:fake" cannot get resource "pods" in API group "" in the namespace "default"'
        ),
        "kubectl: The connection to the server 10.96.0.1:443 was refused - did you specify the right host or port?",
    ]
    assert len(pod_batches(result)) == 5


def test_wait_counts_time_slept_without_a_clock(
    shell: list[str], kubectl: FakeKubectl, tmp_path: Path
) -> None:
    broken = tmp_path / "broken-clock"
    broken.mkdir()
    (broken / "date").write_text("#!/bin/sh\nexit 1\n")
    (broken / "date").chmod(0o755)
    script = wait_script(kubectl, 1, timeout_seconds=1, interval_seconds=1)
    result = kubectl.run(shell, script, {}, path=f"{broken}{os.pathsep}")
    assert result.rc == 1
    assert result.err == "timed out after 1s; not Ready: 1/1 workers: pi-worker-0\n"
    assert len(pod_batches(result)) == 2


# --- cleanup ---------------------------------------------------------------------------------------


def adoption_calls(uid: str = UID) -> list[list[str]]:
    patch = owner_patch(SELF, uid)
    return [["get", "job", SELF, "-o", "jsonpath={.metadata.uid}"]] + [
        ["patch", kind, SELF, "--type=merge", "-p", patch] for kind in ("serviceaccount", "role")
    ]


UNBIND = ["delete", "rolebinding", SELF, "--wait=false"]


SCALE = ["scale", "statefulset", STS, "--replicas=0"]


def test_cleanup_adopts_its_rbac_then_scales_after_complete(shell: list[str], kubectl: FakeKubectl) -> None:
    answers = {f"get job {SELF}": [launcher()], f"get job {LAUNCHER}": [launcher(), launcher("Complete")]}
    result = kubectl.run(shell, cleanup_script(kubectl), answers)
    assert (result.rc, result.err) == (0, "")
    assert result.calls[:3] == adoption_calls()
    assert json.loads(result.calls[1][-1]) == {
        "metadata": {"ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": SELF, "uid": UID}]}
    }
    assert [call[:3] for call in result.calls[3:]] == [["get", "job", LAUNCHER]] * 2 + [SCALE[:3], UNBIND[:3]]
    assert result.calls[-2:] == [SCALE, UNBIND]
    # It never patches the RoleBinding that grants its rights: it deletes it, last.
    assert not [call for call in result.calls if call[:2] == ["patch", "rolebinding"]]
    assert f"job/{LAUNCHER} is Complete: scaling the workers down" in result.out
    assert result.out.endswith(
        f"scaled statefulset/{STS} to 0 replicas: statefulset.apps/{STS} scaled\ndeleted rolebinding/{SELF}\n"
    )


def test_cleanup_waits_through_retried_attempts(shell: list[str], kubectl: FakeKubectl) -> None:
    # A failed pod that the Job will retry leaves no Failed condition; only the last state ends it.
    running = launcher()
    retrying = {"uid": UID, "conditions": {"Suspended": "False", "Failed": "False"}}
    answers = {
        f"get job {SELF}": [launcher()],
        f"get job {LAUNCHER}": [running, retrying, running, launcher("Complete")],
    }
    result = kubectl.run(shell, cleanup_script(kubectl), answers)
    assert result.rc == 0
    assert result.count("get", "job", LAUNCHER) == 4
    assert result.count("scale") == 1
    assert result.calls[-2:] == [SCALE, UNBIND]


def test_cleanup_scales_after_failed(shell: list[str], kubectl: FakeKubectl) -> None:
    answers = {f"get job {SELF}": [launcher()], f"get job {LAUNCHER}": [launcher("FailureTarget", "Failed")]}
    result = kubectl.run(shell, cleanup_script(kubectl), answers)
    assert result.rc == 0
    assert result.calls[3:] == [["get", "job", LAUNCHER, "-o", result.calls[3][4]], SCALE, UNBIND]
    assert f"job/{LAUNCHER} is Failed: scaling the workers down" in result.out


def test_cleanup_treats_a_long_missing_launcher_as_deleted(shell: list[str], kubectl: FakeKubectl) -> None:
    answers = {f"get job {SELF}": [launcher()], f"get job {LAUNCHER}": ["NotFound"]}
    result = kubectl.run(shell, cleanup_script(kubectl, interval_seconds=1, missing_grace_seconds=1), answers)
    assert (result.rc, result.err) == (0, "")
    assert result.count("get", "job", LAUNCHER) >= 2
    assert result.count("scale") == 1
    assert f"job/{LAUNCHER} not found; it counts as deleted after 1s" in result.out
    assert f"job/{LAUNCHER} has been missing for " in result.out
    assert "s (deleted by hand?): scaling the workers down" in result.out


def test_cleanup_waits_for_a_launcher_created_late(shell: list[str], kubectl: FakeKubectl) -> None:
    answers = {
        f"get job {SELF}": [launcher()],
        f"get job {LAUNCHER}": ["NotFound", "NotFound", launcher(), launcher("Complete")],
    }
    result = kubectl.run(shell, cleanup_script(kubectl, missing_grace_seconds=600), answers)
    assert result.rc == 0
    assert result.count("get", "job", LAUNCHER) == 4
    assert f"job/{LAUNCHER} is Complete" in result.out


def test_cleanup_keeps_polling_through_errors(shell: list[str], kubectl: FakeKubectl) -> None:
    answers = {
        f"get job {SELF}": [launcher()],
        f"get job {LAUNCHER}": ["Refused", "Refused", "Forbidden", launcher("Complete")],
    }
    result = kubectl.run(shell, cleanup_script(kubectl), answers)
    assert result.rc == 0
    assert result.count("get", "job", LAUNCHER) == 4
    warnings = result.err.splitlines()
    assert len(warnings) == 2
    assert warnings[0].startswith("warning: kubectl: The connection to the server")
    assert warnings[1].startswith(f'warning: kubectl: {FORBIDDEN}: jobs.batch "{LAUNCHER}" is forbidden')


def test_cleanup_warns_when_adoption_fails_and_still_scales(shell: list[str], kubectl: FakeKubectl) -> None:
    answers = {f"get job {SELF}": ["Forbidden"], f"get job {LAUNCHER}": [launcher("Complete")]}
    result = kubectl.run(shell, cleanup_script(kubectl), answers)
    assert result.rc == 0
    assert result.count("patch") == 0
    assert result.count("scale") == 1
    assert result.count("get", "job", SELF) == 2  # tried again after scaling down
    assert result.err.startswith(
        f"warning: cannot read the uid of job/{SELF}, its RBAC objects stay behind: "
    )
    assert FORBIDDEN in result.err


def test_cleanup_warns_about_each_object_it_cannot_adopt(shell: list[str], kubectl: FakeKubectl) -> None:
    answers = {
        f"get job {SELF}": [launcher()],
        f"patch role {SELF}": ["Forbidden", "ok"],
        f"get job {LAUNCHER}": [launcher("Complete")],
    }
    result = kubectl.run(shell, cleanup_script(kubectl), answers)
    assert result.rc == 0
    assert result.calls[:3] == adoption_calls()
    assert result.calls[3:5] == [result.calls[3], SCALE]
    assert result.calls[5:] == [*adoption_calls(), UNBIND]  # the retry after scaling down
    assert result.err.count("warning: ") == 1
    assert result.err.startswith(f"warning: cannot adopt role/{SELF}, it stays behind after job/{SELF}: ")
    assert f"role/{SELF} is now owned by job/{SELF}" in result.out


def test_cleanup_rejects_a_uid_that_is_not_one(shell: list[str], kubectl: FakeKubectl) -> None:
    answers = {f"get job {SELF}": [launcher(uid='x"}]')], f"get job {LAUNCHER}": [launcher("Complete")]}
    result = kubectl.run(shell, cleanup_script(kubectl), answers)
    assert result.rc == 0
    assert result.count("patch") == 0
    assert f"warning: job/{SELF} has no usable uid" in result.err


def test_cleanup_accepts_a_statefulset_already_gone(shell: list[str], kubectl: FakeKubectl) -> None:
    answers = {
        f"get job {SELF}": [launcher()],
        f"get job {LAUNCHER}": [launcher("Complete")],
        f"scale statefulset {STS}": ["NotFound"],
    }
    result = kubectl.run(shell, cleanup_script(kubectl), answers)
    assert (result.rc, result.err) == (0, "")
    assert result.out.endswith(f"statefulset/{STS} is already gone\ndeleted rolebinding/{SELF}\n")


def test_cleanup_fails_when_it_cannot_scale(shell: list[str], kubectl: FakeKubectl) -> None:
    answers = {
        f"get job {SELF}": [launcher()],
        f"get job {LAUNCHER}": [launcher("Complete")],
        f"scale statefulset {STS}": ["Forbidden"],
    }
    result = kubectl.run(shell, cleanup_script(kubectl), answers)
    assert result.rc == 1
    assert result.count("scale") == 5
    assert result.err.count(FORBIDDEN) == 5
    assert result.err.endswith(f"cannot scale statefulset/{STS} to 0 after 5 attempts\n")


# --- the real kubectl against a recording API server -----------------------------------------------


def allowed(request: Request, rules: list[dict[str, Any]]) -> bool:
    return any(
        request.group in rule["apiGroups"]
        and request.resource in rule["resources"]
        and request.verb in rule["verbs"]
        and request.name in rule["resourceNames"]
        for rule in rules
    )


def run_real(script: str, world: World, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    with FakeAPIServer(world) as server:
        env = {
            **os.environ,
            "KUBECONFIG": str(server.kubeconfig(tmp_path / "kubeconfig")),
            "HOME": str(tmp_path),
        }
        sh = shutil.which("dash") or "sh"
        return subprocess.run(
            [sh, "-c", script], check=False, capture_output=True, text=True, env=env, timeout=60
        )


def test_real_kubectl_wait_requests_are_allowed(tmp_path: Path, kubectl_binary: str) -> None:
    world = World(
        {"pods": {"pi-worker-0": pod("True"), "pi-worker-1": pod("False"), "pi-worker-3": pod(None)}}
    )
    script = render_wait_script(
        pod_prefix="pi-worker", workers=5, kubectl=kubectl_binary, timeout_seconds=0, batch_size=3
    )
    done = run_real(script, world, tmp_path)
    assert done.returncode == 1
    assert done.stderr.endswith(
        "s; not Ready: 4/5 workers: pi-worker-1 pi-worker-2 pi-worker-3 pi-worker-4\n"
    )
    # The Role mpigen renders for such a job (v2beta1, WaitForWorkersReady: the launcher's only API use).
    mpijob = make_job(V2BETA1, 5, name="pi", launcherCreationPolicy="WaitForWorkersReady")
    roles = [
        obj
        for obj in mpigen.compile(mpijob)
        if obj["kind"] == "Role" and obj["metadata"]["name"] == "pi-launcher"
    ]
    assert len(roles) == 1
    rules = roles[0]["rules"]
    assert [r for r in world.requests if not allowed(r, rules)] == []
    assert {r.name for r in world.requests} == {f"pi-worker-{i}" for i in range(5)}


def test_real_kubectl_cleanup_requests_are_allowed(tmp_path: Path, kubectl_binary: str) -> None:
    rbac: dict[str, dict[str, Any]] = {SELF: {}}
    world = World(
        {
            "jobs": {SELF: job(UID), LAUNCHER: job("0-0", Complete="True")},
            "statefulsets": {STS: {"spec": {"replicas": 3}}},
            "serviceaccounts": dict(rbac),
            "roles": dict(rbac),
            "rolebindings": dict(rbac),
        }
    )
    done = run_real(cleanup_script(kubectl_binary), world, tmp_path)
    assert (done.returncode, done.stderr) == (0, "")
    rules = cleanup_role_rules(launcher_job=LAUNCHER, statefulset=STS, self_job=SELF, self_rbac=SELF)
    assert [r for r in world.requests if not allowed(r, rules)] == []
    assert Request("patch", "apps", "statefulsets/scale", STS) in world.requests
    assert f"role/{SELF} is now owned by job/{SELF}" in done.stdout
    # Its last request deletes its own RoleBinding; none patches it.
    assert world.requests[-1] == Request("delete", "rbac.authorization.k8s.io", "rolebindings", SELF)
    assert not [r for r in world.requests if r.resource == "rolebindings" and r.verb != "delete"]


def test_real_kubectl_cleanup_with_launcher_and_workers_gone(tmp_path: Path, kubectl_binary: str) -> None:
    world = World(
        {
            "jobs": {SELF: job(UID)},
            "serviceaccounts": {SELF: {}},
            "roles": {SELF: {}},
            "rolebindings": {SELF: {}},
        }
    )
    done = run_real(cleanup_script(kubectl_binary), world, tmp_path)
    assert (done.returncode, done.stderr) == (0, "")
    assert f"job/{LAUNCHER} has been missing for 0s (deleted by hand?)" in done.stdout
    assert done.stdout.endswith(f"statefulset/{STS} is already gone\ndeleted rolebinding/{SELF}\n")
    assert SELF not in world.objects["rolebindings"]


# --- ssh-keygen ------------------------------------------------------------------------------------

SECRET, KEYGEN = "pi-ssh", "pi-ssh-keygen"
PRIVATE = "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBogus\n-----END EC PRIVATE KEY-----\n"
PUBLIC = "ecdsa-sha2-nistp521 AAAAE2VjZHNhLXNoYTItbmlzdHA1MjEAAAAIbmlzdHA1MjE=\n"


def keygen_script(kubectl: FakeKubectl, keys: Path, **options: Any) -> str:
    options = {"interval_seconds": 0, **options}
    return render_keygen_script(
        secret=SECRET,
        self_job=KEYGEN,
        self_rbac=KEYGEN,
        keys_dir=str(keys),
        kubectl=str(kubectl.path),
        **options,
    )


@pytest.fixture
def keys(tmp_path: Path) -> Path:
    folder = tmp_path / "keys"
    folder.mkdir()
    (folder / "id").write_text(PRIVATE)
    (folder / "id.pub").write_text(PUBLIC)
    return folder


def secret(version: str = "41", privatekey: str = "") -> dict[str, str]:
    return {"resourceVersion": version, "privatekey": privatekey}


def patches_of_secret(result: Result) -> list[dict[str, Any]]:
    return [json.loads(call[-1]) for call in result.calls if call[:3] == ["patch", "secret", SECRET]]


def test_keygen_stores_a_new_pair_with_the_version_it_read(
    shell: list[str], kubectl: FakeKubectl, keys: Path
) -> None:
    import base64

    answers = {f"get job {KEYGEN}": [launcher()], f"get secret {SECRET}": [secret("41")]}
    result = kubectl.run(shell, keygen_script(kubectl, keys), answers)
    assert (result.rc, result.err) == (0, "")
    assert [call[:3] for call in result.calls] == [
        ["get", "job", KEYGEN],
        ["patch", "serviceaccount", KEYGEN],
        ["patch", "role", KEYGEN],
        ["get", "secret", SECRET],
        ["patch", "secret", SECRET],
        ["delete", "rolebinding", KEYGEN],
    ]
    assert patches_of_secret(result) == [
        {
            "metadata": {"resourceVersion": "41"},
            "data": {
                "ssh-privatekey": base64.b64encode(PRIVATE.encode()).decode(),
                "ssh-publickey": base64.b64encode(PUBLIC.encode()).decode(),
            },
        }
    ]
    assert f"stored a new key pair in secret/{SECRET}" in result.out
    assert "PRIVATE" not in result.out + result.err and "MHcC" not in result.out + result.err


def test_keygen_never_replaces_keys(shell: list[str], kubectl: FakeKubectl, keys: Path) -> None:
    answers = {f"get job {KEYGEN}": [launcher()], f"get secret {SECRET}": [secret("7", "LS0tLS1CRUdJTg==")]}
    result = kubectl.run(shell, keygen_script(kubectl, keys), answers)
    assert (result.rc, result.err) == (0, "")
    assert patches_of_secret(result) == []
    assert f"secret/{SECRET} already holds a key pair: kept" in result.out


def test_keygen_loses_a_race_and_keeps_the_winners_keys(
    shell: list[str], kubectl: FakeKubectl, keys: Path
) -> None:
    answers = {
        f"get job {KEYGEN}": [launcher()],
        f"get secret {SECRET}": [secret("41"), secret("42", "d2lubmVy")],
        f"patch secret {SECRET}": ["Conflict"],
    }
    result = kubectl.run(shell, keygen_script(kubectl, keys), answers)
    assert result.rc == 0
    assert len(patches_of_secret(result)) == 1
    assert "(Conflict)" in result.err and "already holds a key pair: kept" in result.out


def test_keygen_fails_after_its_attempts_when_the_secret_is_missing(
    shell: list[str], kubectl: FakeKubectl, keys: Path
) -> None:
    answers = {f"get job {KEYGEN}": [launcher()]}
    result = kubectl.run(shell, keygen_script(kubectl, keys, attempts=3), answers)
    assert result.rc == 1
    assert result.count("get", "secret", SECRET) == 3
    assert f'secrets "{SECRET}" not found' in result.err
    assert result.err.endswith(f"cannot store the key pair in secret/{SECRET} after 3 attempts\n")


def test_keygen_without_a_key_pair_writes_nothing(
    shell: list[str], kubectl: FakeKubectl, tmp_path: Path
) -> None:
    answers = {f"get job {KEYGEN}": [launcher()], f"get secret {SECRET}": [secret("41")]}
    result = kubectl.run(shell, keygen_script(kubectl, tmp_path / "none", attempts=2), answers)
    assert result.rc == 1
    assert patches_of_secret(result) == []
    assert "no key pair in" in result.err


def test_keygen_role_allows_exactly_its_calls() -> None:
    rules = keygen_role_rules(secret=SECRET, self_job=KEYGEN, self_rbac=KEYGEN)
    by_resource = {rule["resources"][0]: (rule["verbs"], rule["resourceNames"]) for rule in rules}
    assert by_resource == {
        "secrets": (["get", "patch"], [SECRET]),
        "jobs": (["get"], [KEYGEN]),
        "serviceaccounts": (["get", "patch"], [KEYGEN]),
        "roles": (["get", "patch"], [KEYGEN]),
        "rolebindings": (["delete"], [KEYGEN]),
    }
