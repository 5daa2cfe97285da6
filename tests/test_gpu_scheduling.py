"""Issue 13: gradings in parallel on one GPU (``autograder solutions --jobs 8``), with fake GPU
children and the real file lock (:mod:`autograder.host.gpulock`, in a temporary folder).

The fake children check the property the lock exists for: a timing measurement has the GPU
alone (no correctness run, warm-up or sanitizer run of any grading beside it). No test asserts
on time; timeouts only guard against a stall."""

from __future__ import annotations

import fcntl
import threading
import time

import pytest

from autograder import exercises
from autograder.grading import children
from autograder.judge import diagnostics
from autograder.judge.inputs import Grading
from autograder.host import gpulock
from autograder.grading import plan
from autograder.sandbox.limits import Limits
from autograder.sandbox.run import ChildRun
from autograder.judge.sanitizer import Report
from autograder.source.submission import load_source

GUARD_S = 60.0  # a stall fails the test after this long; a pass takes well under a second


class FakeGPU:
    """One GPU as the fake children see it: who works on it now, and any moment a measurement
    was not alone."""

    def __init__(self):
        self.lock = threading.Lock()
        self.active: dict[str, int] = {}
        self.violations: list[str] = []
        self.log: list[str] = []

    def work(self, what: str, steps: int = 3) -> None:
        """Use the GPU for a few short steps as ``what`` (``measure`` or shared work)."""
        self.begin(what)
        for _ in range(steps):
            time.sleep(0.002)
            self.check(what)
        self.end(what)

    def begin(self, what: str) -> None:
        with self.lock:
            self.active[what] = self.active.get(what, 0) + 1
            self.log.append(f"begin {what}")
        self.check(what)

    def end(self, what: str) -> None:
        with self.lock:
            self.active[what] -= 1
            self.log.append(f"end {what}")

    def check(self, what: str) -> None:
        with self.lock:
            busy = {k: n for k, n in self.active.items() if n}
            measuring = busy.get("measure", 0)
            others = sum(n for k, n in busy.items() if k != "measure")
            if measuring > 1 or (measuring and others):
                self.violations.append(f"{what} while {busy}")


class FakeChildren:
    """Stands in for ``run_child`` (and ``diagnostics.run_sanitizers``) of GPU gradings, as
    :mod:`autograder.child.harness` runs them: each fake child compiles (no GPU), says ``ready``,
    waits for the go byte and only then uses the fake GPU for its cases; the graded child then
    says ``ready`` for the verdict and, told go, compiles the instructor's kernel, says
    ``ready`` again and measures."""

    def __init__(self, gpu: FakeGPU):
        self.gpu = gpu
        self.on_correctness_ready = None  # called in the graded child, before its first ready
        self.compiled: list[str] = []

    def __call__(self, request, backend, limits, work, on_record=None, cancel=None,
                 records=None, **_):
        phases = request["phases"]
        if backend == "sim":  # the instrumented run: the host's CPU only
            return ChildRun(records=[({"type": "hello"}, {}), ({"type": "done"}, {})])
        run = ChildRun(records=records if records is not None else [])
        what = "sanitizer" if phases == ["run"] else "correctness"
        # A GPU process uses the GPU from its start (its CUDA context, module loading, under
        # compute-sanitizer the tool's own start-up) to its exit (the context's teardown).
        self.gpu.begin(f"{what} context")
        try:
            self._graded(request, run, on_record, what, timed="time" in phases)
        finally:
            self.gpu.end(f"{what} context")
        return run

    def _send(self, run, on_record, header):
        """Send a record; the byte the grader answered with, if any."""
        got: list = []
        run.records.append((header, {}))
        assert on_record(header, got.append) is False
        return got[0] if got else None

    def _compiled(self, what: str) -> None:
        with self.gpu.lock:
            self.compiled.append(what)

    def _graded(self, request, run, on_record, what, timed):
        for header in ({"type": "device", "name": "Fake GPU"}, {"type": "hello"}):
            self._send(run, on_record, header)
        if "import error" in request["source_text"]:
            self._send(run, on_record, {"type": "error", "phase": "import", "message": "x"})
            run.ended = "exited"
            return
        self._send(run, on_record, {"type": "imported", "constants": {"TILE_WIDTH": 16},
                                    "skipped": []})
        self._compiled(what)
        if what == "correctness" and self.on_correctness_ready is not None:
            self.on_correctness_ready()
        assert self._send(run, on_record, {"type": "ready"}) == b"g"
        self.gpu.begin(what)
        for c in request["cases"]:
            time.sleep(0.001)
            self.gpu.check(what)
            self._send(run, on_record, {"type": "case", "id": c["id"]})
        self.gpu.end(what)
        if timed and self._send(run, on_record, {"type": "ready"}) == b"g":
            self._send(run, on_record, {"type": "start", "id": "timing"})
            self._compiled("timing")
            self.gpu.end("correctness context")  # its own context: idle beside its measurement
            assert self._send(run, on_record, {"type": "ready"}) == b"g"
            self.gpu.work("measure")
            self.gpu.begin("correctness context")
            self._send(run, on_record, {"type": "timing"})
        self._send(run, on_record, {"type": "done"})
        run.ended = "finished"

    def sanitizers(self, request, limits, work, runner=None):
        run = runner(request, limits, work, wrapper=(), writable=None)
        return {"racecheck": Report("racecheck", 1, [])} if run.ended == "finished" else {}


