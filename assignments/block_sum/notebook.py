# %% [markdown]
# # Per-block sum without control divergence
#
# *Lecture 2.2: control divergence*
#
# A streaming multiprocessor runs the threads of a block in **warps** of 32, one instruction for
# the whole warp at a time. When the threads of a warp take different paths through an `if`, the
# warp runs both paths one after the other, each with the other path's threads idle: **control
# divergence**. A warp whose threads all skip a branch does not run it at all.
#
# A **reduction** sums a block's values as a tree: each thread loads one value into a shared
# array; then in every step half of the still active threads add a partner's value to their own,
# with `cuda.syncthreads()` between the steps, until `sums[0]` holds the block's sum. The lecture
# compares two ways to choose the active threads:
#
# * *interleaved*: `stride` = 1, 2, 4, …; thread `tid` is active when `tid % (2 * stride) == 0`
#   and adds `sums[tid + stride]`. The active threads are spread over every warp, so nearly every
#   warp diverges in every step and keeps running to the end.
# * *sequential addressing*: `stride` = `BLOCK_SIZE // 2`, …, 2, 1; thread `tid` is active when
#   `tid < stride` and adds `sums[tid + stride]`. The active threads are contiguous: whole warps
#   go idle together, and a warp diverges only in the last steps, once `stride < 32`.
#
# Both give the right sum; the second is faster. Either way, every thread of the block reaches
# every barrier: the barrier stays outside `if tid < stride`.
#
# ## Your task
#
# Write a tree reduction in shared memory whose active threads stay contiguous:
#
# * Define `BLOCK_SIZE`, a power of two from 64 to 1024, and a `@cuda.jit` kernel
#   `block_sum(x, partial)`.
# * `x`: `float32` `(n,)`, any `n ≥ 1`; `partial`: `float32` `(ceil(n / BLOCK_SIZE),)`; both
#   C-contiguous.
# * The autograder launches your kernel exactly so (`ceil` is integer ceiling division):
#   ```python
#   block_sum[ceil(n / BLOCK_SIZE), BLOCK_SIZE](x, partial)
#   ```
#   Thread `tid = cuda.threadIdx.x` of block `b = cuda.blockIdx.x` loads element
#   `i = b * BLOCK_SIZE + tid`.
# * Result: `partial[b]` is the sum of block `b`'s segment `x[b*BLOCK_SIZE : (b+1)*BLOCK_SIZE]`,
#   positions past `n` counting as 0, with a relative (Frobenius) error of at most 1e-5 against a
#   float64 reference, and no NaN. Load `0` past the end of `x`: the memory there is not zero (the
#   autograder surrounds `x` with NaN).
# * Sum in a shared array (`cuda.shared.array(BLOCK_SIZE, float32)`), with a barrier after the load
#   and one after every step.
