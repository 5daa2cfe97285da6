"""Exercise ``transpose``: ``B = A.T`` through a shared-memory tile without bank conflicts.

Source: the shared-memory bank-conflicts lesson (the coalesced transpose: read a TILE_DIM x
TILE_DIM tile of A along rows, write it to B along rows, transposing inside shared memory; pad
the tile by one column so reading it along a column hits 32 different banks). Contract:
CONTRACTS.md, "transpose".

- ``A``: float32 ``(rows, cols)``; ``B``: float32 ``(cols, rows)``; any rows, cols >= 1.
- Launch ``[(ceil(cols / TILE_DIM), ceil(rows / TILE_DIM)), (TILE_DIM, BLOCK_ROWS)]``: each thread
  copies TILE_DIM / BLOCK_ROWS elements of its tile. TILE_DIM is 32; BLOCK_ROWS divides it.
- Compared exactly (a transpose does no arithmetic).

Timing: the unpadded tile is correct but its column reads are 32-way bank conflicts; it measured
1.47x the padded kernel (DESIGN.md), so it fails the 1.25x bar. Timing runs on a GPU only.
"""

from __future__ import annotations

import numpy as np

from autograder.define import Diagnose, Case, Concept, Use, Constant, Contract, Exercise, Timing, Tolerance

CONTRACT = Contract(
    kernel="transpose",
    constants=(Constant("TILE_DIM", 32, 32), Constant("BLOCK_ROWS", 1, 32)),
    args=("A", "B"),
    signature=("float32[:, ::1]", "float32[:, ::1]"),
    grid=("ceil(cols / TILE_DIM)", "ceil(rows / TILE_DIM)"),
    block=("TILE_DIM", "BLOCK_ROWS"),
    checks=(("TILE_DIM % BLOCK_ROWS == 0",
             "BLOCK_ROWS = {BLOCK_ROWS} must divide TILE_DIM = {TILE_DIM}"),),
)


def _case(rows, cols, visibility="hidden", sim=True, label=""):
    return Case({"rows": rows, "cols": cols}, points=5.0, visibility=visibility, sim=sim,
                label=label or f"{rows}x{cols}")


# Square and not, tall and wide, single rows and columns, sizes off the tile. Simulator cases
# stay at a few tiles (each tile is 32 * BLOCK_ROWS Python threads there).
CASES = [
    _case(32, 32, "public"),
    _case(5, 37, "public"),
    _case(1, 1),
    _case(1, 70, label="one row 1x70"),
    _case(70, 1, label="one column 70x1"),
    _case(33, 31),
    _case(40, 65),
    _case(65, 40),
    _case(1000, 999, sim=False),
    _case(4099, 17, sim=False),
    _case(17, 4099, sim=False),
    _case(1024, 2048, sim=False),
]


def make_inputs(params, rng):
    """``{"A": float32 (rows, cols)}`` uniform in [-1, 1), made in float32 (timing: 1.5 GiB)."""
    A = rng.random((params["rows"], params["cols"]), dtype=np.float32)
    A *= 2
    A -= 1
    return {"A": A}


def inputs(params):
    return {"A": ((params["rows"], params["cols"]), "float32")}


def outputs(params):
    return {"B": ((params["cols"], params["rows"]), "float32")}


def reference(inputs, params):
    return {"B": inputs["A"].T}


def through_tile(p: dict) -> float:
    """The fraction of B's elements the instructor's kernel stores from a tile element another
    thread loaded, in the grid's last tile (partial in both dimensions, the fewest): all but the
    diagonal's, min(r, c) of its r x c elements."""
    r = (p["rows"] - 1) % p["TILE_DIM"] + 1
    c = (p["cols"] - 1) % p["TILE_DIM"] + 1
    return 1 - min(r, c) / (r * c)


CONCEPT = Concept(
    description=(
        "shared-memory tile: the kernel stages a 32 x 32 tile in a shared array, with a barrier "
        "between writing it and reading it transposed, read without bank conflicts"
    ),
    points=15.0,
    summary="a shared tile without bank conflicts",
    min_shared_bytes=4 * 32 * 32,
    min_barriers=1,
    # The instructor's kernel loads each element of A once and stores B from the tile: every
    # element but the tile's diagonal was loaded by another thread (``through_tile``).
    use=Use(
        tiled=("A",),
        loads_per_output=lambda p: 1.0,
        shared_inputs_per_output=through_tile,
        ordering_barriers=1,
        outputs_from_shared=through_tile,
        how="load each element of A once into the tile and store B from the tile",
    ),
)

CONTRACT_TEXT = """\
- `A`: float32 `(rows, cols)`; `B`: float32 `(cols, rows)`; any rows, cols ≥ 1.
- Result: `B = A.T`, exact.
"""

EXERCISE = Exercise(
    name="transpose",
    number=5,
    title="Matrix transpose without shared-memory bank conflicts",
    source="lesson on shared-memory bank conflicts (coalesced transpose with a padded tile)",
    contract=CONTRACT,
    cases=CASES,
    make_inputs=make_inputs,
    inputs=inputs,
    outputs=outputs,
    reference=reference,
    tolerance=Tolerance(exact=True),
    concept=CONCEPT,
    # 16384 x 24576 float32 = 1.5 GiB each way, 3 GiB of traffic: about 1.2 ms on an H100 SXM
    # at ~2.6 TB/s achieved (estimated, not yet measured); a multiple of the tile, and not square.
    timing=Timing(params={"rows": 16384, "cols": 24576}, points=25.0,
                  work=lambda p: (2 * 4.0 * p["rows"] * p["cols"] / 1e9, "GB/s")),
    # Every graded case is also run instrumented (its last block, partial in both dimensions,
    # its first and one drawn); no bank conflict of more than 2 ways at any of them.
    diagnose=Diagnose(max_blocks=3, max_bank_ways=2),
    contract_text=CONTRACT_TEXT,
)
