"""Textbook variant: BLOCK_SIZE 512 and the halving loop written as a ``for`` over the
step count (log2 of the block's size)."""

from numba import cuda, float32

BLOCK_SIZE = 512
STEPS = 9  # log2(BLOCK_SIZE)


@cuda.jit
def block_sum(x, partial):
    sums = cuda.shared.array(BLOCK_SIZE, float32)
    tid = cuda.threadIdx.x
    i = cuda.blockIdx.x * BLOCK_SIZE + tid
    sums[tid] = x[i] if i < x.shape[0] else float32(0.0)
    cuda.syncthreads()
    for step in range(STEPS):
        stride = BLOCK_SIZE >> (step + 1)
        if tid < stride:
            sums[tid] += sums[tid + stride]
        cuda.syncthreads()
    if tid == 0:
        partial[cuda.blockIdx.x] = sums[0]
