"""The nbgrader source notebooks, built from each exercise folder (``notebook.py``, the definition
and the instructor solution): solution cell, points, hidden tests, task text. Every registered
exercise is checked; an exercise added as a folder is checked without touching this file."""

from __future__ import annotations

import ast
import re

import nbformat
import pytest
from .nbhelpers import NAMES, expected_parts, source_notebook, split_solution, written_names

from autograder import exercises
from autograder.errors import GraderSetupError
from autograder.nbgrader import authoring
from autograder.nbgrader import notebook as nbb
from autograder.nbgrader.authoring import AuthoringError, build_source_notebook, task_cells
from autograder.nbgrader.cells import TEST_CELL_MARKER
from autograder.source.submission import load_source

PARAMS = pytest.mark.parametrize("name", NAMES)
PUBLIC_CALL = re.compile(r'run_public_tests\("(\w+)"\)')


def source_nb(name):
    return exercises.get(name), source_notebook(name)


def solution_text(ex) -> str:
    return exercises.solution_path(ex).read_text(encoding="utf-8")


# --- every folder's notebook builds --------------------------------------------------------------

@PARAMS
def test_every_exercise_folder_builds_its_source_notebook(name):
    """A folder without a notebook.py, with one not in the format, or whose solution lacks the
    contract's functions fails here, naming the exercise."""
    ex = exercises.get(name)
    assert (exercises.folder(name) / exercises.NOTEBOOK).is_file(), \
        f"{name}: no notebook.py (see autograder/nbgrader/authoring.py for its format)"
    nb = build_source_notebook(name)
    nbformat.validate(nb)
    ids = [c.get("id") for c in nb.cells]
    assert len(ids) == len(set(ids)), ids
    assert ex.assignment == f"{ex.number:02d}_{name}" and ex.number > 0
    if ex.concept and ex.concept.points:
        assert ex.concept.summary, f"{name}: Concept.summary names the concept grade cell"


def test_course_order_and_assignment_names_come_from_the_definitions():
    order = [ex.assignment for ex in exercises.all_exercises()]
    assert sorted(ex.name for ex in exercises.all_exercises()) == NAMES
    assert [ex.number for ex in exercises.all_exercises()] == sorted(
        ex.number for ex in exercises.all_exercises())
    assert len(set(a[:2] for a in order)) == len(order), f"two exercises share a number: {order}"


