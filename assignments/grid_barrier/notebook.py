# %% [markdown]
# # Inter-block synchronization: a lock-based grid barrier
#
# *The article on inter-block synchronization: the lock-based barrier with `atomicAdd` and
# `__threadfence()`*
#
# `cuda.syncthreads()` is a barrier for the threads of **one block**. Threads of different blocks
# can only wait for each other through global memory. The usual way to make a whole grid wait is to
# end the kernel and launch the next one; the article builds the barrier inside one kernel
# instead. Its **lock-based** barrier counts arrivals in a global counter (the article's
# `g_mutex`; here `counter[0]`):
#
# * The threads of a block first finish their phase and meet at `cuda.syncthreads()`; then one
#   thread of the block (thread 0) arrives for the whole block with an atomic add of 1 to the
#   counter (`atomicAdd`; in Numba `cuda.atomic.add(counter, 0, 1)`).
# * Before it arrives, a memory fence, `cuda.threadfence()` (`__threadfence()`), makes what the
#   block wrote visible to every other block.
# * Thread 0 then waits until the counter reaches the **goal**, which means that every block has
#   arrived, while `cuda.syncthreads()` holds the other threads of its block.
# * The counter is never reset: after `j` uses of the barrier it has counted `j * gridDim.x`
#   arrivals, so the goal of the `j`-th use is `j * gridDim.x` (the article's `goalVal`, which grows
#   by the number of blocks each time).
#
# While it waits, thread 0 must read the counter from memory every time: a plain `counter[0]` in a
# loop may be kept in a register by the compiler, and the loop then never ends. An atomic operation
# always reads memory: `cuda.atomic.add(counter, 0, 0)` returns the current value.
#
# A barrier like this one works only when **all blocks of the grid are on the GPU at once**: a
# block that waits never leaves its streaming multiprocessor, so a block that has not started would
# never get one, and the grid would deadlock. The autograder never launches more blocks than fit.
#
# ## Your task
#
# Write the lock-based grid barrier as a device function:
#
# * Define a device function
#   ```python
#   @cuda.jit(device=True)
#   def grid_barrier(counter, goal):
#   ```
#   `counter`: an `int32` array of shape `(1,)`, zero before the launch; `goal`: an integer.
# * Every thread of every block calls it; the caller's `j`-th call (`j` = 1, 2, …) passes
#   `goal = j * gridDim.x`. The autograder's own kernel runs several phases, each reading what
#   other blocks wrote in the phase before, and calls your barrier after each phase:
#   ```python
#   for p in range(phases):
#       ...  # phase p: read what other blocks wrote in phase p - 1, write this thread's elements
#       grid_barrier(counter, (p + 1) * cuda.gridDim.x)
#   ```
#   It launches that kernel on blocks of 32 to 1024 threads, 1-D and 2-D (thread 0 of a block is
#   the one whose `threadIdx.x`, `.y` and `.z` are all 0), with from 2 blocks up to as many as can
#   be resident on the GPU at once; in some phases a block's first warp finishes long before its
#   other threads.
# * Result: no thread returns from its `j`-th call before every block of the grid has made its
#   `j`-th call, and what a block wrote before the barrier is seen by every block after it. A
#   barrier that lets a block through early gives wrong results; one that never opens is a
#   deadlock, reported as a timeout.
