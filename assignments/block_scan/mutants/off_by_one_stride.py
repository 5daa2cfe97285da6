# kernelgrade-expect: correctness=failed
"""Off by one in the step's guard: ``tid > stride`` instead of ``tid >= stride``, so thread
``stride`` never adds the element ``stride`` places to its left."""

from numba import cuda, int32

BLOCK_SIZE = 128


@cuda.jit
def block_scan(x, out):
    scan = cuda.shared.array(BLOCK_SIZE, int32)
    tid = cuda.threadIdx.x
    i = cuda.blockIdx.x * BLOCK_SIZE + tid
    scan[tid] = x[i] if i < x.shape[0] else int32(0)
    cuda.syncthreads()
    stride = 1
    while stride < BLOCK_SIZE:
        left = scan[tid - stride] if tid > stride else int32(0)
        cuda.syncthreads()
        scan[tid] += left
        cuda.syncthreads()
        stride *= 2
    if i < x.shape[0]:
        out[i] = scan[tid]
