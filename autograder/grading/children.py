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
from autograder.grading.devices import default_limits
from autograder.judge.cases import passed_every_case
from autograder.judge.inputs import Children, Grading
from autograder.judge.withheld import withheld
from autograder.wire.protocol import Done, Imported, Ready, Start, received
from autograder.sandbox.limits import Limits
from autograder.sandbox.run import ChildRun, run_child


def run_all(grading: Grading, work: Path) -> Children:
    """Run every child of ``grading`` on ``work / "submission.py"`` on its backend, side by
    side, and wait for them: the cases it runs (:attr:`Grading.runnable`), the public ones in a
    child of their own and the hidden ones in another (only the first may tell the student what
    the code said: :mod:`autograder.judge.withheld`), each with its cases' instrumented runs
    (:func:`autograder.grading.plan.evidence_cases`), and, where the exercise has them, the
    compile check, the timing and the sanitizers. Raises
    :class:`autograder.errors.GraderSetupError` for a child that shows a fault of the grader's
    setup (:func:`autograder.host.environment.raise_for_setup`), and ``SandboxUnavailable``."""
    exercise, limits = grading.exercise, grading.limits
    source_file = work / "submission.py"

    def request(backend, phases, cases=(), timing=None, **kw):
        return plan.request(exercise, backend, phases, source_file, list(cases), timing, **kw)

    if grading.backend == "gpu":
        return _run_on_gpu(grading, work, request)
    jobs = {}
    for key, cases in _apart(grading.runnable).items():
        phases = ["run", "instrument"] if exercise.diagnose else ["run"]
        jobs[key] = (lambda cases=cases, phases=phases: run_child(
            request("sim", phases, cases, diagnose=plan.evidence_cases(
                exercise, cases, grading.seed)), "sim", limits, work))
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
    run, hidden, withheld = _for_student(grading, done.get("public"), done.get("hidden"))
    return Children(run=run, hidden=hidden, compiled=done.get("compile"),
                    instrumented=joined([run, hidden]) if exercise.diagnose else None,
                    withheld=withheld)


def _apart(cases) -> dict:
    """``{"public": ..., "hidden": ...}``: the planned ``cases`` of each kind that has some (a
    child each); ``{"hidden": []}`` when there is none (a child that builds the definitions)."""
    public, hidden = plan.by_visibility(cases)
    apart = {k: v for k, v in (("public", public), ("hidden", hidden)) if v}
    return apart or {"hidden": []}


def _for_student(grading: Grading, public, hidden, findings_kept: bool = False):
    """(run, hidden, withheld) for :class:`Children` from the public cases' child and the
    hidden cases' child (either None: none ran): ``run`` is the public child when there is one,
    else the hidden one; the hidden child's run is its :func:`withheld` copy (a child that ran
    no case held no hidden input and is read as it is); ``withheld``: what was taken out."""
    taken = []
    if hidden is not None and any(c.spec.visibility != "public" for c in grading.cases):
        hidden, out = withheld(hidden, {c.id: c.spec.name for c in grading.cases},
                               findings_kept)
        taken.append(out)
    if public is None:
        return hidden, None, taken
    return public, hidden, taken


def joined(runs) -> ChildRun | None:
    """One run holding the records of ``runs`` (None items left out) in order, for the judges
    of the instrumented runs (:func:`autograder.judge.diagnostics.instrument_report`,
    :func:`autograder.judge.collect.instrument_failure`); it ended as the first that did not
    finish (else as the last). None for no run."""
    runs = [r for r in runs if r is not None]
    if not runs:
        return None
    if len(runs) == 1:
        return runs[0]
    ending = next((r for r in runs if r.ended != "finished"), runs[-1])
    return replace(ending, records=[rec for r in runs for rec in r.records],
                   notes=[n for r in runs for n in r.notes])


