"""Seeded mutations of an MPIJob's pod templates, one family of the API server's pod validation each
(Kubernetes 1.37 pkg/apis/core/validation), for the differential test against a real kube-apiserver
(test_pod_rules.py). Each case is a job whose launcher or worker template was changed by one to three
draws from the family's pools; the pools mix values the server refuses with valid but unusual ones, so
that every family yields both verdicts, and two cases in three are lean (`Draws`: each pool's first,
most common value drawn more often), so that accepted templates are well represented. Nothing here
knows which values are valid: the server decides."""

from __future__ import annotations

import copy
import random
from collections.abc import Callable
from typing import Any, NamedTuple

Obj = dict[str, Any]
Mutation = Callable[[random.Random, Obj, Obj], None]  # (rng, pod spec, first container)

NAMES = ["main", "a_b", "A", "a.b", "-a", "a-", "a" * 63, "a" * 64, "x1", "1abc", ""]
QUANTITIES = [
    "1",
    "500m",
    "-1",
    "0",
    "1Gi",
    "1GB",
    "one",
    "1e3",
    "0.5",
    0.25,
    2,
    "1.5Gi",
    ".5",
    "1K",
    "1k",
    "+1",
    "1E",
    "1e",
    "2Mi",
    "1.0001",
    "-0",
    "1Ki5",
    " 3 ",
    "1.G",
    "3e-3",
]
RESOURCES = [
    "cpu",
    "memory",
    "ephemeral-storage",
    "gpu",
    "nvidia.com/gpu",
    "example.com/foo",
    "hugepages-2Mi",
    "hugepages-1Gi",
    "hugepages-3x",
    "kubernetes.io/foo",
    "storage",
    "pods",
    "Cpu",
    "a/b/c",
    "requests.example.com/x",
    "example.com/",
]
ENV_NAMES = ["A", "a.b", "1A", "A=B", "MY VAR", "é", "..", ".", "-x", "", "A\tB", "..a", "x~", "PATH"]
PORT_NAMES = ["http", "h_ttp", "a" * 15, "a" * 16, "1234", "-ab", "a--b", "HTTP", "ab-", "x1-y"]
PORTS = [8080, 0, -1, 1, 65535, 65536, 70000]
LABEL_KEYS = ["app", "example.com/app", "a b", "-a", "a" * 63, "a" * 64, "Example.com/x", "a/b/c", "/x", "x/"]
LABEL_VALUES = ["v", "", "a b", "-v", "a" * 63, "a" * 64, "v.1_2-3"]
DNS_LABELS = ["ok", "Ok", "a.b", "a_b", "a" * 63, "a" * 64, "-a", "x1"]
SUBDOMAINS = ["ok", "a.b", "A.b", "a..b", "a" * 253, "a" * 254, "a_b", "x-1.y-2"]
IPS = ["10.0.0.1", "::1", "1.2.3", "010.0.0.1", "abc", "2001:db8::1", "256.0.0.1"]


class Draws(random.Random):
    """A seeded generator that, in a lean case, draws each pool's first value (by convention its most
    common one) more often: `lean` is that share of draws. Lean cases are how accepted templates stay
    well represented beside the refusals."""

    lean = 0.0


def pick(rng: random.Random, pool: list[Any]) -> Any:
    if isinstance(rng, Draws) and rng.lean and rng.random() < rng.lean:
        return pool[0]
    return rng.choice(pool)


def maybe(rng: random.Random, pool: list[Any]) -> Any:
    """A pool's value, or None (left out) one time in four."""
    return None if rng.random() < 0.25 else pick(rng, pool)


def put(target: Obj, **fields: Any) -> None:
    target.update({key: value for key, value in fields.items() if value is not None})


def names(rng: random.Random, pod: Obj, ctr: Obj) -> None:
    choice = rng.randrange(4)
    if choice == 0:
        ctr["name"] = pick(rng, NAMES)
    elif choice == 1:
        pod["containers"].append({"name": pick(rng, ["side", ctr["name"], *NAMES]), "image": "busybox:1.36"})
    elif choice == 2:
        pod.setdefault("initContainers", []).append(
            {"name": pick(rng, ["init", ctr["name"], *NAMES]), "image": "busybox:1.36"}
        )
    else:
        vols = pod.setdefault("volumes", [])
        vols.append({"name": pick(rng, ["data", *(v["name"] for v in vols), *DNS_LABELS]), "emptyDir": {}})


def ports(rng: random.Random, pod: Obj, ctr: Obj) -> None:
    port: Obj = {"containerPort": pick(rng, PORTS)}
    put(
        port,
        name=maybe(rng, PORT_NAMES + [p.get("name") for p in ctr.get("ports", []) if p.get("name")]),
        hostPort=maybe(rng, [0, -5, 1, 65536, 80, port["containerPort"]]),
        protocol=maybe(rng, ["TCP", "UDP", "SCTP", "tcp", "HTTP", ""]),
    )
    ctr.setdefault("ports", []).append(port)
    if rng.random() < 0.15:
        pod["hostNetwork"] = True


def env(rng: random.Random, pod: Obj, ctr: Obj) -> None:
    var: Obj = {"name": pick(rng, ENV_NAMES)}
    choice = rng.randrange(6)
    if choice == 0:
        var["value"] = "x"
    elif choice == 1:
        var["valueFrom"] = {
            "fieldRef": {
                "fieldPath": pick(
                    rng,
                    [
                        "metadata.name",
                        "metadata.labels['app']",
                        "status.podIP",
                        "spec.foo",
                        "metadata.annotations['a b']",
                        "metadata.labels",
                        "spec.nodeName",
                        "metadata.labels['A_b']",
                    ],
                )
            }
        }
    elif choice == 2:
        ref = pick(rng, ["secretKeyRef", "configMapKeyRef"])
        var["valueFrom"] = {
            ref: {
                "name": pick(rng, SUBDOMAINS + [""]),
                "key": pick(rng, ["k", "a.b", "a b", "", "..", ".x", "a/b"]),
            }
        }
    elif choice == 3:
        var["valueFrom"] = pick(
            rng, [{}, {"fieldRef": {"fieldPath": "metadata.name"}, "secretKeyRef": {"name": "s", "key": "k"}}]
        )
        put(var, value=maybe(rng, ["", "x"]))
    elif choice == 4:
        var["valueFrom"] = {
            "resourceFieldRef": {
                "resource": pick(
                    rng, ["limits.cpu", "requests.memory", "limits.gpu", "requests.hugepages-2Mi", "", "cpu"]
                )
            }
        }
    else:
        source: Obj = {}
        for key in rng.sample(["configMapRef", "secretRef"], rng.randrange(3)):
            source[key] = {"name": pick(rng, SUBDOMAINS + [""])}
        put(source, prefix=maybe(rng, ENV_NAMES))
        ctr.setdefault("envFrom", []).append(source)
        return
    ctr.setdefault("env", []).append(var)


def volumes(rng: random.Random, pod: Obj, ctr: Obj) -> None:
    count = len(pod.get("volumes", []))
    name = pick(rng, [f"v{count}", "data", "cfg", "scratch"])
    sources: list[Obj] = [
        {"emptyDir": {"sizeLimit": pick(rng, ["1Gi", "-1Gi", "x", 0, "1GB"])}},
        {
            "hostPath": {
                "path": pick(rng, ["/data", "", "/a/../b", "rel"]),
                **({"type": t} if (t := maybe(rng, ["Directory", "File", "dir", ""])) is not None else {}),
            }
        },
        {
            "configMap": {
                "name": pick(rng, ["cfg", ""]),
                "defaultMode": pick(rng, [0o644, 0o777, 512, -1]),
                "items": [{"key": pick(rng, ["k", ""]), "path": pick(rng, ["a", "/abs", "../x", "..a", ""])}],
            }
        },
        {"secret": {"secretName": pick(rng, ["s", ""])}},
        {"persistentVolumeClaim": {"claimName": pick(rng, ["c", ""])}},
        {},
        {"emptyDir": {}, "secret": {"secretName": "s"}},
    ]
    if rng.random() < 0.85:
        pod.setdefault("volumes", []).append({"name": name, **pick(rng, sources)})
    mount: Obj = {
        "name": pick(rng, [name, name, "missing"]),
        "mountPath": pick(rng, [f"/mnt/{count}", "/mnt", "/mnt", "", "/other"]),
    }
    put(
        mount,
        subPath=maybe(rng, [None, "a", "/abs", "../x", "a/../b"]),
        subPathExpr=maybe(rng, [None, None, "$(X)"]),
        mountPropagation=maybe(rng, [None, None, "None", "HostToContainer", "Bidirectional", "bogus"]),
        readOnly=maybe(rng, [True, False]),
        recursiveReadOnly=maybe(rng, [None, None, "Disabled", "Enabled", "IfPossible", "x"]),
    )
    ctr.setdefault("volumeMounts", []).append(mount)
    if rng.random() < 0.2:
        ctr["securityContext"] = {"privileged": True}


