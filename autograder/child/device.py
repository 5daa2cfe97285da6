"""In the child: facts about the process and the GPU it runs on (the ``device`` and ``kernel``
records, the packages check) and hardening of the process.
Imports Numba only inside functions called once the backend is chosen."""

from __future__ import annotations

import os

from autograder.host.environment import PACKAGES_ENV, package_facts, package_mismatch
from autograder.wire.protocol import Device, Kernel

#: The ``device`` record's per-SM facts and the driver attributes they come from.
DEVICE_ATTRIBUTES = {
    "multiprocessors": "MULTIPROCESSOR_COUNT",
    "max_threads_per_sm": "MAX_THREADS_PER_MULTIPROCESSOR",
    "max_blocks_per_sm": "MAX_BLOCKS_PER_MULTIPROCESSOR",
    "shared_per_sm": "MAX_SHARED_MEMORY_PER_MULTIPROCESSOR",
    "registers_per_sm": "MAX_REGISTERS_PER_MULTIPROCESSOR",
    "max_threads_per_block": "MAX_THREADS_PER_BLOCK",
    "shared_per_block": "MAX_SHARED_MEMORY_PER_BLOCK",
    "registers_per_block": "MAX_REGISTERS_PER_BLOCK",
    "reserved_shared_per_block": "RESERVED_SHARED_MEMORY_PER_BLOCK",
}


def device_record(dev) -> Device:
    """The ``device`` record of Numba's device ``dev``: its ``name``, ``compute_capability``
    and the driver's limits (:data:`DEVICE_ATTRIBUTES`; bytes for shared memory, 32-bit
    registers); an attribute this driver lacks is left None."""
    name = dev.name.decode() if isinstance(dev.name, bytes) else str(dev.name)
    limits = {}
    for key, attr in DEVICE_ATTRIBUTES.items():
        try:
            limits[key] = int(getattr(dev, attr))
        except Exception:  # an older driver or binding without the attribute
            pass
    return Device(name, [int(x) for x in dev.compute_capability], **limits)


def device_facts(dev) -> dict:
    """:func:`device_record`'s header, as sent (what :mod:`autograder.judge.hints` reads)."""
    return device_record(dev).to_header()


def kernel_record(kernel) -> Kernel | None:
    """The ``kernel`` record, after the kernel ran on the GPU: Numba's ``regs_per_thread``,
    ``shared_bytes`` (static shared memory per block), ``local_bytes`` per thread and
    ``max_threads_per_block`` of its compiled variant (the most demanding one if several
    signatures were compiled); None when nothing was compiled."""
    overloads = list(getattr(kernel, "overloads", {}).values())
    if not overloads:
        return None
    facts = {}
    for key, attr in (("regs_per_thread", "regs_per_thread"),
                      ("shared_bytes", "shared_mem_per_block"),
                      ("local_bytes", "local_mem_per_thread"),
                      ("max_threads_per_block", "max_threads_per_block")):
        values = [int(getattr(o, attr)) for o in overloads]
        facts[key] = min(values) if key == "max_threads_per_block" else max(values)
    return Kernel(**facts)


def kernel_facts(kernel) -> dict | None:
    """:func:`kernel_record`'s header, as sent, or None."""
    record = kernel_record(kernel)
    return record.to_header() if record else None


def start_driver_early():
    """Initialise the CUDA driver and retain device 0's primary context in a thread, so that
    they happen while the main thread imports NumPy and Numba's core (about 0.3 s) instead of
    after Numba's CUDA target (about 0.22 s of a GPU child's start-up on an H200, 2026-11-23):
    Numba's first ``get_current_device()`` then finds both done. The same primary context Numba
    uses (device 0 of ``CUDA_VISIBLE_DEVICES``); the driver's calls release the GIL. Returns
    the thread: join it before ``numba.cuda`` is imported, which loads the driver's bindings
    (while that ran beside a first ``cuInit``, a GPU child crashed once in a class of gradings
    on an H200). Anything that fails here is left for Numba to find and report as it did."""
    import ctypes
    import threading

    def init() -> None:
        try:
            lib = ctypes.CDLL("libcuda.so.1")
            device, context = ctypes.c_int(), ctypes.c_void_p()
            if lib.cuInit(0) == 0 and lib.cuDeviceGet(ctypes.byref(device), 0) == 0:
                lib.cuDevicePrimaryCtxRetain(ctypes.byref(context), device)
        except (OSError, AttributeError):
            pass

    thread = threading.Thread(target=init, name="cuda-driver-init", daemon=True)
    thread.start()
    return thread


def package_problem() -> str | None:
    """How this process's numpy, numba, numba-cuda and llvmlite (versions and folders) differ
    from the grader's, which the grader puts in the environment
    (:data:`autograder.host.environment.PACKAGES_ENV`; removed here, before any student code runs);
    None when they agree or the grader sent none."""
    import json

    raw = os.environ.pop(PACKAGES_ENV, None)
    try:
        expected = json.loads(raw) if raw else None
    except ValueError:
        expected = None
    return package_mismatch(expected, package_facts())


def not_dumpable() -> None:
    """``PR_SET_DUMPABLE`` 0: other processes of the same user (a sibling child) can no longer
    open this one's ``/proc/<pid>/fd``, ``mem`` or ``environ``, nor ptrace it."""
    try:
        import ctypes

        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE
    except (OSError, AttributeError):
        pass
