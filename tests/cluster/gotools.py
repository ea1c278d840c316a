"""Go tools the test suite builds itself from the Go module proxy: the control plane, kwok, kubeconform,
kustomize v5 and kpt, each at one pinned version, and the suite's own Go programs (LOCAL_TOOLS: goyaml,
tests/goyaml, over apimachinery's YAML reader; the Trainer oracle, tests/oracles/trainer; the operators'
oracles, tests/oracles/v2beta1, tests/oracles/v1 and tests/oracles/v1alpha2).

None of them is on PyPI, npm or Debian at a usable version, so the suite builds them with the local `go`
from their modules, once, into a cache keyed by tool and version:
`$MPIGEN_TEST_CACHE/go/<tool>-<version>/bin` (default `~/.cache/mpigen-tests`). A build happens only when a
fixture asks for the tool, under a file lock so parallel runs build it once. Each build is a small generated
wrapper module (`go.mod` requiring the tool's module), so a tool whose own go.mod carries `replace`
directives (etcd, Kubernetes) builds as `go install` would refuse to. Kubernetes publishes
`k8s.io/kubernetes` with its staging modules replaced by local paths and required at v0.0.0; the wrapper
maps every one of them to its published v0.x.y and stamps the version into the binaries with -ldflags.
A tool's `replaces` add directives of its own (Volcano: `volcano.sh/apis`, which its go.mod takes from a
nested module that the proxy's zip leaves out, from the proxy at the version with the same source).

Go programs kept in this repository (LOCAL_TOOLS: a directory with go.mod, go.sum and main.go, e.g.
tests/goyaml, tests/oracles/trainer) are built the same way into `<tool>-<hash>/bin`, keyed by a hash of
their sources (whose go.mod and go.sum pin every module) and the Go version, with `-mod=readonly`. A tool's
`shared` files (tests/oracles/harness/*.go) are copied in beside its own and hashed with them.

Where `go` is missing, `require()` skips the test and says why; a build that fails is a test failure with
the end of the build log. Run `python tests/cluster/gotools.py [tool ...]` to build ahead of a test run.
Each build step says what it runs, then every 20 s how far it has got, with the path of its log
(tests/progress.py: on stderr here, on the terminal past pytest's capture in a test run).
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, for progress.py
import progress

KUBERNETES_VERSION = "v1.37.2"
VOLCANO_VERSION = "v1.14.1"
VOLCANO_APIS = ("volcano.sh/apis => volcano.sh/apis v1.14.0",)  # see TOOLS["volcano"]
ARGOCD_VERSION = "v3.4.0"  # see TOOLS["argocd"]
ARGOCD_GITOPS_ENGINE = "github.com/argoproj/argo-cd/gitops-engine"
BUILD_TIMEOUT = 3600


@dataclass(frozen=True)
class Tool:
    """One pinned Go tool: the module and version, the main packages to build, the binaries they give."""

    module: str
    version: str
    packages: tuple[str, ...]
    binaries: tuple[str, ...]
    ldflags: tuple[str, ...] = ()
    kubernetes_staging: bool = False  # k8s.io/kubernetes: map its staging modules to published versions
    copy_replaces: bool = (
        False  # the module's go.mod pins dependencies by `replace`: copy those into the wrapper
    )
    cgo: bool = False
    env: dict[str, str] = field(default_factory=dict)
    # Further `replace` directives for the wrapper, `module => target`: a target `module version` is written
    # as it is; a target `./path` names that folder of the tool's own downloaded module (a filesystem path).
    replaces: tuple[str, ...] = ()
    # Modules stood in for by the same code published under a former path, `(path, former path, version)`:
    # the wrapper replaces `path` with a copy of `former@version` (from the proxy) whose module path and
    # imports are renamed to `path` (renamed_copy).
    renamed: tuple[tuple[str, str, str], ...] = ()
    # A folder of this repository whose subfolders are main packages of its own (`package main`, no go.mod),
    # built in the wrapper module beside the tool's packages: `packages` names them `./<subfolder>`, and
    # the cache key adds a hash of their sources (mains_hash).
    mains: Path | None = None


def _kube_ldflags(version: str) -> tuple[str, ...]:
    major, minor = version.lstrip("v").split(".")[:2]
    base = "k8s.io/component-base/version"
    return (
        f"-X {base}.gitVersion={version}",
        f"-X {base}.gitMajor={major}",
        f"-X {base}.gitMinor={minor}",
        f"-X {base}.gitTreeState=clean",
        f"-X {base}.buildDate=1970-01-01T00:00:00Z",
    )


TOOLS: dict[str, Tool] = {
    "etcd": Tool("go.etcd.io/etcd/server/v3", "v3.6.16", ("go.etcd.io/etcd/server/v3",), ("etcd",)),
    "kubernetes": Tool(
        "k8s.io/kubernetes",
        KUBERNETES_VERSION,
        tuple(
            f"k8s.io/kubernetes/cmd/{name}"
            for name in ("kube-apiserver", "kube-controller-manager", "kube-scheduler")
        ),
        ("kube-apiserver", "kube-controller-manager", "kube-scheduler"),
        ldflags=_kube_ldflags(KUBERNETES_VERSION),
        kubernetes_staging=True,
    ),
    "kwok": Tool(
        "sigs.k8s.io/kwok",
        "v0.8.0",
        ("sigs.k8s.io/kwok/cmd/kwok",),
        ("kwok",),
        ldflags=("-X sigs.k8s.io/kwok/pkg/consts.Version=v0.8.0",),
    ),
    "kubeconform": Tool(
        "github.com/yannh/kubeconform",
        "v0.8.0",
        ("github.com/yannh/kubeconform/cmd/kubeconform",),
        ("kubeconform",),
        ldflags=("-X main.version=v0.8.0",),
    ),
    # v5.8.3 needs Go 1.27; v5.8.2 is the newest that builds with Go 1.26.
    "kustomize": Tool(
        "sigs.k8s.io/kustomize/kustomize/v5",
        "v5.8.2",
        ("sigs.k8s.io/kustomize/kustomize/v5",),
        ("kustomize",),
        ldflags=("-X sigs.k8s.io/kustomize/api/provenance.version=v5.8.2",),
    ),
    # kpt's releases are published under its original module path; github.com/kptdev/kpt is not on the proxy.
    "kpt": Tool(
        "github.com/GoogleContainerTools/kpt",
        "v1.0.0-beta.49",
        ("github.com/GoogleContainerTools/kpt",),
        ("kpt",),
        ldflags=("-X github.com/GoogleContainerTools/kpt/run.version=v1.0.0-beta.49",),
        # The checksum database (through the proxy) answers 404 for kpt's releases; the module itself
        # still comes from the proxy.
        env={"GONOSUMDB": "github.com/GoogleContainerTools/kpt"},
    ),
    # The JobSet controller (main package at the module root); its CRDs and webhook configurations are
    # read from the same module in the module cache (module_dir), never from a copy of our own.
    "jobset": Tool(
        "sigs.k8s.io/jobset",
        "v0.12.0",
        ("sigs.k8s.io/jobset",),
        ("jobset",),
        ldflags=("-X sigs.k8s.io/jobset/pkg/version.GitVersion=v0.12.0",),
    ),
    "kueue": Tool(
        "sigs.k8s.io/kueue",
        "v0.19.2",
        ("sigs.k8s.io/kueue/cmd/kueue",),
        ("kueue",),
        ldflags=("-X sigs.k8s.io/kueue/pkg/version.GitVersion=v0.19.2",),
    ),
    # Volcano v1.14.1, not v1.15.1. Both go.mods pin k8s.io/* (v0.34.1 here) by `replace` and replace
    # volcano.sh/apis with ./staging/src/volcano.sh/apis, a nested module that the proxy's module zip leaves
    # out; the proxy refuses volcano.sh/apis v1.14.1 and v1.15.x but serves v1.14.0, whose Go files, go.mod
    # and go.sum are byte for byte v1.14.1's staging folder (git tag v1.14.1). v1.15.1's staging folder
    # differs from v1.14.0 (its scheduler needs scheduling/v1beta1 QueueAllocationGateKey), so v1.15.1
    # cannot be built from the proxy. The CRDs are read from the module cache (volcano.py, module_dir).
    "volcano": Tool(
        "volcano.sh/volcano",
        VOLCANO_VERSION,
        tuple(f"volcano.sh/volcano/cmd/{name}" for name in ("controller-manager", "scheduler")),
        ("vc-controller-manager", "vc-scheduler"),
        ldflags=(f"-X volcano.sh/volcano/pkg/version.Version={VOLCANO_VERSION}",),
        copy_replaces=True,
        replaces=VOLCANO_APIS,
    ),
    # A manifest scanner; its findings on mpigen's own objects are fixed or listed in the README.
    "kube-score": Tool(
        "github.com/zegl/kube-score",
        "v1.20.0",
        ("github.com/zegl/kube-score/cmd/kube-score",),
        ("kube-score",),
        ldflags=("-X main.version=v1.20.0",),
    ),
    # Volcano's admission webhooks (jobs/validate, jobs/mutate), a tool of its own so that the controller
    # and scheduler need not be rebuilt for it.
    "volcano-webhook": Tool(
        "volcano.sh/volcano",
        VOLCANO_VERSION,
        ("volcano.sh/volcano/cmd/webhook-manager",),
        ("vc-webhook-manager",),
        ldflags=(f"-X volcano.sh/volcano/pkg/version.Version={VOLCANO_VERSION}",),
        copy_replaces=True,
        replaces=VOLCANO_APIS,
    ),
    # Argo CD's plugin server and the suite's driver of it (tests/argocd: README.md there). argocd-cmp-server
    # is Argo CD's own command (cmd/argocd-cmp-server/commands) in a main of ours, since Argo CD's one binary
    # (cmd/main.go) would build every component with it. Its go.mod (v3.4.0 to v3.5.0) replaces
    # github.com/argoproj/argo-cd/gitops-engine with ./gitops-engine, a nested module that the proxy's zip
    # leaves out, and the proxy serves that path at no version; the same code is published under its former
    # path, github.com/argoproj/gitops-engine, at the version those go.mods require. It builds with v3.4.0
    # only: v3.5.0's k8s.io/* v0.36.1 lacks k8s.io/api/autoscaling/v2beta1 (its pkg/health imports it), and
    # v3.4.5's util/kube calls a method its own folder gained after that version (ManageServerSideDiffDryRuns
    # on KubectlCmd). The plugin's side is v3.5.0's: `git diff v3.4.0 v3.5.0` changes only tests under
    # cmpserver/, cmd/argocd-cmp-server, util/cmp, util/app/discovery, util/exec and util/io/files.
    "argocd": Tool(
        "github.com/argoproj/argo-cd/v3",
        ARGOCD_VERSION,
        ("./cmpserver", "./driver"),
        ("argocd-cmp-server", "argocd-cmp-driver"),
        ldflags=(f"-X github.com/argoproj/argo-cd/v3/common.version={ARGOCD_VERSION.lstrip('v')}",),
        copy_replaces=True,
        renamed=(
            (
                ARGOCD_GITOPS_ENGINE,
                "github.com/argoproj/gitops-engine",
                "v0.7.1-0.20250908182407-97ad5b59a627",
            ),
        ),
        mains=Path(__file__).resolve().parents[1] / "argocd",
    ),
    # The program of the `mpioperator/kubectl-delivery` image (cmd/kubectl-delivery/Dockerfile, v0.2.3 and
    # later: `cp /bin/kubectl /opt/kube/kubectl; /bin/kubectl-delivery -alsologtostderr`), which the e2e
    # harness runs where a launcher's init container names no command of its own (tests/e2e/e2e_harness/
    # images.py). Its go.mod pins k8s.io/* to v0.15.10 by `replace`.
    "kubectl-delivery": Tool(
        "github.com/kubeflow/mpi-operator",
        "v0.3.0",
        ("github.com/kubeflow/mpi-operator/cmd/kubectl-delivery",),
        ("kubectl-delivery",),
        copy_replaces=True,
    ),
}


@dataclass(frozen=True)
class LocalTool:
    """A Go main package kept in this repository: its directory (go.mod, go.sum, *.go) and its binary."""

    source: Path
    binary: str
    shared: tuple[Path, ...] = ()  # files of another directory built into this package too


REPO = Path(__file__).resolve().parents[2]
ORACLES = REPO / "tests" / "oracles"
# What the operator oracles share (tests/oracles/harness): reading the job and printing the objects, and
# (v2beta1, v1) mpigen's objects as the API server stores them.
HARNESS, CANONICAL = ORACLES / "harness" / "harness.go", ORACLES / "harness" / "canonical.go"
LOCAL_TOOLS: dict[str, LocalTool] = {
    # How kubectl reads YAML: apimachinery's YAMLOrJSONDecoder over sigs.k8s.io/yaml and go-yaml v2, at the
    # versions Kubernetes v1.37.2 pins (its go.mod: apimachinery v0.37.2, sigs.k8s.io/yaml v1.6.0,
    # go.yaml.in/yaml/v2 v2.4.4).
    "goyaml": LocalTool(REPO / "tests" / "goyaml", "goyaml"),
    "trainer-oracle": LocalTool(REPO / "tests" / "oracles" / "trainer", "trainer-oracle"),
    # mpi-operator v0.8.2's controller (kubeflow.org/v2beta1) over fake clientsets.
    "v2beta1-oracle": LocalTool(ORACLES / "v2beta1", "v2beta1-oracle", (HARNESS, CANONICAL)),
    # The training-operator v1.9.3's MPIJob reconciler (kubeflow.org/v1) over fake clients.
    "v1-oracle": LocalTool(ORACLES / "v1", "v1-oracle", (HARNESS, CANONICAL)),
    # mpi-operator v0.3.0's v1alpha2 controller over fake clientsets (k8s.io/* v0.15.10, as its go.mod
    # pins them by `replace`).
    "v1alpha2-oracle": LocalTool(ORACLES / "v1alpha2", "v1alpha2-oracle", (HARNESS,)),
    # The API server's Pod Security evaluator (k8s.io/pod-security-admission/policy, at Kubernetes v1.37.2).
    "podsecurity": LocalTool(REPO / "tests" / "oracles" / "podsecurity", "podsecurity"),
    # kpt's own e2e runner (kpt v1.0.0-beta.49 pkg/test/runner), as kptdev/krm-functions-catalog runs its
    # examples with it: the catalog examples under examples/kpt.
    "kpt-e2e": LocalTool(REPO / "tests" / "kpte2e", "kpt-e2e"),
}

# Which tool builds which binary.
BINARIES = {binary: name for name, tool in TOOLS.items() for binary in tool.binaries}
BINARIES.update({tool.binary: name for name, tool in LOCAL_TOOLS.items()})


class Unavailable(Exception):
    """The tool cannot be built here (no `go`): the tests that need it skip with this reason."""


class BuildFailed(Exception):
    """`go` is there but the build failed: a test failure, with the end of the build log."""


def cache_root() -> Path:
    explicit = os.environ.get("MPIGEN_TEST_CACHE")
    if explicit:
        return Path(explicit) / "go"
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg) / "mpigen-tests" / "go"


def tool_dir(name: str) -> Path:
    if name in LOCAL_TOOLS:
        return cache_root() / f"{name}-{_source_hash(LOCAL_TOOLS[name])}"
    tool = TOOLS[name]
    mains = f"-{mains_hash(tool.mains)}" if tool.mains else ""
    return cache_root() / f"{name}-{tool.version}{mains}"


def _source_files(tool: LocalTool) -> list[Path]:
    own = [
        path for path in tool.source.iterdir() if path.suffix == ".go" or path.name in ("go.mod", "go.sum")
    ]
    return sorted([*own, *tool.shared])


@functools.cache
def _go_version() -> str:
    go = shutil.which("go")
    return (
        subprocess.run([go, "env", "GOVERSION"], capture_output=True, text=True, check=False).stdout
        if go
        else ""
    )


def _source_hash(tool: LocalTool) -> str:
    """Of the sources (their go.mod and go.sum pin every module) and the Go that builds them."""
    digest = hashlib.sha256(_go_version().encode())
    for path in _source_files(tool):
        digest.update(f"{path.name}\0{len(path.read_bytes())}\0".encode() + path.read_bytes())
    return digest.hexdigest()[:16]


def _main_files(mains: Path) -> list[Path]:
    return sorted(path for path in mains.glob("*/*.go"))


def mains_hash(mains: Path) -> str:
    """Of a tool's own main packages (their paths and sources) and the Go that builds them."""
    digest = hashlib.sha256(_go_version().encode())
    for path in _main_files(mains):
        data = path.read_bytes()
        digest.update(f"{path.relative_to(mains)}\0{len(data)}\0".encode() + data)
    return digest.hexdigest()[:16]


