"""The nbgrader source notebooks in assignments/: solution, points, hidden tests, task text."""

from __future__ import annotations

import ast
import re

import pytest
from .nbhelpers import (ASSIGNMENTS, ROOT, expected_parts, load_script, split_solution,
                        written_names)

from autograder import exercises
from autograder.nbgrader import notebook as nbb
from autograder.nbgrader.cells import TEST_CELL_MARKER
from autograder.submission import load_source

PARAMS = pytest.mark.parametrize("assignment", sorted(ASSIGNMENTS))
PUBLIC_CALL = re.compile(r'run_public_tests\("(\w+)"\)')
#: what each task text must say: the lesson it comes from (and grid_barrier's goal rule)
TASK_PHRASES = {"tiled_matmul": ("Day 10: Shared Memory Fundamentals",),
                "matmul_any_size": ("Lectures 2.7 and 2.8",),
                "block_scan": ("Day 11: Thread Synchronization",),
                "block_sum": ("Lecture 2.2", "control divergence"),
                "transpose": ("bank conflicts",),
                "grid_barrier": ("article on inter-block synchronization",
                                 "goal = j * gridDim.x"),
                "occupancy": ("Lecture 2.1", '"Shared Memory and Threading"'),
                "grid_barrier_lockfree": ("article on inter-block synchronization",
                                          "Xiao & Feng", "two bugs", "block 1",
                                          "blockDim.x >= gridDim.x", "goal = j")}


def source_nb(assignment):
    exercise, nb_name = ASSIGNMENTS[assignment]
    return exercises.get(exercise), nbb.read(ROOT / "assignments" / assignment / nb_name)


def test_committed_notebooks_match_their_generator():
    assert load_script("assignments/make_notebooks.py").main(["--check"]) == 0


@PARAMS
def test_solution_cell_is_the_instructor_solution(assignment):
    ex, nb = source_nb(assignment)
    (cell,) = nbb.cells_with(nb, solution=True)
    solution = (ROOT / "solutions" / ex.solution).read_text(encoding="utf-8")
    assert nbb.unmark(cell.source).rstrip("\n") == nbb.strip_module_docstring(solution).rstrip("\n")
    # the whole body of each function the student writes is solution: the students' copy keeps
    # only the scaffolding (imports, constants, def lines)
    scaffolding, regions = split_solution(cell.source)
    assert len(regions) == len(written_names(ex))
    for name in written_names(ex):
        assert f"def {name}(" in scaffolding
    for constant in ex.contract.constants:
        assert f"\n{constant.name} = " in scaffolding
    body = "".join(regions)
    assert "def " not in body
    concept = ex.concept
    if concept:  # what the concept test looks for is the student's to write
        # (a solution may use more than the concept test asks for: the lock-free barrier's
        # atomic reads are not counted)
        assert "cuda.shared.array" in body or not concept.min_shared_bytes
        assert "cuda.syncthreads()" in body or not concept.min_barriers
        assert "cuda.atomic." in body or not concept.min_atomics
        assert "cuda.threadfence()" in body or not concept.min_fences


@PARAMS
def test_grade_cells_carry_the_exercise_points_per_part(assignment):
    ex, nb = source_nb(assignment)
    expected = expected_parts(ex)
    got = {}
    for cell in nbb.cells_with(nb, grade=True):
        parsed = nbb.parse_hidden_grade_id(cell.metadata.nbgrader.grade_id)
        if not parsed:
            continue
        name, kind = parsed
        assert name == ex.name
        got[kind.value] = cell.metadata.nbgrader.points
    assert got == expected
    assert sum(got.values()) == ex.max_score


@PARAMS
def test_hidden_tests_are_hidden_and_public_tests_are_read_only(assignment):
    ex, nb = source_nb(assignment)
    graded = nbb.cells_with(nb, grade=True)
    hidden = [c for c in graded if nbb.parse_hidden_grade_id(c.metadata.nbgrader.grade_id)]
    public = [c for c in graded if c not in hidden]
    assert len(hidden) == len(expected_parts(ex)) and len(public) == 1
    for cell in hidden:
        # a marker comment only, the same in the students' copy: no module to patch, no hidden
        # size; the grading preprocessor finds the cell by its grade_id
        assert cell.metadata.nbgrader.locked and not cell.metadata.nbgrader.solution
        assert cell.source.startswith(TEST_CELL_MARKER)
        assert all(ln.startswith("# ") for ln in cell.source.splitlines()), cell.source
        assert "autograder." not in cell.source and nbb.BEGIN_HIDDEN not in cell.source
    (cell,) = public
    meta = cell.metadata.nbgrader
    assert meta.points == 0 and meta.locked and TEST_CELL_MARKER in cell.source
    assert nbb.BEGIN_HIDDEN not in cell.source
    # it hands the notebook's code to the grader (child processes with time limits): the cell
    # itself never launches or calls the student's code
    call = PUBLIC_CALL.fullmatch(cell.source.strip().splitlines()[-1])
    assert call and call[1] == ex.name
    assert "from autograder.nbgrader.public import run_public_tests" in cell.source
    for name in written_names(ex):
        assert f"{name}[" not in cell.source and f"{name}(" not in cell.source, name


@PARAMS
def test_task_text_names_the_lesson_and_the_exact_launch_rule(assignment):
    ex, nb = source_nb(assignment)
    task = nb.cells[0].source
    assert nb.cells[0].metadata.nbgrader.locked
    for phrase in TASK_PHRASES[ex.name]:
        assert phrase in task, phrase
    for expr in set(ex.contract.grid) | set(ex.contract.block):
        assert expr in task, expr
    # every function of the solution, with its exact arguments (a line break in the text aside)
    flat = " ".join(task.split())
    tree = ast.parse((ROOT / "solutions" / ex.solution).read_text(encoding="utf-8"))
    for fn in (n for n in tree.body if isinstance(n, ast.FunctionDef)):
        assert f"{fn.name}({ast.unparse(fn.args)})" in flat, fn.name
    if ex.contract.device_function:
        assert "@cuda.jit(device=True)" in task
    for c in ex.contract.constants:
        assert f"`{c.name}" in task, c.name
        assert (f"{c.low} to {c.high}" if c.low < c.high else f"`{c.name} = {c.low}`") in task
        if c.power_of_two:
            assert f"power of two from {c.low} to {c.high}" in task
    # the simulator is documented (or why the exercise needs a GPU), and the setup cell keeps
    # Numba's normal import; an exercise of plain functions needs neither
    text = "\n".join(c.source for c in nb.cells)
    setup = [c for c in nb.cells if c.cell_type == "code" and "nbgrader" not in c.metadata]
    if ex.contract.functions:
        assert setup == [] and "numba" not in text.lower()
        return
    if ex.needs_gpu:
        assert "needs a GPU" in text and "one after another" in text
    else:
        assert "NUMBA_ENABLE_CUDASIM=1 jupyter lab" in text
    (setup,) = setup
    assert "from numba import" in setup.source
    assert '\nos.environ["NUMBA_ENABLE_CUDASIM"]' not in setup.source  # commented out


@PARAMS
def test_graded_source_of_the_notebook_leaves_test_cells_out(assignment):
    ex, _ = source_nb(assignment)
    src = load_source(ROOT / "assignments" / assignment / ASSIGNMENTS[assignment][1])
    for name in written_names(ex):
        assert f"def {name}(" in src.text
    assert "grade_this_notebook" not in src.text
    assert "run_public_tests" not in src.text  # the public tests
    compile(src.text, "nb", "exec")
