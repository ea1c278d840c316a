"""The file I/O of `render --output-dir DIR` and `render --check DIR` (the plans are gitops.py's, pure).

Safety rules, each for a reported failure:
- Only mpigen's files (those `DIR/.mpigen-manifest` lists) are replaced or removed; others are kept.
- DIR may be a symbolic link to a directory: the render goes into its target and the link is never
  touched. A dangling link or a link loop is refused before anything is created.
- Every file is written beside its final name (`.mpigen-new-*`) and renamed over it, so no file is
  ever half-written. All new files are written before the first rename: an invalid input, a conflict
  or a full disk leaves the previous render untouched. While the renames run, the manifest lists the
  old and the new files, so a render killed in that moment is completed by the next one. A render
  killed while it writes leaves `.mpigen-new-*` files: the next render removes them (holding the lock,
  so they are no other render's), and `--check` calls the directory stale while they are there.
- A directory (or an entry in it) that cannot be read or written is an error naming it, never a bug.
- Renders into one directory take turns: each holds an exclusive flock(2) on the directory itself (no
  lock file is left behind), so two at once give one complete render after the other, never a mix;
  `--check` takes a shared lock, so it never reads a render half-way.
- Entries are opened relative to the directory's descriptor without following symbolic links and
  without blocking: a FIFO or a link under a rendered file's name is refused, never read or replaced.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import secrets
import stat
from collections.abc import Callable, Iterator

from mpigen.gitops import MANIFEST, Entry, RenderDirError, Update, check_files, parse_manifest, plan_update
from mpigen.shells.bounded import ReadError, TooLarge, describe, file_kind, read_file, read_stream, shown
from mpigen.shells.streams import reason
from mpigen.yaml.load import MAX_INPUT_BYTES, InputError, decode

_OPEN_DIR = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
_OPEN_ENTRY = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
TEMP_PREFIX = ".mpigen-new-"


def existing_kind(path: str) -> str | None:
    """ "directory", "file" or None (nothing there); RenderDirError for a dangling link, a loop or
    anything that is neither a directory nor a regular file."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        if os.path.islink(path):
            raise RenderDirError(
                f"{shown(path)}: a symbolic link to {shown(os.readlink(path))}, which does not exist; "
                "create that directory or fix the link"
            ) from None
        return None
    except OSError as exc:
        raise RenderDirError(f"{shown(path)}: {describe(exc)}") from None
    if stat.S_ISDIR(mode):
        return "directory"
    if stat.S_ISREG(mode):
        return "file"
    raise RenderDirError(f"{shown(path)}: not a regular file or directory but {file_kind(mode)}")


def write_render(directory: str, files: dict[str, str], on_wait: Callable[[], None]) -> Update:
    """Make `directory` hold `files` as mpigen's own, keeping everything else (see the module doc)."""
    try:
        return _write_render(directory, files, on_wait)
    except OSError as exc:
        raise RenderDirError(_problem(directory, exc)) from None


def _write_render(directory: str, files: dict[str, str], on_wait: Callable[[], None]) -> Update:
    for _ in range(5):
        created = _make_directory(directory)
        fd = os.open(directory, _OPEN_DIR)
        try:
            locked = _lock(fd, fcntl.LOCK_EX, on_wait)
            if not _same_file(directory, fd):
                continue  # removed or replaced while we waited (a failed first render cleans up after itself)
            try:
                if locked:
                    _remove_leftovers(fd)
                return _update(fd, directory, files)
            except BaseException:
                if created:
                    with contextlib.suppress(OSError):
                        os.rmdir(directory)  # only if still empty: nothing of anyone's is removed
                raise
        finally:
            os.close(fd)  # releases the lock
    raise RenderDirError(f"{shown(directory)}: the directory keeps being replaced while mpigen waits for it")


