"""The Python the tests run mpigen's own processes with (`python -m mpigen ...`).

A virtual environment, made once per test process, without pip, whose .pth file puts this checkout
first and then every directory the running Python imports from (its site-packages, an outer virtual
environment's, the user's), and finds the resource packages where pyproject.toml's package-dir puts them
(mpigen.schemas in schemas/, ...), as an editable install does. So it imports the same mpigen and the
same packages as the test process, but runs none of the code that .pth files in those site-packages
run at each start: an editable
install's import hook (which loads pathlib and tempfile), a machine's certificate hook (which loads
certifi and importlib.resources). Those made every mpigen process start about 40 ms later here, over
a thousand processes in a run; they are what a user's mpigen command would not meet in a virtual
environment of its own. Tests of the installed command itself (the console script, the kustomize
plugin's wrapper, the release wheel) keep using it as installed.
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import sys
import tempfile
import tomllib
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@functools.cache
def mpigen_python() -> str:
    """The path of that Python's executable (made on first call, removed when this process exits)."""
    home = Path(tempfile.mkdtemp(prefix="mpigen-tests-python-"))
    atexit.register(shutil.rmtree, home, True)
    venv.EnvBuilder(with_pip=False, symlinks=True).create(home)
    (site,) = (home / "lib").glob("python3*/site-packages")
    # not the tests' own folders (conftest puts them on the test process's path)
    inherited = (entry for entry in sys.path if entry and os.path.isdir(entry) and not _in_tests(entry))
    paths = [str(ROOT), *inherited]
    (site / "_mpigen_tests.pth").write_text(
        "".join(f"{entry}\n" for entry in dict.fromkeys(paths)) + "import _mpigen_tests_finder\n"
    )
    (site / "_mpigen_tests_finder.py").write_text(FINDER.format(packages=_mapped_packages()))
    return str(home / "bin" / "python")


# Finds the packages that pyproject.toml's package-dir maps to folders other than their name's.
FINDER = """\
import sys
from importlib.machinery import ModuleSpec, SourceFileLoader

PACKAGES = {packages!r}


class Finder:
    @classmethod
    def find_spec(cls, fullname, path=None, target=None):
        directory = PACKAGES.get(fullname)
        if directory is None:
            return None
        init = directory + "/__init__.py"
        spec = ModuleSpec(fullname, SourceFileLoader(fullname, init), origin=init, is_package=True)
        spec.submodule_search_locations = [directory]
        spec.has_location = True
        return spec


sys.meta_path.append(Finder)
"""


def _mapped_packages() -> dict[str, str]:
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    return {name: str(ROOT / folder) for name, folder in setuptools["package-dir"].items() if name}


def _in_tests(entry: str) -> bool:
    return Path(entry).resolve().is_relative_to(ROOT / "tests")


def mpigen_argv(*args: str) -> list[str]:
    """`python -m mpigen ARGS` with that Python."""
    return [mpigen_python(), "-m", "mpigen", *args]
