"""Build mpigen's KRM function as an OCI container image, reproducibly, from Debian packages and PyPI wheels.

    python tools/image.py                  build into build/image/ (root, mmdebstrap and umoci needed)
    python tools/image.py --output DIR     build into DIR
    python tools/image.py --lock           rewrite image/*.txt (each wheel's sha256) from image/*.in
    python tools/image.py --key            print the hash of the build's inputs
    python tools/image.py --base-key       print the hash of the Debian base layer's inputs

What it makes, in `build/image/`: `oci/`, an OCI image layout holding one image, `localhost/mpigen:<version>`,
`mpigen-<version>.oci.tar`, the same layout as one archive (`podman load -i`, `docker load -i`), and
`contents.txt`, every Debian and Python package inside with its version.

How: two layers. The Debian base layer is bookworm's Essential packages and `python3` (`mmdebstrap
--variant=essential`, /usr merged by its hook), without documentation, manual pages or translations (each
package's copyright is kept). The mpigen layer is what installing mpigen changes on top of it, run in a
chroot of the unpacked base: a virtualenv in /opt/mpigen gets mpigen's wheel, built from this checkout with
the pinned setuptools, and its dependencies' wheels from PyPI, each at the version and sha256 of
image/requirements.txt; pip is run from its own wheel and is not left in the image, nor is any compiler. Of
kubernetes-validate's schemas only the `-local-strict` ones stay: those are all mpigen reads
(mpigen.checks.kube.schemas), for every Kubernetes version `--kube-version` accepts. Python files are
compiled ahead (unchecked-hash .pyc files: the image's file system can be mounted read-only). The user
65532 is added to /etc/passwd and /etc/group, so the layer holds /opt/mpigen and those two files (and
their parent directories), nothing else; /opt/mpigen/metadata.yaml is kpt's function catalog metadata
(image/metadata.yaml: description, tags, source, license, example packages). The image runs `mpigen krm`
as user 65532 (`kpt fn doc --image` runs it with `--help`) and carries the OCI labels source, version
(mpigen's), licenses, title and description. `umoci` packs it.

Reproducible: with the same inputs two builds give the same bytes, so the same digest. Every time stamp is
SOURCE_DATE_EPOCH (0 unless set) and the build runs in a clean environment. The inputs of the base layer
(`base_key()`): the Debian part of this script (its text between the two section lines below), the clean
environment, the versions of mmdebstrap and umoci, SOURCE_DATE_EPOCH, and the Debian packages the mirror
serves that day. Debian is pinned to a release, not to package versions: the mirror serves only the newest
of each, so a security update changes the image (contents.txt says what went in). Which versions the
mirror serves cannot be known without asking it, so the key stands for them with the day (UTC): a base
built from the key is reused, by whoever caches it (the test suite), until the next day, and a package
Debian publishes later that day is taken up the next. The inputs of the image (`key()`): the base layer
(its key, or once built its digest), SOURCE_DATE_EPOCH, and the files this script, image/, and the
checkout's files that make mpigen's wheel. `build()` takes an already built base layer (`build_base()`)
and the pinned build tools and wheels already fetched (`fetch_pinned()`, kept by `pinned_key()`: the hash
of image/*.txt and the build's Python), as the test suite does from its cache; `python tools/image.py`
makes each of them, caching nothing.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import stat
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
CLEAN_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

Say = Callable[[str], None]


class BuildError(Exception):
    """A step failed or a tool is missing: one line for the user (the step's output tail follows)."""


def source_date_epoch() -> int:
    text = os.environ.get("SOURCE_DATE_EPOCH", "0")
    if not text.isdigit():
        raise BuildError(f"SOURCE_DATE_EPOCH must be a number of seconds, got {text!r}")
    return int(text)


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


def _history_created(epoch: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))


def digest(layout: Path) -> str:
    """The manifest digest of the layout's one image (what `podman images --digests` shows)."""
    (manifest,) = json.loads((layout / "index.json").read_text())["manifests"]
    return str(manifest["digest"])


def layer_digests(layout: Path) -> list[str]:
    """The digests of the layout's one image's layers, lowest first."""
    manifest = json.loads(_blob(layout, digest(layout)))
    return [str(layer["digest"]) for layer in manifest["layers"]]


def _blob(layout: Path, name: str) -> bytes:
    algorithm, value = name.split(":")
    return (layout / "blobs" / algorithm / value).read_bytes()


# ---- The Debian base layer (base_key() hashes this script's text from this line to the next such one) ----

