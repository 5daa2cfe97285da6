"""Running a grading's child processes (:func:`autograder.sandbox.run.run_child`): on a GPU the
graded child (its cases, then its timing) and the compute-sanitizer runs; the instrumented
simulator run; on the simulator, the correctness child and the compile check.

On a GPU every child holds the GPU lock (:mod:`autograder.host.gpulock`) shared for all of its life,
from before it starts to its exit: creating a CUDA context, loading modules, compute-sanitizer's
own start-up and a context's teardown are GPU work that disturbed other gradings' measurements
(issue 22). Shared holders run side by side. One child per grading
runs the cases and then the timing, so each grading creates one CUDA context and compiles the
student's kernel once for both (creating contexts is what a loaded host waits for). It says
``ready`` at three points (:mod:`autograder.child.harness`) and waits for a byte each time; the
grader answers in that child's thread (:func:`run_holding`):

1. before the cases: go (the lock is held shared: other gradings' cases may run beside them, no
   measurement does);
2. after the cases: the grader judges the cases received so far; go only when every case
   passed (timing counts only for such a kernel), else the child ends;
3. once it has compiled and loaded the instructor's kernel: the grader lets its shared hold go,
   takes the lock **exclusive** for the timing's inputs, warm-up and measurement, and at
   ``done`` makes it shared again until the child has exited.

The sanitizer runs hold the lock shared likewise. A thread that waits for the lock holds
nothing, and a thread that holds it waits only for its own child, which never waits for the
lock, so gradings in parallel threads or processes cannot deadlock on it. Time spent waiting for the grader does not
count against a child's deadlines (:meth:`autograder.sandbox.watchdog.Watchdog.pause`). The
simulator's instrumented run uses only the host's CPU: it holds nothing.
"""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path

from autograder.judge import diagnostics
from autograder.host import environment
from autograder.host import gpulock
from autograder.grading import plan
from autograder.judge.cases import passed_every_case
from autograder.judge.inputs import Children, Grading
from autograder.wire.protocol import Done, Imported, Ready, Start, received
from autograder.sandbox.limits import Limits
from autograder.sandbox.run import ChildRun, run_child


