"""Reduction whose out-of-range threads return before the first barrier: the threads left wait
at a barrier the others never reach."""
from numba import cuda, float32

BLOCK_SIZE = 64


@cuda.jit
def reduce_sum(x, out):
    sdata = cuda.shared.array(BLOCK_SIZE, float32)
    tid = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + tid
    if i >= x.shape[0]:
        return
    sdata[tid] = x[i]
    cuda.syncthreads()
    stride = cuda.blockDim.x // 2
    while stride > 0:
        if tid < stride and i + stride < x.shape[0]:
            sdata[tid] += sdata[tid + stride]
        cuda.syncthreads()
        stride //= 2
    if tid == 0:
        out[cuda.blockIdx.x] = sdata[0]
