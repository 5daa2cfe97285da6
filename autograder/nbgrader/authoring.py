"""Build the nbgrader *source* notebook of any exercise from its folder.

``build_source_notebook(name)`` makes the instructor's notebook of exercise ``name`` (an nbformat
node; ``autograder course build`` writes it to ``source/<NN_name>/<name>.ipynb``, with
``NN_name`` = ``EXERCISE.assignment``). Nothing about one exercise lives here: its own text is
in its folder, ``assignments/<name>/``, and the rest is made from its definition.

The format of ``notebook.py`` (the notebook's own text)
--------------------------------------------------------
A Python file in jupytext's *percent* format (read with ``jupytext.reads(text,
fmt="py:percent")``) holding **markdown cells only**, each opened by a ``# %% [markdown]``
line, each line of its text commented with ``# `` (an empty line is ``#``)::

    # %% [markdown]
    # # Tiled matrix multiplication with shared memory
    #
    # *Lesson "Day 10: Shared Memory Fundamentals"*
    #
    # The concept, as the lesson explains it (shared memory, tiles, barriers, ...).
    #
    # ## Your task
    #
    # * Define `TILE_WIDTH`, an `int` from 1 to 32, and a `@cuda.jit` kernel
    #   `tiled_matmul(A, B, C)`.
    # * The autograder launches your kernel exactly so ...:
    #   ```python
    #   tiled_matmul[(g, g), (TILE_WIDTH, TILE_WIDTH)](A, B, C)
    #   ```
    # * Result: ...

* The **first cell is the task**: a ``# `` title (the exercise's title), the lesson or lecture in
  italics, the concept explained, then a ``## Your task`` section whose bullets state the
  contract: every function the student writes with its exact arguments (``name(A, B, C)``), each
  constant with its range (``an `int` from 1 to 32``, ``a power of two from 32 to 1024``, or
  ``TILE_DIM = 32``), and every grid and block expression of the launch rule, verbatim.
  The builder appends "## How it is graded" (a table made from the points) to this cell.
* Further markdown cells, if any, follow the task cell in order (hints, pictures in markdown).
* No code cells, no YAML header, no module docstring: the setup cell, the solution cell (the
  instructor ``solution.py`` with its module docstring removed and the body of each function
  the student writes between ``### BEGIN SOLUTION`` / ``### END SOLUTION``), the public-test
  cell (``run_public_tests(name)``) and one hidden grade cell per part that carries points are
  generated here, from ``exercise.py`` and ``solution.py``. Cells are locked (read-only).

What else the builder takes from the definition: ``EXERCISE.concept.summary`` (a few words, the
concept grade cell's title, e.g. "tiles in shared memory with barriers"), the cases and points
(the grading table), ``needs_gpu`` and ``contract.functions`` / ``device_function`` (the text for
a kernel, a device function or plain functions; simulator text and a setup cell except for plain
functions).

``tests/course/test_nb_source_notebooks.py`` builds every registered exercise's notebook and
checks the task text against the contract: a folder whose notebook cannot be built fails there.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import nbformat

from .. import exercises
from ..errors import GraderSetupError
from ..exercises.base import Exercise
from . import notebook as nbb
from .cells import TEST_CELL_MARKER

__all__ = ["AuthoringError", "build_source_notebook", "notebook_file", "task_cells"]


class AuthoringError(ValueError):
    """An exercise folder's ``notebook.py`` is missing or not in the format above (the message
    names the file and what is wrong)."""


#: What the student writes: a kernel the autograder launches, a device function the autograder's
#: own kernel calls, or plain Python functions the autograder calls.
KERNEL, DEVICE_FUNCTION, FUNCTIONS = "kernel", "device function", "functions"

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
has one; on the simulator {skipped} skipped, and the score is
marked provisional.
"""

NEEDS_GPU = """
## This exercise needs a GPU

Numba's CUDA simulator (`NUMBA_ENABLE_CUDASIM=1`; see the setup cell below) runs the blocks of a
grid **one after another**: block 0 would wait at your barrier forever for blocks that have not
started yet. A grid-wide barrier can only be tested on a real GPU. On the simulator this notebook
still runs top to bottom (your function is defined, never called): the public test prints that
it is skipped, and the autograder skips every test (0 points, the score marked provisional).
Your notebook is graded on a GPU.

On a GPU, a barrier that never opens is a deadlock. The public test runs your barrier in a
separate process with a time limit, as the autograder does: it reports a deadlock as a timeout,
and the cell does not hang. A launch of your own in a cell of yours would hang that cell: an
interrupt cannot stop a running GPU kernel; restart the notebook's kernel (Kernel → Restart).
"""