def run_all(grading: Grading, work: Path) -> Children:
    """Run every child of ``grading`` on ``work / "submission.py"`` on its backend, side by
    side, and wait for them: the cases it runs (:attr:`Grading.runnable`) and, where the
    exercise has them, the compile check, the instrumented run, the timing and the sanitizers.
    Raises :class:`autograder.errors.GraderSetupError` for a child that shows a fault of the
    grader's setup (:func:`autograder.host.environment.raise_for_setup`), and
    ``SandboxUnavailable``."""
    exercise, limits = grading.exercise, grading.limits
    source_file = work / "submission.py"
    diagnose = plan.diagnose_cases(exercise, grading.seed) if exercise.diagnose else None

    def request(backend, phases, cases=(), timing=None, **kw):
        return plan.request(exercise, backend, phases, source_file, list(cases), timing, **kw)

    if grading.backend == "gpu":
        return _run_on_gpu(grading, work, diagnose, request)
    jobs = {"run": lambda: run_child(request("sim", ["run", "instrument"], grading.runnable,
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
    return Children(run=done["run"], compiled=done.get("compile"), instrumented=done["run"])


def _run_on_gpu(grading: Grading, work: Path, diagnose, request) -> Children:
    """The GPU path of :func:`run_all`: one child runs the cases and then the timing, the
    sanitizer runs beside it, each holding the GPU lock only for its GPU work (the module's
    docstring). ``diagnose``: the instrumented run's cases (None: none); ``request``:
    :func:`run_all`'s request maker."""
    exercise, limits, cases = grading.exercise, grading.limits, grading.runnable
    stop_instrument = threading.Event()
    instrument = start_jobs({"instrument": lambda: run_child(
        request("sim", ["instrument"], diagnose=diagnose), "sim", limits, work,
        cancel=stop_instrument)} if diagnose else {})
    try:
        if exercise.timing:
            graded = request("gpu", ["compile", "run", "time"], cases,
                             timing=plan.timing_request(exercise, grading.seed),
                             await_go=True)
            steps = TIMED_STEPS

            def decide(records: list) -> bool:  # the verdict, on the records so far
                return passed_every_case(grading, ChildRun(records=list(records)))
        else:
            graded, steps, decide = request("gpu", ["compile", "run"], cases,
                                            await_go=True), CASES_STEPS, None
        jobs = {"run": lambda: run_holding(graded, limits, work, steps, decide)}
        if diagnose and grading.sanitize:
            jobs["sanitize"] = lambda: diagnostics.run_sanitizers(
                request("gpu", ["run"], diagnose[:1], lineinfo=True, await_go=True), limits, work,
                runner=run_holding)
        done = start_jobs(jobs)()
    except BaseException:
        stop_instrument.set()
        raise
    finally:
        instrumented = instrument()
    run, timing_run = split_timing(done["run"])
    environment.raise_for_setup(run, *instrumented.values(), timing_run)
    # As when the sanitizers ran after the cases, and only for a submission that
    # imported: findings of a submission that did not are discarded.
    sanitized = (done.get("sanitize") or {}) if received(run).first(Imported) else {}
    return Children(run=run, compiled=run, instrumented=instrumented.get("instrument", run),
                    timing=timing_run, sanitized=sanitized)


#: What the grader does at each ``ready`` of a GPU child, in order (:func:`run_holding`): a
#: child that runs cases, and one that runs them and then times the kernel.
CASES_STEPS = ("shared",)
TIMED_STEPS = ("shared", "verdict", "exclusive")


def run_holding(request: dict, limits: Limits, work: Path, steps=CASES_STEPS, decide=None,
                **kw) -> ChildRun:
    """Run a GPU child (``request`` with ``await_go``) holding the GPU lock for all of its life
    (:mod:`autograder.host.gpulock`): shared from before it starts (its CUDA context, module loading
    and, under compute-sanitizer, the tool's own start-up are GPU work) to its exit, exclusive
    for a measurement. Its ``ready`` records are answered in order by ``steps``, in this thread:

    * ``"shared"``: go (the lock is held shared already);
    * ``"verdict"``: go when ``decide(records)`` (the records so far) is True, else no (the
      child skips what follows and ends); the lock stays shared (the child loads the
      instructor's kernel next);
    * ``"exclusive"``: let the shared hold go, take the lock alone, then go.

    At ``done`` an exclusive hold becomes shared (:meth:`autograder.host.gpulock.Hold.downgrade`):
    other gradings' work may start, no measurement while this child tears its context down. A
    ``ready`` beyond ``steps`` stops the child. The wait for the shared hold is not the child's
    time (it has not started). ``kw``: passed to :func:`autograder.sandbox.run.run_child`
    (``wrapper``, ``writable``, ``cancel``)."""
    held: list = []  # [(the lock's context manager, its Hold)] while held
    records: list = []
    readies = iter(steps)

    def take(exclusive: bool) -> None:
        hold = gpulock.gpu(exclusive=exclusive)
        held.append((hold, hold.__enter__()))

    def release() -> None:
        while held:
            held.pop()[0].__exit__(None, None, None)

    def on_record(header: dict, send) -> bool:
        if not isinstance(header, dict):
            return False
        kind = header.get("type")
        if kind == Ready.TYPE:
            step = next(readies, None)
            if step is None:
                return True
            if step == "verdict":
                send(b"g" if decide is not None and decide(records) else b"n")
                return False
            if step == "exclusive":
                release()
                take(exclusive=True)
            send(b"g")
        elif kind == Done.TYPE:
            for _, hold in held:
                hold.downgrade()
        return False

    take(exclusive=False)
    try:
        return run_child(request, "gpu", limits, work, on_record=on_record, records=records,
                         **kw)
    finally:
        release()


def split_timing(run: ChildRun) -> tuple[ChildRun, ChildRun | None]:
    """A graded-and-timed child's run as two: the cases' part (what the correctness judges
    read) and the timing's, from its ``start`` record on (None: it did not time). The cases'
    part ended ``finished`` when the timing started (every case had returned)."""
    at = next((i for i, (h, _) in enumerate(run.records) if isinstance(h, dict)
               and h.get("type") == Start.TYPE and h.get("id") == "timing"), None)
    if at is None:
        return run, None
    started = run.records[at][0].get("_arrived") or 0.0
    cases = replace(run, records=run.records[:at], ended="finished", timeout_reason="",
                    timeout_after=0.0, last_started=None)
    timing = replace(run, records=run.records[at:], output="", notes=[],
                     seconds=max(0.0, run.seconds - float(started)))
    return cases, timing


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
