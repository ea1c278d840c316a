"""The package's layout holds: imports go one way (docs/explanation/design.md, "The stages").

The layers, top to bottom: the shells; the KRM function; the stream (pipeline, per-resource report);
the compiler; the run targets; the input fronts; the checks; the vocabulary and the YAML subsystem. A
module imports its own layer or one below, never one above; a target never imports another target.

Read from the source (every `import`, at module level or inside a function, counts; an `if
TYPE_CHECKING:` block does not run), so a lazy import that reaches back up the chain fails here as surely
as a top-level one.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "mpigen"

# The command modules: each imports the core and the shells' shared helpers, never another command.
COMMANDS = {
    "render",
    "validate",
    "convert",
    "schema",
    "krm",
    "kustomize_plugin",
    "completion",
    "exec_policy",
    "argocd",
}
SHARED_SHELL_HELPERS = {
    "mpigen.shells.common",
    "mpigen.shells.flags",
    "mpigen.shells.bounded",
    "mpigen.shells.outdir",
    "mpigen.shells.streams",
    "mpigen.shells._fast_args",
}
# The root group as click parses it (mpigen.cli runs the calls that need no parsing without it).
ROOT_GROUP = "mpigen.shells.group"
# The only modules that may touch click, files, stdout or the process: the shells and the root group.
SHELL_PREFIXES = ("mpigen.shells", "mpigen.cli", "mpigen.__main__")

# Top to bottom. A module belongs to the first layer that names it or a package above it; `mpigen.targets`
# itself (the table of targets and the Target protocol) is vocabulary, the folders under it are not.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("shells", SHELL_PREFIXES),
    ("krm", ("mpigen.krm",)),
    ("stream", ("mpigen.pipeline", "mpigen.per_resource")),
    ("compiler", ("mpigen.compiler", "mpigen.convert")),
    ("targets", ("mpigen.targets.",)),
    ("inputs", ("mpigen.inputs",)),
    ("checks", ("mpigen.checks",)),
    (
        "vocabulary",
        (
            "mpigen.targets",
            "mpigen.options",
            "mpigen.placement",
            "mpigen.errors",
            "mpigen.names",
            "mpigen.plan",
            "mpigen.outcome",
            "mpigen.reference",
            "mpigen.quantity",
            "mpigen.tree",
            "mpigen.records",
            "mpigen.gitops",
            "mpigen.yaml",
        ),
    ),
)
# The package itself re-exports the compiler's API lazily (importlib, by name): it sits with the stream.
PACKAGE_LAYER = "stream"


def _modules() -> dict[str, Path]:
    modules = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        modules[name] = path
    return modules


MODULES = _modules()


def _runtime_nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node that can run: an `if TYPE_CHECKING:` block only names types for the checker."""
    nodes: list[ast.AST] = []
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            stack.extend(node.orelse)
            continue
        nodes.append(node)
        stack.extend(ast.iter_child_nodes(node))
    return nodes


