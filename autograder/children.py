"""Running a grading's child processes (:func:`autograder.sandbox.run_child`): the correctness
child, the simulator's compile check and instrumented run, the GPU's timing child and the
compute-sanitizer runs.

On a GPU a grading holds the GPU lock (:mod:`autograder.gpulock`) twice, one hold after the
other and never one inside the other (so gradings in parallel threads or processes cannot
deadlock on it):

1. **shared**, for all of its shared GPU work side by side: the correctness child, the
   compute-sanitizer runs (their findings are kept only when the run shows the submission
   imported, as when they ran after it) and the timing child's start-up, JIT and warm-up, up
   to its ``ready``. Other gradings' shared work may run beside it; no measurement does;
2. **exclusive**, only when every case passed: the timing child's measurement. A warm timing
   child kept waiting for that hold past what its own deadlines leave for measuring is
   replaced by a fresh one, started inside the exclusive hold (so a busy GPU costs time,
   never a spurious timing ``timeout``).

The simulator's instrumented run uses only the host's CPU: it runs beside both holds, holding
nothing.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import diagnostics, environment, gpulock, plan
from .exercises.base import Exercise
from .judge_cases import passed_every_case, spoils_timing
from .protocol import Imported, Ready, received
from .sandbox import ChildRun, Limits, run_child
from .submission import Source

#: The clock of the timing child's deadlines, as :mod:`autograder.sandbox` counts them for a GPU
#: child (wall time; a test may replace it).
_now = time.monotonic
#: Seconds the instructor's self-check may sample (``child_timing.measure_timing``).
SELF_CHECK_BUDGET_S = 3.0
#: Seconds beyond the sampling budgets that a measurement needs (the last round, the records).
MEASURE_MARGIN_S = 5.0


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
    setup (:func:`autograder.environment.raise_for_setup`), and ``SandboxUnavailable``."""
    source_file = work / "submission.py"
    diagnose = plan.diagnose_case(exercise, seed) if exercise.diagnose else None

    def request(backend, phases, cases=(), timing=None, **kw):
        return plan.request(exercise, backend, phases, source_file, list(cases), timing, **kw)

    if backend == "gpu":
        return _run_on_gpu(exercise, source, cases, limits, work, diagnose, sanitize, request)
    jobs = {"run": lambda: run_child(request("sim", ["run", "instrument"], cases,
                                             diagnose=diagnose), "sim", limits, work)}
    # Simulator results count only for a kernel that also compiles for a real GPU (on the
    # simulator a kernel's body runs as Python). The compile check needs Numba's real CUDA
    # target (NVVM, no GPU); Numba picks one at import: another child, side by side.
    if exercise.concept or exercise.contract.kernel:
        jobs["compile"] = lambda: run_child(request("compile", ["compile"]), "compile",
                                            limits, work)
    done = in_parallel(jobs)
    # Packages other than the grader's, or a child dead before its first record: the
    # grader's fault, never the student's (GraderSetupError).
    environment.raise_for_setup(*done.values())
    return Children(done["run"], done.get("compile"), done["run"])


def _run_on_gpu(exercise: Exercise, source: Source, cases: list, limits: Limits, work: Path,
                diagnose, sanitize: bool, request) -> Children:
    """The GPU path of :func:`run_all`: the two holds of the module's docstring."""
    stop_instrument = threading.Event()
    instrument = start_jobs({"instrument": lambda: run_child(
        request("sim", ["instrument"], diagnose=diagnose), "sim", limits, work,
        cancel=stop_instrument)} if diagnose else {})
    timed: TimingChild | None = None
    spoiled = threading.Event()  # a record ruled timing out before the timing child existed
    started = threading.Lock()

    def watch(header: dict, send) -> bool:
        # A case that errors stops the timing child at once (``TimingChild.watch``).
        with started:
            if timed is None:
                if spoils_timing(header):
                    spoiled.set()
                return False
        return timed.watch(header, send)

    jobs = {"run": lambda: run_child(request("gpu", ["compile", "run"], cases), "gpu", limits,
                                     work, on_record=watch)}
    if diagnose and sanitize:
        jobs["sanitize"] = lambda: diagnostics.run_sanitizers(
            request("gpu", ["run"], [diagnose], lineinfo=True), limits, work)
    try:
        with gpulock.gpu(exclusive=False):
            wait = start_jobs(jobs)
            try:
                if exercise.timing:
                    timing = request("gpu", ["time"], timing=plan.timing_request(exercise),
                                     await_go=True)
                    with started:
                        timed = TimingChild(timing, limits, work)
                        if spoiled.is_set():
                            timed.stop()
            finally:
                done = wait()
            go = timed is not None and passed_every_case(exercise, source, done["run"], cases)
            if timed is not None:
                timed.warmed(go)  # its GPU work so far stays inside this shared hold
        timing_run = timed.finish(go) if timed is not None else None
    except BaseException:
        stop_instrument.set()
        raise
    finally:
        if timed is not None:
            timed.close()
        instrumented = instrument()
    run = done["run"]
    environment.raise_for_setup(run, *instrumented.values(), timing_run)
    # As when the sanitizers ran after the correctness child, and only for a submission that
    # imported: findings of a submission that did not are discarded.
    sanitized = (done.get("sanitize") or {}) if received(run).first(Imported) else {}
    return Children(run, run, instrumented.get("instrument", run), timing_run, sanitized)


