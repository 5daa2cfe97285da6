"""The child's settings for Numba's CUDA simulator, applied once it is chosen and before any
kernel runs: a block's threads run one at a time in a fixed order, a short thread switch
interval, and shared arrays that every thread of a block really shares."""

from __future__ import annotations

import sys
import threading

# Where a block's lanes run all at once (they let go: a kernel spinning on another of its
# threads), they compete for the interpreter lock as in Numba's own simulator, whose polling
# block manager kept it for a whole switch interval while the kernel's threads waited. Measured
# there (benchmarks/results/2026-11-22_sim_speed.md), 0.2 ms was within noise of the best
# setting at every block size from 4 to 1024 threads (2-3.6 times less CPU than Python's 5 ms
# at 16-64 threads). Lanes in turn do not compete: one runs at a time.
SIM_SWITCH_INTERVAL = 2e-4


def prepare_simulator() -> None:
    """Set :data:`SIM_SWITCH_INTERVAL`, run blocks one lane at a time
    (:func:`lanes_in_turn`), make the simulator's shared arrays thread-safe
    (:func:`thread_safe_shared_arrays`) and let ``x.shape[-1]`` work as on a GPU
    (:func:`negative_shape_indices`)."""
    sys.setswitchinterval(SIM_SWITCH_INTERVAL)
    lanes_in_turn()
    thread_safe_shared_arrays()
    negative_shape_indices()


# CPU seconds without a hand-over before a block's lanes all run at once (instrument.scheduler).
PATIENCE = 0.5
# The most lanes kept parked between launches (threads of 1 MiB stack, reused by block shape).
MAX_PARKED_LANES = 2048


class _Runners:
    """One :class:`~autograder.instrument.scheduler.BlockRunner` per block shape, reused by
    every launch of the child; the oldest is closed when more than :data:`MAX_PARKED_LANES`
    lanes would be parked."""

    def __init__(self):
        self.by_shape: dict = {}

    def get(self, block_dim: tuple[int, int, int]):
        from autograder.instrument.scheduler import BlockRunner

        runner = self.by_shape.pop(block_dim, None)
        if runner is None:
            runner = BlockRunner(None, block_dim, patience=PATIENCE)
        self.by_shape[block_dim] = runner   # now the newest
        while sum(len(r.lanes) for r in self.by_shape.values()) > MAX_PARKED_LANES \
                and len(self.by_shape) > 1:
            oldest = next(iter(self.by_shape))
            self.by_shape.pop(oldest).close()
        return runner


_RUNNERS = _Runners()


class LanesInTurn:
    """Stands in for the simulator's ``BlockManager`` (numba-cuda 0.30.4, made for each block
    of a launch with the kernel, grid, block shape and debug flag): the block's threads run one
    at a time in thread-id order, each to its next barrier, by a reused runner.

    Numba's manager starts a thread per CUDA thread for every block and polls them while they
    all compete for the interpreter lock; about half of a simulated grading's CPU time went to
    the kernel's system calls of that competition. A fixed order also makes a racy kernel's
    outputs the same on every run, so its grade is. The error raised is Numba's: the first
    failing thread's exception, its message prefixed with ``tid=[x, y, z] ctaid=[x, y, z]: ``."""

    def __init__(self, f, grid_dim, block_dim, debug):
        self.f, self.block_dim, self.debug = f, tuple(block_dim), debug

    def run(self, grid_point, *args):
        from autograder.instrument.scheduler import KernelFailure

        runner = _RUNNERS.get(self.block_dim)
        runner.fn, runner.debug = self.f, self.debug
        try:
            runner.run_block(tuple(int(g) for g in grid_point), args)
        except KernelFailure as failure:
            raise _as_numba_error(failure, runner.lanes[failure.tid]) from None


def _as_numba_error(failure, lane) -> BaseException:
    exc = failure.exc
    where = f"tid={list(lane.threadIdx)} ctaid={list(failure.block)}"
    message = f"{where}: {exc}" if str(exc) else where
    try:
        error = type(exc)(message)
    except Exception:  # noqa: BLE001 - an exception type with another constructor
        error = exc
    return error.with_traceback(exc.__traceback__)


def lanes_in_turn() -> None:
    """Make the simulator run every block with :class:`LanesInTurn`. Idempotent."""
    from numba.cuda.simulator import kernel

    kernel.BlockManager = LanesInTurn


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
