"""Exercise ``grid_barrier``: a lock-based barrier across all blocks of a grid.

Source: the article on inter-block synchronization (lock-based barrier: thread 0 of each block
adds 1 with ``atomicAdd`` and waits for the goal, which grows by the block count each call;
``__threadfence()`` before arriving). Contract: CONTRACTS.md, "grid_barrier". Needs a GPU: the
simulator runs blocks one after another, so every test is skipped there.
"""

from __future__ import annotations

import numpy as np

from . import driver
from autograder.define import Case, Concept, Contract, Exercise, Tolerance

CONTRACT = Contract(
    kernel="grid_barrier",
    constants=(),
    args=("counter", "goal"),
    signature=("int32[::1]", "int64"),
    device_function=True,
    driver="grid_barrier.driver",
)


def _case(n, threads, phases, fraction, visibility="hidden", label="", block=None, skew_us=0):
    params = {"n": n, "threads": threads, "phases": phases, "grid_fraction": fraction}
    if block is not None:  # a 2-D or 3-D block of ``threads`` threads in all
        params["block"] = list(block)
    if skew_us:  # in odd blocks, threads past the first warp start each phase this late
        params["skew_us"] = skew_us
    return Case(params, points=8.0, visibility=visibility, label=label)


CASES = [
    _case(4096, 128, 2, 0.25, "public", "2 phases, a quarter of the resident blocks"),
    _case(100_003, 256, 3, 1.0, label="3 phases, every resident block"),
    _case(65_536, 32, 8, 1.0, label="8 phases, 32 threads per block, every resident block"),
    _case(1_000_000, 1024, 5, 1.0, label="5 phases, 1024 threads per block"),
    _case(77_777, 96, 16, 0.5, label="16 phases, 96 threads per block, half the blocks"),
    _case(12_345, 64, 31, 1.0, label="31 phases, every resident block"),
    _case(2_000_003, 512, 4, 1.0, label="4 phases over 2M elements"),
    _case(3, 128, 6, 1.0, label="more blocks than elements"),
    _case(200_000, 256, 6, 1.0, skew_us=50,
          label="6 phases; in odd blocks, all but the first warp start every phase 50 µs late"),
    _case(50_000, 128, 5, 1.0, block=(32, 4), skew_us=20,
          label="5 phases, 2-D blocks of 32×4 threads"),
]

def make_inputs(params, rng):
    return {"x": rng.integers(0, 1000, size=params["n"], dtype=np.int32)}


def outputs(params):
    return {"out": ((params["n"],), "int32")}


def reference(inputs, params):
    return {"out": driver.reference(inputs["x"], params["phases"])}


CONTRACT_TEXT = """\
- `counter`: int32 `(1,)`, zero before the launch. Every thread of every block calls the
  barrier; the caller's j-th call (j = 1, 2, …) passes `goal = j * gridDim.x`, as in the
  article's `goalVal`.
- 1-D grid; blocks may be 1-D, 2-D or 3-D (thread 0 of a block has `threadIdx.x`, `.y` and
  `.z` all 0), and a block's threads may reach the barrier at very different times.
- The autograder's own multi-phase kernel calls it; the grid never has more blocks than can be
  resident at once on the device. A barrier that lets a block through early gives wrong results;
  one that never opens is a deadlock and is reported as a timeout.
"""

EXERCISE = Exercise(
    name="grid_barrier",
    number=6,
    title="Inter-block synchronization: a lock-based grid barrier",
    source="article on inter-block synchronization (lock-based barrier with atomicAdd and "
           "__threadfence())",
    contract=CONTRACT,
    cases=CASES,
    make_inputs=make_inputs,
    outputs=outputs,
    reference=reference,
    tolerance=Tolerance(exact=True),
    concept=Concept(
        description=("the barrier arrives with an atomic add after a memory fence, holds the "
                     "block with a barrier until the goal is reached, and fences again after "
                     "the wait"),
        summary="atomics, fences and block barriers",
        points=20.0, min_barriers=1, min_atomics=1, min_fences=1, fenced_atomics=True),
    needs_gpu=True,
    contract_text=CONTRACT_TEXT,
)