def instrument_limits(limits: Limits) -> Limits:
    """The limits of a GPU grading's instrumented simulator children: ``limits`` with at least
    the simulator's case and total budgets (:func:`autograder.grading.devices.default_limits`):
    an instrumented launch of a GPU-only size costs seconds of CPU time, which a GPU case's
    limit does not allow."""
    sim = default_limits("sim")
    return replace(limits, case_timeout=max(limits.case_timeout, sim.case_timeout),
                   total_timeout=max(limits.total_timeout, sim.total_timeout),
                   case_cpu_per_element=0.0)


def _run_on_gpu(grading: Grading, work: Path, request) -> Children:
    """The GPU path of :func:`run_all`: the public cases' child and the hidden cases' child,
    which then times the kernel, and the sanitizer runs beside them, each holding the GPU lock
    only for its GPU work (the module's docstring); the instrumented runs of the public and of
    the hidden cases in simulator children of their own. ``request``: :func:`run_all`'s
    request maker."""
    exercise, limits = grading.exercise, grading.limits
    apart = _apart(grading.cases)
    graded = "hidden" if "hidden" in apart else "public"  # the child that times the kernel
    stop_instrument = threading.Event()
    instrument = start_jobs({key: (lambda cases=cases: run_child(
        request("sim", ["instrument"], diagnose=plan.evidence_cases(exercise, cases,
                                                                    grading.seed)),
        "sim", instrument_limits(limits), work, cancel=stop_instrument))
        for key, cases in apart.items() if cases} if exercise.diagnose else {})
    public_done: dict = {}  # the public child's run, once it ended (read by the verdict)
    try:
        jobs = {}
        if exercise.timing:
            timed = request("gpu", ["compile", "run", "time"], apart[graded],
                            timing=plan.timing_request(exercise, grading.seed),
                            await_go=True)
            steps = TIMED_STEPS

            def decide(records: list) -> bool:  # the verdict, on the records so far
                if not passed_every_case(grading, ChildRun(records=list(records)),
                                         apart[graded]):
                    return False
                public = public_done.get("run")  # never waited for: the lock's rule
                return public is None or passed_every_case(grading, public, apart["public"])
        else:
            timed, steps, decide = request("gpu", ["compile", "run"], apart[graded],
                                           await_go=True), CASES_STEPS, None
        jobs[graded] = lambda: run_holding(timed, limits, work, steps, decide)
        if graded == "hidden" and "public" in apart:
            def public_job() -> ChildRun:
                run = run_holding(request("gpu", ["compile", "run"], apart["public"],
                                          await_go=True), limits, work)
                public_done["run"] = run
                return run
            jobs["public"] = public_job
        if exercise.diagnose and grading.sanitize and grading.cases:
            jobs["sanitize"] = lambda: diagnostics.run_sanitizers(
                request("gpu", ["run"], plan.sanitizer_cases(grading.cases), lineinfo=True,
                        await_go=True), limits, work, runner=run_holding)
        done = start_jobs(jobs)()
    except BaseException:
        stop_instrument.set()
        raise
    finally:
        instrumented = instrument()
    cases_run, timing_run = split_timing(done[graded])
    runs = [done.get("public") if graded == "hidden" else None, cases_run]
    environment.raise_for_setup(*[r for r in runs if r is not None], *instrumented.values(),
                                timing_run)
    public, hidden = (runs[0], cases_run) if graded == "hidden" else (cases_run, None)
    run, hidden, taken = _for_student(grading, public, hidden, findings_kept=True)
    if timing_run is not None and graded == "hidden":
        timing_run, out = withheld(timing_run, findings_kept=True)
        taken.append(out)
    public_instrument, hidden_instrument = instrumented.get("public"), instrumented.get("hidden")
    if hidden_instrument is not None:
        hidden_instrument, out = withheld(hidden_instrument,
                                          {c.id: c.spec.name for c in grading.cases})
        taken.append(out)
    # As when the sanitizers ran after the cases, and only for a submission that
    # imported: findings of a submission that did not are discarded.
    sanitized = (done.get("sanitize") or {}) if received(run).first(Imported) else {}
    return Children(run=run, hidden=hidden, compiled=run,
                    instrumented=joined([public_instrument, hidden_instrument]) or run,
                    timing=timing_run, sanitized=sanitized, withheld=taken)


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