class TimingChild:
    """The timing child, started inside its grading's shared hold of the GPU: it compiles and
    warms up beside the correctness child, then says ``ready`` and waits for its go.
    :meth:`warmed` (still in the shared hold) stops it or waits for that ``ready``;
    :meth:`finish` takes the GPU alone and lets it measure. :meth:`watch`, the correctness
    child's ``on_record`` hook, stops it as soon as a case errors (timing counts only for a
    kernel that passes every correctness test).

    While it waits for its go, the sandbox's watchdog is paused (the hook blocks) but its
    deadlines keep running: a child whose deadlines (``Limits.timing_timeout`` from its
    ``start`` of the timing phase, ``Limits.total_timeout`` from its spawn, wall time) leave
    less than the measurement needs (the request's sampling budget, the self-check's and
    :data:`MEASURE_MARGIN_S`) is stopped, and :meth:`finish` runs a fresh one instead."""

    def __init__(self, request: dict, limits: Limits, work: Path):
        self._request, self._limits, self._work = request, limits, work
        self._go = threading.Event()
        self._ready = threading.Event()  # said ready, or ended
        self._cancel = threading.Event()
        self._decision = False
        self.stopped = False  # by :meth:`stop`: no go whatever :meth:`finish` is told
        self._was_ready = False
        self._sent_go = False
        self._timing_started: float | None = None
        budget = (request.get("timing") or {}).get("budget_s") or 0.0
        self._needs = float(budget) + SELF_CHECK_BUDGET_S + MEASURE_MARGIN_S
        self._result: dict[str, ChildRun] = {}
        self._error: BaseException | None = None
        self._spawned = _now()  # before the spawn: errs on the safe side
        self._thread = threading.Thread(target=self._run, name="timing-child")
        self._thread.start()

    def _run(self) -> None:
        try:
            self._result["run"] = run_child(self._request, "gpu", self._limits, self._work,
                                            on_record=self._on_record, cancel=self._cancel)
        except BaseException as exc:  # SandboxUnavailable: raised by finish
            self._error = exc
        finally:
            self._ready.set()

    def time_left(self) -> float:
        """Seconds its deadlines leave beyond what a measurement needs (negative: too late)."""
        now = _now()
        left = self._limits.total_timeout - (now - self._spawned)
        if self._timing_started is not None:
            left = min(left, self._limits.timing_timeout - (now - self._timing_started))
        return left - self._needs

    def _on_record(self, header: dict, send) -> bool:
        if not isinstance(header, dict):
            return False
        kind = header.get("type")
        if kind == "start" and header.get("id") == "timing" and self._timing_started is None:
            self._timing_started = _now()
        if kind != Ready.TYPE:  # no fields
            return False
        self._was_ready = True
        self._ready.set()
        # Waiting longer than its deadlines allow would only lead to a killed measurement.
        self._go.wait(timeout=max(0.0, self.time_left()))
        if not self._decision or self.time_left() <= 0:
            return True
        self._sent_go = True
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

    def warmed(self, go: bool) -> None:
        """Called inside the grading's shared hold once the correctness child has ended:
        ``go`` False (a case failed) stops it now; True waits until it is ready for its go (or
        has ended), so that its start-up and warm-up on the GPU stay inside that hold. Bounded
        by the child's own deadlines (its watchdog runs until it says ready)."""
        if not go:
            self.stop()
            return
        self._ready.wait()

    def finish(self, go: bool) -> ChildRun | None:
        """Let it measure (``go``: every case passed, see
        :func:`autograder.judge_cases.passed_every_case`) or stop it; None when it did not
        measure. Call it outside any hold of the GPU lock: with ``go`` it takes the GPU alone
        (blocking until the other gradings' shared work is done) for the measurement, running
        a fresh timing child when this one waited too long. Raises what ``run_child`` raised
        (``SandboxUnavailable``)."""
        if not go or self.stopped:
            self.stop()
            self.close()
            return None
        with gpulock.gpu(exclusive=True):
            self._decision = True
            self._go.set()
            self._thread.join()
            if self._error is not None:
                raise self._error
            if self._was_ready and not self._sent_go:
                return self._fresh()
            return self._result.get("run")

    def _fresh(self) -> ChildRun:
        """A new timing child, inside the exclusive hold: it gets its go as soon as it is
        ready."""
        def on_record(header: dict, send) -> bool:
            if isinstance(header, dict) and header.get("type") == Ready.TYPE:
                send(b"g")
            return False

        return run_child(self._request, "gpu", self._limits, self._work, on_record=on_record)

    def close(self) -> None:
        """Stop it if it still runs and wait for its thread (idempotent)."""
        if self._thread.is_alive():
            self.stop()
            self._thread.join()


def start_jobs(jobs: dict):
    """Start each job (a function returning a ChildRun, or anything) in its own thread now;
    returns a function that waits for them all and returns their results by key. An exception
    of a job (``SandboxUnavailable``, say) is raised by that function, once all have ended."""
    results: dict = {}
    errors: list[BaseException] = []

    def run(key, job) -> None:
        try:
            results[key] = job()
        except BaseException as exc:  # re-raised in the caller's thread, below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(k, f)) for k, f in jobs.items()]
    for t in threads:
        t.start()

    def wait() -> dict:
        for t in threads:
            t.join()
        if errors:
            raise errors[0]
        return results

    return wait


def in_parallel(jobs: dict) -> dict[str, ChildRun]:
    """Run each job (a function returning a ChildRun) in its own thread; their results by key.
    An exception of a job (``SandboxUnavailable``, say) is raised here, once all have ended."""
    return start_jobs(jobs)()
