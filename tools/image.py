"""Build mpigen's KRM function as an OCI container image, reproducibly, from Debian packages and PyPI wheels.

    python tools/image.py                  build into build/image/ (root, mmdebstrap and umoci needed)
    python tools/image.py --output DIR     build into DIR
    python tools/image.py --lock           rewrite image/*.txt (each wheel's sha256) from image/*.in
    python tools/image.py --key            print the hash of the build's inputs

What it makes, in `build/image/`: `oci/`, an OCI image layout holding one image, `localhost/mpigen:<version>`,
`mpigen-<version>.oci.tar`, the same layout as one archive (`podman load -i`, `docker load -i`), and
`contents.txt`, every Debian and Python package inside with its version.

How: the root file system is Debian bookworm's Essential packages and `python3` (`mmdebstrap
--variant=essential`, /usr merged by its hook), without documentation, manual pages or translations (each package's copyright is
kept). A virtualenv in /opt/mpigen gets mpigen's wheel, built from this checkout with the pinned
setuptools, and its dependencies' wheels from PyPI, each at the version and sha256 of image/requirements.txt;
pip is run from its own wheel and is not left in the image, nor is any compiler. Of kubernetes-validate's
schemas only the `-local-strict` ones stay: those are all mpigen reads (mpigen.checks.kube.schemas), for every
Kubernetes version `--kube-version` accepts. Python files are compiled ahead (unchecked-hash .pyc files:
the image's file system can be mounted read-only). The image runs `mpigen krm` as user 65532 and carries
the OCI labels source, version (mpigen's), licenses, title and description. `umoci` packs it.

Reproducible: with the same inputs (the files `key()` hashes: this script, image/, and the checkout's files
that make mpigen's wheel; the Debian packages the mirror serves that day; SOURCE_DATE_EPOCH, 0 unless set)
two builds give the same bytes, so the same digest. Every time stamp is SOURCE_DATE_EPOCH and the build
runs in a clean environment. Debian is pinned to a release, not to package versions: the mirror serves
only the newest of each, so a security update changes the image (contents.txt says what went in).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
IMAGE = ROOT / "image"
DEFAULT_OUTPUT = ROOT / "build" / "image"

SUITE = "bookworm"
MIRRORS = (
    f"deb http://deb.debian.org/debian {SUITE} main",
    f"deb http://deb.debian.org/debian {SUITE}-updates main",
    f"deb http://deb.debian.org/debian-security {SUITE}-security main",
)
ARCHITECTURE = "amd64"
# The wheels that fit bookworm's python3 (CPython 3.11) on x86_64 with glibc 2.36.
WHEEL_TARGET = (
    "--only-binary",
    ":all:",
    "--implementation",
    "cp",
    "--python-version",
    "3.11",
    "--abi",
    "cp311",
    "--abi",
    "abi3",
    "--abi",
    "none",
    *(
        arg
        for tag in (
            "manylinux_2_36_x86_64",
            "manylinux_2_28_x86_64",
            "manylinux_2_17_x86_64",
            "manylinux2014_x86_64",
            "linux_x86_64",
            "any",
        )
        for arg in ("--platform", tag)
    ),
)
# dpkg leaves these out of every package it unpacks (the copyright files stay: licences travel with code).
DPKG_EXCLUDES = (
    "path-exclude=/usr/share/doc/*",
    "path-include=/usr/share/doc/*/copyright",
    "path-exclude=/usr/share/man/*",
    "path-exclude=/usr/share/info/*",
    "path-exclude=/usr/share/locale/*",
    "path-exclude=/usr/share/lintian/*",
)

MERGED_USR_HOOKS = "/usr/share/mmdebstrap/hooks/merged-usr"

VENV = "/opt/mpigen"
SITE_PACKAGES = f"{VENV}/lib/python3.11/site-packages"
SCHEMAS = f"{SITE_PACKAGES}/kubernetes_validate/kubernetes-json-schema"
KEPT_SCHEMAS = re.compile(r"v\d+\.\d+\.\d+-local-strict")  # what mpigen.checks.kube.schemas reads
USER = (65532, "mpigen")
ENV = (
    f"PATH={VENV}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "LANG=C.UTF-8",
    "PYTHONDONTWRITEBYTECODE=1",
)
ENTRYPOINT = (f"{VENV}/bin/mpigen", "krm")
IMAGE_NAME = "localhost/mpigen"  # the name `podman load` and `docker load` give it, tagged with the version
SOURCE = "https://github.com/OWNER/mpigen"
LICENSE = "Apache-2.0"
DESCRIPTION = "mpigen's KRM function: compiles Kubeflow MPIJobs into plain Kubernetes manifests"

# The checkout's files that make mpigen's wheel (pyproject.toml: packages, package-dir, readme, license).
WHEEL_SOURCES = ("mpigen", "schemas", "templates", "pyproject.toml", "README.md", "LICENSE")
CLEAN_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

Say = Callable[[str], None]


class BuildError(Exception):
    """A step failed or a tool is missing: one line for the user (the step's output tail follows)."""


def version() -> str:
    """mpigen's version, as `mpigen version` prints it (mpigen/__init__.py)."""
    text = (ROOT / "mpigen" / "__init__.py").read_text()
    match = re.search(r'^__version__ = "([^"]+)"$', text, flags=re.MULTILINE)
    if match is None:
        raise BuildError("mpigen/__init__.py: no __version__ line")
    return match[1]


def source_files() -> list[str]:
    """The checkout's files that go into mpigen's wheel: tracked or new, not ignored (no caches)."""
    done = subprocess.run(
        [
            "git",
            "-C",
            str(ROOT),
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
            "--",
            *WHEEL_SOURCES,
        ],
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        raise BuildError(
            f"git ls-files failed in {ROOT} (a git checkout is needed): {done.stderr.decode().strip()}"
        )
    names = {name for name in done.stdout.decode().split("\0") if name}
    return sorted(name for name in names if (ROOT / name).is_file())


def input_files() -> list[str]:
    """Every file whose bytes decide the image: the wheel's sources, image/ and this script."""
    own = [str(path.relative_to(ROOT)) for path in sorted(IMAGE.iterdir()) if path.is_file()]
    return sorted({*source_files(), *own, str(Path(__file__).resolve().relative_to(ROOT))})


def source_date_epoch() -> int:
    text = os.environ.get("SOURCE_DATE_EPOCH", "0")
    if not text.isdigit():
        raise BuildError(f"SOURCE_DATE_EPOCH must be a number of seconds, got {text!r}")
    return int(text)


def key(epoch: int | None = None) -> str:
    """The hash of the build's inputs: each input file's path and bytes, and SOURCE_DATE_EPOCH."""
    digest = hashlib.sha256(f"SOURCE_DATE_EPOCH={source_date_epoch() if epoch is None else epoch}\n".encode())
    for name in input_files():
        digest.update(f"{name}\0{hashlib.sha256((ROOT / name).read_bytes()).hexdigest()}\n".encode())
    return digest.hexdigest()[:32]


def _run(argv: Sequence[str], env: dict[str, str], log: Path, what: str) -> str:
    with log.open("a") as out:
        out.write(f"$ {' '.join(argv)}\n")
    done = subprocess.run(list(argv), env=env, capture_output=True, text=True, check=False)
    with log.open("a") as out:
        out.write(done.stdout + done.stderr)
    if done.returncode != 0:
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-25:])
        raise BuildError(f"{what} failed (exit {done.returncode}): {' '.join(argv)}\n{tail}")
    return done.stdout


