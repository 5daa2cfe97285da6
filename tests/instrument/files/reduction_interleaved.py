"""Shared-memory sum reduction, interleaved addressing (``tid % (2*stride) == 0``): right sums,
but every warp diverges at every step while the stride is below 32."""
from numba import cuda, float32

BLOCK_SIZE = 256


@cuda.jit
def reduce_sum(x, out):
    sdata = cuda.shared.array(BLOCK_SIZE, float32)
    tid = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + tid
    sdata[tid] = x[i] if i < x.shape[0] else float32(0.0)
    cuda.syncthreads()
    stride = 1
    while stride < cuda.blockDim.x:
        if tid % (2 * stride) == 0:
            sdata[tid] += sdata[tid + stride]
        cuda.syncthreads()
        stride *= 2
    if tid == 0:
        out[cuda.blockIdx.x] = sdata[0]
