"""Instructor solution for ``block_sum`` (lecture 2.2, control divergence).

x: float32 (n,); partial: float32 (ceil(n / BLOCK_SIZE),).
Launch: block_sum[ceil(n / BLOCK_SIZE), BLOCK_SIZE](x, partial).
partial[b] = sum of x[b*BLOCK_SIZE : (b+1)*BLOCK_SIZE] (positions past n count as 0).

Tree reduction in shared memory with sequential addressing: in the step with ``stride`` the
active threads are 0..stride-1, contiguous, so whole warps go idle together instead of every
warp keeping a few active lanes (the interleaved ``tid % (2*stride) == 0`` version). The kernel
reads BLOCK_SIZE at compile time only, so the grader may set the student's BLOCK_SIZE here.
"""

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