SUITE = "bookworm"
MIRRORS = (
    f"deb http://deb.debian.org/debian {SUITE} main",
    f"deb http://deb.debian.org/debian {SUITE}-updates main",
    f"deb http://deb.debian.org/debian-security {SUITE}-security main",
)
ARCHITECTURE = "amd64"
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
BASE_TAG = "debian"  # the base layout's one image
DEBIAN_CONTENTS = "debian.txt"  # in a built base: its Debian packages, the first part of contents.txt


def _mmdebstrap(work: Path, contents: Path, epoch: int, log: Path) -> Path:
    layer = work / "rootfs.tar"
    argv = [
        "mmdebstrap",
        "--variant=essential",
        "--include=python3",
        f"--architectures={ARCHITECTURE}",
        # merged /usr by the hook (usr-is-merged), not by the usrmerge package, which brings perl along
        f"--hook-dir={MERGED_USR_HOOKS}",
        *(f"--dpkgopt={option}" for option in DPKG_EXCLUDES),
        '--customize-hook=rm -f "$1/usr/share/info/dir"',  # the index of the info pages left out
        f"--customize-hook=chroot \"$1\" dpkg-query -W -f '${{Package}} ${{Version}}\\n' > {contents}",
        SUITE,
        str(layer),
        *MIRRORS,
    ]
    _run(argv, _clean_env(epoch, TMPDIR=str(work)), log, "mmdebstrap")
    return layer


def _umoci_base(layout: Path, layer: Path, epoch: int, log: Path) -> None:
    created = _history_created(epoch)
    env = _clean_env(epoch)
    image = f"{layout}:{BASE_TAG}"
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
            f"tools/image.py: Debian {SUITE} (essential, python3)",
            str(layer),
        ],
        env,
        log,
        "umoci raw add-layer",
    )
    _run(_umoci_config(image, created), env, log, "umoci config")
    _run(["umoci", "gc", "--layout", str(layout)], env, log, "umoci gc")


def _umoci_config(image: str, created: str) -> list[str]:
    """`umoci config` of `image` as every layer of this build is configured: dated, no history entry of
    its own, linux/amd64."""
    return [
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
    ]


def build_base(output: Path, say: Say = print, log: Path | None = None) -> str:
    """Build the Debian base layer into `output` (replacing what was there): `oci/`, a layout holding it
    as one image, and `debian.txt`, its packages; returns that image's digest."""
    check_tools()
    epoch = source_date_epoch()
    started = time.monotonic()
    output.mkdir(parents=True, exist_ok=True)
    if log is None:
        log = output / "build.log"
        log.write_text("")
    shutil.rmtree(output / "oci", ignore_errors=True)
    (output / DEBIAN_CONTENTS).unlink(missing_ok=True)
    with tempfile.TemporaryDirectory(prefix="mpigen-image-base-") as tmp:
        work = Path(tmp)
        say(f"making the Debian base layer: {SUITE}'s essential packages and python3 (mmdebstrap)")
        packages = work / "packages.txt"
        layer = _mmdebstrap(work, packages, epoch, log)
        (output / DEBIAN_CONTENTS).write_text(f"# Debian {SUITE} packages\n{packages.read_text()}")
        say("packing the Debian base layer (umoci)")
        _umoci_base(output / "oci", layer, epoch, log)
        size = layer.stat().st_size
    found = digest(output / "oci")
    say(
        f"built the Debian base layer {found} in {time.monotonic() - started:.0f} s ({size / 1e6:.1f} MB unpacked)"
    )
    return found


def _tool_version(tool: str) -> str:
    if shutil.which(tool, path=CLEAN_PATH) is None:
        return f"{tool}: missing"
    done = subprocess.run([tool, "--version"], capture_output=True, text=True, check=False)
    return done.stdout.strip() or done.stderr.strip()


def base_key(epoch: int | None = None, day: str | None = None) -> str:
    """The hash of the base layer's inputs: the Debian part of this script, the clean environment, the
    versions of mmdebstrap and umoci, SOURCE_DATE_EPOCH and the day (UTC), which stands for the Debian
    packages the mirror serves (they cannot be known without asking it)."""
    epoch = source_date_epoch() if epoch is None else epoch
    day = time.strftime("%Y-%m-%d", time.gmtime()) if day is None else day
    text = Path(__file__).resolve().read_text()
    (_, part, _) = text.split("\n# ---- The ", 2)
    env = {name: value for name, value in _clean_env(epoch).items() if not name.lower().endswith("_proxy")}
    digest = hashlib.sha256()
    for line in (
        f"day={day}",
        f"SOURCE_DATE_EPOCH={epoch}",
        json.dumps(env, sort_keys=True),
        _tool_version("mmdebstrap"),
        _tool_version("umoci"),
        part,
    ):
        digest.update(f"{line}\0".encode())
    return digest.hexdigest()[:32]


