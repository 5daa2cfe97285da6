"""Which way children run in this grader process: under bubblewrap or as plain child processes.

``KERNELGRADE_SANDBOX`` (:func:`requested`) chooses: ``auto`` (the default: bubblewrap where it
works), ``off`` (always plain) or ``require`` (refuse to grade without bubblewrap:
:class:`SandboxUnavailable`). Under ``auto`` and ``require``, :func:`sandbox_status` probes once
per process whether ``bwrap`` (an optional system package) is installed and can create its
namespaces here, by running ``true`` with the arguments a child gets
(:func:`autograder.sandbox.bwrap.arguments`). A backend whose sandboxed child died before its
first record although the probe passed runs plain from then on in this process
(:func:`fall_back`, :func:`status_for`).

A plain child runs under :mod:`autograder.sandbox.reaper`, and every result graded so carries
:data:`PLAIN_NOTE` with the reason. ``python -m autograder.sandbox`` says which mode applies here.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from autograder import settings
from autograder.errors import GraderSetupError
from autograder.sandbox import bwrap

PLAIN_NOTE = "sandbox: bubblewrap unavailable ({reason}); ran in a plain child process"


class SandboxUnavailable(GraderSetupError):
    """``KERNELGRADE_SANDBOX=require`` and bubblewrap cannot run here (a fault of the grader's
    setup: exit status 2 from every front end)."""


@dataclass(frozen=True)
class SandboxStatus:
    """``available``: bubblewrap runs here; ``reason``: why not (for the plain-mode note)."""

    available: bool
    reason: str = ""


_status: SandboxStatus | None = None
_status_lock = threading.Lock()


def requested() -> str:
    """``auto``, ``off`` or ``require``: the mode ``KERNELGRADE_SANDBOX`` asks for (``auto`` when
    unset or empty). Raises ``ValueError`` for anything else."""
    mode = os.environ.get(settings.SANDBOX, "auto").strip().lower() or "auto"
    if mode not in ("auto", "off", "require"):
        raise ValueError(f"KERNELGRADE_SANDBOX must be auto, off or require, not {mode!r}")
    return mode


def _probe() -> SandboxStatus:
    if shutil.which("bwrap") is None:
        return SandboxStatus(False, "bwrap is not installed")
    with tempfile.TemporaryDirectory(prefix="kernelgrade-probe-") as tmp:
        cmd = bwrap.arguments(Path(tmp), gpu=False) + ["/usr/bin/env", "true"]
        try:
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=20,
                                 stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return SandboxStatus(False, f"bwrap did not start: {exc}")
    if out.returncode != 0:
        msg = (out.stderr.strip().splitlines() or [f"exit code {out.returncode}"])[-1]
        return SandboxStatus(False, f"bwrap cannot create its namespaces here: {msg}")
    return SandboxStatus(True)


def sandbox_status(refresh: bool = False) -> SandboxStatus:
    """Whether bubblewrap can run here, probed once per process (a sandboxed ``true``)."""
    global _status
    if requested() == "off":
        return SandboxStatus(False, "KERNELGRADE_SANDBOX=off")
    with _status_lock:
        if _status is None or refresh:
            _status = _probe()
        return _status


_broken: dict[str, str] = {}


def fall_back(backend: str, reason: str) -> None:
    """Run ``backend``'s children plain from now on in this process: its sandboxed child failed
    to start (``reason``, for the plain-mode note) although the probe passed."""
    _broken[backend] = reason


def fallen_back(backend: str) -> str | None:
    """Why ``backend``'s children run plain though the probe passed (:func:`fall_back`), or
    None."""
    return _broken.get(backend)


def status_for(backend: str) -> SandboxStatus:
    """:func:`sandbox_status` for a child of ``backend`` (``sim``, ``compile`` or ``gpu``):
    unavailable, with the reason, after :func:`fall_back`."""
    status = sandbox_status()
    broken = fallen_back(backend)
    if status.available and broken:
        status = SandboxStatus(False, broken)
    return status