def _imports(name: str) -> set[str]:
    """Every module `name` imports (mpigen's own as dotted names, others by their top-level name)."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in _runtime_nodes(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            for alias in node.names:
                full = f"{module}.{alias.name}"
                found.add(full if full in MODULES else module)
    return {module if module.startswith("mpigen") else module.partition(".")[0] for module in found} - {name}


GRAPH = {name: {m for m in _imports(name) if m in MODULES} for name in MODULES}


def _layer(name: str) -> int:
    if name == "mpigen":
        return [layer for layer, _ in LAYERS].index(PACKAGE_LAYER)
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if name == prefix or name.startswith(prefix if prefix.endswith(".") else prefix + "."):
                return index
    raise AssertionError(f"{name} is in no layer: add it to LAYERS in tests/test_layout.py")


# mpigen/targets/shared/: what the targets share; a folder beside them, not a target.
SHARED_BY_TARGETS = "shared"


def _target_of(name: str) -> str | None:
    """The target folder `name` is in (mpigen.targets.<target>...), or None."""
    parts = name.split(".")
    in_folder = len(parts) > 2 and parts[:2] == ["mpigen", "targets"] and parts[2] != SHARED_BY_TARGETS
    return parts[2] if in_folder and (PACKAGE / "targets" / parts[2]).is_dir() else None


def _is_shell(name: str) -> bool:
    return name.startswith(SHELL_PREFIXES)


def test_the_module_list_is_read() -> None:
    assert {"mpigen.compiler", "mpigen.shells.render", "mpigen.krm.protocol", "mpigen.inputs.v2beta1"} <= set(
        MODULES
    )
    assert "mpigen.plan" in GRAPH["mpigen.compiler"] or "mpigen.plan" in GRAPH["mpigen.inputs"]


def test_no_module_imports_itself_back_through_others() -> None:
    """No import cycle, lazy imports included."""
    seen: dict[str, int] = {}  # 1 on the current path, 2 done

    def visit(name: str, path: list[str]) -> None:
        seen[name] = 1
        for target in sorted(GRAPH[name]):
            if seen.get(target) == 1:
                cycle = path[path.index(target) :] + [target]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if target not in seen:
                visit(target, [*path, target])
        seen[name] = 2

    for name in sorted(GRAPH):
        if name not in seen:
            visit(name, [name])


@pytest.mark.parametrize("name", sorted(name for name in MODULES if not _is_shell(name)))
def test_the_core_never_imports_a_shell_or_click(name: str) -> None:
    imports = _imports(name)
    assert not {m for m in imports if _is_shell(m)}, f"{name} imports a shell"
    assert "click" not in imports, f"{name} imports click: only the shells take command-line input"


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_command_never_imports_another_command(command: str) -> None:
    name = f"mpigen.shells.{command}"
    others = {m for m in GRAPH[name] if m.startswith("mpigen.shells.") and m not in SHARED_SHELL_HELPERS}
    # completion prints the root group's completion script, so it reads the root group (not a command)
    assert not others, f"{name} imports {sorted(others)}"


def test_the_shared_shell_helpers_import_no_command() -> None:
    for name in SHARED_SHELL_HELPERS:
        commands = {
            m for m in GRAPH[name] if m.rpartition(".")[2] in COMMANDS and m.startswith("mpigen.shells.")
        }
        assert not commands, f"{name} imports {sorted(commands)}"


def test_every_command_module_is_known_here() -> None:
    """A new command module joins COMMANDS (or the helpers), so the rules above cover it."""
    shells = {name.rpartition(".")[2] for name in MODULES if name.startswith("mpigen.shells.")}
    assert shells == COMMANDS | {m.rpartition(".")[2] for m in SHARED_SHELL_HELPERS | {ROOT_GROUP}}


def test_the_core_reads_no_file_and_prints_nothing() -> None:
    """Outside the shells, no `open(`, `print(`, `sys.exit(`, `sys.stdin`/`sys.stdout` (STYLE.md §1)."""
    offenders = []
    for name, path in MODULES.items():
        if _is_shell(name):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in {"open", "print", "input"}
            ):
                offenders.append(f"{name}:{node.lineno} {node.func.id}()")
            is_sys = (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == "sys"
            )
            if is_sys and node.attr in {"exit", "stdin", "stdout", "stderr", "argv"}:  # type: ignore[attr-defined]
                offenders.append(f"{name}:{node.lineno} sys.{node.attr}")
    assert not offenders, offenders


def test_the_core_reads_its_environment_in_one_place() -> None:
    """Outside the shells only mpigen.reference reads the environment (the MPIGEN_REFERENCE switch)."""
    offenders = []
    for name, path in MODULES.items():
        if _is_shell(name) or name == "mpigen.reference":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in {"environ", "getenv", "environb", "putenv"}:
                offenders.append(f"{name}:{node.lineno} {node.attr}")
            if (
                isinstance(node, ast.ImportFrom)
                and node.module == "os"
                and {a.name for a in node.names} & {"environ", "getenv"}
            ):
                offenders.append(f"{name}:{node.lineno} from os import")
    assert not offenders, offenders


@pytest.mark.parametrize("name", sorted(MODULES))
def test_imports_go_down_the_layers(name: str) -> None:
    """Lazy imports included: a module imports its own layer or one below it."""
    up = sorted(m for m in GRAPH[name] if _layer(m) < _layer(name))
    assert not up, f"{name} ({LAYERS[_layer(name)][0]}) imports {up} from above it"


@pytest.mark.parametrize("name", sorted(name for name in MODULES if name.startswith("mpigen.targets.")))
def test_a_target_never_imports_another_target(name: str) -> None:
    """What two targets share lives beside mpigen/targets/__init__.py (mpigen.targets.canonical, mpigen.targets.shared), in no target."""
    own = _target_of(name)
    others = sorted(m for m in GRAPH[name] if _target_of(m) not in (None, own))
    assert not others, f"{name} imports {others}"


def test_every_target_folder_is_a_row_of_the_table_and_back() -> None:
    """A new target is a new folder plus one row in mpigen.targets.TARGETS; the row names the folder."""
    from mpigen.targets import TARGETS, target

    folders = {
        path.name
        for path in (PACKAGE / "targets").iterdir()
        if path.is_dir() and (path / "__init__.py").exists()
    }
    folders.discard(SHARED_BY_TARGETS)
    assert {module.rpartition(".")[2] for module in TARGETS.values()} == folders
    assert all(module == f"mpigen.targets.{module.rpartition('.')[2]}" for module in TARGETS.values())
    for name in TARGETS:
        assert target(name).name == name


def test_every_package_folder_ships_in_the_wheel() -> None:
    """pyproject.toml lists the packages by hand (two of them are mapped from the top-level schemas/ and
    templates/); a folder missing from that list works in an editable install and is absent from a wheel."""
    import tomllib

    listed = set(
        tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    )
    folders = {
        ".".join(init.parent.relative_to(PACKAGE.parent).parts) for init in PACKAGE.rglob("__init__.py")
    }
    assert folders - listed == set(), "add these to [tool.setuptools] packages in pyproject.toml"
    assert listed - folders == {"mpigen.schemas", "mpigen.templates"}


# The words that name another project's objects: they belong to the target that builds them (and the
# option table's help text), nowhere else (issue #37's grep).
TARGET_WORDS = re.compile(r'jobset\.x-k8s\.io|batch\.volcano\.sh|"JobSet"')
OPTION_TABLE = "mpigen.options"


def test_only_a_target_names_its_objects() -> None:
    """`grep -rnE 'jobset\\.x-k8s\\.io|batch\\.volcano\\.sh|"JobSet"' mpigen` finds nothing outside the targets'
    own folders and the option table."""
    found = [
        f"{name}:{number}"
        for name, path in MODULES.items()
        if _target_of(name) is None and name != OPTION_TABLE
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if TARGET_WORDS.search(line)
    ]
    assert not found, found


def _targets_reaching(name: str) -> set[str]:
    """The targets whose modules import `name`, directly or through other modules."""
    reached: set[str] = set()
    for start in MODULES:
        own = _target_of(start)
        if own is None or own in reached:
            continue
        seen, stack = {start}, [start]
        while stack:
            for module in GRAPH[stack.pop()] - seen:
                seen.add(module)
                stack.append(module)
        if name in seen:
            reached.add(own)
    return reached


@pytest.mark.parametrize(
    "name", sorted(name for name in MODULES if name.startswith(f"mpigen.targets.{SHARED_BY_TARGETS}."))
)
def test_what_only_one_target_uses_lives_in_its_folder(name: str) -> None:
    """mpigen/targets/shared/ holds what two targets or more build with; one target's own code is in its folder."""
    reached = _targets_reaching(name)
    assert len(reached) >= 2, f"{name} serves only {sorted(reached)}: move it into that target's folder"


