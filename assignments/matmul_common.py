"""Inputs, reference and concept rule shared by the two matrix-multiplication exercises."""

from __future__ import annotations

import numpy as np

from autograder.define import Concept, Use

MATMUL_SIGNATURE = ("float32[:, ::1]",) * 3

def tiling_concept(inner: str, rows: str | None = None, cols: str | None = None) -> Concept:
    """The tiling concept, ``inner`` naming the graded cases' summed dimension (``width``,
    ``n``), ``rows`` and ``cols`` C's dimensions (``m``, ``k``; default ``inner``). The
    instructor's kernel loads one element of A and one of B per thread and phase, in
    ceil(inner / TILE_WIDTH) phases, and reads 2 * TILE_WIDTH tile elements per phase, all but
    the two it loaded itself loaded by other threads."""
    rows, cols = rows or inner, cols or inner

    def phases(p):
        return -(-p[inner] // p["TILE_WIDTH"])

    def block_loads(p, block):
        """A block of C's r x c elements loads its r rows of A and c columns of B, each
        ``inner`` long, once (C's grid is (ceil(cols / T), ceil(rows / T)))."""
        t = p["TILE_WIDTH"]
        r = max(0, min(t, p[rows] - block[1] * t))
        c = max(0, min(t, p[cols] - block[0] * t))
        return p[inner] * (r + c)

    return Concept(
        description=(
            "tiles of A and B go through shared memory: the kernel declares shared arrays and "
            "has a barrier after loading a tile and another before overwriting it"
        ),
        points=15.0,
        summary="tiles in shared memory with barriers",
        min_shared_bytes=8,
        min_barriers=2,
        use=Use(
            tiled=("A", "B"),
            block_loads=block_loads,
            loads_per_output=lambda p: 2 * phases(p),
            # Each C element depends on the 2 * inner elements of its row of A and column of
            # B, all loaded into the tiles by other threads but the one of each per phase its
            # own thread loaded (the tiles' zero padding depends on nothing).
            shared_inputs_per_output=lambda p: 2 * (p[inner] - phases(p)),
            ordering_barriers=2,
            how="load each tile of A and B into shared memory once and compute from the tiles",
        ),
    )


def random_matrices(shapes: dict[str, tuple[int, int]], rng: np.random.Generator) -> dict:
    """Float32 matrices with values uniform in [-1, 1), one per ``name: (rows, cols)``."""
    return {
        name: rng.uniform(-1.0, 1.0, size=shape).astype(np.float32)
        for name, shape in shapes.items()
    }


def matmul_reference(inputs: dict[str, np.ndarray], params: dict) -> dict[str, np.ndarray]:
    """``C = A @ B`` in float64."""
    return {"C": inputs["A"].astype(np.float64) @ inputs["B"].astype(np.float64)}
