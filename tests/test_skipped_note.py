"""The student's note on what the grader did not run (issue 32, walk-through): statements of the
instructor's read-only cells (the setup cell's own check, nbgrader ``locked``) are not listed as
the student's; the student's own cells are."""

from __future__ import annotations

import json

from autograder.grading.steps import skipped_for_student
from autograder.source.submission import notebook_source

SETUP = "import numba\nif numba.config.ENABLE_CUDASIM:\n    print('simulator')\n"
STUDENT = "from numba import cuda\nprint('exploring')\n"


def _notebook(setup_locked: bool) -> str:
    meta = {"nbgrader": {"locked": True, "solution": False, "grade": False,
                         "grade_id": "setup", "schema_version": 3}} if setup_locked else {}
    cells = [{"cell_type": "code", "metadata": meta, "source": SETUP, "outputs": [],
              "execution_count": None},
             {"cell_type": "code", "metadata": {}, "source": STUDENT, "outputs": [],
              "execution_count": None}]
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def _skipped_lines(source) -> list[int]:
    """The lines of the two top-level statements the grader skips: the if, the call."""
    return [i + 1 for i, line in enumerate(source.text.splitlines())
            if line.startswith(("if ", "print("))]


def test_the_setup_cells_own_check_is_not_the_students():
    source = notebook_source(_notebook(setup_locked=True), "nb.ipynb")
    note = skipped_for_student(source, _skipped_lines(source))
    assert "cell 2, line 2 (`print('exploring')`)" in note
    assert "cell 1" not in note and "ENABLE_CUDASIM" not in note


def test_an_unlocked_cell_is_the_students_and_listed():
    source = notebook_source(_notebook(setup_locked=False), "nb.ipynb")
    note = skipped_for_student(source, _skipped_lines(source))
    assert "cell 1, line 2 (`if numba.config.ENABLE_CUDASIM:`)" in note
    assert "cell 2, line 2" in note


def test_only_given_cells_leave_nothing_to_say():
    source = notebook_source(_notebook(setup_locked=True), "nb.ipynb")
    lines = [n for n in _skipped_lines(source) if source.origins[n - 1][0] == 1]
    assert skipped_for_student(source, lines) == ""
