"""Write the nbgrader source notebooks of assignments/ from the exercises and their solutions.

    python assignments/make_notebooks.py          # (re)write the notebooks
    python assignments/make_notebooks.py --check  # exit 1 if a committed notebook is stale

Each notebook is made of: the task (the concept from the lesson, the contract and launch rule of
CONTRACTS.md, how it is graded), how to run it without a GPU (Numba's CUDA simulator; for an
exercise that needs a GPU, why it cannot) and a setup cell, the solution cell (the instructor
solution ``solutions/<name>.py`` without its module docstring, the body of each function the
student writes between ``### BEGIN SOLUTION`` / ``### END SOLUTION``), a read-only public-test
cell (0 points; it calls :func:`autograder.nbgrader.public.run_public_tests`, which runs the
student's code on the exercise's public cases in child processes with time limits) and one
hidden-test grade cell per part of the grade that carries points
(correctness, and concept and timing where the exercise has them), with the exercise's points
(``autograder/exercises/<name>.py``). An exercise of plain Python functions (no kernel) has no
simulator text and no setup cell.

What differs between exercises is data: the exercise's contract, cases and points, and in
:data:`ASSIGNMENTS` the task text and a few words on the concept test. The
rest of the text depends only on the shape of the submission (a kernel, a device function called
by the autograder's kernel, or plain functions). Edit the text here, not in the notebooks.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autograder import exercises  # noqa: E402
from autograder.nbgrader import notebook as nbb  # noqa: E402
from autograder.nbgrader.cells import TEST_CELL_MARKER  # noqa: E402

HERE = Path(__file__).resolve().parent

#: What the student writes: a kernel the autograder launches, a device function the autograder's
#: own kernel calls, or plain Python functions the autograder calls.
KERNEL, DEVICE_FUNCTION, FUNCTIONS = "kernel", "device function", "functions"

SIMULATOR = """
## No GPU? Use Numba's CUDA simulator

Numba can run CUDA kernels without a GPU, on its **CUDA simulator**: every CUDA thread becomes a
Python thread, so it is slow (keep sizes small) but it runs `cuda.shared.array`,
`cuda.syncthreads()` and out-of-bounds checks like a GPU would, and reports an index error where a
GPU would silently read garbage.

* Start Jupyter with the variable set: `NUMBA_ENABLE_CUDASIM=1 jupyter lab`, or
* uncomment the two `os.environ` lines at the top of the setup cell below, then
  **restart the kernel** and run the cells again (Numba reads the variable when it is first
  imported).

The simulator accepts a few things a GPU rejects; the autograder also compiles your kernel for a
real GPU and reports what the GPU compiler refuses. It runs your kernel on a GPU when the course
has one; on the simulator {skipped} skipped, and the score is
marked provisional.
"""

NEEDS_GPU = """
## This exercise needs a GPU

Numba's CUDA simulator (`NUMBA_ENABLE_CUDASIM=1`; see the setup cell below) runs the blocks of a
grid **one after another**: block 0 would wait at your barrier forever for blocks that have not
started yet. A grid-wide barrier can only be tested on a real GPU. On the simulator this notebook
still runs top to bottom (your function is defined, never called): the public test prints that
it is skipped, and the autograder skips every test (0 points, the score marked provisional).
Your notebook is graded on a GPU.

On a GPU, a barrier that never opens is a deadlock. The public test runs your barrier in a
separate process with a time limit, as the autograder does: it reports a deadlock as a timeout,
and your notebook goes on. A launch of your own in a cell of yours would hang that cell: an
interrupt cannot stop a running GPU kernel; restart the notebook's kernel (Kernel → Restart).
"""

SETUP = """
# Setup. No NVIDIA GPU? Uncomment the next two lines to use Numba's CUDA simulator, then restart
# the kernel (Numba reads the variable when it is first imported).
# import os
# os.environ["NUMBA_ENABLE_CUDASIM"] = "1"

import numpy as np
from numba import config, cuda

if config.ENABLE_CUDASIM:
    print("Numba's CUDA simulator: slow, keep sizes small")
elif cuda.is_available():
    print("GPU:", cuda.get_current_device().name)
else:
    print("No CUDA GPU found: uncomment the two lines above and restart the kernel")
"""

YOUR_CODE = """
## Your {what}

{intro}

The autograder runs **every code cell of your notebook in order** (its own test cells left out)
before it tests your {what}, so keep long computations and experiments out of top-level code, or
delete them before you submit.
"""

YOUR_CODE_INTRO = {
    KERNEL: """\
Write {constants} and the kernel in the next cell. Keep the names, the argument order and the
launch rule above: the autograder imports your code and launches `{kernel}` itself, on its own
arrays.""",
    DEVICE_FUNCTION: """\
Write the device function `{kernel}` in the next cell. Keep its name and its arguments: the
autograder imports your code and calls `{kernel}` from a kernel of its own, which it launches
itself.""",
    FUNCTIONS: """\
