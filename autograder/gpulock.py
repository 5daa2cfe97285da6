"""Sharing one GPU between several grading workers without spoiling timing.

Correctness runs and sanitizer runs of different submissions may share a GPU (``shared``); a
timing run needs it alone (``exclusive``). A reader-writer lock on files in /tmp, one per GPU,
with a turnstile so a waiting timing run is not starved by a stream of shared holders. Taken by
the grader process, outside the sandbox, around each GPU child.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
from pathlib import Path


def _gpu_id() -> str:
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "0") or "0"
    return "".join(c if c.isalnum() else "_" for c in visible.split(",")[0])


def _paths() -> tuple[Path, Path]:
    base = Path(tempfile.gettempdir()) / f"kernelgrade-gpu-{_gpu_id()}"
    return base.with_suffix(".lock"), base.with_suffix(".turnstile")


@contextlib.contextmanager
def gpu(exclusive: bool):
    """Hold this process's GPU shared (correctness) or exclusive (timing) for the block."""
    lock_path, turnstile_path = _paths()
    with open(turnstile_path, "a") as turnstile, open(lock_path, "a") as lock:
        fcntl.flock(turnstile, fcntl.LOCK_EX)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        finally:
            if not exclusive:
                fcntl.flock(turnstile, fcntl.LOCK_UN)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
            if exclusive:
                fcntl.flock(turnstile, fcntl.LOCK_UN)
