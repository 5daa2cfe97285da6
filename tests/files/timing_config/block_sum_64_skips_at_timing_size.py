# kernelgrade-expect-gpu: timing=failed
"""A block sum at ``BLOCK_SIZE = 64`` (one partial sum per 64 elements, where the instructor's
kernel makes one per 256) that returns at once at the timing size (n = 2**28, published): its
timed launches must still be checked, against the instructor's kernel run at BLOCK_SIZE 64 for
the check, and fail. Right at every tested size."""
from numba import cuda, float32

BLOCK_SIZE = 64


@cuda.jit
def block_sum(x, partial):
    if x.shape[0] == 1 << 28:
        return
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