Write the {count} functions in the next cell. Keep the names and the arguments above: the
autograder imports your code and calls each function itself, with its own arguments.""",
}

PUBLIC_TESTS_MD = {
    KERNEL: """
## Public tests

The next cell (read-only) tests the code your notebook has run so far, as the autograder does:
it launches your kernel on {cases}, in a separate process with a time limit (a kernel that never
ends is reported as a timeout, and your notebook goes on), and prints for each size whether the
result is correct, or the first wrong element. It also prints the concept test, read off your
kernel compiled for a GPU, and what the diagnostics found (barriers some threads never reach,
shared-memory races, accesses out of bounds). These sizes are graded too: the autograder runs
them again, on fresh random inputs, with the hidden ones.
""",
    DEVICE_FUNCTION: """
## Public tests

The next cell (read-only) tests the code your notebook has run so far, as the autograder does:
it calls your device function from a kernel of its own, on {cases}, in a separate process with a
time limit (a barrier that never opens is reported as a timeout, and your notebook goes on), and
prints whether the result is correct, or the first wrong element, and the concept test, read off
your code compiled for a GPU. {these} graded too: the autograder runs {them} again, on fresh
random inputs, with the hidden ones.
""",
    FUNCTIONS: """
## Public tests

The next cell (read-only) tests the code your notebook has run so far, as the autograder does:
it calls your functions on {cases}, in a separate process with a time limit, and compares each
value with the instructor's. {these} graded too: the autograder runs {them} again with the
hidden ones.
""",
}

#: The public-test cell: the same for every exercise (``autograder.nbgrader.public``).
PUBLIC_CELL = """
{marker}: public tests (read-only). They run your {what} in a separate process.
from autograder.nbgrader.public import run_public_tests

run_public_tests("{exercise}")
"""

#: Appended to the public-test text of an exercise that needs a GPU.
PUBLIC_NEEDS_GPU = """
The test needs a GPU: on the simulator it prints that it is skipped.
"""

HIDDEN_TESTS_MD = """
## Hidden tests

The cells below hold your grade. When your notebook is graded, the autograder takes your code
cells in order (its own test cells left out), runs your {what} on hidden {unit}{inputs} in a
separate process with a time limit, outside this notebook, and writes into each cell what passed
and what did not, with its points. Running these cells yourself does nothing.
"""

#: A hidden grade cell: only a comment, the same in the instructor's source and the students'
#: copy. The grading preprocessor (autograder.nbgrader.preprocessor.GradeWithAutograder) finds
#: it by its nbgrader grade_id (autograder.nbgrader.notebook.hidden_grade_id), not by its text.
HIDDEN_CELL = """
{marker}: {what} ({points:g} points).
# Graded outside this notebook; the result is written here when your notebook is graded.
"""

HIDDEN_WHAT = {
    "correctness": "hidden correctness tests, {count}",
    "concept": "concept test, {concept}",
    "timing": "timing test against the instructor's kernel (GPU only)",
}

# ----------------------------------------------------------------------------------------------
# tiled_matmul

TILED_TASK = """
# Tiled matrix multiplication with shared memory

*Lesson "Day 10: Shared Memory Fundamentals"*

In the simple matrix-multiplication kernel each thread computes one element `C[row, col]` by
reading a whole row of `A` and a whole column of `B` from global memory. Every element of `A`
and `B` is read `width` times, by different threads, and the kernel spends its time waiting for
global memory.

**Shared memory** is a small, fast on-chip memory of each streaming multiprocessor, shared by
the threads of one block. The tiled kernel splits each dot product into **phases**. In every
phase the block's `TILE_WIDTH × TILE_WIDTH` threads

1. load one tile of `A` and one tile of `B` into shared memory together (each thread loads one
   element of each, into arrays declared with `cuda.shared.array((TILE_WIDTH, TILE_WIDTH),
   float32)`);
2. wait at a **barrier**, `cuda.syncthreads()`, until the whole tile is loaded;
3. add the tile's share of the dot product, reading the tiles from shared memory;
4. wait at a **second barrier**, so that no thread overwrites the tiles with the next phase's
   values while other threads still read them.

Each element of `A` and `B` now comes from global memory `width / TILE_WIDTH` times instead of
`width` times.

## Your task

Write a tiled matrix multiplication with shared memory and barriers:

* Define `TILE_WIDTH`, an `int` from 1 to 32 (the lesson uses 16), and a `@cuda.jit` kernel
  `tiled_matmul(A, B, C)`.
* `A`, `B`, `C`: `float32` arrays of shape `(width, width)`, C-contiguous. `width` is any size
  ≥ 1, **not only a multiple of `TILE_WIDTH`**: a thread whose element lies outside the matrix
  loads `0` into the tile and writes nothing, but still reaches every barrier.