SETUP = """
# Setup. No NVIDIA GPU? Uncomment the next two lines to use Numba's CUDA simulator, then restart
# the kernel (Numba reads the variable when it is first imported).
# import os
# os.environ["NUMBA_ENABLE_CUDASIM"] = "1"

import numba
import numpy as np
from numba import cuda

# A check for you: when your notebook is graded, the grader runs only the imports above.
if numba.config.ENABLE_CUDASIM:
    print("Numba's CUDA simulator: slow, keep sizes small")
elif cuda.is_available():
    print("GPU:", cuda.get_current_device().name)
else:
    print("No CUDA GPU found: uncomment the two lines above and restart the kernel")
"""

YOUR_CODE = """
## Your {what}

{intro}

When your notebook is graded, the autograder reads your code cells in order (its own test cells
left out) and runs only their **imports** (of {modules}), **constant assignments**
(`TILE = 16`) and **function definitions**. Everything else at the top level (calls such as your
own tests, `print`, loops, `if` blocks) is skipped, and the report lists the lines it skipped.
So define your {what} and {its} constants at the top level, not inside an `if` or a function.
"""

YOUR_CODE_INTRO = {
    KERNEL: """\
Write {constants} and the kernel in the next cell. Keep the names, the argument order and the
launch rule above: the autograder imports your code and launches `{kernel}` itself, on its own
arrays.""",
    DEVICE_FUNCTION: """\
Write the device function `{kernel}` in the next cell. Keep its name and its arguments: the
autograder imports your code and calls `{kernel}` from a kernel of its own, which it launches
itself.""",
    FUNCTIONS: """\
Write the {count} functions in the next cell. Keep the names and the arguments above: the
autograder imports your code and calls each function itself, with its own arguments.""",
}

PUBLIC_TESTS_MD = {
    KERNEL: """
## Public tests

The next cell (read-only) tests your notebook as saved, as the autograder does (save it first):
it launches your kernel on {cases}, in a separate process with a time limit (a kernel that never
ends is reported as a timeout, and the cell does not hang), and prints for each size whether the
result is correct, or the first wrong element. It also prints the concept test, read off your
kernel compiled for a GPU, and what the diagnostics found (barriers some threads never reach,
shared-memory races, accesses out of bounds). These sizes are graded too: the autograder runs
them again, on fresh random inputs, with the hidden ones.
""",
    DEVICE_FUNCTION: """
## Public tests

The next cell (read-only) tests your notebook as saved, as the autograder does (save it first):
it calls your device function from a kernel of its own, on {cases}, in a separate process with a
time limit (a barrier that never opens is reported as a timeout, and the cell does not hang), and
prints whether the result is correct, or the first wrong element, and the concept test, read off
your code compiled for a GPU. {these} graded too: the autograder runs {them} again, on fresh
random inputs, with the hidden ones.
""",
    FUNCTIONS: """
## Public tests

The next cell (read-only) tests your notebook as saved, as the autograder does (save it first):
it calls your functions on {cases}, in a separate process with a time limit, and compares each
value with the instructor's. {these} graded too: the autograder runs {them} again with the
hidden ones.
""",
}

#: The public-test cell: the same for every exercise (``autograder.nbgrader.public``).
PUBLIC_CELL = """
{marker}: public tests (read-only). They run your {what} in a separate process.
from autograder.nbgrader.public import run_public_tests

run_public_tests("{exercise}")
"""

#: Appended to every public-test text: what a failure does (``autograder.nbgrader.public``).
PUBLIC_FAILS = """
When a public test{concept} fails, the report is the cell's error (shown in red, its
last line counting the public tests that passed: `1 of {n} public tests passed. ...`), and
nbgrader's **Validate** button says your notebook fails and prints the same report. A test
skipped because it needs a GPU is not a failure.
"""

#: Appended to the public-test text of an exercise that needs a GPU.
PUBLIC_NEEDS_GPU = """
The test needs a GPU: on the simulator it prints that it is skipped.
"""

HIDDEN_TESTS_MD = """
## Hidden tests

The cells below hold your grade. When your notebook is graded, the autograder takes your code
cells in order (its own test cells left out), runs your {what} on hidden {unit}{inputs} in a
separate process with a time limit, outside this notebook, and writes into each cell what passed
and what did not, with its points. Running these cells yourself does nothing.
"""