def _clean_env(epoch: int, **extra: str) -> dict[str, str]:
    """Nothing of the caller's environment but the proxies, so two machines build alike."""
    env = {
        "PATH": CLEAN_PATH,
        "LC_ALL": "C.UTF-8",
        "TZ": "UTC",
        "SOURCE_DATE_EPOCH": str(epoch),
        "HOME": "/root",
    }
    env.update({name: value for name, value in os.environ.items() if name.lower().endswith("_proxy")})
    env.update(extra)
    return env


def _wheels(work: Path, epoch: int, log: Path, say: Say) -> Path:
    """mpigen's wheel from the checkout and the pinned wheels from PyPI, hashes checked, in work/wheels."""
    wheels = work / "wheels"
    tools = work / "tools"
    env = _clean_env(
        epoch,
        HOME=str(work),
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        PIP_NO_INPUT="1",
        PIP_CACHE_DIR=str(Path.home() / ".cache" / "pip"),
    )
    say("fetching the pinned build tools (setuptools, pip) from PyPI")
    pip = [sys.executable, "-m", "pip"]
    _run(
        [
            *pip,
            "download",
            "--no-deps",
            "--require-hashes",
            "--only-binary",
            ":all:",
            "-d",
            str(tools),
            "-r",
            str(IMAGE / "build-requirements.txt"),
        ],
        env,
        log,
        "downloading the build tools",
    )
    builder = work / "builder"
    _run([sys.executable, "-m", "venv", "--without-pip", str(builder)], env, log, "making the build venv")
    (pip_wheel,) = tools.glob("pip-*.whl")
    bpip = [str(builder / "bin" / "python"), str(pip_wheel / "pip")]
    _run(
        [
            *bpip,
            "install",
            "--no-index",
            "--no-deps",
            "--find-links",
            str(tools),
            "--require-hashes",
            "-r",
            str(IMAGE / "build-requirements.txt"),
        ],
        env,
        log,
        "installing the build tools",
    )
    say(f"building mpigen's wheel from {len(source_files())} files of the checkout")
    src = work / "src"
    for name in source_files():
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, src / name)
    _run(
        [*bpip, "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-w", str(wheels), str(src)],
        env,
        log,
        "building mpigen's wheel",
    )
    say("fetching the pinned dependencies' wheels from PyPI")
    _run(
        [
            *bpip,
            "download",
            "--no-deps",
            "--require-hashes",
            *WHEEL_TARGET,
            "-d",
            str(wheels),
            "-r",
            str(IMAGE / "requirements.txt"),
        ],
        env,
        log,
        "downloading the dependencies",
    )
    shutil.copy2(pip_wheel, wheels / pip_wheel.name)
    shutil.copy2(IMAGE / "requirements.txt", wheels / "requirements.txt")
    return wheels


