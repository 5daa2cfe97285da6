# %% [markdown]
# # Tiled matrix multiplication of any size
#
# *Lectures 2.7 and 2.8: boundary conditions, tiling for arbitrary m × n × k*
#
# The tiled kernel of "Day 10: Shared Memory Fundamentals" multiplies square matrices whose width
# is a multiple of `TILE_WIDTH`. Real matrices are neither: `A` is `m × n`, `B` is `n × k`, and the
# last tiles hang over the edges of the matrices. The lectures handle the edges with **boundary
# conditions**:
#
# * The grid covers `C` (`m × k`) with whole tiles, so some threads of the last blocks have no
#   element of `C`. The dot product runs over `n` in `ceil(n / TILE_WIDTH)` phases; the last tile
#   along `n` can be partial too.
# * When a thread loads its element of the `A` tile (`A[row, phase * TILE_WIDTH + tx]`) or of the
#   `B` tile (`B[phase * TILE_WIDTH + ty, col]`), it checks that the element exists; if not it
#   stores `0`, which adds nothing to any dot product.
# * Only threads with `row < m` and `col < k` write `C[row, col]`.
# * Every thread of the block takes part in loading the tiles and reaches **every**
#   `cuda.syncthreads()`, including the threads outside `C`: a thread that returns early leaves
#   the others waiting at the barrier.
#
# ## Your task
#
# Write a tiled matrix multiplication with shared memory and barriers, for any sizes:
#
# * Define `TILE_WIDTH`, an `int` from 1 to 32, and a `@cuda.jit` kernel `matmul_any_size(A, B, C)`.
# * `A`: `float32` `(m, n)`; `B`: `float32` `(n, k)`; `C`: `float32` `(m, k)`; all C-contiguous,
#   any `m, n, k ≥ 1`.
# * The autograder launches your kernel exactly so (`ceil` is integer ceiling division):
#   ```python
#   matmul_any_size[(ceil(k / TILE_WIDTH), ceil(m / TILE_WIDTH)), (TILE_WIDTH, TILE_WIDTH)](A, B, C)
#   ```
#   `x` runs along the columns of `C` and `y` along its rows:
#   `row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y`,
#   `col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x`.
# * Result: `C = A @ B`, with a relative (Frobenius) error of at most 1e-4 against a float64
#   reference, no NaN, and nothing written outside `C`.
# * As in "Day 10", tiles of `A` and `B` go through shared memory, with barriers.
