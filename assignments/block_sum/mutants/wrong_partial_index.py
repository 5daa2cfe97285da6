# kernelgrade-expect: correctness=failed
"""Writes the block's sum to ``partial[threadIdx.x]`` (always 0 for the writing thread) instead
of ``partial[blockIdx.x]``: right for one block, every other partial sum never written."""

from numba import cuda, float32

BLOCK_SIZE = 64


@cuda.jit
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
        partial[tid] = sums[0]