#: A hidden grade cell: only a comment, the same in the instructor's source and the students'
#: copy. The grading preprocessor (autograder.nbgrader.preprocessor.GradeWithAutograder) finds
#: it by its nbgrader grade_id (autograder.nbgrader.notebook.hidden_grade_id), not by its text.
HIDDEN_CELL = """
{marker}: {what} ({points:g} points).
# Graded outside this notebook; the result is written here when your notebook is graded.
"""

HIDDEN_WHAT = {
    "correctness": "hidden correctness tests, {count}",
    "concept": "concept test, {concept}",
    "timing": "timing test against the instructor's kernel (GPU only)",
}

NUMBER_WORDS = {1: "one", 2: "two", 3: "three"}


def notebook_file(name: str) -> str:
    """The file name of exercise ``name``'s notebook in its assignment folder:
    ``"<name>.ipynb"``."""
    return f"{name}.ipynb"


def task_cells(name: str) -> list[str]:
    """The markdown texts of exercise ``name``'s ``notebook.py`` (see the module docstring), in
    order; the first is the task.

    Raises :class:`AuthoringError` when the file is missing, holds a code cell or no cell, or
    its first cell has no ``# `` title or no ``## Your task`` section, and
    :class:`autograder.exercises.UnknownExercise` for an unknown ``name``.
    """
    import jupytext  # imported late: only building notebooks needs it

    path = exercises.folder(name) / exercises.NOTEBOOK
    if not path.is_file():
        raise AuthoringError(f"{path}: missing; every exercise folder needs the notebook's text "
                             "(jupytext percent format, see autograder.nbgrader.authoring)")
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise AuthoringError(f"{path}: cannot read the notebook's text ({exc.strerror or exc})"
                             ) from None
    nb = jupytext.reads(text, fmt="py:percent")
    cells = [c for c in nb.cells if c.source.strip()]  # blank lines around cells make none
    code = [c for c in cells if c.cell_type != "markdown"]
    if code:
        first = code[0].source.strip().splitlines()[0]
        raise AuthoringError(f"{path}: only '# %% [markdown]' cells belong here (the setup, "
                             f"solution and test cells are generated); found a {code[0].cell_type}"
                             f" cell {first[:60]!r}")
    if not cells:
        raise AuthoringError(f"{path}: no '# %% [markdown]' cell (the first one is the task)")
    task = cells[0].source
    if not task.startswith("# "):
        raise AuthoringError(f"{path}: the task cell must start with a '# ' title")
    if "\n## Your task\n" not in task:
        raise AuthoringError(f"{path}: the task cell has no '## Your task' section")
    return [c.source.strip("\n") for c in cells]


def _shape(ex: Exercise) -> str:
    """What the student writes for ``ex``: :data:`KERNEL`, :data:`DEVICE_FUNCTION` or
    :data:`FUNCTIONS`."""
    if ex.contract.functions:
        return FUNCTIONS
    return DEVICE_FUNCTION if ex.contract.device_function else KERNEL


def _unit(ex: Exercise) -> str:
    """What one correctness test of ``ex`` is called in the text: sizes of a kernel's arrays, or
    cases."""
    return "sizes" if _shape(ex) == KERNEL else "cases"


def _count(n: int, plural: str) -> str:
    """``n`` and the noun (``"2 sizes"``, ``"1 size"``, ``"1 hidden one"``)."""
    return f"{n} {plural if n != 1 else plural[:-1]}"


def _public(ex: Exercise) -> list:
    """The public cases of ``ex``, in order."""
    return [c for c in ex.cases if c.visibility == "public"]


