"""A deadlocked grid barrier costs a GPU case's 5 s limit, and that limit never fails a correct
kernel: nothing is compiled inside a GPU case (the grid-barrier drivers' ``prepare`` compiles the
multi-phase kernel for its launches' exact argument types before the first ``start``; the
occupancy calculator's kernel too), the sanitizer runs keep 15 s, and ``autograder solutions``
starts the gradings that wait out a limit first. No GPU needed: the launches' argument types come
from numba-cuda's own device arrays over a fake allocation."""

from __future__ import annotations

import contextlib
import functools
import importlib
import os
from types import SimpleNamespace

import numpy as np
import pytest

from autograder import exercises
from autograder.judge import diagnostics
from autograder.exercises import known_bad
from autograder.grading import plan
from autograder.judge import sanitizer
from autograder.authoring import solutions as self_check
from autograder.child import cases as child_cases
from autograder.child import channel as child_channel
from autograder.child import harness
from autograder.grading.devices import default_limits
from autograder.nbgrader.public import PUBLIC_LIMITS
from autograder.wire.protocol import CaseRequest, Request
from autograder.sandbox.limits import Limits
from autograder.sandbox.run import ChildRun

BARRIERS = ["grid_barrier", "grid_barrier_lockfree"]
SHARED = ("grid_barrier", "driver")  # build, run_phases, compile_phases


def _driver(name):
    return importlib.import_module(exercises.get(name).contract.driver)


def _barrier():
    from numba import cuda

    @cuda.jit(device=True)
    def barrier(*args):
        pass

    return barrier


# --- the limits ---------------------------------------------------------------------------------

def test_a_gpu_case_gets_5_s_and_the_simulator_keeps_its_cpu_budget():
    assert default_limits("gpu").case_timeout == 5.0
    assert PUBLIC_LIMITS["gpu"].case_timeout == 5.0
    assert default_limits("gpu").total_timeout == 90.0  # compiling still has the whole child's
    assert default_limits("sim").case_timeout == 60.0


def test_sanitizer_runs_keep_a_15_s_case_limit(monkeypatch, tmp_path):
    given = []

    def runner(request, limits, work, **kw):
        given.append(limits)
        return ChildRun()

    monkeypatch.setattr(sanitizer, "executable", lambda: "/bin/true")
    base = default_limits("gpu")
    assert diagnostics.run_sanitizers({"source_path": "s.py"}, base, tmp_path, runner) == {}
    assert len(given) == len(sanitizer.TOOLS)
    for limits in given:
        assert limits.case_timeout == diagnostics.SANITIZER_CASE_TIMEOUT == 15.0
        assert (limits.import_timeout, limits.total_timeout) == (base.import_timeout,
                                                                 base.total_timeout)
    given.clear()  # a caller's longer limit is kept
    diagnostics.run_sanitizers({"source_path": "s.py"}, Limits(case_timeout=40.0), tmp_path,
                               runner)
    assert {lim.case_timeout for lim in given} == {40.0}


# --- prepare compiles for the launches' exact argument types -------------------------------------

class _Allocation:
    """Stands for device memory: a view of it is itself (nothing is read or written)."""

    def view(self, *extent):
        return self


@pytest.fixture
def fake_device(monkeypatch):
    """numba-cuda's ``DeviceNDArray`` over a fake allocation: slicing, reshaping and Numba's
    typing of device arrays are the real ones; no CUDA context is needed."""
    from numba import config, cuda

    if config.ENABLE_CUDASIM:  # run again in a fresh interpreter: test_in_a_fresh_interpreter
        pytest.skip("needs numba-cuda's real device arrays (NUMBA_ENABLE_CUDASIM is set)")
    from numba.cuda.cudadrv import devicearray, devices

    def to_device(host):
        host = np.asarray(host)
        return devicearray.DeviceNDArray(host.shape, host.strides, host.dtype,
                                         gpu_data=_Allocation())

    monkeypatch.setattr(devices._runtime, "ensure_context", contextlib.nullcontext)
    monkeypatch.setattr(cuda, "to_device", to_device)
    monkeypatch.setattr(cuda, "device_array", lambda n, dtype: to_device(np.empty(n, dtype)))
    monkeypatch.setattr(cuda, "synchronize", lambda: None)
    return to_device


class _Kernel:
    """Wraps :func:`build`'s real dispatcher: records the types each ``compile`` is given and
    the types the dispatcher gives a launch's arguments (its own ``typeof_pyval``)."""

    def __init__(self, dispatcher, seen):
        self.dispatcher, self.seen = dispatcher, seen

    def compile(self, types):
        self.seen.append(("compile", tuple(types)))
        return self

    def max_cooperative_grid_blocks(self, threads):
        return 132

    def __getitem__(self, config):
        def launch(*args):
            self.seen.append(("launch", tuple(self.dispatcher.typeof_pyval(a) for a in args)))
        return launch


