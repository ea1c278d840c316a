"""The standard streams of the command shells: the one way they write, so that every byte of the output
is written or the command exits non-zero with one line saying what failed.

- Output goes to the descriptor in a loop until every byte is taken (a write to a full disk, past
  `ulimit -f` or with `PYTHONUNBUFFERED=1` may take only part), then nothing is left in Python's
  buffers; a write that fails is `OutputError` (exit 1, its line on stderr), never a bug (exit 3).
- A reader that goes away (`mpigen render | head -1`: EPIPE) ends mpigen quietly, as it ends `cat` or
  `kubectl`: by SIGPIPE (a shell reports status 141), whatever was left unwritten dropped.
- SIGXFSZ is ignored, so a write past the file-size limit fails with EFBIG (and is reported) instead of
  killing the process; SIGTERM and SIGINT (Ctrl-C) unwind, so a render removes its staged files, and then
  end mpigen by that signal as it would have (a shell reports 143 and 130; no "Aborted!").
- A standard descriptor closed when mpigen starts (`>&-`) is held by /dev/null, so that no file mpigen
  opens takes its number; Python leaves `sys.stdout` (or stdin, stderr) None then. A closed stdout is an
  error for a command that writes output; a closed stdin is an input that cannot be read; a closed
  stderr, and a stderr that cannot take a message, lose only the messages: the exit code still says
  how the command went.
"""

from __future__ import annotations

import errno
import io
import os
import signal
import sys
from typing import IO, Any, BinaryIO, NoReturn, TextIO


class OutputError(Exception):
    """stdout cannot take the whole output: the message says why (exit 1)."""


class Terminated(BaseException):
    """SIGTERM or SIGINT (Ctrl-C): unwinds like KeyboardInterrupt (staged files are removed), then mpigen
    ends by that signal."""


def prepare() -> None:
    """Set up the process for the shells (see the module doc): closed standard descriptors held by
    /dev/null, SIGXFSZ ignored, SIGTERM and SIGINT unwinding."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            held = os.open(os.devnull, os.O_RDONLY if fd == 0 else os.O_WRONLY)
            if held != fd:
                os.dup2(held, fd)
                os.close(held)

    if hasattr(signal, "SIGXFSZ"):
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _terminate)
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        # Ctrl-C unwinds the same way and ends mpigen by SIGINT (a shell reports 130), without click's
        # "Aborted!" and exit 1, which a script could not tell from invalid input.
        signal.signal(signal.SIGINT, _terminate)


def _terminate(signum: int, frame: Any) -> None:
    raise Terminated(signum)


def end_by_signal(signum: int) -> NoReturn:
    """End the process by `signum` with its default action (a shell reports 128 + signum)."""
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)
    os._exit(128 + signum)  # the signal is blocked: the status a shell would report for it


def stdin_is_terminal() -> bool:
    """Whether stdin is a terminal (False when it is closed)."""
    return sys.stdin is not None and sys.stdin.isatty()


def stdin_bytes() -> BinaryIO | None:
    """The binary stdin, or None when it is closed."""
    return sys.stdin.buffer if sys.stdin is not None else None


def reason(exc: OSError) -> str:
    """Why a write failed, in words."""
    if exc.errno == errno.EFBIG:
        return "File too large (the file-size limit, ulimit -f)"
    return exc.strerror or str(exc)


def write_stdout(data: str | bytes) -> None:
    """All of `data` on stdout (text as UTF-8), or OutputError; EPIPE ends mpigen (the module doc)."""
    write_to(sys.stdout, data, "stdout")


def write_to(stream: IO[Any] | None, data: str | bytes, name: str) -> None:
    """All of `data` on `stream` (stdout, or the binary stream a caller was given), or OutputError."""
    if stream is None:
        raise OutputError(f"mpigen: cannot write the output: {name} is closed")
    raw = data.encode("utf-8", "surrogateescape") if isinstance(data, str) else data
    try:
        _write_all(stream, raw, data)
    except BrokenPipeError:
        end_by_signal(_sigpipe())
    except OSError as exc:
        _detach(stream)
        raise OutputError(f"mpigen: cannot write the output to {name}: {reason(exc)}") from None


def write_stderr(lines: list[str]) -> None:
    """Each line on stderr; a closed stderr, or one that cannot take them, loses them (the module doc)."""
    write_lines_to(sys.stderr, lines)


def write_lines_to(stream: TextIO | None, lines: list[str]) -> None:
    """Each line on `stream`, a stderr: a closed one, or one that cannot take them, loses them."""
    if not lines or stream is None:
        return
    encoding = stream.encoding or "utf-8"
    if encoding.lower() in ("ascii", "us-ascii", "646"):
        encoding = "utf-8"  # as click.echo writes to a stream set up for ASCII
    text = "".join(line + "\n" for line in lines)
    try:
        _write_all(stream, text.encode(encoding, "backslashreplace"), text)
    except OSError:
        _detach(stream)


def finish(code: int) -> int:
    """The exit code once what Python still buffers (what click wrote) is flushed: 1 and a line when
    stdout cannot take it, the end by SIGPIPE when its reader is gone."""
    for stream in (sys.stdout, sys.stderr):
        if stream is None:
            continue
        try:
            stream.flush()
        except BrokenPipeError:
            if stream is sys.stdout:
                end_by_signal(_sigpipe())
            _detach(stream)
        except OSError as exc:
            if stream is sys.stdout:
                code = code or stdout_failed(exc)
            _detach(stream)
    if type(sys.stdout).__name__.endswith("PacifyFlushWrapper"):  # click's own end on EPIPE (its exit 1)
        end_by_signal(_sigpipe())
    return code


def stdout_failed(exc: OSError) -> int:
    """Say that stdout could not take what Python buffered for it (what click wrote); exit code 1."""
    if isinstance(exc, BrokenPipeError):
        end_by_signal(_sigpipe())
    _detach(sys.stdout)
    write_stderr([f"mpigen: cannot write the output to stdout: {reason(exc)}"])
    return 1


def _write_all(stream: IO[Any], raw: bytes, data: str | bytes) -> None:
    """Every byte of `raw` to the descriptor behind `stream`, after what Python buffered for it; a
    stream without one (a test's capture) is written as it is, with `data`."""
    stream.flush()
    try:
        fd = stream.fileno()
    except (io.UnsupportedOperation, AttributeError, ValueError):
        if isinstance(stream, io.TextIOBase):
            stream.write(data if isinstance(data, str) else data.decode("utf-8", "surrogateescape"))
        else:
            stream.write(raw)
        stream.flush()
        return
    view = memoryview(raw)
    while view:
        try:
            written = os.write(fd, view)
        except BlockingIOError:  # a stdout left non-blocking by whoever shares it: wait until it takes more
            # deferred: select only when a non-blocking stdout is full
            import select

            select.select([], [fd], [])
            continue
        if written <= 0:
            raise OSError(errno.EIO, "the write took nothing")
        view = view[written:]


def _detach(stream: IO[Any]) -> None:
    """Point a stream that failed at /dev/null, so that Python's own flush at exit finds nothing to
    report (what it still buffered is lost either way)."""
    try:
        fd = stream.fileno()
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, fd)
        os.close(null)
    except (OSError, ValueError, AttributeError):
        pass


def _sigpipe() -> int:
    return int(signal.SIGPIPE)
