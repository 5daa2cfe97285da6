"""Which way children run in this grader process: under bubblewrap or as plain child processes.

``KERNELGRADE_SANDBOX`` (:func:`requested`) chooses: ``auto`` (the default: bubblewrap where it
works), ``off`` (always plain) or ``require`` (refuse to grade without bubblewrap:
:class:`SandboxUnavailable`). Under ``auto`` and ``require``, :func:`sandbox_status` probes once
per process whether ``bwrap`` (an optional system package) is installed and can create its
namespaces here, by running ``true`` with the arguments a child gets
(:func:`autograder.sandbox.bwrap.arguments`). A backend whose sandboxed child died before its
first record although the probe passed runs plain from then on in this process
(:func:`fall_back`, :func:`status_for`).

Where bubblewrap cannot run and the grader is root (a container: Gradescope's), each child runs
as an unprivileged user of its own instead (:mod:`autograder.sandbox.dropuser`), when its probe
passes: :attr:`SandboxStatus.user`. That is a sandbox too (``require`` accepts it), for one
grading at a time (Gradescope: one submission per container): a class is not graded so
(:func:`for_class`), since a child could open another grading's scratch folder by its name in
the shared temporary folder. Its results say which sandbox in the instructor's note
(:data:`USER_NOTE`). ``off`` never uses it.

A plain child runs under :mod:`autograder.sandbox.reaper`, and every result graded so carries
:data:`PLAIN_NOTE` with the reason. ``python -m autograder.sandbox`` says which mode applies here.

**A class is graded in the sandbox unless told otherwise** (:func:`for_class`: ``autograder
batch``, nbgrader's autograde; Gradescope requires it already): under ``auto``, a host where
bubblewrap cannot run refuses the class (:class:`SandboxUnavailable`, exit status 2, with how to
install it or ``--no-sandbox``), and where it runs the class is graded under ``require``, so no
child falls back to a plain one. Only ``off`` (``--no-sandbox``), given on purpose, grades a
class plain, and each of its results says so (the instructor's note, and the student's
:data:`UNSANDBOXED_NOTE`). One ``autograder grade`` (a student's laptop) keeps ``auto``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from autograder import settings
from autograder.errors import GraderSetupError
from autograder.sandbox import bwrap, dropuser

PLAIN_NOTE = "sandbox: bubblewrap unavailable ({reason}); ran in a plain child process"
#: The instructor's note on a child run as a user of its own (:mod:`autograder.sandbox.dropuser`).
USER_NOTE = ("sandbox: bubblewrap unavailable ({reason}); ran as an unprivileged user of its own "
             "(no capabilities, the instructor's files closed to it)")
#: What a student reads on a result graded without the sandbox.
UNSANDBOXED_NOTE = "graded without the sandbox"
#: How to get the sandbox, for a refusal.
INSTALL = ("install bubblewrap (Debian/Ubuntu: sudo apt-get install bubblewrap; Fedora/RHEL: "
           "sudo dnf install bubblewrap) and allow unprivileged user namespaces, or grade "
           "without the sandbox on purpose with --no-sandbox (KERNELGRADE_SANDBOX=off): every "
           "result then says so")


class SandboxUnavailable(GraderSetupError):
    """``KERNELGRADE_SANDBOX=require`` and no sandbox can run here (a fault of the grader's
    setup: exit status 2 from every front end)."""


@dataclass(frozen=True)
class SandboxStatus:
    """``available``: bubblewrap runs here; ``reason``: why not (for the plain-mode note);
    ``user``: bubblewrap does not, and children run as users of their own instead
    (:mod:`autograder.sandbox.dropuser`)."""

    available: bool
    reason: str = ""
    user: bool = False

    @property
    def sandboxed(self) -> bool:
        """Whether children run in a sandbox here: bubblewrap, or a user of their own."""
        return self.available or self.user

    @property
    def name(self) -> str:
        """``"bubblewrap"``, ``"user"`` or ``"plain"``: how children run (``ChildRun.sandbox``)."""
        return "bubblewrap" if self.available else "user" if self.user else "plain"


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


def _with_user(status: SandboxStatus) -> SandboxStatus:
    """``status`` (bubblewrap cannot run), with ``user`` set where this process is root and a
    child of its own user passes :func:`autograder.sandbox.dropuser.probe`; else the probe's
    reason is added to ``reason`` (a root grader only)."""
    if status.available or not dropuser.applies():
        return status
    why = dropuser.probe()
    if not why:
        return SandboxStatus(False, status.reason, user=True)
    return SandboxStatus(False, f"{status.reason}; {why}")


def sandbox_status(refresh: bool = False) -> SandboxStatus:
    """Whether bubblewrap can run here, probed once per process (a sandboxed ``true``), and
    where it cannot, whether children can run as users of their own (:func:`_with_user`)."""
    global _status
    if requested() == "off":
        return SandboxStatus(False, "KERNELGRADE_SANDBOX=off")
    with _status_lock:
        if _status is None or refresh:
            _status = _with_user(_probe())
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


def for_class() -> str:
    """The mode a whole class is graded in, checked before any student is: ``"require"`` when
    bubblewrap runs here (under ``auto`` or ``require``), ``"off"`` when asked for on purpose.
    Raises :class:`SandboxUnavailable` (exit status 2) when bubblewrap
    cannot run here and ``off`` was not asked for (a user of its own for each child is for one
    grading at a time, not a class), saying how to install it or pass
    ``--no-sandbox``; ``ValueError`` for a bad ``KERNELGRADE_SANDBOX``. :func:`chosen` sets
    it for the class's processes."""
    chosen = requested()
    if chosen != "off":
        status = sandbox_status()
        if not status.available:
            raise SandboxUnavailable(
                f"a class is graded in the sandbox, and bubblewrap cannot run here "
                f"({status.reason}): {INSTALL}")
        chosen = "require"
    return chosen


@contextlib.contextmanager
def chosen(mode: str):
    """``KERNELGRADE_SANDBOX`` set to ``mode`` for the block (the children and worker processes
    started in it keep to it), as it was afterwards; yields ``mode``."""
    before = os.environ.get(settings.SANDBOX)
    os.environ[settings.SANDBOX] = mode
    try:
        yield mode
    finally:
        if before is None:
            os.environ.pop(settings.SANDBOX, None)
        else:
            os.environ[settings.SANDBOX] = before


def status_for(backend: str) -> SandboxStatus:
    """:func:`sandbox_status` for a child of ``backend`` (``sim``, ``compile`` or ``gpu``):
    unavailable, with the reason, after :func:`fall_back`."""
    status = sandbox_status()
    broken = fallen_back(backend)
    if status.sandboxed and broken:
        status = SandboxStatus(False, broken)
    return status
