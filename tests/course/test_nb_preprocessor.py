"""GradeWithAutograder and SaveGradingNotes without nbgrader's command: which cells they write,
the points nbgrader reads back, what the student sees, and when they refuse.

The grader is replaced by a fake (no simulator); real ``nbgrader autograde`` runs are in
test_nb_redteam.py and test_nb_course.py.
"""

from __future__ import annotations

import nbformat
import pytest
from nbgrader.utils import determine_grade

import autograder.grader
from autograder.errors import GraderSetupError
from autograder.nbgrader import notebook as nbb
from autograder.nbgrader.cellreport import render_part
from autograder.nbgrader.preprocessor import GradeWithAutograder
from autograder.results import ExerciseResult, Kind, Status, TestResult
from autograder.submission import load_source

from .nbhelpers import ROOT

SOURCE = ROOT / "assignments" / "01_tiled_matmul" / "tiled_matmul.ipynb"


def fake_result(device="sim") -> ExerciseResult:
    r = ExerciseResult("tiled_matmul", "x.ipynb", "sim" if device == "sim" else "gpu:Fake GPU",
                       seed=123456789)
    skipped = Status.SKIPPED if device == "sim" else Status.PASSED
    r.tests = [
        TestResult("public: width 16", Kind.CORRECTNESS, "public", Status.PASSED, 5, 5, "correct"),
        TestResult("hidden: width 17", Kind.CORRECTNESS, "hidden", Status.FAILED, 0, 5,
                   "289 of 289 elements wrong; first at C[0, 16]"),
        TestResult("hidden: width 257", Kind.CORRECTNESS, "hidden", skipped,
                   50.0 if device != "sim" else 0.0, 50, "GPU only"),
        TestResult("concept: tiles", Kind.CONCEPT, "hidden", Status.PASSED, 15, 15, "2 barriers"),
        TestResult("diagnostic: barriers", Kind.DIAGNOSTIC, "hidden", Status.PASSED, 0, 0,
                   "none found"),
        TestResult("timing", Kind.TIMING, "hidden", skipped, 25.0 if device != "sim" else 0.0,
                   25, "timing needs a GPU"),
    ]
    return r


class Calls(list):
    """The fake grader's calls; ``device["backend"]`` is what ``auto`` resolves to."""

    device: dict


@pytest.fixture
def fake_grade(monkeypatch):
    """Replace autograder.grader.grade (and the device check); records (source, exercise,
    device) per call. KERNELGRADE_DEVICE is unset."""
    calls = Calls()
    calls.device = {"backend": "sim"}

    def grade(path, exercise, device="auto", seed=None, limits=None, sanitize=True):
        calls.append((load_source(path), exercise, device))
        return fake_result(calls.device["backend"])

    monkeypatch.delenv("KERNELGRADE_DEVICE", raising=False)
    monkeypatch.setattr(autograder.grader, "grade", grade)
    real = autograder.grader.resolve_device
    monkeypatch.setattr(autograder.grader, "resolve_device",
                        lambda d: calls.device["backend"] if d == "auto"
                        else d if d in ("gpu", "sim") else real(d))
    return calls


def submitted(code="TILE_WIDTH = 16\ndef tiled_matmul(A, B, C):\n    pass\n"):
    """The source notebook as a student would hand it in: ``code`` in the solution cell."""
    nb = nbb.read(SOURCE)
    (cell,) = nbb.cells_with(nb, solution=True)
    cell.source = code
    return nb


def hidden(nb, kind):
    (cell,) = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id")
               == nbb.hidden_grade_id("tiled_matmul", kind)]
    return cell


def stdout(cell) -> str:
    return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")


def run(nb, **config):
    pp = GradeWithAutograder(**config)
    return pp.preprocess(nb, {})


def test_hidden_grade_ids_round_trip():
    assert nbb.hidden_grade_id("tiled_matmul", "timing") == "tiled_matmul-hidden-timing"
    assert nbb.parse_hidden_grade_id("block_sum-hidden-concept") == ("block_sum", Kind.CONCEPT)
    for other in ("tiled_matmul-public-tests", "tiled_matmul-solution",
                  "tiled_matmul-hidden-speed", "x-hidden-timing; import os", ""):
        assert nbb.parse_hidden_grade_id(other) is None


