"""The KRM function as a container image (tools/image.py): what the image holds, that it answers as the
in-process function does, that kpt and kustomize run it by name, that it runs locked down, that its two
layers are the Debian base and mpigen's venv, and that two builds of each give the same digest.
Fixtures: conftest.py here."""

from __future__ import annotations

import filecmp
import gzip
import io
import json
import re
import shutil
import subprocess
import tarfile
from pathlib import Path
from typing import Any

import gotools
import pytest
import yaml
from images import (
    ROOT,
    Base,
    Built,
    Podman,
    build_base_into,
    builder,
    cached_base,
    cached_build,
    say_past_capture,
)
from mpijobs import job

import mpigen
from mpigen.shells.krm import run_function
from tools import function_executable

EXAMPLES = sorted(ROOT.glob("examples/v*/*.yaml"))
BROKEN = job("v2beta1", "broken", workers=0)  # invalid: no worker to run ranks on
BROKEN_MESSAGE = "spec.mpiReplicaSpecs.Worker.replicas: must be >= 1"
# Names that would mean a compiler or a toolchain came along.
COMPILERS = re.compile(r"(^|-)(gcc|g\+\+|cc|c\+\+|cpp|clang|clang\+\+|ld|as|make)(-[0-9.]+)?$")


def blob(layout: Path, digest: str) -> bytes:
    algorithm, value = digest.split(":")
    return (layout / "blobs" / algorithm / value).read_bytes()


def manifest(built: Built) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(blob(built.layout, built.digest))
    return data


def config(built: Built) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(blob(built.layout, manifest(built)["config"]["digest"]))
    return data


def layer_tars(layout: Path, image: str) -> list[tarfile.TarFile]:
    """Each layer of the image (by its manifest digest), lowest first, read from memory."""
    return [
        tarfile.open(fileobj=io.BytesIO(gzip.decompress(blob(layout, layer["digest"]))))
        for layer in json.loads(blob(layout, image))["layers"]
    ]


def layers(layout: Path, image: str) -> list[dict[str, tarfile.TarInfo]]:
    """Each layer of the image, lowest first: its members by name."""
    return [
        {member.name.removeprefix("./"): member for member in tar.getmembers()}
        for tar in layer_tars(layout, image)
    ]


def read(tar: tarfile.TarFile, name: str) -> str:
    member = tar.extractfile(f"./{name}")
    assert member is not None
    return member.read().decode()


def layer_members(built: Built) -> dict[str, tarfile.TarInfo]:
    """The image's file system: its layers one on another (a layer's entry replaces a lower one's; none
    removes any: a whiteout would fail here)."""
    members: dict[str, tarfile.TarInfo] = {}
    for layer in layers(built.layout, built.digest):
        assert not [name for name in layer if name.rsplit("/", 1)[-1].startswith(".wh.")]
        members.update(layer)
    return members


def layer_file(built: Built, name: str) -> bytes:
    """A file of the image's file system, from the topmost layer that holds it."""
    for layer in reversed(manifest(built)["layers"]):
        with tarfile.open(fileobj=io.BytesIO(gzip.decompress(blob(built.layout, layer["digest"])))) as tar:
            try:
                member = tar.extractfile(f"./{name}")
            except KeyError:
                continue
            assert member is not None
            return member.read()
    raise AssertionError(f"{name} is in no layer")


def pyc(source: str) -> str:
    head, tail = source.rsplit("/", 1)
    return f"{head}/__pycache__/{tail.removesuffix('.py')}.cpython-311.pyc"


def resource_list(*documents: dict[str, Any], path: str = "jobs/job.yaml") -> bytes:
    items = []
    for index, document in enumerate(documents):
        item = json.loads(json.dumps(document))
        item.setdefault("metadata", {}).setdefault("annotations", {}).update(
            {"config.kubernetes.io/path": path, "config.kubernetes.io/index": str(index)}
        )
        items.append(item)
    return yaml.safe_dump(
        {"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": items}, sort_keys=False
    ).encode()


def in_process(data: bytes) -> tuple[int, bytes, str]:
    stdout, stderr = io.BytesIO(), io.StringIO()
    code = run_function(io.BytesIO(data), stdout, stderr)
    return code, stdout.getvalue(), stderr.getvalue()


