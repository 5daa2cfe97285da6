"""The child's end of the private channel: send typed records (:mod:`autograder.wire.protocol`) on
the file descriptor the grader passed, never on standard output."""

from __future__ import annotations

import re
import traceback

from autograder.wire.channel import write_record
from autograder.wire.exception_text import exception_text
from autograder.wire.protocol import Error, Record

_channel_fd = -1


def open_channel(fd: int) -> None:
    """Send every later record on file descriptor ``fd`` (the harness's first argument)."""
    global _channel_fd
    _channel_fd = fd


def send(record: Record) -> None:
    """Write ``record`` (its header and arrays) on the channel, whole."""
    write_record(_channel_fd, record.to_header(), record.arrays())


def _student_frame(exc: BaseException, path: str) -> int | None:
    """Line number of the innermost traceback frame in the student's file, if any."""
    lineno = None
    for frame, line in traceback.walk_tb(exc.__traceback__):
        if frame.f_code.co_filename == path:
            lineno = line
    if lineno is None:  # Numba typing errors carry the location in the message
        m = re.search(re.escape(path) + r'", line (\d+)', exception_text(exc))
        lineno = int(m.group(1)) if m else None
    return lineno


def describe(exc: BaseException) -> str:
    """``"Type: message"``, blank lines dropped, at most 12 lines."""
    text = f"{type(exc).__name__}: {exception_text(exc)}".strip()
    lines = [ln for ln in text.splitlines() if ln.strip()]
    return "\n".join(lines[:12])


def is_finding(exc: BaseException) -> bool:
    """Whether ``exc`` is an exercise driver's finding about the kernel (its class sets
    ``kernelgrade_finding = True``, e.g. a grid barrier that let a thread through early) rather
    than an exception the kernel raised. A submission's own exception that claims to be one only
    turns its own error into a failure: 0 points either way."""
    return getattr(type(exc), "kernelgrade_finding", False) is True


def send_error(phase: str, exc: BaseException, path: str, **extra) -> None:
    """Send an ``error`` record of ``phase`` for ``exc``, with the submission's line (``path``
    is its file name) when a traceback frame or Numba's message names it, marked ``finding``
    when :func:`is_finding`; ``extra``: the record's other fields (``id``, ``fatal``,
    ``skipped``)."""
    lineno = _student_frame(exc, path) or getattr(exc, "submission_lineno", None)
    if is_finding(exc):
        send(Error(phase, exception_text(exc), None, finding=True, **extra))
        return
    send(Error(phase, describe(exc), lineno, **extra))
