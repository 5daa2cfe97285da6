# %% [markdown]
# # Tiled matrix multiplication with shared memory
#
# *Lesson "Day 10: Shared Memory Fundamentals"*
#
# In the simple matrix-multiplication kernel each thread computes one element `C[row, col]` by
# reading a whole row of `A` and a whole column of `B` from global memory. Every element of `A`
# and `B` is read `width` times, by different threads, and the kernel spends its time waiting for
# global memory.
#
# **Shared memory** is a small, fast on-chip memory of each streaming multiprocessor, shared by
# the threads of one block. The tiled kernel splits each dot product into **phases**. In every
# phase the block's `TILE_WIDTH × TILE_WIDTH` threads
#
# 1. load one tile of `A` and one tile of `B` into shared memory together (each thread loads one
#    element of each, into arrays declared with `cuda.shared.array((TILE_WIDTH, TILE_WIDTH),
#    float32)`);
# 2. wait at a **barrier**, `cuda.syncthreads()`, until the whole tile is loaded;
# 3. add the tile's share of the dot product, reading the tiles from shared memory;
# 4. wait at a **second barrier**, so that no thread overwrites the tiles with the next phase's
#    values while other threads still read them.
#
# Each element of `A` and `B` now comes from global memory `width / TILE_WIDTH` times instead of
# `width` times.
#
# ## Your task
#
# Write a tiled matrix multiplication with shared memory and barriers:
#
# * Define `TILE_WIDTH`, an `int` from 1 to 32 (the lesson uses 16), and a `@cuda.jit` kernel
#   `tiled_matmul(A, B, C)`.
# * `A`, `B`, `C`: `float32` arrays of shape `(width, width)`, C-contiguous. `width` is any size
#   ≥ 1, **not only a multiple of `TILE_WIDTH`**: a thread whose element lies outside the matrix
#   loads `0` into the tile and writes nothing, but still reaches every barrier.
# * The autograder launches your kernel exactly so (`ceil` is integer ceiling division):
#   ```python
#   g = ceil(width / TILE_WIDTH)
#   tiled_matmul[(g, g), (TILE_WIDTH, TILE_WIDTH)](A, B, C)
#   ```
#   As in the lectures, `x` runs along columns and `y` along rows:
#   `row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y`,
#   `col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x`.
# * Result: `C = A @ B`, with a relative (Frobenius) error of at most 1e-4 against a float64
#   reference, no NaN, and nothing written outside `C`.