def in_image(podman: Podman, data: bytes, *options: str) -> tuple[int, bytes, str]:
    done = podman.run(*options, stdin=data)
    return done.returncode, done.stdout, done.stderr.decode()


# What the image is ----------------------------------------------------------------------------------


def test_the_image_runs_mpigen_krm_as_a_non_root_user_with_its_labels(built_image: Built) -> None:
    index = json.loads((built_image.layout / "index.json").read_text())
    (entry,) = index["manifests"]
    assert (
        entry["annotations"]["org.opencontainers.image.ref.name"] == f"localhost/mpigen:{mpigen.__version__}"
    )
    image = config(built_image)
    assert image["architecture"] == "amd64" and image["os"] == "linux"
    run = image["config"]
    assert run["Entrypoint"] == ["/opt/mpigen/bin/mpigen", "krm"]
    assert "Cmd" not in run or not run["Cmd"]
    assert run["User"] == "65532:65532"
    labels = run["Labels"]
    assert labels["org.opencontainers.image.version"] == mpigen.__version__
    assert labels["org.opencontainers.image.licenses"] == "Apache-2.0"
    assert labels["org.opencontainers.image.source"].startswith("https://")
    assert labels["org.opencontainers.image.created"] == image["created"] == "1970-01-01T00:00:00Z"
    assert all(entry["created"] == image["created"] for entry in image["history"])


def test_the_image_holds_no_docs_no_compilers_no_pip_and_only_the_strict_schemas(built_image: Built) -> None:
    members = layer_members(built_image)
    files = [name for name, member in members.items() if not member.isdir()]
    # Only copyright files among the documentation (a few symbolic links stay: a package's doc directory
    # pointing at another's, where its copyright is, and links dpkg kept to excluded files).
    regular = [name for name, member in members.items() if member.isfile()]
    docs = [name for name in regular if name.startswith("usr/share/doc/") and not name.endswith("/copyright")]
    assert docs == []
    assert any(name.startswith("usr/share/doc/") for name in regular)
    assert [
        name for name in files if name.startswith(("usr/share/man/", "usr/share/info/", "usr/share/locale/"))
    ] == []
    programs = [name for name in files if Path(name).parent.name in ("bin", "sbin")]
    assert len(programs) > 50
    assert [name for name in programs if COMPILERS.search(name.rsplit("/", 1)[-1])] == []
    # Only perl-base (Essential): the usrmerge package would bring perl and its modules along.
    assert not any(name.startswith("usr/share/perl/") for name in files)
    site = "opt/mpigen/lib/python3.11/site-packages/"
    assert not any(name.startswith((f"{site}pip/", f"{site}setuptools/")) for name in files)
    assert not any(name.startswith("tmp/") for name in files)
    # Every Python file is compiled ahead (the root file system may be read-only at run time).
    sources = [name for name in files if name.startswith(site) and name.endswith(".py")]
    missing = [name for name in sources if pyc(name) not in members]
    assert sources and missing == []
    # Of kubernetes-validate's schemas, exactly the strict ones its wheel shipped (RECORD lists them).
    schemas = f"{site}kubernetes_validate/kubernetes-json-schema/"
    (record,) = [
        name for name in files if re.fullmatch(rf"{site}kubernetes_validate-[^/]+\.dist-info/RECORD", name)
    ]
    shipped = {
        line.split(",")[0].split("/")[2]
        for line in layer_file(built_image, record).decode().splitlines()
        if line.startswith("kubernetes_validate/kubernetes-json-schema/")
    }
    kept = {name[len(schemas) :].split("/")[0] for name in files if name.startswith(schemas)}
    assert kept == {name for name in shipped if name.endswith("-local-strict")}
    assert len(kept) >= 2 and len(shipped) > len(kept)


def test_the_build_records_the_packages_it_put_in(built_image: Built) -> None:
    contents = (built_image.directory / "contents.txt").read_text()
    assert re.search(r"^python3 \S+$", contents, flags=re.MULTILINE)
    assert f"\nmpigen=={mpigen.__version__}\n" in contents
    pinned = (ROOT / "image" / "requirements.in").read_text()
    for name, version in re.findall(r"^([A-Za-z0-9_.-]+)==(\S+)$", pinned, flags=re.MULTILINE):
        assert re.search(
            rf"^{name.replace('-', '[-_.]')}=={re.escape(version)}$",
            contents,
            flags=re.MULTILINE | re.IGNORECASE,
        ), name


