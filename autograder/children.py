"""Running a grading's child processes (:func:`autograder.sandbox.run_child`): the correctness
child, the simulator's compile check and instrumented run, the GPU's timing child and the
compute-sanitizer runs.

On a GPU every child starts at once, holding nothing: starting Python, importing Numba and
compiling (most of a child's life) is the host's work. A GPU child says ``ready`` just before
its first GPU work (:mod:`autograder.harness`) and waits; the grader takes the GPU lock
(:mod:`autograder.gpulock`) for it in that child's thread, sends the go byte, and lets the lock
go when the child is done (:func:`run_holding`):

* **shared** for the correctness child's and the sanitizer runs' cases: other gradings' cases
  may run beside them, no measurement does;
* **exclusive** for the timing child's inputs, warm-up and measurement, and only once the
  correctness child has ended with every case passed (:class:`TimingChild`); a case that fails
  stops the timing child at once, wherever it is.

A thread that waits for the lock holds nothing, and a thread that holds it waits only for its
own child's GPU work, so gradings in parallel threads or processes cannot deadlock on it. Time
spent waiting for the lock does not count against a child's deadlines
(:meth:`autograder.sandbox._Watchdog.pause`). The simulator's instrumented run uses only the
host's CPU: it holds nothing.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path

from . import diagnostics, environment, gpulock, plan
from .exercises.base import Exercise
from .judge_cases import passed_every_case, spoils_timing
from .protocol import Done, Imported, Ready, received
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
    """The GPU path of :func:`run_all`: every child at once, each holding the GPU lock only for
    its GPU work (the module's docstring)."""
    stop_instrument = threading.Event()
    instrument = start_jobs({"instrument": lambda: run_child(
        request("sim", ["instrument"], diagnose=diagnose), "sim", limits, work,
        cancel=stop_instrument)} if diagnose else {})
    timed: TimingChild | None = None
    try:
        if exercise.timing:
            timed = TimingChild(request("gpu", ["time"], timing=plan.timing_request(exercise),
                                        await_go=True), limits, work)
        watch = timed.watch if timed is not None else None
        jobs = {"run": lambda: run_holding(request("gpu", ["compile", "run"], cases,
                                                   await_go=True), limits, work, watch=watch)}
        if diagnose and sanitize:
            jobs["sanitize"] = lambda: diagnostics.run_sanitizers(
                request("gpu", ["run"], [diagnose], lineinfo=True, await_go=True), limits, work,
                runner=run_holding)
        done = start_jobs(jobs)()
        timing_run = None
        if timed is not None:
            timed.decide(passed_every_case(exercise, source, done["run"], cases))
            timing_run = timed.finish()
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


def run_holding(request: dict, limits: Limits, work: Path, exclusive: bool = False,
                decide=None, watch=None, **kw) -> ChildRun:
    """Run a GPU child (``request`` with ``await_go``), holding the GPU lock for it from its
    ``ready`` to its ``done`` (or its end), in this thread: shared, or ``exclusive``.
    ``decide()``: called at ``ready``, before the lock is asked for (it may block); False stops
    the child there. ``watch(header, send)``: another ``on_record`` hook, called first (True
    stops the child). ``kw``: passed to :func:`autograder.sandbox.run_child` (``wrapper``,
    ``writable``, ``cancel``)."""
    held = []  # the lock's context manager while held

    def on_record(header: dict, send) -> bool:
        if watch is not None and watch(header, send):
            return True
        if not isinstance(header, dict):
            return False
        kind = header.get("type")
        if kind == Ready.TYPE and not held:
            if decide is not None and not decide():
                return True
            hold = gpulock.gpu(exclusive=exclusive)
            hold.__enter__()
            held.append(hold)
            send(b"g")
        elif kind == Done.TYPE:
            release()
        return False

    def release() -> None:
        while held:
            held.pop().__exit__(None, None, None)

    try:
        return run_child(request, "gpu", limits, work, on_record=on_record, **kw)
    finally:
        release()


class TimingChild:
    """The timing child, started with its grading's other children: it compiles both kernels
    (the host's work), says ``ready`` and waits. :meth:`decide` gives the verdict of the
    correctness child: go (every case passed) lets it take the GPU alone (exclusive, in its own
    thread) and measure; no go stops it wherever it is. :meth:`watch`, the correctness child's
    ``on_record`` hook, says no go as soon as a case errors (timing counts only for a kernel
    that passes every correctness test)."""

    def __init__(self, request: dict, limits: Limits, work: Path):
        self._decided = threading.Event()
        self._go = False
        self._cancel = threading.Event()
        self._result: dict[str, ChildRun] = {}
        self._error: BaseException | None = None
        self._thread = threading.Thread(
            target=self._run, args=(request, limits, work), name="timing-child")
        self._thread.start()

    def _run(self, request: dict, limits: Limits, work: Path) -> None:
        try:
            self._result["run"] = run_holding(request, limits, work, exclusive=True,
                                              decide=self._wait_for_decision,
                                              cancel=self._cancel)
        except BaseException as exc:  # SandboxUnavailable: raised by finish
            self._error = exc

    def _wait_for_decision(self) -> bool:
        self._decided.wait()
        return self._go

    def decide(self, go: bool) -> None:
        """The correctness verdict (first call wins): ``go`` True lets it measure, False stops
        it now (thread-safe)."""
        if self._decided.is_set():
            return
        self._go = go
        self._decided.set()
        if not go:
            self._cancel.set()

    def watch(self, header: dict, send) -> bool:
        """The correctness child's ``on_record`` hook: no go on a record that rules out timing
        (:func:`autograder.judge_cases.spoils_timing`). Never stops the correctness child
        (returns False)."""
        if spoils_timing(header):
            self.decide(False)
        return False

    def finish(self) -> ChildRun | None:
        """Wait for it (call :meth:`decide` first); its run, or None when it did not measure.
        Raises what ``run_child`` raised (``SandboxUnavailable``)."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._result.get("run") if self._go else None

    def close(self) -> None:
        """Stop it if it still runs and wait for its thread (idempotent)."""
        if self._thread.is_alive():
            self.decide(False)
            self._cancel.set()
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
