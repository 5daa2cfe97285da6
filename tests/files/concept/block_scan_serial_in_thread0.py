# kernelgrade-expect: concept=failed
# concept-exercise: block_scan
"""The segment goes into shared memory, thread 0 scans it serially there, and every thread
reads its prefix back: shared memory and two barriers, but no parallel steps."""
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
    if tid == 0:
        for k in range(1, BLOCK_SIZE):
            scan[k] += scan[k - 1]
    cuda.syncthreads()
    if i < n:
        out[i] = scan[tid]
