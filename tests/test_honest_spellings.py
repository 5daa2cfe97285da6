"""Honest code never gets a zero for the grader's environment (issue 30, goal 7): whatever CPython
and Numba's CUDA target accept is graded alike on the simulator and a GPU.

* a kernel that calls device functions compiles for the GPU check without a CUDA driver;
* a file with a UTF-8 byte-order mark, CRLF or CR line endings, or a coding line is read as
  Python reads it, with the same line numbers;
* every spelling of ``numba.cuda`` that a GPU compiles runs on the simulator, and ``cuda.jit``
  takes the options a GPU takes;
* what the simulator cannot run (warp intrinsics) is the grader's limit: a skipped test, never
  "your kernel raised";
* a declared signature no launch fits fails the compile check, as every launch fails on a GPU.

The kernels are in ``tests/files/honest/``. The gradings run on the test device
(``KERNELGRADE_TEST_DEVICE``): on a GPU the same files must get the same grades.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from autograder.judge import collect as judge
from autograder.sandbox.run import ChildRun
from autograder.source.submission import SubmissionError, load_source, python_lines
from autograder.wire.protocol import Compiled, Error, Imported
from autograder.wire.results import Kind, Status, TestResult
from conftest import FILES, ROOT, SOLUTIONS, TEST_DEVICE, env_with_root, graded_once

HONEST = FILES / "honest"
SOLUTION = SOLUTIONS / "block_sum.py"


def _verdicts(result) -> dict:
    """Each correctness and concept test's status and points (timing left out: a GPU measures
    it, and two kernels' times differ)."""
    return {t.name: (t.status, t.points) for t in result.tests
            if t.kind in (Kind.CORRECTNESS, Kind.CONCEPT)}


def _assert_graded_as_the_solution(result) -> None:
    expected = _verdicts(graded_once(SOLUTION, "block_sum"))
    got = _verdicts(result)
    assert got == expected, "\n".join(
        f"{t.name}: {t.status.value} {t.points:g} {t.message[:300]}" for t in result.tests
        if (t.status, t.points) != expected.get(t.name, (t.status, t.points)))


# -- end to end: the same grade as the instructor's solution ------------------------------------

@pytest.mark.parametrize("name", ["device_function", "spellings", "codegen_options",
                                  "jit_cache", "device_keywords", "cache_hints",
                                  "libdevice", "jit_called", "tuple_signature"])
def test_honest_spellings_get_the_solutions_grade(name):
    """Device functions (the compile check needed a driver), ``numba.cuda.grid``,
    ``nb.cuda.threadIdx``, ``from numba.cuda import grid, syncthreads`` (AttributeError or
    ImportError on the simulator), ``cuda.jit(sig, lineinfo=True, max_registers=64)`` (the
    simulator's jit refused the options), ``cuda.jit(cache=True)`` (the loader refused it), a
    device function called with keyword arguments (the simulator took positional ones only),
    ``cuda.ldcg`` and ``stwt`` (None on the simulator), ``libdevice.fmaf`` and ``fadd_rn`` (stubs
    returning None there), ``cuda.jit(sig)(f)`` (the loader skipped the call), a signature
    string returning ``UniTuple(int64, 2)`` (refused): each is graded as the instructor's
    kernel."""
    _assert_graded_as_the_solution(graded_once(HONEST / f"{name}.py", "block_sum"))


def test_byte_order_mark_and_crlf_get_the_solutions_grade(tmp_path):
    """A Windows editor's file (UTF-8 byte-order mark, CRLF line endings) runs in Python; it
    got 0 ("invalid non-printable character U+FEFF")."""
    path = tmp_path / "block_sum.py"
    path.write_bytes(b"\xef\xbb\xbf" + SOLUTION.read_bytes().replace(b"\n", b"\r\n"))
    _assert_graded_as_the_solution(graded_once(path, "block_sum"))


