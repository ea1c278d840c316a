"""Committed renders: one file per object (`render --output-dir`) and staleness checks (`render --check`).

File names follow `kustomize build -o DIR`: `[<group>_]<version>_<kind>_<name>.yaml`, lower case, so a
render diffs cleanly in review and a file keeps its name from one render to the next. Objects in a
namespace get it as a prefix (`<namespace>_...`) so that jobs of the same name in two namespaces do not
share a file.

Ownership: mpigen lists the files it wrote in `DIR/.mpigen-manifest` and replaces or removes only
those. Everything else in DIR (a `kustomization.yaml`, `.gitkeep`, a README, subdirectories) is left
alone; a file that is not mpigen's but that an object would overwrite is reported and nothing is
written (one whose bytes already equal the render loses nothing and is adopted).

`files_for`, `plan_update`, `check_files` and `diff_files` are pure; the I/O is the render shell's, in mpigen/shells/outdir.py.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from typing import Any, NamedTuple

from mpigen.yaml.dump import FORMATS

# What `--output-dir` writes: lower-case parts joined by "_", ending .yaml or .json.
RENDERED_FILE = re.compile(r"[a-z0-9.-]+(_[a-z0-9.-]+){2,4}\.(yaml|json)\Z")
MANIFEST = ".mpigen-manifest"
MANIFEST_HEADER = (
    "# Files written by `mpigen render --output-dir`, one per line. mpigen replaces or removes only\n"
    "# these; other files here are left alone. Commit this file with them.\n"
)
RENDER_SUFFIXES = (".yaml", ".yml", ".json")


class RenderDirError(Exception):
    """The output directory cannot be written or read; the message says why."""


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
            raise RenderDirError(
                f'cannot name a file for {obj.get("kind")} "{(obj.get("metadata") or {}).get("name")}": it needs apiVersion, kind and metadata.name'
            )
        if name in files:
            raise RenderDirError(
                f"two objects would be written to {name}: the inputs hold the same object twice"
            )
        text = FORMATS[output]([obj])
        files[name] = text if output == "yaml" else json.dumps(obj, indent=2, ensure_ascii=False) + "\n"
    return dict(sorted(files.items()))


# The manifest ---------------------------------------------------------------------------------------


def manifest_text(names: set[str] | list[str]) -> str:
    return MANIFEST_HEADER + "".join(f"{name}\n" for name in sorted(names))


def parse_manifest(text: str) -> set[str]:
    """The file names a manifest lists. Lines that are not a name mpigen writes are ignored, so an edited
    manifest can never make mpigen touch a path outside the directory (no "/", no "..")."""
    return {line.strip() for line in text.splitlines() if RENDERED_FILE.match(line.strip())}


# Planning an update (pure) -----------------------------------------------------------------------------


class Entry(NamedTuple):
    """What is in the directory under one name: "file", "directory", "symbolic link", ... and, for a
    regular file, its text (None when it is not UTF-8)."""

    kind: str
    text: str | None = None
    problem: str = ""  # why a regular file has no text: too large, not UTF-8


class Update:
    """What a pass over the output directory writes, removes and keeps, or why it writes nothing."""

    __slots__ = ("conflicts", "journal", "manifest", "remove", "unchanged", "write")

    def __init__(self) -> None:
        self.write: dict[str, str] = {}  # name -> new text (new or changed)
        self.remove: list[str] = []  # mpigen's files no render needs any more
        self.unchanged: list[str] = []
        self.conflicts: list[str] = []  # messages, one per name; nothing is written
        self.manifest = ""  # the manifest once done
        self.journal = ""  # the manifest while replacing: old and new names, so an interrupted pass is mine


def plan_update(
    files: dict[str, str], owned: set[str], entries: dict[str, Entry], has_manifest: bool
) -> Update:
    """What to do to make a directory hold `files`: `owned` is what the manifest lists, `entries` what
    the directory holds under every name of `files` and `owned`."""
    update = Update()
    for name, text in files.items():
        entry = entries.get(name)
        if entry is None:
            update.write[name] = text
        elif entry.kind != "file":
            update.conflicts.append(
                f"{name}: is {entry.kind}; an object would be written there as a file; move it away"
            )
        elif entry.text == text:
            update.unchanged.append(name)  # the same bytes: nothing is lost, whoever wrote them
        elif name in owned:
            update.write[name] = text
        else:
            hint = "" if has_manifest else f" (no {MANIFEST}: if an older mpigen rendered it, delete it)"
            update.conflicts.append(
                f"{name}: exists and mpigen did not write it (not listed in {MANIFEST}){hint}; an object would "
                "overwrite it: move it away, then render again"
            )
    update.remove = sorted(
        name for name in owned - files.keys() if name in entries and entries[name].kind == "file"
    )
    update.manifest = manifest_text(list(files))
    update.journal = manifest_text(set(files) | owned)
    return update


def check_files(files: dict[str, str], owned: set[str]) -> tuple[dict[str, str], set[str]]:
    """What `--check DIR` compares: the render with its manifest, and the names to read from DIR (every
    name rendered or owned, and the manifest). Other files in DIR are not mpigen's: they are ignored."""
    rendered = {**files, MANIFEST: manifest_text(list(files))}
    return rendered, set(rendered) | owned


# Diffs and hints (pure) ----------------------------------------------------------------------------------


def diff_files(committed: dict[str, str], rendered: dict[str, str], root: str) -> str:
    """A unified diff from the committed files to the fresh render ("" when they are the same)."""
    # deferred: difflib only for `render --check` against a stale committed render
    import difflib

    out: list[str] = []
    for name in sorted(committed.keys() | rendered.keys()):
        old, new = committed.get(name), rendered.get(name)
        if old == new:
            continue
        path = os.path.join(root, name) if root else name
        fromfile, tofile = (
            (path if old is not None else "/dev/null"),
            (path if new is not None else "/dev/null"),
        )
        lines = list(
            difflib.unified_diff(
                (old or "").splitlines(keepends=True),
                (new or "").splitlines(keepends=True),
                fromfile=fromfile,
                tofile=tofile,
            )
        )
        out += lines or [
            f"--- {fromfile}\n",
            f"+++ {tofile}\n",
        ]  # an empty file comes or goes: difflib says nothing
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in out)


def looks_like_file(path: str) -> bool:
    """A `--check` target that does not exist yet: a file of rendered output if it is named like one."""
    return path.endswith(RENDER_SUFFIXES)


def update_command(args: tuple[str, ...] | list[str], check_path: str, directory: bool) -> str:
    """The command that updates what `mpigen render ARGS` (with --check) checked: the same arguments,
    with `--check PATH` turned into `--output-dir PATH`, or into `> PATH` for a single file."""
    out: list[str] = []
    rest = iter(args)
    for arg in rest:
        if arg == "--check":
            next(rest, None)
            out += ["--output-dir", check_path] if directory else []
        elif arg.startswith("--check="):
            out += [f"--output-dir={check_path}"] if directory else []
        else:
            out.append(arg)
    command = shlex.join(["mpigen", "render", *out])
    return command if directory else f"{command} > {shlex.quote(check_path)}"