def customize(rootfs: Path, wheels: Path, contents: Path) -> None:
    """mmdebstrap's customize hook: mpigen's venv, the pruned schemas, compiled Python, the user."""
    env = {"PATH": CLEAN_PATH, "LC_ALL": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1", "HOME": "/nonexistent"}

    def chroot(*argv: str) -> str:
        done = subprocess.run(
            ["chroot", str(rootfs), *argv], env=env, capture_output=True, text=True, check=False
        )
        sys.stdout.write(done.stdout + done.stderr)
        if done.returncode != 0:
            raise SystemExit(f"customize: {' '.join(argv)} failed (exit {done.returncode})")
        return done.stdout

    inside = Path("/tmp/mpigen-wheels")
    shutil.copytree(wheels, rootfs / inside.relative_to("/"))
    chroot("/usr/bin/python3", "-m", "venv", "--without-pip", VENV)
    (pip_wheel,) = (rootfs / inside.relative_to("/")).glob("pip-*.whl")
    pip = (f"{VENV}/bin/python", str(inside / pip_wheel.name / "pip"))
    quiet = ("--no-index", "--no-deps", "--no-compile", "--no-cache-dir", "--disable-pip-version-check")
    chroot(
        *pip,
        "install",
        *quiet,
        "--find-links",
        str(inside),
        "--require-hashes",
        "-r",
        str(inside / "requirements.txt"),
    )
    (mpigen_wheel,) = (rootfs / inside.relative_to("/")).glob("mpigen-*.whl")
    chroot(*pip, "install", *quiet, str(inside / mpigen_wheel.name))
    chroot(*pip, "check", "--disable-pip-version-check")
    python_packages = chroot(*pip, "list", "--format=freeze", "--disable-pip-version-check")
    shutil.rmtree(rootfs / inside.relative_to("/"))
    schemas = rootfs / SCHEMAS.lstrip("/")
    for entry in sorted(schemas.iterdir()):
        if not KEPT_SCHEMAS.fullmatch(entry.name):
            shutil.rmtree(entry)
    (rootfs / "usr/share/info/dir").unlink(missing_ok=True)  # the index of the info pages left out
    chroot(
        f"{VENV}/bin/python", "-m", "compileall", "-q", "--invalidation-mode", "unchecked-hash", SITE_PACKAGES
    )
    uid, name = USER
    with (rootfs / "etc/passwd").open("a") as passwd:
        passwd.write(f"{name}:x:{uid}:{uid}:{name}:/nonexistent:/usr/sbin/nologin\n")
    with (rootfs / "etc/group").open("a") as group:
        group.write(f"{name}:x:{uid}:\n")
    chroot(f"{VENV}/bin/mpigen", "version")
    debian_packages = chroot("dpkg-query", "-W", "-f", "${Package} ${Version}\n")
    contents.write_text(
        f"# Debian {SUITE} packages\n{debian_packages}# Python packages in {VENV}\n{python_packages}"
    )


def _mmdebstrap(work: Path, wheels: Path, epoch: int, log: Path) -> tuple[Path, Path]:
    layer = work / "rootfs.tar"
    contents = work / "contents.txt"
    hook = f'{sys.executable} {Path(__file__).resolve()} --customize "$1" {wheels} {contents}'
    argv = [
        "mmdebstrap",
        "--variant=essential",
        "--include=python3",
        f"--architectures={ARCHITECTURE}",
        # merged /usr by the hook (usr-is-merged), not by the usrmerge package, which brings perl along
        f"--hook-dir={MERGED_USR_HOOKS}",
        *(f"--dpkgopt={option}" for option in DPKG_EXCLUDES),
        f"--customize-hook={hook}",
        SUITE,
        str(layer),
        *MIRRORS,
    ]
    _run(argv, _clean_env(epoch, TMPDIR=str(work)), log, "mmdebstrap")
    return layer, contents


def _umoci(layout: Path, tag: str, layer: Path, epoch: int, log: Path) -> None:
    created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))
    env = _clean_env(epoch)
    image = f"{layout}:{tag}"
    _run(["umoci", "init", "--layout", str(layout)], env, log, "umoci init")
    _run(["umoci", "new", "--image", image], env, log, "umoci new")
    _run(
        [
            "umoci",
            "raw",
            "add-layer",
            "--image",
            image,
            "--history.created",
            created,
            "--history.created_by",
            f"tools/image.py: Debian {SUITE} (essential, python3) and mpigen {tag}",
            str(layer),
        ],
        env,
        log,
        "umoci raw add-layer",
    )
    labels = {
        "org.opencontainers.image.source": SOURCE,
        "org.opencontainers.image.version": tag,
        "org.opencontainers.image.licenses": LICENSE,
        "org.opencontainers.image.title": "mpigen",
        "org.opencontainers.image.description": DESCRIPTION,
        "org.opencontainers.image.created": created,
    }
    argv = [
        "umoci",
        "config",
        "--image",
        image,
        "--no-history",
        "--created",
        created,
        "--architecture",
        ARCHITECTURE,
        "--os",
        "linux",
        "--config.user",
        f"{USER[0]}:{USER[0]}",
        "--config.workingdir",
        "/",
        *(arg for entry in ENTRYPOINT for arg in ("--config.entrypoint", entry)),
        *(arg for entry in ENV for arg in ("--config.env", entry)),
        *(arg for name, value in labels.items() for arg in ("--config.label", f"{name}={value}")),
        *(arg for name, value in labels.items() for arg in ("--manifest.annotation", f"{name}={value}")),
    ]
    _run(argv, env, log, "umoci config")
    _run(["umoci", "gc", "--layout", str(layout)], env, log, "umoci gc")
    # The reference a loader names the image by: podman reads ref.name, docker io.containerd.image.name;
    # umoci's ref.name is the bare tag, which podman would take for the image's name.
    index = json.loads((layout / "index.json").read_text())
    (manifest,) = index["manifests"]
    reference = f"{IMAGE_NAME}:{tag}"
    manifest["annotations"] = {
        "io.containerd.image.name": reference,
        "org.opencontainers.image.ref.name": reference,
    }
    (layout / "index.json").write_text(json.dumps(index, separators=(",", ":"), sort_keys=True))


