"""Exercise ``conv1d``: a 1-D convolution whose input tile, with its halo, sits in shared memory.

Source: lectures 2.3 (CUDA memories: shared memory as a software-managed cache) and 2.4 (tiled
parallel algorithms: a tile's halo, ghost cells). Contract: CONTRACTS.md, "conv1d".

- ``x``: float32 ``(n,)``, any n >= 1; ``mask``: float32 ``(w,)``, w odd, 1 <= w <=
  MAX_MASK_WIDTH (15), known only at run time (``mask.shape[0]``); ``y``: float32 ``(n,)``.
- Launch ``[ceil(n / BLOCK_SIZE), BLOCK_SIZE]``.
- ``y[i] = sum_j mask[j] * x[i + j - w // 2]``, x outside [0, n) counting as 0 (ghost cells);
  relative Frobenius error <= 1e-5 against float64, no NaN.

Inputs: x and mask uniform in [-1, 1). ``x`` sits between NaN margins, so a halo read past the
end without a bounds check gives NaN outputs on a GPU (an IndexError on the simulator; a read
before the start wraps to the end of x in both, Python's and Numba's negative indexing).

Cases cover n = 1, n < w (every neighbour a ghost cell), w = 1 (no halo) and w = 15, n a multiple
of the smaller block sizes (the right halo is all ghost cells) and not, and sizes that span
several blocks, where a tile without its halo is wrong at each block edge. Simulator cases stay
at n <= 600 (one Python thread per CUDA thread): at BLOCK_SIZE 1024 none of them spans two
blocks, so there the block edges are tested on a GPU only (n 1025 and up).

Timing: on an H100 the kernel is bound by its instructions, not by memory, and the L1 cache serves
most of the reuse the tile provides: a kernel reading x straight from global memory measured
0.85-1.0x the instructor's, so timing does not enforce the tile (the concept test does). Correct
tiled variants measured 0.45-1.0x the instructor's kernel at every BLOCK_SIZE (the mask in shared
memory, the textbook's three-part load, int32 indices), none slower.
"""

from __future__ import annotations

import numpy as np

from autograder.define import Case, Concept, Constant, Contract, Diagnose, Use, Exercise, Timing, Tolerance

CONTRACT = Contract(
    kernel="conv1d",
    constants=(Constant("BLOCK_SIZE", 32, 1024, power_of_two=True),
               Constant("MAX_MASK_WIDTH", 15, 15)),
    args=("x", "mask", "y"),
    signature=("float32[::1]", "float32[::1]", "float32[::1]"),
    grid=("ceil(n / BLOCK_SIZE)",),
    block=("BLOCK_SIZE",),
)


def _case(n, w, visibility="hidden", sim=True, label=""):
    return Case({"n": n, "w": w}, points=5.0, visibility=visibility, sim=sim, label=label)


CASES = [
    _case(100, 5, "public"),
    _case(300, 15, "public"),
    _case(1, 1),
    _case(1, 15, label="n 1, w 15 (every neighbour a ghost cell)"),
    _case(10, 15, label="n 10 < w 15"),
    _case(256, 3),
    _case(257, 1, label="n 257, w 1 (no halo)"),
    _case(600, 13),
    _case(1025, 15, sim=False),
    _case(4097, 9, sim=False),
    _case(100_003, 15, sim=False),
    _case((1 << 22) + 3, 11, sim=False),
]


def make_inputs(params, rng):
    """``{"x": float32 (n,), "mask": float32 (w,)}``, uniform in [-1, 1), made in float32."""
    x = rng.random(params["n"], dtype=np.float32)
    x *= 2
    x -= 1
    mask = rng.random(params["w"], dtype=np.float32) * 2 - 1
    return {"x": x, "mask": mask}


def inputs(params):
    return {"x": ((params["n"],), "float32"), "mask": ((params["w"],), "float32")}


def outputs(params):
    return {"y": ((params["n"],), "float32")}


