"""Fixtures for the container image tests (marker `image`, by directory: tests/conftest.py).

The image is built with tools/image.py in its two layers, each cached under a file lock (parallel runs
build it once), printing each step. `base_layer` is the Debian base layer, cached by the hash of its own
inputs (`$MPIGEN_TEST_CACHE/image/base/<base key>`, default `~/.cache/mpigen-tests/image/base/...`: the
Debian part of the script, SOURCE_DATE_EPOCH and the day, which stands for Debian's packages of the day),
so it is built at most once a day. `built_image` is the image on it, cached by the hash of the rest
(`.../image/<key>`: the base's digest, the checkout's wheel sources, image/ and the script): a change to
mpigen's package rebuilds the mpigen layer only. The pinned build tools, their venv and the dependencies'
wheels that build uses are cached by their own key (`.../image/pinned/<hash of image/*.txt and the
build's Python>`): a rebuild builds mpigen's wheel and installs it all in a fresh chroot, fetching nothing. mmdebstrap, umoci, podman and runc are Debian packages, installed by the suite (tests/debian.py).
The build needs root (mmdebstrap's chroot); without root, or where podman cannot start a container at
all, the tests skip and say why.

`podman` is podman with a configuration of the run's own (`CONTAINERS_CONF`, `CONTAINERS_STORAGE_CONF`:
storage in the run's temporary directory, runc, the cgroupfs manager, ulimits no higher than this
machine's), with the image loaded as `localhost/mpigen:<version>`; `tool_env` is the environment that
makes kpt (`KPT_FN_RUNTIME=podman`) and kustomize (a `docker` on PATH that runs podman) use it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import debian
from images import (
    IMAGE_TOOLS,
    Base,
    Built,
    Podman,
    builder,
    cached_base,
    cached_build,
    containers_conf,
    say_past_capture,
)


@pytest.fixture(scope="session")
def image_tools() -> None:
    if os.geteuid() != 0:
        pytest.skip("building and running the image needs root (mmdebstrap's chroot, podman's storage)")
    problem = debian.ensure(IMAGE_TOOLS)
    if problem:
        pytest.skip(f"the image tools ({' '.join(sorted(set(IMAGE_TOOLS.values())))}) are missing: {problem}")


@pytest.fixture(scope="session")
def base_layer(image_tools: None, request: pytest.FixtureRequest) -> Base:
    """The Debian base layer of the day, built on first use and then taken from the cache while its inputs
    hold."""
    return cached_base(builder.base_key(), say_past_capture(request))


@pytest.fixture(scope="session")
def built_image(base_layer: Base, request: pytest.FixtureRequest) -> Built:
    """The image of this checkout on the base layer, built on first use and then taken from the cache
    while its inputs hold."""
    return cached_build(builder.key(base=base_layer.digest), base_layer, say_past_capture(request))


@pytest.fixture(scope="session")
def podman(built_image: Built) -> Iterator[Podman]:
    """podman holding the built image as localhost/mpigen:<version>; its storage is removed afterwards.

    In a directory of /tmp's own, not pytest's: under a pytest-xdist worker's longer temporary path,
    conmon's sockets under the run root pass the 108 bytes a socket's path may have, and every
    `podman run` then waits out conmon's 20-second timeout before it returns."""
    directory = Path(tempfile.mkdtemp(prefix="mpigen-podman-"))
    try:
        yield from _podman_in(directory, built_image)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def _podman_in(directory: Path, built_image: Built) -> Iterator[Podman]:
    (directory / "bin").mkdir()
    # kustomize runs container functions with `docker`: this one is podman.
    shim = directory / "bin" / "docker"
    shim.write_text('#!/bin/sh\nexec podman "$@"\n')
    shim.chmod(0o755)
    problems = []
    for driver in ("overlay", "vfs"):
        env = containers_conf(directory, driver)
        done = subprocess.run(
            ["podman", "info"], env=env, capture_output=True, text=True, timeout=120, check=False
        )
        if done.returncode == 0:
            break
        problems.append(f"{driver}: {done.stderr.strip()[-300:]}")
        shutil.rmtree(directory / "storage", ignore_errors=True)
    else:
        pytest.skip(f"podman cannot work here: {'; '.join(problems)}")
    tool = Podman(env, built_image.name)
    try:
        loaded = tool("load", "-i", str(built_image.archive))
        assert loaded.returncode == 0, loaded.stderr.decode()
        assert f"Loaded image: {built_image.name}" in loaded.stdout.decode() + loaded.stderr.decode()
        yield tool
    finally:
        tool("system", "reset", "--force")


@pytest.fixture(scope="session")
def tool_env(podman: Podman) -> dict[str, str]:
    """The environment under which kpt and kustomize run functions in podman."""
    return {**podman.env, "KPT_FN_RUNTIME": "podman"}
