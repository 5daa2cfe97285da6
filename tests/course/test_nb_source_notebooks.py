"""The nbgrader source notebooks in assignments/: solution, points, hidden tests, task text."""

from __future__ import annotations

import re

import pytest
from .nbhelpers import ASSIGNMENTS, ROOT, load_script

from autograder import exercises
from autograder.nbgrader import notebook as nbb
from autograder.nbgrader.cells import TEST_CELL_MARKER
from autograder.submission import load_source

PARAMS = pytest.mark.parametrize("assignment", sorted(ASSIGNMENTS))
CALL = re.compile(r'grade_this_notebook\("(\w+)", "(\w+)"\)')


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
    # the whole kernel body is the solution: the students' copy keeps only the scaffolding
    body = cell.source.split(nbb.BEGIN_SOLUTION)[1].split(nbb.END_SOLUTION)[0]
    assert "cuda.syncthreads()" in body and "cuda.shared.array" in body
    before = cell.source.split(nbb.BEGIN_SOLUTION)[0]
    assert f"def {ex.contract.kernel}(A, B, C):" in before and "TILE_WIDTH = " in before


@PARAMS
def test_grade_cells_carry_the_exercise_points_per_part(assignment):
    ex, nb = source_nb(assignment)
    expected = {"correctness": sum(c.points for c in ex.cases),
                "concept": ex.concept.points, "timing": ex.timing.points}
    got = {}
    for cell in nbb.cells_with(nb, grade=True):
        calls = CALL.findall(cell.source)
        if not calls:
            continue
        ((name, kind),) = calls
        assert name == ex.name
        got[kind] = cell.metadata.nbgrader.points
    assert got == expected
    assert sum(got.values()) == ex.max_score


@PARAMS
def test_hidden_tests_are_hidden_and_public_tests_are_read_only(assignment):
    ex, nb = source_nb(assignment)
    graded = nbb.cells_with(nb, grade=True)
    hidden = [c for c in graded if "grade_this_notebook" in c.source]
    public = [c for c in graded if c not in hidden]
    assert len(hidden) == 3 and len(public) == 1
    for cell in hidden:
        assert cell.metadata.nbgrader.locked and not cell.metadata.nbgrader.solution
        inside = cell.source.split(nbb.BEGIN_HIDDEN)[1].split(nbb.END_HIDDEN)[0]
        assert "grade_this_notebook" in inside and "import" in inside
        # the call is the cell's last line, so its value is the cell's output (partial credit)
        assert CALL.fullmatch(cell.source.split(nbb.END_HIDDEN)[0].strip().splitlines()[-1])
    (cell,) = public
    meta = cell.metadata.nbgrader
    assert meta.points == 0 and meta.locked and TEST_CELL_MARKER in cell.source
    assert nbb.BEGIN_HIDDEN not in cell.source
    assert f"{ex.contract.kernel}[" in cell.source  # it launches the student's kernel


@PARAMS
def test_task_text_names_the_lesson_and_the_exact_launch_rule(assignment):
    ex, nb = source_nb(assignment)
    task = nb.cells[0].source
    assert nb.cells[0].metadata.nbgrader.locked
    lesson = {"tiled_matmul": 'Day 10: Shared Memory Fundamentals',
              "matmul_any_size": "Lectures 2.7 and 2.8"}[ex.name]
    assert lesson in task
    for expr in set(ex.contract.grid) | set(ex.contract.block):
        assert expr in task, expr
    assert f"{ex.contract.kernel}(A, B, C)" in task
    assert "TILE_WIDTH" in task and "1 to 32" in task
    # the simulator is documented, and the setup cell keeps Numba's normal import
    text = "\n".join(c.source for c in nb.cells)
    assert "NUMBA_ENABLE_CUDASIM=1 jupyter lab" in text
    setup = next(c for c in nb.cells if c.cell_type == "code")
    assert "from numba import" in setup.source
    assert '\nos.environ["NUMBA_ENABLE_CUDASIM"]' not in setup.source  # commented out


@PARAMS
def test_graded_source_of_the_notebook_leaves_test_cells_out(assignment):
    ex, _ = source_nb(assignment)
    src = load_source(ROOT / "assignments" / assignment / ASSIGNMENTS[assignment][1])
    assert f"def {ex.contract.kernel}(" in src.text
    assert "grade_this_notebook" not in src.text
    assert f"def check_{ex.name}" not in src.text  # the public tests
    compile(src.text, "nb", "exec")
