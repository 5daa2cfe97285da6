# kernelgrade-expect: correctness=failed, concept=failed, diagnostic: shared-memory races=failed
"""No barrier between the reduction's steps: a thread may add ``sums[tid + stride]`` before the
thread that owns it has finished the previous step (a race)."""

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
        stride //= 2
    if tid == 0:
        partial[cuda.blockIdx.x] = sums[0]
