"""The public-test cell grades the notebook as it will be handed in (issue 32, item 1), in a real
Jupyter kernel driven by nbclient: a cell first run with a syntax error and run again fixed is
graded fixed (the kernel's input history still holds the broken run, which the cell used to
grade: "cell 1 ... does not parse" until a restart), and when the kernel ran code the saved file
does not hold, the report says to save and run the cell again."""

from __future__ import annotations

import nbformat
from nbclient import NotebookClient

from autograder.nbgrader.cells import SESSION_ENV, TEST_CELL_MARKER
from conftest import SOLUTIONS
from .nbhelpers import kernel_env

EXERCISE = "occupancy"  # plain functions: public cases with their expected values, no solution
FIXED = (SOLUTIONS / f"{EXERCISE}.py").read_text()
BROKEN = FIXED.replace("def ", "def (", 1)  # a syntax error in the first def
PUBLIC = (f"{TEST_CELL_MARKER}: public tests (read-only)\n"
          "from autograder.nbgrader.public import run_public_tests\n\n"
          f'run_public_tests("{EXERCISE}")')


def _stdout(cell) -> str:
    """The report the cell shows, printed or as its error's text (a failure), single-spaced."""
    text = "".join(o.get("text", "") for o in cell.outputs if o.get("name") == "stdout")
    text += " ".join(" ".join(o.traceback) for o in cell.outputs if o.output_type == "error")
    return " ".join(text.split())


def test_public_tests_grade_the_saved_notebook_not_the_kernels_history(tmp_path):
    assert BROKEN != FIXED and compile(FIXED, "x", "exec")
    path = tmp_path / f"{EXERCISE}.ipynb"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(BROKEN),
                                         nbformat.v4.new_code_cell(PUBLIC)])
    client = NotebookClient(nb, timeout=600, kernel_name="python3", allow_errors=True,
                            resources={"metadata": {"path": str(tmp_path)}})
    # as Jupyter Server starts a notebook's kernel: the notebook's path in its environment
    with client.setup_kernel(env=kernel_env(**{SESSION_ENV: str(path)})):
        client.execute_cell(nb.cells[0], 0)  # the student's first try: a syntax error
        assert any(o.output_type == "error" for o in nb.cells[0].outputs)
        nb.cells[0].source = FIXED  # fixed, saved, run again
        nbformat.write(nb, path)
        client.execute_cell(nb.cells[0], 0)
        client.execute_cell(nb.cells[1], 1)
        fixed = _stdout(nb.cells[1])
        errors = [o for o in nb.cells[1].outputs if o.output_type == "error"]

        # an edit run but not saved: the saved file is what is graded, and the report says so
        nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(BROKEN),
                                                       nbformat.v4.new_code_cell(PUBLIC)]),
                       path)
        client.execute_cell(nb.cells[1], 1)
        unsaved = _stdout(nb.cells[1])
    assert not errors and "does not parse" not in fixed, fixed
    assert f"of {EXERCISE}.ipynb as saved" in fixed and "public tests passed" in fixed, fixed
    assert "Save the notebook" not in fixed, fixed
    assert "does not parse" in unsaved and "Save the notebook (Ctrl+S)" in unsaved, unsaved
    assert "the cell you ran last is not in it" in unsaved, unsaved
