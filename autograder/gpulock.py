"""Sharing one GPU between several grading workers without spoiling timing.

The cases of correctness and sanitizer runs of different submissions may share a GPU
(``shared``); a timing measurement (its inputs, warm-up and samples) needs it alone
(``exclusive``). A reader-writer lock on files in /tmp, one per GPU, with a turnstile so a
waiting timing run is not starved by a stream of shared holders. Taken by the grader process,
outside the sandbox, for one GPU child's GPU work, from the child's ``ready`` to its ``done``
(:func:`autograder.children.run_holding`); a child's start-up and compiling hold nothing.

The rule that keeps it free of deadlocks: **a thread never waits for this lock while it holds
it** (no nested shared hold either: an exclusive waiter holding the turnstile would wait for
the outer hold while the inner one waits for the turnstile), and a thread that holds it waits
only for its own child's GPU work. Each child's thread takes at most one hold. :func:`gpu`
raises ``RuntimeError`` for a thread that asks again while it holds the lock, so a change that
breaks the rule fails at once instead of stalling a class.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
import threading
from pathlib import Path

_held = threading.local()  # .mode: "shared" / "exclusive" while this thread holds the lock


def _gpu_id() -> str:
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "0") or "0"
    return "".join(c if c.isalnum() else "_" for c in visible.split(",")[0])


def _paths() -> tuple[Path, Path]:
    base = Path(tempfile.gettempdir()) / f"kernelgrade-gpu-{_gpu_id()}"
    return base.with_suffix(".lock"), base.with_suffix(".turnstile")


def held() -> str | None:
    """``"shared"`` or ``"exclusive"`` while the calling thread holds this process's GPU lock,
    else None."""
    return getattr(_held, "mode", None)


@contextlib.contextmanager
def gpu(exclusive: bool):
    """Hold this process's GPU shared (cases of correctness and sanitizer runs) or exclusive (a
    timing measurement) for the block. Blocks until it is granted. Raises ``RuntimeError`` when the
    calling thread already holds it (see the module's rule)."""
    if held() is not None:
        raise RuntimeError(f"GPU lock asked for ({'exclusive' if exclusive else 'shared'}) by a "
                           f"thread that already holds it ({held()}): that can deadlock")
    lock_path, turnstile_path = _paths()
    with open(turnstile_path, "a") as turnstile, open(lock_path, "a") as lock:
        fcntl.flock(turnstile, fcntl.LOCK_EX)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        finally:
            if not exclusive:
                fcntl.flock(turnstile, fcntl.LOCK_UN)
        _held.mode = "exclusive" if exclusive else "shared"
        try:
            yield
        finally:
            _held.mode = None
            fcntl.flock(lock, fcntl.LOCK_UN)
            if exclusive:
                fcntl.flock(turnstile, fcntl.LOCK_UN)
