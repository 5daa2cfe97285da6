"""Driver for ``grid_barrier_lockfree``: the multi-phase kernel of :mod:`.grid_barrier` (same
phases, same reference) with the student's lock-free barrier between the phases.

The j-th barrier call passes ``goal = j`` (j = 1, 2, …) with ``arrive`` and ``depart``, two int32
arrays of ``gridDim.x`` elements, zero before the launch. The checker block needs one thread per
block, so the grid never exceeds the block size, nor the blocks that can be resident at once
(queried from the driver's occupancy calculator, as for ``grid_barrier``).
"""

from __future__ import annotations

import functools

from ..grid_barrier.driver import compile_phases, reference, run_phases

__all__ = ["drive", "grid", "prepare", "reference"]


@functools.cache
def _call_lock_free(barrier):
    """``call`` for the lock-free barrier: ``barrier(arrive, depart, j)`` (one per ``barrier``,
    so the multi-phase kernel compiles once)."""
    from numba import cuda

    @cuda.jit(device=True)
    def call(state, calls):
        barrier(state[0], state[1], calls)

    return call


def grid(params: dict, resident: int, threads: int) -> int:
    """The block count: ``params["blocks"]`` when given, else ``params["grid_fraction"]`` of
    ``min(resident, threads)`` (at least 2); never more than ``min(resident, threads)``."""
    limit = min(resident, threads)
    if "blocks" in params:
        return max(1, min(limit, int(params["blocks"])))
    return max(1, min(limit, max(2, int(limit * float(params["grid_fraction"])))))


def prepare(function, consts: dict) -> None:
    """Compile the multi-phase kernel around the student's barrier ``function`` before the
    cases start (outside any case's time limit; see :func:`.grid_barrier.driver.prepare`).
    Raises what compiling raises; the case's launch then reports it."""
    compile_phases(_call_lock_free(function), 2)  # the state: (arrive, depart)


def drive(function, views: dict, params: dict, consts: dict) -> None:
    """Run ``params["phases"]`` phases with ``params["threads"]`` threads per block on the grid
    :func:`grid` picks, ``arrive`` and ``depart`` fresh zeroed arrays of that many blocks with
    guarded margins (a write past them is reported: :func:`.grid_barrier.driver.check_state`)."""
    run_phases(_call_lock_free(function), ("arrive", "depart"), views, params,
               lambda resident, threads: grid(params, resident, threads))
