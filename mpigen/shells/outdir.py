"""The file I/O of `render --output-dir` and `render --check`: replace a render directory whole, read one.

The names and contents of the files are mpigen.gitops's (pure). A directory is only ever replaced
whole, and only if it holds nothing but files mpigen writes: the new render is written beside it and
swapped in, so no stale file survives and an error leaves the old render untouched.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from mpigen.gitops import RENDERED_FILE, RenderDirError


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
