"""The legacy kustomize exec plugin: `kubectl kustomize --enable-alpha-plugins` compiles MPIJobs.

`kubectl kustomize` skips exec KRM functions without a word (kubernetes/kubectl#1498) but runs
legacy exec plugins under `--enable-alpha-plugins` (`kubectl apply -k` runs neither: it has no such
flag, so its output is piped into `kubectl apply -f -`). kustomize looks for a generator's
plugin at `<plugin home>/<group>/<version>/<lowercase kind>/<Kind>`
(kustomize api/internal/plugins/loader/loader.go: AbsolutePluginPath), runs it with the path of a
temporary file that holds the generator's config (here: the MPIJob) as its only argument, in the
kustomization's directory, and reads the generated objects from its stdout
(api/internal/plugins/execplugin/execplugin.go: invokePlugin). A non-zero exit fails the build and
kustomize shows the plugin's stderr; on success stderr is dropped, so warnings are not seen there.

`install` writes one small `/bin/sh` wrapper per supported apiVersion that execs this very Python
with `-m mpigen kustomize-plugin run`: a shebang naming the Python directly would break on paths
with spaces and on long virtualenv paths (the kernel splits a shebang at whitespace and truncates
it), while the wrapper quotes any path. `-P` keeps the kustomization's directory (the plugin's
working directory) off `sys.path`, so nothing there can shadow mpigen's modules.

Options reach the plugin only through the job's `mpigen.dev/*` annotations (mpigen/inputs/annotations.py).
`generate` is the plugin's pure body; the rest is its shell.
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mpigen.inputs import FRONTS
from mpigen.options import Options
from mpigen.pipeline import process
from mpigen.shells.bounded import ReadError, read_file, shown
from mpigen.shells.common import InvalidInput, run_guarded, write_lines
from mpigen.shells.streams import write_stdout
from mpigen.yaml.dump import to_yaml
from mpigen.yaml.load import MAX_INPUT_BYTES, Document, InputError, decode, load_documents

if TYPE_CHECKING:
    from collections.abc import Callable

    import click

    from mpigen.outcome import Outcome

PLUGIN_HOME_ENV = "KUSTOMIZE_PLUGIN_HOME"
XDG_CONFIG_HOME_ENV = "XDG_CONFIG_HOME"
CONFIG_ROOT_ENV = "KUSTOMIZE_PLUGIN_CONFIG_ROOT"
KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
WRAPPER_MARK = "# mpigen kustomize plugin"


def default_plugin_home(environ: Mapping[str, str]) -> Path:
    """Where kustomize looks for plugins: $KUSTOMIZE_PLUGIN_HOME, else $XDG_CONFIG_HOME/kustomize/plugin,
    else ~/.config/kustomize/plugin (kustomize api/konfig/plugins.go: DefaultAbsPluginHome)."""
    if environ.get(PLUGIN_HOME_ENV):
        return Path(environ[PLUGIN_HOME_ENV])
    if environ.get(XDG_CONFIG_HOME_ENV):
        return Path(environ[XDG_CONFIG_HOME_ENV]) / "kustomize" / "plugin"
    home = Path(environ["HOME"]) if environ.get("HOME") else Path.home()
    return home / ".config" / "kustomize" / "plugin"


def plugin_paths(home: Path) -> list[Path]:
    """The executable kustomize runs for each supported (apiVersion, kind)."""
    paths = []
    for api_version, kind in FRONTS:
        group, _, version = api_version.partition("/")
        paths.append(home / group / version / kind.lower() / kind)
    return paths


def wrapper_script(python: str) -> str:
    """The plugin executable: run mpigen with the Python it is installed in, whatever that path holds."""
    quoted = shlex.quote(python)
    return (
        "#!/bin/sh\n"
        f"{WRAPPER_MARK}, written by `mpigen kustomize-plugin install`: kustomize runs it with the path of\n"
        "# a file holding one MPIJob. It runs the mpigen installed with the Python below; re-run the install\n"
        "# after moving or removing that Python.\n"
        f"if [ ! -x {quoted} ]; then\n"
        f"  echo {shlex.quote(f'mpigen kustomize plugin: {python} is gone; run: mpigen kustomize-plugin install')} >&2\n"
        "  exit 1\n"
        "fi\n"
        f'exec {quoted} -P -m mpigen kustomize-plugin run "$@"\n'
    )


def write_executable(path: Path, text: str) -> None:
    """Replace `path` atomically: a build running at the same time sees the old file or the new one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    # deferred: tempfile only for `kustomize-plugin install`, not for the plugin's runs
    import tempfile

    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape") as handle:
            handle.write(text)
        os.chmod(tmp, 0o755)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def is_installed(path: Path) -> bool:
    """Whether `path` is a plugin that `install` wrote (and not some other generator's executable)."""
    try:
        with path.open("rb") as handle:
            return WRAPPER_MARK.encode() in handle.read(4096)
    except OSError:
        return False


