# On a GPU: 0 timing points (timing failed, or an error where it touches a freed buffer).
"""Issue 30's red team, variant (a) (notes/redteam_a/timing_expected_buffer_recipe.md): the
tiled solution, except at the public timing size (width 2048), where each block computes C[0, 0]
by one dot product, looks for that value at C[0, 0] of the grader's buffers that 4bf1789
allocated after C, at a fixed offset (``AFTER``: whole 2048x2048 float32 outputs, 16 MiB each:
the timed reference's C, then the expected outputs of the three input copies), and copies the
buffer that holds it into C: no work, ratio about 0.02, 25/25 timing points at 4bf1789. With no
answer in device memory while it runs it finds none and writes nothing (NaN: timing failed), or
it reads a freed buffer and faults (timing error). Either way: 0 timing points. Right at every
tested size. ``AFTER`` follows 4bf1789's allocation order; on another GPU or driver check it
with the recipe's step 1."""
from numba import cuda, float32, int32

TILE_WIDTH = 16
AFTER = (1, 2, 3, 4)


@cuda.jit
def tiled_matmul(A, B, C):
    tile_a = cuda.shared.array((TILE_WIDTH, TILE_WIDTH), float32)
    tile_b = cuda.shared.array((TILE_WIDTH, TILE_WIDTH), float32)
    pick = cuda.shared.array(1, int32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE_WIDTH + ty
    col = cuda.blockIdx.x * TILE_WIDTH + tx
    width = A.shape[0]
    if width == 2048:
        if tx == 0 and ty == 0:
            first = float32(0.0)
            for i in range(width):
                first += A[0, i] * B[i, 0]
            pick[0] = -1
            for k in AFTER:
                stored = C[k * width, 0]
                if abs(stored - first) <= 1e-3 * abs(first):
                    pick[0] = k
                    break
        cuda.syncthreads()
        k = pick[0]
        if k >= 0:
            C[row, col] = C[k * width + row, col]
        return
    acc = float32(0.0)
    for phase in range((width + TILE_WIDTH - 1) // TILE_WIDTH):
        a_col = phase * TILE_WIDTH + tx
        b_row = phase * TILE_WIDTH + ty
        tile_a[ty, tx] = A[row, a_col] if row < width and a_col < width else float32(0.0)
        tile_b[ty, tx] = B[b_row, col] if b_row < width and col < width else float32(0.0)
        cuda.syncthreads()
        for i in range(TILE_WIDTH):
            acc += tile_a[ty, i] * tile_b[i, tx]
        cuda.syncthreads()
    if row < width and col < width:
        C[row, col] = acc