def _grading_md(ex: Exercise, written: Sequence[float] = ()) -> str:
    """The "How it is graded" section: a row per part with its points and what it tests;
    ``written``: the points of each written-answer cell (graded by hand in nbgrader's
    formgrader) of a notebook authored as one notebook (:mod:`autograder.nbgrader.one_notebook`),
    a row of their own."""
    parts = nbb.part_max_points(ex)
    unit = _unit(ex)
    public = _public(ex)
    each = {c.points for c in ex.cases}
    if len(each) != 1:
        raise AuthoringError(f"{ex.name}: the grading table says 'N points each', but its cases "
                             f"carry {sorted(each)} points")
    (each,) = each
    if ex.needs_gpu:
        where = " (all of them on a GPU only)"
    else:
        gpu_only = sum(1 for c in ex.cases if not c.sim)
        where = f" ({gpu_only} of them on a GPU only)" if gpu_only else ""
    rows = [
        f"| correctness | {parts['correctness']:g} | {_count(len(ex.cases), unit)}, "
        f"{each:g} points each: the {_count(len(public), 'public ' + unit)} below and "
        f"{_count(len(ex.cases) - len(public), 'hidden ones')}{where} |",
    ]
    if "concept" in parts:
        rows.append(f"| concept | {parts['concept']:g} | {ex.concept.description}; read off "
                    f"your {_shape(ex)} compiled for a GPU |")
    if "timing" in parts:
        t = ex.timing
        size = ", ".join(f"{k} = {v}" for k, v in t.params.items())
        constants = " and ".join(f"`{c.name}`" for c in ex.contract.constants)
        rows.append(f"| timing | {parts['timing']:g} | on a GPU, at {size}: your kernel's time "
                    f"against the instructor's at your {constants}; full points up to "
                    f"{t.full_ratio:g}×, none above {t.zero_ratio:g}×; only for a kernel that "
                    f"passes every {unit[:-1]} |")
    total = sum(parts.values())
    cells = f"{NUMBER_WORDS[len(parts)]} hidden-test cell{'s' if len(parts) > 1 else ''}"
    where = f"{total:g} points, in {cells} at the end of this notebook"
    if written:
        rows.append(f"| written answers | {sum(written):g} | {_count(len(written), 'questions')}"
                    " of this notebook, answered in words and graded by hand by the course "
                    "staff |")
        where = (f"{total + sum(written):g} points: {total:g} in {cells} at the end of this "
                 f"notebook, {sum(written):g} for your written answers")
    return ("## How it is graded\n\n"
            f"{where}:\n\n"
            "| part | points | what |\n|---|---|---|\n" + "\n".join(rows) + "\n\n"
            "A test ends as passed, failed, error (your code raised), timeout or skipped, with "
            f"a message that names the {unit[:-1]}, the first wrong element, or the line of "
            "your code.")


def _cases_words(ex: Exercise) -> str:
    """The public cases in words: a kernel's sizes by their parameters, other cases by label."""
    public = _public(ex)
    if _shape(ex) == KERNEL:
        return " and ".join(", ".join(f"{k} {v}" for k, v in c.params.items()) for c in public)
    if len(public) == 1:
        return f"the public case ({public[0].label})"
    return f"the {len(public)} public cases ({'; '.join(c.label for c in public)})"


def _public_md(ex: Exercise) -> str:
    """The text before the public-test cell: what it runs, that those cases count too, and that
    a failure ends the cell with an error."""
    single = len(_public(ex)) == 1
    text = PUBLIC_TESTS_MD[_shape(ex)].format(
        cases=_cases_words(ex), these="This case is" if single else "These cases are",
        them="it" if single else "them")
    fails = PUBLIC_FAILS.format(concept=" or the concept test" if ex.concept else "",
                                n=len(_public(ex)))
    return text + fails + (PUBLIC_NEEDS_GPU if ex.needs_gpu else "")


def _your_code_md(ex: Exercise) -> str:
    """The text before the solution cell: what to write there, and what of the notebook's
    code the autograder runs (imports, constants, function definitions; the rest is skipped
    and listed in the report: :func:`autograder.grading.steps.skipped_for_student`)."""
    shape = _shape(ex)
    intro = YOUR_CODE_INTRO[shape].format(
        constants=", ".join(f"`{c.name}`" for c in ex.contract.constants),
        kernel=ex.contract.kernel, count=len(ex.contract.functions))
    modules = ("`numpy` and `math`" if shape == FUNCTIONS
               else "`numba`, `numpy` and `math`")
    return YOUR_CODE.format(what=shape, intro=intro, modules=modules,
                            its="their" if shape == FUNCTIONS else "its")


def _solution_path(ex: Exercise) -> Path:
    """The instructor solution of ``ex``; a :class:`GraderSetupError` naming
    ``$KERNELGRADE_SOLUTIONS`` when this kernelgrade has none."""
    try:
        return exercises.solution_path(ex)
    except FileNotFoundError:
        raise GraderSetupError(
            f"the source notebook of {ex.name} needs its instructor solution, and this "
            f"kernelgrade has none (an installed one carries no solution.py): set "
            f"{exercises.SOLUTIONS_ENV} to a folder holding {ex.name}.py or "
            f"{ex.name}/solution.py") from None


