# %% [markdown]
# # Matrix transpose without shared-memory bank conflicts
#
# *Lesson on shared-memory bank conflicts: the coalesced transpose with a padded tile*
#
# A transpose `B = A.T` only moves data, so it runs at the speed of memory. A simple kernel reads
# `A` along its rows, coalesced (consecutive threads, consecutive addresses), but then writes `B`
# along its columns: consecutive threads write addresses a whole row apart, one memory transaction
# each.
#
# The **coalesced transpose** goes through a `TILE_DIM × TILE_DIM` tile (32 × 32) in shared memory.
# Each block reads its tile of `A` along rows into a shared array, waits at `cuda.syncthreads()`,
# then writes the tile to `B` along rows too, reading the shared tile **along a column**: the
# transpose happens in shared memory, and both global accesses are coalesced.
#
# Shared memory is split into 32 **banks**: consecutive 4-byte words lie in consecutive banks (word
# `w` in bank `w % 32`). Threads of a warp that access different words of the same bank are served
# one after the other: a **bank conflict**. In a 32 × 32 `float32` tile the elements of a column
# are 32 words apart, all in one bank: reading a column is a 32-way conflict. **Padding** the tile
# with one unused column, `TILE_DIM × (TILE_DIM + 1)`, puts them 33 words apart, in 32 different
# banks.
#
# A block has `TILE_DIM × BLOCK_ROWS` threads, fewer than its tile has elements: each thread copies
# `TILE_DIM / BLOCK_ROWS` elements, in rows `ty`, `ty + BLOCK_ROWS`, `ty + 2 * BLOCK_ROWS`, … of the
# tile (`ty = cuda.threadIdx.y`).
#
# ## Your task
#
# Write the coalesced transpose through a padded shared-memory tile:
#
# * Define `TILE_DIM = 32`, `BLOCK_ROWS`, an `int` from 1 to 32 that divides `TILE_DIM`, and a
#   `@cuda.jit` kernel `transpose(A, B)`.
# * `A`: `float32` `(rows, cols)`; `B`: `float32` `(cols, rows)`; both C-contiguous, any
#   `rows, cols ≥ 1`.
# * The autograder launches your kernel exactly so (`ceil` is integer ceiling division):
#   ```python
#   transpose[(ceil(cols / TILE_DIM), ceil(rows / TILE_DIM)), (TILE_DIM, BLOCK_ROWS)](A, B)
#   ```
#   As in the lectures, `x` runs along columns and `y` along rows: block
#   `(cuda.blockIdx.x, cuda.blockIdx.y)` moves the tile of `A` that starts at row
#   `cuda.blockIdx.y * TILE_DIM` and column `cuda.blockIdx.x * TILE_DIM`.
# * Result: `B = A.T`, exactly, and nothing written outside `B`. Tiles at the edges of `A` are
#   partial: check the bounds both when reading `A` and when writing `B`.
# * The shape of a shared array must be made of constants: `cuda.shared.array((TILE_DIM,
#   TILE_DIM + 1), float32)` runs on the simulator, but a GPU rejects it. Name the padded width at
#   module level (`PADDED = TILE_DIM + 1`), as the next cell does.