* The autograder launches your kernel exactly so (`ceil` is integer ceiling division):
  ```python
  g = ceil(width / TILE_WIDTH)
  tiled_matmul[(g, g), (TILE_WIDTH, TILE_WIDTH)](A, B, C)
  ```
  As in the lectures, `x` runs along columns and `y` along rows:
  `row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y`,
  `col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x`.
* Result: `C = A @ B`, with a relative (Frobenius) error of at most 1e-4 against a float64
  reference, no NaN, and nothing written outside `C`.
"""

# ----------------------------------------------------------------------------------------------
# matmul_any_size

ANY_SIZE_TASK = """
# Tiled matrix multiplication of any size

*Lectures 2.7 and 2.8: boundary conditions, tiling for arbitrary m × n × k*

The tiled kernel of "Day 10: Shared Memory Fundamentals" multiplies square matrices whose width
is a multiple of `TILE_WIDTH`. Real matrices are neither: `A` is `m × n`, `B` is `n × k`, and the
last tiles hang over the edges of the matrices. The lectures handle the edges with **boundary
conditions**:

* The grid covers `C` (`m × k`) with whole tiles, so some threads of the last blocks have no
  element of `C`. The dot product runs over `n` in `ceil(n / TILE_WIDTH)` phases; the last tile
  along `n` can be partial too.
* When a thread loads its element of the `A` tile (`A[row, phase * TILE_WIDTH + tx]`) or of the
  `B` tile (`B[phase * TILE_WIDTH + ty, col]`), it checks that the element exists; if not it
  stores `0`, which adds nothing to any dot product.
* Only threads with `row < m` and `col < k` write `C[row, col]`.
* Every thread of the block takes part in loading the tiles and reaches **every**
  `cuda.syncthreads()`, including the threads outside `C`: a thread that returns early leaves
  the others waiting at the barrier.

## Your task

Write a tiled matrix multiplication with shared memory and barriers, for any sizes:

* Define `TILE_WIDTH`, an `int` from 1 to 32, and a `@cuda.jit` kernel `matmul_any_size(A, B, C)`.
* `A`: `float32` `(m, n)`; `B`: `float32` `(n, k)`; `C`: `float32` `(m, k)`; all C-contiguous,
  any `m, n, k ≥ 1`.
* The autograder launches your kernel exactly so (`ceil` is integer ceiling division):
  ```python
  matmul_any_size[(ceil(k / TILE_WIDTH), ceil(m / TILE_WIDTH)), (TILE_WIDTH, TILE_WIDTH)](A, B, C)
  ```
  `x` runs along the columns of `C` and `y` along its rows:
  `row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y`,
  `col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x`.
* Result: `C = A @ B`, with a relative (Frobenius) error of at most 1e-4 against a float64
  reference, no NaN, and nothing written outside `C`.
* As in "Day 10", tiles of `A` and `B` go through shared memory, with barriers.
"""

# ----------------------------------------------------------------------------------------------
# block_scan

SCAN_TASK = """
# Inclusive scan within each block

*Lesson "Day 11: Thread Synchronization"*

The threads of a block work together through **shared memory**, and `cuda.syncthreads()` is the
**barrier** that orders their reads and writes: no thread of the block passes it before every
thread of the block has reached it.

A **scan** (inclusive prefix sum) turns `x` into running totals: `out[i] = x[0] + … + x[i]`.
The lesson's Hillis–Steele scan runs in a shared array holding one value per thread, in
`log2(BLOCK_SIZE)` steps with `stride` = 1, 2, 4, …: in each step every thread `tid` with
`tid >= stride` adds the value `stride` places to its left to its own. After the step with
`stride`, `scan[tid]` holds the sum of up to `2 * stride` values ending at `tid`.

Each step reads `scan[tid - stride]` and writes `scan[tid]`, in the same array, so barriers keep
the steps apart:

1. after loading `x` into the shared array, before the first step reads it;
2. inside a step, between every thread's read and any thread's write: without it a thread may
   read a value its neighbour has already updated in this step;
3. after a step's writes, before the next step reads.

Every thread of the block reaches every barrier, also the threads past the end of `x` (they hold
`0`).

## Your task

Write a scan of each block's segment of `x`, in shared memory with barriers:

* Define `BLOCK_SIZE`, a power of two from 32 to 1024, and a `@cuda.jit` kernel
  `block_scan(x, out)`.
* `x`, `out`: `int32` arrays of shape `(n,)`, C-contiguous, any `n ≥ 1`.
* The autograder launches your kernel exactly so (`ceil` is integer ceiling division):
  ```python
  block_scan[ceil(n / BLOCK_SIZE), BLOCK_SIZE](x, out)
  ```
  Thread `tid = cuda.threadIdx.x` of block `b = cuda.blockIdx.x` handles element
  `i = b * BLOCK_SIZE + tid`.
