"""Start-up: what a command imports, and the files generated into the package so that it need not build them.

mpigen runs once per kustomize generator, KRM call and pre-commit hook, so its start-up is its speed
(benchmarks/bench_startup.py measures it). These tests pin the causes, not the times: which modules a
render imports, and that the generated files equal what their tools would write now.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jobs import V1, V1ALPHA1, V1ALPHA2, V2BETA1, job_yaml, load_all, make_job, pod

from mpigen.checks.kube import schemas as kubeschema
from mpigen.checks.kube.versions import default_kube_version
from mpigen.compiler import compile_job
from mpigen.inputs import FRONTS
from mpigen.options import Options
from mpigen.reference import REFERENCE, VARIABLE
from mpigen.targets.shared._fast_templates import TEMPLATES
from mpigen.targets.shared.templating import jinja_environment

ROOT = Path(__file__).resolve().parents[3]

# A test of what a stand-in spares (mpigen.reference) has nothing to test when MPIGEN_REFERENCE=1 makes
# every stand-in decline: `one_way` leaves it out of tests/acceptance/test_reference.py's pass, and a
# run of its own under the switch skips it.
_skipped_under_the_switch = pytest.mark.skipif(
    REFERENCE, reason=f"{VARIABLE}=1: every call takes the library path"
)


def pins_a_stand_in(test: Callable[..., Any]) -> Callable[..., Any]:
    return pytest.mark.one_way(_skipped_under_the_switch(test))


def _tool(name: str) -> ModuleType:
    """A developer tool from tools/ (not part of the installed package)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


kubeschemas = _tool("kubeschemas")


def test_the_shipped_kubernetes_schemas_are_current() -> None:
    files = kubeschemas.shipped()
    assert files, "no mpigen/checks/kube/strict-*.json: run python tools/kubeschemas.py"
    for version, path in files.items():
        assert Path(path).read_text(encoding="utf-8") == kubeschemas.generate(version), (
            f"{path} is stale: run python tools/kubeschemas.py"
        )


def test_the_newest_kubernetes_version_is_shipped_with_every_emitted_kind() -> None:
    version = default_kube_version()
    for api_version, kind in kubeschemas.EMITTED:
        assert kubeschema.shipped_schema(version, kubeschema.shipped_key(api_version, kind)) is not None
    assert kubeschema.shipped_schema(version, kubeschema.POD_TEMPLATE_SPEC) is not None
    data = json.loads(Path(kubeschema.shipped_file(version)).read_text(encoding="utf-8"))
    assert '"description"' not in json.dumps(data)  # annotations dropped


templategen = _tool("templategen")


def test_the_compiled_templates_are_current() -> None:
    assert templategen.TARGET.read_text(encoding="utf-8") == templategen.generate(), (
        "mpigen/targets/shared/_fast_templates.py is stale: run python tools/templategen.py"
    )


JOBS = [
    make_job(V1ALPHA1, workers=3),
    make_job(V1ALPHA2, workers=3, cleanPodPolicy="All"),
    make_job(V2BETA1, workers=3, runPolicy={"cleanPodPolicy": "Running"}),
    make_job(V2BETA1, workers=2, mpiImplementation="Intel", launcherCreationPolicy="WaitForWorkersReady"),
    make_job(V1, workers=2, mainContainer="worker"),
    make_job(V1, workers=2),
    make_job(V1, workers=2, mainContainer="worker", annotations={"mpigen.dev/target": "jobset"}),
]


