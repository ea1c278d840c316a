"""The cluster-wide admission policy that confines a jobset-target launcher's `kubectl exec` to its own job's pods.

On the jobset target the kubectl-exec transport (kubeflow.org/v1alpha1, v1alpha2, v1) needs `create` on
`pods/exec`, and RBAC cannot name the pods: the Job controller gives each pod of a JobSet a random suffix
(`<jobset>-<replicated job>-<job index>-<pod index>-<5 random>`, jobset v0.12.0
pkg/controllers/jobset_controller.go: constructJob, and the Job controller's generateName), so the
launcher's Role covers every pod of the namespace. This ValidatingAdmissionPolicy
(admissionregistration.k8s.io/v1, GA since Kubernetes 1.30) and its binding narrow that: a CONNECT on
`pods/exec` by the launcher of JobSet `J` is admitted only into a pod named
`J-worker-0-<index>-<5 random>` or `J-launcher-0-<index>-<5 random>` of its own namespace.

Who is a launcher is read from the request alone (an exec request carries no pod object, so neither its
labels nor the caller's can be seen): the ServiceAccount `J-launcher` that mpigen renders, with a token
bound to the pod `J-launcher-0-0-<5 random>` (the kubelet's projected token is bound to its pod, whose name
the API server puts in the user's extra: k8s.io/apiserver v0.37.2 pkg/authentication/serviceaccount/util.go
PodNameKey). Other identities, among them a training-operator launcher (its pod is `<job>-launcher-<5
random>`) and people, are not matched. What it
cannot do (docs/explanation/security.md): read the target pod's labels (a pod someone else creates under
such a name is admitted), narrow `get` and `list` on pods, cover a launcher ServiceAccount the job names
itself, or a token of `J-launcher` not bound to the launcher pod (minted by whoever may create tokens).

It is one object pair for the whole cluster, so it is printed by `mpigen exec-policy` for an admin to
apply once, never part of a job's namespaced render.
"""

from __future__ import annotations

from typing import Any

from mpigen import names
from mpigen.targets.jobset import names as jobset_names

NAME = "mpigen-launcher-exec"
_RANDOM = jobset_names.POD_NAME_RANDOM_SUFFIX - 1  # the characters after the pod index's dash
POD_NAME_EXTRA = "authentication.kubernetes.io/pod-name"
_LAUNCHER_SUFFIX = "-launcher"
_USER = "request.userInfo.username"
_ACCOUNT = f"{_USER}.split(':')[3]"
# The caller's pod is the launcher pod of the JobSet its ServiceAccount is named after: `<account>-0-0-`
# and the 5 random characters (the JobSet's only launcher Job, index 0, its only pod, index 0).
_CALLER = " && ".join(
    (
        f"{_USER}.startsWith('system:serviceaccount:')",
        f"{_USER}.endsWith('{_LAUNCHER_SUFFIX}')",
        f"'{POD_NAME_EXTRA}' in request.userInfo.extra",
        (
            f"request.userInfo.extra['{POD_NAME_EXTRA}'].exists(pod, pod.startsWith({_ACCOUNT} + '-0-0-')"
            f" && size(pod) == size({_ACCOUNT}) + {len('-0-0-') + _RANDOM})"
        ),
    )
)
# The pods a launcher reaches: its JobSet's workers, and its own pod (a launcher that runs ranks).
_TARGET = f"^({jobset_names.WORKER_RJOB}|{jobset_names.LAUNCHER_RJOB})-0-[0-9]+-[a-z0-9]{{{_RANDOM}}}$"


def build_policy() -> dict[str, Any]:
    variables = [
        {"name": "account", "expression": _ACCOUNT},
        {
            "name": "jobset",
            "expression": f"variables.account.substring(0, size(variables.account) - {len(_LAUNCHER_SUFFIX)})",
        },
    ]
    own_pod = (
        f"request.namespace == {_USER}.split(':')[2] && request.name.startsWith(variables.jobset + '-')"
        f" && request.name.substring(size(variables.jobset) + 1).matches('{_TARGET}')"
    )
    message = (
        "'the launcher ' + variables.account + ' may exec only into the worker and launcher pods of JobSet ' + "
        f"variables.jobset + ' in namespace ' + {_USER}.split(':')[2] + ', not into ' + request.namespace + '/' + "
        f"request.name + ' ({NAME})'"
    )
    spec = {
        "failurePolicy": "Fail",
        "matchConstraints": {
            "resourceRules": [
                {
                    "apiGroups": [""],
                    "apiVersions": ["v1"],
                    "operations": ["CONNECT"],
                    "resources": ["pods/exec"],
                }
            ]
        },
        "matchConditions": [{"name": "jobset-launcher", "expression": _CALLER}],
        "variables": variables,
        "validations": [{"expression": own_pod, "messageExpression": message, "reason": "Forbidden"}],
    }
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": NAME, "labels": {"app.kubernetes.io/managed-by": names.MANAGED_BY}},
        "spec": spec,
    }


def build_binding() -> dict[str, Any]:
    """Every namespace: the policy's match condition picks the launchers."""
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": NAME, "labels": {"app.kubernetes.io/managed-by": names.MANAGED_BY}},
        "spec": {"policyName": NAME, "validationActions": ["Deny"]},
    }


def build() -> list[dict[str, Any]]:
    """The policy, then its binding (applied in one `kubectl apply`)."""
    return [build_policy(), build_binding()]
