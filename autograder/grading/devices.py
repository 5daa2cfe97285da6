"""Choosing where a grading runs: the GPU (when one is visible, checked without creating a CUDA
context here) or the Numba CUDA simulator, and the children's time limits for each."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess

from autograder.errors import GraderSetupError
from autograder.sandbox.gpu_nodes import DRIVER_GPUS
from autograder.sandbox.limits import Limits


def gpu_count() -> int | None:
    """GPUs the NVIDIA driver lists: the folders of :data:`DRIVER_GPUS` (instant), else
    ``nvidia-smi -L`` (about 0.1 s on an H100 host); None without either. No CUDA context is
    created here, and ``CUDA_VISIBLE_DEVICES`` is not applied."""
    listed = glob.glob(os.path.join(DRIVER_GPUS, "*"))
    if listed:
        return len(listed)
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return None
    try:
        out = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return 0
    if out.returncode != 0:
        return 0
    return sum(1 for ln in out.stdout.splitlines() if ln.startswith("GPU "))


def smallest_gpu_memory_bytes() -> int | None:
    """The total memory of the smallest GPU ``nvidia-smi`` lists, in bytes; None without an
    answer. No CUDA context is created here."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return None
    try:
        out = subprocess.run([smi, "--query-gpu=memory.total", "--format=csv,noheader,nounits"],
                             capture_output=True, text=True, timeout=20)
        mib = [int(ln.strip()) for ln in out.stdout.splitlines() if ln.strip()]
    except (OSError, subprocess.TimeoutExpired, ValueError):
        return None
    return min(mib) << 20 if out.returncode == 0 and mib else None


def no_gpu_reason() -> str | None:
    """Why no NVIDIA GPU is visible here (one short phrase), or None when one is (checked
    without creating a CUDA context here)."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", None)
    if visible in ("", "-1"):
        return f"CUDA_VISIBLE_DEVICES={visible!r} hides every GPU"
    if not glob.glob("/dev/nvidia[0-9]*"):
        return "this machine has no NVIDIA device node /dev/nvidia0"
    if gpu_count() == 0:
        return "nvidia-smi lists none"
    return None


def gpu_available() -> bool:
    """True when an NVIDIA GPU is visible (checked without creating a CUDA context here)."""
    return no_gpu_reason() is None


def resolve_device(device: str) -> str:
    """``"auto"`` → ``"gpu"`` when a GPU is visible, else ``"sim"``; other values pass through.
    Raises ``ValueError`` for anything but auto, gpu and sim, and
    :class:`autograder.errors.GraderSetupError` for ``gpu`` where no GPU is visible."""
    if device not in ("auto", "gpu", "sim"):
        raise ValueError(f"--device must be auto, gpu or sim, not {device!r}")
    if device == "auto":
        return "gpu" if gpu_available() else "sim"
    if device == "gpu":
        reason = no_gpu_reason()
        if reason:
            raise GraderSetupError(f"--device gpu, but no GPU is visible here ({reason})")
    return device


def default_limits(backend: str) -> Limits:
    """The children's deadlines for ``backend`` (``sim`` or ``gpu``); see
    :class:`autograder.sandbox.limits.Limits`.

    Simulator and compile children count seconds of CPU time, so a busy grader never fails a
    correct kernel. A case's CPU budget is 10 s plus 15 ms per input element, at most 60 s:
    measured in the harness, the costliest simulator case of a correct solution at a legal but
    small tile (``matmul_any_size`` 37×41×43, 3,280 input elements, ``TILE_WIDTH`` 4) used
    17–27 s of CPU time with Python's default thread switch interval and about 3 s with the
    harness's shorter one (budget 59 s); a 16×16 case uses under 1 s (budget 17.7 s, so a kernel
    that spins there is stopped after 17.7 s of CPU time). A child that uses no CPU for 60 s
    (blocked) or runs 10 times its budget in wall time is stopped too.

    GPU children count wall time: a spinning kernel (a grid barrier that never opens) burns
    the GPU, not the host's CPU, and is stopped after ``case_timeout`` seconds, 5. That is
    what a deadlocked case costs, and it is safe for a correct kernel on a loaded host because
    nothing slow happens inside a GPU case any more: every case's kernel is compiled before the
    first case's ``start`` (:func:`autograder.child.cases.compile_for_cases`; a grid-barrier
    exercise's multi-phase kernel by its driver's ``prepare``; a kernel with a scalar
    argument would still compile in its first case: no exercise has one), and waiting for the
    GPU lock does not count. What is left is a case's own GPU work and host-device copies (the
    largest cases move a few tens of MB): milliseconds, far inside 5 s even when other
    gradings' kernels share the GPU. Compiling counts against ``total_timeout`` only; the
    timing phase has its own limit (``timing_timeout``); compute-sanitizer runs, many times
    slower per launch, keep 15 s (:data:`autograder.judge.diagnostics.SANITIZER_CASE_TIMEOUT`).
    """
    if backend == "sim":
        return Limits(import_timeout=30.0, case_timeout=60.0, total_timeout=240.0,
                      case_cpu_per_element=0.015)
    return Limits(import_timeout=30.0, case_timeout=5.0, total_timeout=90.0)