* Result: each block scans its own segment: for `i` in block `b`,
  `out[i] = x[b*BLOCK_SIZE] + … + x[i]`, exactly. Nothing is written past `out[n - 1]`. For
  example, with blocks of 4 (too small to be legal, but short), `x = [3, 1, 4, 1, 5, 9]` gives
  `out = [3, 4, 8, 9, 5, 14]`.
* Keep the sums in `int32`: some inputs have partial sums past 2^24, where a `float32` scan is no
  longer exact.
* The scan runs in a shared array (`cuda.shared.array(BLOCK_SIZE, int32)`), in `log2(BLOCK_SIZE)`
  steps separated by `cuda.syncthreads()`.
"""

# ----------------------------------------------------------------------------------------------
# block_sum

SUM_TASK = """
# Per-block sum without control divergence

*Lecture 2.2: control divergence*

A streaming multiprocessor runs the threads of a block in **warps** of 32, one instruction for
the whole warp at a time. When the threads of a warp take different paths through an `if`, the
warp runs both paths one after the other, each with the other path's threads idle: **control
divergence**. A warp whose threads all skip a branch does not run it at all.

A **reduction** sums a block's values as a tree: each thread loads one value into a shared
array; then in every step half of the still active threads add a partner's value to their own,
with `cuda.syncthreads()` between the steps, until `sums[0]` holds the block's sum. The lecture
compares two ways to choose the active threads:

* *interleaved*: `stride` = 1, 2, 4, …; thread `tid` is active when `tid % (2 * stride) == 0`
  and adds `sums[tid + stride]`. The active threads are spread over every warp, so nearly every
  warp diverges in every step and keeps running to the end.
* *sequential addressing*: `stride` = `BLOCK_SIZE // 2`, …, 2, 1; thread `tid` is active when
  `tid < stride` and adds `sums[tid + stride]`. The active threads are contiguous: whole warps
  go idle together, and a warp diverges only in the last steps, once `stride < 32`.

Both give the right sum; the second is faster. Either way, every thread of the block reaches
every barrier: the barrier stays outside `if tid < stride`.

## Your task

Write a tree reduction in shared memory whose active threads stay contiguous:

* Define `BLOCK_SIZE`, a power of two from 64 to 1024, and a `@cuda.jit` kernel
  `block_sum(x, partial)`.
* `x`: `float32` `(n,)`, any `n ≥ 1`; `partial`: `float32` `(ceil(n / BLOCK_SIZE),)`; both
  C-contiguous.
* The autograder launches your kernel exactly so (`ceil` is integer ceiling division):
  ```python
  block_sum[ceil(n / BLOCK_SIZE), BLOCK_SIZE](x, partial)
  ```
  Thread `tid = cuda.threadIdx.x` of block `b = cuda.blockIdx.x` loads element
  `i = b * BLOCK_SIZE + tid`.
* Result: `partial[b]` is the sum of block `b`'s segment `x[b*BLOCK_SIZE : (b+1)*BLOCK_SIZE]`,
  positions past `n` counting as 0, with a relative (Frobenius) error of at most 1e-5 against a
  float64 reference, and no NaN. Load `0` past the end of `x`: the memory there is not zero (the
  autograder surrounds `x` with NaN).
* Sum in a shared array (`cuda.shared.array(BLOCK_SIZE, float32)`), with a barrier after the load
  and one after every step.
"""

# ----------------------------------------------------------------------------------------------
# transpose

TRANSPOSE_TASK = """
# Matrix transpose without shared-memory bank conflicts

*Lesson on shared-memory bank conflicts: the coalesced transpose with a padded tile*

A transpose `B = A.T` only moves data, so it runs at the speed of memory. A simple kernel reads
`A` along its rows, coalesced (consecutive threads, consecutive addresses), but then writes `B`
along its columns: consecutive threads write addresses a whole row apart, one memory transaction
each.

The **coalesced transpose** goes through a `TILE_DIM × TILE_DIM` tile (32 × 32) in shared memory.
Each block reads its tile of `A` along rows into a shared array, waits at `cuda.syncthreads()`,
then writes the tile to `B` along rows too, reading the shared tile **along a column**: the
transpose happens in shared memory, and both global accesses are coalesced.

Shared memory is split into 32 **banks**: consecutive 4-byte words lie in consecutive banks (word
`w` in bank `w % 32`). Threads of a warp that access different words of the same bank are served
one after the other: a **bank conflict**. In a 32 × 32 `float32` tile the elements of a column
are 32 words apart, all in one bank: reading a column is a 32-way conflict. **Padding** the tile
with one unused column, `TILE_DIM × (TILE_DIM + 1)`, puts them 33 words apart, in 32 different
banks.

