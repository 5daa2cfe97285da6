from numba import cuda, float32
TILE_WIDTH = 16


@cuda.jit
def tiled_matmul(A, B, C):
    tile = cuda.shared.array((TILE_WIDTH, TILE_WIDTH + 1), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE_WIDTH + ty
    col = cuda.blockIdx.x * TILE_WIDTH + tx
    n = A.shape[0]
    if row < n and col < n:
        acc = float32(0.0)
        for k in range(n):
            acc += A[row, k] * B[k, col]
        tile[ty, tx] = acc
        cuda.syncthreads()
        C[row, col] = tile[ty, tx]
