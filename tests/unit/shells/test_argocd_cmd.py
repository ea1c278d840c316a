"""`mpigen argocd`: the plugin's commands as argocd-cmp-server runs them (a new process, in the
application's directory, the options in its environment, no flags: mpigen.cli runs them without click)
and as click runs them (`--help`, a path): the same bytes and exit codes either way. The plugin under
Argo CD's own server is tests/cluster/test_argocd.py."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from jobs import job_yaml, load_all
from pythons import mpigen_argv

from mpigen.cli import cli
from mpigen.options import OPTION_TABLE

ROOT = Path(__file__).resolve().parents[3]
JOBS = ROOT / "examples" / "gitops" / "jobs"


def plugin(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`mpigen argocd ARGS` in `cwd` with only `env` (and PATH) in its environment, as the sidecar runs it."""
    return subprocess.run(
        mpigen_argv("argocd", *args),
        cwd=cwd,
        env={"PATH": "/usr/bin:/bin", **(env or {})},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def render(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        mpigen_argv("render", *args), capture_output=True, text=True, timeout=60, check=False
    )


def test_generate_prints_what_render_prints_with_the_environments_options() -> None:
    env = {
        "ARGOCD_APP_PARAMETERS": json.dumps([{"name": "network-policy", "string": "same-job"}]),
        "ARGOCD_APP_NAMESPACE": "ml",
        "KUBE_VERSION": "1.31.4",
        "ARGOCD_APP_NAME": "mpijobs",
    }
    done = plugin("generate", cwd=JOBS, env=env)
    assert done.returncode == 0, done.stderr
    expected = render("--network-policy", "same-job", "-n", "ml", "--kube-version", "1.31", str(JOBS))
    assert done.stdout == expected.stdout
    assert "kind: NetworkPolicy" in done.stdout
    # The same call parsed by click (a path given, run from elsewhere) prints the same bytes.
    result = CliRunner().invoke(cli, ["argocd", "generate", str(JOBS)], env=env, catch_exceptions=False)
    assert result.exit_code == 0
    assert load_all(result.stdout) == load_all(done.stdout)


def test_render_never_reads_argo_cds_environment() -> None:
    env = {
        "ARGOCD_APP_PARAMETERS": json.dumps([{"name": "target", "string": "jobset"}]),
        "ARGOCD_APP_NAMESPACE": "x",
    }
    done = subprocess.run(
        mpigen_argv("render", "."),
        cwd=JOBS,
        env={"PATH": "/usr/bin:/bin", **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == render(str(JOBS)).stdout.replace(str(JOBS), ".")
    assert "kind: JobSet" not in done.stdout


def test_a_bad_parameter_prints_nothing_and_names_it(tmp_path: Path) -> None:
    (tmp_path / "job.yaml").write_text(job_yaml(name="a"))
    env = {"ARGOCD_APP_PARAMETERS": json.dumps([{"name": "gang-schedulr", "string": "volcano"}])}
    done = plugin("generate", cwd=tmp_path, env=env)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.startswith(
        'mpigen: ARGOCD_APP_PARAMETERS: parameter "gang-schedulr": unknown mpigen option (did you mean "gang-scheduler"?)'
    )
    assert "Traceback" not in done.stderr


def test_an_invalid_job_prints_nothing_and_says_what_render_says(tmp_path: Path) -> None:
    (tmp_path / "job.yaml").write_text(job_yaml(name="a").replace("replicas: 2", "replicas: -3"))
    done = plugin("generate", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (1, "")
    expected = render(str(tmp_path / "job.yaml"))
    assert expected.returncode == 1
    assert done.stderr == expected.stderr.replace(str(tmp_path), ".")


def test_a_directory_without_objects_is_refused_rather_than_rendered_empty(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("# nothing here\n")
    done = plugin("generate", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (1, "")
    assert "holds no objects" in done.stderr and "prune" in done.stderr


def test_discover_lists_the_files_naming_a_job(tmp_path: Path) -> None:
    (tmp_path / "jobs" / "deep").mkdir(parents=True)
    (tmp_path / "jobs" / "deep" / "a.yml").write_text(job_yaml(name="a"))
    (tmp_path / "jobs" / "broken.yaml").write_text("kind: MPIJob\nspec: [\n")
    (tmp_path / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "job.yaml").write_text(job_yaml(name="b"))
    done = plugin("discover", cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (0, "jobs/broken.yaml\njobs/deep/a.yml\n", "")
    (tmp_path / "jobs").rename(tmp_path / "elsewhere")
    done = plugin("discover", cwd=tmp_path / "elsewhere" / "deep")
    assert (done.returncode, done.stdout) == (0, "a.yml\n")
    done = plugin("discover", cwd=tmp_path / ".git")
    assert (done.returncode, done.stdout) == (0, "job.yaml\n")  # named itself, a hidden folder is read
    (tmp_path / "empty").mkdir()
    assert plugin("discover", cwd=tmp_path / "empty").stdout == ""


def test_parameters_prints_one_announcement_per_option(tmp_path: Path) -> None:
    done = plugin("parameters", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert [entry["name"] for entry in json.loads(done.stdout)] == [spec.flag for spec in OPTION_TABLE]
    result = CliRunner().invoke(cli, ["argocd", "parameters"], catch_exceptions=False)
    assert result.stdout == done.stdout


@pytest.mark.parametrize("args", [["generate", "--bad"], ["discover", "a", "b"], ["frobnicate"]])
def test_other_calls_go_to_click(args: list[str], tmp_path: Path) -> None:
    done = plugin(*args, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stdout == ""
    assert "Usage: mpigen argocd" in done.stderr