def resources(rng: random.Random, pod: Obj, ctr: Obj) -> None:
    res = ctr.setdefault("resources", {})
    for section in rng.sample(["requests", "limits"], rng.randrange(1, 3)):
        for _ in range(rng.randrange(1, 3)):
            res.setdefault(section, {})[pick(rng, RESOURCES)] = pick(rng, QUANTITIES)
    if rng.random() < 0.3 and res.get("limits"):  # requests equal to (or near) the limits
        name, value = rng.choice(sorted(res["limits"].items(), key=str))
        res.setdefault("requests", {})[name] = pick(rng, [value, value, "1", "0"])


def enums(rng: random.Random, pod: Obj, ctr: Obj) -> None:
    field, pool, where = pick(
        rng,
        [
            (
                "dnsPolicy",
                [
                    "ClusterFirst",
                    "Default",
                    "None",
                    "ClusterFirstWithHostNet",
                    "Sometimes",
                    "clusterfirst",
                    "",
                ],
                pod,
            ),
            ("imagePullPolicy", ["Always", "IfNotPresent", "Never", "Sometimes", "always", ""], ctr),
            ("terminationMessagePolicy", ["File", "FallbackToLogsOnError", "Stdout", ""], ctr),
            ("preemptionPolicy", ["PreemptLowerPriority", "Never", "Always", ""], pod),
            (
                "tolerations",
                [
                    [{"key": "k", "operator": op, "value": "v", "effect": "NoSchedule"}]
                    for op in ("Equal", "Exists", "Equals", "In", "")
                ],
                pod,
            ),
            (
                "tolerations",
                [
                    [{"key": "k", "operator": "Exists", "effect": ef}]
                    for ef in ("NoSchedule", "PreferNoSchedule", "NoExecute", "Never", "")
                ],
                pod,
            ),
        ],
    )
    where[field] = pick(rng, pool)
    if field == "dnsPolicy" and where[field] == "None" and rng.random() < 0.6:
        pod["dnsConfig"] = {"nameservers": ["10.0.0.10"]}


def _handler(rng: random.Random) -> Obj:
    kind = pick(rng, [0, 1, 2, 3, 4, 5, 6])
    if kind == 0:
        return {"exec": {"command": pick(rng, [["true"], []])}}
    if kind == 1:
        get: Obj = {"port": pick(rng, [8080, 0, 70000, "http", "h_ttp", "a" * 16])}
        put(
            get,
            path=maybe(rng, ["/", ""]),
            scheme=maybe(rng, ["HTTP", "HTTPS", "http", ""]),
            httpHeaders=maybe(rng, [[{"name": "X-A", "value": "1"}], [{"name": "X A", "value": "1"}]]),
        )
        return {"httpGet": get}
    if kind == 2:
        return {"tcpSocket": {"port": pick(rng, [22, 0, -1, 65536, "ssh", "S"])}}
    if kind == 3:
        return {"grpc": {"port": pick(rng, [9000, 0, 70000])}}
    if kind == 4:
        return {}
    if kind == 5:
        return {"exec": {"command": ["true"]}, "tcpSocket": {"port": 22}}
    return {"sleep": {"seconds": 1}} if rng.random() < 0.5 else {"exec": {"command": ["true"]}}


def probes(rng: random.Random, pod: Obj, ctr: Obj) -> None:
    target = ctr
    if rng.random() < 0.3:
        inits = pod.setdefault("initContainers", [])
        target = {"name": pick(rng, [f"init{len(inits)}", "init"]), "image": "busybox:1.36"}
        put(target, restartPolicy=maybe(rng, ["Always", "Never", "OnFailure", "Sometimes"]))
        inits.append(target)
    if rng.random() < 0.3:
        target["lifecycle"] = {pick(rng, ["postStart", "preStop"]): _handler(rng)}
        return
    kind = pick(rng, ["livenessProbe", "readinessProbe", "startupProbe"])
    probe = _handler(rng)
    for field in rng.sample(
        [
            "initialDelaySeconds",
            "timeoutSeconds",
            "periodSeconds",
            "successThreshold",
            "failureThreshold",
            "terminationGracePeriodSeconds",
        ],
        rng.randrange(3),
    ):
        probe[field] = pick(rng, [1, -1, 0, 2, 10])
    target[kind] = probe


def security(rng: random.Random, pod: Obj, ctr: Obj) -> None:
    ids = [1000, -1, 0, 2**31 - 1, 2**31]
    if rng.random() < 0.5:
        ctx: Obj = {}
        put(
            ctx,
            runAsUser=maybe(rng, ids),
            runAsGroup=maybe(rng, ids),
            fsGroup=maybe(rng, ids),
            supplementalGroups=maybe(rng, [[1, 2], [-1]]),
            fsGroupChangePolicy=maybe(rng, ["Always", "OnRootMismatch", "Never"]),
        )
        pod["securityContext"] = ctx
    else:
        ctx = {}
        put(
            ctx,
            runAsUser=maybe(rng, ids),
            privileged=maybe(rng, [True, False]),
            allowPrivilegeEscalation=maybe(rng, [True, False]),
            capabilities=maybe(rng, [{"add": ["CAP_SYS_ADMIN"]}, {"add": ["NET_ADMIN"]}]),
        )
        ctr["securityContext"] = ctx
    if rng.random() < 0.4:
        profile: Obj = {"type": pick(rng, ["RuntimeDefault", "Unconfined", "Localhost", "Bogus", ""])}
        put(profile, localhostProfile=maybe(rng, ["p.json", "/abs.json", "../x.json"]))
        ctx["seccompProfile"] = profile


def scheduling(rng: random.Random, pod: Obj, ctr: Obj) -> None:
    choice = rng.randrange(5)
    if choice == 0:
        toleration: Obj = {}
        put(
            toleration,
            key=maybe(rng, LABEL_KEYS),
            operator=maybe(rng, ["Equal", "Exists", ""]),
            value=maybe(rng, LABEL_VALUES),
            effect=maybe(rng, ["NoSchedule", "NoExecute", ""]),
            tolerationSeconds=maybe(rng, [None, None, 30]),
        )
        pod["tolerations"] = [toleration]
    elif choice == 1:
        pod["nodeSelector"] = {pick(rng, LABEL_KEYS): pick(rng, LABEL_VALUES)}
    elif choice == 2:
        requirement: Obj = {
            "key": pick(rng, LABEL_KEYS),
            "operator": pick(rng, ["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Is"]),
        }
        put(requirement, values=maybe(rng, [["a"], [], ["1", "2"], ["5"]]))
        terms = pick(rng, [[{"matchExpressions": [requirement]}], [{"matchExpressions": [requirement]}], []])
        node: Obj = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}
        if rng.random() < 0.4:
            node = {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": pick(rng, [1, 0, 100, 101]), "preference": {"matchExpressions": [requirement]}}
                ]
            }
        pod["affinity"] = {"nodeAffinity": node}
    elif choice == 3:
        term = {
            "topologyKey": pick(rng, ["kubernetes.io/hostname", ""]),
            "labelSelector": {"matchLabels": {"app": "x"}},
        }
        kind = pick(rng, ["podAffinity", "podAntiAffinity"])
        pod["affinity"] = {
            kind: pick(
                rng,
                [
                    {"requiredDuringSchedulingIgnoredDuringExecution": [term]},
                    {
                        "preferredDuringSchedulingIgnoredDuringExecution": [
                            {"weight": pick(rng, [1, 0, 100, 101]), "podAffinityTerm": term}
                        ]
                    },
                ],
            )
        }
    else:
        constraint: Obj = {
            "maxSkew": pick(rng, [1, 0, -1, 3]),
            "topologyKey": pick(rng, ["zone", ""]),
            "whenUnsatisfiable": pick(rng, ["DoNotSchedule", "ScheduleAnyway", "Never"]),
            "labelSelector": {"matchLabels": {"app": "x"}},
        }
        put(
            constraint,
            minDomains=maybe(rng, [None, None, 1, 0, 2]),
            nodeAffinityPolicy=maybe(rng, [None, "Honor", "Ignore", "Maybe"]),
        )
        pod["topologySpreadConstraints"] = [constraint] * pick(rng, [1, 1, 2])


