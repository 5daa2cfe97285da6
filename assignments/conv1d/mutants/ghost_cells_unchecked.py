# kernelgrade-expect-sim: correctness=error
# kernelgrade-expect-gpu: correctness=failed
"""Loads the tile and its halo without checking 0 <= g < n: the ghost cells are read from outside
x. Past the end that is an IndexError on the simulator and NaN from the guard band on a GPU;
before the start, a negative index wraps to the end of x on both (Python's and Numba's negative
indexing), so the first outputs are wrong too."""

from numba import cuda, float32

BLOCK_SIZE = 64
MAX_MASK_WIDTH = 15
TILE_SIZE = BLOCK_SIZE + MAX_MASK_WIDTH - 1


@cuda.jit
def conv1d(x, mask, y):
    tile = cuda.shared.array(TILE_SIZE, float32)
    n = x.shape[0]
    half = mask.shape[0] // 2
    tid = cuda.threadIdx.x
    start = cuda.blockIdx.x * BLOCK_SIZE
    for k in range(tid, BLOCK_SIZE + 2 * half, BLOCK_SIZE):
        tile[k] = x[start - half + k]
    cuda.syncthreads()
    i = start + tid
    if i < n:
        acc = float32(0.0)
        for j in range(mask.shape[0]):
            acc += mask[j] * tile[tid + j]
        y[i] = acc
