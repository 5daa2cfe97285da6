"""What a submission prints while hidden inputs are present reaches the instructor only: a
``print`` in a kernel compiles for a GPU too, and would list every hidden case's size and inputs
in the student's report. Printed by the public cases' child (which holds no hidden input), before
any test started (nothing of the student's had run), or in a run of public tests only, it stays
with the student."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from autograder import exercises, grader
from autograder.grading import steps as grading
from autograder.judge.cases import output_hint, printed_for_student
from autograder.nbgrader import notebook as nbb
from autograder.nbgrader.authoring import build_source_notebook
from autograder.nbgrader import public
from autograder.nbgrader.preprocessor import GradeWithAutograder
from autograder.grading.plan import make_cases
from autograder.wire.protocol import Imported, Start
from autograder.report.export import to_gradescope
from autograder.wire.results import ExerciseResult
from autograder.sandbox.run import ChildRun
from conftest import ROOT, TEST_DEVICE

BASE = 900_000_000  # the kernel prints BASE + n (n >= 1): numbers its source does not hold
#: block_sum's solution, printing the size and first value of each case's input.
PRINTING = f'''from numba import cuda, float32

BLOCK_SIZE = 256


@cuda.jit
def block_sum(x, partial):
    sums = cuda.shared.array(BLOCK_SIZE, float32)
    tid = cuda.threadIdx.x
    i = cuda.blockIdx.x * BLOCK_SIZE + tid
    if i == 0:
        print({BASE} + x.shape[0], x[0])
    sums[tid] = x[i] if i < x.shape[0] else float32(0.0)
    cuda.syncthreads()
    stride = BLOCK_SIZE // 2
    while stride > 0:
        if tid < stride:
            sums[tid] += sums[tid + stride]
        cuda.syncthreads()
        stride //= 2
    if tid == 0:
        partial[cuda.blockIdx.x] = sums[0]
'''


def _record(r) -> tuple[dict, dict]:
    return r.to_header(), {}


def test_only_output_no_test_of_the_student_s_could_have_printed_is_theirs():
    cases = make_cases(exercises.get("block_sum"), 1)
    public_only = [c for c in cases if c.spec.visibility == "public"]
    before = ChildRun(records=[_record(Imported({}, []))], ended="exited", exit_code=1,
                      output="a warning\nthe last words")
    during = ChildRun(records=[_record(Imported({}, [])), _record(Start(0))], ended="exited",
                      exit_code=1, output=f"{BASE + 1500} 0.25")
    assert printed_for_student(before, cases)
    assert not printed_for_student(during, cases)
    assert printed_for_student(during, public_only)
    assert output_hint(before) == " Last output: a warning | the last words"
    assert output_hint(during) == ""


def _printed(text: str) -> set[int]:
    """The sizes whose printed number (``BASE + n``) ``text`` holds."""
    return {int(m) - BASE for m in re.findall(r"\b9\d{8}\b", text)} - {0}


def _student_texts(result: ExerciseResult) -> list[str]:
    """Everything of ``result`` a student may be shown: its notes, Gradescope's output and its
    tests' outputs (hidden ones once grades are published)."""
    gradescope = to_gradescope(result.to_dict())
    return (list(result.notes) + [gradescope["output"]]
            + [t["output"] for t in gradescope["tests"]])


def _feedback(result: ExerciseResult, monkeypatch) -> str:
    """The text and HTML the nbgrader autograde preprocessor writes into the cells of the
    student's notebook for ``result``: what ``nbgrader generate_feedback`` shows (the notebook's
    ``kernelgrade`` metadata, with the whole result, is the instructor's)."""
    nb = build_source_notebook("block_sum")
    (cell,) = nbb.cells_with(nb, solution=True)
    cell.source = PRINTING
    monkeypatch.setattr(grader, "grade", lambda *a, **k: result)
    nb, _ = GradeWithAutograder(allow_provisional=True, device=TEST_DEVICE).preprocess(nb, {})
    return json.dumps([c.get("outputs", []) for c in nb.cells])


def test_a_kernel_that_prints_its_inputs_shows_them_to_the_instructor_only(tmp_path,
                                                                           monkeypatch):
    path = tmp_path / "printing.py"
    path.write_text(PRINTING, encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "autograder.cli", "grade", str(path),
                          "--exercise", "block_sum", "--device", TEST_DEVICE, "--json",
                          "--seed", "7"],
                         capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    result = ExerciseResult.from_dict(json.loads(out.stdout))
    ex = exercises.get("block_sum")
    hidden = {c.params["n"] for c in ex.cases if c.visibility == "hidden"}
    assert _printed("\n".join(result.instructor_notes)) & hidden, result.instructor_notes
    # The public cases ran in a child of their own: what it printed is the student's.
    assert not [t for t in _student_texts(result) if _printed(t) & hidden]
    assert grading.PRINTED_NOTE in result.notes
    feedback = _feedback(result, monkeypatch)
    assert not _printed(feedback) & hidden
    assert "shown to the instructor only" in feedback


def test_the_public_tests_show_what_the_code_prints(tmp_path):
    path = tmp_path / "printing.py"
    path.write_text(PRINTING, encoding="utf-8")
    result = public.public_file_result(path, "block_sum", device=TEST_DEVICE)
    sizes = {c.params["n"] for c in exercises.get("block_sum").cases if c.visibility == "public"}
    assert any(n.startswith("your code printed:") and sizes <= _printed(n) for n in result.notes)
    assert sizes <= _printed(public.report(result))


def test_code_that_prints_nothing_is_not_said_to_have_printed():
    """On a GPU the grader compiles the kernel with line info (compute-sanitizer's runs), and
    Numba warned that it could not find the source, which the sandbox hides: the instructor's
    solution "printed something while it was graded" (seen on an H200, 2026-11-26). The grader's
    copy of the source is what ``inspect`` finds now."""
    from conftest import graded_once

    result = graded_once(exercises.solution_path("tiled_matmul"), "tiled_matmul")
    assert grading.PRINTED_NOTE not in result.notes
    assert not [n for n in result.notes + result.instructor_notes if "printed" in n], \
        result.instructor_notes


@pytest.mark.parametrize("side", ["student", "instructor"])
def test_the_child_finds_the_source_of_a_kernel_whose_file_it_cannot_see(tmp_path, side):
    """Numba's line info asks ``inspect`` for a kernel's ``def`` line; the child builds the
    student's module, and the timed child the instructor's, from the grader's copy of the
    text, at a path the sandbox does not show."""
    import inspect

    from autograder.child.contract import import_submission
    from autograder.child.timing import import_solution

    text = (ROOT / "solutions" / "tiled_matmul.py").read_text()
    missing = str(tmp_path / "not_here" / f"{side}.py")
    module = (import_submission(missing, text, guard=False) if side == "student"
              else import_solution(missing, {"TILE_WIDTH": 8}, text))
    kernel = module.tiled_matmul
    fn = getattr(kernel, "py_func", kernel)
    lines, start = inspect.getsourcelines(fn)
    assert "def tiled_matmul" in "".join(lines)
    assert lines == text.splitlines(True)[start - 1:start - 1 + len(lines)]
