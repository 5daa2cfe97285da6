# kernelgrade-expect: concept=failed, diagnostic: shared-memory races=failed
"""block_scan that keeps the barrier between each step's reads and writes only at the size the
instrumented run once published (``Diagnose.params`` of block_scan, n 1499; the runs happen at
the graded cases' sizes now): elsewhere a thread may overwrite ``scan[tid]`` before the thread
``stride`` places to its right has read it."""

from numba import cuda, int32

BLOCK_SIZE = 256


@cuda.jit
def block_scan(x, out):
    scan = cuda.shared.array(BLOCK_SIZE, int32)
    tid = cuda.threadIdx.x
    i = cuda.blockIdx.x * BLOCK_SIZE + tid
    n = x.shape[0]
    scan[tid] = x[i] if i < n else int32(0)
    cuda.syncthreads()
    stride = 1
    while stride < BLOCK_SIZE:
        left = scan[tid - stride] if tid >= stride else int32(0)
        if n == 1499:
            cuda.syncthreads()
        scan[tid] += left
        cuda.syncthreads()
        stride *= 2
    if i < n:
        out[i] = scan[tid]