@pytest.mark.parametrize("name", BARRIERS)
def test_prepare_compiles_what_every_case_launches(monkeypatch, fake_device, name):
    shared = exercises.module(*SHARED)
    seen: list = []
    real_build = shared.build
    monkeypatch.setattr(shared, "build",
                        functools.cache(lambda call: _Kernel(real_build(call), seen)))
    monkeypatch.setattr(shared, "check_state", lambda buffers, names: None)  # reads the GPU
    monkeypatch.setattr(shared, "check_entered", lambda early, blocks: None)  # reads the GPU
    driver, barrier, ex = _driver(name), _barrier(), exercises.get(name)

    driver.prepare(barrier, {})
    assert len(seen) == 1 and seen[0][0] == "compile"
    prepared = seen[0][1]
    from numba import types
    assert prepared[0] == types.UniTuple(types.Array(types.int32, 1, "C"),
                                         2 if name == "grid_barrier_lockfree" else 1)

    for case in plan.make_cases(ex, seed=7):  # every case, through the harness's own views
        request = case.request()
        _, views = child_cases.case_views(
            type("cuda", (), {"to_device": staticmethod(fake_device)}), {}, request)
        seen.clear()
        driver.drive(barrier, views, request.params, {})
        # the occupancy query compiles for the launch's types, then the launch: both prepared
        assert seen == [("compile", prepared), ("launch", prepared)], case.spec.label


def test_in_a_fresh_interpreter():
    """The tests that need numba-cuda's real target (``fake_device``) skip themselves in a
    pytest process that imported Numba as the simulator (a full, parallel run may): here they
    run in a fresh one, whatever this process imported."""
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          "-p", "no:xdist", "-rs", f"{__file__}::"
                          "test_prepare_compiles_what_every_case_launches"],
                         capture_output=True, text=True, env=env, timeout=600,
                         cwd=os.path.dirname(os.path.dirname(__file__)))
    assert out.returncode == 0, out.stdout[-3000:]
    assert "skipped" not in out.stdout and f"{len(BARRIERS)} passed" in out.stdout, out.stdout


_TYPES_PROBE = r"""
import importlib.util, sys
from types import SimpleNamespace
from numba import cuda
from numba.cuda import dispatcher
from autograder import exercises

name = sys.argv[1]
# Device functions called from a kernel ask for the GPU's compute capability: an H200's.
dispatcher.get_current_device = lambda: SimpleNamespace(compute_capability=(9, 0))
shared = exercises.module("grid_barrier", "driver")
driver = exercises.module(name, "driver")
spec = importlib.util.spec_from_file_location("solution", exercises.solution_path(name))
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
barrier = getattr(module, exercises.get(name).contract.kernel)
lock_free = name == "grid_barrier_lockfree"
call = (driver._call_lock_free if lock_free else driver._call_lock_based)(barrier)
ptx, _ = cuda.compile_ptx(shared.build(call).py_func, shared.launch_types(2 if lock_free else 1),
                          cc=(9, 0))
print(".entry" in ptx)
"""