def _archive(layout: Path, archive: Path, epoch: int) -> None:
    """The layout as one tar (what `podman load` and `docker load` read): sorted, owned by root, dated epoch."""
    with tarfile.open(archive, "w", format=tarfile.PAX_FORMAT) as tar:
        for path in sorted(layout.rglob("*")):
            info = tar.gettarinfo(str(path), arcname=str(path.relative_to(layout)))
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            info.mtime = epoch
            info.mode = 0o755 if path.is_dir() else 0o644
            if path.is_file():
                with path.open("rb") as data:
                    tar.addfile(info, data)
            else:
                tar.addfile(info)


def digest(layout: Path) -> str:
    """The manifest digest of the layout's one image (what `podman images --digests` shows)."""
    (manifest,) = json.loads((layout / "index.json").read_text())["manifests"]
    return str(manifest["digest"])


def check_tools() -> None:
    missing = [
        tool for tool in ("mmdebstrap", "umoci", "chroot") if shutil.which(tool, path=CLEAN_PATH) is None
    ]
    if missing:
        raise BuildError(f"missing {' '.join(missing)}: apt-get install mmdebstrap umoci (Debian packages)")
    arch = subprocess.run(
        ["dpkg", "--print-architecture"], capture_output=True, text=True, check=False
    ).stdout.strip()
    if arch != ARCHITECTURE:
        raise BuildError(
            f"the image is built for {ARCHITECTURE} on an {ARCHITECTURE} machine, this one is {arch}"
        )


