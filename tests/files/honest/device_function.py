"""Honest block_sum whose kernel calls device functions (plain, ``inline="always"``, and one
calling another): a GPU compiles it; the compile check once needed a CUDA driver for it
(issue 30: "CudaSupportError: ... CUDA driver library cannot be found" on a laptop, CI or
Gradescope, and every simulator case voided)."""

from numba import cuda, float32

BLOCK_SIZE = 256


@cuda.jit(device=True)
def load(x, i):
    return x[i] if i < x.shape[0] else float32(0.0)


@cuda.jit(device=True, inline="always")
def add(a, b):
    return a + b


@cuda.jit(device=True)
def reduce_step(sums, tid, stride):
    if tid < stride:
        sums[tid] = add(sums[tid], sums[tid + stride])


@cuda.jit
def block_sum(x, partial):
    sums = cuda.shared.array(BLOCK_SIZE, float32)
    tid = cuda.threadIdx.x
    i = cuda.blockIdx.x * BLOCK_SIZE + tid
    sums[tid] = load(x, i)
    cuda.syncthreads()
    stride = BLOCK_SIZE // 2
    while stride > 0:
        reduce_step(sums, tid, stride)
        cuda.syncthreads()
        stride //= 2
    if tid == 0:
        partial[cuda.blockIdx.x] = sums[0]