def _built(name: str) -> bool:
    directory = tool_dir(name)
    binaries = (LOCAL_TOOLS[name].binary,) if name in LOCAL_TOOLS else TOOLS[name].binaries
    return (directory / "done").is_file() and all(
        (directory / "bin" / binary).is_file() for binary in binaries
    )


def binary(binary_name: str) -> Path:
    """The path of one built binary (kube-apiserver, etcd, kustomize, ...), building its tool if needed."""
    name = BINARIES[binary_name]
    return ensure(name) / binary_name


def ensure(name: str) -> Path:
    """The bin directory of tool `name`, built now if the cache lacks it (recorded for the session's
    summary: built, reused or unavailable)."""
    directory = tool_dir(name)
    if _built(name):
        progress.record("go", name, "reused", log=directory)
        return directory / "bin"
    go = shutil.which("go")
    if go is None:
        what = LOCAL_TOOLS[name].source if name in LOCAL_TOOLS else TOOLS[name].module
        progress.record("go", name, "unavailable", note="`go` is not on PATH")
        raise Unavailable(f"cannot build {name} ({what}): `go` is not on PATH")
    directory.parent.mkdir(parents=True, exist_ok=True)
    with progress.locked(directory.parent / f".{name}.lock", f"[go] building {name}"):
        if _built(name):  # built meanwhile by the process that held the lock
            progress.record("go", name, "reused", log=directory)
        else:
            started = time.monotonic()
            try:
                (_build_local if name in LOCAL_TOOLS else _build)(go, name, directory)
            except BuildFailed:
                progress.record("go", name, "failed", time.monotonic() - started, directory / "build.log")
                raise
            progress.record("go", name, "built", time.monotonic() - started, directory / "build.log")
    return directory / "bin"


