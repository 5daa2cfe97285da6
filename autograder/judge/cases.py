"""Judging a child's records (:mod:`autograder.wire.protocol`) into correctness tests: the outputs of
each case against the float64 reference, a function's value against the expected one (the
instructor's, or the driver's that :mod:`autograder.grading.driver_occupancy` asked for), and what
a child that never got that far means. Pure: a function of the grading
(:class:`autograder.judge.inputs.Grading`: the exercise, the submission's source, the backend,
the planned cases) and the children's records and endings; it starts nothing."""

from __future__ import annotations

import numpy as np

from autograder.wire import buffers
from autograder.judge import diagnostics
from autograder.wire import shapes
from autograder.judge.compare import check_margins, compare_output, wrong_mask
from autograder.exercises.base import Exercise
from autograder.judge.inputs import Grading
from autograder.wire.protocol import CaseResult, Error, Imported, ProtocolError, Rejected, Start, received
from autograder.wire.results import Kind, Status, TestResult
from autograder.source.submission import Source

SIM_SKIP = ("the simulator runs one Python thread per CUDA thread, so this size runs on a GPU "
            "only")
TIMING_NAME = "timing: against the instructor's kernel"
# Phases whose error rules out every case passing (so the kernel is not timed).
SPOILS_TIMING = ("environment", "import", "contract", "run")


def concept_name(exercise: Exercise) -> str:
    """The concept test's name: ``"concept: "`` and its description up to the first colon."""
    return "concept: " + exercise.concept.description.split(":")[0]


def where(source: Source, err: Error) -> str:
    """``"submission.py:12 (`code`): "`` for an error record that names a line, else ``""``."""
    if not err.lineno:
        return ""
    code = source.line_text(err.lineno)
    return f"{source.where(err.lineno)}" + (f" (`{code}`)" if code else "") + ": "


#: Why none of a submission's code ran, in a few fixed words (``details["not_run"]`` of each
#: test :func:`all_tests` makes): a hidden test says ``"not run: <reason>"``
#: (:func:`autograder.report.parts.hidden_text`), never that the code raised an error.
NOT_RUN_NO_CODE = "the submission has no code"
NOT_RUN_UNREADABLE = "the submission could not be read as Python"
NOT_RUN_IMPORT = "loading your code failed"
NOT_RUN_CONTRACT = "your code does not fit the exercise (its names or signatures)"
NOT_RUN_IMPORT_TIMEOUT = "loading your code did not finish in time"
NOT_RUN_IMPORT_ENDED = "the grading process ended while loading your code"
NOT_RUN_DEFAULT = "your code did not load"


def all_tests(exercise: Exercise, status: Status, message: str,
              not_run: str = NOT_RUN_DEFAULT) -> list[TestResult]:
    """Every test of ``exercise`` (cases, concept, timing, diagnostics) with one status and
    message and no points: a submission that never reached its cases. Unless ``status`` is
    ``skipped``, each test's ``details`` is ``{"not_run": not_run}``: why nothing ran, in a few
    fixed words (``NOT_RUN_*``: a refusal's reason, an empty file), which a hidden test shows
    in place of its message."""
    details = None if status is Status.SKIPPED else {"not_run": not_run}

    def test(name, kind, visibility, max_points):
        return TestResult(name=name, kind=kind, visibility=visibility, status=status,
                          points=0.0, max_points=max_points, message=message,
                          details=dict(details) if details else None)

    tests = [test(c.name, Kind.CORRECTNESS, c.visibility, c.points) for c in exercise.cases]
    if exercise.concept:
        tests.append(test(concept_name(exercise), Kind.CONCEPT, "hidden",
                          exercise.concept.points))
    if exercise.timing:
        tests.append(test(TIMING_NAME, Kind.TIMING, "hidden", exercise.timing.points))
    diags = diagnostics.all_tests(exercise, status, message)
    for t in diags:
        t.details = dict(details) if details else None
    return tests + diags


def once(tests: list[TestResult], rest: str) -> list[TestResult]:
    """``tests`` that all carry one message: the first public one (else the first) keeps it,
    the others say ``rest``, so a report shows the problem once."""
    keep = next((t for t in tests if t.visibility == "public"), tests[0] if tests else None)
    for t in tests:
        if t is not keep:
            t.message = rest
    return tests


