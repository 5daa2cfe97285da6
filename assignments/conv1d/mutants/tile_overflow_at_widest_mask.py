# kernelgrade-expect: concept=failed, diagnostic: boundary checks=failed
# kernelgrade-expect-sim: correctness=error
"""The solution with one edit: the tile is loaded up to ``BLOCK_SIZE + 3 * half``. At the widest
masks (w = MAX_MASK_WIDTH) that writes past the end of the shared tile of ``BLOCK_SIZE +
MAX_MASK_WIDTH - 1`` elements, which no output reads: right results on a GPU. The instrumented
runs (at w = MAX_MASK_WIDTH) find the write outside the shared array's shape."""

from numba import cuda, float32

BLOCK_SIZE = 256
MAX_MASK_WIDTH = 15
TILE = BLOCK_SIZE + MAX_MASK_WIDTH - 1  # the block's elements and the largest halo


@cuda.jit
def conv1d(x, mask, y):
    tile = cuda.shared.array(TILE, float32)
    n = x.shape[0]
    half = mask.shape[0] // 2
    tid = cuda.threadIdx.x
    start = cuda.blockIdx.x * BLOCK_SIZE  # index of the block's first output
    # tile[k] = x[start - half + k] for k < BLOCK_SIZE + 2 * half: the block's own elements with
    # `half` halo elements on each side; at most two rounds, as 2 * half < BLOCK_SIZE.
    for k in range(tid, BLOCK_SIZE + 3 * half, BLOCK_SIZE):
        g = start - half + k
        tile[k] = x[g] if g >= 0 and g < n else float32(0.0)
    cuda.syncthreads()
    i = start + tid
    if i < n:
        acc = float32(0.0)
        for j in range(mask.shape[0]):
            acc += mask[j] * tile[tid + j]
        y[i] = acc
