# kernelgrade-expect: concept=failed, diagnostic: boundary checks=failed
"""matmul_any_size's solution with one edit: the A tile's load guard is ``row <= m``. Row ``m``
is read (inside the guarded buffer on a GPU, the next row's elements past the array's end) and
its value goes only to rows of the tile no output uses: every output is right."""

from numba import cuda, float32

TILE_WIDTH = 16


@cuda.jit
def matmul_any_size(A, B, C):
    tile_a = cuda.shared.array((TILE_WIDTH, TILE_WIDTH), float32)
    tile_b = cuda.shared.array((TILE_WIDTH, TILE_WIDTH), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE_WIDTH + ty
    col = cuda.blockIdx.x * TILE_WIDTH + tx
    m, n = A.shape
    k = B.shape[1]
    acc = float32(0.0)
    for phase in range((n + TILE_WIDTH - 1) // TILE_WIDTH):
        a_col = phase * TILE_WIDTH + tx
        b_row = phase * TILE_WIDTH + ty
        tile_a[ty, tx] = A[row, a_col] if row <= m and a_col < n else float32(0.0)
        tile_b[ty, tx] = B[b_row, col] if b_row < n and col < k else float32(0.0)
        cuda.syncthreads()
        for i in range(TILE_WIDTH):
            acc += tile_a[ty, i] * tile_b[i, tx]
        cuda.syncthreads()
    if row < m and col < k:
        C[row, col] = acc
