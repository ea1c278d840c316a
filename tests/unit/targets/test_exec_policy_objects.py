"""`mpigen exec-policy` (mpigen.targets.jobset.exec_policy): the cluster-wide policy that confines a jobset
launcher's kubectl exec, printed the same every time and valid against Kubernetes' own schemas; the pod
names it admits are the ones the jobset target's hostfile and kubexec.sh reach. The API server's verdicts
are tests/cluster/test_exec_policy.py's."""

from __future__ import annotations

import re

from click.testing import CliRunner
from jobs import V1, make_job

import mpigen
from mpigen.checks.kube.validator import validate_object
from mpigen.cli import cli
from mpigen.compiler import plan_job
from mpigen.options import Options
from mpigen.targets.jobset import exec_policy
from mpigen.targets.jobset.hosts import hosts
from mpigen.yaml.dump import to_yaml


def test_the_command_prints_the_policy_and_its_binding() -> None:
    result = CliRunner().invoke(cli, ["exec-policy"], catch_exceptions=False)
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout == to_yaml(exec_policy.build())
    assert CliRunner().invoke(cli, ["exec-policy"]).stdout == result.stdout
    policy, binding = exec_policy.build()
    assert (policy["kind"], binding["kind"]) == (
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
    )
    assert binding["spec"]["policyName"] == policy["metadata"]["name"]
    assert binding["spec"]["validationActions"] == ["Deny"] and policy["spec"]["failurePolicy"] == "Fail"
    for obj in (policy, binding):
        assert validate_object(obj) == []


def _admitted_suffix() -> re.Pattern[str]:
    """The policy's pattern of what follows `<jobset>-` in an admitted pod name (RE2 and Python agree on it)."""
    [validation] = exec_policy.build_policy()["spec"]["validations"]
    [pattern] = re.findall(r"\.matches\('([^']*)'\)", validation["expression"])
    return re.compile(pattern)


def test_the_admitted_names_are_the_hosts_pods_and_no_other_jobs() -> None:
    """Every host of a jobset-target job whose launcher is a host too (a GPU launcher), with JobSet's
    random suffix, matches; a job whose name extends this one's does not."""
    job = make_job(V1, 3)
    job["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]["resources"] = {
        "limits": {"nvidia.com/gpu": 1}
    }
    options = Options(target="jobset", namespace="ml")
    plan, _ = plan_job(job, options)
    suffix = _admitted_suffix()
    listed = hosts(plan)
    assert len(listed) == 4 and listed[0].startswith(f"{plan.name}-launcher-")
    for host in listed:
        assert suffix.fullmatch(host.removeprefix(f"{plan.name}-") + "-x7k2p"), host
    other = f"{plan.name}-worker-0-1"  # a JobSet named after this one's worker Job and an index
    assert not suffix.fullmatch(f"{other}-worker-0-0-x7k2p".removeprefix(f"{plan.name}-"))
    assert not suffix.fullmatch("worker-0-0-x7k2p2")  # a 6-character suffix: not a Job's pod
    assert not suffix.fullmatch("worker-0-0")  # the host name itself, no pod's


def test_the_render_names_the_policy_where_the_launcher_may_exec_anywhere() -> None:
    compiled = mpigen.compile_job(make_job(V1, 2), Options(target="jobset"))
    assert any("`mpigen exec-policy`" in warning.message for warning in compiled.warnings)
