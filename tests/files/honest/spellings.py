"""Honest block_sum that names numba.cuda's kernel API in every way a GPU compiles: through the
module (``import numba.cuda`` then ``numba.cuda.grid(1)``, ``numba.cuda.shared.array``,
``numba.float32``), through the package under another name (``import numba as nb`` then
``nb.cuda.threadIdx.x``), numba's types through the module (``cu.int32``), by an alias
(``import numba.cuda as cu``, ``from numba import cuda as nc``) and by name (``from numba.cuda import grid, syncthreads``). Issue 30: on the simulator
the first raised AttributeError ("your kernel raised") and the last failed to import."""

import numba
import numba as nb
import numba.cuda
import numba.cuda as cu
from numba import cuda as nc
from numba import float32
from numba.cuda import grid, syncthreads

BLOCK_SIZE = 256


@numba.cuda.jit
def block_sum(x, partial):
    sums = numba.cuda.shared.array(BLOCK_SIZE, numba.float32)
    tid = nb.cuda.threadIdx.x
    i = grid(1)
    sums[tid] = x[i] if i < cu.int32(x.shape[0]) else float32(0.0)
    numba.cuda.syncthreads()
    stride = BLOCK_SIZE // 2
    while stride > 0:
        if tid < stride:
            sums[tid] += sums[tid + stride]
        syncthreads()
        stride //= 2
    if cu.threadIdx.x == 0:
        partial[nc.blockIdx.x] = sums[0]
