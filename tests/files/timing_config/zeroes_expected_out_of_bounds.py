# On a GPU: 0 timing points (timing failed, or an error where it touches a freed buffer).
"""Issue 30's red team, variant (b) (notes/redteam_a/timing_expected_buffer_recipe.md): the
tiled solution, except at the public timing size (width 2048), where every launch writes zeros
into the grader's buffers that 4bf1789 allocated after C at a fixed offset (``AFTER``: whole
2048x2048 float32 outputs: the timed reference's C, then the expected outputs of the three input
copies) and into C itself, and does no work: at 4bf1789 the checks saw 0/0, a relative error of
0, and gave 25/25 timing points. Checked against host-held digests it fails (an output of zeros
is off by its whole norm), or it writes into a freed buffer and faults (timing error). Either
way: 0 timing points. Right at every tested size."""
from numba import cuda, float32

TILE_WIDTH = 16
AFTER = (1, 2, 3, 4)


@cuda.jit
def tiled_matmul(A, B, C):
    tile_a = cuda.shared.array((TILE_WIDTH, TILE_WIDTH), float32)
    tile_b = cuda.shared.array((TILE_WIDTH, TILE_WIDTH), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE_WIDTH + ty
    col = cuda.blockIdx.x * TILE_WIDTH + tx
    width = A.shape[0]
    if width == 2048:
        for k in AFTER:
            C[k * width + row, col] = float32(0.0)
        C[row, col] = float32(0.0)
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
