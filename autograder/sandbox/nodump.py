"""Make this process non-dumpable, so that other processes of the same user (a grading child in
a plain sandbox) cannot read its ``/proc/<pid>/environ``, ``mem`` or ``fd`` nor attach to it.

Linux only (``prctl(PR_SET_DUMPABLE, 0)``); elsewhere a no-op. The flag survives ``fork`` and
is reset by ``execve``, so the children a process starts (grading children, the reaper) are
ordinary processes again. Used by :func:`autograder.batch.cluster.local_cluster` for the batch process
and its workers.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

PR_SET_DUMPABLE = 4
PR_GET_DUMPABLE = 3


def _prctl():
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    except OSError:
        return None
    return libc.prctl


def forbid_dumps() -> bool:
    """Mark this process non-dumpable; True when it is now (False off Linux or if prctl
    failed)."""
    prctl = _prctl()
    if prctl is None:
        return False
    return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0 and prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 0