def reference(inputs, params):
    """``y[i] = sum_j mask[j] * x[i + j - w // 2]`` in float64, ghost cells 0."""
    x = inputs["x"].astype(np.float64)
    mask = inputs["mask"].astype(np.float64)
    half = len(mask) // 2
    padded = np.concatenate([np.zeros(half), x, np.zeros(half)])
    return {"y": np.correlate(padded, mask, mode="valid")}


def _block_loads(p: dict, block: tuple) -> float:
    """The elements of x block ``block`` loads once: its own and a halo on each side, those
    inside [0, n) (a last block of one output loads its halo too). The instructor's halo is
    w // 2; this is the widest, MAX_MASK_WIDTH // 2, which a tile of a fixed size loads whatever
    the mask (no reuse is lost: a narrower mask reads fewer of them)."""
    start = block[0] * p["BLOCK_SIZE"]
    half = p["MAX_MASK_WIDTH"] // 2
    return max(0, min(p["n"], start + p["BLOCK_SIZE"] + half) - max(0, start - half))


CONCEPT = Concept(
    description=(
        "input tile and halo in shared memory: each block loads its BLOCK_SIZE elements and the "
        "w // 2 neighbours on each side (ghost cells as 0) into a shared array of BLOCK_SIZE + "
        "MAX_MASK_WIDTH - 1 elements, with a barrier between loading and computing"
    ),
    points=15.0,
    summary="the input tile and its halo in shared memory",
    min_shared_bytes=4 * (32 + 15 - 1),  # the tile at the smallest legal BLOCK_SIZE
    min_barriers=1,
    # The instructor's kernel loads each block's BLOCK_SIZE + w - 1 elements of x once, and
    # each output depends on its w tile elements, all but at most one loaded by other threads;
    # next to x's ends the ghost cells (zeros) depend on nothing, so the fewest, at an output
    # next to an end, is min(n, w // 2 + 1) - 1.
    use=Use(
        tiled=("x",),
        loads_per_output=lambda p: (p["BLOCK_SIZE"] + p["w"] - 1) / p["BLOCK_SIZE"],
        block_loads=_block_loads,
        shared_inputs_per_output=lambda p: min(p["n"], p["w"] // 2 + 1) - 1,
        ordering_barriers=1,
        how="load the tile and its halo into shared memory once and compute every sum from it",
    ),
)

CONTRACT_TEXT = """\
- `x`: float32 `(n,)`, any n ≥ 1; `mask`: float32 `(w,)`, w odd, 1 ≤ w ≤ `MAX_MASK_WIDTH`,
  known only at run time (`mask.shape[0]`); `y`: float32 `(n,)`.
- Result: `y[i] = sum_j mask[j] * x[i + j - w // 2]`, where `x` outside `[0, n)` counts as 0
  (ghost cells); relative error ≤ 1e-5 against float64.
"""

EXERCISE = Exercise(
    name="conv1d",
    number=9,
    title="1-D convolution with the input tile and its halo in shared memory",
    source="lectures 2.3 (CUDA memories) and 2.4 (tiled parallel algorithms)",
    contract=CONTRACT,
    cases=CASES,
    make_inputs=make_inputs,
    inputs=inputs,
    outputs=outputs,
    reference=reference,
    tolerance=Tolerance(rel_frobenius=1e-5),
    concept=CONCEPT,
    # 2^26 floats (256 MiB) in and out. Measured on an H100 (2026-11-22): the instructor's kernel
    # takes 1.8-2.0 ms at every BLOCK_SIZE from 32 to 1024, bound by its instructions (Numba's
    # 64-bit index arithmetic in the w-step loop), not by DRAM (0.18 ms at 3 TB/s).
    timing=Timing(params={"n": 1 << 26, "w": 15}, points=25.0,
                  work=lambda p: (2 * 4.0 * p["n"] / 1e9, "GB/s")),
    # Every graded case is also run instrumented: its last block (the right end of x, ghost
    # cells), its first (the left end) and one drawn (halos from the neighbours' ranges).
    diagnose=Diagnose(max_blocks=3),
    contract_text=CONTRACT_TEXT,
)
