# kernelgrade-expect-sim: correctness=error
# kernelgrade-expect-gpu: correctness=failed
"""Loads ``x[i]`` without ``i < n``: the last block reads past the end of x (an IndexError on
the simulator; NaN from the guard band, so a NaN partial sum, on a GPU)."""

from numba import cuda, float32

BLOCK_SIZE = 128


@cuda.jit
def block_sum(x, partial):
    sums = cuda.shared.array(BLOCK_SIZE, float32)
    tid = cuda.threadIdx.x
    sums[tid] = x[cuda.blockIdx.x * BLOCK_SIZE + tid]
    cuda.syncthreads()
    stride = BLOCK_SIZE // 2
    while stride > 0:
        if tid < stride:
            sums[tid] += sums[tid + stride]
        cuda.syncthreads()
        stride //= 2
    if tid == 0:
        partial[cuda.blockIdx.x] = sums[0]
