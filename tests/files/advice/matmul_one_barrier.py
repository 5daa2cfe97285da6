"""A student's tiled matrix multiplication that makes the missing-barrier mistake its own way
(not the known-bad file ``assignments/tiled_matmul/mutants/missing_second_barrier.py``): a
``while`` loop over the tiles, its own names, and one ``cuda.syncthreads()`` per tile, after the
loads; a fast thread loads the next tile while a slow one of its block still reads this one. A
race and wrong results on the simulator, no access out of bounds (tests/test_advice.py)."""

from numba import cuda, float32

TILE_WIDTH = 16


@cuda.jit
def tiled_matmul(A, B, C):
    sA = cuda.shared.array((TILE_WIDTH, TILE_WIDTH), dtype=float32)
    sB = cuda.shared.array((TILE_WIDTH, TILE_WIDTH), dtype=float32)
    r, c = cuda.threadIdx.y, cuda.threadIdx.x
    i = cuda.blockIdx.y * cuda.blockDim.y + r
    j = cuda.blockIdx.x * cuda.blockDim.x + c
    n = C.shape[0]
    total = float32(0.0)
    start = 0
    while start < n:
        sA[r, c] = A[i, start + c] if i < n and start + c < n else float32(0.0)
        sB[r, c] = B[start + r, j] if start + r < n and j < n else float32(0.0)
        cuda.syncthreads()  # the tiles are loaded ...
        for k in range(TILE_WIDTH):
            total += sA[r, k] * sB[k, c]
        start += TILE_WIDTH  # ... but nothing waits before the next tile overwrites them
    if i < n and j < n:
        C[i, j] = total
