"""Judging the children's records into an exercise's tests: :func:`collect` (the correctness
cases of :mod:`autograder.judge.cases`, the concept test from the PTX, the timing test from the
samples), the simulator's compile check, and what the records tell besides tests (phase times,
skipped statements). Pure: a function of the grading (:class:`autograder.judge.inputs.Grading`:
the exercise, the source, the backend, the planned cases) and the children's records and endings
(:class:`autograder.judge.inputs.Children`); it starts nothing."""

from __future__ import annotations

from autograder.judge import diagnostics
from autograder.judge import ptx
from autograder.judge.cases import TIMING_NAME, all_tests, apply_race_verdict, apply_sanitizer_verdict, case_errors, concept_name, early_failure, early_failure_reason, judge_case, once, where
from autograder.judge.inputs import Children, Grading
from autograder.wire.protocol import CaseResult, Compiled, Error, Hello, Imported, TimingSamples, received
from autograder.wire.results import Kind, Status, TestResult
from autograder.source.submission import Source
from autograder.timing.outputs import wrong_launches
from autograder.timing.measure import (configuration_text, reference_details, self_check_problem,
                                       timing_details, verdict)

TIMING_SKIP = "timing needs a GPU: the simulator gives no timing"
#: The timing test of a kernel that failed a correctness test, on either backend: its points
#: can never be earned, so they are lost, not pending (never "provisional: 25 points need a
#: GPU" for a kernel the GPU would not time).
TIMING_NEEDS_CORRECT = ("timing counts only for a kernel that passes every correctness test: "
                        "fix the failing ones first (the timing itself runs on a GPU)")

#: The name of the exception the simulator child raises where a kernel asks for what Numba's
#: CUDA simulator cannot run and a GPU can (a warp intrinsic):
#: :class:`autograder.simulator.adapter.SimulatorLimit`. The grader's limit, never the kernel's
#: error: such a case is skipped (it needs a GPU), no points either way.
SIMULATOR_LIMIT = "SimulatorLimit"

#: Errors of the compile check that come from the machine it ran on (no CUDA driver where one
#: was asked for, no NVVM), never from the kernel.
SETUP_ERRORS = ("CudaSupportError", "NvvmSupportError")


def simulator_limit(message: str) -> str | None:
    """What the simulator could not run, from an error ``message`` (``"Type: text"``) of a
    :data:`SIMULATOR_LIMIT` (a case's, with Numba's ``tid=[...] ctaid=[...]:`` prefix, or an
    instrumented run's); None for any other error."""
    head = SIMULATOR_LIMIT + ": "
    if not isinstance(message, str) or not message.startswith(head):
        return None
    text = message[len(head):]
    if text.startswith("tid=") and "]: " in text:
        text = text.split("]: ", 2)[-1]
    return text.strip()


def report_limit(report: dict | None) -> str | None:
    """The simulator's limit that stopped one of the instrumented runs (:func:`simulator_limit`
    of its error; ``report``: :func:`autograder.judge.diagnostics.merged`), or None."""
    runs = (report or {}).get("runs") or [{"error": (report or {}).get("error")}]
    for run in runs:
        err = run.get("error") if isinstance(run, dict) else None
        text = simulator_limit(err.get("message") if isinstance(err, dict) else err)
        if text:
            return text
    return None


def limit_text(what: str, whose: str = "the grader's simulator") -> str:
    """The message of a test the grader could not judge here (``what``; ``whose`` limit it is):
    the grader's limit, said as such."""
    return (f"not run: {what}. That is a limit of {whose}, not a fault of your kernel; a GPU "
            "grades this test")


