"""The public-test cells (autograder.nbgrader.public): the public cases only, graded in child
processes with time limits, reported to the student without hidden sizes, seed, points or timing.

Grades on ``KERNELGRADE_TEST_DEVICE`` (default ``sim``); the notebook tests run a real Jupyter
kernel (nbclient), as test_nb_run does.
"""

from __future__ import annotations

import re

import nbformat
import pytest
from nbclient import NotebookClient
from .nbhelpers import ASSIGNMENTS, ROOT, TEST_DEVICE, kernel_env, source_notebook

import autograder.grader
from autograder import exercises
from autograder.grader import grade
from autograder.nbgrader import notebook as nbb
from autograder.nbgrader.cells import TEST_CELL_MARKER
from autograder.nbgrader.public import public_result, report, run_public_tests
from autograder.wire.results import Kind, Status
from autograder.sandbox.limits import Limits

SETUP = "import numpy as np\nfrom numba import cuda"
#: a kernel that never returns: every thread spins, storing (a loop without a side effect may
#: be compiled away on a GPU)
SPIN = """from numba import cuda
TILE_WIDTH = 16


@cuda.jit
def tiled_matmul(A, B, C):
    i = 0
    while i >= 0:
        C[0, 0] = i
        i = (i + 1) % 7
"""
#: short limits for the spinning kernel, so the test costs seconds, not the default 30 s
SHORT = Limits(import_timeout=30.0, case_timeout=8.0, total_timeout=60.0)
#: a mutant per exercise whose public cases fail, and the words its first failure shows
MUTANTS = {"tiled_matmul": ("transposed_tile_index.py", "first at C["),
           "block_scan": ("off_by_one_stride.py", "first at out["),
           "occupancy": ("one_tile_only.py", "tile_shared_bytes(tile_width=16) returned")}


def code(path) -> list[str]:
    """The executed cells of a notebook whose code cell is the file at ``path``."""
    return [SETUP, (ROOT / path).read_text(encoding="utf-8")]


def solution(exercise: str) -> list[str]:
    """The executed cells of a notebook whose code cell is ``exercise``'s instructor solution."""
    return code(exercises.solution_path(exercise))


def hidden_marks(ex) -> list[str]:
    """What would show a hidden case: its label (sizes, for a kernel; unless a public case's
    label contains it) and, for plain functions, the call with its arguments."""
    public = [c.name.removeprefix("public: ") for c in ex.cases if c.visibility == "public"]
    marks = []
    for c in ex.cases:
        if c.visibility != "hidden":
            continue
        label = c.name.removeprefix("hidden: ")
        if not any(label in p for p in public):
            marks.append(label)
        if "call" in c.params:
            args = ", ".join(f"{k}={v}" for k, v in c.params["args"].items())
            marks.append(f"{c.params['call']}({args})")
    return marks


def assert_nothing_hidden(ex, text: str) -> None:
    for label in hidden_marks(ex):
        assert not re.search(rf"(?<![\w.]){re.escape(label)}(?![\w.])", text), (label, text)
    assert "seed" not in text and "timing" not in text and "points" not in text, text


def test_grade_with_visibility_public_grades_the_public_cases_only():
    ex = exercises.get("tiled_matmul")
    result = grade(exercises.solution_path(ex), "tiled_matmul", device=TEST_DEVICE,
                   visibility="public")
    correctness = [t for t in result.tests if t.kind is Kind.CORRECTNESS]
    assert [t.name for t in correctness] == [c.name for c in ex.cases if c.visibility == "public"]
    assert all(t.status is Status.PASSED for t in correctness)
    assert not [t for t in result.tests if t.kind is Kind.TIMING]
    assert [t.status for t in result.tests if t.kind is Kind.CONCEPT] == [Status.PASSED]


@pytest.mark.parametrize("exercise", ["tiled_matmul", "occupancy"])
def test_the_solution_passes_its_public_tests(exercise, capsys):
    ex = exercises.get(exercise)
    result = public_result(exercise, device=TEST_DEVICE, cells=solution(ex.name))
    n_public = sum(c.visibility == "public" for c in ex.cases)
    correctness = [t for t in result.tests if t.kind is Kind.CORRECTNESS]
    assert len(correctness) == n_public
    assert all(t.visibility == "public" and t.status is Status.PASSED for t in correctness)
    assert result.seed is None and not [t for t in result.tests if t.kind is Kind.TIMING]
    run_public_tests(exercise, device=TEST_DEVICE, cells=solution(ex.name))
    out = capsys.readouterr()
    assert out.err == ""
    assert f"{n_public} of {n_public} public tests passed." in out.out, out.out
    assert out.out.count("[ok] ") >= n_public and "FAILED" not in out.out
    assert_nothing_hidden(ex, out.out)


@pytest.mark.parametrize("exercise", sorted(MUTANTS))
def test_a_mutant_fails_with_its_message_and_no_hidden_case_shows(exercise, capsys):
    ex = exercises.get(exercise)
    mutant, words = MUTANTS[exercise]
    with pytest.raises(AssertionError, match=r"^\d+ of \d+ public tests (and the concept test )?"
                                             r"failed$"):
        run_public_tests(exercise, device=TEST_DEVICE,
                         cells=code(f"assignments/{exercise}/mutants/{mutant}"))
    out = capsys.readouterr().out  # the report is printed before the error
    assert "[FAILED] " in out and words in out, out
    assert re.search(r"\b\d+ of \d+ public tests passed\. Fix the failing ones first", out), out
    assert_nothing_hidden(ex, out)