def test_writes_each_parts_points_where_nbgrader_reads_them(fake_grade, monkeypatch):
    monkeypatch.setenv("KERNELGRADE_DEVICE", "sim")
    nb = submitted()
    hidden(nb, "concept").outputs = [nbformat.v4.new_output(  # what a kernel might have left
        "execute_result", data={"text/plain": "15.0"}, execution_count=3)]
    (public,) = [c for c in nbb.cells_with(nb, grade=True) if c.metadata.nbgrader.points == 0]
    public.outputs = [nbformat.v4.new_output("stream", name="stdout", text="1 of 2 passed\n"),
                      nbformat.v4.new_output(  # would make nbgrader fail the whole notebook
                          "execute_result", data={"text/plain": "15.0"}, execution_count=4)]
    nb, resources = run(nb, allow_provisional=True)
    assert determine_grade(public) == (0.0, 0.0)
    assert [o.output_type for o in public.outputs] == ["stream"]  # what the student saw stays
    assert len(fake_grade) == 1  # one grading for the three cells
    source, exercise, device = fake_grade[0]
    assert exercise == "tiled_matmul" and device == "sim"
    assert "def tiled_matmul" in source.text and "run_public_tests" not in source.text
    got = {k: determine_grade(hidden(nb, k))[0] for k in ("correctness", "concept", "timing")}
    assert got == {"correctness": 5.0, "concept": 15.0, "timing": 0.0}
    for kind in ("correctness", "concept", "timing"):
        assert [o.output_type for o in hidden(nb, kind).outputs] == ["stream", "execute_result"]
        assert all(o.get("name") != "stderr" for o in hidden(nb, kind).outputs)
    nbformat.validate(nb)
    # the instructor's copy of the result, for the notes and the autograded notebook
    assert resources["kernelgrade"]["results"]["tiled_matmul"].seed == 123456789
    assert nb.metadata.kernelgrade["results"]["tiled_matmul"]["seed"] == 123456789


def test_the_student_sees_the_report_not_the_hidden_cases_or_the_seed(fake_grade):
    nb, _ = run(submitted(), allow_provisional=True, device="sim")
    text = "".join(stdout(c) for c in nb.cells if c.cell_type == "code")
    assert "123456789" not in text
    assert "width 17" not in text and "width 257" not in text and "C[0, 16]" not in text
    assert "public: width 16" in text and "hidden test 1: 0/5 (failed) wrong result" in text
    assert "hidden test 2: 0/50 (skipped) runs on a GPU only" in text
    assert "diagnostic: barriers" in stdout(hidden(nb, "concept"))
    # provisional, per part and in all
    assert "correctness: 5 / 60 (provisional: 50 points need a GPU)" in stdout(
        hidden(nb, "correctness"))
    assert "timing: 0 / 25 (provisional: 25 points need a GPU)" in stdout(hidden(nb, "timing"))
    assert text.count("tiled_matmul: 20 / 100 points in all, graded on the CUDA simulator "
                      "(provisional: 75 points need a GPU)") == 1
    # the instructor trying a notebook by hand sees everything
    full = render_part(fake_result(), "correctness", with_header=True, reveal_hidden=True)
    assert "hidden: width 17" in full and "C[0, 16]" in full and "seed 123456789" in full


def test_simulator_grades_are_refused_without_the_opt_in(fake_grade):
    with pytest.raises(GraderSetupError, match="--allow-provisional"):
        run(submitted(), device="sim")
    assert fake_grade == []  # refused before grading
    # auto on a machine without a GPU is the simulator too
    with pytest.raises(GraderSetupError, match="provisional"):
        run(submitted())


def test_a_provisional_result_on_a_gpu_is_refused_too(fake_grade, monkeypatch):
    monkeypatch.setattr(autograder.grader, "grade", lambda *a, **k: fake_result("sim"))
    with pytest.raises(GraderSetupError, match="provisional: 75 points need a GPU"):
        run(submitted(), device="gpu")


def test_a_grader_setup_error_is_raised_not_scored(fake_grade, monkeypatch):
    def broken(*args, **kwargs):
        raise GraderSetupError("no GPU is visible")

    monkeypatch.setattr(autograder.grader, "grade", broken)
    nb = submitted()
    with pytest.raises(GraderSetupError, match="no GPU is visible"):
        run(nb, device="gpu")
    assert all(not hidden(nb, k).outputs for k in ("correctness", "concept", "timing"))


def test_final_gpu_grade_and_changed_points(fake_grade):
    fake_grade.device["backend"] = "gpu"
    nb = submitted()
    hidden(nb, "timing").metadata.nbgrader.points = 50.0  # the instructor doubled it
    nb, _ = run(nb)
    assert determine_grade(hidden(nb, "timing"))[0] == 50.0
    assert "scaled to this cell's 50 points" in stdout(hidden(nb, "timing"))
    assert "provisional" not in "".join(stdout(c) for c in nb.cells if c.cell_type == "code")


def test_a_notebook_without_hidden_grade_cells_is_left_alone(fake_grade):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")])
    out, resources = run(nb, device="sim")
    assert fake_grade == [] and "kernelgrade" not in resources and not out.cells[0].outputs


def test_an_unknown_exercise_or_device_is_a_setup_error(fake_grade):
    nb = submitted()
    hidden(nb, "timing").metadata.nbgrader.grade_id = "no_such_exercise-hidden-timing"
    with pytest.raises(GraderSetupError, match="no_such_exercise"):
        run(nb, device="sim", allow_provisional=True)
    with pytest.raises(GraderSetupError, match="KERNELGRADE_DEVICE"):
        run(submitted(), device="cpu")
    assert fake_grade == []