def collect(grading: Grading, kids: Children, report: dict | None = None) -> list[TestResult]:
    """The correctness, concept and timing tests of ``grading``, from its children: ``kids.run``
    ran the planned cases (every one of ``grading.cases`` is judged; those the backend could
    not run are ``skipped``); ``kids.compiled`` is the one whose PTX the concept test reads;
    ``kids.timing`` the timing's part of the graded child (None: it did not measure).
    ``report``: the instrumented runs' merged report
    (:func:`autograder.judge.diagnostics.instrument_report`; None: none), whose races and
    divergent barriers decide every correctness case
    (:func:`autograder.judge.cases.apply_race_verdict`) before the timing test is judged, and
    whose findings, with ``kids.sanitized``'s, fail the concept test
    (:func:`autograder.judge.diagnostics.concept_problems`)."""
    exercise = grading.exercise
    early = early_failure_reason(grading.source, kids.run)
    if early is not None:
        status, message, why = early
        return once(all_tests(exercise, status, message, not_run=why), "not run (see above)")
    tests = []
    correct_everywhere = True
    for c in grading.cases:
        run = kids.run_for(c)  # the public cases' child or the hidden ones'
        test = judge_case(grading, c, run)
        errors = case_errors(received(run)) if grading.backend == "sim" else {}
        limit = simulator_limit(errors[c.id].message) if c.id in errors else None
        if limit and test.status is Status.ERROR:
            test = TestResult(name=test.name, kind=test.kind, visibility=test.visibility,
                              status=Status.SKIPPED, points=0.0, max_points=test.max_points,
                              message=limit_text(limit))
        if test.status is not Status.PASSED and test.status is not Status.SKIPPED:
            correct_everywhere = False
        tests.append(test)
    if apply_race_verdict(grading, tests, report):
        correct_everywhere = False
    elif grading.backend == "gpu" and report_limit(report) and apply_sanitizer_verdict(
            grading, tests, kids.sanitized):
        correct_everywhere = False
    if exercise.concept:
        tests.append(judge_concept(grading, kids.compiled, diagnostics.concept_problems(
            grading, report, kids.sanitized), report_limit(report),
            bounds=diagnostics.bounds_problems(grading.source, report)))
    if exercise.timing:
        tests.append(judge_timing(grading, kids.timing, correct_everywhere))
    return tests


def counted_against_asked(count: int, asked: int, one: str, many: str, call: str) -> str:
    """What the concept test counted against what the exercise asks, e.g. ``"has 1 atomic
    operation (cuda.atomic.*; the exercise asks for at least 2)"``; counts are the source
    lines holding one (:func:`autograder.judge.ptx.facts`)."""
    has = f"has no {one}" if count == 0 else f"has {count} {one if count == 1 else many}"
    return f"{has} ({call}; the exercise asks for at least {asked})"