@pytest.fixture
def world(monkeypatch, tmp_path):
    """Fake GPU children, the real GPU lock in ``tmp_path``, and every case passing unless the
    correctness child sent an error."""
    gpu = FakeGPU()
    fake = FakeChildren(gpu)
    lock_paths = (tmp_path / "gpu.lock", tmp_path / "gpu.turnstile")
    monkeypatch.setattr(gpulock, "_paths", lambda: lock_paths)
    monkeypatch.setattr(children, "run_child", fake)
    monkeypatch.setattr(diagnostics, "run_sanitizers", fake.sanitizers)
    monkeypatch.setattr(children, "passed_every_case",
                        lambda grading, run, cases=None: not run.of_type("error"))
    fake.lock_paths = lock_paths
    return fake


def _grading(tmp_path, i: int, text: str | None = None):
    """A function that runs every child of one tiled_matmul grading on the fake GPU."""
    ex = exercises.get("tiled_matmul")
    work = tmp_path / f"grading{i}"
    work.mkdir()
    path = exercises.solution_path(ex)
    (work / "submission.py").write_text(text or path.read_text(encoding="utf-8"))
    cases = plan.make_cases(ex, i)[:3]
    limits = Limits(timing_timeout=45.0, total_timeout=90.0)
    grading = Grading(exercise=ex, source=load_source(path), backend="gpu", cases=cases,
                      limits=limits, seed=i, sanitize=True)
    return lambda: children.run_all(grading, work)