# ---- The mpigen layer ----

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
METADATA = f"{VENV}/metadata.yaml"  # image/metadata.yaml, kpt's function catalog metadata
IMAGE_NAME = "localhost/mpigen"  # the name `podman load` and `docker load` give it, tagged with the version
SOURCE = "https://github.com/OWNER/mpigen"
LICENSE = "Apache-2.0"
DESCRIPTION = "mpigen's KRM function: compiles Kubeflow MPIJobs into plain Kubernetes manifests"

# The checkout's files that make mpigen's wheel (pyproject.toml: packages, package-dir, readme, license).
WHEEL_SOURCES = ("mpigen", "schemas", "templates", "pyproject.toml", "README.md", "LICENSE")


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
    """Every file whose bytes decide the mpigen layer: the wheel's sources, image/ and this script."""
    own = [str(path.relative_to(ROOT)) for path in sorted(IMAGE.iterdir()) if path.is_file()]
    return sorted({*source_files(), *own, str(Path(__file__).resolve().relative_to(ROOT))})


def key(epoch: int | None = None, base: str | None = None) -> str:
    """The hash of the image's inputs: the base layer (`base`: its digest once built; its key, the
    default, before), SOURCE_DATE_EPOCH, and each input file's path and bytes."""
    epoch = source_date_epoch() if epoch is None else epoch
    base = base_key(epoch) if base is None else base
    digest = hashlib.sha256(f"SOURCE_DATE_EPOCH={epoch}\nbase={base}\n".encode())
    for name in input_files():
        digest.update(f"{name}\0{hashlib.sha256((ROOT / name).read_bytes()).hexdigest()}\n".encode())
    return digest.hexdigest()[:32]


def pinned_key() -> str:
    """The hash of what `fetch_pinned` makes: image/build-requirements.txt and image/requirements.txt (each
    wheel's version and sha256), the wheels' target, and the Python that runs the build tools."""
    digest = hashlib.sha256()
    for line in (
        (IMAGE / "build-requirements.txt").read_text(),
        (IMAGE / "requirements.txt").read_text(),
        " ".join(WHEEL_TARGET),
        sys.executable,
        sys.version,
    ):
        digest.update(f"{line}\0".encode())
    return digest.hexdigest()[:32]


def _pip_env(home: Path, epoch: int) -> dict[str, str]:
    return _clean_env(
        epoch,
        HOME=str(home),
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        PIP_NO_INPUT="1",
        PIP_CACHE_DIR=str(Path.home() / ".cache" / "pip"),
    )


