"""``autograder new``: a working starter assignment in a course's own folder (issue 23).

:func:`write_starter` writes, for a name ``NAME``, the four things every assignment has, in the
layout the registry reads (:mod:`autograder.exercises`)::

    ASSIGNMENTS/NAME/exercise.py                       the definition (autograder.define)
    ASSIGNMENTS/NAME/notebook.py                       the task text of the student notebook
    ASSIGNMENTS/NAME/mutants/no_bounds_check.py        known-bad: no ``i < n`` check
    ASSIGNMENTS/NAME/mutants/one_block_only.py         known-bad: indexes by threadIdx only
    ASSIGNMENTS/NAME/mutants/equivalent.toml           the solution's equivalent mutants
    SOLUTIONS/NAME.py                                  the instructor's solution

With ``notebook=True`` (``autograder new NAME --notebook``) the student notebook is authored
as one notebook instead of ``notebook.py`` (:mod:`autograder.nbgrader.one_notebook`)::

    SOLUTIONS/NAME.ipynb                               task text, a skeleton with a solution
                                                       region, a cell of the student's own and a
                                                       written answer graded by hand

The starter is a complete exercise that ``autograder check NAME --assignments ASSIGNMENTS``
passes: a one-dimensional elementwise kernel, ``out[i] = 2 * x[i] + 1`` over float32 ``x`` of any
length, launched ``[ceil(n / BLOCK_SIZE), BLOCK_SIZE]``, with public and hidden cases, a timing
test (on a GPU) and two known-bad submissions that the grader must reject. The instructor edits
it into their own exercise; docs/authoring.md walks through one.
"""

from __future__ import annotations

import keyword
import re
from pathlib import Path

#: An assignment's name: a Python identifier in lower case (it names a module and the kernel).
NAME_PATTERN = re.compile(r"[a-z][a-z0-9_]{0,39}")

EXERCISE = '''\
"""Exercise ``{name}``: a starter written by ``autograder new`` (edit it into your own).

Source: your course's lesson. Contract: ``autograder check {name} --assignments DIR`` prints it.

- ``x``, ``out``: float32, shape ``(n,)``, any n >= 1; launch ``[ceil(n / BLOCK_SIZE), BLOCK_SIZE]``.
- ``out[i] = 2 * x[i] + 1``; compared with a relative Frobenius error of at most 1e-6.
"""

from __future__ import annotations

import numpy as np

from autograder.define import Case, Constant, Contract, Exercise, Timing, Tolerance

CONTRACT = Contract(
    kernel="{name}",
    constants=(Constant("BLOCK_SIZE", 32, 1024, power_of_two=True),),
    args=("x", "out"),
    signature=("float32[::1]", "float32[::1]"),
    grid=("ceil(n / BLOCK_SIZE)",),
    block=("BLOCK_SIZE",),
)

# Simulator cases stay at a few blocks (one Python thread per CUDA thread); larger ones run on a
# GPU only (sim=False). Odd sizes: no hidden size is a multiple of a legal BLOCK_SIZE, so a kernel
# without its bounds check reads and writes past the end.
CASES = [
    Case({{"n": 100}}, points=10.0, visibility="public"),
    Case({{"n": 1000}}, points=10.0, visibility="public"),
    Case({{"n": 1}}, points=10.0),
    Case({{"n": 33}}, points=10.0),
    Case({{"n": 257}}, points=10.0),
    Case({{"n": 1025}}, points=10.0),
    Case({{"n": 100_003}}, points=10.0, sim=False),
]


def make_inputs(params, rng):
    """``{{"x": float32 (n,)}}`` uniform in [-1, 1)."""
    return {{"x": rng.uniform(-1.0, 1.0, params["n"]).astype(np.float32)}}


def inputs(params):
    return {{"x": ((params["n"],), "float32")}}


def outputs(params):
    return {{"out": ((params["n"],), "float32")}}


def reference(inputs, params):
    """In float64: the grader compares the float32 result against it."""
    return {{"out": 2.0 * inputs["x"].astype(np.float64) + 1.0}}


CONTRACT_TEXT = """\\
- `x`, `out`: float32, shape `(n,)`, any n ≥ 1.
- Result: `out[i] = 2 * x[i] + 1` for every `i < n`; nothing is written past `out[n - 1]`.
"""

EXERCISE = Exercise(
    name="{name}",
    number={number},
    title={title!r},
    source='lesson "Your lesson"',
    contract=CONTRACT,
    cases=CASES,
    make_inputs=make_inputs,
    inputs=inputs,
    outputs=outputs,
    reference=reference,
    tolerance=Tolerance(rel_frobenius=1e-6),
    # 2^26 floats in, 2^26 out (512 MiB): long enough to time on a GPU.
    timing=Timing(params={{"n": 1 << 26}}, points=30.0,
                  work=lambda p: (8.0 * p["n"] / 1e9, "GB/s")),
    # For a kernel with shared memory and barriers, add (from autograder.define)
    # diagnose=Diagnose(max_blocks=3): every graded case then also runs instrumented on the
    # simulator, at its own size and inputs (three of its blocks: the last, the first and one
    # drawn from the secret seed), for races, barriers and out-of-bounds accesses.
    contract_text=CONTRACT_TEXT,
)
'''

