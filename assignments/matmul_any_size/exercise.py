"""Exercise ``matmul_any_size``: tiled ``(m, n) @ (n, k)`` for any m, n, k ≥ 1.

Source: lectures 2.7 and 2.8 (tiling for arbitrary m×n×k, boundary conditions).
Contract: CONTRACTS.md, "matmul_any_size".
"""

from __future__ import annotations

from autograder.define import Case, Constant, Contract, Diagnose, Exercise, Timing
from ..matmul_common import MATMUL_SIGNATURE, matmul_reference, tiling_concept, random_matrices

CONTRACT = Contract(
    kernel="matmul_any_size",
    constants=(Constant("TILE_WIDTH", 1, 32),),
    args=("A", "B", "C"),
    signature=MATMUL_SIGNATURE,
    grid=("ceil(k / TILE_WIDTH)", "ceil(m / TILE_WIDTH)"),
    block=("TILE_WIDTH", "TILE_WIDTH"),
)


def _case(m, n, k, visibility="hidden", sim=True, label=""):
    return Case({"m": m, "n": n, "k": k}, points=5.0, visibility=visibility, sim=sim,
                label=label or f"{m}x{n}x{k}")


CASES = [
    _case(16, 16, 16, "public"),
    _case(5, 17, 3, "public"),
    _case(1, 1, 1, label="1x1x1"),
    _case(20, 3, 20, label="n < TILE 20x3x20"),
    _case(33, 40, 1, label="k = 1 33x40x1"),
    _case(100, 8, 2, label="tall and skinny 100x8x2"),
    _case(2, 50, 70, label="short and wide 2x50x70"),
    _case(7, 100, 5, label="long reduction 7x100x5"),
    _case(37, 41, 43, label="primes 37x41x43"),
    _case(129, 257, 65, sim=False),
    _case(1000, 3, 999, sim=False),
    _case(1, 4099, 1, sim=False, label="one long dot product 1x4099x1"),
]


def make_inputs(params, rng):
    m, n, k = params["m"], params["n"], params["k"]
    return random_matrices({"A": (m, n), "B": (n, k)}, rng)


def inputs(params):
    m, n, k = params["m"], params["n"], params["k"]
    return {"A": ((m, n), "float32"), "B": ((n, k), "float32")}


def outputs(params):
    return {"C": ((params["m"], params["k"]), "float32")}


CONTRACT_TEXT = """\
- `A`: float32 `(m, n)`; `B`: float32 `(n, k)`; `C`: float32 `(m, k)`; any m, n, k ≥ 1.
- Result: `C = A @ B`; relative Frobenius error against a float64 reference ≤ 1e-4; no NaN;
  nothing written outside `C`.
"""

EXERCISE = Exercise(
    name="matmul_any_size",
    number=2,
    title="Tiled matrix multiplication of any size",
    source="lectures 2.7 and 2.8 (boundary conditions, tiling for arbitrary m×n×k)",
    contract=CONTRACT,
    cases=CASES,
    make_inputs=make_inputs,
    inputs=inputs,
    outputs=outputs,
    reference=matmul_reference,
    concept=tiling_concept("n", rows="m", cols="k"),
    timing=Timing(params={"m": 2000, "n": 2100, "k": 1900}, points=25.0,
                  work=lambda p: (2.0 * p["m"] * p["n"] * p["k"] / 1e9, "GFLOP/s")),
    # Every graded case is also run instrumented: its last block (partial in both dimensions),
    # its first and one drawn from the secret seed.
    diagnose=Diagnose(max_blocks=3),
    contract_text=CONTRACT_TEXT,
)