def test_the_image_is_the_debian_base_layer_and_a_layer_of_mpigen_and_its_user(
    built_image: Built, base_layer: Base
) -> None:
    """The lower layer is the base built on its own (whose reproducibility is checked below); the upper
    holds mpigen's venv and the user, nothing of Debian's."""
    (base_layer_digest,) = builder.layer_digests(base_layer.layout)
    digests = builder.layer_digests(built_image.layout)
    assert len(digests) == 2 and digests[0] == base_layer_digest
    lower, upper = layer_tars(built_image.layout, built_image.digest)
    base = {member.name.removeprefix("./") for member in lower.getmembers()}
    added = {member.name.removeprefix("./") for member in upper.getmembers()}
    assert [name for name in base if name.startswith("opt/mpigen")] == []
    assert "usr/bin/python3.11" in base and "usr/lib/python3.11/os.py" in base
    outside = [
        name
        for name in added
        if name not in ("opt", "opt/mpigen", "etc", "etc/passwd", "etc/group")
        and not name.startswith("opt/mpigen/")
    ]
    assert outside == []
    assert {"opt/mpigen/bin/mpigen", "opt/mpigen/lib/python3.11/site-packages/mpigen/__init__.py"} <= added
    # passwd and group are the base's with the user appended.
    user = "mpigen:x:65532:65532:mpigen:/nonexistent:/usr/sbin/nologin\n"
    for name, line in (("etc/passwd", user), ("etc/group", "mpigen:x:65532:\n")):
        assert "mpigen" not in read(lower, name)
        assert read(upper, name) == read(lower, name) + line


# It answers as the in-process function ---------------------------------------------------------------


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda path: str(path.relative_to(ROOT / "examples")))
def test_the_image_answers_an_example_as_the_in_process_function(podman: Podman, example: Path) -> None:
    documents = [doc for doc in yaml.safe_load_all(example.read_text()) if doc]
    data = resource_list(*documents, path=str(example.relative_to(ROOT)))
    expected = in_process(data)
    assert expected[0] == 0, expected[2]
    assert in_image(podman, data) == expected


def test_the_image_reports_an_invalid_job_as_the_in_process_function(podman: Podman) -> None:
    data = resource_list(BROKEN)
    code, stdout, stderr = in_image(podman, data)
    assert (code, stdout, stderr) == in_process(data)
    assert code == 1
    assert BROKEN_MESSAGE in stderr
    results = yaml.safe_load(stdout)["results"]
    assert {
        "message": "must be >= 1, got 0",
        "severity": "error",
        "field": {"path": "spec.mpiReplicaSpecs.Worker.replicas"},
    }.items() <= {**results[0], "field": results[0]["field"]}.items()


def test_the_image_refuses_what_is_not_a_resource_list_as_the_in_process_function(podman: Podman) -> None:
    data = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"
    code, stdout, stderr = in_image(podman, data)
    assert (code, stdout, stderr) == in_process(data)
    assert code == 1 and stdout == b"" and stderr


def test_the_image_runs_without_network_on_a_read_only_root_as_a_non_root_user(podman: Podman) -> None:
    data = resource_list(job("v2beta1", "locked"))
    locked = (
        "--network",
        "none",
        "--read-only",
        "--user",
        "65532:65532",
        "--cap-drop",
        "all",
        "--security-opt",
        "no-new-privileges",
    )
    assert in_image(podman, data, *locked) == in_process(data)
    # kpt and kustomize run functions as `nobody`.
    assert in_image(podman, data, "--network", "none", "--read-only", "--user", "nobody") == in_process(data)
    # Without --user the image's own user runs it: not root.
    who = podman("run", "--rm", "--network", "none", "--read-only", "--entrypoint", "id", podman.image)
    assert who.returncode == 0, who.stderr.decode()
    assert who.stdout.decode().startswith("uid=65532(mpigen) gid=65532(mpigen)")


