"""grade_this_notebook: which code it grades, the points it returns, caching, stdout only.

The grader is replaced by a fake here (no simulator); the real path runs in test_nb_course.py.
"""

from __future__ import annotations

import pytest

import autograder.grader
from autograder.nbgrader import cells
from autograder.wire.results import ExerciseResult, Kind, Status, TestResult
from autograder.source.submission import load_source

KERNEL_CELL = """from numba import cuda
TILE_WIDTH = 16
%time x = 1
!nvidia-smi
@cuda.jit
def tiled_matmul(A, B, C):
    C[0, 0] = A[0, 0]
"""
HISTORY = [
    "import numpy as np",                                           # In [1]
    KERNEL_CELL,                                                     # In [2]
    cells.TEST_CELL_MARKER + ': public tests\nrun_public_tests("tiled_matmul")',  # In [3]
    "%%bash\necho hi",                                              # In [4]
    "print('scratch')",                                             # In [5]
    cells.TEST_CELL_MARKER + ': hidden\ngrade_this_notebook("tiled_matmul", "correctness")',
]


def fake_result(exercise="tiled_matmul", device="sim") -> ExerciseResult:
    r = ExerciseResult(exercise, "x.ipynb", device, seed=7)
    r.tests = [
        TestResult(name="public: width 16", kind=Kind.CORRECTNESS, visibility="public",
                   status=Status.PASSED, points=5.0, max_points=5.0, message="ok"),
        TestResult(name="hidden: width 17", kind=Kind.CORRECTNESS, visibility="hidden",
                   status=Status.FAILED, points=0.0, max_points=5.0,
                   message="289 of 289 elements wrong"),
        TestResult(name="hidden: width 64", kind=Kind.CORRECTNESS, visibility="hidden",
                   status=Status.SKIPPED, points=0.0, max_points=5.0, message="GPU only"),
        TestResult(name="concept: tiles", kind=Kind.CONCEPT, visibility="hidden",
                   status=Status.PASSED, points=15.0, max_points=15.0, message="2 bars"),
        TestResult(name="timing", kind=Kind.TIMING, visibility="hidden", status=Status.SKIPPED,
                   points=0.0, max_points=25.0, message="needs a GPU"),
    ]
    return r


@pytest.fixture
def fake_grade(monkeypatch):
    """Replace autograder.grader.grade; records (graded source, exercise, device) per call."""
    calls = []
    cells._RESULTS.clear()

    def grade(path, exercise, device="auto", seed=None, limits=None):
        calls.append((load_source(path), exercise, device))
        return fake_result(exercise, device)

    monkeypatch.setattr(autograder.grader, "grade", grade)
    yield calls
    cells._RESULTS.clear()


def test_executed_source_leaves_out_magics_and_test_cells_and_keeps_cell_numbers():
    src = cells.executed_source(HISTORY)
    assert "def tiled_matmul" in src.text and "import numpy as np" in src.text
    assert "print('scratch')" in src.text
    for gone in ("%time", "nvidia-smi", "echo hi", "run_public_tests", "grade_this_notebook"):
        assert gone not in src.text, gone
    compile(src.text, "x", "exec")
    lineno = src.text.splitlines().index("    C[0, 0] = A[0, 0]") + 1
    assert src.where(lineno) == "cell 2, line 7"  # In [2], as the student sees it
    lineno = src.text.splitlines().index("print('scratch')") + 1
    assert src.where(lineno) == "cell 5, line 1"


def test_is_test_cell():
    assert cells.is_test_cell(HISTORY[2]) and cells.is_test_cell(HISTORY[5])
    assert cells.is_test_cell('grade_this_notebook("tiled_matmul", "timing")')
    assert not cells.is_test_cell(KERNEL_CELL)


def test_returns_each_parts_points_and_grades_once(fake_grade, capsys):
    got = {kind: cells.grade_this_notebook("tiled_matmul", kind, device="sim", cells=HISTORY)
           for kind in ("correctness", "concept", "timing")}
    assert got == {"correctness": 5.0, "concept": 15.0, "timing": 0.0}
    assert all(type(v) is float for v in got.values())
    assert len(fake_grade) == 1  # the next grade cells reuse the kernel's result
    source, exercise, device = fake_grade[0]
    assert exercise == "tiled_matmul" and device == "sim"
    assert "def tiled_matmul" in source.text and "run_public_tests" not in source.text
    out = capsys.readouterr()
    assert out.err == ""  # nbgrader gives 0 to a grade cell that writes to stderr
    assert "correctness: 5 / 15" in out.out and "289 of 289 elements wrong" in out.out
    assert "concept: 15 / 15" in out.out and "timing: 0 / 25" in out.out
    assert out.out.count("--seed 7") == 1  # the header comes with the fresh grading only


def test_changed_code_is_graded_again(fake_grade):
    cells.grade_this_notebook("tiled_matmul", "correctness", device="sim", cells=HISTORY)
    cells.grade_this_notebook("tiled_matmul", "concept", device="sim",
                              cells=HISTORY + ['cells = "a test cell is not graded"'])
    assert len(fake_grade) == 2
    # test cells run after grading change nothing
    cells.grade_this_notebook("tiled_matmul", "timing", device="sim",
                              cells=HISTORY + [cells.TEST_CELL_MARKER + "\nx = 1"])
    assert len(fake_grade) == 2


def test_device_comes_from_the_environment(fake_grade, monkeypatch):
    monkeypatch.setenv(cells.DEVICE_ENV, "gpu")
    cells.grade_this_notebook("tiled_matmul", "concept", cells=HISTORY)
    monkeypatch.delenv(cells.DEVICE_ENV)
    cells.grade_this_notebook("tiled_matmul", "concept", cells=HISTORY)
    assert [device for _, _, device in fake_grade] == ["gpu", "auto"]


def test_bad_kind_and_no_kernel_raise(fake_grade):
    with pytest.raises(ValueError):
        cells.grade_this_notebook("tiled_matmul", "speed", cells=HISTORY)
    with pytest.raises(RuntimeError, match="inside a Jupyter notebook"):
        cells.grade_this_notebook("tiled_matmul", "correctness")  # pytest is no IPython kernel
    assert fake_grade == []


def test_a_notebook_without_code_is_an_error_result_not_an_exception(capsys):
    cells._RESULTS.clear()
    points = cells.grade_this_notebook("tiled_matmul", "correctness", device="sim",
                                       cells=[cells.TEST_CELL_MARKER + "\nx = 1", "%ls"])
    assert points == 0.0
    out = capsys.readouterr().out
    assert "has no code cells with code in them" in out
    cells._RESULTS.clear()
