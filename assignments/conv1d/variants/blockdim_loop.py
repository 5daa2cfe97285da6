"""Textbook variant: the tile's load loop strides by ``cuda.blockDim.x`` (read at run time)
instead of the compile-time BLOCK_SIZE."""

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
    bd = cuda.blockDim.x
    start = cuda.blockIdx.x * bd
    for k in range(tid, bd + 2 * half, bd):
        g = start - half + k
        tile[k] = x[g] if g >= 0 and g < n else float32(0.0)
    cuda.syncthreads()
    i = start + tid
    if i < n:
        acc = float32(0.0)
        for j in range(mask.shape[0]):
            acc += mask[j] * tile[tid + j]
        y[i] = acc
