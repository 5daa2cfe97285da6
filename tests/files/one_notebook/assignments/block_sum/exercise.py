"""Exercise ``block_sum``: one partial sum per block, by a tree reduction in shared memory.

A copy of the built-in definition whose student notebook is authored as one notebook,
``../../solutions/block_sum.ipynb`` (tests/course/test_one_notebook.py).

Source: lecture 2.2 (control divergence: a reduction whose active threads stay contiguous,
"sequential addressing", lets whole warps retire together). Contract: CONTRACTS.md, "block_sum".

- ``x``: float32 ``(n,)``; ``partial``: float32 ``(ceil(n / BLOCK_SIZE),)``; launch
  ``[ceil(n / BLOCK_SIZE), BLOCK_SIZE]``.
- ``partial[b]`` = sum of block ``b``'s segment of ``x`` (positions past n count as 0); relative
  Frobenius error ≤ 1e-5 against float64, no NaN.

Inputs: uniform in [0, 1). Positive, so every sum is well conditioned: with signs mixed, a block's
sum can cancel to ~1e-3 and a correct float32 tree sum then misses 1e-5 relative (seen at n 65).
A dropped or doubled element still moves a sum by ~1/BLOCK_SIZE relative. ``x`` sits between NaN
margins, so a kernel that loads ``x[i]`` without ``i < n`` gets a NaN partial sum on a GPU (an
IndexError on the simulator). Sizes are not multiples of any legal BLOCK_SIZE except where noted.

Timing: the interleaved ``tid % (2 * stride) == 0`` reduction is correct but keeps a few active
lanes in every warp; it measured 1.65x the sequential-addressing kernel at 256 threads (DESIGN.md),
so it fails the 1.25x bar. Timing runs on a GPU only; on the simulator the two are not told apart
yet (no warp-level counters there).
"""

from __future__ import annotations

import numpy as np

from autograder.define import Diagnose, Case, Concept, Use, Constant, Contract, Exercise, Timing, Tolerance

CONTRACT = Contract(
    kernel="block_sum",
    constants=(Constant("BLOCK_SIZE", 64, 1024, power_of_two=True),),
    args=("x", "partial"),
    signature=("float32[::1]", "float32[::1]"),
    grid=("ceil(n / BLOCK_SIZE)",),
    block=("BLOCK_SIZE",),
)


def _case(n, visibility="hidden", sim=True, label=""):
    return Case({"n": n}, points=5.0, visibility=visibility, sim=sim, label=label)


# Simulator cases stay at a few blocks (one Python thread per CUDA thread).
CASES = [
    _case(100, "public"),
    _case(1000, "public"),
    _case(1),
    _case(63),
    _case(65),
    _case(257),
    _case(777),
    _case(1500),
    _case(1024, sim=False, label="n 1024 (whole blocks only)"),
    _case(4097, sim=False),
    _case(100_003, sim=False),
    _case((1 << 22) + 3, sim=False),
]


def make_inputs(params, rng):
    """``{"x": float32 (n,)}`` uniform in [0, 1), made in float32 (the timing size is 1 GiB)."""
    return {"x": rng.random(params["n"], dtype=np.float32)}


def inputs(params):
    return {"x": ((params["n"],), "float32")}


def outputs(params):
    return {"partial": (("ceil(n / BLOCK_SIZE)",), "float32")}


def reference(inputs, params):
    """Sum of each BLOCK_SIZE segment of x in float64 (the last segment zero-padded)."""
    x = inputs["x"].astype(np.float64)
    size = params["BLOCK_SIZE"]
    padded = np.concatenate([x, np.zeros(-len(x) % size)])
    return {"partial": padded.reshape(-1, size).sum(axis=1)}


CONCEPT = Concept(
    description=(
        "tree reduction in shared memory: the kernel sums in a shared array, with a barrier "
        "after the load and one between the steps, reached by every thread, and its active "
        "threads contiguous so whole warps retire together"
    ),
    points=15.0,
    summary="a tree reduction, active threads contiguous",
    min_shared_bytes=4 * 64,  # a block's worth of float32 at the smallest legal BLOCK_SIZE
    min_barriers=2,
    # The instructor's tree: every partial sum depends on its segment's elements, all but the
    # one thread 0 loaded passed on through shared memory by other threads (the last, partial
    # block has (n - 1) % BLOCK_SIZE + 1 of them; a sum that adds two elements while it loads
    # keeps all but two); the deepest chain of additions is log2(BLOCK_SIZE) long, a serial sum's
    # BLOCK_SIZE - 1, whether it reads shared or global memory. Thread 0 reads two values in each
    # step and one at the end (a serial sum in one thread reads the whole block; 16 threads
    # summing 16 values each, then one thread their 16 sums, read 32 at BLOCK_SIZE 256).
    use=Use(
        shared_inputs_per_output=lambda p: (p["n"] - 1) % p["BLOCK_SIZE"],
        reads_by_one_thread=lambda p: 2 * (p["BLOCK_SIZE"].bit_length() - 1) + 1,
        thread_reads_factor=1.5,
        steps_per_output=lambda p: p["BLOCK_SIZE"].bit_length() - 1,
        ordering_barriers=2,
    ),
)

CONTRACT_TEXT = """\
- `x`: float32 `(n,)`; `partial`: float32 `(ceil(n / BLOCK_SIZE),)`.
- Result: `partial[b]` = sum of block `b`'s segment of `x` (positions past `n` count as 0);
  relative error ≤ 1e-5 against float64.
"""

EXERCISE = Exercise(
    name="block_sum",
    number=4,
    title="Per-block sum without control divergence",
    source="lecture 2.2 (control divergence)",
    contract=CONTRACT,
    cases=CASES,
    make_inputs=make_inputs,
    inputs=inputs,
    outputs=outputs,
    reference=reference,
    tolerance=Tolerance(rel_frobenius=1e-5),
    concept=CONCEPT,
    # 2^28 floats = 1 GiB: one load per thread, then log2(BLOCK_SIZE) barrier-separated steps per
    # block; estimated >= 1 ms on an H100 (about a million blocks of 256), not yet measured.
    timing=Timing(params={"n": 1 << 28}, points=25.0,
                  work=lambda p: (4.0 * p["n"] / 1e9, "GB/s")),
    # Every graded case is also run instrumented (its last block, partial, its first and one
    # drawn); the divergence bound holds at each, the partial block's bounds check included.
    diagnose=Diagnose(max_blocks=3, max_divergent_branches=8),
    contract_text=CONTRACT_TEXT,
)