def _go_env(tool: Tool | None) -> dict[str, str]:
    env = {**os.environ, **(tool.env if tool else {})}
    env["GOFLAGS"] = "-trimpath -buildvcs=false -mod=mod"
    env["CGO_ENABLED"] = "1" if tool and tool.cgo else "0"
    env["GOTOOLCHAIN"] = "local"  # build with the installed Go; never fetch a toolchain
    env.setdefault("GOPROXY", "https://proxy.golang.org")
    env.pop("GOBIN", None)
    return env


def _run(argv: list[str], cwd: Path, env: dict[str, str], log: Path, what: str) -> None:
    """Run one build step, its output into `log`, saying every progress.EVERY seconds how far it got (the
    lines `go get` and `go build -v` wrote: modules fetched, packages compiled)."""
    try:
        progress.run(argv, what=what, log=log, timeout=BUILD_TIMEOUT, cwd=cwd, env=env)
    except progress.StepFailed as failed:
        raise BuildFailed(f"{failed} (in {cwd})") from None


def _copied_replacements(name: str) -> list[str]:
    """The module's own `replace` directives that name a published version (`a [v] => b v`), in a block or
    on one line: `go` ignores a dependency's replaces, so without them the wrapper resolves other versions."""
    gomod = (module_dir(name) / "go.mod").read_text()
    body = "\n".join(re.findall(r"^replace\s*\((.*?)^\)", gomod, flags=re.MULTILINE | re.DOTALL))
    body += "\n" + "\n".join(re.findall(r"^replace\s+([^(\s].*)$", gomod, flags=re.MULTILINE))
    lines = [
        f"\t{line.strip()}"
        for line in body.splitlines()
        if re.fullmatch(r"\s*\S+(\s+v\S+)?\s+=>\s+\S+\s+v\S+\s*", line)
    ]
    if not lines:
        raise BuildFailed(f"no versioned replace directives found in {TOOLS[name].module}'s go.mod")
    return lines


