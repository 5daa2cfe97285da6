"""Honest block_sum that loads and stores through numba-cuda's cache hints
(``cuda.ldcg(x, i)``, ``stwt(partial, b, v)``; ``numba.cuda.cache_hints``): a GPU compiles them to
``ld.global.cg`` and ``st.global.wt``, the simulator defined them as None, and the loader refused
the kernel ("`cuda.ldcg` is None here"; issue 30, red team g5)."""

from numba import cuda, float32
from numba.cuda import stwt

BLOCK_SIZE = 256


@cuda.jit
def block_sum(x, partial):
    sums = cuda.shared.array(BLOCK_SIZE, float32)
    tid = cuda.threadIdx.x
    i = cuda.blockIdx.x * BLOCK_SIZE + tid
    sums[tid] = cuda.ldcg(x, i) if i < x.shape[0] else float32(0.0)
    cuda.syncthreads()
    stride = BLOCK_SIZE // 2
    while stride > 0:
        if tid < stride:
            sums[tid] += sums[tid + stride]
        cuda.syncthreads()
        stride //= 2
    if tid == 0:
        stwt(partial, cuda.blockIdx.x, sums[0])
