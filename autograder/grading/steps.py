"""One grading, after the preflight: a submission's source → child process(es) on the GPU or
the simulator → typed records → judged tests (the data flow of DESIGN.md). The steps are
modules of their own: planning the cases and requests (:mod:`autograder.grading.plan`), running the
children (:mod:`autograder.grading.children`), judging their records into tests
(:mod:`autograder.judge.collect`, :mod:`autograder.judge.cases`: pure). :func:`autograder.grader.grade`
is the public entry (device, limits and the preflight first); the preflight grades the
instructor's solution through :func:`grade_submission` itself. :func:`grade_submission` makes
the grading's :class:`autograder.judge.inputs.Grading` once; the children and the judges take it
(and the children's runs, :class:`autograder.judge.inputs.Children`) instead of loose values.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from autograder.grading import children
from autograder.judge import diagnostics
from autograder.grading import driver_occupancy
from autograder.judge import collect as judge
from autograder.sandbox import parse_check
from autograder.sandbox.mode import UNSANDBOXED_NOTE
from autograder.grading import plan
from autograder.grading.devices import default_limits
from autograder.judge.cases import (NOT_RUN_NO_CODE, NOT_RUN_UNREADABLE, all_tests, early_failure,
                                    once, printed_for_student)
from autograder.judge.inputs import Children, Grading
from autograder.wire.protocol import Device, received
from autograder.wire.results import WITHHELD_NOTE, ExerciseResult, Status
from autograder.sandbox.limits import Limits
from autograder.sandbox.run import scratch_dir
from autograder.source.submission import EmptySubmission, SubmissionError, load_source


def grade_submission(submission, exercise, backend: str, seed: int | None,
                     limits: Limits | None, sanitize: bool) -> ExerciseResult:
    """Grade ``submission`` (a path) for ``exercise`` (an :class:`Exercise`) on ``backend``
    (``"gpu"`` or ``"sim"``, resolved) with the secret ``seed`` (random when None). Never raises
    for a bad submission; raises :class:`autograder.errors.GraderSetupError` when the grader
    cannot grade here."""
    seed = secrets.randbits(63) if seed is None else int(seed)
    result = ExerciseResult(exercise.name, str(submission), backend, seed=seed)
    try:
        source = load_source(submission)
    except SubmissionError as exc:
        result.tests = all_tests(exercise, Status.ERROR, str(exc), not_run=(
            NOT_RUN_NO_CODE if isinstance(exc, EmptySubmission) else NOT_RUN_UNREADABLE))
        return result
    refusal = parse_check.check(source)  # in a child: the grader's process never compiles it
    if refusal is not None:
        result.tests = once(all_tests(exercise, Status.ERROR, refusal.message,
                                      not_run=refusal.reason),
                            f"not run: {refusal.reason} (see above)")
        return result
    cases = driver_occupancy.fill(exercise, plan.make_cases(exercise, seed), backend)
    grading = Grading(exercise=exercise, source=source, backend=backend, cases=cases,
                      limits=limits or default_limits(backend), seed=seed, sanitize=sanitize)
    return _grade_source(grading, result)


def _grade_source(grading: Grading, result: ExerciseResult) -> ExerciseResult:
    """Run the children of ``grading`` and fill ``result`` from their records: tests,
    diagnostics, hints, notes, phase times and the device."""
    exercise, source = grading.exercise, grading.source
    if exercise.needs_gpu and grading.backend == "sim":
        result.tests = all_tests(exercise, Status.SKIPPED,
                                 "needs a GPU: the simulator runs blocks one after another")
        return result
    with scratch_dir() as tmp:
        work = Path(tmp)
        (work / "submission.py").write_text(source.text, encoding="utf-8")
        kids = children.run_all(grading, work)
    result.phases_s = judge.phase_split(kids)
    device = received(kids.run).first(Device)
    if device:
        result.device = f"gpu:{device.name}"
    report = diagnostics.instrument_report(kids.instrumented)
    result.tests = judge.collect(grading, kids, report)
    if early_failure(source, kids.run) is None:  # an early failure's diagnostics are in collect's
        result.tests += diagnostics.tests(grading, report, kids.sanitized,
                                          judge.instrument_failure(source, kids.instrumented))
        _add_hints(result, grading, kids, report)
    if grading.backend == "sim" and kids.compiled is not None:
        judge.void_unless_compiled(result.tests, source, kids.run, kids.compiled)
    _add_notes(result, grading, kids)
    _scrub_paths(result, work)
    return result


def _add_hints(result: ExerciseResult, grading, kids, report) -> None:
    """The performance hints (:func:`autograder.judge.hints.apply`): a no-points diagnostic,
    so a fault of theirs never costs the grading; the instructor reads it."""
    from autograder.judge import hints

    try:
        hints.apply(result, grading, kids, report)
    except Exception as exc:  # noqa: BLE001 (the grader's own fault, named for the instructor)
        result.instructor_notes.append(
            f"performance hints not given (the grader's fault): {type(exc).__name__}: {exc}")


#: The student's note when what their code printed went to the instructor alone.
PRINTED_NOTE = ("your code printed something while it was graded: what it prints during the "
                "tests is shown to the instructor only. The public tests (the notebook's "
                "public-test cell, or `autograder grade --public`) show what it prints.")


def _add_notes(result: ExerciseResult, grading: Grading, kids: Children) -> None:
    """How the children ran (``result.sandbox``: a result graded plain tells the student so),
    the children's notes (the sandbox's for the instructor, the rest for the student), the
    statements the child skipped (instructor) and what the submission said where the student
    may not read it. What the public cases' child printed is the student's
    (:func:`autograder.judge.cases.printed_for_student`); what a child that held hidden inputs
    said (the originals of the messages :mod:`autograder.judge.withheld` replaced, and what it
    printed) is the instructor's, and the student reads :data:`PRINTED_NOTE` for what it
    printed."""
    for child in (kids.run, kids.hidden, kids.compiled):
        for note in (child.notes if child is not None else []):
            notes = result.instructor_notes if note.startswith("sandbox:") else result.notes
            if note not in notes:
                notes.append(note)
    ran = [c.sandbox for c in (kids.run, kids.hidden, kids.compiled) if c is not None]
    result.sandbox = "plain" if "plain" in ran else (ran[0] if ran else "")
    if result.sandbox == "plain":  # the instructor's note says why (mode.PLAIN_NOTE)
        result.notes.append(UNSANDBOXED_NOTE)
    skipped = judge.skipped_note(grading.source, kids.run)
    if skipped:
        result.instructor_notes.append(skipped)
    for taken in kids.withheld:
        result.instructor_notes += [f"{WITHHELD_NOTE}{n}"[:2000] for n in taken.notes]
    printed = kids.run.output.strip()[-1500:]
    withheld_printed = [t.printed for t in kids.withheld if t.printed]
    its_cases = [c for c in grading.cases if kids.hidden is None or c.spec.visibility == "public"]
    if printed and printed_for_student(kids.run, its_cases):
        result.notes.append("your code printed:\n" + printed)
    elif printed:
        withheld_printed.insert(0, printed)
    if withheld_printed:
        result.instructor_notes.append("the code printed while it was graded (not shown to the "
                                       "student):\n" + "\n".join(withheld_printed)[-3000:])
        result.notes.append(PRINTED_NOTE)


def _scrub_paths(result: ExerciseResult, work: Path) -> None:
    """Messages name the submission as ``submission.py``, not by the random scratch folder (so
    a replayed or resumed run gives the same messages)."""
    prefix = str(work) + os.sep
    for t in result.tests:
        if prefix in t.message:
            t.message = t.message.replace(prefix, "")
    result.notes = [n.replace(prefix, "") for n in result.notes]
    result.instructor_notes = [n.replace(prefix, "") for n in result.instructor_notes]