def _extra_replacements(name: str) -> list[str]:
    """The tool's own `replaces`, a `./path` target resolved to that folder of its downloaded module. The
    module proxy's zip of a module leaves out every folder that holds a go.mod of its own (a nested module),
    so such a folder can be missing: say so rather than let `go` report a missing go.mod."""
    lines = []
    for directive in TOOLS[name].replaces:
        source, _, target = (part.strip() for part in directive.partition("=>"))
        if target.startswith("./"):
            folder = module_dir(name) / target
            if not (folder / "go.mod").is_file():
                tool = TOOLS[name]
                raise BuildFailed(
                    f"{tool.module}@{tool.version} has no {target}/go.mod for `replace {directive}`: "
                    "the module proxy's zip leaves out folders that are modules of their own"
                )
            target = str(folder.resolve())
        lines.append(f"\t{source} => {target}")
    return lines


def _staging_replacements(go: str, tool: Tool, env: dict[str, str], cwd: Path) -> list[str]:
    """`replace` lines mapping each staging module of k8s.io/kubernetes (required there at v0.0.0 and
    replaced by ./staging/src/...) to its published version: Kubernetes v1.N.P is staging v0.N.P."""
    done = subprocess.run(
        [go, "mod", "download", "-json", f"{tool.module}@{tool.version}"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT,
        check=False,
    )
    if done.returncode != 0:
        raise BuildFailed(f"go mod download {tool.module}@{tool.version} failed: {done.stdout}{done.stderr}")
    gomod = Path(json.loads(done.stdout)["GoMod"]).read_text()
    staging = re.findall(r"^\s*(\S+)\s+=>\s+\./staging/src/\S+\s*$", gomod, flags=re.MULTILINE)
    if not staging:
        raise BuildFailed(f"no staging replacements found in {tool.module}@{tool.version}'s go.mod")
    published = "v0." + tool.version.lstrip("v").split(".", 1)[1]
    return [f"\t{module} => {module} {published}" for module in staging]


def _build(go: str, name: str, directory: Path) -> None:
    tool = TOOLS[name]
    env = _go_env(tool)
    shutil.rmtree(directory, ignore_errors=True)
    src = directory / "src"
    src.mkdir(parents=True)
    log = directory / "build.log"
    started = time.monotonic()
    lines = [f"module mpigen.test/build/{name}", "", "go 1.22", ""]
    if tool.kubernetes_staging:
        lines += ["replace (", *_staging_replacements(go, tool, env, src), ")", ""]
    if tool.copy_replaces:
        lines += ["replace (", *_copied_replacements(name), ")", ""]
    if tool.replaces:
        lines += ["replace (", *_extra_replacements(name), ")", ""]
    if tool.renamed:
        renamed = [
            renamed_copy(path, former, version, directory / "renamed", tool)
            for path, former, version in tool.renamed
        ]
        lines += [
            "replace (",
            *(f"\t{path} => {copy}" for (path, _, _), copy in zip(tool.renamed, renamed, strict=True)),
            ")",
            "",
        ]
    (src / "go.mod").write_text("\n".join(lines))
    for path in _main_files(tool.mains) if tool.mains else []:
        target = src / path.relative_to(tool.mains)
        target.parent.mkdir(exist_ok=True)
        shutil.copyfile(path, target)
    what = f"[go] building {name} {tool.version}"
    progress.say.info("%s from the Go module proxy (a cold build takes minutes; log: %s)", what, log)
    fetched = [package for package in tool.packages if not package.startswith("./")] or [tool.module]
    _run([go, "get", *(f"{package}@{tool.version}" for package in fetched)], src, env, log, what)
    staging_bin = directory / "bin.partial"
    staging_bin.mkdir()
    argv = [
        go,
        "build",
        "-v",
        "-p",
        "2",
        "-ldflags",
        " ".join(["-s", "-w", *tool.ldflags]),
        "-o",
        str(staging_bin) + "/",
    ]
    _run([*argv, *tool.packages], src, env, log, what)
    if len(tool.packages) > 1:
        for package, binary_name in zip(tool.packages, tool.binaries, strict=True):
            made = staging_bin / package.rsplit("/", 1)[-1]  # named after the package's last element
            if made.name != binary_name:
                made.rename(staging_bin / binary_name)  # .../cmd/scheduler -> vc-scheduler
    if len(tool.packages) == 1 and tool.binaries[0] not in os.listdir(staging_bin):
        # a module-root main package is named after the last element of its path (kpt, .../v3 -> v3)
        (built,) = os.listdir(staging_bin)
        (staging_bin / built).rename(staging_bin / tool.binaries[0])
    staging_bin.rename(directory / "bin")
    seconds = time.monotonic() - started
    (directory / "done").write_text(f"{tool.module}@{tool.version} built in {seconds:.0f} s\n")
    progress.say.info("%s: done in %.0f s", what, seconds)


def renamed_copy(path: str, former: str, version: str, into: Path, tool: Tool) -> Path:
    """A copy of module `former@version` (from the proxy) as module `path`: its go.mod's module line and
    every import of its own packages in its Go files renamed, so that its internal packages stay its own.
    For a module that moved: the code of the old path stands in for the new path's, which the proxy lacks."""
    source = download(former, version, tool)
    target = into / path.replace("/", "_")
    shutil.rmtree(target, ignore_errors=True)
    pattern = re.compile(rb'(?<=["\s])' + re.escape(former.encode()) + rb'(?=[/"\s]|$)', flags=re.MULTILINE)
    for root, _, files in os.walk(source):
        folder = target / Path(root).relative_to(source)
        folder.mkdir(parents=True, exist_ok=True)
        for file in files:
            data = (Path(root) / file).read_bytes()
            if file.endswith(".go") or file == "go.mod":
                data = pattern.sub(path.encode(), data)
            (folder / file).write_bytes(data)
    return target


def module_dir(name: str) -> Path:
    """The source of tool `name`'s pinned module in the Go module cache (`go mod download`: from the module
    proxy, checked against go.sum's database; instant once there), for the files a test reads from it,
    such as the JobSet and Kueue CRDs and webhook configurations."""
    tool = TOOLS[name]
    return download(tool.module, tool.version, tool)


def download(module: str, version: str, tool: Tool | None = None) -> Path:
    """`module@version` in the Go module cache (`go mod download`, with `tool`'s environment)."""
    go = shutil.which("go")
    if go is None:
        raise Unavailable(f"cannot read {module}: `go` is not on PATH")
    cache_root().mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [go, "mod", "download", "-json", f"{module}@{version}"],
        cwd=cache_root(),
        env=_go_env(tool),
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT,
        check=False,
    )
    if done.returncode != 0:
        raise BuildFailed(f"go mod download {module}@{version} failed: {done.stdout}{done.stderr}")
    return Path(json.loads(done.stdout)["Dir"])


