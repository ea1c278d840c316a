"""Committed renders: one file per object (`render --output-dir`) and staleness checks (`render --check`).

File names follow `kustomize build -o DIR`: `[<group>_]<version>_<kind>_<name>.yaml`, lower case, so a
render diffs cleanly in review and a file keeps its name from one render to the next. Objects in a
namespace get it as a prefix (`<namespace>_...`) so that jobs of the same name in two namespaces do not
share a file.

`files_for` and `diff_files` are pure; `replace_directory` and `read_rendered` do the file I/O for the
CLI. A directory is only ever replaced whole, and only if it holds nothing but files mpigen writes:
the new render is written beside it and swapped in, so no stale file survives and an error leaves the
old render untouched.
"""

from __future__ import annotations

import difflib
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

from mpigen.emit import FORMATS

# What `--output-dir` writes: lower-case parts joined by "_", ending .yaml or .json.
RENDERED_FILE = re.compile(r"[a-z0-9.-]+(_[a-z0-9.-]+){2,4}\.(yaml|json)\Z")


class RenderDirError(Exception):
    """The output directory cannot be replaced or read; the message says why."""


def file_name(obj: dict[str, Any], extension: str) -> str:
    group, _, version = str(obj.get("apiVersion", "")).rpartition("/")
    meta = obj.get("metadata") or {}
    parts = [meta.get("namespace"), group, version, obj.get("kind"), meta.get("name")]
    return "_".join(str(part).lower().replace("/", "-") for part in parts if part) + "." + extension


def files_for(objects: list[dict[str, Any]], output: str) -> dict[str, str]:
    """{file name: contents}, one file per object, in the emitter's format; raises RenderDirError when
    two objects would share a name."""
    files: dict[str, str] = {}
    for obj in objects:
        name = file_name(obj, output)
        if not RENDERED_FILE.match(name):
            raise RenderDirError(f'cannot name a file for {obj.get("kind")} "{(obj.get("metadata") or {}).get("name")}": it needs apiVersion, kind and metadata.name')
        if name in files:
            raise RenderDirError(f"two objects would be written to {name}: the inputs hold the same object twice")
        text = FORMATS[output]([obj])
        files[name] = text if output == "yaml" else _single_json(obj)
    return dict(sorted(files.items()))


def _single_json(obj: dict[str, Any]) -> str:
    import json

    return json.dumps(obj, indent=2, ensure_ascii=False) + "\n"


def diff_files(committed: dict[str, str], rendered: dict[str, str], root: str) -> str:
    """A unified diff from the committed files to the fresh render ("" when they are the same)."""
    out: list[str] = []
    for name in sorted(committed.keys() | rendered.keys()):
        old, new = committed.get(name), rendered.get(name)
        if old == new:
            continue
        path = os.path.join(root, name) if root else name
        out += difflib.unified_diff(
            (old or "").splitlines(keepends=True),
            (new or "").splitlines(keepends=True),
            fromfile=path if old is not None else "/dev/null",
            tofile=path if new is not None else "/dev/null",
        )
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in out)


def read_rendered(directory: Path) -> dict[str, str]:
    """The files of a previous `--output-dir` render (raises RenderDirError if it holds anything else)."""
    _check_replaceable(directory)
    if not directory.exists():
        return {}
    return {entry.name: entry.read_text(encoding="utf-8") for entry in sorted(directory.iterdir())}


def _check_replaceable(directory: Path) -> None:
    if not directory.exists():
        return
    if not directory.is_dir():
        raise RenderDirError(f"{directory}: not a directory")
    for entry in directory.iterdir():
        if entry.is_dir() or entry.is_symlink() or not RENDERED_FILE.match(entry.name):
            raise RenderDirError(
                f"{directory}: refusing to replace it: it holds {entry.name}, which mpigen does not write "
                "(--output-dir owns the whole directory; move other files elsewhere)"
            )


def replace_directory(directory: Path, files: dict[str, str]) -> None:
    """Make `directory` hold exactly `files`: write them beside it, then swap the new render in."""
    _check_replaceable(directory)
    parent = directory.resolve().parent
    parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{directory.name}.new-", dir=parent))
    try:
        for name, text in files.items():
            (staging / name).write_text(text, encoding="utf-8")
        staging.chmod(0o755)
        if directory.exists():
            _swap(staging, directory)  # staging now holds the previous render
        else:
            os.replace(staging, directory)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)


def _swap(new: Path, current: Path) -> None:
    """Exchange two directories: atomically with Linux renameat2(RENAME_EXCHANGE), else two renames."""
    if _exchange(new, current):
        return
    retired = new.with_name(new.name + ".old")
    os.replace(current, retired)
    os.replace(new, current)
    os.replace(retired, new)


def _exchange(a: Path, b: Path) -> bool:
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    result = renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange)
    return bool(result == 0)
