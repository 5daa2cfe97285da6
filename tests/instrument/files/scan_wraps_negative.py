# kernelgrade-expect: concept=failed, diagnostic: boundary checks=failed
"""block_scan that does its first step straight from global memory: ``left = x[i - 1]`` has
no ``i > 0`` check, so thread 0 of block 0 reads ``x[-1]``, which NumPy and Numba wrap to the
array's last element (no fault anywhere); its value is never used (``tid > 0`` only), so every
output is right."""

from numba import cuda, int32

BLOCK_SIZE = 256


@cuda.jit
def block_scan(x, out):
    scan = cuda.shared.array(BLOCK_SIZE, int32)
    tid = cuda.threadIdx.x
    i = cuda.blockIdx.x * BLOCK_SIZE + tid
    n = x.shape[0]
    if i < n:
        left = x[i - 1]
        scan[tid] = x[i] + left if tid > 0 else x[i]
    else:
        scan[tid] = int32(0)
    cuda.syncthreads()
    stride = 2
    while stride < BLOCK_SIZE:
        left = scan[tid - stride] if tid >= stride else int32(0)
        cuda.syncthreads()
        scan[tid] += left
        cuda.syncthreads()
        stride *= 2
    if i < n:
        out[i] = scan[tid]