def require_module(name: str) -> Path:
    """For fixtures: module_dir, skipping where `go` is missing and failing where the download fails."""
    import pytest

    try:
        return module_dir(name)
    except Unavailable as why:
        pytest.skip(str(why))
    except BuildFailed as why:
        pytest.fail(str(why), pytrace=False)


def _build_local(go: str, name: str, directory: Path) -> None:
    """Build a LocalTool from a copy of its sources, with the module versions its go.sum pins."""
    tool = LOCAL_TOOLS[name]
    env = _go_env(None)
    env["GOFLAGS"] = "-trimpath -buildvcs=false -mod=readonly"
    shutil.rmtree(directory, ignore_errors=True)
    src = directory / "src"
    src.mkdir(parents=True)
    for path in _source_files(tool):
        shutil.copy2(path, src / path.name)
    log = directory / "build.log"
    started = time.monotonic()
    what = f"[go] building {name} ({tool.source.relative_to(REPO)})"
    progress.say.info("%s (a cold build takes minutes; log: %s)", what, log)
    _run([go, "mod", "download"], src, env, log, what)
    staging_bin = directory / "bin.partial"
    staging_bin.mkdir()
    _run(
        [go, "build", "-v", "-p", "2", "-ldflags", "-s -w", "-o", str(staging_bin / tool.binary), "."],
        src,
        env,
        log,
        what,
    )
    staging_bin.rename(directory / "bin")
    seconds = time.monotonic() - started
    (directory / "done").write_text(f"{tool.source.relative_to(REPO)} built in {seconds:.0f} s\n")
    progress.say.info("%s: done in %.0f s", what, seconds)


def require(binary_name: str) -> str:
    """For tests and fixtures: the built binary's path; skip when `go` is missing, fail when the build fails."""
    import pytest

    try:
        return str(binary(binary_name))
    except Unavailable as why:
        pytest.skip(str(why))
    except BuildFailed as why:
        pytest.fail(str(why), pytrace=False)


def main(argv: list[str]) -> int:
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    names = argv or [*TOOLS, *LOCAL_TOOLS]
    for name in names:
        started = time.monotonic()
        was_built = _built(name)
        path = ensure(name)
        version = TOOLS[name].version if name in TOOLS else path.parent.name.rpartition("-")[2]
        print(
            f"{name} {version}: {path} ({'cached' if was_built else 'built'}, {time.monotonic() - started:.1f} s)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
