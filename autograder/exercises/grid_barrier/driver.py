"""Driver for ``grid_barrier``: a multi-phase kernel whose phases read what other blocks wrote in
the previous phase, separated by the student's grid-wide barrier.

Phase ``p`` computes ``buf_p[e] = 3 * buf_{p-1}[(e + shift_p) % n] + p`` (int32, wrapping) for
every element ``e``, with ``buf_{-1} = x`` and the last phase writing ``out``; the shift makes each
block depend on other blocks. The j-th barrier call passes ``goal = j * gridDim.x`` (the seed
article's ``goalVal``). The grid never exceeds the blocks that can be resident at once, queried
from the driver's occupancy calculator: one block too many would deadlock any correct barrier.

The multi-phase kernel, its reference and the launch (:func:`run_phases`) are shared with the
other grid-barrier drivers (``grid_barrier_lockfree``): each gives its barrier's state (a tuple of
device arrays, here ``(counter,)``) and a device function ``call(state, j)`` that makes the j-th
barrier call. Each driver's ``prepare(function, consts)`` compiles that kernel around the
student's barrier before the first case starts (:func:`compile_phases`), so compiling never
counts against a case's wall-clock limit.
"""

from __future__ import annotations

import functools

import numpy as np


def shifts(n: int, phases: int) -> list[int]:
    """The per-phase shift, large and odd so that each block reads other blocks' elements."""
    return [((p + 1) * 7919) % n for p in range(phases)]


def reference(x: np.ndarray, phases: int) -> np.ndarray:
    """The expected ``out`` for input ``x`` (int32, shape (n,))."""
    buf = x.astype(np.int64)
    for p, s in enumerate(shifts(x.size, phases)):
        buf = (3 * np.roll(buf, -s) + p).astype(np.int32).astype(np.int64)
    return buf.astype(np.int32)


@functools.cache
def build(call):
    """The multi-phase kernel ``multi_phase(state, x, out, tmp, shift, phases)``; after each phase
    it runs ``call(state, j)`` (a device function; ``j`` = 1, 2, … counts the barrier calls).
    One kernel per ``call`` in a process: each case launches the same kernel, compiled once,
    before the first case starts (:func:`prepare`)."""
    from numba import cuda

    @cuda.jit
    def multi_phase(state, x, out, tmp, shift, phases):
        n = x.shape[0]
        stride = cuda.gridDim.x * cuda.blockDim.x
        first = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        calls = 0
        for p in range(phases):
            last_is_out = (phases - 1 - p) % 2 == 0
            e = first
            while e < n:
                j = (e + shift[p]) % n
                if p == 0:
                    v = x[j]
                elif last_is_out:  # phase p-1 wrote tmp
                    v = tmp[j]
                else:
                    v = out[j]
                if last_is_out:
                    out[e] = 3 * v + p
                else:
                    tmp[e] = 3 * v + p
                e += stride
            calls += 1
            call(state, calls)

    return multi_phase


@functools.cache
def _call_lock_based(barrier):
    """``call`` for the lock-based barrier: ``barrier(counter, j * gridDim.x)`` (one per
    ``barrier``, so :func:`build` compiles once)."""
    from numba import cuda

    @cuda.jit(device=True)
    def call(state, calls):
        barrier(state[0], calls * cuda.gridDim.x)

    return call


def launch_types(state_arrays: int) -> tuple:
    """The Numba argument types :func:`run_phases` launches :func:`build`'s kernel with:
    ``state`` (a tuple of ``state_arrays`` int32 C-contiguous 1-D device arrays), ``x``, ``out``
    and ``tmp`` (int32, C-contiguous 1-D: the harness's views are contiguous slices of its
    guarded buffers), ``shift`` (int64, C-contiguous 1-D) and ``phases`` (a Python int: int64)."""
    from numba import types

    ints = types.Array(types.int32, 1, "C")
    return (types.UniTuple(ints, state_arrays), ints, ints, ints,
            types.Array(types.int64, 1, "C"), types.int64)


def compile_phases(call, state_arrays: int):
    """Compile :func:`build`'s kernel for ``call`` for :func:`launch_types` (the launches of
    :func:`run_phases` then find it compiled) and return the compiled kernel. Needs a CUDA
    context; raises Numba's typing and lowering errors (a barrier that does not compile)."""
    return build(call).compile(launch_types(state_arrays))


def prepare(function, consts: dict) -> None:
    """Compile the multi-phase kernel around the student's barrier ``function`` before the
    cases start (the harness calls this outside any case's time limit,
    :func:`autograder.child_cases.compile_for_cases`), so a case's wall-clock limit covers its
    GPU work, not the JIT. Raises what compiling raises; the case's launch then reports it."""
    compile_phases(_call_lock_based(function), 1)  # the state: (counter,)


def resident_grid(kernel, args, threads: int) -> int:
    """Blocks that fit on the device at once for ``kernel`` at ``threads`` per block."""
    from numba import typeof

    compiled = kernel.compile(tuple(typeof(a) for a in args))
    return int(compiled.max_cooperative_grid_blocks(threads))


def run_phases(call, make_state, views: dict, params: dict, grid_for) -> None:
    """Launch :func:`build`'s kernel for ``call`` on ``views["x"]`` → ``views["out"]`` with
    ``params["phases"]`` phases and ``params["threads"]`` threads per block.
    ``grid_for(resident, threads)`` picks the block count from the blocks the occupancy
    calculator lets be resident at once; ``make_state(blocks)`` makes the barrier's tuple of
    fresh device arrays for that many blocks. The argument types are :func:`launch_types`'s, so
    a kernel compiled by :func:`compile_phases` is not compiled again."""
    from numba import cuda

    n = views["x"].shape[0]
    phases = int(params["phases"])
    kernel = build(call)
    tmp = cuda.device_array(n, np.int32)
    shift = cuda.to_device(np.array(shifts(n, phases), np.int64))
    args = (views["x"], views["out"], tmp, shift, phases)
    threads = int(params["threads"])
    probe = (make_state(1),) + args  # the argument types, for the occupancy query
    grid = int(grid_for(resident_grid(kernel, probe, threads), threads))
    kernel[grid, threads](make_state(grid), *args)


def drive(function, views: dict, params: dict, consts: dict) -> None:
    """Run ``params["phases"]`` phases with ``params["threads"]`` threads per block on a grid of
    ``params["grid_fraction"]`` of the resident blocks (at least 2)."""
    from numba import cuda

    fraction = float(params["grid_fraction"])
    run_phases(_call_lock_based(function),
               lambda blocks: (cuda.to_device(np.zeros(1, np.int32)),),
               views, params, lambda resident, threads: max(2, int(resident * fraction)))
