"""Shared-memory sum reduction, sequential addressing (``tid < stride``): the correct kernel,
barrier outside the ``if``; whole warps stay on one side of the branch until stride < 32."""
from numba import cuda, float32

BLOCK_SIZE = 256


@cuda.jit
def reduce_sum(x, out):
    sdata = cuda.shared.array(BLOCK_SIZE, float32)
    tid = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + tid
    sdata[tid] = x[i] if i < x.shape[0] else float32(0.0)
    cuda.syncthreads()
    stride = cuda.blockDim.x // 2
    while stride > 0:
        if tid < stride:
            sdata[tid] += sdata[tid + stride]
        cuda.syncthreads()
        stride //= 2
    if tid == 0:
        out[cuda.blockIdx.x] = sdata[0]
