"""kpt's function-catalog test cases (examples/kpt/<name>/ with `.expected/`), run as kpt's own e2e runner runs
them: kpt v1.0.0-beta.49 pkg/test/runner (runner.go: runFnEval, runFnRender, compareResult; config.go:
TestCaseConfig), which kptdev/krm-functions-catalog uses for its examples.

A case is a package directory holding `.expected/`: `config.yaml` (`testType` eval or render, default render;
for eval `image` or `execPath` and `args`, passed as `key=value` after `--`; `exitCode`, `stdErr`, `stdOut`,
`allowExec`, `skip`), `diff.patch` (what `git diff` shows after the run) and `results.yaml` (the
FunctionResultList kpt writes with `--results-dir`). As kpt's runner does: copy the package into a temporary
directory, commit it to a fresh git repository, run kpt twice (stopping after a failed run), and after each
run compare the exit code and `git diff` from the first commit; after the first also stdout/stderr (as
substrings) and the results, each trimmed of surrounding white space. With KPT_E2E_UPDATE_EXPECTED=true the
first run writes `diff.patch` and `results.yaml` instead, as kpt's runner does.

`exec_path` runs a case written for an image with an executable instead (where no container runtime works):
the function's image is replaced by the executable in the command line or the Kptfile, and in the results
kpt writes, `exec: PATH` is read as `image: IMAGE` again and a function's stderr is compared without its last
newline (kpt drops it from a container's only), so the same `.expected/` holds.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

EXPECTED = ".expected"
UPDATE_ENV = "KPT_E2E_UPDATE_EXPECTED"
RUNS = 2  # kpt's TestCaseConfig.RunCount


@dataclass(frozen=True)
class Case:
    path: Path
    config: dict[str, Any]

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def image(self) -> str | None:
        """The image the case runs: its config's (eval) or its Kptfile's one mutator (render)."""
        if self.config.get("testType", "render") == "eval":
            image = self.config.get("image")
            return str(image) if image else None
        kptfile = yaml.safe_load((self.path / "Kptfile").read_text())
        images = [fn["image"] for fn in kptfile["pipeline"].get("mutators", []) if "image" in fn]
        return str(images[0]) if images else None


def cases(root: Path) -> list[Case]:
    """Every directory under `root` that holds a `.expected` directory (runner/config.go: ScanTestCases)."""
    found = []
    for path in sorted(root.rglob(EXPECTED)):
        if path.is_dir():
            config_file = path / "config.yaml"
            config = yaml.safe_load(config_file.read_text()) if config_file.is_file() else None
            found.append(Case(path.parent, config or {}))
    return found


def _git(directory: Path, *argv: str) -> str:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(directory), "GIT_CONFIG_NOSYSTEM": "1"}
    done = subprocess.run(
        ["git", *argv], cwd=directory, env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, f"git {' '.join(argv)}: {done.stderr}"
    return done.stdout


def _commit(directory: Path, message: str) -> None:
    _git(directory, "add", "--all")
    _git(directory, "config", "user.name", "none")
    _git(directory, "config", "user.email", "none")
    _git(directory, "commit", "-m", message, "--allow-empty")


def _argv(case: Case, kpt: str, package: Path, results: Path | None, exec_path: Path | None) -> list[str]:
    config = case.config
    if config.get("testType", "render") == "eval":
        argv = [kpt, "fn", "eval", str(package)]
        argv += ["--results-dir", str(results)] if results else []
        if exec_path is not None or config.get("execPath"):
            argv += ["--exec", str(exec_path or case.path / EXPECTED / config["execPath"])]
        else:
            argv += ["--image", config["image"]]
        args = config.get("args") or {}
        return argv + (["--", *(f"{key}={value}" for key, value in args.items())] if args else [])
    argv = [kpt, "fn", "render", str(package)]
    argv += ["--results-dir", str(results)] if results else []
    return argv + (["--allow-exec"] if config.get("allowExec") or exec_path is not None else [])


def _results(directory: Path | None) -> str:
    if directory is None or not directory.is_dir():
        return ""
    files = sorted(directory.iterdir())
    assert len(files) <= 1, f"unexpected results files number {len(files)}, should be 0 or 1"
    return files[0].read_text().strip() if files else ""


def _comparable(results: str, exec_path: Path | None) -> Any:
    """The results as compared: their text; for an exec run, their data with each function's stderr
    trimmed of its final newline (kpt keeps an exec function's, and drops a container's)."""
    if exec_path is None or not results:
        return results
    data = yaml.safe_load(results)
    for item in data.get("items") or []:
        if isinstance(item.get("stderr"), str):
            item["stderr"] = item["stderr"].rstrip("\n")
    return data


def updating() -> bool:
    """Whether this run rewrites `.expected/` (kpt's runner: KPT_E2E_UPDATE_EXPECTED=true)."""
    return os.environ.get(UPDATE_ENV, "").lower() == "true"


def run_case(case: Case, kpt: str, env: dict[str, str], exec_path: Path | None = None) -> list[str]:
    """Run one case; the mismatches found (empty: it passes). Updates `.expected/` instead under
    KPT_E2E_UPDATE_EXPECTED=true, returning what it wrote."""
    expected_dir = case.path / EXPECTED
    want_results = (
        (expected_dir / "results.yaml").read_text().strip()
        if (expected_dir / "results.yaml").is_file()
        else None
    )
    want_diff = (
        (expected_dir / "diff.patch").read_text().strip() if (expected_dir / "diff.patch").is_file() else ""
    )
    update = updating()
    image = case.image
    with tempfile.TemporaryDirectory(prefix="kpt-fn-e2e-") as tmp:
        package = Path(tmp) / case.name
        shutil.copytree(case.path, package)
        if exec_path is not None and (package / "Kptfile").is_file() and image:
            kptfile = package / "Kptfile"
            kptfile.write_text(kptfile.read_text().replace(f"image: {image}", f"exec: {exec_path}"))
        _git(package, "init", "-q")
        _commit(package, "first")
        first = _git(package, "log", "-n", "1", "--pretty=format:%h")
        results = Path(tmp) / "results" if want_results is not None or update else None
        for count in range(RUNS):
            done = subprocess.run(
                _argv(case, kpt, package, results, exec_path),
                env=env,
                cwd=tmp,
                capture_output=True,
                text=True,
                timeout=600,
                check=False,
            )
            _commit(package, "second")
            diff = _git(package, "diff", first, "HEAD").strip()
            got_results = _results(results)
            if exec_path is not None and image:
                got_results = got_results.replace(f"exec: {exec_path}", f"image: {image}")
            if update:
                if got_results:
                    (expected_dir / "results.yaml").write_text(got_results + "\n")
                if diff:
                    (expected_dir / "diff.patch").write_text(diff + "\n")
                return [f"{case.name}: updated .expected/ (exit code {done.returncode})"]
            problems = []
            if done.returncode != case.config.get("exitCode", 0):
                problems.append(
                    f"exit code {done.returncode}, expected {case.config.get('exitCode', 0)}: {done.stderr}"
                )
            if count == 0:
                if case.config.get("stdErr", "") not in done.stderr:
                    problems.append(f"stderr lacks {case.config['stdErr']!r}: {done.stderr}")
                if case.config.get("stdOut", "") not in done.stdout:
                    problems.append(f"stdout lacks {case.config['stdOut']!r}: {done.stdout}")
                if _comparable(got_results, exec_path) != _comparable(want_results or "", exec_path):
                    problems.append(f"results differ:\n{got_results}\n--- expected ---\n{want_results}")
            if diff != want_diff:
                problems.append(f"run {count + 1}: diff differs:\n{diff}\n--- expected ---\n{want_diff}")
            if problems or done.returncode != 0:
                return [f"{case.name}: {problem}" for problem in problems]
    return []
