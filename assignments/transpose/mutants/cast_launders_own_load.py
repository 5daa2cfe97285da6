# kernelgrade-expect: concept=failed
# kernelgrade-expect-gpu: timing=failed
"""A naive transpose (each thread stores ``B[col, row]`` from its own load of ``A[row, col]``)
dressed up as one through shared memory: the stored value is ``nb * float32(0.0) +
float32(a)``, ``nb`` a neighbour's tile element read after the barrier and ``a`` the thread's
own load. The cast dropped ``a``'s data flow, so the output seemed to come only from the
neighbour's element. A cast keeps the data flow in the analysed launch: the output depends on
the thread's own load, and B is not stored from what another thread wrote (issue 30, goal 3)."""

from numba import cuda, float32

TILE_DIM = 32
BLOCK_ROWS = 32
PADDED = TILE_DIM + 1


@cuda.jit
def transpose(A, B):
    tile = cuda.shared.array((TILE_DIM, PADDED), float32)
    rows = A.shape[0]
    cols = A.shape[1]
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE_DIM + ty
    col = cuda.blockIdx.x * TILE_DIM + tx
    a = float32(0.0)
    if row < rows and col < cols:
        a = A[row, col]
        tile[ty, tx] = a
    cuda.syncthreads()
    if row < rows and col < cols:
        nx = tx
        ny = ty
        if tx > 0:
            nx = tx - 1
        elif col + 1 < cols:
            nx = tx + 1
        elif ty > 0:
            ny = ty - 1
        elif row + 1 < rows:
            ny = ty + 1
        nb = tile[ny, nx]
        B[col, row] = nb * float32(0.0) + float32(a)