def remove_plugin(path: Path, home: Path) -> bool:
    """Remove one plugin that `install` wrote, and the directories it leaves empty (never `home`)."""
    if not is_installed(path):
        return False
    path.unlink()
    for parent in path.parents:
        if parent == home or home not in parent.parents:
            break
        try:
            parent.rmdir()
        except OSError:
            break
    return True


def locate_job(root: str, job: Any) -> tuple[str, Document] | None:
    """The file of the kustomization's `generators:` that holds `job`, and the job's place in it, so
    that messages name the file the user wrote (kustomize hands the plugin a temporary copy).

    Best effort: None when the kustomization or the job cannot be matched (for instance a job that a
    nested kustomization renamed).
    """
    if not isinstance(job, dict) or not isinstance(job.get("metadata"), dict):
        return None
    key = (job.get("apiVersion"), job.get("kind"), job["metadata"].get("name"))
    for entry in _generator_files(Path(root)):
        try:
            documents = load_documents(
                decode(read_file(entry, MAX_INPUT_BYTES, regular_only=True), str(entry)), str(entry)
            )
        except (ReadError, InputError):
            continue
        for doc in documents:
            data = doc.data
            meta = data.get("metadata") if isinstance(data, dict) else None
            if isinstance(meta, dict) and (data.get("apiVersion"), data.get("kind"), meta.get("name")) == key:
                return str(entry), Document(doc.index, job, doc.total)
    return None


def _generator_files(root: Path) -> list[Path]:
    for name in KUSTOMIZATION_FILES:
        kustomization = root / name
        if kustomization.is_file():
            break
    else:
        return []
    try:
        documents = load_documents(
            decode(read_file(kustomization, MAX_INPUT_BYTES, regular_only=True), name), name
        )
    except (ReadError, InputError):
        return []
    data = documents[0].data if documents else None
    generators = data.get("generators") if isinstance(data, dict) else None
    if not isinstance(generators, list):
        return []
    return [root / entry for entry in generators if isinstance(entry, str) and (root / entry).is_file()]


def generate(documents: list[Document], source: str) -> tuple[str, Outcome]:
    """The plugin body, pure: the YAML of the generated objects ("" on any problem), and the outcome."""
    outcome = process([(source, documents)], Options())
    return ("" if outcome.exit_code else to_yaml(outcome.objects)), outcome


def plain(args: list[str]) -> Callable[[], int] | None:
    """`mpigen kustomize-plugin run CONFIG`, as kustomize runs the plugin, without click (mpigen.cli);
    None for any other call, which click parses."""
    if len(args) != 2 or args[0] != "run" or args[1].startswith("-") or os.path.isdir(args[1]):
        return None  # click refuses a directory as CONFIG, with its usage message
    config = Path(args[1])

    def call() -> int:
        _run_plugin(config)
        return 0

    return call


def _run_plugin(config: Path) -> None:
    """The plugin itself, with kustomize's generator directory (or this one) as the kustomization's."""
    run_guarded(lambda: _run(config, os.environ.get(CONFIG_ROOT_ENV) or os.getcwd()))


def _resolve_home(plugin_home: Path | None) -> Path:
    return (plugin_home or default_plugin_home(os.environ)).absolute()


