# kernelgrade-expect: concept=failed
# kernelgrade-expect-gpu: timing=failed
# concept-message: from global memory
"""A naive matmul that reads A and B through ``cuda.atomic.add(X, idx, 0.0)`` (an atomic reads
the element and leaves it as it was), and dresses up as a tiled one: a shared tile of ones,
written, read by other threads in the inner loop after a barrier, overwritten after another.
Every atomic is a read of global memory: 2 * width of them per output element, where the tiled
kernel needs 2 * width / TILE_WIDTH (issue 30)."""

from numba import cuda, float32

TILE_WIDTH = 16


@cuda.jit
def tiled_matmul(A, B, C):
    ones = cuda.shared.array((TILE_WIDTH, TILE_WIDTH), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE_WIDTH + ty
    col = cuda.blockIdx.x * TILE_WIDTH + tx
    width = A.shape[0]
    acc = float32(0.0)
    for phase in range((width + TILE_WIDTH - 1) // TILE_WIDTH):
        ones[ty, tx] = float32(1.0)
        cuda.syncthreads()
        for i in range(TILE_WIDTH):
            k = phase * TILE_WIDTH + i
            scale = ones[ty, i] * ones[i, tx]
            if row < width and col < width and k < width:
                a = cuda.atomic.add(A, (row, k), float32(0.0))
                b = cuda.atomic.add(B, (k, col), float32(0.0))
                acc += a * b * scale
        cuda.syncthreads()
    if row < width and col < width:
        C[row, col] = acc
