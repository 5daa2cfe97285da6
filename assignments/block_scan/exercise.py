"""Exercise ``block_scan``: inclusive prefix sum of each block's segment, in shared memory.

Source: lesson "Day 11: Thread Synchronization" (Hillis-Steele scan: log2(BLOCK_SIZE) steps,
each read separated from the write by ``cuda.syncthreads()``). Contract: CONTRACTS.md,
"block_scan".

- ``x``, ``out``: int32, shape ``(n,)``, any n >= 1; launch ``[ceil(n / BLOCK_SIZE), BLOCK_SIZE]``.
- ``out[i] = x[b*BLOCK_SIZE] + ... + x[i]`` for ``i`` in block ``b``; compared exactly.

Inputs: random int32 in [-2^15, 2^15] (zero only rarely, so a value read before or after its
update in a racy step changes the sum), plus a case of large positive values whose partial sums
pass 2^24, where a float32 scan stops being exact. |sum| <= 1024 * 2^20 < 2^31: no overflow.
Sizes are odd, so no hidden size is a multiple of any legal BLOCK_SIZE, and most span several
blocks, so a scan that runs across the whole array instead of per block is wrong.
"""

from __future__ import annotations

import numpy as np

from autograder.define import Diagnose, Case, Concept, Use, Constant, Contract, Exercise, Tolerance

CONTRACT = Contract(
    kernel="block_scan",
    constants=(Constant("BLOCK_SIZE", 32, 1024, power_of_two=True),),
    args=("x", "out"),
    signature=("int32[::1]", "int32[::1]"),
    grid=("ceil(n / BLOCK_SIZE)",),
    block=("BLOCK_SIZE",),
)

SMALL = 1 << 15
LARGE = 1 << 20


def _case(n, visibility="hidden", sim=True, label="", values="small", points=5.0):
    params = {"n": n} if values == "small" else {"n": n, "values": values}
    return Case(params, points=points, visibility=visibility, sim=sim, label=label)


# Simulator cases stay at a few blocks (one Python thread per CUDA thread); the larger ones run on
# a GPU only. 515, 600 and 1000 span two or more blocks for every BLOCK_SIZE up to 256.
CASES = [
    _case(100, "public"),
    _case(1000, "public"),
    _case(1),
    _case(31),
    _case(33),
    _case(255),
    _case(257),
    _case(515),
    _case(600, label="n 600, values up to 2^20 (sums past 2^24)", values="large"),
    _case(1025, sim=False),
    _case(2048, sim=False),
    _case(4097, sim=False),
    _case(65_537, sim=False),
    _case(100_003, sim=False),
    _case(1 << 20, sim=False, label="n 2^20, values up to 2^20", values="large"),
]


def make_inputs(params, rng):
    """``{"x": int32 (n,)}``: uniform in [-2^15, 2^15], or [0, 2^20] for ``values="large"``."""
    n = params["n"]
    if params.get("values") == "large":
        x = rng.integers(0, LARGE, size=n, endpoint=True)
    else:
        x = rng.integers(-SMALL, SMALL, size=n, endpoint=True)
    return {"x": x.astype(np.int32)}


def outputs(params):
    return {"out": ((params["n"],), "int32")}


def reference(inputs, params):
    """Per-block inclusive cumulative sum in int64 (exact; no value leaves int32's range)."""
    x = inputs["x"].astype(np.int64)
    size = params["BLOCK_SIZE"]
    pad = -len(x) % size
    segments = np.concatenate([x, np.zeros(pad, np.int64)]).reshape(-1, size)
    return {"out": np.cumsum(segments, axis=1).ravel()[: len(x)]}


CONCEPT = Concept(
    description=(
        "shared memory and barriers: the scan runs in a shared array, in log2(BLOCK_SIZE) steps "
        "separated by cuda.syncthreads()"
    ),
    points=25.0,
    summary="the scan in shared memory with barriers",
    min_shared_bytes=4 * 32,  # a block's worth of int32 at the smallest legal BLOCK_SIZE
    min_barriers=2,  # after the load, and in the step loop (Numba unrolls it: more in PTX)
    # The instructor's Hillis-Steele: a thread reads two values per step (its left neighbour's
    # and its own) and one at the end. A work-efficient (Blelloch) scan reads about twice as
    # many in its busiest thread, hence the factor; a serial scan in one thread reads the block.
    # Each out[i] depends on the i - start + 1 elements of its segment up to i, all but its own
    # passed on through shared memory by other threads: (m - 1) / 2 on average over a block of
    # m elements (the last block has (n - 1) % BLOCK_SIZE + 1). The deepest chain of additions is
    # log2(BLOCK_SIZE) long (Blelloch's about twice that; a serial scan BLOCK_SIZE - 1).
    use=Use(
        shared_inputs_per_output=lambda p: ((p["n"] - 1) % p["BLOCK_SIZE"]) / 2,
        reads_by_one_thread=lambda p: 2 * (p["BLOCK_SIZE"].bit_length() - 1) + 1,
        thread_reads_factor=4.0,
        steps_per_output=lambda p: p["BLOCK_SIZE"].bit_length() - 1,
        ordering_barriers=2,
    ),
)

CONTRACT_TEXT = """\
- `x`, `out`: int32, shape `(n,)`, any n ≥ 1.
- Result: inclusive prefix sum within each block's segment: for `i` in block `b`,
  `out[i] = x[b*BLOCK_SIZE] + … + x[i]`. Exact.
"""

EXERCISE = Exercise(
    name="block_scan",
    number=3,
    title="Inclusive scan within each block",
    source='lesson "Day 11: Thread Synchronization"',
    contract=CONTRACT,
    cases=CASES,
    make_inputs=make_inputs,
    outputs=outputs,
    reference=reference,
    tolerance=Tolerance(exact=True),
    concept=CONCEPT,
    # Every graded case is also run instrumented: its last block (partial), its first and one
    # drawn from the secret seed.
    diagnose=Diagnose(max_blocks=3),
    contract_text=CONTRACT_TEXT,
)
