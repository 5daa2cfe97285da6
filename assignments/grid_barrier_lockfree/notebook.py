# %% [markdown]
# # Inter-block synchronization: a lock-free grid barrier
#
# *The article on inter-block synchronization (Xiao & Feng): the lock-free barrier with an arrive
# and a depart array and one checker block*
#
# The lock-based barrier of the previous assignment makes every block add to **one** counter: the
# atomic adds of all blocks queue up on one address. The article's **lock-free** barrier gives
# every block its own slots instead, in two arrays of one element per block, `arrive` and
# `depart` (the article's `Arrayin` and `Arrayout`):
#
# * The threads of a block finish their phase and meet at `cuda.syncthreads()`. Then thread 0 of
#   block `bid` **arrives**: it writes the goal into `arrive[bid]`.
# * One **checker block**, block 0, waits for the others: its thread `i` spins until
#   `arrive[i] == goal`, one thread per block of the grid. The checker's threads then meet at
#   `cuda.syncthreads()`: every block has arrived. Then thread `i` lets block `i` go: it writes
#   the goal into `depart[i]`.
# * Thread 0 of every block (the checker included) spins until `depart[bid] == goal`, while
#   `cuda.syncthreads()` holds the other threads of its block.
#
# The article's code has **two bugs**; find them before you copy it:
#
# 1. one of its `if` conditions uses `=` where a comparison was meant;
# 2. it makes **block 1** the checker (think of a grid of one block).
#
# The article marks the two arrays `volatile` so that every spin reads memory, and calls
# `__threadfence()` so that a block's writes are visible before it arrives. Numba has no
# `volatile`: a plain `depart[bid]` in a loop may be read once and kept in a register, and the loop
# then never ends. Read with an atomic, which always reads memory (`cuda.atomic.add(a, i, 0)`
# returns `a[i]` and adds nothing; `cuda.atomic.exch` writes), and order the writes with
# `cuda.threadfence()`.
#
# As for the lock-based barrier, this works only when **all blocks of the grid are on the GPU at
# once**; the autograder never launches more blocks than fit.
#
# ## Your task
#
# Write the lock-free grid barrier as a device function:
#
# * Define a device function
#   ```python
#   @cuda.jit(device=True)
#   def grid_barrier_lockfree(arrive, depart, goal):
#   ```
#   `arrive`, `depart`: `int32` arrays of shape `(gridDim.x,)`, zero before the launch; `goal`: an
#   integer.
# * Every thread of every block calls it, the same number of times; the caller's `j`-th call
#   (`j` = 1, 2, …) passes `goal = j`. The autograder's own kernel runs several phases, each
#   reading what other blocks wrote in the phase before, and calls your barrier after each phase:
#   ```python
#   for p in range(phases):
#       ...  # phase p: read what other blocks wrote in phase p - 1, write this thread's elements
#       grid_barrier_lockfree(arrive, depart, p + 1)
#   ```
#   It launches that kernel on a 1-D grid of 1-D blocks of 32 to 1024 threads, with
#   `blockDim.x >= gridDim.x` (the checker block has a thread per block), and never more blocks
#   than can be resident on the GPU at once. The grid can have a **single block**.
# * Result: no thread returns from its `j`-th call before every block of the grid has made its
#   `j`-th call, and what any thread wrote before the barrier is seen by every thread after it. A
#   barrier that lets a block through early gives wrong results; one that never opens is a
#   deadlock, reported as a timeout for that case and every later one.
