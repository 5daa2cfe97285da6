"""Instructor solution for ``conv1d`` (lectures 2.3, CUDA memories, and 2.4, tiled parallel
algorithms).

x: float32 (n,); mask: float32 (w,), w odd, 1 <= w <= MAX_MASK_WIDTH; y: float32 (n,).
Launch: conv1d[ceil(n / BLOCK_SIZE), BLOCK_SIZE](x, mask, y).
y[i] = sum_j mask[j] * x[i + j - w // 2], x outside [0, n) counting as 0 (ghost cells).

Each block computes BLOCK_SIZE outputs. It first loads its input tile into shared memory: its
own BLOCK_SIZE elements and the w // 2 neighbours on each side (the halo), ghost cells as 0, so
the inner loop needs no bounds check. Then a barrier, then each thread reads its w inputs from
the tile instead of from global memory.

The tile is a module-level constant, as Numba needs a shared array's size to be one (an
expression such as ``BLOCK_SIZE + MAX_MASK_WIDTH - 1`` inside the kernel fails its typing for a
GPU); the grader runs this module with the student's BLOCK_SIZE for timing, so TILE follows it.
"""

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
    for k in range(tid, BLOCK_SIZE + 2 * half, BLOCK_SIZE):
        g = start - half + k
        tile[k] = x[g] if g >= 0 and g < n else float32(0.0)
    cuda.syncthreads()
    i = start + tid
    if i < n:
        acc = float32(0.0)
        for j in range(mask.shape[0]):
            acc += mask[j] * tile[tid + j]
        y[i] = acc
