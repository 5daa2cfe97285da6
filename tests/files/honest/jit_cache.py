"""Honest block_sum compiled with ``@cuda.jit(cache=True)`` (numba-cuda's file cache of the
compiled kernel: nothing it computes changes). The loader refused the option ("cuda.jit option
cache= is not allowed here"): 0 points (issue 30, red team g4). The grader leaves it out and
compiles afresh."""

from numba import cuda, float32

BLOCK_SIZE = 256


@cuda.jit(cache=True, opt=True)
def block_sum(x, partial):
    sums = cuda.shared.array(BLOCK_SIZE, float32)
    tid = cuda.threadIdx.x
    i = cuda.blockIdx.x * BLOCK_SIZE + tid
    sums[tid] = x[i] if i < x.shape[0] else float32(0.0)
    cuda.syncthreads()
    stride = BLOCK_SIZE // 2
    while stride > 0:
        if tid < stride:
            sums[tid] += sums[tid + stride]
        cuda.syncthreads()
        stride //= 2
    if tid == 0:
        partial[cuda.blockIdx.x] = sums[0]
