# %% [markdown]
# # Inclusive scan within each block
#
# *Lesson "Day 11: Thread Synchronization"*
#
# The threads of a block work together through **shared memory**, and `cuda.syncthreads()` is the
# **barrier** that orders their reads and writes: no thread of the block passes it before every
# thread of the block has reached it.
#
# A **scan** (inclusive prefix sum) turns `x` into running totals: `out[i] = x[0] + … + x[i]`.
# The lesson's Hillis–Steele scan runs in a shared array holding one value per thread, in
# `log2(BLOCK_SIZE)` steps with `stride` = 1, 2, 4, …: in each step every thread `tid` with
# `tid >= stride` adds the value `stride` places to its left to its own. After the step with
# `stride`, `scan[tid]` holds the sum of up to `2 * stride` values ending at `tid`.
#
# Each step reads `scan[tid - stride]` and writes `scan[tid]`, in the same array, so barriers keep
# the steps apart:
#
# 1. after loading `x` into the shared array, before the first step reads it;
# 2. inside a step, between every thread's read and any thread's write: without it a thread may
#    read a value its neighbour has already updated in this step;
# 3. after a step's writes, before the next step reads.
#
# Every thread of the block reaches every barrier, also the threads past the end of `x` (they hold
# `0`).
#
# ## Your task
#
# Write a scan of each block's segment of `x`, in shared memory with barriers:
#
# * Define `BLOCK_SIZE`, a power of two from 32 to 1024, and a `@cuda.jit` kernel
#   `block_scan(x, out)`.
# * `x`, `out`: `int32` arrays of shape `(n,)`, C-contiguous, any `n ≥ 1`.
# * The autograder launches your kernel exactly so (`ceil` is integer ceiling division):
#   ```python
#   block_scan[ceil(n / BLOCK_SIZE), BLOCK_SIZE](x, out)
#   ```
#   Thread `tid = cuda.threadIdx.x` of block `b = cuda.blockIdx.x` handles element
#   `i = b * BLOCK_SIZE + tid`.
# * Result: each block scans its own segment: for `i` in block `b`,
#   `out[i] = x[b*BLOCK_SIZE] + … + x[i]`, exactly. Nothing is written past `out[n - 1]`. For
#   example, with blocks of 4 (too small to be legal, but short), `x = [3, 1, 4, 1, 5, 9]` gives
#   `out = [3, 4, 8, 9, 5, 14]`.
# * Keep the sums in `int32`: some inputs have partial sums past 2^24, where a `float32` scan is no
#   longer exact.
# * The scan runs in a shared array (`cuda.shared.array(BLOCK_SIZE, int32)`), in `log2(BLOCK_SIZE)`
#   steps separated by `cuda.syncthreads()`.