def output_hint(run) -> str:
    """The last lines the child printed, for a message about a child that ended early; ``""``
    once a test had started (:func:`printed_for_student`: that output is the instructor's)."""
    if received(run).first(Start) is not None:
        return ""
    tail = run.output.strip().splitlines()[-3:]
    return (" Last output: " + " | ".join(tail)) if tail else ""


def printed_tail(text: str, total_lines: int = 0, limit: int = 1500) -> str:
    """The end of what a child printed (``text``, :attr:`autograder.sandbox.run.ChildRun.output`)
    in at most about ``limit`` characters, from a line start, with ``"(N earlier lines not
    shown)"`` first when lines were left out (``total_lines``: how many the child printed in
    all, of which ``text`` holds the last; 0: only ``text``'s). Blank lines at either end are
    dropped. A last line longer than ``limit`` keeps its end, after ``"…"``; ``""`` when
    nothing but blanks was printed."""
    lines = text.splitlines()
    before = max(0, total_lines - len(lines))  # printed, but not in ``text`` at all
    while lines and not lines[-1].strip():
        lines.pop()
    kept, size = [], 0
    for line in reversed(lines):
        if kept and size + len(line) + 1 > limit:
            break
        kept.insert(0, line)
        size += len(line) + 1
    hidden = before + len(lines) - len(kept)
    while kept and not kept[0].strip():
        kept.pop(0)
    if not kept:
        return ""
    if len(kept) == 1 and len(kept[0]) > limit:
        kept[0] = "…" + kept[0][-limit:]
    return (f"({hidden} earlier line{'s' if hidden != 1 else ''} not shown)\n" if hidden > 0
            else "") + "\n".join(kept)


def printed_for_student(run, cases) -> bool:
    """May the student see what the child ``run`` printed? Only when no hidden input was there
    to print: the child never started a test (no ``start`` record: what it printed came before
    any of the student's code ran, such as an import's warnings), or the ``cases`` it was given
    (:class:`autograder.grading.plan.PlannedCase`) are all public (the public cases' own child,
    :mod:`autograder.grading.children`, or a public-tests run, whose inputs the notebook shows
    anyway). The first ``start`` is sent before the student's code first runs, so a hostile
    child cannot hide it. Else what it printed goes to the instructor alone: a ``print`` in a
    kernel would list the hidden cases' sizes and inputs."""
    if received(run).first(Start) is None:
        return True
    return all(c.spec.visibility == "public" for c in cases)


def early_failure(source: Source, run) -> tuple[Status, str] | None:
    """If the child (a :class:`autograder.sandbox.run.ChildRun`) never got past import and contract
    checks, the status and message for all tests (a timed-out run says which limit ran out)."""
    early = early_failure_reason(source, run)
    return None if early is None else early[:2]


def early_failure_reason(source: Source, run) -> tuple[Status, str, str] | None:
    """:func:`early_failure` with why nothing ran in a few fixed words (``NOT_RUN_*``) third,
    for :func:`all_tests`' ``not_run``."""
    rx = received(run)
    if rx.first(Imported):
        return None
    for err in rx.errors("import", "contract"):
        what = ("importing your code failed" if err.phase == "import"
                else "your code does not fit the exercise")
        return (Status.ERROR, f"{where(source, err)}{what}: {err.message}",
                NOT_RUN_IMPORT if err.phase == "import" else NOT_RUN_CONTRACT)
    if run.ended == "timeout":
        return Status.TIMEOUT, ("your code's top-level statements did not finish in time "
                                + run.timeout_text("is there an endless loop outside the kernel?")
                                ), NOT_RUN_IMPORT_TIMEOUT
    if run.ended == "capped":  # its process tree went over a cap (autograder.sandbox.caps)
        return Status.ERROR, f"while your code was imported, {run.capped}", NOT_RUN_IMPORT_ENDED
    return Status.ERROR, (f"the grading process ended while importing your code (exit code "
                          f"{run.exit_code}); does it call exit() or kill processes?"
                          + output_hint(run)), NOT_RUN_IMPORT_ENDED