A block has `TILE_DIM × BLOCK_ROWS` threads, fewer than its tile has elements: each thread copies
`TILE_DIM / BLOCK_ROWS` elements, in rows `ty`, `ty + BLOCK_ROWS`, `ty + 2 * BLOCK_ROWS`, … of the
tile (`ty = cuda.threadIdx.y`).

## Your task

Write the coalesced transpose through a padded shared-memory tile:

* Define `TILE_DIM = 32`, `BLOCK_ROWS`, an `int` from 1 to 32 that divides `TILE_DIM`, and a
  `@cuda.jit` kernel `transpose(A, B)`.
* `A`: `float32` `(rows, cols)`; `B`: `float32` `(cols, rows)`; both C-contiguous, any
  `rows, cols ≥ 1`.
* The autograder launches your kernel exactly so (`ceil` is integer ceiling division):
  ```python
  transpose[(ceil(cols / TILE_DIM), ceil(rows / TILE_DIM)), (TILE_DIM, BLOCK_ROWS)](A, B)
  ```
  As in the lectures, `x` runs along columns and `y` along rows: block
  `(cuda.blockIdx.x, cuda.blockIdx.y)` moves the tile of `A` that starts at row
  `cuda.blockIdx.y * TILE_DIM` and column `cuda.blockIdx.x * TILE_DIM`.
* Result: `B = A.T`, exactly, and nothing written outside `B`. Tiles at the edges of `A` are
  partial: check the bounds both when reading `A` and when writing `B`.
* The shape of a shared array must be made of constants: `cuda.shared.array((TILE_DIM,
  TILE_DIM + 1), float32)` runs on the simulator, but a GPU rejects it. Name the padded width at
  module level (`PADDED = TILE_DIM + 1`), as the next cell does.
"""

# ----------------------------------------------------------------------------------------------
# grid_barrier

BARRIER_TASK = """
# Inter-block synchronization: a lock-based grid barrier

*The article on inter-block synchronization: the lock-based barrier with `atomicAdd` and
`__threadfence()`*

`cuda.syncthreads()` is a barrier for the threads of **one block**. Threads of different blocks
can only wait for each other through global memory. The usual way to make a whole grid wait is to
end the kernel and launch the next one; the article builds the barrier inside one kernel
instead. Its **lock-based** barrier counts arrivals in a global counter (the article's
`g_mutex`; here `counter[0]`):

* The threads of a block first finish their phase and meet at `cuda.syncthreads()`; then one
  thread of the block (thread 0) arrives for the whole block with an atomic add of 1 to the
  counter (`atomicAdd`; in Numba `cuda.atomic.add(counter, 0, 1)`).
* Before it arrives, a memory fence, `cuda.threadfence()` (`__threadfence()`), makes what the
  block wrote visible to every other block.
* Thread 0 then waits until the counter reaches the **goal**, which means that every block has
  arrived, while `cuda.syncthreads()` holds the other threads of its block.
* The counter is never reset: after `j` uses of the barrier it has counted `j * gridDim.x`
  arrivals, so the goal of the `j`-th use is `j * gridDim.x` (the article's `goalVal`, which grows
  by the number of blocks each time).

While it waits, thread 0 must read the counter from memory every time: a plain `counter[0]` in a
loop may be kept in a register by the compiler, and the loop then never ends. An atomic operation
always reads memory: `cuda.atomic.add(counter, 0, 0)` returns the current value.

A barrier like this one works only when **all blocks of the grid are on the GPU at once**: a
block that waits never leaves its streaming multiprocessor, so a block that has not started would
never get one, and the grid would deadlock. The autograder never launches more blocks than fit.

## Your task

Write the lock-based grid barrier as a device function:

* Define a device function
  ```python
  @cuda.jit(device=True)
  def grid_barrier(counter, goal):
  ```
  `counter`: an `int32` array of shape `(1,)`, zero before the launch; `goal`: an integer.
* Every thread of every block calls it; the caller's `j`-th call (`j` = 1, 2, …) passes
  `goal = j * gridDim.x`. The autograder's own kernel runs several phases, each reading what
  other blocks wrote in the phase before, and calls your barrier after each phase:
  ```python
  for p in range(phases):
      ...  # phase p: read what other blocks wrote in phase p - 1, write this thread's elements
      grid_barrier(counter, (p + 1) * cuda.gridDim.x)
  ```
  It launches that kernel on 1-D blocks of 32 to 1024 threads, with from 2 blocks up to as many
  as can be resident on the GPU at once.
* Result: no thread returns from its `j`-th call before every block of the grid has made its
  `j`-th call, and what a block wrote before the barrier is seen by every block after it. A
  barrier that lets a block through early gives wrong results; one that never opens is a
  deadlock, reported as a timeout.
"""

# ----------------------------------------------------------------------------------------------
# grid_barrier_lockfree

LOCKFREE_TASK = """
# Inter-block synchronization: a lock-free grid barrier

*The article on inter-block synchronization (Xiao & Feng): the lock-free barrier with an arrive
and a depart array and one checker block*

