"""kpt's function-catalog conventions, with the built image: the example packages (examples/kpt/<name>/ and their
`.expected/`) pass as kpt's e2e runner runs them (tests/cluster/kptexamples.py), `kpt fn doc --image` prints
mpigen's help, and the image carries the catalog's metadata.yaml. Fixtures: conftest.py here."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import gotools
import kptexamples
import pytest
import yaml
from images import ROOT, Podman, builder
from mpijobs import job

from tools import function_executable

CASES = kptexamples.cases(ROOT / "examples" / "kpt")


def test_there_are_catalog_examples() -> None:
    assert {case.name for case in CASES} >= {"eval-jobset", "render-kptfile", "unknown-option"}


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_a_catalog_example_passes_with_the_image(
    case: kptexamples.Case, podman: Podman, tool_env: dict[str, str]
) -> None:
    # The examples name the image of this version, as `podman load` names it.
    assert case.image == podman.image
    problems = kptexamples.run_case(case, gotools.require("kpt"), tool_env)
    if kptexamples.updating():
        pytest.fail(f"{problems}: review the change, then run again without {kptexamples.UPDATE_ENV}")
    assert problems == []


def test_kpt_fn_doc_prints_mpigens_help(podman: Podman, tool_env: dict[str, str]) -> None:
    """kpt v1.0.0-beta.49 commands/fn/doc/cmdfndoc.go runs `<runtime> run --rm IMAGE --help` and prints its
    stdout: the image's entrypoint `mpigen krm` answers with its help, which lists the function's options."""
    done = subprocess.run(
        [gotools.require("kpt"), "fn", "doc", "--image", podman.image],
        env=tool_env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    # kpt prints the container's stdout and a newline
    assert done.stdout == help_text() + "\n"
    assert "Function options" in done.stdout and "target " in done.stdout
    assert "kpt fn eval --image" in done.stdout


def help_text() -> str:
    """`mpigen krm --help` of this checkout, outside the image."""
    done = subprocess.run(
        [sys.executable, "-m", "mpigen", "krm", "--help"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_image_carries_the_catalog_metadata(podman: Podman) -> None:
    done = podman("run", "--rm", "--network", "none", "--entrypoint", "cat", podman.image, builder.METADATA)
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout == (ROOT / "image" / "metadata.yaml").read_bytes()


def test_kpt_fn_eval_image_takes_options_as_the_exec_function_does(
    podman: Podman, tool_env: dict[str, str], tmp_path: Path
) -> None:
    """`-- key=value` reaches the image as it reaches the exec function; a job's annotation wins in both."""
    kpt = gotools.require("kpt")
    written = {}
    for way in ("image", "exec"):
        jobs = tmp_path / way / "jobs"
        jobs.mkdir(parents=True)
        (jobs / "train.yaml").write_text(yaml.safe_dump(job("v2beta1", "train")))
        pinned = job("v2beta1", "pinned")
        pinned["metadata"]["annotations"] = {"mpigen.dev/target": "operator"}
        (jobs / "pinned.yaml").write_text(yaml.safe_dump(pinned))
        function = (
            ["--image", podman.image] if way == "image" else ["--exec", str(function_executable(tmp_path))]
        )
        done = subprocess.run(
            [kpt, "fn", "eval", str(jobs), *function, "--", "target=jobset", "namespace=ml"],
            env=tool_env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        written[way] = {path.name: path.read_text() for path in sorted(jobs.iterdir())}
    assert written["image"] == written["exec"]
    assert "kind: JobSet" in written["image"]["train.yaml"]
    assert "kind: StatefulSet" in written["image"]["pinned.yaml"]
    assert "kind: JobSet" not in written["image"]["pinned.yaml"]


def test_kpts_own_e2e_runner_passes_every_catalog_example(
    podman: Podman, tool_env: dict[str, str], tmp_path: Path
) -> None:
    """kpt's runner itself (tests/kpte2e: kpt v1.0.0-beta.49 pkg/test/runner over examples/kpt, as the
    catalog runs its examples), with the suite's kpt and podman: the Python runner above agrees with it."""
    kpt = Path(gotools.require("kpt"))
    runner = gotools.require("kpt-e2e")
    # The runner finds kpt with `which kpt` and runs git, diff and bash.
    env = {**tool_env, "PATH": f"{kpt.parent}:{tool_env['PATH']}", "TMPDIR": str(tmp_path)}
    done = subprocess.run(
        [runner, str(ROOT / "examples" / "kpt"), "-test.v"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr
    passed = [line for line in done.stdout.splitlines() if line.strip().startswith("--- PASS: TestCatalog/")]
    assert len(passed) == len(CASES), done.stdout[-3000:]
