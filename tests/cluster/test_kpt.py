"""kpt runs mpigen as an exec KRM function (`kpt fn eval --exec`, `kpt fn render --allow-exec`), offline, on a
small package: the README's `kpt fn eval --exec mpigen jobs/` turns jobs/train.yaml into the job's manifests and
leaves the rest as it was; options after `--` and a Kptfile's `configMap:` set render options. kpt is built from
its Go module by the suite (gotools.py)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import gotools
import yaml
from jobs import load_all
from mpijobs import compiled, job

import mpigen
from mpigen.options import Options
from tools import function_executable

OTHER = """\
# kept: a comment and a value YAML 1.1 would read as a boolean
apiVersion: v1
kind: ConfigMap
metadata:
  name: other
data:
  enabled: 'yes'
"""


def kpt(*argv: str, cwd: Path, timeout: int = 120) -> subprocess.CompletedProcess[str]:
    binary = gotools.require("kpt")
    env = {"HOME": str(cwd), "PATH": "/usr/bin:/bin"}
    return subprocess.run(
        [binary, *argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


def package(root: Path) -> Path:
    jobs = root / "jobs"
    jobs.mkdir()
    (jobs / "train.yaml").write_text(yaml.safe_dump(job("v1alpha2", "train")))
    (jobs / "other.yaml").write_text(OTHER)
    return jobs


def identities(objects: list[dict[str, object]]) -> list[tuple[object, object]]:
    return [(obj["kind"], obj["metadata"]["name"]) for obj in objects]  # type: ignore[index]


def test_kpt_fn_eval_exec_compiles_the_packages_jobs_in_place(tmp_path: Path) -> None:
    jobs = package(tmp_path)
    function = function_executable(tmp_path)
    done = kpt("fn", "eval", "--exec", str(function), str(jobs), cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    written = load_all((jobs / "train.yaml").read_text())
    expected = compiled(job("v1alpha2", "train"), None)
    assert identities(written) == identities(expected)
    assert written == expected
    assert (jobs / "other.yaml").read_text() == OTHER
    # Idempotent under kpt: a second run compiles nothing more and changes no byte.
    before = {path.name: path.read_text() for path in jobs.iterdir()}
    again = kpt("fn", "eval", "--exec", str(function), str(jobs), cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert {path.name: path.read_text() for path in jobs.iterdir()} == before


def test_kpt_fn_eval_reports_an_invalid_job_and_changes_nothing(tmp_path: Path) -> None:
    jobs = package(tmp_path)
    broken = job("v1alpha2", "train", workers=0)
    (jobs / "train.yaml").write_text(yaml.safe_dump(broken))
    before = {path.name: path.read_text() for path in jobs.iterdir()}
    done = kpt("fn", "eval", "--exec", str(function_executable(tmp_path)), str(jobs), cwd=tmp_path)
    assert done.returncode != 0
    assert "spec.mpiReplicaSpecs.Worker.replicas: must be >= 1" in done.stdout + done.stderr
    assert {path.name: path.read_text() for path in jobs.iterdir()} == before


LARGE = 200  # jobs, each in its own file beside a commented ConfigMap: about 2,600 objects


def commented_settings(index: int) -> str:
    return (
        f"# settings of train-{index}\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings-{index} # for the job\n"
        "  annotations:\n    team: ml # who to ask\ndata:\n  # quoted: YAML 1.1 would read a boolean\n  enabled: 'yes'\n"
        '  script: |\n    echo "hello"\n'
    )


def test_kpt_fn_eval_exec_compiles_a_large_package_and_keeps_every_other_file(tmp_path: Path) -> None:
    jobs = tmp_path / "jobs"
    jobs.mkdir()
    for index in range(LARGE):
        (jobs / f"train-{index}.yaml").write_text(yaml.safe_dump(job("v1alpha2", f"train-{index}")))
        (jobs / f"settings-{index}.yaml").write_text(commented_settings(index))
    function = function_executable(tmp_path)
    done = kpt("fn", "eval", "--exec", str(function), str(jobs), cwd=tmp_path, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    for index in range(LARGE):
        written = load_all((jobs / f"train-{index}.yaml").read_text())
        assert written == compiled(job("v1alpha2", f"train-{index}"), None)
        assert (jobs / f"settings-{index}.yaml").read_text() == commented_settings(index)
    before = {path.name: path.read_text() for path in jobs.iterdir()}
    again = kpt("fn", "eval", "--exec", str(function), str(jobs), cwd=tmp_path, timeout=900)
    assert again.returncode == 0, again.stderr
    assert {path.name: path.read_text() for path in jobs.iterdir()} == before


# Options: `kpt fn eval ... -- key=value` and a Kptfile's `configMap:` reach mpigen as a ConfigMap
# functionConfig (mpigen.krm.config) under the option table's names.


def test_kpt_fn_eval_exec_takes_options_after_the_double_dash(tmp_path: Path) -> None:
    jobs = package(tmp_path)
    function = function_executable(tmp_path)
    args = ("target=jobset", "namespace=ml", "wait-timeout=30")
    done = kpt("fn", "eval", "--exec", str(function), str(jobs), "--", *args, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    written = load_all((jobs / "train.yaml").read_text())
    options = Options(target="jobset", namespace="ml", wait_timeout_seconds=30)
    assert written == mpigen.compile(job("v1alpha2", "train"), options)
    assert "JobSet" in [kind for kind, _ in identities(written)]
    assert (jobs / "other.yaml").read_text() == OTHER


def test_kpt_fn_eval_exec_names_a_key_it_refuses_and_changes_nothing(tmp_path: Path) -> None:
    jobs = package(tmp_path)
    before = {path.name: path.read_text() for path in jobs.iterdir()}
    function = function_executable(tmp_path)
    done = kpt("fn", "eval", "--exec", str(function), str(jobs), "--", "tagret=jobset", cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    # kpt prints the error result with the ConfigMap it made of the arguments and the key's path
    assert '[error] v1/ConfigMap/function-input data.tagret: unknown mpigen option "tagret"' in done.stderr
    assert '(did you mean "target"?)' in done.stderr
    assert {path.name: path.read_text() for path in jobs.iterdir()} == before


KPTFILE = """\
apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: jobs
  annotations:
    config.kubernetes.io/local-config: "true"
pipeline:
  mutators:
  - exec: {function}
    configMap:
      target: jobset
      queue: team-a
"""


def test_kpt_fn_render_passes_a_kptfile_config_map_as_options(tmp_path: Path) -> None:
    jobs = package(tmp_path)
    function = function_executable(tmp_path)
    (jobs / "Kptfile").write_text(KPTFILE.format(function=function))
    done = kpt("fn", "render", "--allow-exec", str(jobs), cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    written = load_all((jobs / "train.yaml").read_text())
    options = Options(target="jobset", queue="team-a")
    assert written == mpigen.compile(job("v1alpha2", "train"), options)
    (jobset,) = (obj for obj in written if obj["kind"] == "JobSet")
    assert jobset["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "team-a"
    # A second render compiles nothing more and changes no byte.
    before = {path.name: path.read_text() for path in jobs.iterdir()}
    again = kpt("fn", "render", "--allow-exec", str(jobs), cwd=tmp_path)
    assert again.returncode == 0, again.stdout + again.stderr
    assert {path.name: path.read_text() for path in jobs.iterdir()} == before
