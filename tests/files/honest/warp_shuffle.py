"""Honest block_sum that finishes each block's sum with warp shuffles (``cuda.shfl_down_sync``),
a textbook optimisation a GPU runs. Numba's simulator has no warp intrinsics: the grader says
so (a skipped case that needs a GPU), never "your kernel raised" (issue 30)."""

from numba import cuda, float32

BLOCK_SIZE = 256


@cuda.jit
def block_sum(x, partial):
    sums = cuda.shared.array(BLOCK_SIZE, float32)
    tid = cuda.threadIdx.x
    i = cuda.blockIdx.x * BLOCK_SIZE + tid
    sums[tid] = x[i] if i < x.shape[0] else float32(0.0)
    cuda.syncthreads()
    stride = BLOCK_SIZE // 2
    while stride >= 32:
        if tid < stride:
            sums[tid] += sums[tid + stride]
        cuda.syncthreads()
        stride //= 2
    if tid < 32:
        v = sums[tid]
        offset = 16
        while offset > 0:
            v += cuda.shfl_down_sync(0xFFFFFFFF, v, offset)
            offset //= 2
        if tid == 0:
            partial[cuda.blockIdx.x] = v