def test_every_target_is_checked_against_the_protocol() -> None:
    """`TARGET: Target = ...`, so that mypy --strict holds each target to mpigen.targets.Target (and its
    optional abilities to theirs: a capability it names is one it implements)."""
    from mpigen.targets import CAPABILITIES, TARGETS, NativeGangTarget, TrainJobRunner, target

    protocols = {"trainjob": TrainJobRunner, "native-gang": NativeGangTarget}
    assert set(protocols) == set(CAPABILITIES)
    for name, module in TARGETS.items():
        tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
        annotated = [
            node
            for node in tree.body
            if isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and node.target.id == "TARGET"
            and isinstance(node.annotation, ast.Name)
            and node.annotation.id == "Target"
        ]
        assert annotated, f"{module}: write `TARGET: Target = ...`"
        run = target(name)
        assert run.capabilities <= set(CAPABILITIES), name
        for capability, protocol in protocols.items():
            assert (capability in run.capabilities) == isinstance(run, protocol), (name, capability)


def test_every_target_declares_its_own_kinds_in_its_folder() -> None:
    """A target's `kinds` module lists the kinds it emits that Kubernetes does not define; each has a
    vendored schema, and no two targets claim one kind."""
    from mpigen.targets import TARGETS, target

    seen: dict[tuple[str, str], str] = {}
    for name, module in TARGETS.items():
        assert f"{module}.kinds" in MODULES, f"{module}: add kinds.py (KINDS may be empty)"
        for kind in target(name).kinds:
            assert (PACKAGE.parent / "schemas" / kind.schema).is_file(), kind
            assert seen.setdefault((kind.api_version, kind.kind), name) == name, kind


