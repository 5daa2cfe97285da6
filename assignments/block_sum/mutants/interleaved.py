# kernelgrade-expect: concept=failed, diagnostic: warps=failed
# kernelgrade-expect-gpu: timing=failed
"""The interleaved reduction (``tid % (2 * stride) == 0``): correct, but every warp keeps a few
active lanes in every step (control divergence): 1.7x the instructor's time on an H200 at 256
threads, and 48 divergent warp branches per block in the instrumented simulator run (the
instructor's kernel: 6)."""

from numba import cuda, float32

BLOCK_SIZE = 256


@cuda.jit
def block_sum(x, partial):
    sums = cuda.shared.array(BLOCK_SIZE, float32)
    tid = cuda.threadIdx.x
    i = cuda.blockIdx.x * BLOCK_SIZE + tid
    sums[tid] = x[i] if i < x.shape[0] else float32(0.0)
    cuda.syncthreads()
    stride = 1
    while stride < BLOCK_SIZE:
        if tid % (2 * stride) == 0:
            sums[tid] += sums[tid + stride]
        cuda.syncthreads()
        stride *= 2
    if tid == 0:
        partial[cuda.blockIdx.x] = sums[0]
