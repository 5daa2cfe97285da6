"""Driver for ``grid_barrier``: a multi-phase kernel whose phases read what other blocks wrote in
the previous phase, separated by the student's grid-wide barrier.

Phase ``p`` computes ``buf_p[e] = 3 * buf_{p-1}[(e + shift_p) % n] + p`` (int32, wrapping) for
every element ``e``, with ``buf_{-1} = x`` and the last phase writing ``out``; the shift makes each
block depend on other blocks. The j-th barrier call passes ``goal = j * gridDim.x`` (the seed
article's ``goalVal``). The grid never exceeds the blocks that can be resident at once, queried
from the driver's occupancy calculator: one block too many would deadlock any correct barrier.
"""

from __future__ import annotations

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


def _build(barrier):
    from numba import cuda

    @cuda.jit
    def multi_phase(counter, x, out, tmp, shift, phases):
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
            barrier(counter, calls * cuda.gridDim.x)

    return multi_phase


def resident_grid(kernel, args, threads: int) -> int:
    """Blocks that fit on the device at once for ``kernel`` at ``threads`` per block."""
    from numba import typeof

    compiled = kernel.compile(tuple(typeof(a) for a in args))
    return int(compiled.max_cooperative_grid_blocks(threads))


def drive(function, views: dict, params: dict, consts: dict) -> None:
    """Run ``params["phases"]`` phases with ``params["threads"]`` threads per block on a grid of
    ``params["grid_fraction"]`` of the resident blocks (at least 2)."""
    from numba import cuda

    n = views["x"].shape[0]
    phases = int(params["phases"])
    kernel = _build(function)
    counter = cuda.to_device(np.zeros(1, np.int32))
    tmp = cuda.device_array(n, np.int32)
    shift = cuda.to_device(np.array(shifts(n, phases), np.int64))
    args = (counter, views["x"], views["out"], tmp, shift, phases)
    threads = int(params["threads"])
    grid = max(2, int(resident_grid(kernel, args, threads) * float(params["grid_fraction"])))
    kernel[grid, threads](*args)