def _listed(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def setup_error(message: str) -> bool:
    """Whether a compile check's error ``message`` (``"Type: text"``) is the machine's
    (:data:`SETUP_ERRORS`), not the kernel's."""
    return isinstance(message, str) and message.split(":", 1)[0].strip() in SETUP_ERRORS


def judge_concept(grading: Grading, compiled_run, findings: list[str],
                  limit: str | None = None, bounds: list[str] = ()) -> TestResult:
    """The concept test from the PTX facts (shared memory, barriers, atomics, fences) of
    ``compiled_run`` (the child that compiled the kernel for a real GPU) and ``findings`` (the
    diagnostics' problems that fail it, the first three shown). ``limit``: what the simulator
    could not run in the instrumented run (:func:`report_limit`), whose evidence the concept
    test needs: then it is skipped with that reason (the grader's limit), no points. A
    compile check stopped by the machine (:func:`setup_error`) is skipped likewise.

    ``bounds``: those of ``findings`` that are out-of-bounds accesses
    (:func:`autograder.judge.diagnostics.bounds_problems`). They fail the test too, and the
    message says what was found: an out-of-bounds access (the boundary-checks diagnostic
    names each), and, when nothing else fell short, that shared memory and barriers were
    found as the exercise asks; never the exercise's description as if it explained the
    failure."""
    exercise, source = grading.exercise, grading.source
    concept = exercise.concept
    name = concept_name(exercise)
    crx = received(compiled_run)
    facts = crx.first(Compiled)
    if facts is None:
        err = next(iter(crx.errors("compile")), None)
        if err is not None and setup_error(err.message):
            return TestResult(name=name, kind=Kind.CONCEPT, visibility="hidden",
                              status=Status.SKIPPED, points=0.0, max_points=concept.points,
                              message=limit_text("the compile check could not run on this "
                                                 f"machine ({err.message.splitlines()[0]})",
                                                 "the machine the grader ran on"))
        if err is not None:
            msg = (f"{where(source, err)}your kernel does not compile for a real GPU "
                   f"(Numba's CUDA target rejects it): {err.message}")
        else:
            early = early_failure(source, compiled_run)
            msg = early[1] if early else "the compile check did not finish"
        return TestResult(name=name, kind=Kind.CONCEPT, visibility="hidden", status=Status.ERROR,
                          points=0.0, max_points=concept.points, message=msg)
    if limit:
        return TestResult(name=name, kind=Kind.CONCEPT, visibility="hidden",
                          status=Status.SKIPPED, points=0.0, max_points=concept.points,
                          message=limit_text(f"the concept test reads the instrumented "
                                             f"simulator run, and {limit}"))
    found = ptx.facts(facts.ptx)
    missing = []
    if found.shared_bytes < concept.min_shared_bytes:
        missing.append("declares no shared memory (cuda.shared.array)" if not found.shared_bytes
                       else f"declares {found.shared_bytes} bytes of shared memory (the "
                       f"exercise asks for at least {concept.min_shared_bytes})")
    for count, asked, what in ((found.barriers, concept.min_barriers,
                                ("barrier", "barriers", "cuda.syncthreads()")),
                               (found.atomics, concept.min_atomics,
                                ("atomic operation", "atomic operations", "cuda.atomic.*")),
                               (found.fences, concept.min_fences,
                                ("memory fence", "memory fences", "cuda.threadfence()"))):
        if count < asked:
            missing.append(counted_against_asked(count, asked, *what))
    if concept.fenced_atomics and found.atomics and found.fences:
        if not found.fence_before_atomics:
            missing.append("has an atomic operation with no memory fence before it since the "
                           "last barrier, so what the block wrote may not be visible to the "
                           "other blocks when it arrives")
        if not found.fence_after_atomics:
            missing.append("has an atomic operation (a wait) with no memory fence after it "
                           "before the next barrier, so the block may read stale values that "
                           "other blocks wrote")
    detail = (f"{found.shared_bytes} bytes of shared memory, {found.barriers} barrier(s)"
              + (f", {found.atomics} atomic(s), {found.fences} fence(s)"
                 if concept.min_atomics or concept.min_fences else ""))
    oob = [f for f in findings if f in bounds]
    others = [f for f in findings if f not in bounds]
    if oob and not missing and not others:
        more = (f" (and {len(oob) - 1} more, listed under {diagnostics.BOUNDS})"
                if len(oob) > 1 else "")
        return TestResult(name=name, kind=Kind.CONCEPT, visibility="hidden", status=Status.FAILED,
                          points=0.0, max_points=concept.points,
                          message="failed for an out-of-bounds access (a boundary check), not "
                          f"for how the kernel uses shared memory: {oob[0]}{more}. The concept "
                          "test also asks that every index stays inside its array; your "
                          "kernel's shared memory and barriers "
                          f"were found as the exercise asks ({detail})")
    problems = [f"your kernel {_listed(missing)}"] if missing else []
    problems += [f"out-of-bounds access: {f}" for f in oob[:1]] + others[:3 - min(len(oob), 1)]
    if problems:
        return TestResult(name=name, kind=Kind.CONCEPT, visibility="hidden", status=Status.FAILED,
                          points=0.0, max_points=concept.points,
                          message="; ".join(problems) + ". The exercise asks that "
                          f"{concept.description} ({detail})")
    return TestResult(name=name, kind=Kind.CONCEPT, visibility="hidden", status=Status.PASSED,
                      points=concept.points, max_points=concept.points, message=detail)


def judge_timing(grading: Grading, run, correct_everywhere: bool) -> TestResult:
    """The timing test from the timing's samples (``run``; None: it did not measure); no points
    unless ``correct_everywhere`` (every correctness case passed or was skipped: else
    ``failed``, :data:`TIMING_NEEDS_CORRECT`, on either backend), skipped on the simulator
    otherwise; nor points for a kernel any of whose timed launches gave wrong outputs
    (:func:`autograder.timing.outputs.wrong_launches`); an error while the GPU's self-check is
    off, else points for the ratio."""
    exercise, source = grading.exercise, grading.source
    t = exercise.timing

    def result(status, points, msg, details=None):
        return TestResult(name=TIMING_NAME, kind=Kind.TIMING, visibility="hidden", status=status,
                          points=points, max_points=t.points, message=msg, details=details)

    if not correct_everywhere:  # before the simulator's skip: these points are lost, not pending
        return result(Status.FAILED, 0.0, TIMING_NEEDS_CORRECT)
    if grading.backend == "sim":
        return result(Status.SKIPPED, 0.0, TIMING_SKIP)
    if run is None:
        return result(Status.ERROR, 0.0, "timing did not run: a test did not return its outputs")
    rx = received(run)
    rec = rx.first(TimingSamples)
    if rec is None:
        err = next(iter(rx.errors("timing")), None)
        if err:
            return result(Status.ERROR, 0.0, f"{where(source, err)}timing failed: {err.message}")
        if run.ended == "timeout":
            return result(Status.TIMEOUT, 0.0, "timing did not finish in time")
        if run.ended == "capped":
            return result(Status.ERROR, 0.0, f"timing did not run: {run.capped}")
        return result(Status.ERROR, 0.0, "timing did not run: the grading process ended early")
    size = ", ".join(f"{k} {v}" for k, v in t.params.items())
    launches = wrong_launches(rec.checks, exercise.outputs(t.params),
                              exercise.tolerance.rel_frobenius, exercise.tolerance.exact,
                              len(rec.student_ms))
    if launches.message is not None:
        return result(Status.ERROR if launches.grader_fault else Status.FAILED, 0.0,
                      f"at {size}: {launches.message}")
    unstable = self_check_problem(rec.self_a_ms, rec.self_b_ms)
    if unstable:
        return result(Status.ERROR, 0.0, unstable)
    points, stats, msg = verdict(rec.student_ms, rec.instructor_ms, t.full_ratio, t.zero_ratio,
                                 t.points)
    status = Status.PASSED if points >= t.points else Status.FAILED
    details = timing_details(rec.student_ms, rec.instructor_ms, stats, t.full_ratio,
                             t.zero_ratio, t.params)
    details["timing"]["instructor_cached"] = rec.instructor_cached
    details["timing"]["retaken"] = rec.retaken
    details["timing"]["reference"] = reference_details(rec.reference)
    config = configuration_text(rec.reference)  # the instructor's constants, not the student's
    return result(status, points, f"at {size}: {msg}" + (f"; {config}" if config else ""),
                  details)


def instrument_failure(source: Source, run) -> str | None:
    """Why the instrumented run gave no report (an error, a timeout), or None."""
    if run is None:
        return None
    err = next(iter(received(run).errors("instrument")), None)
    if err is not None:
        return f"{where(source, err)}the instrumented run failed: {err.message}"
    if run.ended == "timeout" and run.last_started == "instrument":
        return "the instrumented run did not finish in time"
    return None


def void_unless_compiled(tests: list[TestResult], source: Source, run, compiled_run) -> None:
    """On the simulator a kernel's body runs as Python, which could compute the answer on the
    host or tamper with the child; a body Numba compiles for a GPU can do neither. So correctness
    passed on the simulator counts only when the compile child (which runs no student code)
    compiled the same kernel from the same definitions: the same constants, the same top-level
    statements skipped, and every name bound to the same kind of value
    (:func:`definitions_differ`). A passed test that does not count is an ``error``, or
    ``skipped`` when the compile check was stopped by the machine it ran on
    (:func:`setup_error`: the grader's setup, not the kernel); a skipped timing test then
    fails (:data:`TIMING_NEEDS_CORRECT`). Changes ``tests`` in place."""
    crx = received(compiled_run)
    facts, built = crx.first(Compiled), crx.first(Imported)
    ran = received(run).first(Imported)
    differ = definitions_differ(source, ran, built) if facts is not None else None
    if facts is not None and ran is not None and built is not None and differ is None:
        return
    err = next(iter(crx.errors("compile", "import", "contract")), None)
    if facts is None and err is not None and "NvvmSupportError" in err.message:
        return  # NVVM missing here: nothing to check against (the concept test says so)
    machine = facts is None and err is not None and setup_error(err.message)
    why = ("the compile check could not run on this machine (the grader's setup, not your "
           "kernel)" if machine
           else "it does not compile for a real GPU (see the concept test)" if facts is None
           else differ or "the compile check did not report its definitions")
    voided = False
    for i, t in enumerate(tests):
        if t.kind is Kind.CORRECTNESS and t.status is Status.PASSED:
            voided = voided or not machine
            tests[i] = TestResult(name=t.name, kind=t.kind, visibility=t.visibility,
                                  status=Status.SKIPPED if machine else Status.ERROR,
                                  points=0.0, max_points=t.max_points,
                                  message=f"right on the simulator, but {why}, so the "
                                  "simulator's result does not count"
                                  + ("; a GPU grades this test" if machine else ""))
    for i, t in enumerate(tests):  # a case now fails: the timing's points are lost, not pending
        if voided and t.kind is Kind.TIMING and t.status is Status.SKIPPED:
            tests[i] = TestResult(name=t.name, kind=t.kind, visibility=t.visibility,
                                  status=Status.FAILED, points=0.0, max_points=t.max_points,
                                  message=TIMING_NEEDS_CORRECT)


def definitions_differ(source: Source, ran: Imported | None,
                       built: Imported | None) -> str | None:
    """Why the simulator child (``ran``) and the GPU-compile child (``built``) did not build the
    same definitions, or None when they did: other constants, other top-level statements
    skipped, or a name bound to another kind of value (``bindings``; one child without them
    counts as a difference)."""
    if ran is None or built is None:
        return None
    if ran.constants != built.constants:
        return "the compile check built different constants"
    ran_lines = {line for line, _ in ran.skipped}
    built_lines = {line for line, _ in built.skipped}
    if ran_lines != built_lines:
        line = min(ran_lines ^ built_lines)
        code = source.line_text(line).strip()[:60]
        on = "the simulator" if line in ran_lines else "the GPU compile"
        return (f"{source.where(line)} (`{code}`) was skipped on {on} only: the simulator "
                "and a GPU would run different code")
    if ran.bindings is None or built.bindings is None:
        return "the compile check did not report its definitions"
    names = sorted(set(ran.bindings) | set(built.bindings))
    for name in names:
        a, b = ran.bindings.get(name), built.bindings.get(name)
        if a != b:
            return (f"{name} is {_binding_text(a)} on the simulator and {_binding_text(b)} "
                    "when compiled for a GPU: the simulator and a GPU would run different code")
    return None


def _binding_text(value: str | None) -> str:
    if value is None:
        return "not defined"
    kind, _, rest = value.partition(":")
    return {"data": f"the value {rest.partition(':')[2][:40]}", "callable": "a function",
            "module": f"the module {rest}", "kernel": f"the kernel {rest.split(':')[0]}",
            "function": f"the function {rest.split(':')[0]}",
            "type": f"the type {rest[:40]}"}.get(kind, f"a {rest or kind}")


def skipped_note(source: Source, run) -> str:
    """The instructor's note naming the top-level statements the child skipped (at most 6)."""
    rx = received(run)
    rec = rx.first(Imported) or next(iter(rx.errors("contract")), None)
    items = rec.skipped if rec else None
    if not items:
        return ""
    shown = []
    for lineno, reason in items[:6]:
        code = source.line_text(lineno)[:60]
        shown.append(f"{source.where(lineno)}" + (f" (`{code}`)" if code else "")
                     + f": {reason[:160]}")
    more = f" and {len(items) - len(shown)} more" if len(items) > len(shown) else ""
    return ("the grader runs only your imports of numba, numpy and math, constant assignments "
            "and function definitions; it skipped " + "; ".join(shown) + more)


def phase_split(kids: Children) -> dict[str, float]:
    """Seconds per phase of the children, from when the correctness child's records arrived:
    ``startup`` (interpreter, numba, CUDA context), ``import``, ``compile``, ``tests``; the
    timing's part (``timing_child``) and the compile child (``compile_child``) whole;
    ``total``: the correctness child's wall time."""
    run, compiled_run, timing_run = kids.run, kids.compiled, kids.timing
    rx = received(run)
    split, last = {}, 0.0
    for phase, kind in (("startup", Hello), ("import", Imported), ("compile", Compiled)):
        rec = rx.first(kind)
        if rec is not None and rec.arrived is not None:
            split[phase] = round(rec.arrived - last, 3)
            last = rec.arrived
    cases = [r.arrived for r in rx.records if r.arrived is not None and (
        type(r) is CaseResult or (type(r) is Error and r.phase == "run"))]
    if cases:
        split["tests"] = round(max(cases) - last, 3)
        last = max(cases)
    if timing_run is not None:
        split["timing_child"] = round(timing_run.seconds, 3)
    split["total"] = round(run.seconds, 3)
    if compiled_run is not None and compiled_run is not run:
        split["compile_child"] = round(compiled_run.seconds, 3)
    return split
