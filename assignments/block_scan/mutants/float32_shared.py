# kernelgrade-expect: correctness=failed
"""Scans in a float32 shared array: exact only while partial sums stay below 2^24."""

from numba import cuda, float32

BLOCK_SIZE = 256


@cuda.jit
def block_scan(x, out):
    scan = cuda.shared.array(BLOCK_SIZE, float32)
    tid = cuda.threadIdx.x
    i = cuda.blockIdx.x * BLOCK_SIZE + tid
    scan[tid] = x[i] if i < x.shape[0] else float32(0)
    cuda.syncthreads()
    stride = 1
    while stride < BLOCK_SIZE:
        left = scan[tid - stride] if tid >= stride else float32(0)
        cuda.syncthreads()
        scan[tid] += left
        cuda.syncthreads()
        stride *= 2
    if i < x.shape[0]:
        out[i] = scan[tid]