def test_the_pruned_schemas_still_serve_every_kube_version_the_image_names(podman: Podman) -> None:
    script = (
        "from mpigen.checks.kube.versions import supported_kube_versions as v\n"
        "from mpigen.checks.kube.validator import validate_pod_template as check\n"
        "import kubernetes_validate.utils as kv\n"
        "obj = {'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'x'}}\n"
        "for version in v():\n"
        "    assert check({'spec': {'containers': [{'name': 'a', 'image': 'b'}]}}, version) == [], version\n"
        "    kv.validate(obj, version, strict=True)\n"
        "print(' '.join(v()))\n"
    )
    done = podman(
        "run",
        "--rm",
        "--network",
        "none",
        "--read-only",
        "--entrypoint",
        "/opt/mpigen/bin/python",
        podman.image,
        "-c",
        script,
    )
    assert done.returncode == 0, done.stderr.decode()
    versions = done.stdout.decode().split()
    assert versions[0] == "1.25" and len(versions) >= 13


# kpt and kustomize run it by name ---------------------------------------------------------------------

OTHER = "# kept as written\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other # a comment\ndata:\n  enabled: 'yes'\n"


def package(directory: Path) -> Path:
    directory.mkdir(parents=True)
    (directory / "train.yaml").write_text(yaml.safe_dump(job("v1alpha2", "train")))
    (directory / "pi.yaml").write_text(yaml.safe_dump(job("v2beta1", "pi")))
    (directory / "other.yaml").write_text(OTHER)
    return directory


def files(directory: Path) -> dict[str, str]:
    return {
        str(path.relative_to(directory)): path.read_text()
        for path in sorted(directory.rglob("*"))
        if path.is_file()
    }


def run(argv: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=600, check=False)