NOTEBOOK = '''\
# %% [markdown]
# # {title}
#
# *Lesson "Your lesson"*
#
# Each thread of the grid computes one element: thread `tid = cuda.threadIdx.x` of block
# `b = cuda.blockIdx.x` handles element `i = b * BLOCK_SIZE + tid`. The last block may have more
# threads than elements left, so every thread checks `i < n` before it reads or writes.
#
# ## Your task
#
# * Define `BLOCK_SIZE`, a power of two from 32 to 1024, and a `@cuda.jit` kernel
#   `{name}(x, out)`.
# * `x`, `out`: `float32` arrays of shape `(n,)`, C-contiguous, any `n ≥ 1`.
# * The autograder launches your kernel exactly so (`ceil` is integer ceiling division):
#   ```python
#   {name}[ceil(n / BLOCK_SIZE), BLOCK_SIZE](x, out)
#   ```
# * Result: `out[i] = 2 * x[i] + 1` for every `i < n`. Nothing is written past `out[n - 1]`.
'''

SOLUTION = '''\
"""Instructor solution for ``{name}``: out[i] = 2 * x[i] + 1, one element per thread.

x, out: float32 (n,), any n >= 1. Launch: {name}[ceil(n / BLOCK_SIZE), BLOCK_SIZE](x, out).
"""

from numba import cuda

BLOCK_SIZE = 256


@cuda.jit
def {name}(x, out):
    i = cuda.blockIdx.x * BLOCK_SIZE + cuda.threadIdx.x
    if i < x.shape[0]:
        out[i] = 2 * x[i] + 1
'''

NO_BOUNDS_CHECK = '''\
# kernelgrade-expect-sim: correctness=error
# kernelgrade-expect-gpu: correctness=failed
"""No ``i < n`` check: the last block reads past the end of x and writes past the end of out
(an IndexError on the simulator; writes into the guard band on a GPU)."""

from numba import cuda

BLOCK_SIZE = 64


@cuda.jit
def {name}(x, out):
    i = cuda.blockIdx.x * BLOCK_SIZE + cuda.threadIdx.x
    out[i] = 2 * x[i] + 1
'''

ONE_BLOCK_ONLY = '''\
# kernelgrade-expect: correctness=failed
"""Indexes by ``cuda.threadIdx.x`` alone: every block computes the first BLOCK_SIZE elements
again, and the rest of out is never written."""

from numba import cuda

BLOCK_SIZE = 128


@cuda.jit
def {name}(x, out):
    i = cuda.threadIdx.x
    if i < x.shape[0]:
        out[i] = 2 * x[i] + 1
'''


EQUIVALENT = '''\
# Equivalent one-edit mutants of the solution: `autograder mutants {name}` lets them survive.
# One line each: the mutant's id = "why no input the contract allows tells it from the solution"
# (docs/mutants.md). Edit the solution and this list goes stale: `autograder check` says so.
L14-int-minus-1 = "x is 1-D: x.shape[-1] is x.shape[0]"
'''


