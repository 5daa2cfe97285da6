# kernelgrade-expect: correctness=failed
"""One step too few (log2(BLOCK_SIZE) - 1 steps, one barrier pair fewer): the second half of
each block never adds the first half."""

from numba import cuda, int32

BLOCK_SIZE = 256


@cuda.jit
def block_scan(x, out):
    scan = cuda.shared.array(BLOCK_SIZE, int32)
    tid = cuda.threadIdx.x
    i = cuda.blockIdx.x * BLOCK_SIZE + tid
    scan[tid] = x[i] if i < x.shape[0] else int32(0)
    cuda.syncthreads()
    stride = 1
    while stride < BLOCK_SIZE // 2:
        left = scan[tid - stride] if tid >= stride else int32(0)
        cuda.syncthreads()
        scan[tid] += left
        cuda.syncthreads()
        stride *= 2
    if i < x.shape[0]:
        out[i] = scan[tid]
