"""Sharing one GPU between several grading workers without spoiling timing.

Every process that uses a GPU holds its lock for all of its life there: GPU children of
gradings (cases, compute-sanitizer runs; :func:`autograder.grading.children.run_holding`), the
reference warm-up and the driver's occupancy calculator, from before the process starts
(creating a CUDA context, loading modules, compute-sanitizer's own start-up are GPU work) to
its exit (tearing the context down is too). Such work may share a GPU (``shared``); a timing
measurement (its inputs, warm-up and samples) needs it alone (``exclusive``): no other process
uses that GPU meanwhile (issue 22: measurements beside other gradings' sanitizer runs and
context start-ups read 1.69-2.08x for a kernel that reads 1.71x alone). A reader-writer lock
on files in /tmp, one per GPU, with a turnstile so a waiting timing run is not starved by a
stream of shared holders. Taken by the grader process, outside the sandbox.

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


class Hold:
    """A granted hold (what :func:`gpu` yields): ``mode`` is ``"shared"`` or ``"exclusive"``."""

    def __init__(self, lock, turnstile, mode: str):
        self._lock, self._turnstile, self.mode = lock, turnstile, mode

    def downgrade(self) -> None:
        """An exclusive hold becomes shared without letting the GPU go: other shared holders may
        start, no measurement can (the turnstile, which every taker passes first, is held while
        the lock changes mode, so ``flock``'s non-atomic conversion lets nobody in). No-op for a
        shared hold."""
        if self.mode != "exclusive":
            return
        fcntl.flock(self._lock, fcntl.LOCK_SH)
        fcntl.flock(self._turnstile, fcntl.LOCK_UN)
        self.mode = _held.mode = "shared"


@contextlib.contextmanager
def gpu(exclusive: bool):
    """Hold this process's GPU shared (any GPU work beside others') or exclusive (a timing
    measurement) for the block; yields the :class:`Hold`. Blocks until it is granted. Raises
    ``RuntimeError`` when the calling thread already holds it (see the module's rule)."""
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
        hold = Hold(lock, turnstile, "exclusive" if exclusive else "shared")
        _held.mode = hold.mode
        try:
            yield hold
        finally:
            _held.mode = None
            fcntl.flock(lock, fcntl.LOCK_UN)
            if hold.mode == "exclusive":
                fcntl.flock(turnstile, fcntl.LOCK_UN)