#: The starter's one notebook (``--notebook``): (cell type, source, nbgrader metadata or None).
NOTEBOOK_CELLS = (
    ("markdown", None, None),  # the task: NOTEBOOK's text
    ("markdown", "## Part 1: the kernel\n\nThe index is given; write the rest between the "
                 "solution markers (the student sees `# YOUR CODE HERE` there).", None),
    ("code", '''\
from numba import cuda

BLOCK_SIZE = 256


@cuda.jit
def {name}(x, out):
    i = cuda.blockIdx.x * BLOCK_SIZE + cuda.threadIdx.x
    ### BEGIN SOLUTION
    if i < x.shape[0]:
        out[i] = 2 * x[i] + 1
    ### END SOLUTION''', None),
    ("markdown", "## Try it\n\nThis cell is yours: change the size, print what you like "
                 "(when your notebook is graded, its calls are skipped).", None),
    ("code", '''\
import numpy as np

n = 1000
x = np.linspace(-1, 1, n, dtype=np.float32)
out = np.zeros_like(x)
{name}[(n + BLOCK_SIZE - 1) // BLOCK_SIZE, BLOCK_SIZE](x, out)
print("largest error:", np.abs(out - (2 * x + 1)).max())''', None),
    ("markdown", "## Part 2: in your words (5 points, graded by hand)\n\nWhy does every "
                 "thread check `i < n`? Answer in the next cell.", None),
    ("markdown", "The grid has a whole number of blocks, so the last block may have more "
                 "threads than elements left: without the check they read and write past the "
                 "end of the arrays.",
     {"grade": True, "solution": True, "locked": False, "points": 5.0,
      "grade_id": "{name}-why-check", "schema_version": 3, "task": False}),
)


def starter_notebook(name: str, title: str) -> str:
    """The starter's one notebook (:data:`NOTEBOOK_CELLS`) for ``name`` as JSON text: the task
    of :data:`NOTEBOOK`, a skeleton, a cell of the student's own and a written answer."""
    import jupytext
    import nbformat

    fields = {"name": name, "title": title}
    task = jupytext.reads(NOTEBOOK.format(**fields), fmt="py:percent").cells[0].source
    cells = []
    for kind, source, meta in NOTEBOOK_CELLS:
        text = task if source is None else source.format(**fields)
        cell = (nbformat.v4.new_markdown_cell(text) if kind == "markdown"
                else nbformat.v4.new_code_cell(text))
        if meta is not None:
            cell.metadata["nbgrader"] = {k: v.format(**fields) if isinstance(v, str) else v
                                         for k, v in meta.items()}
        cells.append(cell)
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"display_name": "Python 3 (ipykernel)", "language": "python",
                                 "name": "python3"}
    nbformat.validate(nb)
    return nbformat.writes(nb) + "\n"


def check_name(name: str) -> None:
    """Raise ``ValueError`` unless ``name`` can name an assignment: lower case letters, digits and
    underscores, starting with a letter, at most 40 characters, not a Python keyword."""
    if not NAME_PATTERN.fullmatch(name) or keyword.iskeyword(name):
        raise ValueError(f"{name!r} cannot name an assignment: use lower case letters, digits and "
                         "underscores, starting with a letter (it names the kernel and a module)")


def write_starter(name: str, assignments: Path, solutions: Path | None = None,
                  number: int = 1, title: str | None = None,
                  notebook: bool = False) -> list[Path]:
    """Write the starter assignment ``name`` into the folder ``assignments`` (created if
    needed) and its solution into ``solutions`` (default: the ``solutions/`` folder beside
    ``assignments``); ``number`` is its place in the course; ``notebook``: author the student
    notebook as one notebook, ``SOLUTIONS/NAME.ipynb``, instead of ``notebook.py``. Returns the
    files written.
    Raises ``ValueError`` for a bad name and ``FileExistsError`` when the assignment's folder or
    its solution already exists (nothing is written then)."""
    check_name(name)
    assignments = Path(assignments)
    solutions = Path(solutions) if solutions is not None else assignments.parent / "solutions"
    folder, solution = assignments / name, solutions / f"{name}.py"
    one_notebook = solutions / f"{name}.ipynb"
    for path in (folder, solution) + ((one_notebook,) if notebook else ()):
        if path.exists():
            raise FileExistsError(f"{path} already exists: choose another name or remove it")
    fields = {"name": name, "number": int(number),
              "title": title or f"{name.replace('_', ' ').capitalize()}: one element per thread"}
    files = {folder / "exercise.py": EXERCISE, folder / "notebook.py": NOTEBOOK,
             folder / "mutants" / "no_bounds_check.py": NO_BOUNDS_CHECK,
             folder / "mutants" / "one_block_only.py": ONE_BLOCK_ONLY,
             folder / "mutants" / "equivalent.toml": EQUIVALENT, solution: SOLUTION}
    texts = {path: template.format(**fields) for path, template in files.items()}
    if notebook:
        del texts[folder / "notebook.py"]
        texts[one_notebook] = starter_notebook(name, fields["title"])
    for path, text in texts.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return list(texts)