def fetch_pinned(output: Path, say: Say = print, log: Path | None = None) -> str:
    """Into `output` (replacing what was there): `tools/`, the pinned build tools' wheels (setuptools,
    pip) from PyPI, `builder/`, a venv with them installed, and `wheels/`, the pinned dependencies' wheels
    for the image's Python, each checked against its sha256. None of it goes into the image as it is (pip
    installs the dependencies' wheels in the chroot, checking their hashes again), so whoever builds
    often may keep it by `pinned_key()` (the test suite does); returns that key."""
    output.mkdir(parents=True, exist_ok=True)
    if log is None:
        log = output / "build.log"
        log.write_text("")
    for old in ("tools", "builder", "wheels"):
        shutil.rmtree(output / old, ignore_errors=True)
    env = _pip_env(output, source_date_epoch())
    tools = output / "tools"
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
    builder = output / "builder"
    _run([sys.executable, "-m", "venv", "--without-pip", str(builder)], env, log, "making the build venv")
    bpip = _builder_pip(output)
    _run(
        [
            *bpip,
            "install",
            "--no-index",
            "--no-deps",
            "--no-compile",  # the build venv's own Python is not in the image: nothing to compile ahead
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
    say("fetching the pinned dependencies' wheels from PyPI")
    _run(
        [
            *bpip,
            "download",
            "--no-deps",
            "--require-hashes",
            *WHEEL_TARGET,
            "-d",
            str(output / "wheels"),
            "-r",
            str(IMAGE / "requirements.txt"),
        ],
        env,
        log,
        "downloading the dependencies",
    )
    return pinned_key()


def _builder_pip(pinned: Path) -> list[str]:
    """pip, run from its wheel by the build venv's Python."""
    (pip_wheel,) = (pinned / "tools").glob("pip-*.whl")
    return [str(pinned / "builder" / "bin" / "python"), str(pip_wheel / "pip")]


def _wheels(work: Path, pinned: Path, epoch: int, log: Path, say: Say) -> Path:
    """In work/wheels: mpigen's wheel, built from the checkout by the build venv of `pinned`
    (fetch_pinned), beside the pinned wheels."""
    wheels = work / "wheels"
    shutil.copytree(pinned / "wheels", wheels)
    say(f"building mpigen's wheel from {len(source_files())} files of the checkout")
    src = work / "src"
    for name in source_files():
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, src / name)
    _run(
        [
            *_builder_pip(pinned),
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "-w",
            str(wheels),
            str(src),
        ],
        _pip_env(work, epoch),
        log,
        "building mpigen's wheel",
    )
    (pip_wheel,) = (pinned / "tools").glob("pip-*.whl")
    shutil.copy2(pip_wheel, wheels / pip_wheel.name)
    shutil.copy2(IMAGE / "requirements.txt", wheels / "requirements.txt")
    return wheels


def _unpack(layout: Path, rootfs: Path, log: Path) -> None:
    """The base layout's one layer, unpacked as it is (owners, modes, devices) into rootfs."""
    (layer,) = layer_digests(layout)
    algorithm, value = layer.split(":")
    rootfs.mkdir()
    _run(
        [
            "tar",
            "--extract",
            "--gzip",
            "--numeric-owner",
            "--same-permissions",
            "--xattrs",
            "--xattrs-include=*",
            "--file",
            str(layout / "blobs" / algorithm / value),
            "--directory",
            str(rootfs),
        ],
        _clean_env(0),
        log,
        "unpacking the base layer",
    )


def customize(rootfs: Path, wheels: Path, log: Path) -> str:
    """In a chroot of the unpacked base: mpigen's venv, the pruned schemas, compiled Python, the user.
    Returns the venv's Python packages (`pip list --format=freeze`)."""
    env = {"PATH": CLEAN_PATH, "LC_ALL": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1", "HOME": "/nonexistent"}

    def chroot(*argv: str) -> str:
        return _run(["chroot", str(rootfs), *argv], env, log, f"in the image: {argv[-1]}")

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
    chroot(
        f"{VENV}/bin/python", "-m", "compileall", "-q", "--invalidation-mode", "unchecked-hash", SITE_PACKAGES
    )
    uid, name = USER
    with (rootfs / "etc/passwd").open("a") as passwd:
        passwd.write(f"{name}:x:{uid}:{uid}:{name}:/nonexistent:/usr/sbin/nologin\n")
    with (rootfs / "etc/group").open("a") as group:
        group.write(f"{name}:x:{uid}:\n")
    # kpt's function catalog metadata (image/metadata.yaml), read by whoever lists the function.
    metadata = rootfs / METADATA.lstrip("/")
    shutil.copyfile(IMAGE / "metadata.yaml", metadata)
    metadata.chmod(0o644)
    chroot(f"{VENV}/bin/mpigen", "version")
    return python_packages


Snapshot = dict[str, os.stat_result]


def _snapshot(rootfs: Path) -> Snapshot:
    """Every entry under rootfs (relative path) with its lstat, directories included."""
    found: Snapshot = {}
    pending = [rootfs]
    while pending:
        directory = pending.pop()
        with os.scandir(directory) as entries:
            for entry in entries:
                path = Path(entry.path)
                found[str(path.relative_to(rootfs))] = path.lstat()
                if entry.is_dir(follow_symlinks=False):
                    pending.append(path)
    return found


def _changed(before: Snapshot, after: Snapshot, epoch: int) -> list[str]:
    """What customizing changed: new entries; a directory whose owner, mode or (clamped) time changed; any
    other entry written to or changed at all (its ctime, which nothing can set back, or its inode)."""
    removed = sorted(set(before) - set(after))
    if removed:
        raise BuildError(f"installing mpigen removed files of the base layer: {' '.join(removed[:10])}")
    changed = set()
    for name, now in after.items():
        was = before.get(name)
        if was is None:
            changed.add(name)
        elif stat.S_ISDIR(now.st_mode) and stat.S_ISDIR(was.st_mode):
            if (now.st_mode, now.st_uid, now.st_gid, min(int(now.st_mtime), epoch)) != (
                was.st_mode,
                was.st_uid,
                was.st_gid,
                min(int(was.st_mtime), epoch),
            ):
                changed.add(name)
        elif (now.st_ino, now.st_ctime_ns, now.st_mtime_ns, now.st_size, now.st_mode) != (
            was.st_ino,
            was.st_ctime_ns,
            was.st_mtime_ns,
            was.st_size,
            was.st_mode,
        ):
            changed.add(name)
    # Each changed entry's parent directories come along (as they are), as a layer's entries usually do.
    for name in list(changed):
        parent = Path(name).parent
        while str(parent) != ".":
            changed.add(str(parent))
            parent = parent.parent
    return sorted(changed)


def _layer(rootfs: Path, names: list[str], out: Path, epoch: int) -> None:
    """The entries `names` of rootfs as a layer: sorted, numeric owners, times clamped to epoch."""
    with tarfile.open(out, "w", format=tarfile.PAX_FORMAT) as tar:
        for name in names:
            path = rootfs / name
            info = tar.gettarinfo(str(path), arcname=f"./{name}")
            info.uname = info.gname = ""
            info.mtime = min(int(path.lstat().st_mtime), epoch)
            if info.isreg():
                with path.open("rb") as data:
                    tar.addfile(info, data)
            else:
                tar.addfile(info)


def _umoci(layout: Path, tag: str, layer: Path, epoch: int, log: Path) -> None:
    """The mpigen layer on top of the base image in `layout`, the image's configuration, tagged `tag`."""
    created = _history_created(epoch)
    env = _clean_env(epoch)
    _run(
        [
            "umoci",
            "raw",
            "add-layer",
            "--image",
            f"{layout}:{BASE_TAG}",
            "--tag",
            tag,
            "--history.created",
            created,
            "--history.created_by",
            f"tools/image.py: mpigen {tag} in {VENV}",
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
        *_umoci_config(f"{layout}:{tag}", created),
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
    _run(["umoci", "remove", "--image", f"{layout}:{BASE_TAG}"], env, log, "umoci remove")
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


def check_tools() -> None:
    missing = [
        tool
        for tool in ("mmdebstrap", "umoci", "chroot", "tar")
        if shutil.which(tool, path=CLEAN_PATH) is None
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


def build(output: Path, say: Say = print, base: Path | None = None, pinned: Path | None = None) -> str:
    """Build the image into `output` (replacing what was there) on the base layer built into `base` by
    build_base, with the build tools and wheels fetched into `pinned` by fetch_pinned (each made here
    first when not given); returns its digest."""
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
        if base is None:
            base = work / "base"
            build_base(base, say, log)
        else:
            say(f"on the Debian base layer {digest(base / 'oci')} of {base}")
        if pinned is None:
            pinned = work / "pinned"
            fetch_pinned(pinned, say, log)
        else:
            say(f"with the pinned build tools and wheels of {pinned}")
        wheels = _wheels(work, pinned, epoch, log, say)
        say("installing mpigen's venv in a chroot of the unpacked base layer")
        rootfs = work / "rootfs"
        _unpack(base / "oci", rootfs, log)
        before = _snapshot(rootfs)
        python_packages = customize(rootfs, wheels, log)
        say(f"packing the mpigen layer and the OCI image mpigen:{tag} (umoci)")
        names = _changed(before, _snapshot(rootfs), epoch)
        layer = work / "mpigen.tar"
        _layer(rootfs, names, layer, epoch)
        shutil.copytree(base / "oci", output / "oci")
        _umoci(output / "oci", tag, layer, epoch, log)
        layer_size = layer.stat().st_size
        debian = (base / DEBIAN_CONTENTS).read_text()
        (output / "contents.txt").write_text(f"{debian}# Python packages in {VENV}\n{python_packages}")
    archive = output / f"mpigen-{tag}.oci.tar"
    _archive(output / "oci", archive, epoch)
    found = digest(output / "oci")
    say(
        f"built mpigen:{tag} {found} in {time.monotonic() - started:.0f} s: {archive} "
        f"({archive.stat().st_size / 1e6:.1f} MB compressed; the mpigen layer {layer_size / 1e6:.1f} MB unpacked)"
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
        "--base-key", action="store_true", help="print the hash of the Debian base layer's inputs"
    )
    args = parser.parse_args(argv)

    def say(text: str) -> None:
        print(f"[image] {text}", flush=True)

    try:
        if args.lock:
            _lock(say)
        elif args.key:
            print(key())
        elif args.base_key:
            print(base_key())
        else:
            build(args.output.resolve(), say)
    except BuildError as exc:
        print(f"tools/image.py: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