def case_outputs(rx) -> dict:
    """The first ``case`` record per case id (the one that counts): a
    :class:`~autograder.wire.protocol.CaseResult`, or :class:`~autograder.wire.protocol.Rejected`."""
    first: dict = {}
    for r in rx.records:
        if type(r) is CaseResult or (type(r) is Rejected and r.kind == "case"):
            first.setdefault(r.id, r)
    return first


def case_errors(rx) -> dict:
    """The first ``error`` record of phase ``run`` per case id."""
    errors: dict = {}
    for err in rx.errors("run"):
        errors.setdefault(err.id, err)
    return errors


def judge_case(grading: Grading, c, run) -> TestResult:
    """The correctness test of one planned case ``c`` (:class:`autograder.grading.plan.PlannedCase`)
    of ``grading``, from the child ``run`` that ran it (:class:`autograder.sandbox.run.ChildRun`):
    its first ``case`` record (:func:`case_outputs`) or ``error`` record (:func:`case_errors`),
    judged at the submission's constants, or how the child ended before it. A record that does
    not fit (a malformed result from the child) is an ``error`` that says so, never the
    grader's crash."""
    spec = c.spec
    try:
        status, points, msg, *details = _case_verdict(grading, c, run)
    except Exception as exc:  # noqa: BLE001 - the child's record, never the grader's crash
        why = exc if isinstance(exc, ProtocolError) else type(exc).__name__
        status, points, msg, details = (
            Status.ERROR, 0.0, f"the grading process sent a malformed result ({why})", [])
    return TestResult(name=spec.name, kind=Kind.CORRECTNESS, visibility=spec.visibility,
                      status=status, points=points, max_points=spec.points, message=msg,
                      details=details[0] if details else None)


def _case_verdict(grading: Grading, c, run) -> tuple:
    """(status, points, message) or (status, points, message, details) of one case; raises
    for outputs that do not fit (:func:`judge_case` says so)."""
    exercise, source, backend = grading.exercise, grading.source, grading.backend
    spec = c.spec
    if backend == "sim" and not spec.sim:
        return Status.SKIPPED, 0.0, spec.why_gpu or SIM_SKIP
    rx = received(run)
    outputs, errors = case_outputs(rx), case_errors(rx)
    imported = rx.first(Imported)
    consts = imported.constants if imported is not None else {}
    if c.id in errors and errors[c.id].finding:
        return Status.FAILED, 0.0, errors[c.id].message
    if c.id in errors:
        what = "function" if exercise.contract.functions else "kernel"
        return (Status.ERROR, 0.0,
                f"{where(source, errors[c.id])}your {what} raised {errors[c.id].message}")
    if c.id not in outputs:
        if run.ended == "timeout" and run.last_started == c.id:
            # CPU clock: the simulator, where a barrier some threads never reach does not hang
            loop = ("an endless loop?" if run.timeout_reason == "cpu"
                    else "an endless loop, or a barrier some threads never reach?")
            who = "your function" if exercise.contract.functions else "the kernel"
            return Status.TIMEOUT, 0.0, f"{who} did not finish in time {run.timeout_text(loop)}"
        if run.ended == "timeout" and run.last_started is None:
            # Stopped after the import, before any test began: on a GPU, that is compiling.
            if backend == "gpu" and not exercise.contract.functions:
                return Status.TIMEOUT, 0.0, (
                    "not run: your kernel was still being compiled when the grading process "
                    "ran out of time " + run.timeout_text(
                        "is it very long, or does it unroll a very long loop?"))
            return Status.TIMEOUT, 0.0, ("not run: the grading process ran out of time before "
                                         "the first test began " + run.timeout_text(
                                             "does your code start something that never ends?"))
        if run.ended == "timeout":
            return Status.TIMEOUT, 0.0, "not run: an earlier test ran out of time"
        if run.ended == "capped":
            return Status.ERROR, 0.0, f"not run: {run.capped}"
        return Status.ERROR, 0.0, ("not run: the grading process ended early (exit code "
                                   f"{run.exit_code}) or an earlier kernel broke the GPU context"
                                   + output_hint(run))
    got = outputs[c.id]
    if type(got) is Rejected:
        raise ProtocolError(got.reason)
    if exercise.contract.functions:
        if got.value is None:
            raise ProtocolError("case record without a value")
        expected = c.expected(exercise.reference, spec.params)["value"]
        # against_driver: asked of the driver by the grader (autograder.grading.driver_occupancy.fill)
        return judge_value(spec.params, got.value, expected, spec.points,
                           "the driver's occupancy calculator"
                           if spec.params.get("against_driver") else "expected")
    expected = c.expected(exercise.reference, {**spec.params, **consts})
    problems, masks = [], []
    for name, (shape, _) in c.outputs.items():
        shape = shapes.evaluate(shape, spec.params, consts)
        buf = got.outputs[name]
        margin_msg = check_margins(name, buf, tuple(shape))
        out, _ = buffers.split_guarded(buf, tuple(shape))
        ok, msg = compare_output(name, out, expected[name], exercise.tolerance)
        if not ok:
            problems.append(msg)
            masks.append(wrong_mask(name, out, expected[name], exercise.tolerance))
        if margin_msg:
            problems.append(margin_msg)
    if problems:
        masks = [m for m in masks if m]
        return Status.FAILED, 0.0, "; ".join(problems), ({"wrong_masks": masks} if masks else None)
    return Status.PASSED, spec.points, "correct"


