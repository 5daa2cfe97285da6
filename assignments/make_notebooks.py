"""Write the nbgrader source notebooks of assignments/ from the exercises and their solutions.

    python assignments/make_notebooks.py          # (re)write the notebooks
    python assignments/make_notebooks.py --check  # exit 1 if a committed notebook is stale

Each notebook is made of: the task (the concept from the lesson, the contract and launch rule of
CONTRACTS.md, how it is graded), how to use Numba's CUDA simulator, a setup cell, the solution
cell (the instructor solution ``solutions/<name>.py`` without its docstring, the kernel body
between ``### BEGIN SOLUTION`` / ``### END SOLUTION``), a read-only public-test cell (0 points)
and one hidden-test grade cell per part of the grade (correctness, concept, timing) whose points
are the exercise's (``autograder/exercises/<name>.py``). Edit the text here, not in the notebooks.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autograder import exercises  # noqa: E402
from autograder.nbgrader import notebook as nbb  # noqa: E402
from autograder.nbgrader.cells import TEST_CELL_MARKER  # noqa: E402

HERE = Path(__file__).resolve().parent

#: assignment folder → (exercise name, notebook file name)
ASSIGNMENTS = {
    "01_tiled_matmul": ("tiled_matmul", "tiled_matmul.ipynb"),
    "02_matmul_any_size": ("matmul_any_size", "matmul_any_size.ipynb"),
}

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
has one; on the simulator the largest sizes and the timing test are skipped, and the score is
marked provisional.
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

YOUR_KERNEL = """
## Your kernel

Write `TILE_WIDTH` and the kernel in the next cell. Keep the names, the argument order and the
launch rule above: the autograder imports your code and launches `{kernel}` itself, on its own
arrays.

The autograder runs **every code cell of your notebook in order** (its own test cells left out)
before it tests your kernel, so keep long computations and experiments out of top-level code, or
delete them before you submit.
"""

PUBLIC_TESTS_MD = """
## Public tests

The next cell (read-only) launches your kernel the way the autograder does, on {sizes}, and
compares it with NumPy. These sizes are graded too: the autograder runs them again, on fresh
random inputs, with the hidden ones.
"""

HIDDEN_TESTS_MD = """
## Hidden tests

The cells below grade your notebook. In your copy they hold only a comment; when your notebook
is graded they run your kernel on hidden sizes and fresh random inputs, in a separate process with
a time limit, and print what passed and what did not. Do not delete or change them.
"""

HIDDEN_CELL = """
{marker}: {what} ({points:g} points).
# Your copy shows only this comment; the tests run when your notebook is graded. Do not change it.
### BEGIN HIDDEN TESTS
from autograder.nbgrader.cells import grade_this_notebook

grade_this_notebook("{exercise}", "{kind}")
### END HIDDEN TESTS
"""

HIDDEN_WHAT = {
    "correctness": "hidden correctness tests, {n} sizes",
    "concept": "concept test, tiles in shared memory with barriers",
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

TILED_PUBLIC = """
{marker}: public tests (read-only). Small sizes, compared with NumPy.
import numpy as np
from numba import cuda


def check_tiled_matmul(width, seed=0):
    \"\"\"Launch tiled_matmul as the autograder does at one width; compare with NumPy.\"\"\"
    rng = np.random.default_rng(seed)
    A = rng.uniform(-1, 1, (width, width)).astype(np.float32)
    B = rng.uniform(-1, 1, (width, width)).astype(np.float32)
    d_C = cuda.to_device(np.full((width, width), np.nan, dtype=np.float32))
    g = (width + TILE_WIDTH - 1) // TILE_WIDTH
    tiled_matmul[(g, g), (TILE_WIDTH, TILE_WIDTH)](cuda.to_device(A), cuda.to_device(B), d_C)
    C = d_C.copy_to_host()
    assert not np.isnan(C).any(), f"width {{width}}: C has NaN (elements never written?)"
    expected = A.astype(np.float64) @ B.astype(np.float64)
    err = np.linalg.norm(C - expected) / np.linalg.norm(expected)
    assert err <= 1e-4, f"width {{width}}: relative error {{err:.2e}}, allowed 1e-4"
    print(f"width {{width}}: correct (relative error {{err:.1e}})")


for width in {sizes}:
    check_tiled_matmul(width)
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