def build(output: Path, say: Say = print) -> str:
    """Build the image into `output` (replacing what was there); returns its digest."""
    check_tools()
    epoch = source_date_epoch()
    tag = version()
    started = time.monotonic()
    output.mkdir(parents=True, exist_ok=True)
    log = output / "build.log"
    log.write_text("")
    shutil.rmtree(output / "oci", ignore_errors=True)
    for old in (f"mpigen-{tag}.oci.tar", "contents.txt"):
        (output / old).unlink(missing_ok=True)
    with tempfile.TemporaryDirectory(prefix="mpigen-image-") as tmp:
        work = Path(tmp)
        wheels = _wheels(work, epoch, log, say)
        say(
            f"making the root file system: Debian {SUITE} (essential, python3) and mpigen's venv (mmdebstrap)"
        )
        layer, contents = _mmdebstrap(work, wheels, epoch, log)
        say(f"packing the OCI image mpigen:{tag} (umoci)")
        _umoci(output / "oci", tag, layer, epoch, log)
        rootfs_size = layer.stat().st_size
        shutil.copy2(contents, output / "contents.txt")
    archive = output / f"mpigen-{tag}.oci.tar"
    _archive(output / "oci", archive, epoch)
    found = digest(output / "oci")
    say(
        f"built mpigen:{tag} {found} in {time.monotonic() - started:.0f} s: {archive} "
        f"({archive.stat().st_size / 1e6:.1f} MB compressed, {rootfs_size / 1e6:.1f} MB unpacked)"
    )
    return found


def _lock(say: Say) -> None:
    """image/<name>.txt from image/<name>.in: each pinned wheel with its sha256, for the image's target."""
    for name, target in (("requirements", WHEEL_TARGET), ("build-requirements", ("--only-binary", ":all:"))):
        source = IMAGE / f"{name}.in"
        pins = [
            line.strip()
            for line in source.read_text().splitlines()
            if line.strip() and not line.startswith("#")
        ]
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run(
                [sys.executable, "-m", "pip", "download", "-q", "--no-deps", *target, "-d", tmp, *pins],
                check=True,
            )
            hashes = {}
            for wheel in Path(tmp).iterdir():
                project = re.sub(r"[-_.]+", "-", wheel.name.split("-")[0]).lower()
                hashes[project] = hashlib.sha256(wheel.read_bytes()).hexdigest()
        lines = [f"# Written by `python tools/image.py --lock` from image/{name}.in: do not edit.\n"]
        for pin in pins:
            project = re.sub(r"[-_.]+", "-", pin.split("==")[0]).lower()
            lines.append(f"{pin} \\\n    --hash=sha256:{hashes[project]}\n")
        (IMAGE / f"{name}.txt").write_text("".join(lines))
        say(f"wrote image/{name}.txt ({len(pins)} wheels)")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Build mpigen's KRM function as an OCI image (see the module's text)."
    )
    parser.add_argument(
        "--output", type=Path, default=DEFAULT_OUTPUT, help="directory to build into (build/image)"
    )
    parser.add_argument("--lock", action="store_true", help="rewrite image/*.txt from image/*.in")
    parser.add_argument("--key", action="store_true", help="print the hash of the build's inputs")
    parser.add_argument(
        "--customize", nargs=3, metavar=("ROOTFS", "WHEELS", "CONTENTS"), help=argparse.SUPPRESS
    )
    args = parser.parse_args(argv)

    def say(text: str) -> None:
        print(f"[image] {text}", flush=True)

    try:
        if args.customize:
            customize(*(Path(arg) for arg in args.customize))
        elif args.lock:
            _lock(say)
        elif args.key:
            print(key())
        else:
            build(args.output.resolve(), say)
    except BuildError as exc:
        print(f"tools/image.py: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