#: What the first case decided by a race says after the race (:func:`apply_race_verdict`);
#: the other cases point to it with :data:`RACE_SEE_FIRST`.
RACE_RULE = ("On a GPU the outputs of such a kernel depend on the order its threads happen to "
             "run, so they can be right in one run and wrong in the next: every correctness "
             "case of a kernel with a race (in shared or global memory) or a barrier not every "
             "thread reaches counts as failed, whatever its outputs were, so the grade never "
             "depends on that order. Fix it (the diagnostic tests name each one) and the cases are judged on "
             "their outputs again")
RACE_SEE_FIRST = ("counted as failed: the kernel has a race (in shared or global memory) or a "
                  "barrier that not every thread reaches, so its outputs depend on the order its "
                  "threads run (see {})")
#: What a case decided by the race verdict adds when this backend never ran it (a GPU-only
#: size on the simulator): its outputs were never seen, so nothing says they were wrong.
RACE_NOT_RUN = ("; this size was not run here (it runs on a GPU only): the verdict does not "
                "depend on its outputs")


def apply_race_verdict(grading: Grading, tests: list[TestResult], report: dict | None) -> bool:
    """The deterministic verdict for a kernel whose outputs depend on scheduling.

    A kernel with a shared-memory race or a barrier that not every live thread reaches (a
    ``cuda.syncthreads()`` missing between a write and another thread's read, inside a branch,
    after an early return) gives outputs that depend on the order its threads run: on a GPU the
    same file got 10, 20 and 25 points in one class (issue 22). Outputs cannot decide such a
    kernel, however often it is launched: a race that shows one launch in ten passes three
    launches seven times in ten. So the decision rests on the instrumented simulator run
    (:mod:`autograder.instrument`), which finds hazards from the set of accesses between two
    barriers, in a fixed thread order, never from the values a run happened to see: the same
    source, constants and diagnose sizes always give the same findings, on either backend, with
    compute-sanitizer on or off (its findings stay diagnostics and never decide a case).

    When ``report`` (:func:`autograder.judge.diagnostics.instrument_report`) holds such a finding,
    every correctness case of the kernel exercise becomes ``failed`` with no points (``tests``
    changed in place; ``details``: ``{"decided_by": "race", "observed": <the status its outputs
    got>}``, for the instructor): the first public case's message names the first finding and
    the rule, the others point to that case (:data:`RACE_SEE_FIRST`); cases the simulator could
    not run are decided too, as the verdict does not depend on running them. The timing test
    then gives nothing, as for any kernel that fails a case. Returns True when it decided.
    Without a report (no ``Diagnose``, a function exercise, an instrumented run that failed),
    nothing changes and the outputs decide as before."""
    exercise = grading.exercise
    if exercise.diagnose is None or exercise.contract.functions or not isinstance(report, dict):
        return False
    hazards = diagnostics.scheduling_hazards(grading.source, report)
    if not hazards:
        return False
    # sizes the simulator never runs (a GPU's only): decided too, and said to be not run here
    unrun = ({c.spec.name for c in grading.cases if not c.spec.sim}
             if grading.backend == "sim" else set())
    _fail_every_case(tests, hazards, "race", unrun)
    return True