def _fake_folder(monkeypatch, tmp_path, text: str | None):
    """tiled_matmul with its folder's notebook.py replaced by ``text`` (None: no file)."""
    real = exercises.folder
    (tmp_path / "sol").mkdir()
    (tmp_path / "sol" / "tiled_matmul.py").write_text(
        exercises.solution_path("tiled_matmul").read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.setenv(exercises.SOLUTIONS_ENV, str(tmp_path / "sol"))
    if text is not None:
        (tmp_path / exercises.NOTEBOOK).write_text(text, encoding="utf-8")
    monkeypatch.setattr(exercises, "folder",
                        lambda name: tmp_path if name == "tiled_matmul" else real(name))


@pytest.mark.parametrize("text, problem", [
    (None, "missing; every exercise folder needs the notebook's text"),
    ("", "no '# %% [markdown]' cell"),
    ("# %% [markdown]\n# # Title\n#\n# ## Your task\n#\n# * x\n\n# %%\nTILE_WIDTH = 16\n",
     "only '# %% [markdown]' cells belong here"),
    ("# %% [markdown]\n# Title without a heading\n#\n# ## Your task\n", "'# ' title"),
    ("# %% [markdown]\n# # Title\n#\n# the task, but no section for it\n", "'## Your task'"),
])
def test_a_bad_notebook_py_is_an_authoring_error_naming_the_file(monkeypatch, tmp_path, text,
                                                                 problem):
    _fake_folder(monkeypatch, tmp_path, text)
    with pytest.raises(AuthoringError) as caught:
        build_source_notebook("tiled_matmul")
    assert str(tmp_path / exercises.NOTEBOOK) in str(caught.value)
    assert problem in str(caught.value)


def test_extra_markdown_cells_follow_the_task(monkeypatch, tmp_path):
    _fake_folder(monkeypatch, tmp_path, "\n\n# %% [markdown]\n# # Title\n#\n# ## Your task\n#\n"
                                        "# * write it\n\n# %% [markdown]\n# A hint.\n\n\n")
    assert task_cells("tiled_matmul") == ["# Title\n\n## Your task\n\n* write it", "A hint."]
    nb = build_source_notebook("tiled_matmul")
    assert nb.cells[0].source.startswith("# Title\n\n## Your task\n\n* write it\n\n"
                                         "## How it is graded")
    assert nb.cells[1].source == "A hint." and nb.cells[1].metadata.nbgrader.locked
    assert "Numba's CUDA simulator" in nb.cells[2].source


def test_without_solutions_the_notebook_needs_kernelgrade_solutions(monkeypatch, tmp_path):
    """An installed kernelgrade carries no solution.py: the notebook is built from
    $KERNELGRADE_SOLUTIONS, and without it the error names the variable (exit 2 in the CLI)."""
    real = exercises.solution_path("block_scan").read_text(encoding="utf-8")
    expected = nbb.dumps(build_source_notebook("block_scan"))
    monkeypatch.setattr(exercises, "SOLUTIONS_FOLDER", "absent")
    monkeypatch.delenv(exercises.SOLUTIONS_ENV, raising=False)
    with pytest.raises(GraderSetupError, match=exercises.SOLUTIONS_ENV) as caught:
        build_source_notebook("block_scan")
    assert "\n" not in str(caught.value) and "block_scan" in str(caught.value)
    (tmp_path / "block_scan.py").write_text(real, encoding="utf-8")
    monkeypatch.setenv(exercises.SOLUTIONS_ENV, str(tmp_path))
    assert nbb.dumps(build_source_notebook("block_scan")) == expected


# --- what each notebook holds ------------------------------------------------------------------

@PARAMS
def test_solution_cell_is_the_instructor_solution(name):
    ex, nb = source_nb(name)
    (cell,) = nbb.cells_with(nb, solution=True)
    solution = solution_text(ex)
    assert nbb.unmark(cell.source).rstrip("\n") == nbb.strip_module_docstring(solution).rstrip("\n")
    # the whole body of each function the student writes is solution: the students' copy keeps
    # only the scaffolding (imports, constants, def lines)
    scaffolding, regions = split_solution(cell.source)
    assert len(regions) == len(written_names(ex))
    for fn in written_names(ex):
        assert f"def {fn}(" in scaffolding
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
def test_grade_cells_carry_the_exercise_points_per_part(name):
    ex, nb = source_nb(name)
    expected = expected_parts(ex)
    got = {}
    for cell in nbb.cells_with(nb, grade=True):
        parsed = nbb.parse_hidden_grade_id(cell.metadata.nbgrader.grade_id)
        if not parsed:
            continue
        owner, kind = parsed
        assert owner == ex.name
        got[kind.value] = cell.metadata.nbgrader.points
        if kind.value == "concept":  # titled with the definition's summary
            assert f"concept test, {ex.concept.summary} (" in cell.source
    assert got == expected
    assert sum(got.values()) == ex.max_score


@PARAMS
def test_hidden_tests_are_hidden_and_public_tests_are_read_only(name):
    ex, nb = source_nb(name)
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
    for fn in written_names(ex):
        assert f"{fn}[" not in cell.source and f"{fn}(" not in cell.source, fn


@PARAMS
def test_task_text_states_the_contract(name):
    """The task cell (notebook.py's first cell) names the exercise, its lesson, every function
    with its exact arguments, each constant with its range and the exact launch rule."""
    ex, nb = source_nb(name)
    task = nb.cells[0].source
    assert nb.cells[0].metadata.nbgrader.locked
    assert task.startswith(f"# {ex.title}"), task.splitlines()[0]
    lesson = ex.source.split(" (")[0]  # 'lesson "Day 10: ..."', 'lectures 2.7 and 2.8'
    assert lesson.lower() in " ".join(task.lower().split()), lesson
    assert "\n## Your task\n" in task and "\n## How it is graded\n" in task
    for expr in set(ex.contract.grid) | set(ex.contract.block):
        assert expr in task, expr
    # every function of the solution, with its exact arguments (a line break in the text aside)
    flat = " ".join(task.split())
    tree = ast.parse(solution_text(ex))
    for fn in (n for n in tree.body if isinstance(n, ast.FunctionDef)):
        assert f"{fn.name}({ast.unparse(fn.args)})" in flat, fn.name
    for fn in written_names(ex):
        assert f"`{fn}(" in flat or f"def {fn}(" in flat, fn
    if ex.contract.device_function:
        assert "@cuda.jit(device=True)" in task
    elif ex.contract.kernel:
        assert "@cuda.jit" in task
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
def test_graded_source_of_the_notebook_leaves_test_cells_out(name, tmp_path):
    ex, nb = source_nb(name)
    path = tmp_path / authoring.notebook_file(name)
    path.write_text(nbb.dumps(nb), encoding="utf-8")
    src = load_source(path)
    for fn in written_names(ex):
        assert f"def {fn}(" in src.text
    assert "grade_this_notebook" not in src.text
    assert "run_public_tests" not in src.text  # the public tests
    compile(src.text, "nb", "exec")