def metadata(rng: random.Random, pod: Obj, ctr: Obj, template: Obj) -> None:
    meta = template.setdefault("metadata", {})
    if rng.random() < 0.5:
        meta["labels"] = {pick(rng, LABEL_KEYS): pick(rng, LABEL_VALUES)}
    else:
        meta["annotations"] = {
            pick(rng, LABEL_KEYS + ["A.com/B"]): pick(rng, ["x", "y" * pick(rng, [10, 262_000, 262_144])])
        }


def dns(rng: random.Random, pod: Obj, ctr: Obj) -> None:
    if rng.random() < 0.5:
        config: Obj = {}
        put(
            config,
            nameservers=maybe(
                rng, [["10.0.0.10"], ["1.2.3"], ["::1", "10.0.0.1", "10.0.0.2", "10.0.0.3"], []]
            ),
            searches=maybe(
                rng, [["ns.svc.cluster.local"], ["a_b.example"], ["."], ["x."], ["A.b"], ["s"] * 33]
            ),
            options=maybe(rng, [[{"name": "ndots", "value": "2"}], [{"value": "2"}]]),
        )
        pod["dnsConfig"] = config
        put(pod, dnsPolicy=maybe(rng, ["None", "ClusterFirst"]))
    else:
        pod["hostAliases"] = [{"ip": pick(rng, IPS), "hostnames": [pick(rng, SUBDOMAINS)]}]


def spec(rng: random.Random, pod: Obj, ctr: Obj) -> None:
    choice = rng.randrange(5)
    if choice == 0:
        pod[pick(rng, ["priorityClassName", "nodeName", "runtimeClassName"])] = pick(rng, SUBDOMAINS)
    elif choice == 1:
        pod["activeDeadlineSeconds"] = pick(rng, [1, 0, -1, 2**31 - 1, 2**31])
    elif choice == 2:
        pod["readinessGates"] = [{"conditionType": pick(rng, LABEL_KEYS)}]
    elif choice == 3:
        gate = pick(rng, LABEL_KEYS)
        pod["schedulingGates"] = [{"name": gate}, {"name": pick(rng, [gate, "example.com/other"])}]
    else:
        pod["shareProcessNamespace"] = pick(rng, [True, False])
        pod["hostPID"] = pick(rng, [True, False])


def containers(rng: random.Random, pod: Obj, ctr: Obj) -> None:
    init: Obj = {"name": "init", "image": "busybox:1.36"}
    put(init, restartPolicy=maybe(rng, ["Always", "Never", "OnFailure", "Sometimes"]))
    if rng.random() < 0.5:
        init[pick(rng, ["livenessProbe", "readinessProbe", "startupProbe", "lifecycle"])] = (
            {"preStop": {"exec": {"command": ["true"]}}}
            if rng.random() < 0.25
            else {"exec": {"command": ["true"]}}
        )
    pod.setdefault("initContainers", []).append(init)
    if rng.random() < 0.3:
        ctr["restartPolicy"] = pick(rng, ["Always", "Never", "OnFailure", "Sometimes"])


SELECTOR_KEYS = ["app", "example.com/app", "a b", "a" * 64, "x/", "tier", "Example.com/x"]


def _selector(rng: random.Random) -> Obj:
    selector: Obj = {}
    if rng.random() < 0.6:
        selector["matchLabels"] = {
            pick(rng, SELECTOR_KEYS + ["app"] * 4): pick(rng, LABEL_VALUES + ["x"] * 5)
        }
    if rng.random() < 0.5:
        requirement: Obj = {
            "key": pick(rng, SELECTOR_KEYS + ["app", "tier"] * 3),
            "operator": pick(rng, ["In", "NotIn", "Exists", "DoesNotExist", "In", "Exists", "Gt", "in"]),
        }
        put(requirement, values=maybe(rng, [["a"], [], ["a", "b"], ["a b"], ["a"], ["-x"]]))
        selector["matchExpressions"] = [requirement]
    return selector


def selectors(rng: random.Random, pod: Obj, ctr: Obj) -> None:
    """The label selectors of pod affinity terms and topology spread constraints, their namespaces,
    matchLabelKeys and mismatchLabelKeys."""
    keys = [["app"], ["tier"], ["pod-template-hash"], ["a b"], ["app", "tier"], ["x/"], []]
    if rng.random() < 0.55:
        term: Obj = {"topologyKey": "kubernetes.io/hostname"}
        put(
            term,
            labelSelector=maybe(rng, [_selector(rng), _selector(rng), {}]),
            namespaceSelector=maybe(rng, [None, None, _selector(rng), {}]),
            namespaces=maybe(rng, [None, None, ["default"], ["Default"], ["a.b"], ["kube-system", "x" * 64]]),
            matchLabelKeys=maybe(rng, [None, None, *keys]),
            mismatchLabelKeys=maybe(rng, [None, None, None, *keys]),
        )
        kind = pick(rng, ["podAffinity", "podAntiAffinity"])
        rules: Obj = (
            {"requiredDuringSchedulingIgnoredDuringExecution": [term]}
            if rng.random() < 0.5
            else {
                "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 50, "podAffinityTerm": term}]
            }
        )
        pod["affinity"] = {kind: rules}
    else:
        constraint: Obj = {
            "maxSkew": 1,
            "topologyKey": pick(rng, ["topology.kubernetes.io/zone", "kubernetes.io/hostname"]),
            "whenUnsatisfiable": pick(rng, ["DoNotSchedule", "ScheduleAnyway"]),
        }
        put(
            constraint,
            labelSelector=maybe(rng, [_selector(rng), _selector(rng), {}]),
            matchLabelKeys=maybe(rng, [None, *keys]),
        )
        pod.setdefault("topologySpreadConstraints", []).append(constraint)


def hostports(rng: random.Random, pod: Obj, ctr: Obj) -> None:
    """Host ports taken twice: by two ports of a container, by two containers, or within an init container."""
    host = pick(rng, [8080, 9000])
    port: Obj = {"containerPort": pick(rng, [8080, 8081, 9000])}
    put(
        port,
        hostPort=maybe(rng, [host, host, 0, 9001]),
        protocol=maybe(rng, ["TCP", "UDP", "SCTP"]),
        hostIP=maybe(rng, [None, None, "10.0.0.1", "127.0.0.1"]),
    )
    where = pick(rng, ["same", "other", "init", "init"])
    if where == "same":
        target = ctr
    elif where == "other":
        target = {"name": f"side{len(pod['containers'])}", "image": "busybox:1.36"}
        pod["containers"].append(target)
    else:
        inits = pod.setdefault("initContainers", [])
        if inits and rng.random() < 0.6:
            target = inits[-1]
        else:
            target = {"name": f"init{len(inits)}", "image": "busybox:1.36"}
            inits.append(target)
    target.setdefault("ports", []).append(port)
    if rng.random() < 0.4:  # a second port, often the same host port
        again = dict(port)
        again["containerPort"] = port["containerPort"] + 1
        if rng.random() < 0.5:
            again["protocol"] = pick(rng, ["TCP", "UDP"])
        target["ports"].append(again)
    if rng.random() < 0.1:
        pod["hostNetwork"] = True


SYSCTLS = [
    "net.core.somaxconn",
    "net/ipv4/ip_local_port_range",
    "kernel.shm_rmid_forced",
    "kernel.msgmax",
    "fs.mqueue.msg_max",
    "fs/mqueue/msg_max",
    "kernel.domainname",
    "net.ipv4.conf.eth0/1.forwarding",
    "vm.swappiness",
    "Net.core.x",
    "a..b",
    "-x",
    "x_",
    "",
    "a" * 254,
    "kernel.sem",
    "net.ipv4.ping_group_range",
]


