"""Running a grading's child processes (:func:`autograder.sandbox.run_child`): the correctness
child, the simulator's compile check and instrumented run, the GPU's timing child (which gets
the GPU alone, :mod:`autograder.gpulock`, only once every case passed) and the sanitizers."""

from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass, field
from pathlib import Path

from . import diagnostics, gpulock, plan, preflight
from .exercises.base import Exercise
from .judge_cases import passed_every_case, spoils_timing
from .protocol import Imported, Ready, received
from .sandbox import ChildRun, Limits, run_child
from .submission import Source


@dataclass
class Children:
    """What a grading's children returned: ``run`` (the correctness child), ``compiled`` (whose
    PTX the concept test reads: ``run`` on a GPU, the compile child on the simulator),
    ``instrumented`` (the instrumented run's child), ``timing`` (None: it did not measure) and
    ``sanitized`` (compute-sanitizer reports by tool; empty when none ran)."""

    run: ChildRun
    compiled: ChildRun | None
    instrumented: ChildRun | None
    timing: ChildRun | None = None
    sanitized: dict = field(default_factory=dict)


def run_all(exercise: Exercise, source: Source, backend: str, cases: list, limits: Limits,
            work: Path, seed: int, sanitize: bool) -> Children:
    """Run every child of one grading of ``work / "submission.py"`` on ``backend`` (``gpu`` or
    ``sim``), side by side, and wait for them. ``cases``: the planned cases to run. Raises
    :class:`autograder.errors.GraderSetupError` for a child that shows a fault of the grader's
    setup (:func:`autograder.preflight.raise_for_setup`), and ``SandboxUnavailable``."""
    source_file = work / "submission.py"
    timing = plan.timing_request(exercise) if (backend == "gpu" and exercise.timing) else None
    diagnose = plan.diagnose_case(exercise, seed) if exercise.diagnose else None

    def request(backend, phases, cases=(), timing=None, **kw):
        return plan.request(exercise, backend, phases, source_file, list(cases), timing, **kw)

    timed = TimingChild(request("gpu", ["time"], timing=timing, await_go=True), limits,
                        work) if timing else None
    jobs = {}
    if backend == "gpu":
        # Other workers' correctness runs may share this GPU; timing runs have it alone. A
        # case that errors stops the timing child at once (``TimingChild.watch``).
        jobs["run"] = lambda: on_gpu(False, lambda: run_child(
            request("gpu", ["compile", "run"], cases), "gpu", limits, work,
            on_record=timed.watch if timed else None))
        if diagnose:  # the instrumented launch runs on the simulator, beside the GPU child
            jobs["instrument"] = lambda: run_child(
                request("sim", ["instrument"], diagnose=diagnose), "sim", limits, work)
    else:
        jobs["run"] = lambda: run_child(request("sim", ["run", "instrument"], cases,
                                                diagnose=diagnose), "sim", limits, work)
        # Simulator results count only for a kernel that also compiles for a real GPU (on
        # the simulator a kernel's body runs as Python). The compile check needs Numba's real
        # CUDA target (NVVM, no GPU); Numba picks one at import: another child, side by side.
        if exercise.concept or exercise.contract.kernel:
            jobs["compile"] = lambda: run_child(request("compile", ["compile"]), "compile",
                                                limits, work)
    done = in_parallel(jobs)
    run = done["run"]
    timing_run = timed.finish(go=passed_every_case(exercise, source, run, cases)) \
        if timed else None
    # Packages other than the grader's, or a child dead before its first record: the
    # grader's fault, never the student's (GraderSetupError).
    preflight.raise_for_setup(*done.values(), timing_run)
    kids = Children(run, run if backend == "gpu" else done.get("compile"),
                    done.get("instrument", run), timing_run)
    if backend == "gpu" and diagnose and sanitize and received(run).first(Imported):
        kids.sanitized = on_gpu(False, lambda: diagnostics.run_sanitizers(
            request("gpu", ["run"], [diagnose], lineinfo=True), limits, work))
    return kids


class TimingChild:
    """The timing child, started beside the correctness child: it compiles and warms up while
    the GPU is shared, then waits (``ready``) for :meth:`finish` to give it the GPU alone.
    :meth:`watch`, the correctness child's ``on_record`` hook, stops it as soon as a case errors
    (timing counts only for a kernel that passes every correctness test)."""

    def __init__(self, request: dict, limits: Limits, work: Path):
        self._go = threading.Event()
        self._cancel = threading.Event()
        self._decision = False
        self.stopped = False  # by :meth:`stop`: no go whatever :meth:`finish` is told
        self._lock = contextlib.ExitStack()
        self._result: dict[str, ChildRun] = {}
        self._thread = threading.Thread(target=lambda: self._result.update(run=run_child(
            request, "gpu", limits, work, on_record=self._on_record, cancel=self._cancel)))
        self._wait = limits.timing_timeout
        self._thread.start()

    def _on_record(self, header: dict, send) -> bool:
        if not (isinstance(header, dict) and header.get("type") == Ready.TYPE):  # no fields
            return False
        self._go.wait(timeout=self._wait)
        if not self._decision:
            return True
        self._lock.enter_context(gpulock.gpu(exclusive=True))
        send(b"g")
        return False

    def stop(self) -> None:
        """Stop it now, whether it is warming up or waiting for its go (thread-safe)."""
        self.stopped = True
        self._decision = False
        self._cancel.set()
        self._go.set()

    def watch(self, header: dict, send) -> bool:
        """The correctness child's ``on_record`` hook: :meth:`stop` on a record that rules out
        timing (:func:`autograder.judge_cases.spoils_timing`). Never stops the correctness
        child (returns False)."""
        if not self.stopped and spoils_timing(header):
            self.stop()
        return False

    def finish(self, go: bool) -> ChildRun | None:
        """Let it measure (``go``: every case passed, see
        :func:`autograder.judge_cases.passed_every_case`) or stop it; None when it did not
        measure."""
        go = go and not self.stopped
        self._decision = go
        if not go:
            self._cancel.set()
        self._go.set()
        self._thread.join()
        self._lock.close()
        return self._result.get("run") if go else None


def on_gpu(exclusive: bool, job):
    """Run ``job()`` holding this worker's GPU shared (correctness) or alone (timing)."""
    with gpulock.gpu(exclusive):
        return job()


def in_parallel(jobs: dict) -> dict[str, ChildRun]:
    """Run each job (a function returning a ChildRun) in its own thread; their results by key.
    An exception of a job (``SandboxUnavailable``, say) is raised here, once all have ended."""
    results: dict[str, ChildRun] = {}
    errors: list[BaseException] = []

    def run(key, job) -> None:
        try:
            results[key] = job()
        except BaseException as exc:  # re-raised in the caller's thread, below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(k, f)) for k, f in jobs.items()]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return results
