# kernelgrade-expect-sim: correctness=error
# kernelgrade-expect-gpu: correctness=failed
"""No ``i < n`` check: the last block reads past the end of x and writes past the end of out
(an IndexError on the simulator; writes into the guard band on a GPU)."""

from numba import cuda, int32

BLOCK_SIZE = 64


@cuda.jit
def block_scan(x, out):
    scan = cuda.shared.array(BLOCK_SIZE, int32)
    tid = cuda.threadIdx.x
    i = cuda.blockIdx.x * BLOCK_SIZE + tid
    scan[tid] = x[i]
    cuda.syncthreads()
    stride = 1
    while stride < BLOCK_SIZE:
        left = scan[tid - stride] if tid >= stride else int32(0)
        cuda.syncthreads()
        scan[tid] += left
        cuda.syncthreads()
        stride *= 2
    out[i] = scan[tid]
