"""The built image and podman, for tests/image: the build script as a module, the cache of built images,
podman with a configuration of the run's own. The fixtures are in conftest.py beside this file."""

from __future__ import annotations

import importlib.util
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent
ROOT = TESTS.parent
sys.path.insert(0, str(TESTS / "cluster"))

import gotools
import progress

IMAGE_TOOLS = {"mmdebstrap": "mmdebstrap", "umoci": "umoci", "podman": "podman", "runc": "runc"}


def load_builder() -> ModuleType:
    """tools/image.py, the build script, as a module."""
    spec = importlib.util.spec_from_file_location("mpigen_image_build", ROOT / "tools" / "image.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


builder = load_builder()


@dataclass(frozen=True)
class Base:
    """One built Debian base layer (tools/image.py's build_base): its directory (oci/, debian.txt), the
    digest of the layout's one image and the name it is cached as."""

    directory: Path
    digest: str

    @property
    def layout(self) -> Path:
        return self.directory / "oci"

    @property
    def name(self) -> str:
        return self.directory.name


@dataclass(frozen=True)
class Built:
    """One built image: its output directory (oci/, the archive, contents.txt) and its digest."""

    directory: Path
    digest: str
    version: str

    @property
    def layout(self) -> Path:
        return self.directory / "oci"

    @property
    def archive(self) -> Path:
        return self.directory / f"mpigen-{self.version}.oci.tar"

    @property
    def name(self) -> str:
        return f"{builder.IMAGE_NAME}:{self.version}"


def cache_root() -> Path:
    return gotools.cache_root().parent / "image"


def say_past_capture(request: pytest.FixtureRequest) -> Callable[[str], None]:
    """Print past pytest's capture (tests/progress.py's logger, which tests/conftest.py shows on the
    terminal): a build takes minutes, and its progress should show."""
    return progress.say.info


def _cached(
    directory: Path, what: str, say: Callable[[str], None], make: Callable[[Path, Callable[[str], None]], str]
) -> str:
    """The digest of what `make` builds into `directory`, built on first use under a file lock (parallel
    runs build it once, saying each step and, every 20 s, how long so far): a warm run builds nothing."""
    directory.parent.mkdir(parents=True, exist_ok=True)
    name = directory.name
    with progress.locked(directory.parent / f".{name}.lock", f"[image] building {what} {name}"):
        done = directory / "done"
        if not done.is_file():
            log = directory / "build.log"
            say(f"[image] building {what} into {directory}; log: {log}")
            started = time.monotonic()
            steps = [""]

            def step(text: str) -> None:
                steps.append(text)
                say(f"[image] {text}")

            with progress.heartbeat(f"[image] building {what} {name}", log, step=lambda: steps[-1]):
                try:
                    found = make(directory, step)
                except builder.BuildError as why:
                    pytest.fail(str(why), pytrace=False)
            seconds = time.monotonic() - started
            done.write_text(f"{found} built in {seconds:.0f} s\n")
            progress.record("image", f"{what} {name}", "built", seconds, log)
        else:
            progress.record("image", f"{what} {name}", "reused", log=directory)
        return done.read_text().split()[0]


def cached_base(name: str, say: Callable[[str], None]) -> Base:
    """The Debian base layer cached as `name` under cache_root()/base."""
    directory = cache_root() / "base" / name
    return Base(directory, _cached(directory, "the Debian base layer", say, builder.build_base))


def cached_build(name: str, base: Base, say: Callable[[str], None]) -> Built:
    """The image on `base` cached as `name` under cache_root(), built with the pinned build tools and
    wheels cached by their own key (cached_pinned)."""
    directory = cache_root() / name

    def make(into: Path, step: Callable[[str], None]) -> str:
        return builder.build(into, step, base.directory, cached_pinned(say))

    found = _cached(directory, "the image", say, make)
    return Built(directory, found, builder.version())


def cached_pinned(say: Callable[[str], None]) -> Path:
    """The pinned build tools, their venv and the dependencies' wheels (tools/image.py's fetch_pinned),
    cached under cache_root()/pinned by the hash of image/*.txt and the build's Python: each image build
    after a change to mpigen fetches and installs none of them again."""
    directory = cache_root() / "pinned" / builder.pinned_key()
    _cached(directory, "the pinned build tools and wheels", say, builder.fetch_pinned)
    return directory


def build_base_into(directory: Path, say: Callable[[str], None]) -> Base:
    try:
        return Base(directory, builder.build_base(directory, say))
    except builder.BuildError as why:
        pytest.fail(str(why), pytrace=False)


class Podman:
    """podman with the run's own configuration; `run` starts the image with a ResourceList on stdin."""

    def __init__(self, env: dict[str, str], image: str) -> None:
        self.env = env
        self.image = image

    def __call__(
        self, *argv: str, stdin: bytes | None = None, timeout: int = 300
    ) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            ["podman", *argv], input=stdin, env=self.env, capture_output=True, timeout=timeout, check=False
        )

    def run(
        self, *options: str, stdin: bytes, args: tuple[str, ...] = ()
    ) -> subprocess.CompletedProcess[bytes]:
        return self("run", "--rm", "-i", *options, self.image, *args, stdin=stdin)


def containers_conf(directory: Path, driver: str) -> dict[str, str]:
    nofile = resource.getrlimit(resource.RLIMIT_NOFILE)
    nproc = resource.getrlimit(resource.RLIMIT_NPROC)
    limit = lambda pair: ":".join(
        str(min(value, 4096) if value != resource.RLIM_INFINITY else 4096) for value in pair
    )
    (directory / "containers.conf").write_text(
        "[containers]\n"
        f'default_ulimits = ["nofile={limit(nofile)}", "nproc={limit(nproc)}"]\n'
        "[engine]\n"
        'cgroup_manager = "cgroupfs"\nevents_logger = "file"\nruntime = "runc"\n'
    )
    (directory / "storage.conf").write_text(
        f'[storage]\ndriver = "{driver}"\ngraphroot = "{directory / "storage"}"\nrunroot = "{directory / "run"}"\n'
    )
    return {
        "PATH": f"{directory / 'bin'}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "HOME": str(directory),
        "CONTAINERS_CONF": str(directory / "containers.conf"),
        "CONTAINERS_STORAGE_CONF": str(directory / "storage.conf"),
    }