def _is_stand_in(name: str) -> bool:
    return name.rpartition(".")[2].startswith("_fast_")


def test_the_stand_ins_table_lists_every_fast_module_and_back() -> None:
    """mpigen.reference.STAND_INS names each `_fast_*` module once, with its library and agreement test."""
    from mpigen.reference import STAND_INS

    listed = [row.module for row in STAND_INS]
    assert len(listed) == len(set(listed))
    assert set(listed) == {name for name in MODULES if _is_stand_in(name)}
    for row in STAND_INS:
        assert row.library and row.saving, row
        path, _, function = row.agreement.partition("::")
        source = (PACKAGE.parent / path).read_text(encoding="utf-8")
        assert f"def {function}(" in source, f"{row.module}: no test {row.agreement}"


def test_every_stand_in_lives_in_a_fast_module() -> None:
    """A function marked `@stand_in` is defined in a `_fast_*` module, nowhere else."""
    marked = {
        f"{name}.{node.name}"
        for name, path in MODULES.items()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.FunctionDef)
        and any(isinstance(d, ast.Name) and d.id == "stand_in" for d in node.decorator_list)
    }
    assert marked
    assert {name for name in marked if not _is_stand_in(name.rpartition(".")[0])} == set()


@pytest.mark.parametrize("name", sorted(MODULES))
def test_a_fast_module_is_imported_only_from_its_own_folder(name: str) -> None:
    """A stand-in serves the code beside it: `krm/` reads YAML through mpigen.yaml.reader, never the
    fast reader itself."""
    folder = name if MODULES[name].name == "__init__.py" else name.rpartition(".")[0]
    foreign = sorted(m for m in GRAPH[name] if _is_stand_in(m) and m.rpartition(".")[0] != folder)
    assert not foreign, f"{name} imports {foreign}"


# What a `# deferred:` comment may not be: the words of the comment every deferral once carried, which
# name the module again and no reason ("spares importing X until this runs").
GENERIC_DEFERRAL = re.compile(
    r"spares? importing|until (this|it) runs|spares? loading|deferred import", re.IGNORECASE
)
# A reason says more than the module's name: at least this many words besides its dotted parts.
REASON_WORDS = 3


