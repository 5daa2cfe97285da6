# kernelgrade-expect: concept=failed
"""Right answers without the concept: each thread sums its block's prefix straight from global
memory (O(BLOCK_SIZE) reads per thread, no shared memory, no barriers)."""

from numba import cuda

BLOCK_SIZE = 32


@cuda.jit
def block_scan(x, out):
    i = cuda.blockIdx.x * BLOCK_SIZE + cuda.threadIdx.x
    if i < x.shape[0]:
        total = 0
        for j in range(cuda.blockIdx.x * BLOCK_SIZE, i + 1):
            total += x[j]
        out[i] = total