def test_warp_intrinsics_are_the_simulators_limit_not_the_kernels_error():
    """``cuda.shfl_down_sync`` has no simulator implementation: on the simulator every case
    the simulator would run is skipped with that reason (it raised AttributeError, "your kernel
    raised"), and so is the concept test, which reads the instrumented simulator run (on a GPU
    too: there the cases pass)."""
    result = graded_once(HONEST / "warp_shuffle.py", "block_sum")
    cases = [t for t in result.tests if t.kind is Kind.CORRECTNESS]
    concept = next(t for t in result.tests if t.kind is Kind.CONCEPT)
    for t in result.tests:
        assert "raised" not in t.message, (t.name, t.message)
    if TEST_DEVICE == "gpu":
        assert all(t.status is Status.PASSED for t in cases), [
            (t.name, t.status.value, t.message[:200]) for t in cases]
    else:
        limited = [t for t in cases if "shfl_down_sync" in t.message]
        assert limited and all(t.status is Status.SKIPPED and t.points == 0 for t in limited)
        assert "limit of the grader's simulator" in limited[0].message
        assert all(t.status is Status.SKIPPED for t in cases)
        assert result.provisional
    assert concept.status is Status.SKIPPED and "shfl_down_sync" in concept.message, \
        concept.message


def test_a_declared_signature_no_launch_fits_counts_nothing_on_the_simulator_either():
    """``@cuda.jit("void(float64[:], float64[:])")`` launched with float32 arrays: the simulator
    ignores the signature and computes the right sums, a GPU refuses every launch. The compile
    check reads the declared signature, so no correctness point counts on either."""
    result = graded_once(HONEST / "wrong_declared_signature.py", "block_sum")
    assert result.score == 0
    concept = next(t for t in result.tests if t.kind is Kind.CONCEPT)
    assert concept.status is Status.ERROR and "declared signature" in concept.message, \
        concept.message
    if TEST_DEVICE != "gpu":
        ran = [t for t in result.tests if t.kind is Kind.CORRECTNESS
               and t.status is not Status.SKIPPED]
        assert ran and all("does not compile for a real GPU" in t.message for t in ran)


# -- the compile check's target: no driver, Numba's own lists -----------------------------------

_REAL_TARGET = r"""
import json
import numba.cuda as cuda
from numba import types
from autograder.simulator import adapter as simulator
from autograder.child.cases import TARGET_CC, compiling_for, declared_for

@cuda.jit(device=True)
def twice(v):
    return v * 2

@cuda.jit(device=True, inline="always")
def plus_one(v):
    return twice(v) + 1

def kernel(x, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        out[i] = plus_one(x[i])

c1 = types.float32[::1]
with compiling_for(TARGET_CC):
    ptx, _ = cuda.compile_ptx(kernel, (c1, c1), cc=TARGET_CC)
kinds = {n: type(getattr(cuda, n, None)).__name__
         for n in simulator.KERNEL_API + simulator.GPU_ONLY + simulator.CACHE_HINT_LOADS
         + simulator.CACHE_HINT_STORES}
print(json.dumps({"target": ".target sm_%d%d" % TARGET_CC in ptx, "kinds": kinds,
                  "missing": [n for n, k in kinds.items() if k == "NoneType"]}))
"""


def test_the_compile_check_needs_no_driver_and_the_simulators_lists_are_numbas():
    """In a process with Numba's real CUDA target and no GPU (this machine, CI): a kernel calling
    device functions compiles to PTX for the target (it raised CudaSupportError), and every
    name the simulator's ``numba.cuda`` answers for kernels is one a GPU's has."""
    env = env_with_root()
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    proc = subprocess.run([sys.executable, "-c", _REAL_TARGET], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.splitlines()[-1])
    assert out["target"] and out["missing"] == [], out


# -- reading a file as Python does ---------------------------------------------------------------

_SOURCE = "x = 1\ny = 2\n\n@cuda.jit\ndef k(a):\n    a[0] = 5\n"


@pytest.mark.parametrize("data", [
    b"\xef\xbb\xbf" + _SOURCE.encode(),
    _SOURCE.replace("\n", "\r\n").encode(),
    _SOURCE.replace("\n", "\r").encode(),
    b"\xef\xbb\xbf" + _SOURCE.replace("\n", "\r\n").encode(),
], ids=["bom", "crlf", "cr", "bom-crlf"])
def test_a_file_reads_as_python_reads_it(tmp_path, data):
    path = tmp_path / "s.py"
    path.write_bytes(data)
    source = load_source(path)
    assert source.text == _SOURCE
    assert source.line_text(6) == "a[0] = 5" and source.where(6) == "line 6"


