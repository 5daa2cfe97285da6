"""Textbook variant: the element index from ``cuda.grid(1)``, the loop over the compile-time
BLOCK_SIZE."""

from numba import cuda, float32

BLOCK_SIZE = 256


@cuda.jit
def block_sum(x, partial):
    sums = cuda.shared.array(BLOCK_SIZE, float32)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    if i < x.shape[0]:
        sums[tid] = x[i]
    else:
        sums[tid] = 0.0
    cuda.syncthreads()
    s = BLOCK_SIZE // 2
    while s > 0:
        if tid < s:
            sums[tid] += sums[tid + s]
        cuda.syncthreads()
        s >>= 1
    if tid == 0:
        partial[cuda.blockIdx.x] = sums[0]