@pytest.mark.parametrize("name", BARRIERS)
def test_the_prepared_types_type_the_kernel_around_the_solution(name):
    """The multi-phase kernel compiles to PTX (no GPU) for prepare's types with the instructor's
    barrier: a type that did not fit the barrier's contract would fail here. In a fresh
    interpreter: Numba's real CUDA target, whatever this process imported before."""
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    out = subprocess.run([sys.executable, "-c", _TYPES_PROBE, name], capture_output=True,
                         text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "True"


# --- the harness: prepare runs before ``ready`` and the first ``start`` ---------------------------

class _HostArray(np.ndarray):
    def copy_to_host(self):
        return np.array(self)


class _HostCuda:
    """The harness's ``cuda`` for a fake run: device arrays are host arrays."""

    @staticmethod
    def to_device(buf):
        return np.array(buf).view(_HostArray)

    @staticmethod
    def synchronize():
        pass


def _run_gpu_phases(monkeypatch, name, prepare, drive, cases=2):
    """Run :func:`harness._run_phases` for ``name``'s first ``cases`` cases as a GPU child
    with a go byte waiting, the driver's ``prepare`` and ``drive`` replaced; returns the
    events in order: records sent (by type) and the hooks' calls."""
    events: list = []

    def send(record):
        events.append(record)

    for module in (harness, child_cases, child_channel):
        monkeypatch.setattr(module, "send", send)
    driver = _driver(name)
    monkeypatch.setattr(driver, "prepare", lambda f, consts: (events.append("prepare"),
                                                              prepare(f, consts)))
    monkeypatch.setattr(driver, "drive", lambda f, views, params, consts: (
        events.append("drive"), drive(f, views, params, consts)))
    ex = exercises.get(name)
    path = exercises.solution_path(name)
    req = Request.from_dict(plan.request(ex, "gpu", ["run"], path,
                                         plan.make_cases(ex, seed=3)[:cases], None,
                                         await_go=True))
    read, write = os.pipe()
    os.write(write, b"g")
    try:
        assert harness._run_phases(_HostCuda, req, None, object(), {}, read)
    finally:
        os.close(read)
        os.close(write)
    return [e if isinstance(e, str) else type(e).__name__ for e in events], events


@pytest.mark.parametrize("name", BARRIERS)
def test_the_harness_prepares_the_driver_before_ready_and_the_first_start(monkeypatch, name):
    order, _ = _run_gpu_phases(monkeypatch, name, lambda f, c: None, lambda *a: None)
    assert order == ["prepare", "Ready", "Start", "drive", "CaseResult",
                     "Start", "drive", "CaseResult"]


def test_a_prepare_that_raises_leaves_the_case_to_report_its_own_error(monkeypatch):
    def prepare(function, consts):
        raise SystemExit("the student's code exited while compiling")

    def drive(function, views, params, consts):
        raise TypeError("No implementation of function grid_barrier(array(int32, 1d, C))")

    order, events = _run_gpu_phases(monkeypatch, "grid_barrier", prepare, drive, cases=1)
    assert order == ["prepare", "Ready", "Start", "drive", "Error"]
    error = events[-1]
    assert error.phase == "run" and error.id is not None
    assert "No implementation of function grid_barrier" in error.message
    assert "exited while compiling" not in error.message


# --- a function exercise's child calls the student's functions and sends their values only -----

def test_function_cases_send_the_value_and_nothing_the_grader_knows(monkeypatch):
    sent: list = []
    monkeypatch.setattr(child_cases, "send", sent.append)
    monkeypatch.setattr(child_channel, "send", sent.append)

    student = SimpleNamespace(resident_blocks_per_sm=lambda threads_per_block,
                              max_threads_per_sm: max_threads_per_sm // threads_per_block)
    cases = [CaseRequest(f"c{i}", {"call": "resident_blocks_per_sm", "against_driver": True,
                                   "args": {"threads_per_block": t, "max_threads_per_sm": 2048}},
                         {}, {})
             for i, t in enumerate((96, 48))]
    child_cases.run_calls(student, cases, "s.py")
    assert [type(r).__name__ for r in sent] == ["Start", "CaseResult", "Start", "CaseResult"]
    assert [r.to_header() for r in sent[1::2]] == [{"type": "case", "id": "c0", "value": 21},
                                                   {"type": "case", "id": "c1", "value": 42}]


# --- autograder solutions: the gradings that wait out a limit start first ------------------------

def test_solutions_starts_the_expected_timeouts_first_and_keeps_the_rows_in_order(monkeypatch):
    names = ["tiled_matmul", "grid_barrier", "grid_barrier_lockfree"]
    started, reported = [], []

    def fake_check(name, path, device, seed=None):
        started.append((name, path.name))
        return self_check.CheckRow(name, path.name, "?", "?", True, 0.0, "gpu:fake")

    monkeypatch.setattr(self_check, "check_submission", fake_check)
    rows = self_check.check_all(names, "gpu", jobs=1,
                                on_exercise=lambda r: reported.append([x.submission for x in r]))

    course = [(n, p.name) for n in names for p in self_check.submissions(n)]
    slow = [(n, p.name) for n in names for p in self_check.submissions(n)
            if any(e.status == "timeout" and e.applies_to("gpu")
                   for e in known_bad.expectations(p))]
    assert len(slow) >= 2 and ("tiled_matmul", "solution.py") not in slow
    assert started == slow + [t for t in course if t not in slow]
    assert [(r.exercise, r.submission) for r in rows] == course  # course order, solution first
    assert sorted(reported) == sorted([p.name for p in self_check.submissions(n)] for n in names)


def test_only_the_expected_timeouts_move_and_none_on_the_simulator():
    tasks = [(n, p) for n in ("grid_barrier", "block_sum", "grid_barrier_lockfree")
             for p in self_check.submissions(n)]
    assert self_check.submission_order(tasks, "sim") == list(range(len(tasks)))
    order = self_check.submission_order(tasks, "gpu")
    slow = [self_check.expects_timeout(tasks[i][1], "gpu") for i in order]
    assert slow == sorted(slow, reverse=True) and sum(slow) >= 2
    assert [i for i, s in zip(order, slow) if not s] == sorted(i for i, s in zip(order, slow)
                                                                if not s)