def read_committed(directory: str, files: dict[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """(committed, rendered) for `--check DIR`: mpigen's files in DIR and the render they should equal;
    the files an interrupted render left (`.mpigen-new-*`) are among the committed, so they show as stale."""
    try:
        return _read_committed(directory, files)
    except OSError as exc:
        raise RenderDirError(_problem(directory, exc)) from None


def _read_committed(directory: str, files: dict[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    fd = os.open(directory, _OPEN_DIR)
    try:
        _lock(fd, fcntl.LOCK_SH, lambda: None)
        owned, _ = _read_manifest(fd, directory)
        rendered, names = check_files(files, owned)
        committed = {}
        for name in sorted(names):
            entry = _entry(fd, directory, name)
            if entry is None:
                continue
            if entry.kind != "file":
                raise RenderDirError(f"{shown(directory)}/{name}: not a regular file but {entry.kind}")
            if entry.text is None:
                raise RenderDirError(f"{shown(directory)}/{name}: {entry.problem or 'not valid UTF-8'}")
            committed[name] = entry.text
        for name in _leftovers(fd):
            entry = _entry(fd, directory, name)
            committed[name] = (entry.text or "") if entry is not None else ""
        return committed, rendered
    finally:
        os.close(fd)


def read_committed_file(path: str, rendered_size: int) -> str | None:
    """The text of a single-file render for `--check FILE`, decoded as kubectl reads a file (UTF-16 with
    its byte-order mark: what Windows PowerShell 5's `>` writes); None when it is larger than both the
    render (`rendered_size` bytes) and MAX_INPUT_BYTES, so it cannot be this render."""
    limit = max(MAX_INPUT_BYTES, 4 * rendered_size)  # UTF-16 or UTF-32 takes up to 4 bytes a character
    try:
        data = read_file(path, limit, regular_only=True)
    except TooLarge:
        return None
    except ReadError as exc:
        raise RenderDirError(str(exc)) from None
    try:
        return decode(data, shown(path), limit)
    except InputError as exc:
        raise RenderDirError(str(exc)) from None


# Steps ------------------------------------------------------------------------------------------------


def _make_directory(directory: str) -> bool:
    """True if this call created it (with any missing parents). A render running beside this one may
    create it (or, failing, remove it again) at any moment between two looks: look again then."""
    for _ in range(5):
        kind = existing_kind(directory)
        if kind == "directory":
            return False
        if kind is not None:
            raise RenderDirError(f"{shown(directory)}: not a directory")
        try:
            os.makedirs(directory)
        except FileExistsError:
            continue  # made by a concurrent render meanwhile: check it is a directory
        except OSError as exc:
            raise RenderDirError(f"{shown(directory)}: cannot create it: {describe(exc)}") from None
        return True
    raise RenderDirError(f"{shown(directory)}: the directory keeps being replaced while mpigen waits for it")


def _lock(fd: int, how: int, on_wait: Callable[[], None]) -> bool:
    """Whether the lock is held (False: the file system has none)."""
    try:
        fcntl.flock(fd, how | fcntl.LOCK_NB)
    except BlockingIOError:
        on_wait()
        fcntl.flock(fd, how)
    except OSError as exc:
        # File systems without flock on directories (some network file systems) run unlocked.
        if exc.errno not in (errno.EBADF, errno.ENOLCK, errno.EOPNOTSUPP, errno.EINVAL):
            raise
        return False
    return True


def _problem(directory: str, exc: OSError) -> str:
    """An OSError met in DIR as a message naming the entry (calls relative to DIR name only the entry)."""
    name = os.fsdecode(exc.filename) if isinstance(exc.filename, (str, bytes)) else ""
    where = directory if not name or name == directory else os.path.join(directory, name)
    return f"{shown(where)}: {describe(exc)}"


def _leftovers(fd: int) -> list[str]:
    """The staged files of a render that was killed (`.mpigen-new-*` regular files), sorted."""
    names = sorted(name for name in os.listdir(fd) if name.startswith(TEMP_PREFIX))
    return [name for name in names if stat.S_ISREG(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode)]


def _remove_leftovers(fd: int) -> None:
    for name in _leftovers(fd):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name, dir_fd=fd)


def _same_file(path: str, fd: int) -> bool:
    try:
        now = os.stat(path)
    except OSError:
        return False
    held = os.fstat(fd)
    return (now.st_dev, now.st_ino) == (held.st_dev, held.st_ino)


def _entry(fd: int, directory: str, name: str) -> Entry | None:
    """What DIR holds under `name` (None: nothing), without following a link or blocking on a FIFO."""
    try:
        mode = os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(mode):
        return Entry(file_kind(mode))
    try:
        entry_fd = os.open(name, _OPEN_ENTRY, dir_fd=fd)
    except OSError as exc:
        raise RenderDirError(f"{shown(directory)}/{name}: cannot read: {describe(exc)}") from None
    with open(entry_fd, "rb") as handle:
        try:
            data = read_stream(handle, name, MAX_INPUT_BYTES)
        except ReadError as exc:
            return Entry("file", problem=str(exc).partition(": ")[2])  # larger than any render: it differs
    try:
        return Entry("file", data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        return Entry("file", problem=f"not valid UTF-8 (byte {exc.start})")


def _read_manifest(fd: int, directory: str) -> tuple[set[str], bool]:
    entry = _entry(fd, directory, MANIFEST)
    if entry is None:
        return set(), False
    if entry.kind != "file":
        raise RenderDirError(
            f"{shown(directory)}/{MANIFEST}: not a regular file but {entry.kind}; mpigen keeps its list of files there"
        )
    return parse_manifest(entry.text or ""), True


def _update(fd: int, directory: str, files: dict[str, str]) -> Update:
    owned, has_manifest = _read_manifest(fd, directory)
    names = set(files) | owned
    entries = {name: entry for name in names if (entry := _entry(fd, directory, name)) is not None}
    update = plan_update(files, owned, entries, has_manifest)
    if update.conflicts:
        raise RenderDirError("\n".join(f"{shown(directory)}/{line}" for line in update.conflicts))
    manifest = _entry(fd, directory, MANIFEST)
    if not update.write and not update.remove and manifest is not None and manifest.text == update.manifest:
        return update  # already current: touch nothing
    with _staged(fd, directory, {**update.write, MANIFEST: update.journal}) as staged:
        journal = staged.pop(MANIFEST)
        try:
            os.replace(journal, MANIFEST, src_dir_fd=fd, dst_dir_fd=fd)
            for name, temp in staged.items():
                os.replace(temp, name, src_dir_fd=fd, dst_dir_fd=fd)
            for name in update.remove:
                os.unlink(name, dir_fd=fd)
        except OSError as exc:
            raise RenderDirError(
                f"{shown(directory)}: cannot replace files: {describe(exc)} (the next render completes this one)"
            ) from None
    if update.journal != update.manifest:
        with _staged(fd, directory, {MANIFEST: update.manifest}) as staged:
            os.replace(staged[MANIFEST], MANIFEST, src_dir_fd=fd, dst_dir_fd=fd)
    return update


@contextlib.contextmanager
def _staged(fd: int, directory: str, texts: dict[str, str]) -> Iterator[dict[str, str]]:
    """Write each text to a new hidden file in DIR; yield {name: temporary name}; remove the temporary
    files that were not renamed away."""
    temps: dict[str, str] = {}
    try:
        for name, text in texts.items():
            temps[name] = TEMP_PREFIX + secrets.token_hex(
                8
            )  # named before it is made: an interruption removes it too
            _write_new(fd, directory, temps[name], text.encode("utf-8"))
        yield dict(temps)
    finally:
        for temp in temps.values():
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp, dir_fd=fd)


def _write_new(fd: int, directory: str, temp: str, data: bytes) -> None:
    """A new staged file `temp` holding `data`; removed again on a failure."""
    try:
        out = os.open(temp, _CREATE, 0o666, dir_fd=fd)
    except OSError as exc:
        raise RenderDirError(f"{shown(directory)}: cannot write: {describe(exc)}") from None
    try:
        with open(out, "wb") as handle:
            handle.write(data)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=fd)
        raise RenderDirError(f"{shown(directory)}: cannot write: {reason(exc)}") from None
