"""The child's settings for Numba's CUDA simulator, applied once it is chosen and before any
kernel runs: a short thread switch interval, and shared arrays that every thread of a block
really shares."""

from __future__ import annotations

import sys
import threading

# The simulator runs each CUDA thread of a block as a Python thread, and its block manager polls
# them without ever blocking: each time it gets the GIL it keeps it for a whole switch interval
# while the kernel's threads wait. At Python's 5 ms a block of a few threads spends most of its
# CPU time there. Measured per exercise in the harness (benchmarks/results/
# 2026-11-22_sim_speed.md), 0.2 ms was within noise of the best setting at every block size from
# 4 to 1024 threads (2-3.6 times less CPU than 5 ms at 16-64 threads); 0.1 ms and less cost up to
# 1.7 times more at 256-1024 threads. Set in the simulator child only, before the launches.
SIM_SWITCH_INTERVAL = 2e-4


def prepare_simulator() -> None:
    """Set :data:`SIM_SWITCH_INTERVAL`, make the simulator's shared arrays thread-safe
    (:func:`thread_safe_shared_arrays`) and let ``x.shape[-1]`` work as on a GPU
    (:func:`negative_shape_indices`)."""
    sys.setswitchinterval(SIM_SWITCH_INTERVAL)
    thread_safe_shared_arrays()
    negative_shape_indices()


def negative_shape_indices() -> None:
    """Let a kernel index its arrays' ``shape`` from the end, as Numba's GPU target does
    (``x.shape[-1]`` compiles and is the last dimension there; measured on an H100, 2026-11-24).
    The simulator (numba-cuda 0.30.4, ``FakeShape``) raises ``IndexError`` for it, so an honest
    kernel that a GPU runs lost every point on the simulator. Idempotent."""
    from numba.cuda.simulator.cudadrv import devicearray

    devicearray.FakeShape.__getitem__ = tuple.__getitem__


def thread_safe_shared_arrays() -> None:
    """Make ``cuda.shared.array`` in the simulator give every thread of a block the same array.

    The simulator (numba-cuda 0.30.4, ``FakeCUDAShared.array``) keys a block's shared arrays by
    the calling line and makes one on the first call: a look-up, then ``np.empty``, then a store,
    with no lock. A thread switch between the look-up and the store (likelier with
    :data:`SIM_SWITCH_INTERVAL`) gives two threads two uninitialized arrays, so a correct kernel
    reads garbage: seen once, the block_scan solution's preflight with a whole block wrong
    ("first at out[1]: got -536668266"). The same method, under a lock. Idempotent."""
    import numpy as np
    from numba.cuda.simulator import kernelapi

    shared = kernelapi.FakeCUDAShared
    if getattr(shared.array, "thread_safe", False):
        return
    original = shared.array
    lock = threading.Lock()

    def array(self, shape, dtype, alignment=None):
        if shape == 0 or alignment is not None:  # dynamic shared memory, or an error
            return original(self, shape, dtype, alignment)
        if isinstance(dtype, kernelapi.types.Type):
            dtype = kernelapi.numpy_support.as_dtype(dtype)
        caller = sys._getframe(1)  # the kernel's line, as the simulator keys it
        key = (caller.f_code.co_filename, caller.f_lineno)
        with lock:
            found = self._allocations.get(key)
            if found is None:
                found = self._allocations[key] = np.empty(shape, dtype)
        return found

    array.thread_safe = True
    shared.array = array
