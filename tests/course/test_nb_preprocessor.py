"""GradeWithAutograder and SaveGradingNotes without nbgrader's command: which cells they write,
the points nbgrader reads back, what the student sees, and when they refuse.

The grader is replaced by a fake (no simulator); real ``nbgrader autograde`` runs are in
test_nb_redteam.py and test_nb_course.py.
"""

from __future__ import annotations

import base64
import re

import nbformat
import numpy as np
import pytest
from nbgrader.utils import determine_grade

import autograder.grader
from autograder.judge.compare import wrong_mask
from autograder.errors import GraderSetupError
from autograder.exercises.base import Tolerance
from autograder.nbgrader import notebook as nbb
from autograder.report.parts import part_points, render_part
from autograder.nbgrader.preprocessor import GradeWithAutograder
from autograder.wire.results import ExerciseResult, Kind, Status, TestResult
from autograder.source.submission import load_source

from .nbhelpers import source_notebook


def fake_result(device="sim") -> ExerciseResult:
    r = ExerciseResult("tiled_matmul", "x.ipynb", "sim" if device == "sim" else "gpu:Fake GPU",
                       seed=123456789)
    skipped = Status.SKIPPED if device == "sim" else Status.PASSED
    r.tests = [
        TestResult(name="public: width 16", kind=Kind.CORRECTNESS, visibility="public",
                   status=Status.PASSED, points=5, max_points=5, message="correct"),
        TestResult(name="hidden: width 17", kind=Kind.CORRECTNESS, visibility="hidden",
                   status=Status.FAILED, points=0, max_points=5,
                   message="289 of 289 elements wrong; first at C[0, 16]"),
        TestResult(name="hidden: width 257", kind=Kind.CORRECTNESS, visibility="hidden",
                   status=skipped, points=50.0 if device != "sim" else 0.0, max_points=50,
                   message="GPU only"),
        TestResult(name="concept: tiles", kind=Kind.CONCEPT, visibility="hidden",
                   status=Status.PASSED, points=15, max_points=15, message="2 barriers"),
        TestResult(name="diagnostic: barriers", kind=Kind.DIAGNOSTIC, visibility="hidden",
                   status=Status.PASSED, points=0, max_points=0, message="none found"),
        TestResult(name="timing", kind=Kind.TIMING, visibility="hidden", status=skipped,
                   points=25.0 if device != "sim" else 0.0, max_points=25,
                   message="timing needs a GPU"),
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
    nb = source_notebook("tiled_matmul")
    (cell,) = nbb.cells_with(nb, solution=True)
    cell.source = code
    return nb


def hidden(nb, kind):
    (cell,) = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id")
               == nbb.hidden_grade_id("tiled_matmul", kind)]
    return cell


def stdout(cell) -> str:
    """The text report of a cell: its stream output, or the text of its report output."""
    return "".join(o.get("text", "") if o.output_type == "stream"
                   else o.get("data", {}).get("text/plain", "") if o.output_type == "display_data"
                   else "" for o in cell.outputs)


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
        # the report once (as text and as HTML, with pictures), then the points nbgrader reads
        assert [o.output_type for o in hidden(nb, kind).outputs] == [
            "display_data", "execute_result"]
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


# --- the HTML report of each part (display_data, text/html) ------------------------------------

PNG_SRC = re.compile(r'<img src="data:image/png;base64,([A-Za-z0-9+/=]+)"')


def html_of(cell) -> str:
    (out,) = [o for o in cell.outputs if o.output_type == "display_data"]
    return out.data["text/html"]


