# kernelgrade-expect: concept=failed
# concept-message: reads x from global memory 594 times in block (0, 0, 0) (for its 100 output elements)
"""The tile and its halo are loaded into shared memory behind a barrier, and each thread reads
its own element back, but the sum reads x from global memory."""
from numba import cuda, float32

BLOCK_SIZE = 256
MAX_MASK_WIDTH = 15
TILE = BLOCK_SIZE + MAX_MASK_WIDTH - 1


@cuda.jit
def conv1d(x, mask, y):
    tile = cuda.shared.array(TILE, float32)
    n = x.shape[0]
    half = mask.shape[0] // 2
    tid = cuda.threadIdx.x
    start = cuda.blockIdx.x * BLOCK_SIZE
    for k in range(tid, BLOCK_SIZE + 2 * half, BLOCK_SIZE):
        g = start - half + k
        tile[k] = x[g] if g >= 0 and g < n else float32(0.0)
    cuda.syncthreads()
    i = start + tid
    if i < n:
        acc = tile[tid + half] * float32(0.0)
        for j in range(mask.shape[0]):
            g = i + j - half
            if g >= 0 and g < n:
                acc += mask[j] * x[g]
        y[i] = acc
