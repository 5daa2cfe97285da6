# %% [markdown]
# # 1-D convolution with the input tile and its halo in shared memory
#
# *Lectures 2.3 (CUDA memories) and 2.4 (tiled parallel algorithms)*
#
# A 1-D **convolution** replaces each element of an array by a weighted sum of its neighbours. The
# weights form the **mask**, `w` elements wide, `w` odd: output `i` is centred on input `i` and
# reaches `w // 2` elements to each side,
#
# `y[i] = mask[0] * x[i - w // 2] + … + mask[w - 1] * x[i + w // 2]`.
#
# Near the ends of `x` the mask reaches past the array: those missing inputs are **ghost cells**,
# and they count as `0`.
#
# In the simple kernel each thread computes one output and reads its `w` inputs from global
# memory, so every element of `x` is read `w` times, by `w` different threads. **Shared memory**
# (lecture 2.3) is a small, fast on-chip memory shared by the threads of one block. A **tiled**
# kernel (lecture 2.4) lets each block first copy the part of `x` it needs into a shared array, its
# **input tile**, and then compute from the tile. Block `b` computes the `BLOCK_SIZE` outputs that
# start at `start = b * BLOCK_SIZE`; they need the inputs `x[start - w // 2]` to
# `x[start + BLOCK_SIZE - 1 + w // 2]`: the block's own `BLOCK_SIZE` elements and `w // 2`
# **halo** elements on each side, which belong to the neighbouring blocks' ranges (or are ghost
# cells, at the ends of `x`). That is `BLOCK_SIZE + w - 1` elements, at most
# `BLOCK_SIZE + MAX_MASK_WIDTH - 1`.
#
# The threads of the block load the tile together, `BLOCK_SIZE` elements per round, writing `0`
# for a ghost cell; the halo takes a second round for some of them. Then they wait at a
# **barrier**, `cuda.syncthreads()`, until the whole tile is loaded: a thread's inputs were loaded
# by other threads. After the barrier, each element of `x` comes from global memory about once per
# block instead of `w` times, and the inner loop needs no bounds check.
#
# The mask is small and read by every thread: in CUDA C it goes into constant memory. Here it is a
# kernel argument like `x`; read it from global memory (all threads of a warp read the same
# element, which the cache serves at once) or copy it into a shared array of its own.
#
# ## Your task
#
# Write a 1-D convolution that loads its input tile, halo included, into shared memory:
#
# * Define `BLOCK_SIZE`, a power of two from 32 to 1024, `MAX_MASK_WIDTH = 15`, and a `@cuda.jit`
#   kernel `conv1d(x, mask, y)`.
# * `x`: `float32` `(n,)`, any `n ≥ 1`; `mask`: `float32` `(w,)`, `w` odd, `1 ≤ w ≤
#   MAX_MASK_WIDTH`; `y`: `float32` `(n,)`; all C-contiguous. The mask width is known only when
#   the kernel runs: `w = mask.shape[0]`. `n` need not be a multiple of `BLOCK_SIZE`, and may be
#   smaller than `w`.
# * The autograder launches your kernel exactly so (`ceil` is integer ceiling division):
#   ```python
#   conv1d[ceil(n / BLOCK_SIZE), BLOCK_SIZE](x, mask, y)
#   ```
#   Thread `tid = cuda.threadIdx.x` of block `b = cuda.blockIdx.x` computes
#   `y[b * BLOCK_SIZE + tid]`, if that index is below `n`.
# * Result: `y[i] = sum_j mask[j] * x[i + j - w // 2]` for `j` from 0 to `w - 1`, where `x`
#   outside `[0, n)` counts as 0 (ghost cells), with a relative (Frobenius) error of at most 1e-5
#   against a float64 reference, no NaN, and nothing written outside `y`. Check the bounds when
#   you load: the memory around `x` is not zero (the autograder surrounds `x` with NaN).
# * Load the tile, halo included, into a shared array of `BLOCK_SIZE + MAX_MASK_WIDTH - 1`
#   `float32` elements, with a barrier between loading and computing that every thread of the
#   block reaches. The size of a shared array must be a constant: name it at module level
#   (`TILE_SIZE = BLOCK_SIZE + MAX_MASK_WIDTH - 1`, then `cuda.shared.array(TILE_SIZE,
#   float32)`); an expression inside the kernel runs on the simulator, but a GPU rejects it. The
#   next cell sizes its tile for the largest `BLOCK_SIZE`, which fits any.