def sysctls(rng: random.Random, pod: Obj, ctr: Obj) -> None:
    context = pod.setdefault("securityContext", {})
    entries = context.setdefault("sysctls", [])
    name = pick(rng, SYSCTLS + [e["name"] for e in entries])
    entries.append({"name": name, "value": "1"})
    if rng.random() < 0.3:
        pod[pick(rng, ["hostNetwork", "hostIPC"])] = True


def sleep(rng: random.Random, pod: Obj, ctr: Obj) -> None:
    """Sleep handlers against the pod's grace period (30 seconds when unset)."""
    target = ctr
    if rng.random() < 0.2:
        target = {
            "name": "side",
            "image": "busybox:1.36",
            "restartPolicy": pick(rng, ["Always", "Always", "Never"]),
        }
        pod.setdefault("initContainers", []).append(target)
    hook = pick(rng, ["preStop", "postStart"])
    target.setdefault("lifecycle", {})[hook] = {
        "sleep": {"seconds": pick(rng, [0, 1, 5, 29, 30, 31, 60, -1, 600])}
    }
    if rng.random() < 0.5:
        pod["terminationGracePeriodSeconds"] = pick(rng, [0, 1, 10, 30, 45, 120, 600])


def _downward_ref(rng: random.Random) -> Obj:
    """A downward API file's reference: to a field of the pod, to a container's resource, both or none."""
    field = {
        "fieldPath": pick(
            rng,
            [
                "metadata.labels",
                "metadata.annotations",
                "metadata.name",
                "metadata.labels['app']",
                "metadata.annotations['A.com/b']",
                "metadata.labels['a b']",
                "spec.nodeName",
                "status.podIP",
                "",
            ],
        )
    }
    resource: Obj = {"containerName": pick(rng, ["train", "train", "", "missing"])}
    put(
        resource,
        resource=maybe(rng, ["limits.cpu", "requests.memory", "requests.hugepages-2Mi", "limits.gpu", ""]),
    )
    return pick(
        rng,
        [
            {"fieldRef": field},
            {"fieldRef": field},
            {"resourceFieldRef": resource},
            {"fieldRef": field, "resourceFieldRef": resource},
            {},
        ],
    )


