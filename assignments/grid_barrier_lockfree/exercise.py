"""Exercise ``grid_barrier_lockfree``: a lock-free barrier across all blocks of a grid.

Source: the article on inter-block synchronization (Xiao & Feng, lock-free barrier). Thread 0 of
each block writes the goal into ``arrive[bid]``; one checker block has its thread ``i`` spin until
``arrive[i] == goal`` for every block ``i``, then a block barrier, then writes
``depart[i] = goal``; thread 0 of every block spins until ``depart[bid] == goal``; then a block
barrier. The article's code has two bugs to find: ``if (tid_in_blk = 0)`` (an assignment, always
false, where a comparison was meant) and block 1 as the checker (a one-block grid has none).

Contract (CONTRACTS.md has no entry yet; this is it): a device function ::

    @cuda.jit(device=True)
    def grid_barrier_lockfree(arrive, depart, goal): ...

* ``arrive``, ``depart``: int32 arrays of shape ``(gridDim.x,)``, zero before the launch;
* ``goal``: the j-th call passes ``goal = j`` (j = 1, 2, …), an integer;
* 1-D grid and 1-D blocks with ``blockDim.x >= gridDim.x`` (the checker block needs one thread per
  block): the grader's kernel guarantees it, and never launches more blocks than can be resident
  at once;
* every thread of every block calls it, the same number of times; when it returns, every write
  any thread of the grid made before its call is visible to every thread.

Spinning on a plain load (``while depart[bid] != goal``) may be hoisted out of the loop by the
compiler (Numba has no ``volatile``): read with an atomic (``cuda.atomic.add(a, i, 0)`` or
``cuda.atomic.compare_and_swap``), and order the block's writes with ``cuda.threadfence()`` where
the article relies on ``volatile`` and ``__threadfence()``.

Errors: a barrier that never lets a block through deadlocks the grid, reported ``timeout`` for
that case and every later one (the grading process is killed). Needs a GPU: the simulator runs
blocks one after another, so every test is skipped there.
"""

from __future__ import annotations

import numpy as np

from . import driver
from autograder.define import Case, Concept, Contract, Exercise, Tolerance

CONTRACT = Contract(
    kernel="grid_barrier_lockfree",
    constants=(),
    args=("arrive", "depart", "goal"),
    signature=("int32[::1]", "int32[::1]", "int64"),
    device_function=True,
    driver="grid_barrier_lockfree.driver",
)


def _case(n, threads, phases, fraction=1.0, blocks=None, visibility="hidden", label="",
          skew_us=0):
    params = {"n": n, "threads": threads, "phases": phases, "grid_fraction": fraction}
    if blocks is not None:
        params["blocks"] = blocks
    if skew_us:  # in odd blocks, threads past the first warp start each phase this late
        params["skew_us"] = skew_us
    return Case(params, points=8.0, visibility=visibility, label=label)


# The grid is min(resident blocks, threads) times grid_fraction (at least 2), or "blocks" when
# given. The one-block case comes last: a barrier that deadlocks there (the article's block-1
# checker) loses only that case.
CASES = [
    _case(4096, 128, 2, 0.25, visibility="public",
          label="2 phases, a quarter of min(resident blocks, threads)"),
    _case(65_536, 32, 8, label="8 phases, 32 threads and 32 blocks"),
    _case(1_000_000, 1024, 5, label="5 phases, 1024 threads per block, every resident block"),
    _case(77_777, 96, 16, 0.5, label="16 phases, 96 threads per block, half the blocks"),
    _case(12_345, 64, 31, label="31 phases, 64 threads and 64 blocks"),
    _case(2_000_003, 256, 3, label="3 phases over 2M elements, 256 threads per block"),
    _case(3, 128, 6, label="more blocks than elements"),
    _case(200_000, 256, 6, skew_us=50,
          label="6 phases; in odd blocks, all but the first warp start every phase 50 µs late"),
    _case(40_000, 1024, 4, blocks=7,
          label="7 blocks of 1024 threads: most of the checker's threads have no block to wait for"),
    _case(5_000, 256, 4, blocks=1, label="a one-block grid"),
]


def make_inputs(params, rng):
    return {"x": rng.integers(0, 1000, size=params["n"], dtype=np.int32)}


def outputs(params):
    return {"out": ((params["n"],), "int32")}


def reference(inputs, params):
    return {"out": driver.reference(inputs["x"], params["phases"])}


CONTRACT_TEXT = """\
- `arrive`, `depart`: int32 `(gridDim.x,)`, zero before the launch; `goal`: the j-th call
  passes `goal = j` (j = 1, 2, …).
- 1-D grid and 1-D blocks with `blockDim.x >= gridDim.x` (the checker block needs one thread per
  block; its other threads must not touch `arrive` or `depart`); a block's threads may reach
  the barrier at very different times; the autograder's own multi-phase kernel calls it, the same number of times from every
  thread of every block, on a grid no larger than the blocks that can be resident at once.
- Result: when it returns, every write any thread of the grid made before its call is visible to
  every thread. A barrier that lets a block through early gives wrong results; one that never
  opens is a deadlock and is reported as a timeout.
"""

EXERCISE = Exercise(
    name="grid_barrier_lockfree",
    number=8,
    title="Inter-block synchronization: a lock-free grid barrier",
    source="article on inter-block synchronization (Xiao & Feng, lock-free barrier with an "
           "arrive and a depart array and one checker block)",
    contract=CONTRACT,
    cases=CASES,
    make_inputs=make_inputs,
    outputs=outputs,
    reference=reference,
    tolerance=Tolerance(exact=True),
    concept=Concept(
        description=("the barrier holds each block with a barrier, orders the block's writes "
                     "before its arrival with a memory fence, and fences again after its wait"),
        summary="block barriers and memory fences",
        points=20.0, min_barriers=1, min_fences=1, fenced_atomics=True),
    needs_gpu=True,
    contract_text=CONTRACT_TEXT,
)