def with_pictures(source) -> ExerciseResult:
    """fake_result on a GPU, with a failed public case and a failed hidden case (both with a
    wrong-element mask), a diagnostic naming the student's ``pass`` line, a performance hint
    and a timing test that lost points."""
    from autograder.timing.measure import ratio_stats, timing_details

    r = fake_result("gpu")
    expected = np.ones((16, 16), np.float32)
    got = expected.copy()
    got[:, 8:] = np.nan  # the last tile never written
    public_mask = wrong_mask("C", got, expected, Tolerance(rel_frobenius=1e-4))
    hidden_mask = wrong_mask("C", np.zeros((17, 17), np.float32), np.ones((17, 17), np.float32),
                             Tolerance(rel_frobenius=1e-4))
    line = source.text.splitlines().index("    pass") + 1
    student = [1.4 + 0.01 * i for i in range(10)]
    instructor = [1.0 + 0.01 * i for i in range(10)]
    r.tests[0:2] = [
        TestResult(name="public: width 16", kind=Kind.CORRECTNESS, visibility="public",
                   status=Status.FAILED, points=0, max_points=5,
                   message="128 of 256 elements wrong; first at C[0, 8]",
                   details={"wrong_masks": [public_mask]}),
        TestResult(name="hidden: width 17", kind=Kind.CORRECTNESS, visibility="hidden",
                   status=Status.FAILED, points=0, max_points=5,
                   message="289 of 289 elements wrong; first at C[0, 16]",
                   details={"wrong_masks": [hidden_mask]}),
    ]
    r.tests[4] = TestResult(name="diagnostic: barriers", kind=Kind.DIAGNOSTIC,
                            visibility="hidden", status=Status.FAILED, points=0, max_points=0,
                            message=f"{source.where(line)}: a barrier reached by only 1 of 256 "
                            "live threads")
    r.tests[5] = TestResult(name="timing: against the instructor's kernel", kind=Kind.TIMING,
                            visibility="hidden", status=Status.FAILED, points=20.0, max_points=25,
                            message="at width 2048: ratio 1.45x",
                            details=timing_details(student, instructor,
                                                   ratio_stats(student, instructor), 1.25, 2.0,
                                                   {"width": 2048}))
    r.tests.append(TestResult(
        name="diagnostic: performance hints", kind=Kind.DIAGNOSTIC, visibility="hidden",
        status=Status.PASSED, points=0, max_points=0, message="1 hint(s)",
        details={"hints": [{"kind": "float64", "line": line, "weight": 5.0,
                            "text": f"{source.where(line)}: float64 arithmetic"}],
                 "unavailable": []}))
    return r


def test_each_part_carries_the_students_html_report(fake_grade, monkeypatch):
    graded = []

    def grade(path, exercise, **kwargs):
        graded.append(with_pictures(load_source(path)))
        return graded[-1]

    monkeypatch.setattr(autograder.grader, "grade", grade)
    nb, _ = run(submitted(), device="gpu")
    (result,) = graded
    for kind in ("correctness", "concept", "timing"):
        cell = hidden(nb, kind)
        # the points stay where nbgrader reads them, as the text report says
        (points,) = [o for o in cell.outputs if o.output_type == "execute_result"]
        assert list(points.data) == ["text/plain"]
        assert float(points.data["text/plain"]) == part_points(result, kind)[0]
        assert determine_grade(cell)[0] == part_points(result, kind)[0]
        assert stdout(cell).startswith(render_part(result, kind, with_header=kind == "correctness"))
        page = html_of(cell)
        assert page.startswith('<div class="kg-report">') and page.rstrip().endswith("</div>")
        assert "<html" not in page and "<head" not in page and "<script" not in page
        assert f"<h2 class=\"part\">{kind}: " in page
        # nothing hidden: no hidden case's name, size, message or picture, no seed
        for secret in ("hidden: width 17", "width 17", "C[0, 16]", "[17, 17]", "(17, 17)",
                       "289", "123456789"):
            assert secret not in re.sub(PNG_SRC, "", page), (kind, secret)
        for data in PNG_SRC.findall(page):
            assert base64.b64decode(data).startswith(b"\x89PNG")
    correctness = html_of(hidden(nb, "correctness"))
    assert len(PNG_SRC.findall(correctness)) == 1  # the public case's heatmap only
    assert "first wrong at [0, 8]" in correctness and "128 never written" in correctness
    assert "hidden test 1" in correctness and "wrong result" in correctness
    concept = html_of(hidden(nb, "concept"))
    # the diagnostic and the hint show the student's own line, highlighted
    assert concept.count('<span class="hl"><span class="ln">cell 2, line 3</span>    pass') == 2
    assert "a barrier reached by only 1 of 256 live threads" in concept
    assert "float64 arithmetic" in concept and not PNG_SRC.findall(concept)
    timing = html_of(hidden(nb, "timing"))
    assert len(PNG_SRC.findall(timing)) == 2  # both kernels' times; GFLOP/s
    assert "ratio 1.45x" in timing and "GFLOP/s" in timing


def test_on_the_simulator_the_timing_html_says_it_needs_a_gpu(fake_grade):
    nb, _ = run(submitted(), allow_provisional=True, device="sim")
    timing = html_of(hidden(nb, "timing"))
    assert "timing: 0 / 25 (provisional: 25 points need a GPU)" in timing
    assert "need a GPU: the simulator gives no timing" in timing and "<img" not in timing
    assert "hidden test 2" in html_of(hidden(nb, "correctness"))  # runs on a GPU only
    assert "runs on a GPU only" in html_of(hidden(nb, "correctness"))