ANY_SIZE_PUBLIC = """
{marker}: public tests (read-only). Small sizes, compared with NumPy.
import numpy as np
from numba import cuda


def check_matmul_any_size(m, n, k, seed=0):
    \"\"\"Launch matmul_any_size as the autograder does at one size; compare with NumPy.\"\"\"
    rng = np.random.default_rng(seed)
    A = rng.uniform(-1, 1, (m, n)).astype(np.float32)
    B = rng.uniform(-1, 1, (n, k)).astype(np.float32)
    d_C = cuda.to_device(np.full((m, k), np.nan, dtype=np.float32))
    grid = ((k + TILE_WIDTH - 1) // TILE_WIDTH, (m + TILE_WIDTH - 1) // TILE_WIDTH)
    matmul_any_size[grid, (TILE_WIDTH, TILE_WIDTH)](cuda.to_device(A), cuda.to_device(B), d_C)
    C = d_C.copy_to_host()
    assert not np.isnan(C).any(), f"{{m}}x{{n}}x{{k}}: C has NaN (elements never written?)"
    expected = A.astype(np.float64) @ B.astype(np.float64)
    err = np.linalg.norm(C - expected) / np.linalg.norm(expected)
    assert err <= 1e-4, f"{{m}}x{{n}}x{{k}}: relative error {{err:.2e}}, allowed 1e-4"
    print(f"{{m}}x{{n}}x{{k}}: correct (relative error {{err:.1e}})")


for m, n, k in {sizes}:
    check_matmul_any_size(m, n, k)
"""

TEXT = {
    "tiled_matmul": (TILED_TASK, TILED_PUBLIC),
    "matmul_any_size": (ANY_SIZE_TASK, ANY_SIZE_PUBLIC),
}


def _grading_md(ex) -> str:
    parts = nbb.part_max_points(ex)
    public = [c for c in ex.cases if c.visibility == "public"]
    gpu_only = [c for c in ex.cases if not c.sim]
    rows = [
        f"| correctness | {parts['correctness']:g} | {len(ex.cases)} sizes, "
        f"{ex.cases[0].points:g} points each: the {len(public)} public sizes below and "
        f"{len(ex.cases) - len(public)} hidden ones ({len(gpu_only)} of them on a GPU only) |",
    ]
    if "concept" in parts:
        rows.append(f"| concept | {parts['concept']:g} | {ex.concept.description}; read off "
                    "your kernel compiled for a GPU |")
    if "timing" in parts:
        t = ex.timing
        size = ", ".join(f"{k} = {v}" for k, v in t.params.items())
        rows.append(f"| timing | {parts['timing']:g} | on a GPU, at {size}: your kernel's time "
                    f"against the instructor's at your `TILE_WIDTH`; full points up to "
                    f"{t.full_ratio:g}×, none above {t.zero_ratio:g}×; only for a kernel that "
                    "passes every size |")
    total = sum(parts.values())
    return ("## How it is graded\n\n"
            f"{total:g} points, in three hidden-test cells at the end of this notebook:\n\n"
            "| part | points | what |\n|---|---|---|\n" + "\n".join(rows) + "\n\n"
            "A test ends as passed, failed, error (your code raised), timeout or skipped, with "
            "a message that names the size, the first wrong element, or the line of your code.")


def _sizes(ex) -> str:
    public = [c.params for c in ex.cases if c.visibility == "public"]
    if len(public[0]) == 1:
        return repr(tuple(next(iter(p.values())) for p in public))
    return repr(tuple(tuple(p.values()) for p in public))


def _sizes_words(ex) -> str:
    public = [c.params for c in ex.cases if c.visibility == "public"]
    return " and ".join(", ".join(f"{k} {v}" for k, v in p.items()) for p in public)


def build(folder: str):
    """The source notebook of assignment ``folder`` (a key of :data:`ASSIGNMENTS`)."""
    name, _ = ASSIGNMENTS[folder]
    ex = exercises.get(name)
    task, public = TEXT[name]
    solution_text = nbb.strip_module_docstring(
        (ROOT / "solutions" / ex.solution).read_text(encoding="utf-8"))
    cells = [
        nbb.markdown("task", task + "\n" + _grading_md(ex)),
        nbb.markdown("simulator", SIMULATOR),
        nbb.code(SETUP, "setup"),
        nbb.markdown("your-kernel", YOUR_KERNEL.format(kernel=ex.contract.kernel)),
        nbb.solution(f"{name}-solution", nbb.mark_solution(solution_text, ex.contract.kernel)),
        nbb.markdown("public-tests-text", PUBLIC_TESTS_MD.format(sizes=_sizes_words(ex))),
        nbb.tests(f"{name}-public-tests", public.format(marker=TEST_CELL_MARKER,
                                                        sizes=_sizes(ex)), 0.0),
        nbb.markdown("hidden-tests-text", HIDDEN_TESTS_MD),
    ]
    for kind, points in nbb.part_max_points(ex).items():
        what = HIDDEN_WHAT[kind].format(n=len(ex.cases))
        cells.append(nbb.tests(f"{name}-hidden-{kind}", HIDDEN_CELL.format(
            marker=TEST_CELL_MARKER, what=what, points=points, exercise=name, kind=kind),
            points))
    return nbb.notebook(cells)


def main(argv: list[str]) -> int:
    check = "--check" in argv
    stale = []
    for folder, (_, nb_name) in ASSIGNMENTS.items():
        path = HERE / folder / nb_name
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