def volsources(rng: random.Random, pod: Obj, ctr: Obj) -> None:
    """The rarer volume sources' own fields: NFS, CSI, projected, ephemeral."""
    name = f"v{len(pod.get('volumes', []))}"
    choice = rng.randrange(5)
    if choice == 4:
        files = [
            {"path": pick(rng, ["labels", "cpu", "a/b", "/abs", "..x", ""]), **_downward_ref(rng)}
            for _ in range(rng.choice([1, 1, 2]))
        ]
        source: Obj = {"downwardAPI": {"items": files}}
        put(source["downwardAPI"], defaultMode=maybe(rng, [None, None, 0o644, 0o1000]))
    elif choice == 0:
        source = {"nfs": {}}
        put(source["nfs"], server=maybe(rng, ["nfs.example.com", "10.0.0.2", ""]))
        put(source["nfs"], path=maybe(rng, ["/exports", "/", "exports", "", "/a/../b"]))
        put(source["nfs"], readOnly=maybe(rng, [True, False]))
    elif choice == 1:
        source = {"csi": {}}
        put(
            source["csi"],
            driver=maybe(
                rng,
                ["csi.example.com", "CSI.Example.com", "hostpath.csi.k8s.io", "a_b", "a" * 64, "-x", "", "x"],
            ),
            nodePublishSecretRef=maybe(rng, [None, {"name": "s"}, {"name": ""}, {"name": "A_b"}, {}]),
            volumeAttributes=maybe(rng, [None, {"size": "1Gi"}]),
        )
    elif choice == 2:
        sources: list[Obj] = []
        for _ in range(rng.choice([1, 1, 2, 3])):
            kind = rng.randrange(5)
            item: Obj
            if kind == 0:
                item = {"secret": {"name": pick(rng, ["s", "s", ""])}}
                put(
                    item["secret"],
                    items=maybe(
                        rng, [[{"key": "k", "path": pick(rng, ["a", "b", "a/b", "/a", "..x", "../x", ""])}]]
                    ),
                )
            elif kind == 1:
                item = {"configMap": {"name": pick(rng, ["c", "c", ""])}}
                put(
                    item["configMap"],
                    items=maybe(
                        rng,
                        [
                            [
                                {
                                    "key": pick(rng, ["k", ""]),
                                    "path": pick(rng, ["a", "c", "a"]),
                                    "mode": pick(rng, [0o444, 0o644, 0o1000]),
                                }
                            ]
                        ],
                    ),
                )
            elif kind == 2:
                item = {
                    "downwardAPI": {
                        "items": [{"path": pick(rng, ["labels", "a", "/x", "..y", ""]), **_downward_ref(rng)}]
                    }
                }
            elif kind == 3:
                item = {"serviceAccountToken": {}}
                put(
                    item["serviceAccountToken"],
                    path=maybe(rng, ["token", "token", "a", "/token", "../t", ""]),
                    expirationSeconds=maybe(rng, [600, 3600, 599, 1, 2**32, 2**32 + 1]),
                    audience=maybe(rng, [None, "vault"]),
                )
            else:
                item = {"secret": {"name": "s"}, "configMap": {"name": "c"}}
            sources.append(item)
        source = {"projected": {"sources": sources}}
        put(source["projected"], defaultMode=maybe(rng, [None, None, 0o644, 0o777, 0o1000, -1]))
    else:
        template = {"spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}
        source = {
            "ephemeral": pick(rng, [{"volumeClaimTemplate": template}, {"volumeClaimTemplate": template}, {}])
        }
    pod.setdefault("volumes", []).append({"name": name, **source})
    if rng.random() < 0.5:
        ctr.setdefault("volumeMounts", []).append({"name": name, "mountPath": f"/mnt/{name}"})


def apparmor(rng: random.Random, pod: Obj, ctr: Obj) -> None:
    profile: Obj = {}
    put(profile, type=maybe(rng, ["RuntimeDefault", "Unconfined", "Localhost", "Localhost", "Bogus", ""]))
    put(profile, localhostProfile=maybe(rng, [None, "k8s-apparmor-example", "", " p", "a" * 4096, "p/x"]))
    owner = pod if rng.random() < 0.5 else ctr
    owner.setdefault("securityContext", {})["appArmorProfile"] = profile


def claims(rng: random.Random, pod: Obj, ctr: Obj) -> None:
    """Dynamic resource allocation: the pod's resource claims and the containers' references to them."""
    existing = pod.setdefault("resourceClaims", [])
    if not existing or rng.random() < 0.6:
        fresh = f"claim{len(existing)}"
        names = [fresh, fresh, "gpu", "nic", "", "GPU", "a_b", *(c["name"] for c in existing)]
        claim: Obj = {"name": pick(rng, names)}
        refs = pick(
            rng,
            [
                ["resourceClaimTemplateName"],
                ["resourceClaimName"],
                ["resourceClaimTemplateName"],
                [],
                ["resourceClaimName", "resourceClaimTemplateName"],
            ],
        )
        for field in refs:
            claim[field] = pick(rng, ["gpu-template", "shared-gpu", "gpu.example.com", "A_b", ""])
        existing.append(claim)
    target = (
        ctr
        if rng.random() < 0.8
        else pod.setdefault("initContainers", [{"name": "init", "image": "busybox:1.36"}])[0]
    )
    reference: Obj = {"name": pick(rng, [*(c["name"] for c in existing[::-1]), "gpu", "missing", ""])}
    put(reference, request=maybe(rng, [None, None, "r1", "R_1", ""]))
    target.setdefault("resources", {}).setdefault("claims", []).append(reference)
    if rng.random() < 0.15:
        target["resources"]["claims"].append(
            pick(rng, [dict(reference), {"name": reference["name"], "request": "r2"}])
        )


def podres(rng: random.Random, pod: Obj, ctr: Obj) -> None:
    """Pod-level resources: names, quantities, requests against limits."""
    res = pod.setdefault("resources", {})
    for section in rng.sample(["requests", "limits"], rng.randrange(1, 3)):
        name = pick(
            rng,
            ["cpu", "memory", "hugepages-2Mi", "ephemeral-storage", "nvidia.com/gpu", "pods", "Cpu", "a b"],
        )
        res.setdefault(section, {})[name] = pick(rng, ["2", "4Gi", "500m", "-1", "1GB", "2Mi", "3Mi", 0])
    if rng.random() < 0.3 and res.get("limits"):  # requests equal to (or near) the limits
        name, value = rng.choice(sorted(res["limits"].items(), key=str))
        res.setdefault("requests", {})[name] = pick(rng, [value, value, "1", "64Gi"])
    if rng.random() < 0.1:
        res["claims"] = [{"name": "gpu"}]


def windows(rng: random.Random, pod: Obj, ctr: Obj) -> None:
    """A security context's windowsOptions (hostProcess and what it asks of the pod: `platform`)."""
    options: Obj = {}
    put(
        options,
        runAsUserName=maybe(
            rng,
            [
                "ContainerUser",
                "NT AUTHORITY\\NETWORK SERVICE",
                "corp.example.com\\svc",
                "a\\b\\c",
                "",
                "...",
                "us:er",
                "x\x01",
                "u" * 105,
                ".dom\\u",
                "d" * 16 + "\\u",
                "dom\\",
            ],
        ),
        gmsaCredentialSpecName=maybe(rng, [None, "webapp1", "Web_App"]),
        gmsaCredentialSpec=maybe(rng, [None, "{}", ""]),
    )
    owner = pod if rng.random() < 0.5 else ctr
    owner.setdefault("securityContext", {})["windowsOptions"] = options


OS_POD_CONTEXT: list[tuple[str, Any]] = [
    ("runAsNonRoot", True),
    ("runAsUser", 1000),
    ("runAsGroup", 0),
    ("fsGroup", 2000),
    ("fsGroupChangePolicy", "Always"),
    ("seccompProfile", {"type": "RuntimeDefault"}),
    ("seLinuxOptions", {"level": "s0:c1,c2"}),
    ("appArmorProfile", {"type": "RuntimeDefault"}),
    ("sysctls", [{"name": "kernel.shm_rmid_forced", "value": "1"}]),
    ("sysctls", []),
    ("supplementalGroups", [1]),
    ("supplementalGroups", []),
    ("supplementalGroupsPolicy", "Merge"),
    ("seLinuxChangePolicy", "Recursive"),
    ("windowsOptions", {"runAsUserName": "ContainerUser"}),
]
OS_CONTAINER_CONTEXT: list[tuple[str, Any]] = [
    ("runAsNonRoot", True),
    ("privileged", False),
    ("allowPrivilegeEscalation", False),
    ("readOnlyRootFilesystem", True),
    ("capabilities", {"drop": ["ALL"]}),
    ("procMount", "Default"),
    ("runAsUser", 1000),
    ("runAsGroup", 1000),
    ("seccompProfile", {"type": "RuntimeDefault"}),
    ("seLinuxOptions", {"level": "s0:c1,c2"}),
    ("appArmorProfile", {"type": "Unconfined"}),
    ("windowsOptions", {"runAsUserName": "ContainerUser"}),
]


def _hosted(rng: random.Random, pod: Obj) -> Obj:
    """A second container of the pod: a regular one, a sidecar or an init container."""
    where = pick(rng, ["containers", "initContainers", "sidecar"])
    extra: Obj = {"name": f"extra{len(pod.get('initContainers', []))}", "image": "busybox:1.36"}
    if where == "sidecar":
        extra["restartPolicy"] = "Always"
    pod.setdefault("containers" if where == "containers" else "initContainers", []).append(extra)
    return extra


def platform(rng: random.Random, pod: Obj, ctr: Obj) -> None:
    """spec.os and what each OS forbids; Windows host-process pods; hostUsers, procMount and the host
    namespaces."""
    choice = rng.randrange(3)
    if choice == 0:
        pod["os"] = pick(
            rng,
            [
                {"name": "windows"},
                {"name": "linux"},
                {"name": "windows"},
                {"name": "linux"},
                {"name": "Windows"},
                {"name": ""},
                {},
            ],
        )
        for _ in range(rng.choice([0, 1, 1, 2])):
            if rng.random() < 0.5:
                field, value = pick(rng, OS_POD_CONTEXT)
                pod.setdefault("securityContext", {})[field] = copy.deepcopy(value)
            elif rng.random() < 0.7:
                field, value = pick(rng, OS_CONTAINER_CONTEXT)
                target = ctr if rng.random() < 0.8 else _hosted(rng, pod)
                target.setdefault("securityContext", {})[field] = copy.deepcopy(value)
            else:
                field, value = pick(
                    rng,
                    [
                        ("hostPID", False),
                        ("hostPID", True),
                        ("hostIPC", True),
                        ("shareProcessNamespace", False),
                        ("hostUsers", True),
                        ("hostUsers", False),
                        ("hostNetwork", True),
                    ],
                )
                pod[field] = value
    elif choice == 1:
        of_pod = maybe(rng, [True, False, None])
        if of_pod is not None:
            pod.setdefault("securityContext", {})["windowsOptions"] = {"hostProcess": of_pod}
        own = maybe(rng, [True, True, False, None])
        if own is not None:
            ctr.setdefault("securityContext", {})["windowsOptions"] = {"hostProcess": own}
        if rng.random() < 0.3:
            extra = _hosted(rng, pod)
            put(extra, securityContext=maybe(rng, [{"windowsOptions": {"hostProcess": True}}, {}, None]))
        put(pod, hostNetwork=maybe(rng, [True, True, False]))
        put(pod, os=maybe(rng, [{"name": "windows"}, {"name": "windows"}, {"name": "linux"}, None]))
    else:
        put(pod, hostUsers=maybe(rng, [False, False, True]))
        if rng.random() < 0.3:
            pod[pick(rng, ["hostNetwork", "hostPID", "hostIPC"])] = pick(rng, [True, True, False])
        if rng.random() < 0.4:
            target = ctr if rng.random() < 0.7 else _hosted(rng, pod)
            target.setdefault("securityContext", {})["procMount"] = pick(
                rng, ["Unmasked", "Default", "Bogus", ""]
            )
        if rng.random() < 0.15:
            pod.setdefault("volumes", []).append(
                {"name": "blk", "persistentVolumeClaim": {"claimName": "blk"}}
            )
            ctr["volumeDevices"] = [{"name": "blk", "devicePath": "/dev/xvdb"}]


APPARMOR_PREFIX = "container.apparmor.security.beta.kubernetes.io/"
APPARMOR_FIELDS: list[Obj] = [
    {"type": "RuntimeDefault"},
    {"type": "Unconfined"},
    {"type": "Localhost", "localhostProfile": "k8s-apparmor-example"},
    {"type": "Localhost", "localhostProfile": "other"},
]


def aannot(rng: random.Random, pod: Obj, ctr: Obj, template: Obj) -> None:
    """AppArmor annotations of the pod template: the container each names, their values, and whether
    they agree with the appArmorProfile fields."""
    name = pick(
        rng,
        [ctr["name"], ctr["name"], ctr["name"], "missing", "init", "wait-for-workers", "ssh-keygen", "Train"],
    )
    value = pick(
        rng,
        [
            "runtime/default",
            "unconfined",
            "localhost/k8s-apparmor-example",
            "",
            "localhost/other",
            "bogus",
            "localhost/",
            "Unconfined",
            "docker-default",
        ],
    )
    template.setdefault("metadata", {}).setdefault("annotations", {})[APPARMOR_PREFIX + name] = value
    if rng.random() < 0.3:
        pod.setdefault("initContainers", []).append({"name": "init", "image": "busybox:1.36"})
    if rng.random() < 0.6:
        owner = pod if rng.random() < 0.4 else ctr
        owner.setdefault("securityContext", {})["appArmorProfile"] = copy.deepcopy(pick(rng, APPARMOR_FIELDS))
    if rng.random() < 0.1:
        pod["os"] = {"name": "windows"}


def podlimits(rng: random.Random, pod: Obj, ctr: Obj) -> None:
    """Pod-level limits against the containers' limits: each regular container's, and the aggregate
    hugepages (sidecars and init containers count)."""
    limits = pod.setdefault("resources", {}).setdefault("limits", {})
    limits.setdefault("memory", pick(rng, ["4Gi", "2Gi", "1Gi", "8Gi"]))
    put(limits, cpu=maybe(rng, ["4", "2", "1", "500m"]))
    put(limits, **{"hugepages-2Mi": maybe(rng, [None, "4Mi", "8Mi", "2Mi"])})
    target = ctr if rng.random() < 0.6 else _hosted(rng, pod)
    own = target.setdefault("resources", {}).setdefault("limits", {})
    own.setdefault("memory", pick(rng, ["1Gi", "2Gi", "512Mi", "4Gi", "3Gi"]))
    put(own, cpu=maybe(rng, ["1", "2", "3", "500m"]))
    put(own, **{"hugepages-2Mi": maybe(rng, [None, "2Mi", "4Mi", "6Mi"])})
    if rng.random() < 0.2:
        pod["resources"]["requests"] = {"memory": pick(rng, ["1Gi", "4Gi"])}


def _driver(rng: random.Random) -> Obj:
    """One in-tree driver's source (or an image volume), each field valid, missing or odd."""
    kind = rng.randrange(20)
    if kind == 0:
        return {
            "gitRepo": _fields(
                rng,
                repository=["https://example.com/r.git", ""],
                directory=[".", "sub", "/abs", "a/../b", ".."],
            )
        }
    if kind == 1:
        iscsi = _fields(
            rng,
            targetPortal=["10.0.0.1:3260", "", "p" * 60],
            iqn=["iqn.2001-04.com.example:storage", "eui.02004567A425678D", "naa.1234", "bogus", "iqn.x", ""],
            lun=[0, 255, 256, -1],
            initiatorName=[None, "iqn.2001-04.com.example:node", "x", "naa.0123456789abcdef0123456789abcdef"],
            chapAuthSession=[None, True, False],
            secretRef=[None, {"name": "chap"}],
        )
        return {"iscsi": iscsi}
    if kind == 2:
        return {"rbd": _fields(rng, monitors=[["10.0.0.1:6789"], []], image=["img", ""])}
    if kind == 3:
        return {"glusterfs": _fields(rng, endpoints=["gluster", ""], path=["vol", ""])}
    if kind == 4:
        return {"cephfs": _fields(rng, monitors=[["10.0.0.1:6789"], []], path=[None, "/"])}
    if kind == 5:
        return {"cinder": _fields(rng, volumeID=["vol-1", ""], secretRef=[None, {"name": "s"}, {"name": ""}])}
    if kind == 6:
        return {
            "fc": _fields(
                rng,
                targetWWNs=[["500a0982991b8dc5"], []],
                wwids=[None, ["3600508b400105e210000900000490000"]],
                lun=[0, 2, 256, -1, None],
            )
        }
    if kind == 7:
        options = pick(
            rng, [None, {"size": "1"}, {"kubernetes.io/x": "1"}, {"a.k8s.io": "1"}, {"example.com/x": "1"}]
        )
        return {"flexVolume": _fields(rng, driver=["example.com/lvm", ""], options=[options])}
    if kind == 8:
        return {"azureFile": _fields(rng, secretName=["azure", ""], shareName=["share", ""])}
    if kind == 9:
        disk = _fields(
            rng,
            diskName=["d1", ""],
            diskURI=[
                "https://acct.blob.core.windows.net/vhds/d1.vhd",
                "/subscriptions/s/resourcegroups/g/providers/microsoft.compute/disks/d1",
                "",
            ],
            kind=[None, "Shared", "Managed", "Dedicated", "Bogus"],
            cachingMode=[None, "ReadOnly", "None", "Sometimes"],
        )
        return {"azureDisk": disk}
    if kind == 10:
        return {"vsphereVolume": _fields(rng, volumePath=["[ds] vols/v.vmdk", ""])}
    if kind == 11:
        return {
            "quobyte": _fields(
                rng,
                registry=["reg:7861", "reg:7861,reg2:7861", "reg", "a:b:c", "[::1]:7861", ""],
                volume=["v", ""],
                tenant=[None, "t", "t" * 65],
            )
        }
    if kind == 12:
        return {
            "scaleIO": _fields(
                rng,
                gateway=["https://gw", ""],
                system=["sys", ""],
                volumeName=["v", ""],
                secretRef=[{"name": "s"}],
            )
        }
    if kind == 13:
        return {
            "storageos": _fields(
                rng,
                volumeName=["vol", "Vol_1", ""],
                volumeNamespace=[None, "ns", "NS"],
                secretRef=[None, {"name": ""}],
            )
        }
    if kind == 14:
        return {"portworxVolume": _fields(rng, volumeID=["pwx1", ""])}
    if kind == 15:
        return {"photonPersistentDisk": _fields(rng, pdID=["pd1", ""])}
    if kind == 16:
        return {"gcePersistentDisk": _fields(rng, pdName=["pd", ""], partition=[None, 0, 1, 255, 256, -1])}
    if kind == 17:
        return {"awsElasticBlockStore": _fields(rng, volumeID=["vol-1", ""], partition=[None, 0, 3, 256, -1])}
    if kind == 18:
        return {"flocker": _fields(rng, datasetName=["ds", "a/b", None], datasetUUID=[None, "u-1"])}
    return {
        "image": _fields(
            rng,
            reference=["example.com/data:1.0", "", "example.com/data:latest"],
            pullPolicy=[None, "IfNotPresent", "Always", "Sometimes"],
        )
    }


def _fields(rng: random.Random, **pools: list[Any]) -> Obj:
    """Each field its pool's first value, or one in three times a draw from the pool; None leaves it out."""
    out: Obj = {}
    put(out, **{name: pick(rng, pool) if rng.random() < 0.3 else pool[0] for name, pool in pools.items()})
    return out


def drivers(rng: random.Random, pod: Obj, ctr: Obj) -> None:
    """The in-tree drivers' and the image volume's own fields; now and then a second source."""
    name = f"d{len(pod.get('volumes', []))}"
    source = _driver(rng)
    if rng.random() < 0.1:
        source = {**_driver(rng), **source}
    pod.setdefault("volumes", []).append({"name": pick(rng, [name, name, "a" * 60]), **source})
    if rng.random() < 0.5:
        ctr.setdefault("volumeMounts", []).append({"name": name, "mountPath": f"/mnt/{name}"})


def _divisor_ref(rng: random.Random) -> Obj:
    resource: Obj = {"containerName": "train"}
    put(
        resource,
        resource=pick(
            rng,
            [
                "limits.cpu",
                "requests.memory",
                "limits.ephemeral-storage",
                "requests.hugepages-2Mi",
                "limits.gpu",
            ],
        ),
        divisor=maybe(
            rng,
            ["1", "1m", "1Mi", "1Gi", "1k", "1000", "1024", "1e3", "1000m", "0", "2", "0.5", "-1", "x", 1],
        ),
    )
    return resource


def projections(rng: random.Random, pod: Obj, ctr: Obj) -> None:
    """Projected clusterTrustBundle and podCertificate sources, 1.37's user fields (dropped unread),
    and downward API divisors and field apiVersions, in volumes and env."""
    choice = rng.randrange(4)
    if choice == 3:
        var: Obj = {"name": "V"}
        if rng.random() < 0.5:
            var["valueFrom"] = {"resourceFieldRef": _divisor_ref(rng)}
        else:
            var["valueFrom"] = {
                "fieldRef": _fields(rng, fieldPath=["metadata.name"], apiVersion=[None, "v1", "v2", ""])
            }
        ctr.setdefault("env", []).append(var)
        return
    files = []
    for _ in range(rng.choice([1, 1, 2])):
        ref = (
            {"resourceFieldRef": _divisor_ref(rng)}
            if rng.random() < 0.6
            else {
                "fieldRef": _fields(
                    rng,
                    fieldPath=["metadata.labels", "metadata.name"],
                    apiVersion=[None, "v1", "v2", "apps/v1"],
                )
            }
        )
        put(ref, user=maybe(rng, [None, None, 1000, -1, 2**31]))
        files.append({"path": pick(rng, ["a", "b", "c"]), **ref})
    sources: list[Obj] = [{"downwardAPI": {"items": files}}]
    for _ in range(rng.choice([0, 1, 1, 2])):
        if rng.random() < 0.5:
            bundle = _fields(
                rng,
                signerName=[
                    None,
                    "example.com/signer",
                    "",
                    "example/signer",
                    "example.com/a/b",
                    "Example.com/x",
                ],
                name=[None, "bundle", "example.com:signer:bundle", "", "Bad_Name"],
                labelSelector=[None, {"matchLabels": {"a": "b"}}, {"matchLabels": {"a b": "c"}}],
                path=["ca.pem", "", "/abs", "a", "..x"],
                optional=[None, True],
            )
            sources.append({"clusterTrustBundle": bundle})
        else:
            cert = _fields(
                rng,
                signerName=["example.com/signer", "", "kubernetes.io/kube-apiserver-client-pod", "signer"],
                keyType=["ECDSAP256", "RSA4096", "ED25519", "DSA", ""],
                maxExpirationSeconds=[None, 3600, 86400, 86401, 100, 7862400, 7862401],
                credentialBundlePath=[None, "cred.pem", "/abs", "a"],
                keyPath=[None, "key.pem", "..k"],
                certificateChainPath=[None, "chain.pem"],
                userAnnotations=[None, {"example.com/a": "b"}, {"nodomain": "x"}, {"A b/c": "x"}],
            )
            sources.append({"podCertificate": cert})
    volume: Obj = {"sources": sources}
    put(volume, defaultUser=maybe(rng, [None, None, 1000, -5]))
    if rng.random() < 0.3:
        pod.setdefault("volumes", []).append(
            {
                "name": f"p{len(pod.get('volumes', []))}",
                "configMap": _fields(rng, name=["c"], defaultUser=[None, 7, -1]),
            }
        )
    pod.setdefault("volumes", []).append({"name": f"p{len(pod.get('volumes', []))}", "projected": volume})
    if choice == 2:
        pod["volumes"][-1] = {"name": pod["volumes"][-1]["name"], "downwardAPI": {"items": files}}


def claimtmpl(rng: random.Random, pod: Obj, ctr: Obj) -> None:
    """An ephemeral volume's claim template: its metadata and its PersistentVolumeClaim spec."""
    spec = _fields(
        rng,
        accessModes=[
            ["ReadWriteOnce"],
            ["ReadWriteOncePod"],
            ["ReadWriteOncePod", "ReadOnlyMany"],
            ["Everywhere"],
            [],
            None,
            ["ReadWriteMany", "ReadOnlyMany"],
        ],
        resources=[
            {"requests": {"storage": "1Gi"}},
            {"requests": {"storage": "0"}},
            {"requests": {"storage": "-1Gi"}},
            {"requests": {"cpu": "1"}},
            {"limits": {"storage": "1Gi"}},
            {},
            {"requests": {"storage": "1.5"}},
        ],
        storageClassName=[None, "fast", "Fast_SSD", ""],
        volumeMode=[None, "Filesystem", "Block", "Raw"],
        selector=[
            None,
            {"matchLabels": {"tier": "x"}},
            {"matchExpressions": [{"key": "a", "operator": "In"}]},
        ],
        volumeAttributesClassName=[None, "gold", "Gold!"],
    )
    source = pick(
        rng,
        [
            None,
            None,
            {"kind": "VolumeSnapshot", "apiGroup": "snapshot.storage.k8s.io", "name": "snap"},
            {"kind": "PersistentVolumeClaim", "name": "src"},
            {"kind": "VolumeSnapshot", "name": "snap"},
            {"kind": "", "name": ""},
            {"kind": "X", "apiGroup": "Bad_Group", "name": "n"},
        ],
    )
    ref = pick(
        rng,
        [
            None,
            None,
            "same",
            {"kind": "PersistentVolumeClaim", "name": "other"},
            {"kind": "PersistentVolumeClaim", "name": "src", "namespace": "ns"},
            {"kind": "PersistentVolumeClaim", "name": "src", "namespace": "Bad_NS"},
        ],
    )
    if source is not None:
        spec["dataSource"] = source
    if ref == "same" and source is not None:
        spec["dataSourceRef"] = dict(source)
    elif isinstance(ref, dict):
        spec["dataSourceRef"] = ref
    meta = _fields(
        rng,
        labels=[None, {"app": "x"}, {"a b": "x"}, {"app": "-x"}],
        annotations=[None, {"example.com/a": "b"}, {"a b": "c"}],
        name=[None, None, "claim", ""],
        namespace=[None, None, "ns"],
        finalizers=[None, None, ["example.com/f"], []],
        generation=[None, 0, 3],
        deletionGracePeriodSeconds=[None, None, 0],
    )
    template: Obj = {"spec": spec}
    if meta or rng.random() < 0.3:
        template["metadata"] = meta
    name = f"e{len(pod.get('volumes', []))}"
    pod.setdefault("volumes", []).append({"name": name, "ephemeral": {"volumeClaimTemplate": template}})
    if rng.random() < 0.5:
        ctr.setdefault("volumeMounts", []).append({"name": name, "mountPath": f"/mnt/{name}"})


SELINUX_OPTIONS: list[Obj] = [
    {"level": "s0:c123,c456"},
    {"user": "system_u", "role": "system_r", "type": "spc_t"},
    {"type": "not a type!", "level": "bogus level"},
    {"user": "", "role": "", "type": "", "level": ""},
    {"user": "u" * 300},
    {},
]


def selinux(rng: random.Random, pod: Obj, ctr: Obj) -> None:
    """The pod's supplementalGroupsPolicy and seLinuxChangePolicy, and seLinuxOptions of the pod and of
    its containers."""
    context = pod.setdefault("securityContext", {})
    put(
        context,
        supplementalGroupsPolicy=maybe(rng, ["Merge", "Strict", "merge", "", "Bogus"]),
        seLinuxChangePolicy=maybe(rng, ["Recursive", "MountOption", "recursive", "", "Never"]),
    )
    if rng.random() < 0.5:
        owner = pod["securityContext"] if rng.random() < 0.5 else ctr.setdefault("securityContext", {})
        owner["seLinuxOptions"] = copy.deepcopy(pick(rng, SELINUX_OPTIONS))
    if rng.random() < 0.1:
        context["supplementalGroups"] = [1000]


DEVICE_PATHS = ["", "dev/rel", "/dev/../x", "/data", "../up", "/dev/xvdb/", "/dev/xvdb"]


def devices(rng: random.Random, pod: Obj, ctr: Obj) -> None:
    """Raw block devices: the volume each names (a claim, an ephemeral claim, another source, none), their
    paths, and their clashes with the container's mounts; in init containers and sidecars too."""
    volumes = pod.setdefault("volumes", [])
    target = ctr if rng.random() < 0.75 else _hosted(rng, pod)
    count = len(target.get("volumeDevices", []))
    name = pick(rng, [["blk", "eph", "blk2"][count % 3], "blk", "data", "cfg"])
    if not any(v["name"] == name for v in volumes) and rng.random() < 0.9:
        source = pick(
            rng,
            [
                {"persistentVolumeClaim": {"claimName": name}},
                {
                    "ephemeral": {
                        "volumeClaimTemplate": {
                            "spec": {
                                "accessModes": ["ReadWriteOnce"],
                                "resources": {"requests": {"storage": "1Gi"}},
                            }
                        }
                    }
                },
                {"emptyDir": {}},
                {"configMap": {"name": "cfg"}},
                {"persistentVolumeClaim": {"claimName": ""}},
            ],
        )
        volumes.append({"name": name, **copy.deepcopy(source)})
    named = name if rng.random() < 0.85 else pick(rng, ["missing", ""])
    device = {"name": named, "devicePath": pick(rng, [f"/dev/xvd{'bcdefgh'[count]}", *DEVICE_PATHS])}
    target.setdefault("volumeDevices", []).append(device)
    if rng.random() < 0.3:
        target.setdefault("volumeMounts", []).append(
            {
                "name": pick(rng, ["scratch", name]),
                "mountPath": pick(rng, [f"/scratch{count}", device["devicePath"]]),
            }
        )
        if not any(v["name"] == "scratch" for v in volumes):
            volumes.append({"name": "scratch", "emptyDir": {}})
    if rng.random() < 0.1:
        pod["hostUsers"] = False


SECCOMP_POD = "seccomp.security.alpha.kubernetes.io/pod"
SECCOMP_CONTAINER = "container.seccomp.security.alpha.kubernetes.io/"
SECCOMP_VALUES = [
    "runtime/default",
    "unconfined",
    "localhost/profile.json",
    "docker/default",
    "localhost/other.json",
    "localhost/",
    "localhost//abs.json",
    "localhost/../up.json",
    "bogus",
    "RuntimeDefault",
    "",
]
SECCOMP_FIELDS: list[Obj] = [
    {"type": "RuntimeDefault"},
    {"type": "Unconfined"},
    {"type": "Localhost", "localhostProfile": "profile.json"},
    {"type": "Localhost", "localhostProfile": "other.json"},
]


def seccomp(rng: random.Random, pod: Obj, ctr: Obj, template: Obj) -> None:
    """Seccomp annotations of the pod template: their values, the containers they name, and whether they
    agree with the seccompProfile fields of the pod and of its containers."""
    key = pick(rng, [SECCOMP_POD, SECCOMP_CONTAINER + ctr["name"], SECCOMP_CONTAINER + "missing"])
    template.setdefault("metadata", {}).setdefault("annotations", {})[key] = pick(rng, SECCOMP_VALUES)
    if rng.random() < 0.6:
        owner = pod if rng.random() < 0.5 else ctr
        owner.setdefault("securityContext", {})["seccompProfile"] = copy.deepcopy(pick(rng, SECCOMP_FIELDS))


TOLERATION_ANNOTATIONS = [
    '[{"key": "example.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]',
    "",
    "[]",
    "null",
    '[{"KEY": "a", "Value": "b", "effect": "NoExecute", "tolerationSeconds": 30, "extra": 1}]',
    '[{"key": "a b", "operator": "Equal"}]',
    '[{"operator": "Equal", "value": "x"}]',
    '[{"key": "a", "operator": "Exists", "value": "x"}]',
    '[{"key": "a", "operator": "In"}]',
    '[{"key": "a", "effect": "Never"}]',
    '[{"key": "a", "tolerationSeconds": 30}]',
    '[{"key": "a", "effect": "NoExecute", "tolerationSeconds": 1.5}]',
    '[{"key": "a", "effect": "NoExecute", "tolerationSeconds": "30"}]',
    '[{"key": 1}]',
    "[null]",
    '["a"]',
    '{"key": "a"}',
    "[{",
    "not json",
    "[1,]",
    '[{"key": "a"}] x',
]
DELETION_COSTS = [
    "100",
    "-5",
    "0",
    "2147483647",
    "2147483648",
    "-2147483648",
    "+1",
    "007",
    "",
    "1.5",
    "-0",
    " 1",
]


def podannot(rng: random.Random, pod: Obj, ctr: Obj, template: Obj) -> None:
    """The tolerations, pod-deletion-cost and mirror-pod annotations of a pod template."""
    annotations = template.setdefault("metadata", {}).setdefault("annotations", {})
    choice = rng.randrange(5)
    if choice < 2:
        annotations["scheduler.alpha.kubernetes.io/tolerations"] = pick(rng, TOLERATION_ANNOTATIONS)
    elif choice < 4:
        annotations["controller.kubernetes.io/pod-deletion-cost"] = pick(rng, DELETION_COSTS)
    else:
        annotations["kubernetes.io/config.mirror"] = pick(rng, ["mirror", ""])
        put(pod, nodeName=maybe(rng, ["node-1"]))


def identity(rng: random.Random, pod: Obj, ctr: Obj) -> None:
    """hostname and subdomain: a StatefulSet's template is validated without them (the controller sets
    both), a Job's with them."""
    put(pod, hostname=maybe(rng, ["host", "Bad_Name", "x" * 64, "", "a.b", "-h"]))
    put(pod, subdomain=maybe(rng, ["svc", "Bad_Sub", "y" * 64, ""]))


RESIZE_NAMES = ["cpu", "memory", "ephemeral-storage", "nvidia.com/gpu", "", "CPU"]
RESIZE_POLICIES = ["NotRequired", "RestartContainer", "", "Always", "notrequired"]


def resize(rng: random.Random, pod: Obj, ctr: Obj) -> None:
    """containers' resizePolicy: resource names, restart policies, duplicates, in init containers; the
    pod's restartPolicy decides which restart policies are allowed."""
    policy = [
        {"resourceName": pick(rng, RESIZE_NAMES), "restartPolicy": pick(rng, RESIZE_POLICIES)}
        for _ in range(rng.choice([1, 1, 2, 3]))
    ]
    target = ctr
    if rng.random() < 0.2:
        init: Obj = {"name": "init", "image": "busybox:1.36"}
        put(init, restartPolicy=maybe(rng, ["Always"]))
        pod.setdefault("initContainers", []).append(init)
        target = init
    target["resizePolicy"] = policy
    put(pod, restartPolicy=maybe(rng, ["Never", "OnFailure", "Always"]))


def overhead(rng: random.Random, pod: Obj, ctr: Obj) -> None:
    """The pod's overhead: its resource names and quantities (the API server validates them; its default
    admission, RuntimeClass, refuses a pod that sets overhead its RuntimeClass does not)."""
    pod["overhead"] = {pick(rng, RESOURCES): pick(rng, QUANTITIES) for _ in range(rng.choice([1, 2]))}
    put(pod, runtimeClassName=maybe(rng, ["kata", "Bad_Class"]))


FAMILIES: dict[str, Mutation] = {
    "names": names,
    "ports": ports,
    "env": env,
    "volumes": volumes,
    "resources": resources,
    "enums": enums,
    "probes": probes,
    "security": security,
    "scheduling": scheduling,
    "dns": dns,
    "spec": spec,
    "containers": containers,
    "selectors": selectors,
    "hostports": hostports,
    "sysctls": sysctls,
    "sleep": sleep,
    "volsources": volsources,
    "apparmor": apparmor,
    "claims": claims,
    "podres": podres,
    "windows": windows,
    "platform": platform,
    "podlimits": podlimits,
    "drivers": drivers,
    "projections": projections,
    "claimtmpl": claimtmpl,
    "selinux": selinux,
    "devices": devices,
    "identity": identity,
    "resize": resize,
    "overhead": overhead,
}
# Families that change the template's metadata too: (rng, pod spec, first container, template).
TEMPLATE_FAMILIES: dict[str, Callable[[random.Random, Obj, Obj, Obj], None]] = {
    "metadata": metadata,
    "aannot": aannot,
    "seccomp": seccomp,
    "podannot": podannot,
}
ALL_FAMILIES = (*FAMILIES, *TEMPLATE_FAMILIES)


class Case(NamedTuple):
    number: int
    family: str
    role: str  # the replica whose template was changed: "Launcher" or "Worker"
    job: Obj


def _base(version: str) -> Obj:
    container = {"name": "train", "image": "example.com/train:1.0"}
    return {
        "apiVersion": f"kubeflow.org/{version}",
        "kind": "MPIJob",
        "metadata": {"name": "pr", "namespace": "pod-rules"},
        "spec": {
            "mpiReplicaSpecs": {
                "Launcher": {
                    "replicas": 1,
                    "template": {"spec": {"containers": [{**container, "command": ["mpirun", "true"]}]}},
                },
                "Worker": {"replicas": 1, "template": {"spec": {"containers": [dict(container)]}}},
            }
        },
    }


def family(number: int) -> str:
    """The family of case `number` (the families take turns)."""
    return ALL_FAMILIES[number % len(ALL_FAMILIES)]


def case(seed: int, number: int) -> Case:
    rng = Draws(seed * 1_000_003 + number)
    rng.lean = pick(rng, [0.0, 0.6, 0.8])
    family = ALL_FAMILIES[number % len(ALL_FAMILIES)]
    job = _base(pick(rng, ["v2beta1", "v1", "v1alpha2"]))
    role = pick(rng, ["Launcher", "Worker", "Worker"])
    template = job["spec"]["mpiReplicaSpecs"][role]["template"]
    pod = template["spec"]
    for _ in range(rng.choice([1, 1, 2, 3])):
        if family in TEMPLATE_FAMILIES:
            TEMPLATE_FAMILIES[family](rng, pod, pod["containers"][0], template)
        else:
            FAMILIES[family](rng, pod, pod["containers"][0])
    return Case(number, family, role, copy.deepcopy(job))