@pins_a_stand_in
def test_every_compiled_template_renders_as_jinja2_does(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each template, rendered by the compiled function and by jinja2 from the same values: the values
    compiling real jobs passes, and the same with strings a shell would expand."""
    seen: dict[str, list[dict[str, Any]]] = {}

    def recording(name: str, function: Callable[[dict[str, Any]], str]) -> Callable[[dict[str, Any]], str]:
        return lambda values: seen.setdefault(name, []).append(dict(values)) or function(values)

    for name, function in list(TEMPLATES.items()):
        monkeypatch.setitem(TEMPLATES, name, recording(name, function))
    for job in JOBS:
        compile_job(job, Options(namespace="ml"))
    assert sorted(seen) == sorted(p.name for p in templategen.TEMPLATES.glob("*.j2"))
    monkeypatch.undo()
    odd = ["a b", "it's", "$(rm -rf /)", "ü\nß", "", 0]
    for name, calls in seen.items():
        template = jinja_environment().from_string((templategen.TEMPLATES / name).read_text(encoding="utf-8"))
        for values in calls + [{key: _odd(value, odd) for key, value in calls[0].items()}]:
            assert TEMPLATES[name](values) == template.render(**values), name


def _odd(value: Any, odd: list[Any]) -> Any:
    return odd if isinstance(value, list) else odd[len(str(value)) % len(odd)]


def test_a_missing_template_value_is_an_error() -> None:
    with pytest.raises(KeyError):
        TEMPLATES["kubexec.sh.j2"]({})


# What a command may not import on the way to its output for valid input: the pydantic models (an invalid
# document's messages need them), jinja2 (the templates are compiled into mpigen/targets/shared/_fast_templates.py),
# JSON Schema (an invalid object's messages need it), kubernetes-validate's own code, the KRM function's
# YAML library, and the code of the other commands.
NOT_IMPORTED = {
    "pydantic",
    "pydantic_core",
    "jinja2",
    "jsonschema",
    "referencing",
    "kubernetes_validate",
    "ruamel",
    "mpigen.shells.krm",
    "mpigen.shells.validate",
    "mpigen.shells.schema",
    "mpigen.shells.kustomize_plugin",
}
RECORD = (
    "import atexit, runpy, sys\n"
    "out, sys.argv = sys.argv[1], ['mpigen', *sys.argv[2:]]\n"
    "atexit.register(lambda: open(out, 'w').write('\\n'.join(sorted(sys.modules))))\n"
    "runpy.run_module('mpigen', run_name='__main__', alter_sys=True)\n"
)


def imported(
    fresh_python: str,
    tmp_path: Path,
    *args: str,
    stdin: str | None = None,
    code: int = 0,
    reference: bool = False,
) -> set[str]:
    """The modules a `mpigen ARGS` process has imported when it exits (this checkout's mpigen);
    `reference`: with MPIGEN_REFERENCE=1."""
    out = tmp_path / "modules.txt"
    env = {**os.environ, "PYTHONPATH": str(ROOT), VARIABLE: "1" if reference else ""}
    result = subprocess.run(
        [fresh_python, "-c", RECORD, str(out), *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert result.returncode == code, result.stderr
    return set(out.read_text().split())


def top_level(modules: set[str]) -> set[str]:
    return {
        name for name in NOT_IMPORTED if name in modules or any(m.startswith(name + ".") for m in modules)
    }


@pins_a_stand_in
@pytest.mark.parametrize("api_version", [version for version, _ in FRONTS])
def test_render_of_a_valid_job_imports_no_model_template_or_schema_library(
    fresh_python: str, tmp_path: Path, api_version: str
) -> None:
    """Every front: a new input version must keep pydantic off the path of a valid job (declare its
    models with mpigen.inputs.model's Strict and Field, not pydantic's)."""
    path = tmp_path / "job.yaml"
    path.write_text(
        job_yaml(api_version, 2, cleanPodPolicy="All")
        if api_version == V1ALPHA2
        else job_yaml(api_version, 2)
    )
    modules = imported(fresh_python, tmp_path, "render", str(path))
    assert top_level(modules) == set()
    assert {
        "mpigen.targets.shared._fast_templates",
        "mpigen.checks.kube._fast_schema",
        "mpigen.yaml._fast_read",
    } <= modules  # it did render and validate
    assert (
        "yaml" not in modules
    )  # a block-style job is read (mpigen.yaml._fast_read) and written (mpigen.yaml._fast_emit) without PyYAML


@pins_a_stand_in
def test_validate_and_the_krm_function_import_no_model_template_or_schema_library(
    fresh_python: str, tmp_path: Path
) -> None:
    path = tmp_path / "job.yaml"
    path.write_text(job_yaml(V2BETA1, 2))
    assert top_level(imported(fresh_python, tmp_path, "validate", str(path))) <= {"mpigen.shells.validate"}
    resource_list = f"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- {job_yaml(V1ALPHA2).replace(chr(10), chr(10) + '  ')}"
    modules = imported(fresh_python, tmp_path, "krm", stdin=resource_list)
    assert top_level(modules) <= {
        "ruamel",
        "mpigen.shells.krm",
    }  # the KRM function keeps comments with ruamel.yaml


# What a valid job's render, validate or KRM call may not import either: hashlib (OpenSSL's start-up;
# the KRM function's placeholder digest is the built-in BLAKE2's), PyYAML, a third of the start-up
# (block-style YAML is read by mpigen.yaml._fast_read, written by mpigen.yaml._fast_emit), and
# dataclasses with the inspect it imports (with ast, dis and tokenize; about a millisecond more for each
# class it makes): mpigen's records are NamedTuples and classes with __slots__. Nor copy (a
# document tree is copied by mpigen.tree), numbers, or fractions and decimal (a v1alpha1 job's whole
# number of GPUs is read without them).
SLOW_STDLIB = {
    "hashlib",
    "yaml",
    "dataclasses",
    "inspect",
    "copy",
    "numbers",
    "fractions",
    "decimal",
}
# The pod rules for fields a plain template lacks (mpigen.checks.pod's gated rows) load only for a
# template that has them.
GATED_POD_RULES = {
    f"mpigen.checks.pod.{name}"
    for name in (
        "annotated",
        "apparmor",
        "seccomp",
        "probes",
        "podresources",
        "platform",
        "drivers",
        "ephemeral",
        "scheduling",
    )
}
# Records every `import NAME` (or `from NAME import ...`) of SLOW_STDLIB, with the importing module's
# name, loaded already or not, so that one importer cannot hide another.
RECORD_IMPORTERS = (
    "import atexit, builtins, runpy, sys\n"
    "out, sys.argv = sys.argv[1], ['mpigen', *sys.argv[2:]]\n"
    "seen, real = set(), builtins.__import__\n"
    "def spy(name, globals=None, locals=None, fromlist=(), level=0):\n"
    f"    if level == 0 and name in {sorted(SLOW_STDLIB)!r}:\n"
    "        seen.add((globals or {}).get('__name__', '?') + ' ' + name)\n"
    "    return real(name, globals, locals, fromlist, level)\n"
    "builtins.__import__ = spy\n"
    "atexit.register(lambda: open(out, 'w').write('\\n'.join(sorted(seen | set(sys.modules)))))\n"
    "runpy.run_module('mpigen', run_name='__main__', alter_sys=True)\n"
)


@pins_a_stand_in
def test_a_valid_job_is_compiled_without_hashlib_pyyaml_or_dataclasses(
    fresh_python: str, tmp_path: Path
) -> None:
    path = tmp_path / "job.yaml"
    path.write_text(job_yaml(V2BETA1, 2))
    sized = tmp_path / "v1alpha1.yaml"  # sized by its GPU limit
    sized.write_text(
        job_yaml(V1ALPHA1, None, gpus=4, worker=pod("worker", resources={"limits": {"nvidia.com/gpu": "2"}}))
    )
    resource_list = f"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- {job_yaml(V1ALPHA2).replace(chr(10), chr(10) + '  ')}"
    out = tmp_path / "modules.txt"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for args, stdin in (
        (["render", str(path)], None),
        (["validate", str(path)], None),
        (["render", str(sized)], None),
        (["krm"], resource_list),
    ):
        result = subprocess.run(
            [fresh_python, "-c", RECORD_IMPORTERS, str(out), *args],
            input=stdin,
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        assert result.returncode == 0, result.stderr
        lines = out.read_text().splitlines()
        modules = {line for line in lines if " " not in line}
        importers = {tuple(line.split(" ")) for line in lines if " " in line}
        assert {"mpigen.compiler", "mpigen.checks.kube._fast_schema", "mpigen.yaml.reader"} <= modules, (
            args
        )  # it did compile and validate
        # the standard library's own imports among them go with their importer
        assert {(importer, name) for importer, name in importers if importer not in SLOW_STDLIB} == set(), (
            args
        )
        assert not SLOW_STDLIB & modules, args
        assert not GATED_POD_RULES & modules, args
        assert "mpigen.checks.pod.volumes" in modules, args  # the pod rules did run


# What a render of a valid job no longer imports: click (the call names nothing but paths, so mpigen.cli
# runs it without parsing), importlib.resources with tempfile and pathlib (the templates are compiled and
# the shipped schemas read by path), difflib (only "did you mean" hints), fractions and decimal (only a
# gang's minResources and v1alpha1's processing limits), PyYAML (a block-style job needs neither its
# parser nor its emitter).
NOT_IMPORTED_BY_A_PLAIN_RENDER = {
    "click",
    "importlib.resources",
    "tempfile",
    "pathlib",
    "difflib",
    "fractions",
    "decimal",
    "uuid",
    "yaml",
}


def at_start(fresh_python: str) -> set[str]:
    """The modules the interpreter has imported before mpigen starts (site-packages' .pth files: an
    editable install's finder loads pathlib and importlib.resources)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    code = "import sys; print('\\n'.join(sys.modules))"
    return set(
        subprocess.run(
            [fresh_python, "-c", code], capture_output=True, text=True, env=env, check=True
        ).stdout.split()
    )


@pins_a_stand_in
@pytest.mark.parametrize("command", ["render", "validate"])
def test_a_call_with_nothing_but_paths_runs_without_click(
    fresh_python: str, tmp_path: Path, command: str
) -> None:
    path = tmp_path / "job.yaml"
    path.write_text(job_yaml(V1ALPHA2, 2))
    modules = imported(fresh_python, tmp_path, command, str(path)) - at_start(fresh_python)
    assert {name for name in NOT_IMPORTED_BY_A_PLAIN_RENDER if name in modules} == set()
    assert (
        "mpigen.targets.shared._fast_templates" in modules and "mpigen.checks.kube._fast_schema" in modules
    )  # it did render and validate


@pins_a_stand_in
def test_the_krm_function_runs_without_click(fresh_python: str, tmp_path: Path) -> None:
    resource_list = f"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- {job_yaml(V1ALPHA2).replace(chr(10), chr(10) + '  ')}"
    for args in (["krm"], []):
        modules = imported(fresh_python, tmp_path, *args, stdin=resource_list)
        assert "click" not in modules and "mpigen.krm.protocol" in modules


# Flags a call may give and still run without click (mpigen.shells._fast_args.plain_call), and calls click
# must parse: help, `--`, a flag it does not read, a value its flag refuses, a flag given twice.
PLAIN_FLAGS = [
    ["-n", "ml"],
    ["--namespace=ml"],
    ["--no-validate"],
    ["--kube-version", "1.30"],
    ["--kube-version=v1.30"],
    ["-o", "json"],
    ["--gang-scheduler", "volcano", "--scheduler-name", "gang"],
    ["--wait-timeout", "30", "--gpus-per-node", "4"],
    ["--kubectl-delivery-image", "example.com/kubectl:1", "--processing-resource-type=cpu"],
    ["--allow-empty"],
    ["--cluster-domain", "cluster.local", "--ssh-secret", "keys"],
]
CLICK_FLAGS = [
    ["-n", "Not_A_Namespace"],
    ["--namespace="],
    ["--wait-timeout", "0"],
    ["--kube-version", "1.2"],
    ["-o", "xml"],
    ["--scheduler-name", "gang"],
    ["-n", "a", "-n", "b"],
    ["--gang-scheduler", "kube"],
    ["--no-such-flag"],
    ["-nml"],
    ["--no-validate=true"],
    ["-n", "-x"],
]


@pins_a_stand_in
def test_common_flags_run_without_click_and_help_or_a_refused_value_loads_it(
    fresh_python: str, tmp_path: Path
) -> None:
    path = tmp_path / "job.yaml"
    path.write_text(job_yaml(V1ALPHA2, 2))
    for flags in PLAIN_FLAGS:
        for command in ("render", "validate"):
            assert "click" not in imported(fresh_python, tmp_path, command, *flags, str(path)), (
                command,
                flags,
            )
    for flags in (["--wait-timeout", "0"], ["-o", "xml"], ["--no-such-flag"]):  # usage errors: click's words
        assert "click" in imported(fresh_python, tmp_path, "render", *flags, str(path), code=2)
    assert "click" in imported(fresh_python, tmp_path, "render", "--help")
    assert "click" in imported(fresh_python, tmp_path, "render", "-n", "ml", "--", str(path))


# Runs many `mpigen` calls, each in a process of its own forked from one interpreter that has imported
# every module of mpigen (and so click and the libraries) once: a call's own start-up is what the tests
# above pin, and these compare only what each way says, which an interpreter's start would cost most of.
# Each child runs mpigen.cli.main as `python -m mpigen` does, on its own stdin, stdout, stderr and exit.
FORKED = """
import json, os, sys, tempfile
calls_file, results_file = sys.argv[1:]
calls = json.load(open(calls_file))
import importlib, pkgutil, mpigen
for module in pkgutil.walk_packages(mpigen.__path__, "mpigen."):
    if module.name != "mpigen.__main__":
        importlib.import_module(module.name)
results = []
for cwd, args, stdin in calls:
    with tempfile.TemporaryFile() as given, tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        given.write((stdin or "").encode())
        given.seek(0)
        pid = os.fork()
        if pid == 0:
            code = 70
            try:
                os.chdir(cwd)
                for fd, file in ((0, given), (1, out), (2, err)):
                    os.dup2(file.fileno(), fd)
                sys.argv = ["mpigen", *args]
                importlib.import_module("mpigen.cli").main()
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
                for stream in (sys.stdout, sys.stderr):
                    stream and stream.flush()
            finally:
                os._exit(code)
        status = os.waitpid(pid, 0)[1]
        out.seek(0)
        err.seek(0)
        results.append([os.waitstatus_to_exitcode(status), out.read().decode(), err.read().decode()])
json.dump(results, open(results_file, "w"))
"""


def _run_all(
    fresh_python: str, cwd: Path, calls: list[tuple[list[str], str | None]]
) -> list[tuple[int, str, str]]:
    """(exit code, stdout, stderr) of `mpigen ARGS` with STDIN (None: empty) in `cwd`, for each call."""
    with tempfile.TemporaryDirectory() as exchange:
        given, answers = Path(exchange) / "calls.json", Path(exchange) / "results.json"
        given.write_text(json.dumps([[str(cwd), args, stdin] for args, stdin in calls]))
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        done = subprocess.run(
            [fresh_python, "-c", FORKED, str(given), str(answers)],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return [(code, stdout, stderr) for code, stdout, stderr in json.loads(answers.read_text())]


@pins_a_stand_in
def test_a_call_run_without_click_says_what_click_would(fresh_python: str, tmp_path: Path) -> None:
    """The same call with `--` before the paths goes through click: same output, messages and exit code,
    for a valid job, one with a warning, invalid ones, an unreadable file, a directory and the KRM function."""
    (tmp_path / "jobs").mkdir()
    files = {
        "valid.yaml": job_yaml(V2BETA1, 2),
        "warning.yaml": job_yaml(V2BETA1, 2, runPolicy={"managedBy": "kueue.x-k8s.io/multikueue"}),
        "invalid.yaml": job_yaml(V1ALPHA2, 2, slotsPerWorker="2"),
        "jobs/a.yaml": job_yaml(V1, 2),
        "jobs/b.yaml": job_yaml(V1ALPHA1, 3, name="other"),
        "broken.yaml": "a: [\n",
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "empty.yaml").write_text("")
    calls: list[tuple[list[str], list[str]]] = [([], [name]) for name in files if "/" not in name]
    calls += [
        ([], ["jobs"]),
        ([], ["valid.yaml", "jobs"]),
        ([], ["missing.yaml"]),
        ([], ["valid.yaml", "invalid.yaml"]),
    ]
    calls += [(flags, ["valid.yaml"]) for flags in PLAIN_FLAGS]
    calls += [
        (["--no-validate"], ["invalid.yaml"]),
        (["-f", "valid.yaml"], ["jobs"]),
        (["--allow-empty"], ["empty.yaml"]),
        ([], ["empty.yaml"]),
    ]
    calls += [(flags, ["valid.yaml"]) for flags in CLICK_FLAGS]
    resource_list = f"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- {files['warning.yaml'].replace(chr(10), chr(10) + '  ')}"
    stdins = (
        resource_list,
        resource_list.replace("slotsPerWorker: 1", "slotsPerWorker: '1'"),
        "kind: Other\n",
    )
    runs: list[tuple[list[str], str | None]] = [
        (argv, None)
        for flags, paths in calls
        for command in ("render", "validate")
        for argv in ([command, *flags, *paths], [command, *flags, "--", *paths])
    ]
    runs += [(argv, stdin) for stdin in stdins for argv in (["krm"], ["krm", "--"], [])]
    results = iter(_run_all(fresh_python, tmp_path, runs))
    seen = set()
    for flags, paths in calls:
        for command in ("render", "validate"):
            plain = next(results)
            assert plain == next(results), (command, flags, paths)
            seen.add(plain[0])
    assert seen == {0, 1, 2}
    for _ in stdins:
        plain = next(results)
        assert plain == next(results) == next(results)


@pins_a_stand_in
def test_the_kustomize_plugin_runs_without_click_and_says_what_click_would(
    fresh_python: str, tmp_path: Path
) -> None:
    (tmp_path / "valid.yaml").write_text(job_yaml(V1ALPHA2, 2))
    (tmp_path / "invalid.yaml").write_text(job_yaml(V1ALPHA2, 2, slotsPerWorker="2"))
    names = ("valid.yaml", "invalid.yaml", "missing.yaml")
    runs: list[tuple[list[str], str | None]] = [
        (argv, None)
        for name in names
        for argv in (["kustomize-plugin", "run", name], ["kustomize-plugin", "run", "--", name])
    ]
    results = iter(_run_all(fresh_python, tmp_path, runs))
    for name in names:
        plain = next(results)
        assert plain == next(results), name
        assert plain[0] == (0 if name == "valid.yaml" else 1)
    assert "click" not in imported(
        fresh_python, tmp_path, "kustomize-plugin", "run", str(tmp_path / "valid.yaml")
    )
    assert "click" in imported(
        fresh_python, tmp_path, "kustomize-plugin", "run", str(tmp_path), code=2
    )  # a directory: click's usage error


def test_an_invalid_job_is_explained_by_pydantic(fresh_python: str, tmp_path: Path) -> None:
    path = tmp_path / "job.yaml"
    path.write_text(job_yaml(V1ALPHA2, 2, slotsPerWorker="2"))
    assert "pydantic" in imported(fresh_python, tmp_path, "render", str(path), code=1)


def test_the_reference_switch_sends_every_call_to_the_libraries(fresh_python: str, tmp_path: Path) -> None:
    """MPIGEN_REFERENCE=1: the YAML is read by libyaml and written by PyYAML, the job checked by pydantic,
    the objects by jsonschema, the scripts rendered by jinja2 and the call parsed by click; the bytes
    are the same."""
    path = tmp_path / "job.yaml"
    path.write_text(job_yaml(V2BETA1, 2, mpiImplementation="Intel"))
    libraries = {"yaml", "pydantic", "jsonschema", "jinja2", "click"}
    assert libraries <= imported(fresh_python, tmp_path, "render", str(path), reference=True)
    assert not libraries & imported(fresh_python, tmp_path, "render", str(path))
    resource_list = f"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- {job_yaml(V1ALPHA2).replace(chr(10), chr(10) + '  ')}"
    assert {"yaml", "pydantic", "jsonschema", "jinja2"} <= imported(
        fresh_python, tmp_path, "krm", stdin=resource_list, reference=True
    )
    outputs = set()
    for value in ("", "1"):
        env = {**os.environ, "PYTHONPATH": str(ROOT), VARIABLE: value}
        result = subprocess.run(
            [fresh_python, "-m", "mpigen", "render", str(path)],
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
        outputs.add(result.stdout)
    assert len(outputs) == 1 and "kind: StatefulSet" in outputs.pop()


@pytest.mark.parametrize("target", ["jobset", "volcano"])
@pytest.mark.parametrize("version", ["v1alpha2", "v2beta1"])
def test_a_run_target_renders_without_the_libraries(
    fresh_python: str, tmp_path: Path, target: str, version: str
) -> None:
    """A JobSet or Volcano Job passes the quick check as the built-in kinds do (its CRD schema's array and
    string sizes and defaults included): no jsonschema, and as fast as the default target."""
    path = tmp_path / "job.yaml"
    path.write_text(job_yaml(V2BETA1 if version == "v2beta1" else V1ALPHA2, 2))
    libraries = {"yaml", "pydantic", "jsonschema", "jinja2", "click"}
    assert not libraries & imported(fresh_python, tmp_path, "render", "--target", target, str(path))


# The emitter's shortcut (mpigen/yaml/dump.py builds PyYAML's nodes itself and remembers resolved tags) must
# write what PyYAML's own representer writes, byte for byte.
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats()
    | st.text(max_size=8)
    | st.sampled_from(
        [
            "",
            "yes",
            "0123",
            "1e3",
            "~",
            "null",
            "a\n",
            "a\n\n",
            "\n",
            " a\n",
            "a: b",
            "- x",
            "é",
            "#",
            "'",
            '"',
            "1.5",
        ]
    )
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=12,
)


def reference_yaml(objects: list[Any]) -> str:
    import yaml

    from mpigen.yaml.dump import _dumper

    class Reference(_dumper()):  # type: ignore[misc]
        represent = yaml.representer.BaseRepresenter.represent
        resolve = yaml.resolver.BaseResolver.resolve

    options = {"default_flow_style": False, "sort_keys": False, "allow_unicode": True, "width": 1 << 16}
    return "---\n".join(yaml.dump(obj, Dumper=Reference, **options) for obj in objects)


@pytest.mark.slow  # a hypothesis property: 300 generated streams
@settings(max_examples=300, derandomize=True, database=None, deadline=None)
@given(st.lists(st.dictionaries(st.text(max_size=5), VALUES, max_size=4), max_size=3))
def test_the_emitter_writes_what_pyyaml_writes(objects: list[dict[str, Any]]) -> None:
    from mpigen.yaml.dump import to_yaml

    assert to_yaml(objects) == reference_yaml(objects)


@pytest.mark.slow  # every golden output twice; tests/unit/yaml/test_yaml_fast.py checks the writer on them quickly
def test_the_emitter_writes_the_golden_outputs_as_pyyaml_does() -> None:
    from mpigen.yaml.dump import to_yaml

    for path in sorted((ROOT / "golden").glob("*/expected.yaml")):
        objects = [obj for obj in load_all(path.read_text(encoding="utf-8")) if obj is not None]  # by libyaml
        assert to_yaml(objects) == reference_yaml(objects) == path.read_text(encoding="utf-8"), path