def test_a_spinning_kernel_is_a_timeout_and_the_call_returns(capsys):
    result = public_result("tiled_matmul", device=TEST_DEVICE, cells=[SETUP, SPIN], limits=SHORT)
    first, second = [t for t in result.tests if t.kind is Kind.CORRECTNESS]
    assert first.status is Status.TIMEOUT and "did not finish in time" in first.message
    assert second.status is Status.TIMEOUT  # the child was stopped: the next case did not run
    text = report(result)
    assert "[TIMEOUT] width 16: the kernel did not finish in time" in text, text
    assert "0 of 2 public tests passed" in text


def test_an_exercise_that_needs_a_gpu_says_it_is_skipped_on_the_simulator(capsys):
    ex = exercises.get("grid_barrier")
    run_public_tests("grid_barrier", device="sim", cells=solution(ex.name))  # skipped: no error
    out = capsys.readouterr().out
    assert "[skipped] " in out and "needs a GPU" in out, out
    assert "The public tests need a GPU, so they were skipped here" in out
    assert_nothing_hidden(ex, out)


def test_occupancy_public_tests_need_no_installed_solution(monkeypatch, capsys):
    """A student's install has no solution: occupancy's public cases carry their expected
    values (issue 11)."""
    def missing(exercise):
        raise FileNotFoundError(exercise if isinstance(exercise, str) else exercise.name)

    cells = solution("occupancy")
    monkeypatch.setattr(autograder.exercises, "solution_path", missing)
    run_public_tests("occupancy", device="sim", cells=cells)
    out = capsys.readouterr()
    assert out.err == "" and "5 of 5 public tests passed" in out.out, out


# --- in a real notebook (nbclient) ---------------------------------------------------------


def execute(nb, cwd, timeout=300):
    """Run ``nb`` top to bottom in a fresh python3 kernel (errors recorded, not raised)."""
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3", allow_errors=True,
                            resources={"metadata": {"path": str(cwd)}})
    client.execute(env=kernel_env())
    return nb


def stdout(cell) -> str:
    return "".join(o.get("text", "") for o in cell.outputs if o.get("name") == "stdout")


def shown(cell) -> str:
    """What the public-test cell shows: its report, printed, or its error's text (the report,
    :class:`autograder.nbgrader.public.PublicTestsFailed`, wrapped), in single spaces."""
    return " ".join((stdout(cell) + " ".join(" ".join(o.traceback) for o in cell.outputs
                                             if o.output_type == "error")).split())


def errors(nb) -> list[str]:
    return [f"{o.ename}: {o.evalue}" for c in nb.cells if c.cell_type == "code"
            for o in c.outputs if o.output_type == "error"]


def up_to_public_tests(assignment: str):
    """The source notebook of ``assignment`` (the instructor solution in its solution cell)
    up to its public-test cell: no hidden-test cell."""
    exercise, _ = ASSIGNMENTS[assignment]
    nb = source_notebook(exercise)
    last = next(i for i, c in enumerate(nb.cells)
                if c.cell_type == "code" and "run_public_tests" in c.source)
    nb.cells = nb.cells[:last + 1]
    for cell in nbb.cells_with(nb, solution=True):
        cell.source = nbb.unmark(cell.source)
    return nb


def test_notebook_with_the_solution_passes_its_public_tests(tmp_path):
    nb = execute(up_to_public_tests("01_tiled_matmul"), tmp_path)
    assert errors(nb) == []
    out = stdout(nb.cells[-1])
    assert "Public tests of tiled_matmul" in out and "2 of 2 public tests passed." in out, out
    assert "[ok] width 16: correct" in out and "[ok] width 17: correct" in out, out
    assert_nothing_hidden(exercises.get("tiled_matmul"), out)


def test_a_spinning_kernel_does_not_block_the_notebook(tmp_path):
    """The public test reports the timeout, then raises it as a failure (nbgrader validate
    fails); the next cells of the notebook run (nbgrader and nbclient go on after an error)."""
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell(SETUP),
        nbformat.v4.new_code_cell(SPIN),
        nbformat.v4.new_code_cell(
            f"{TEST_CELL_MARKER}: public tests\n"
            "from autograder.nbgrader.public import run_public_tests\n"
            "from autograder.sandbox.limits import Limits\n\n"
            f'run_public_tests("tiled_matmul", limits={SHORT!r})'),
        nbformat.v4.new_code_cell("print('the notebook goes on')"),
    ])
    nb = execute(nb, tmp_path, timeout=180)
    assert errors(nb) == [
        "PublicTestsFailed: 2 of 2 public tests and the concept test failed"]
    out = shown(nb.cells[2])
    assert "[TIMEOUT] width 16: the kernel did not finish in time" in out, out
    assert stdout(nb.cells[3]) == "the notebook goes on\n"
