"""Student notebooks run top to bottom in a real Jupyter kernel (nbclient), on the simulator by
default: the release notebook with the instructor solution pasted in, the bare skeleton, and the
kernel's input history as grade_this_notebook reads it."""

from __future__ import annotations

import nbformat
import pytest
from nbclient import NotebookClient
from .nbhelpers import NAMES, TEST_DEVICE, kernel_env, source_notebook

from autograder import exercises
from autograder.nbgrader import notebook as nbb

PARAMS = pytest.mark.parametrize("name", NAMES)


def execute(nb, cwd, timeout=180):
    """Run ``nb`` top to bottom in a fresh python3 kernel (errors recorded, not raised)."""
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3", allow_errors=True,
                            resources={"metadata": {"path": str(cwd)}})
    client.execute(env=kernel_env())
    return nb


def errors(nb) -> list[str]:
    return [f"{o.ename}: {o.evalue}" for c in nb.cells if c.cell_type == "code"
            for o in c.outputs if o.output_type == "error"]


def stdout(cell) -> str:
    return "".join(o.get("text", "") for o in cell.outputs if o.get("name") == "stdout")


@PARAMS
def test_release_notebook_with_the_solution_runs_top_to_bottom(released_course, name, tmp_path):
    ex = exercises.get(name)
    release = nbb.read(released_course / "release" / ex.assignment / f"{name}.ipynb")
    source = source_notebook(name)
    (answer,) = nbb.cells_with(source, solution=True)
    (cell,) = nbb.cells_with(release, solution=True)
    cell.source = nbb.unmark(answer.source)
    nb = execute(release, tmp_path)
    assert errors(nb) == []
    (public,) = [c for c in nbb.cells_with(nb, grade=True) if "run_public_tests" in c.source]
    out = stdout(public)
    n_public = sum(1 for c in ex.cases if c.visibility == "public")
    if ex.needs_gpu and TEST_DEVICE == "sim":  # one line per public case: skipped, not failed
        assert "[ok]" not in out and out.count("[skipped]") == n_public + 1, out  # + concept
        assert "The public tests need a GPU, so they were skipped here" in out
    else:
        assert f"{n_public} of {n_public} public tests passed." in out, out
        marks = [line for line in out.splitlines() if line.startswith("  [")]
        assert marks and all(line.startswith("  [ok] ") for line in marks), out
        if ex.concept:
            assert "[ok] concept: " in out, out
    setup = [c for c in nb.cells if c.cell_type == "code" and "nbgrader" not in c.metadata]
    if TEST_DEVICE == "sim" and setup:
        assert "simulator" in stdout(setup[0])


@pytest.mark.skipif(TEST_DEVICE != "sim", reason="a skeleton's raise inside a kernel shows only "
                                                 "on the simulator")
def test_skeleton_fails_in_the_public_tests_with_not_implemented(released_course, tmp_path):
    """The skeleton's kernel raises in the grader's child: the public test reports it, then the
    public-test cell raises it as its error, the report its text (nbgrader validate fails the
    skeleton and prints it); no other cell raises."""
    release = nbb.read(released_course / "release" / "01_tiled_matmul" / "tiled_matmul.ipynb")
    nb = execute(release, tmp_path)
    (public,) = [c for c in nbb.cells_with(nb, grade=True) if "run_public_tests" in c.source]
    assert errors(nb) == ["PublicTestsFailed: 2 of 2 public tests and the concept test failed"]
    assert [o.output_type for o in public.outputs] == ["error"]  # the report is the error
    out = " ".join(" ".join(public.outputs[0].traceback).split())
    assert out.count("your kernel raised NotImplementedError") == 2, out
    assert "[ERROR] width 16: cell " in out and "0 of 2 public tests passed" in out, out


def test_kernel_history_is_what_gets_graded(tmp_path):
    """executed_cells/executed_source in a real kernel: re-runs, magics and test cells."""
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("TILE_WIDTH = 8"),
        nbformat.v4.new_code_cell("%time x = 1\nTILE_WIDTH = 16"),
        nbformat.v4.new_code_cell("# autograder test cell: public\ny = TILE_WIDTH"),
        nbformat.v4.new_code_cell(
            "# autograder test cell: this one\n"
            "from autograder.nbgrader.cells import executed_cells, executed_source\n"
            "src = executed_source(executed_cells())\n"
            "print(repr(src.text))\n"
            "print(src.where(src.text.splitlines().index('TILE_WIDTH = 16') + 1))"),
    ])
    nb = execute(nb, tmp_path, timeout=60)
    assert errors(nb) == []
    out = stdout(nb.cells[3])
    assert "TILE_WIDTH = 8" in out and "TILE_WIDTH = 16" in out
    assert "%time" not in out and "y = TILE_WIDTH" not in out and "executed_source" not in out, out
    assert out.strip().endswith("cell 2, line 2")
