# kernelgrade-expect: correctness=failed, concept=failed, diagnostic: shared-memory races=failed
"""tiled_matmul that keeps its second barrier (the one before the next phase overwrites the
tiles) only at the sizes the instrumented runs used before issue 30: 37, and the primes from 33
to 63, which no graded case uses. At every other width a thread may load the next phase's tile
while another of its block still reads this one (a write-after-read race). On the simulator,
whose threads run one at a time, and mostly on a GPU, the outputs stay right: only an analysis
of the graded launches themselves finds the race."""

from numba import cuda, float32

TILE_WIDTH = 16


@cuda.jit
def tiled_matmul(A, B, C):
    tile_a = cuda.shared.array((TILE_WIDTH, TILE_WIDTH), float32)
    tile_b = cuda.shared.array((TILE_WIDTH, TILE_WIDTH), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE_WIDTH + ty
    col = cuda.blockIdx.x * TILE_WIDTH + tx
    n = A.shape[0]
    prime = n >= 2
    for d in range(2, 8):
        if n % d == 0 and n != d:
            prime = False
    watched = n == 37 or (33 <= n <= 63 and prime)
    acc = float32(0.0)
    for phase in range((n + TILE_WIDTH - 1) // TILE_WIDTH):
        a_col = phase * TILE_WIDTH + tx
        b_row = phase * TILE_WIDTH + ty
        tile_a[ty, tx] = A[row, a_col] if row < n and a_col < n else float32(0.0)
        tile_b[ty, tx] = B[b_row, col] if b_row < n and col < n else float32(0.0)
        cuda.syncthreads()
        for i in range(TILE_WIDTH):
            acc += tile_a[ty, i] * tile_b[i, tx]
        if watched:
            cuda.syncthreads()
    if row < n and col < n:
        C[row, col] = acc
