"""Textbook variant: the output index from ``cuda.grid(1)``; the halo loaded by the first and
last threads (the lecture's layout)."""

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
    i = cuda.grid(1)
    tile[tid + half] = x[i] if i < n else float32(0.0)
    if tid < half:
        left = i - half
        tile[tid] = x[left] if left >= 0 and left < n else float32(0.0)
        right = i + BLOCK_SIZE
        tile[tid + BLOCK_SIZE + half] = x[right] if right < n else float32(0.0)
    cuda.syncthreads()
    if i < n:
        acc = float32(0.0)
        for j in range(mask.shape[0]):
            acc += mask[j] * tile[tid + j]
        y[i] = acc
