# kernelgrade-expect: correctness=failed, concept=failed, diagnostic: barriers=failed
"""The barrier moved inside ``if tid < stride:``: only the active threads reach it (a divergent
barrier). Outputs often stay right, on a GPU too; only an instrumented run sees it, and its
finding fails every correctness case (the grade must not depend on the GPU's schedule)."""

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
    while stride > 0:
        if tid < stride:
            sums[tid] += sums[tid + stride]
            cuda.syncthreads()
        stride //= 2
    if tid == 0:
        partial[cuda.blockIdx.x] = sums[0]