def test_a_coding_line_is_honoured_and_a_bad_one_refused(tmp_path):
    path = tmp_path / "s.py"
    path.write_bytes(b"# -*- coding: latin-1 -*-\n# Jos\xe9\nX = 1\n")
    assert load_source(path).line_text(2) == "# José"
    path.write_bytes(b"# Jos\xe9\nX = 1\n")  # no coding line: UTF-8, which this is not
    with pytest.raises(SubmissionError, match="not UTF-8 text"):
        load_source(path)
    path.write_bytes(b"# coding: no-such-codec\nX = 1\n")
    with pytest.raises(SubmissionError, match="cannot be read as Python"):
        load_source(path)


def test_line_numbers_are_pythons_a_form_feed_does_not_end_a_line(tmp_path):
    """``str.splitlines`` splits at a form feed and U+2028, which Python reads inside a line:
    messages then quoted the wrong line."""
    text = "X = 1\n\x0c\nY = 2  # a\u2028b\nZ = 3\n"
    assert python_lines(text) == ["X = 1", "\x0c", "Y = 2  # a\u2028b", "Z = 3"]
    path = tmp_path / "s.py"
    path.write_text(text, encoding="utf-8")
    assert load_source(path).line_text(4) == "Z = 3"


def test_a_notebook_with_a_byte_order_mark_and_crlf_cells(tmp_path):
    nb = {"cells": [{"cell_type": "code", "metadata": {},
                     "source": ["X = 1\r\n", "Y = 2  # \x0c\r\n", "Z = 3"]}],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "s.ipynb"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(nb).encode())
    source = load_source(path)
    assert source.line_text(3) == "Z = 3" and source.where(3) == "cell 1, line 3"


# -- the judge: the simulator's limit and the machine's are said as such -------------------------

def _child(*records) -> ChildRun:
    return ChildRun(records=[(r.to_header(), {}) for r in records])


def _passed() -> list[TestResult]:
    return [TestResult(name="case", kind=Kind.CORRECTNESS, visibility="public",
                       status=Status.PASSED, points=5.0, max_points=5.0, message="correct")]


def test_the_limit_is_read_from_the_childs_records():
    from autograder.simulator.adapter import SimulatorLimit

    assert judge.SIMULATOR_LIMIT == SimulatorLimit.__name__
    text = "cuda.shfl_sync is not run by Numba's CUDA simulator"
    assert judge.simulator_limit(f"SimulatorLimit: tid=[3, 0, 0] ctaid=[1, 0, 0]: {text}") == text
    assert judge.simulator_limit(f"SimulatorLimit: {text}") == text
    assert judge.simulator_limit(f"AttributeError: {text}") is None
    report = {"runs": [{"error": None}, {"error": {"message": f"SimulatorLimit: {text}"}}]}
    assert judge.report_limit(report) == text
    assert judge.report_limit({"runs": [{"error": {"message": "IndexError: x"}}]}) is None
    assert judge.report_limit(None) is None


def test_a_compile_check_the_machine_stopped_is_skipped_not_the_kernels_fault():
    source = _source_of("X = 1\n")
    compiled = _child(Imported({}, [], {}), Error(
        "compile", "CudaSupportError: Error at driver init: CUDA driver library cannot be found."))
    tests = _passed()
    judge.void_unless_compiled(tests, source, _child(Imported({}, [], {})), compiled)
    assert tests[0].status is Status.SKIPPED and tests[0].points == 0
    assert "the grader's setup, not your kernel" in tests[0].message
    rejected = _child(Imported({}, [], {}), Error("compile", "TypingError: no such thing"))
    tests = _passed()
    judge.void_unless_compiled(tests, source, _child(Imported({}, [], {})), rejected)
    assert tests[0].status is Status.ERROR and "does not compile for a real GPU" in tests[0].message
    assert judge.setup_error("CudaSupportError: x") and not judge.setup_error("TypingError: x")