def _solution_cell_text(ex: Exercise) -> str:
    """The instructor solution without its module docstring, each function the student writes
    (the kernel, the device function, or every function of the contract) with its body between
    solution markers; imports, constants and ``def`` lines stay as the students' skeleton."""
    text = nbb.strip_module_docstring(_solution_path(ex).read_text(encoding="utf-8"))
    for function in ex.contract.functions or (ex.contract.kernel,):
        text = nbb.mark_solution(text, function)
    return text


def build_source_notebook(name: str) -> nbformat.NotebookNode:
    """The nbgrader source notebook of exercise ``name``, built from its folder.

    Cells, in order: the task (``notebook.py``'s first cell and "How it is graded"), the
    notebook's other markdown cells, the simulator text (or why the exercise needs a GPU) and a
    setup cell (not for plain functions), what to write, the solution cell, the public-test text
    and cell (0 points), the hidden-test text and one hidden grade cell per part that carries
    points (grade_id :func:`autograder.nbgrader.notebook.hidden_grade_id`). Validated against
    the nbformat schema.

    An exercise authored as one notebook (``solutions/<name>.ipynb``) is built from that
    notebook instead: :func:`autograder.nbgrader.one_notebook.build_source_notebook`.

    Raises :class:`autograder.exercises.UnknownExercise`, :class:`AuthoringError` (a bad or
    missing ``notebook.py``, a solution without the contract's functions) and
    :class:`autograder.errors.GraderSetupError` when no instructor solution is found (an
    installed kernelgrade without ``$KERNELGRADE_SOLUTIONS``).
    """
    from . import one_notebook  # imported late: it builds on this module

    if one_notebook.notebook_path(name) is not None:  # authored as one notebook
        return one_notebook.build_source_notebook(name)
    ex = exercises.get(name)
    task, *extra = task_cells(name)
    shape = _shape(ex)
    try:
        solution_text = _solution_cell_text(ex)
    except (ValueError, SyntaxError) as exc:
        raise AuthoringError(f"{name}: cannot make the solution cell from "
                             f"{_solution_path(ex)}: {exc}") from None
    cells = [nbb.markdown("task", task + "\n\n" + _grading_md(ex))]
    cells += [nbb.markdown(f"text-{i}", text) for i, text in enumerate(extra, 1)]
    cells += setup_cells(ex)
    cells += [
        nbb.markdown(f"your-{shape.replace(' ', '-')}", _your_code_md(ex)),
        nbb.solution(f"{name}-solution", solution_text),
    ]
    return nbb.notebook(cells + grading_cells(ex))


def setup_cells(ex: Exercise) -> list:
    """The simulator text (or why ``ex`` needs a GPU) and the setup cell; none for plain
    functions."""
    if _shape(ex) == FUNCTIONS:
        return []
    skipped = "the largest sizes and the timing test are" if ex.timing else "the largest sizes are"
    return [nbb.markdown("simulator", NEEDS_GPU if ex.needs_gpu
                         else SIMULATOR.format(skipped=skipped)),
            nbb.code(SETUP, "setup")]


def grading_cells(ex: Exercise) -> list:
    """The cells every source notebook of ``ex`` ends with: the public-test text and cell
    (0 points), the hidden-test text and one hidden grade cell per part that carries points
    (grade_id :func:`autograder.nbgrader.notebook.hidden_grade_id`). Raises
    :class:`AuthoringError` for a concept without a summary."""
    name, shape = ex.name, _shape(ex)
    cells = [
        nbb.markdown("public-tests-text", _public_md(ex)),
        nbb.tests(f"{name}-public-tests", PUBLIC_CELL.format(
            marker=TEST_CELL_MARKER, what=shape, exercise=name), 0.0),
        nbb.markdown("hidden-tests-text", HIDDEN_TESTS_MD.format(
            what=shape, unit=_unit(ex),
            inputs="" if shape == FUNCTIONS else " and fresh random inputs")),
    ]
    for kind, points in nbb.part_max_points(ex).items():
        if kind == "concept" and not ex.concept.summary:
            raise AuthoringError(f"{name}: its Concept has no summary (the concept grade cell's "
                                 "title, a few words)")
        what = HIDDEN_WHAT[kind].format(count=_count(len(ex.cases), _unit(ex)),
                                        concept=ex.concept.summary if ex.concept else "")
        cells.append(nbb.tests(nbb.hidden_grade_id(name, kind), HIDDEN_CELL.format(
            marker=TEST_CELL_MARKER, what=what, points=points), points))
    return cells