def test_kpt_fn_eval_image_writes_what_the_exec_function_writes(
    podman: Podman, tool_env: dict[str, str], tmp_path: Path
) -> None:
    kpt = gotools.require("kpt")
    by_image, by_exec = package(tmp_path / "image" / "jobs"), package(tmp_path / "exec" / "jobs")
    done = run([kpt, "fn", "eval", str(by_image), "--image", podman.image], tool_env, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    plain = run(
        [kpt, "fn", "eval", str(by_exec), "--exec", str(function_executable(tmp_path))], tool_env, tmp_path
    )
    assert plain.returncode == 0, plain.stdout + plain.stderr
    assert files(by_image) == files(by_exec)
    assert "kind: StatefulSet" in (by_image / "train.yaml").read_text()
    assert (by_image / "other.yaml").read_text() == OTHER


def test_kpt_fn_eval_image_reports_an_invalid_job_and_changes_nothing(
    podman: Podman, tool_env: dict[str, str], tmp_path: Path
) -> None:
    jobs = package(tmp_path / "jobs")
    (jobs / "broken.yaml").write_text(yaml.safe_dump(BROKEN))
    before = files(jobs)
    done = run([gotools.require("kpt"), "fn", "eval", str(jobs), "--image", podman.image], tool_env, tmp_path)
    assert done.returncode != 0
    assert BROKEN_MESSAGE in done.stdout + done.stderr
    assert files(jobs) == before


KPTFILE = """\
apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: jobs
  annotations:
    config.kubernetes.io/local-config: "true"
pipeline:
  mutators:
  - {function}
"""


def test_kpt_fn_render_runs_the_image_from_a_kptfile_pipeline_twice_without_a_change(
    podman: Podman, tool_env: dict[str, str], tmp_path: Path
) -> None:
    kpt = gotools.require("kpt")
    by_image, by_exec = package(tmp_path / "image" / "jobs"), package(tmp_path / "exec" / "jobs")
    (by_image / "Kptfile").write_text(KPTFILE.format(function=f"image: {podman.image}"))
    (by_exec / "Kptfile").write_text(KPTFILE.format(function=f"exec: {function_executable(tmp_path)}"))
    done = run([kpt, "fn", "render", str(by_image)], tool_env, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    plain = run([kpt, "fn", "render", "--allow-exec", str(by_exec)], tool_env, tmp_path)
    assert plain.returncode == 0, plain.stdout + plain.stderr
    rendered = files(by_image)
    assert {name: text for name, text in rendered.items() if name != "Kptfile"} == {
        name: text for name, text in files(by_exec).items() if name != "Kptfile"
    }
    assert "kind: Job" in rendered["pi.yaml"] and "kind: MPIJob" not in rendered["pi.yaml"]
    again = run([kpt, "fn", "render", str(by_image)], tool_env, tmp_path)
    assert again.returncode == 0, again.stdout + again.stderr
    assert files(by_image) == rendered


def test_kustomize_fn_run_image_writes_what_the_exec_function_writes(
    podman: Podman, tool_env: dict[str, str], tmp_path: Path
) -> None:
    kustomize = gotools.require("kustomize")
    by_image, by_exec = package(tmp_path / "image" / "jobs"), package(tmp_path / "exec" / "jobs")
    done = run([kustomize, "fn", "run", str(by_image), "--image", podman.image], tool_env, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    plain = run(
        [
            kustomize,
            "fn",
            "run",
            str(by_exec),
            "--enable-exec",
            "--exec-path",
            str(function_executable(tmp_path)),
        ],
        tool_env,
        tmp_path,
    )
    assert plain.returncode == 0, plain.stdout + plain.stderr
    assert files(by_image) == files(by_exec)
    assert "kind: StatefulSet" in (by_image / "train.yaml").read_text()


def test_a_kustomization_runs_the_image_as_a_containerised_transformer(
    podman: Podman, tool_env: dict[str, str], tmp_path: Path
) -> None:
    kustomize = gotools.require("kustomize")
    example = ROOT / "examples" / "kustomize" / "function"
    by_image, by_exec = tmp_path / "image", tmp_path / "exec"
    shutil.copytree(example, by_image)
    shutil.copytree(example, by_exec)
    function = (by_image / "mpigen.yaml").read_text()
    assert "exec:\n        path: mpigen" in function
    (by_image / "mpigen.yaml").write_text(
        function.replace("exec:\n        path: mpigen", f"container:\n        image: {podman.image}")
    )
    (by_exec / "mpigen.yaml").write_text(
        function.replace("path: mpigen", f"path: {function_executable(tmp_path)}")
    )
    done = run([kustomize, "build", "--enable-alpha-plugins", str(by_image)], tool_env, tmp_path)
    assert done.returncode == 0, done.stderr
    plain = run(
        [kustomize, "build", "--enable-alpha-plugins", "--enable-exec", str(by_exec)], tool_env, tmp_path
    )
    assert plain.returncode == 0, plain.stderr
    assert done.stdout == plain.stdout
    assert "kind: StatefulSet" in done.stdout and "kind: MPIJob" not in done.stdout


# Reproducible ----------------------------------------------------------------------------------------


def test_two_builds_give_the_same_digest(
    built_image: Built, base_layer: Base, request: pytest.FixtureRequest
) -> None:
    """A second, independent build of the same inputs on the same base layer (cached beside the first, so
    only a run after a change builds twice): mpigen's wheel, the venv in a fresh chroot, the mpigen layer,
    the image (with the same pinned wheels and build tools, fetched by their hashes: cached_pinned). It
    gives the same digest and the same archive bytes."""
    again = cached_build(f"{built_image.directory.name}-again", base_layer, say_past_capture(request))
    assert again.directory != built_image.directory
    assert again.digest == built_image.digest
    assert again.archive.read_bytes() == built_image.archive.read_bytes()
    assert filecmp.cmp(again.layout / "index.json", built_image.layout / "index.json", shallow=False)
    assert (again.directory / "contents.txt").read_text() == (
        built_image.directory / "contents.txt"
    ).read_text()


def test_two_builds_of_the_debian_base_layer_give_the_same_digest(
    base_layer: Base, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """A second, independent build of the base layer (cached beside the first: built when the base's key
    changes, at most once a day) gives the same layer and the same image digest."""
    say = say_past_capture(request)
    again = cached_base(f"{base_layer.name}-again", say)
    reference = base_layer
    if (again.directory / builder.DEBIAN_CONTENTS).read_text() != (
        base_layer.directory / builder.DEBIAN_CONTENTS
    ).read_text():
        # Debian published updates between the two builds: compare two builds of today's packages.
        say("[image] Debian's packages changed between the two builds: building the base a third time")
        reference = build_base_into(tmp_path / "third", lambda text: say(f"[image] {text}"))
    assert again.directory != reference.directory
    assert builder.layer_digests(again.layout) == builder.layer_digests(reference.layout)
    assert again.digest == reference.digest
    assert filecmp.cmp(again.layout / "index.json", reference.layout / "index.json", shallow=False)
