"""Reading for the command shells: every read bounded, special files refused where nobody named them.

At most `limit` + 1 bytes are ever read from a file or stream, so `/dev/zero` or `yes | mpigen render`
is refused once the cap is passed instead of filling memory. Files that mpigen finds itself (inside a
directory it walks, or a committed render that `--check` reads) must be regular files: they are opened
without blocking, so a FIFO there is refused at once instead of waiting for a writer forever. A path
named on the command line may be a FIFO or a device (`mpigen render <(kustomize build)`, `/dev/stdin`):
it is read as `cat` would, with the same bound.
"""

from __future__ import annotations

import errno
import os
import stat
from typing import BinaryIO

from mpigen.yaml.load import may_hold_mpijob

MIB = 1024 * 1024


class ReadError(Exception):
    """A file cannot be read (or may not be); the message names it and says why."""


class TooLarge(ReadError):
    """A file or stream is larger than the bound it is read with."""


def shown(path: str | os.PathLike[str]) -> str:
    """`path` printable in a message: bytes that are not UTF-8 are shown escaped (`\\xff`)."""
    text = os.fspath(path)
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def too_large(name: str, limit: int) -> ReadError:
    return TooLarge(f"{shown(name)}: input is larger than {limit // MIB} MiB")


def names_mpijob(path: str) -> bool:
    """Whether the file at `path` names an MPIJob kind anywhere (mpigen.yaml.load.may_hold_mpijob), read
    a piece at a time, so a file of any size is looked through in bounded memory; True when it cannot
    be read to the end (then it may)."""
    overlap = b""
    try:
        with open(path, "rb") as handle:
            while piece := handle.read(MIB):
                if may_hold_mpijob((overlap + piece).decode("latin-1")):
                    return True
                overlap = piece[-4096:]  # a `kind: MPIJob` cut in two by the pieces' edge is seen whole
    except OSError:
        return True
    return False


def read_stream(stream: BinaryIO, name: str, limit: int) -> bytes:
    """At most `limit` bytes of a stream; ReadError past that (one byte more is read to know)."""
    try:
        data = stream.read(limit + 1)
    except OSError as exc:
        raise ReadError(f"{shown(name)}: cannot read: {describe(exc)}") from None
    if len(data) > limit:
        raise too_large(name, limit)
    return data


def file_kind(mode: int) -> str:
    kinds = [
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISLNK, "a symbolic link"),
        (stat.S_ISREG, "a regular file"),
    ]
    return next((name for test, name in kinds if test(mode)), "a special file")


def describe(exc: OSError) -> str:
    """An OSError as its reason, without the file name (the caller names the file its own way)."""
    if exc.errno == errno.ELOOP:
        return "Too many levels of symbolic links (a symbolic link loop)"
    return exc.strerror or str(exc)


def read_file(path: str | os.PathLike[str], limit: int, *, regular_only: bool) -> bytes:
    """At most `limit` bytes of the file at `path`, else ReadError (which names the file).

    regular_only: refuse anything but a regular file, and never block opening it (a FIFO's open waits
    for a writer unless O_NONBLOCK is given)."""
    flags = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | (os.O_NONBLOCK if regular_only else 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise ReadError(f"{shown(path)}: cannot read: {describe(exc)}") from None
    with open(fd, "rb") as handle:  # closes fd
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise ReadError(f"{shown(path)}: cannot read: is a directory")
        if regular_only and not stat.S_ISREG(mode):
            raise ReadError(
                f"{shown(path)}: not a regular file but {file_kind(mode)}; mpigen reads only regular files here"
            )
        try:
            return read_stream(handle, os.fspath(path), limit)
        except OSError as exc:
            raise ReadError(f"{shown(path)}: cannot read: {describe(exc)}") from None
