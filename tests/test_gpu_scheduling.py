"""Issue 13: gradings in parallel on one GPU (``autograder solutions --jobs 8``), with fake GPU
children and the real file lock (:mod:`autograder.gpulock`, in a temporary folder).

The fake children check the property the lock exists for: a timing measurement has the GPU
alone (no correctness run, warm-up or sanitizer run of any grading beside it). No test asserts
on time; timeouts only guard against a stall."""

from __future__ import annotations

import fcntl
import threading
import time

import pytest

from autograder import children, diagnostics, exercises, gpulock, plan
from autograder.sandbox import ChildRun, Limits
from autograder.sanitizer import Report
from autograder.submission import load_source

GUARD_S = 60.0  # a stall fails the test after this long; a pass takes well under a second


def _clock() -> float:
    """The children's clock (:data:`autograder.children._now`), which a test may move on."""
    return getattr(children, "_now", time.monotonic)()


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
    """Stands in for ``run_child`` (and ``diagnostics.run_sanitizers``) of GPU gradings."""

    def __init__(self, gpu: FakeGPU):
        self.gpu = gpu
        self.timing_children = 0
        self.stopped_at_ready = 0
        self.on_correctness = None  # called in the correctness child, while it runs

    def __call__(self, request, backend, limits, work, on_record=None, cancel=None, **_):
        phases = request["phases"]
        if backend == "sim":  # the instrumented run: the host's CPU only
            return ChildRun(records=[({"type": "hello"}, {}), ({"type": "done"}, {})])
        if phases == ["time"]:
            return self._timing(limits, on_record, cancel)
        return self._correctness(request, on_record)

    def _correctness(self, request, on_record):
        self.gpu.begin("correctness")
        if self.on_correctness is not None:
            self.on_correctness()
        run = ChildRun()
        headers = [{"type": "device", "name": "Fake GPU"}, {"type": "hello"}]
        if "import error" in request["source_text"]:
            headers.append({"type": "error", "phase": "import", "message": "NameError: x"})
        else:
            headers.append({"type": "imported", "constants": {"TILE_WIDTH": 16}, "skipped": []})
            headers += [{"type": "case", "id": c["id"]} for c in request["cases"]]
        for header in headers + [{"type": "done"}]:
            run.records.append((header, {}))
            if on_record is not None:
                assert on_record(header, lambda data: None) is False
            self.gpu.check("correctness")
        time.sleep(0.002)
        self.gpu.end("correctness")
        run.ended = "finished"
        return run

    def _timing(self, limits, on_record, cancel):
        """Warm up, say ready, wait for the go; the sandbox's watchdog as seen through the
        children's clock: a go that comes after the child's deadlines finds it killed."""
        with self.gpu.lock:
            self.timing_children += 1
        spawned = _clock()
        self.gpu.begin("warm-up")
        for _ in range(3):
            if cancel is not None and cancel.is_set():
                self.gpu.end("warm-up")
                return ChildRun(ended="cancelled")
            time.sleep(0.002)
            self.gpu.check("warm-up")
        self.gpu.end("warm-up")
        on_record({"type": "start", "id": "timing"}, None)
        got = []
        if on_record({"type": "ready"}, got.append):
            with self.gpu.lock:
                self.stopped_at_ready += 1
            return ChildRun(ended="cancelled")
        assert got == [b"g"]
        if _clock() - spawned > limits.total_timeout:
            return ChildRun(ended="timeout", timeout_reason="wall")
        self.gpu.work("measure")
        return ChildRun(records=[({"type": "start", "id": "timing"}, {}),
                                 ({"type": "timing"}, {}), ({"type": "done"}, {})],
                        ended="finished")

    def sanitizers(self, request, limits, work):
        self.gpu.work("sanitizer")
        return {"racecheck": Report("racecheck", 1, [])}


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
                        lambda exercise, source, run, cases: not run.of_type("error"))
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
    return lambda: children.run_all(ex, load_source(path), "gpu", cases, limits, work, i, True)


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


def test_a_timing_child_warms_up_only_inside_its_gradings_shared_hold(world, tmp_path,
                                                                    monkeypatch):
    """While another grading measures (holds the GPU alone), a new grading starts no GPU
    child at all, its timing child included: it waits for the shared hold."""
    grading = _grading(tmp_path, 1)
    waiting = threading.Event()
    real_gpu = gpulock.gpu

    def gpu(exclusive):
        if not exclusive:
            waiting.set()
        return real_gpu(exclusive)

    with real_gpu(exclusive=True):
        world.gpu.begin("measure")
        monkeypatch.setattr(gpulock, "gpu", gpu)
        thread = threading.Thread(target=grading, daemon=True)
        thread.start()
        assert waiting.wait(GUARD_S)
        time.sleep(0.05)  # room for a child started without the lock to show itself
        world.gpu.end("measure")
    thread.join(GUARD_S)
    assert not thread.is_alive()
    assert world.gpu.violations == []
    assert world.gpu.log.index("end measure") < world.gpu.log.index("begin warm-up")


def test_a_timing_child_kept_waiting_past_its_deadlines_is_replaced(world, tmp_path,
                                                                    monkeypatch):
    """The grading's correctness run ends while another grading waits to measure; that one
    measures first, and by the children's clock for longer than the first grading's warm
    timing child may live. The grader then measures with a fresh timing child inside its own
    exclusive hold instead of letting a killed child turn into a timing ``timeout``."""
    clock = [1000.0]
    monkeypatch.setattr(children, "_now", lambda: clock[0], raising=False)
    other = threading.Event()

    def another_grading_measures():
        with gpulock.gpu(exclusive=True):
            world.gpu.begin("measure")
            clock[0] += 500.0  # longer than total_timeout
            world.gpu.end("measure")
        other.set()

    def start_the_other_grading():
        threading.Thread(target=another_grading_measures, daemon=True).start()
        # It is waiting for our shared hold, holding the turnstile: it measures before us.
        deadline = time.monotonic() + GUARD_S
        with open(world.lock_paths[1], "a") as probe:
            while time.monotonic() < deadline:
                try:
                    fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    return
                fcntl.flock(probe, fcntl.LOCK_UN)
                time.sleep(0.002)
        raise AssertionError("the other grading never asked for the GPU")

    world.on_correctness = start_the_other_grading
    kids = _run_threads([_grading(tmp_path, 2)])[0]
    assert other.is_set()
    assert world.timing_children == 2 and world.stopped_at_ready == 1
    assert kids.timing is not None and kids.timing.ended == "finished"
    assert kids.timing.first("timing") is not None
    assert world.gpu.violations == []


def test_sanitizers_run_beside_the_correctness_child(world, tmp_path, monkeypatch):
    """The compute-sanitizer runs start while the correctness child still runs (the old order
    waited for it: this would stall until the guard)."""
    started = threading.Event()
    real = world.sanitizers

    def sanitizers(request, limits, work):
        started.set()
        return real(request, limits, work)

    monkeypatch.setattr(diagnostics, "run_sanitizers", sanitizers)
    world.on_correctness = lambda: started.wait(GUARD_S) or pytest.fail("ran after")
    kids = _run_threads([_grading(tmp_path, 3)])[0]
    assert set(kids.sanitized) == {"racecheck"}
    assert world.gpu.violations == []


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