def apply_sanitizer_verdict(grading: Grading, tests: list[TestResult], sanitized: dict) -> bool:
    """The race verdict where the instrumented simulator run could not give one: on a GPU, for
    a kernel whose instrumented run stopped at something the simulator cannot run (a warp
    intrinsic, :func:`autograder.judge.collect.report_limit`), compute-sanitizer's racecheck and
    synccheck at the graded sizes decide instead, as :func:`apply_race_verdict` does (every
    correctness case ``failed``, ``details["decided_by"]`` ``"sanitizer"``). Without it a
    ``cuda.syncwarp()`` as a racy kernel's first line kept its GPU outputs' points (a red-team
    student, 2026-11-27). ``sanitized``: the tools' reports (empty when they did not run: the
    outputs then decide, as before). Returns True when it decided."""
    exercise = grading.exercise
    if exercise.diagnose is None or exercise.contract.functions or not sanitized:
        return False
    hazards = diagnostics.sanitizer_hazards(grading.source, sanitized)
    if not hazards:
        return False
    _fail_every_case(tests, hazards, "sanitizer")
    return True


def _fail_every_case(tests: list[TestResult], hazards: list[str], decided_by: str,
                     unrun: set[str] = frozenset()) -> None:
    """Every correctness case of ``tests`` ``failed`` with no points for ``hazards`` (in
    place): the first public case names the first hazard and :data:`RACE_RULE`, the others
    point to it. The cases named in ``unrun`` (sizes this backend never runs) add
    :data:`RACE_NOT_RUN` and ``details["not_run_here"]``: nothing says their outputs were
    wrong. What each says depends on the backend and the case, never on its outputs."""
    more = f" (and {len(hazards) - 1} more)" if len(hazards) > 1 else ""
    cases = [i for i, t in enumerate(tests) if t.kind is Kind.CORRECTNESS]
    first = next((i for i in cases if tests[i].visibility == "public"), cases[0] if cases else None)
    for i in cases:
        t = tests[i]
        message = (f"counted as failed: {hazards[0]}{more}. {RACE_RULE}" if i == first else
                   RACE_SEE_FIRST.format(tests[first].name))
        details = {"decided_by": decided_by, "observed": t.status.value}
        if t.name in unrun:  # a size this backend never runs: say so
            message += RACE_NOT_RUN
            details["not_run_here"] = True
        tests[i] = TestResult(name=t.name, kind=t.kind, visibility=t.visibility,
                              status=Status.FAILED, points=0.0, max_points=t.max_points,
                              message=message, details=details)


def judge_value(params: dict, got, expected, points: float, source: str = "expected") -> tuple:
    """A function exercise's case: exact for ints, relative 1e-9 for floats."""
    call = f"{params['call']}({', '.join(f'{k}={v}' for k, v in params['args'].items())})"
    if not isinstance(expected, (int, float, np.integer, np.floating)):
        return Status.ERROR, 0.0, f"{call}: no value to compare with ({source})"
    if isinstance(expected, (int, np.integer)):
        ok = got == expected
    else:
        ok = abs(got - expected) <= 1e-9 * max(1.0, abs(expected))
    if ok:
        return Status.PASSED, points, f"{call} = {got}"
    return Status.FAILED, 0.0, f"{call} returned {got}, {source} says {expected}"


def ran_every_case(run, cases) -> bool:
    """True when the child returned outputs for every case (timing a broken kernel is moot)."""
    rx = received(run)
    done = {r.id for r in rx.all(CaseResult)}
    return rx.first(Imported) is not None and all(c.id in done for c in cases)


def passed_every_case(grading: Grading, run, cases=None) -> bool:
    """True when the GPU child ``run`` returned the outputs of every case it ran (``cases``,
    planned cases; None: :attr:`autograder.judge.inputs.Grading.runnable`) and each is correct
    (:func:`judge_case`): only then is the kernel timed. Any doubt (an error record, a rejected
    record) is False."""
    rx = received(run)
    cases = grading.runnable if cases is None else tuple(cases)
    if not ran_every_case(run, cases) or any(type(r) is Rejected for r in rx.records):
        return False
    if rx.errors(*SPOILS_TIMING):
        return False
    return all(judge_case(grading, c, run).status is Status.PASSED for c in cases)