def _run_threads(jobs: list) -> list:
    results: list = [None] * len(jobs)

    def one(i, job):
        results[i] = job()

    threads = [threading.Thread(target=one, args=(i, job), daemon=True)
               for i, job in enumerate(jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(GUARD_S)
    assert not any(t.is_alive() for t in threads), "gradings stalled"
    return results


def test_eight_gradings_at_once_all_end_each_measuring_alone(world, tmp_path):
    """``--jobs 8`` on one GPU: every grading ends and measures, and no measurement shares
    the GPU with another grading's correctness run, warm-up, sanitizer run or measurement."""
    done = _run_threads([_grading(tmp_path, i) for i in range(8)])
    assert world.gpu.violations == []
    for kids in done:
        assert kids is not None and kids.timing is not None
        assert kids.timing.first("timing") is not None
        assert set(kids.sanitized) == {"racecheck"}


def test_no_gpu_child_starts_while_another_grading_measures(world, tmp_path):
    """Issue 22: a child's CUDA context, module loading and teardown disturbed measurements
    beside them. While another grading holds the GPU alone, neither a new grading's graded
    child nor its sanitizer run starts; both start once the measurement has ended."""
    grading = _grading(tmp_path, 1)
    with gpulock.gpu(exclusive=True):
        world.gpu.begin("measure")
        thread = threading.Thread(target=grading, daemon=True)
        thread.start()
        time.sleep(0.2)  # room for a child let onto the GPU too early to show itself
        assert world.compiled == [] and world.gpu.log == ["begin measure"]
        world.gpu.end("measure")
    thread.join(GUARD_S)
    assert not thread.is_alive()
    assert world.gpu.violations == []
    log = world.gpu.log
    assert log.index("end measure") < log.index("begin correctness context")
    assert log.index("end measure") < log.index("begin sanitizer context")


def test_a_measurement_waits_for_a_sanitizer_child_to_exit(world, tmp_path, monkeypatch):
    """A compute-sanitizer child holds the GPU shared from before it starts to its exit, so an
    exclusive hold taken meanwhile is granted only once that child has ended."""
    inside, leave = threading.Event(), threading.Event()
    real = world._graded

    def graded(request, run, on_record, what, timed):
        if what == "sanitizer":
            assert gpulock.held() == "shared"  # before its first record: its start-up
            inside.set()
            leave.wait(GUARD_S)
        real(request, run, on_record, what, timed)

    monkeypatch.setattr(world, "_graded", graded)
    ex = exercises.get("tiled_matmul")
    (tmp_path / "submission.py").write_text(exercises.solution_path(ex).read_text())
    request = plan.request(exercises.get("tiled_matmul"), "gpu", ["run"],
                           tmp_path / "submission.py", [], None, await_go=True)
    sanitizer = threading.Thread(target=children.run_holding,
                                 args=(request, Limits(), tmp_path), daemon=True)
    sanitizer.start()
    assert inside.wait(GUARD_S)
    granted: list[float] = []

    def measure():
        with gpulock.gpu(exclusive=True):
            granted.append(time.monotonic())

    measurer = threading.Thread(target=measure, daemon=True)
    measurer.start()
    time.sleep(0.2)
    assert granted == []  # the sanitizer child still runs
    left = time.monotonic()
    leave.set()
    sanitizer.join(GUARD_S)
    measurer.join(GUARD_S)
    assert granted and granted[0] >= left
    assert world.gpu.log[-1] == "end sanitizer context"


def test_the_verdict_on_the_cases_is_taken_holding_the_gpu_shared(world, tmp_path, monkeypatch):
    """Between its cases and its timing the graded child waits for the grader's verdict and then
    loads the instructor's kernel (GPU work): the grader keeps its shared hold meanwhile (no
    measurement can start, other gradings' cases can) and judges without waiting for the lock."""
    seen: list[tuple[bool, bool]] = []

    def free(mode: int) -> bool:
        with open(world.lock_paths[0], "a") as lock:
            try:
                fcntl.flock(lock, mode | fcntl.LOCK_NB)
                fcntl.flock(lock, fcntl.LOCK_UN)
                return True
            except BlockingIOError:
                return False

    def passed_every_case(grading, run, cases):
        seen.append((free(fcntl.LOCK_SH), free(fcntl.LOCK_EX)))
        return [h.get("id") for h, _ in run.records if h.get("type") == "case"] == \
            [c.id for c in cases]

    monkeypatch.setattr(children, "passed_every_case", passed_every_case)
    kids = _run_threads([_grading(tmp_path, 2)])[0]
    assert seen and set(seen) == {(True, False)}  # the public child's, if it had ended, too
    assert kids.timing is not None and kids.timing.first("timing") is not None
    # The public cases ran in a child of their own; the hidden one in the timed child.
    assert kids.run.first("timing") is None and len(kids.run.of_type("case")) == 2
    assert kids.hidden.first("timing") is None and len(kids.hidden.of_type("case")) == 1
    assert world.gpu.violations == []


@pytest.mark.parametrize("exclusive", [False, True])
def test_an_exclusive_hold_downgraded_lets_shared_holders_in_and_no_measurement(
        exclusive, monkeypatch, tmp_path):
    """After ``done`` a measured child tears its context down under a shared hold: other
    gradings' work may start then, another measurement only once the child has exited."""
    monkeypatch.setattr(gpulock, "_paths", lambda: (tmp_path / "l", tmp_path / "t"))
    granted = threading.Event()

    def take():
        with gpulock.gpu(exclusive=exclusive):
            granted.set()

    with gpulock.gpu(exclusive=True) as hold:
        other = threading.Thread(target=take, daemon=True)
        other.start()
        time.sleep(0.1)
        assert not granted.is_set()
        hold.downgrade()
        assert gpulock.held() == "shared" and hold.mode == "shared"
        assert granted.wait(0.5) is not exclusive
    other.join(GUARD_S)
    assert granted.is_set()


def test_time_spent_waiting_for_the_grader_is_not_the_childs():
    """A child kept waiting by a hook (for the GPU lock) keeps its whole deadline afterwards."""
    from autograder.sandbox.watchdog import Watchdog

    limits = Limits(total_timeout=10.0, import_timeout=8.0, clock="wall")
    watch = Watchdog(limits, "gpu", root=0, started=100.0)
    assert watch.expired(109.0) == ("wall", 8.0)  # the import's 8 s ran out
    watch.pause(30.0)  # a hook blocked for 30 s
    assert watch.expired(131.0) is None
    assert watch.expired(139.0) == ("wall", 8.0)
    assert watch.expired(141.0) == ("wall", 8.0)


def test_sanitizers_run_beside_the_correctness_child(world, tmp_path, monkeypatch):
    """The compute-sanitizer runs start while the correctness child still runs (the old order
    waited for it: this would stall until the guard), each holding the GPU shared for its
    cases."""
    started = threading.Event()
    real = world.sanitizers

    def sanitizers(request, limits, work, runner=None):
        started.set()
        return real(request, limits, work, runner=runner)

    monkeypatch.setattr(diagnostics, "run_sanitizers", sanitizers)
    world.on_correctness_ready = lambda: started.wait(GUARD_S) or pytest.fail("ran after")
    kids = _run_threads([_grading(tmp_path, 3)])[0]
    assert set(kids.sanitized) == {"racecheck"}
    assert world.gpu.violations == []
    assert "begin sanitizer" in world.gpu.log


def test_sanitizer_findings_of_a_submission_that_did_not_import_are_dropped(world, tmp_path):
    """As when the sanitizers ran only after an ``imported`` record: no findings without one,
    and no timing."""
    kids = _run_threads([_grading(tmp_path, 4, "# import error\nx = (\n")])[0]
    assert kids.sanitized == {}
    assert kids.timing is None
    assert kids.run.of_type("error")


def test_the_gpu_lock_refuses_a_nested_hold(monkeypatch, tmp_path):
    """A thread that holds the GPU lock and asks again could wait forever (an exclusive
    waiter holds the turnstile): it gets an error instead."""
    monkeypatch.setattr(gpulock, "_paths", lambda: (tmp_path / "l", tmp_path / "t"))
    with gpulock.gpu(exclusive=False):
        assert gpulock.held() == "shared"
        with pytest.raises(RuntimeError, match="already holds"):
            with gpulock.gpu(exclusive=False):
                pass
    assert gpulock.held() is None