def command() -> click.Group:
    """The `kustomize-plugin` group as click parses it (mpigen.shells.group loads it)."""
    # deferred: click only for the group's other subcommands and --help; kustomize's `run CONFIG` runs without
    # it
    import click

    @click.group()
    def kustomize_plugin() -> None:
        """Install mpigen as a kustomize generator plugin, for `kubectl kustomize --enable-alpha-plugins`.

        \b
        Then list an MPIJob file under `generators:` in a kustomization:
          mpigen kustomize-plugin install
          kubectl kustomize --enable-alpha-plugins DIR
        Options are set on the MPIJob as `mpigen.dev/<option>` annotations.
        """

    plugin_home_option = click.option(
        "--plugin-home",
        type=click.Path(file_okay=False, path_type=Path),
        default=None,
        help=f"Plugin directory [default: ${PLUGIN_HOME_ENV}, else ${XDG_CONFIG_HOME_ENV}/kustomize/plugin, "
        "else ~/.config/kustomize/plugin].",
    )

    @kustomize_plugin.command()
    @plugin_home_option
    def install(plugin_home: Path | None) -> None:
        """Write the plugin executables (one per MPIJob apiVersion); running it again replaces them.
        A file there that `install` did not write (another generator's) is never replaced."""

        def action() -> None:
            home = _resolve_home(plugin_home)
            script = wrapper_script(sys.executable)
            paths = plugin_paths(home)
            foreign = [path for path in paths if os.path.lexists(path) and not is_installed(path)]
            if foreign:
                raise InvalidInput(
                    [
                        f"mpigen: {shown(path)}: exists and `mpigen kustomize-plugin install` did not write it; move it away to install mpigen there"
                        for path in foreign
                    ]
                )
            for path in paths:
                try:
                    write_executable(path, script)
                except OSError as exc:
                    raise InvalidInput(
                        [f"mpigen: cannot write {shown(path)}: {exc.strerror or exc}"]
                    ) from None
                write_stdout(f"installed {path}\n")
            if home != default_plugin_home(os.environ).absolute():
                write_stdout(f"kustomize finds it with: export {PLUGIN_HOME_ENV}={shlex.quote(str(home))}\n")
            write_stdout("build with: kubectl kustomize --enable-alpha-plugins DIR\n")

        run_guarded(action)

    @kustomize_plugin.command()
    @plugin_home_option
    def uninstall(plugin_home: Path | None) -> None:
        """Remove the plugin executables that `install` wrote."""

        def action() -> None:
            home = _resolve_home(plugin_home)
            for path in plugin_paths(home):
                try:
                    removed = remove_plugin(path, home)
                except OSError as exc:
                    raise click.ClickException(f"cannot remove {path}: {exc.strerror or exc}") from None
                status = (
                    "removed"
                    if removed
                    else ("left alone, not written by mpigen" if path.exists() else "not installed")
                )
                write_stdout(f"{status}: {path}\n")

        run_guarded(action)

    @kustomize_plugin.command()
    @plugin_home_option
    def path(plugin_home: Path | None) -> None:
        """Print the plugin directory (where `install` writes)."""
        run_guarded(lambda: write_stdout(f"{_resolve_home(plugin_home)}\n"))

    @kustomize_plugin.command(hidden=True)
    @click.argument("config", type=click.Path(dir_okay=False, path_type=Path))
    def run(config: Path) -> None:
        """The plugin itself, as kustomize runs it: compile the MPIJob in CONFIG and print its objects."""
        _run_plugin(config)

    return kustomize_plugin


def _run(config: Path, root: str) -> None:
    # Messages name the generator file the user wrote when it can be found, else the kustomization's
    # directory: never kustomize's temporary copy, a name that means nothing to the user.
    source = f"{root} (kustomize generator)"
    try:
        documents = load_documents(
            decode(read_file(config, MAX_INPUT_BYTES, regular_only=False), source), source
        )
    except ReadError as exc:
        raise InvalidInput([f"mpigen: {exc}"]) from None
    except InputError as exc:
        raise InvalidInput([str(exc)]) from None
    found = locate_job(root, documents[0].data) if len(documents) == 1 else None
    if found:
        source, documents = found[0], [found[1]]
    text, outcome = generate(documents, source)
    write_lines(outcome.lines())
    if outcome.exit_code:
        sys.exit(outcome.exit_code)
    write_stdout(text)
