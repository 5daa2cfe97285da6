"""Exercise ``tiled_matmul``: square matrix multiplication with shared-memory tiles.

Source: lesson "Day 10: Shared Memory Fundamentals" (TILE_WIDTH 16, boundary checks, two
``__syncthreads()`` per phase). Contract: CONTRACTS.md, "tiled_matmul".
"""

from __future__ import annotations

from autograder.define import Case, Constant, Contract, Diagnose, Exercise, Timing
from ..matmul_common import MATMUL_SIGNATURE, matmul_reference, tiling_concept, random_matrices

CONTRACT = Contract(
    kernel="tiled_matmul",
    constants=(Constant("TILE_WIDTH", 1, 32),),
    args=("A", "B", "C"),
    signature=MATMUL_SIGNATURE,
    grid=("ceil(width / TILE_WIDTH)", "ceil(width / TILE_WIDTH)"),
    block=("TILE_WIDTH", "TILE_WIDTH"),
)


def _case(width: int, visibility: str = "hidden", sim: bool = True) -> Case:
    return Case({"width": width}, points=5.0, visibility=visibility, sim=sim)


# Multiples of the tile and not (1, 15, 16, 17, 33, primes), and widths with several phases so
# that a missing second barrier can show. The largest run on a GPU only, 47 too: on the simulator
# it proved nothing that 31 and 33 don't (at TILE_WIDTH 16: the same 3x3 grid and 3 phases as 33,
# a last tile of 15 as 31) and cost a quarter of the grading's CPU time.
CASES = [
    _case(16, "public"),
    _case(17, "public"),
    _case(1),
    _case(15),
    _case(16),
    _case(17),
    _case(31),
    _case(33),
    _case(47, sim=False),
    _case(64, sim=False),
    _case(100, sim=False),
    _case(257, sim=False),
]


def make_inputs(params, rng):
    w = params["width"]
    return random_matrices({"A": (w, w), "B": (w, w)}, rng)


def inputs(params):
    w = params["width"]
    return {"A": ((w, w), "float32"), "B": ((w, w), "float32")}


def outputs(params):
    w = params["width"]
    return {"C": ((w, w), "float32")}


CONTRACT_TEXT = """\
- `A`, `B`, `C`: float32, shape `(width, width)`, C-contiguous; any `width` ≥ 1.
- Result: `C = A @ B`; relative Frobenius error against a float64 reference ≤ 1e-4; no NaN;
  nothing written outside `C`.
"""

EXERCISE = Exercise(
    name="tiled_matmul",
    number=1,
    title="Tiled matrix multiplication",
    source='lesson "Day 10: Shared Memory Fundamentals"',
    contract=CONTRACT,
    cases=CASES,
    make_inputs=make_inputs,
    inputs=inputs,
    outputs=outputs,
    reference=matmul_reference,
    concept=tiling_concept("width"),
    timing=Timing(params={"width": 2048}, points=25.0,
                  work=lambda p: (2.0 * p["width"] ** 3 / 1e9, "GFLOP/s")),
    # Every graded case is also run instrumented: its last block (the partial tile in both
    # dimensions), its first and one drawn from the secret seed.
    diagnose=Diagnose(max_blocks=3),
    contract_text=CONTRACT_TEXT,
)