def _deferral_comment(lines: list[str], line: int) -> str | None:
    """The `# deferred:` comment of the import at `line` (1-based): on its own line, or the comment lines
    directly above the run of import lines it opens (one comment covers imports written together)."""
    own = lines[line - 1]
    if "# deferred: " in own:
        return own[own.index("# deferred: ") :]
    above = line - 2
    while above >= 0 and re.match(r"\s*(from \S+ )?import ", lines[above]):
        above -= 1  # an import written together with this one, under the same comment
    block: list[str] = []
    while above >= 0 and lines[above].strip().startswith("#"):
        block.insert(0, lines[above].strip().lstrip("#").strip())
        if block[0].startswith("deferred: "):
            return "# " + " ".join(block)
        above -= 1
    return None


def deferral_problem(comment: str | None, modules: set[str]) -> str | None:
    """What is wrong with an import's `# deferred:` comment (None: nothing): missing, the generic
    wording, or nothing said beyond the module's name."""
    if comment is None:
        return "no `# deferred: <what it spares>` comment"
    reason = comment.removeprefix("# deferred: ")
    if GENERIC_DEFERRAL.search(reason):
        return f"generic wording, not a reason: {reason!r}"
    named = {part for module in modules for part in (module, *module.split("."))}
    words = [word for word in re.findall(r"[\w.\-/`']+", reason) if word.strip("`'.") not in named]
    if len(words) < REASON_WORDS:
        return f"says no more than the module's name: {reason!r}"
    return None


def test_a_deferral_comment_must_give_a_reason() -> None:
    """The check below refuses the wording that says nothing and accepts one that names the rare path."""
    generic = "# deferred: spares importing difflib until this runs"
    assert deferral_problem(generic, {"difflib"}) is not None
    assert deferral_problem("# deferred: difflib", {"difflib"}) is not None
    assert deferral_problem(None, {"difflib"}) is not None
    assert deferral_problem("# deferred: difflib only for the hint of an unknown field", {"difflib"}) is None
    lines = [
        "def f():",
        "    # deferred: jsonschema only when the quick check",
        "    # fails",
        "    import a",
        "    import b",
    ]
    assert _deferral_comment(lines, 5) == "# deferred: jsonschema only when the quick check fails"
    assert _deferral_comment(["def f():", "    x = 1", "    import a"], 3) is None


def test_an_import_inside_a_function_says_what_deferring_it_spares() -> None:
    """Imports sit at the top of a module; one left inside a function (to spare a render, or a command,
    a library or module it does not need) carries `# deferred: <what it spares>` on its line or in the
    comment above it: the rare path or the heavy module it keeps off the common path, not the module's
    name again."""
    bad = []
    for name, path in MODULES.items():
        lines = path.read_text(encoding="utf-8").splitlines()
        for function in ast.walk(ast.parse("\n".join(lines))):
            if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(function):
                if isinstance(node, ast.Import):
                    modules = {alias.name for alias in node.names}
                elif isinstance(node, ast.ImportFrom):
                    modules = {node.module or "", *(alias.name for alias in node.names)}
                else:
                    continue
                problem = deferral_problem(_deferral_comment(lines, node.lineno), modules)
                if problem:
                    bad.append(f"{name}:{node.lineno}: {problem}")
    assert not bad, bad


def test_names_names_no_target_or_trainer_object() -> None:
    """mpigen/names.py holds the names every target shares; a JobSet's, a Volcano Job's and Kubeflow
    Trainer's live with the target (mpigen/targets/<target>/) or the input front (mpigen.inputs.trainer_names)."""
    text = MODULES["mpigen.names"].read_text(encoding="utf-8")
    for group in ("trainer.kubeflow.org", "jobset.x-k8s.io", "jobset.sigs.k8s.io", "batch.volcano.sh"):
        assert group not in text, group


def test_no_two_test_files_share_a_name() -> None:
    """pytest imports each test file by its base name (the test folders are no packages): two files of one
    name in two folders stop the whole run from collecting."""
    seen: dict[str, Path] = {}
    for path in sorted((PACKAGE.parent / "tests").rglob("test_*.py")):
        assert path.name not in seen, f"{path} and {seen[path.name]} share a name"
        seen[path.name] = path