The lock-based barrier of the previous assignment makes every block add to **one** counter: the
atomic adds of all blocks queue up on one address. The article's **lock-free** barrier gives
every block its own slots instead, in two arrays of one element per block, `arrive` and
`depart` (the article's `Arrayin` and `Arrayout`):

* The threads of a block finish their phase and meet at `cuda.syncthreads()`. Then thread 0 of
  block `bid` **arrives**: it writes the goal into `arrive[bid]`.
* One **checker block**, block 0, waits for the others: its thread `i` spins until
  `arrive[i] == goal`, one thread per block of the grid. The checker's threads then meet at
  `cuda.syncthreads()`: every block has arrived. Then thread `i` lets block `i` go: it writes
  the goal into `depart[i]`.
* Thread 0 of every block (the checker included) spins until `depart[bid] == goal`, while
  `cuda.syncthreads()` holds the other threads of its block.

The article's code has **two bugs**; find them before you copy it:

1. one of its `if` conditions uses `=` where a comparison was meant;
2. it makes **block 1** the checker (think of a grid of one block).

The article marks the two arrays `volatile` so that every spin reads memory, and calls
`__threadfence()` so that a block's writes are visible before it arrives. Numba has no
`volatile`: a plain `depart[bid]` in a loop may be read once and kept in a register, and the loop
then never ends. Read with an atomic, which always reads memory (`cuda.atomic.add(a, i, 0)`
returns `a[i]` and adds nothing; `cuda.atomic.exch` writes), and order the writes with
`cuda.threadfence()`.

As for the lock-based barrier, this works only when **all blocks of the grid are on the GPU at
once**; the autograder never launches more blocks than fit.

## Your task

Write the lock-free grid barrier as a device function:

* Define a device function
  ```python
  @cuda.jit(device=True)
  def grid_barrier_lockfree(arrive, depart, goal):
  ```
  `arrive`, `depart`: `int32` arrays of shape `(gridDim.x,)`, zero before the launch; `goal`: an
  integer.
* Every thread of every block calls it, the same number of times; the caller's `j`-th call
  (`j` = 1, 2, …) passes `goal = j`. The autograder's own kernel runs several phases, each
  reading what other blocks wrote in the phase before, and calls your barrier after each phase:
  ```python
  for p in range(phases):
      ...  # phase p: read what other blocks wrote in phase p - 1, write this thread's elements
      grid_barrier_lockfree(arrive, depart, p + 1)
  ```
  It launches that kernel on a 1-D grid of 1-D blocks of 32 to 1024 threads, with
  `blockDim.x >= gridDim.x` (the checker block has a thread per block), and never more blocks
  than can be resident on the GPU at once. The grid can have a **single block**.
* Result: no thread returns from its `j`-th call before every block of the grid has made its
  `j`-th call, and what any thread wrote before the barrier is seen by every thread after it. A
  barrier that lets a block through early gives wrong results; one that never opens is a
  deadlock, reported as a timeout for that case and every later one.
"""

# ----------------------------------------------------------------------------------------------
# occupancy

OCCUPANCY_TASK = """
# Occupancy: warps, block granularity and resident threads

*Lecture 2.1 (thread scheduling, block granularity) and "Shared Memory and Threading"*

A streaming multiprocessor (SM) runs threads in **warps** of 32. A block is assigned to one SM as
a whole and stays there until all its threads finish (**block granularity**), and it occupies
whole warps: a block of 100 threads takes 4 warps, 128 thread slots. An SM holds several blocks at
once: as many as the tightest of its limits allows,

* its **thread slots**: at most `max_threads_per_sm` threads, counted in whole warps;
* its **block slots**: at most `max_blocks_per_sm` blocks;
* its **shared memory**: the blocks' shared memory together at most `shared_bytes_per_sm`.

The lecture's Fermi SM holds 1536 threads and 8 blocks, with 48 KB of shared memory. Blocks of
8×8 threads fill its 8 block slots with only 512 threads, a third of its thread slots; the
lecture asks the same of 16×16 and 32×32 blocks.

"Shared Memory and Threading" adds the shared memory of the tiled matrix multiplication: each
block holds one `TILE_WIDTH × TILE_WIDTH` tile of `A` and one of `B`, 4-byte floats, so 16×16
tiles use 2 KB per block. Tiling also changes how often the kernel reads global memory: in the
simple kernel every thread loads a whole row of `A` and a whole column of `B`; in the tiled one
the threads of a block load each tile once and share it.

## Your task

Write these plain Python functions (no kernel, no GPU). All arguments are `int`s, sizes count
threads and bytes; return a Python `int` (a `float` for the last one), not a NumPy number.

* `warps_per_block(threads_per_block, warp_size=32)` → `int`: the warps a block occupies (a
  partial warp counts whole).
* `resident_blocks_per_sm(threads_per_block, shared_bytes_per_block, max_threads_per_sm,
  max_blocks_per_sm, shared_bytes_per_sm, warp_size=32)` → `int`: how many such blocks one SM
  holds at once, by the three limits above; `0` when a single block does not fit. A block
  without shared memory (`shared_bytes_per_block` 0) is not limited by it.
* `resident_threads_per_sm(threads_per_block, shared_bytes_per_block, max_threads_per_sm,
  max_blocks_per_sm, shared_bytes_per_sm, warp_size=32)` → `int`: the threads of those blocks
  (`threads_per_block` each: the idle lanes of a partial warp are not threads).
* `tile_shared_bytes(tile_width, bytes_per_element=4)` → `int`: the shared memory one block of
  the tiled matrix multiplication uses (one tile of `A` and one of `B`).
* `global_traffic_reduction(tile_width)` → `float`: by what factor tiling with
  `tile_width × tile_width` tiles divides the global-memory loads of a matrix multiplication
  (whose width is a multiple of `tile_width`), compared with the simple kernel.

The hidden tests use other limits and current GPUs; on a GPU some also fill in the device's own
limits and compare `resident_blocks_per_sm` with the CUDA driver's occupancy calculator.
"""


# ----------------------------------------------------------------------------------------------
# The assignments


class Assignment(NamedTuple):
    """What is an assignment's own: its exercise, task text and, where the exercise has a concept
    test, what it checks, in a few words. The notebook is ``<exercise>.ipynb``."""

    exercise: str
    task: str
    concept: str = ""

    @property
    def notebook(self) -> str:
        return f"{self.exercise}.ipynb"


#: assignment folder → its notebook's data, in course order
ASSIGNMENTS = {
    "01_tiled_matmul": Assignment("tiled_matmul", TILED_TASK,
                                  "tiles in shared memory with barriers"),
    "02_matmul_any_size": Assignment("matmul_any_size", ANY_SIZE_TASK,
                                     "tiles in shared memory with barriers"),
    "03_block_scan": Assignment("block_scan", SCAN_TASK,
                                "the scan in shared memory with barriers"),
    "04_block_sum": Assignment("block_sum", SUM_TASK,
                               "a tree reduction, active threads contiguous"),
    "05_transpose": Assignment("transpose", TRANSPOSE_TASK,
                               "a shared tile without bank conflicts"),
    "06_grid_barrier": Assignment("grid_barrier", BARRIER_TASK,
                                  "atomics, fences and block barriers"),
    "07_occupancy": Assignment("occupancy", OCCUPANCY_TASK),
    "08_grid_barrier_lockfree": Assignment("grid_barrier_lockfree", LOCKFREE_TASK,
                                           "block barriers and memory fences"),
}

NUMBER_WORDS = {1: "one", 2: "two", 3: "three"}


def _shape(ex) -> str:
    """What the student writes for ``ex``: :data:`KERNEL`, :data:`DEVICE_FUNCTION` or
    :data:`FUNCTIONS`."""
    if ex.contract.functions:
        return FUNCTIONS
    return DEVICE_FUNCTION if ex.contract.device_function else KERNEL


def _unit(ex) -> str:
    """What one correctness test of ``ex`` is called in the text: sizes of a kernel's arrays, or
    cases."""
    return "sizes" if _shape(ex) == KERNEL else "cases"


def _count(n: int, plural: str) -> str:
    """``n`` and the noun (``"2 sizes"``, ``"1 size"``, ``"1 hidden one"``)."""
    return f"{n} {plural if n != 1 else plural[:-1]}"


def _public(ex) -> list:
    """The public cases of ``ex``, in order."""
    return [c for c in ex.cases if c.visibility == "public"]


def _grading_md(ex) -> str:
    """The "How it is graded" section: a row per part with its points and what it tests."""
    parts = nbb.part_max_points(ex)
    unit = _unit(ex)
    public = _public(ex)
    (each,) = {c.points for c in ex.cases}  # the text says "N points each": one value only
    if ex.needs_gpu:
        where = " (all of them on a GPU only)"
    else:
        gpu_only = sum(1 for c in ex.cases if not c.sim)
        where = f" ({gpu_only} of them on a GPU only)" if gpu_only else ""
    rows = [
        f"| correctness | {parts['correctness']:g} | {_count(len(ex.cases), unit)}, "
        f"{each:g} points each: the {_count(len(public), 'public ' + unit)} below and "
        f"{_count(len(ex.cases) - len(public), 'hidden ones')}{where} |",
    ]
    if "concept" in parts:
        rows.append(f"| concept | {parts['concept']:g} | {ex.concept.description}; read off "
                    f"your {_shape(ex)} compiled for a GPU |")
    if "timing" in parts:
        t = ex.timing
        size = ", ".join(f"{k} = {v}" for k, v in t.params.items())
        constants = " and ".join(f"`{c.name}`" for c in ex.contract.constants)
        rows.append(f"| timing | {parts['timing']:g} | on a GPU, at {size}: your kernel's time "
                    f"against the instructor's at your {constants}; full points up to "
                    f"{t.full_ratio:g}×, none above {t.zero_ratio:g}×; only for a kernel that "
                    f"passes every {unit[:-1]} |")
    total = sum(parts.values())
    cells = f"{NUMBER_WORDS[len(parts)]} hidden-test cell{'s' if len(parts) > 1 else ''}"
    return ("## How it is graded\n\n"
            f"{total:g} points, in {cells} at the end of this notebook:\n\n"
            "| part | points | what |\n|---|---|---|\n" + "\n".join(rows) + "\n\n"
            "A test ends as passed, failed, error (your code raised), timeout or skipped, with "
            f"a message that names the {unit[:-1]}, the first wrong element, or the line of "
            "your code.")


def _cases_words(ex) -> str:
    """The public cases in words: a kernel's sizes by their parameters, other cases by label."""
    public = _public(ex)
    if _shape(ex) == KERNEL:
        return " and ".join(", ".join(f"{k} {v}" for k, v in c.params.items()) for c in public)
    if len(public) == 1:
        return f"the public case ({public[0].label})"
    return f"the {len(public)} public cases ({'; '.join(c.label for c in public)})"


def _public_md(ex) -> str:
    """The text before the public-test cell: what it runs, and that those cases count too."""
    single = len(_public(ex)) == 1
    text = PUBLIC_TESTS_MD[_shape(ex)].format(
        cases=_cases_words(ex), these="This case is" if single else "These cases are",
        them="it" if single else "them")
    return text + PUBLIC_NEEDS_GPU if ex.needs_gpu else text


def _your_code_md(ex) -> str:
    """The text before the solution cell: what to write there, and that every cell runs."""
    shape = _shape(ex)
    intro = YOUR_CODE_INTRO[shape].format(
        constants=", ".join(f"`{c.name}`" for c in ex.contract.constants),
        kernel=ex.contract.kernel, count=len(ex.contract.functions))
    return YOUR_CODE.format(what=shape, intro=intro)


def _solution_cell_text(ex) -> str:
    """The instructor solution without its module docstring, each function the student writes
    (the kernel, the device function, or every function of the contract) with its body between
    solution markers; imports, constants and ``def`` lines stay as the students' skeleton."""
    text = nbb.strip_module_docstring(
        (ROOT / "solutions" / ex.solution).read_text(encoding="utf-8"))
    for function in ex.contract.functions or (ex.contract.kernel,):
        text = nbb.mark_solution(text, function)
    return text


def build(folder: str):
    """The source notebook of assignment ``folder`` (a key of :data:`ASSIGNMENTS`)."""
    assignment = ASSIGNMENTS[folder]
    name = assignment.exercise
    ex = exercises.get(name)
    shape = _shape(ex)
    cells = [nbb.markdown("task", assignment.task + "\n" + _grading_md(ex))]
    if shape != FUNCTIONS:
        skipped = ("the largest sizes and the timing test are" if ex.timing
                   else "the largest sizes are")
        cells += [nbb.markdown("simulator", NEEDS_GPU if ex.needs_gpu
                               else SIMULATOR.format(skipped=skipped)),
                  nbb.code(SETUP, "setup")]
    cells += [
        nbb.markdown(f"your-{shape.replace(' ', '-')}", _your_code_md(ex)),
        nbb.solution(f"{name}-solution", _solution_cell_text(ex)),
        nbb.markdown("public-tests-text", _public_md(ex)),
        nbb.tests(f"{name}-public-tests", PUBLIC_CELL.format(
            marker=TEST_CELL_MARKER, what=shape, exercise=name), 0.0),
        nbb.markdown("hidden-tests-text", HIDDEN_TESTS_MD.format(
            what=shape, unit=_unit(ex),
            inputs="" if shape == FUNCTIONS else " and fresh random inputs")),
    ]
    for kind, points in nbb.part_max_points(ex).items():
        what = HIDDEN_WHAT[kind].format(count=_count(len(ex.cases), _unit(ex)),
                                        concept=assignment.concept)
        cells.append(nbb.tests(nbb.hidden_grade_id(name, kind), HIDDEN_CELL.format(
            marker=TEST_CELL_MARKER, what=what, points=points), points))
    return nbb.notebook(cells)


def main(argv: list[str]) -> int:
    check = "--check" in argv
    stale = []
    for folder, assignment in ASSIGNMENTS.items():
        path = HERE / folder / assignment.notebook
        text = nbb.dumps(build(folder))
        if check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(str(path.relative_to(ROOT)))
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path.relative_to(ROOT)}")
    if stale:
        print("stale (run python assignments/make_notebooks.py):", ", ".join(stale))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