def _source_of(text: str):
    """A ``.py`` Source of ``text``."""
    from autograder.source.submission import Source

    return Source(text, "submission.py", [(None, i) for i in range(1, text.count("\n") + 2)])


# -- a function exercise: NumPy's numbers are numbers ---------------------------------------------

def test_a_function_returning_numpys_numbers_sends_python_numbers(monkeypatch):
    """``np.min([...])`` returns ``numpy.int64``: the child refused it ("must return a number,
    got int64"), and an honest occupancy solution lost every case it decides (red team g8). NumPy
    integer and float scalars are sent as Python's; a bool, NumPy's too, is still not a number."""
    import numpy as np

    from autograder.child import cases as child_cases
    from autograder.child import channel as child_channel
    from autograder.wire.protocol import CaseRequest

    sent: list = []
    monkeypatch.setattr(child_cases, "send", sent.append)
    monkeypatch.setattr(child_channel, "send", sent.append)
    returns = [np.int64(6), np.float32(2.5), np.uint8(7), np.float64(0.25), np.bool_(True), 3]
    student = SimpleNamespace(f=lambda i: returns[i])
    cases = [CaseRequest(f"c{i}", {"call": "f", "args": {"i": i}}, {}, {})
             for i in range(len(returns))]
    child_cases.run_calls(student, cases, "s.py")
    values = {r.id: r.value for r in sent if type(r).__name__ == "CaseResult"}
    assert values == {"c0": 6, "c1": 2.5, "c2": 7, "c3": 0.25, "c5": 3}
    assert [type(values[k]) for k in ("c0", "c1", "c2", "c3")] == [int, float, int, float]
    errors = [r for r in sent if type(r).__name__ == "Error"]
    assert [e.id for e in errors] == ["c4"] and "must return a number, got bool" in \
        errors[0].message


# -- libdevice on the simulator -------------------------------------------------------------------

def test_libdevice_computes_as_a_gpu_or_is_the_simulators_limit():
    """Numba's simulator has libdevice's documentation stubs only (None for every call: NaN
    outputs blamed on the kernel, red team g7). The simulator's functions compute in the
    function's precision with IEEE results where Python's ``math`` raises, and what they do not
    compute is the grader's limit."""
    import math

    import numpy as np

    from autograder.simulator.adapter import SimulatorLimit
    from autograder.simulator.libdevice import functions

    f = functions(["fmaf", "fma", "sinf", "sin", "logf", "sqrt", "fadd_rn", "fadd_ru", "popc",
                   "clz", "float2int_rn", "float_as_int", "isnanf", "roundf", "j0", "tgamma"])
    r = f["fmaf"](np.float32(1.5), np.float32(2.0), np.float32(0.25))
    assert type(r) is np.float32 and r == np.float32(3.25)
    assert f["fma"](0.1, 10.0, -1.0) == 5.551115123125783e-17   # one rounding, not two (0.0)
    assert type(f["sinf"](np.float32(1.0))) is np.float32 and type(f["sin"](1.0)) is float
    assert f["sinf"](np.float32(1.0)) == np.sin(np.float32(1.0))
    assert f["logf"](np.float32(0.0)) == -np.inf and math.isnan(f["sqrt"](-1.0))
    assert f["tgamma"](-1.0) != f["tgamma"](-1.0)   # NaN at a pole, no ValueError
    assert f["fadd_rn"](np.float32(1.0), np.float32(2.0)) == np.float32(3.0)
    assert (f["popc"](-1), f["clz"](1), f["float2int_rn"](2.5), f["float_as_int"](1.0)) == \
        (32, 31, 2, 0x3F800000)
    assert f["isnanf"](np.float32("nan")) == 1 and f["roundf"](np.float32(0.49999997)) == 0.0
    for name in ("fadd_ru", "j0"):
        with pytest.raises(SimulatorLimit, match=f"libdevice.{name} is not run by Numba's CUDA "
                                                  "simulator"):
            f[name](1.0, 2.0)
    assert judge.simulator_limit(f"SimulatorLimit: tid=[0, 0, 0] ctaid=[0, 0, 0]: libdevice.j0 "
                                 "is not run by Numba's CUDA simulator") is not None
