"""The student's notebook and nbgrader's feedback page, as a student reads them after a real
``nbgrader autograde`` and ``generate_feedback`` (issue 32, items 2 and 9).

Item 2: the notebook says what the autograder runs (imports, constants, function definitions),
and the public-test cell and the feedback name the lines it skipped (a student's own test
launch and print). Item 9: each hidden grade cell's report shows once on the feedback page (no
text block above the HTML, no ``Out[ ]: 40.0`` under it), while the gradebook still gets the
points.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from autograder import exercises
from autograder.nbgrader import notebook as nbb
from autograder.nbgrader.public import run_public_tests
from .nbhelpers import TEST_DEVICE, nbgrader, scores, submit

EXERCISE, ASSIGNMENT, NOTEBOOK = "tiled_matmul", "01_tiled_matmul", "tiled_matmul"

#: A student's own check, at the top level of the kernel's cell: the grader skips it
OWN_CHECK = '''
import numpy as np
A = np.ones((16, 16), np.float32)
C = np.zeros_like(A)
tiled_matmul[(1, 1), (16, 16)](A, A, C)
print("my check:", C[0, 0])
'''


def student_code() -> str:
    return exercises.solution_path(EXERCISE).read_text() + OWN_CHECK


def skipped_lines(code: str) -> list[int]:
    """The cell's line numbers of the statements of OWN_CHECK the grader does not run."""
    lines = code.splitlines()
    return [lines.index(s) + 1 for s in ("C = np.zeros_like(A)",
                                         "tiled_matmul[(1, 1), (16, 16)](A, A, C)",
                                         'print("my check:", C[0, 0])')]


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    """A course of tiled_matmul where ann handed in the solution and her own check, autograded
    and with feedback generated."""
    from autograder.nbgrader.course import build_course

    course = build_course(tmp_path_factory.mktemp("feedback") / "course", names=[EXERCISE],
                          device=TEST_DEVICE, allow_provisional=TEST_DEVICE == "sim")
    nbgrader(course, "generate_assignment", ASSIGNMENT, "--log-level=WARN")
    submit(course, "ann", ASSIGNMENT, student_code())
    nbgrader(course, "autograde", ASSIGNMENT, "--log-level=WARN")
    nbgrader(course, "generate_feedback", ASSIGNMENT, "--log-level=WARN")
    return course


def feedback(course: Path) -> str:
    return (course / "feedback" / "ann" / ASSIGNMENT / f"{NOTEBOOK}.html").read_text()


# --- item 2: what the grader runs, said and shown ----------------------------------------------

def test_the_notebook_says_what_the_grader_runs(course):
    nb = nbb.read(course / "release" / ASSIGNMENT / f"{NOTEBOOK}.ipynb")
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert "every code cell" not in text
    for words in ("**imports**", "**constant assignments**", "**function definitions**",
                  "is skipped, and the report lists the lines it skipped"):
        assert words in text, words
    # the setup cell's imports are what the grader runs: none of them is skipped
    (setup,) = [c for c in nb.cells if c.cell_type == "code" and "nbgrader" not in c.metadata]
    assert "from numba import config" not in setup.source


def test_the_feedback_names_the_lines_that_were_not_run(course):
    page = feedback(course)
    lines = ", ".join(map(str, skipped_lines(student_code())))
    assert page.count("Not run when graded") == 1
    note = page[page.index("Not run when graded"):]
    note = note[:note.index("</pre>")]
    assert f"cell 2, lines {lines} (`C = np.zeros_like(A)`, …)" in note, note
    assert "cell 1, line" in note and "ENABLE_CUDASIM" in note  # the setup cell's check
    assert len(note) < 400  # a line or two, not a wall


def test_the_public_tests_name_the_lines_that_were_not_run(course, capsys):
    nb = nbb.read(course / "release" / ASSIGNMENT / f"{NOTEBOOK}.ipynb")
    (setup,) = [c for c in nb.cells if c.cell_type == "code" and "nbgrader" not in c.metadata]
    run_public_tests(EXERCISE, device=TEST_DEVICE, cells=[setup.source, student_code()])
    out = capsys.readouterr().out
    lines = ", ".join(map(str, skipped_lines(student_code())))
    assert "2 of 2 public tests passed" in out
    (note,) = [ln for ln in out.splitlines() if "Not run when graded" in ln]
    assert f"cell 2, lines {lines}" in note and "cell 1, line" in note


# --- item 9: each grade cell's report once -----------------------------------------------------

def test_each_grade_cell_shows_its_report_once_and_no_stray_output(course):
    page = feedback(course)
    for kind in ("correctness", "concept", "timing"):
        title = re.escape(f"{kind}: ")
        assert len(re.findall(rf"{title}\d+ / \d+", page)) == 1, kind
    assert page.count("points in all, graded on") == 1
    assert page.count('<div class="kg-report">') == 3
    assert "Out[" not in page and "output_execute_result" not in page
    assert "output_stream" not in page  # no text block above the HTML
    # the gradebook still has each part's points (nbgrader reads them from the notebook)
    got = scores(course, ASSIGNMENT, "ann")
    assert got[nbb.hidden_grade_id(EXERCISE, "concept")] == (15.0, 15.0)
    if TEST_DEVICE == "sim":
        on_sim = sum(c.points for c in exercises.get(EXERCISE).cases if c.sim)
        assert got[nbb.hidden_grade_id(EXERCISE, "correctness")][0] == on_sim
    # the autograded notebook keeps the points where nbgrader and formgrader read them
    nb = nbb.read(course / "autograded" / "ann" / ASSIGNMENT / f"{NOTEBOOK}.ipynb")
    for kind in ("correctness", "concept", "timing"):
        (cell,) = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id")
                   == nbb.hidden_grade_id(EXERCISE, kind)]
        assert [o.output_type for o in cell.outputs] == ["display_data", "execute_result"]


def test_the_feedback_keeps_the_outputs_of_other_cells(course):
    """The page leaves out the points of hidden grade cells only: a student's own cell that ran
    (``--run-notebooks``) keeps its ``Out[ ]``."""
    import nbformat
    from autograder.nbgrader.feedback import without_points_outputs

    nb = nbb.read(course / "autograded" / "ann" / ASSIGNMENT / f"{NOTEBOOK}.ipynb")
    own = nbformat.v4.new_code_cell("1 + 1", outputs=[nbformat.v4.new_output(
        "execute_result", data={"text/plain": "2"}, execution_count=1)])
    nb.cells.append(own)
    cleaned = without_points_outputs(nb)
    assert cleaned.cells[-1].outputs == own.outputs
    assert any(o.output_type == "execute_result" for c in nb.cells for o in c.get("outputs", [])
               if "hidden" in c.metadata.get("nbgrader", {}).get("grade_id", ""))
    assert not any(o.output_type == "execute_result" for c in cleaned.cells
                   for o in c.get("outputs", [])
                   if "hidden" in c.metadata.get("nbgrader", {}).get("grade_id", ""))
