"""One grading, after the preflight: a submission's source → child process(es) on the GPU or
the simulator → typed records → judged tests (docs/architecture.md,
"A grading, end to end"). The steps are
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
                                    once, printed_for_student, printed_tail)
from autograder.judge.inputs import Children, Grading
from autograder.wire.protocol import Device, Imported, received
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
    ran = early_failure(source, kids.run) is None
    if ran:  # an early failure's diagnostics are in collect's
        result.tests += diagnostics.tests(grading, report, kids.sanitized,
                                          judge.instrument_failure(source, kids.instrumented))
        _add_hints(result, grading, kids, report)
    if grading.backend == "sim" and kids.compiled is not None:
        judge.void_unless_compiled(result.tests, source, kids.run, kids.compiled)
    _add_notes(result, grading, kids)
    if ran:  # code that never ran gets no advice on how it ran
        _add_advice(result, exercise)
    _scrub_paths(result, work)
    return result


def _add_advice(result: ExerciseResult, exercise) -> None:
    """The instructor's advice of the exercise's known-bad files whose failure signature the
    result matches (:mod:`autograder.judge.advice`): from its ``mutants/``, or where a wheel or
    a Gradescope bundle left them out, from their extract (:func:`known_bad.for_exercise`);
    none for an exercise not in the registry or without advice."""
    from autograder import exercises
    from autograder.exercises import known_bad
    from autograder.judge import advice

    try:
        files = known_bad.for_exercise(exercises.folder(exercise.name))
    except exercises.UnknownExercise:
        return
    advice.apply(result, files)


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
    statements the child skipped (why, for the instructor; where, for the student:
    :func:`skipped_for_student`) and what the submission said where the student
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
        for_student = skipped_for_student(grading.source, _skipped_lines(kids.run))
        if for_student:
            result.notes.append(for_student)
    for taken in kids.withheld:
        result.instructor_notes += [f"{WITHHELD_NOTE}{n}"[:2000] for n in taken.notes]
    printed = printed_tail(kids.run.output, kids.run.output_lines)  # whole lines, N not shown
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


#: How many notebook cells :func:`skipped_for_student` names.
SKIPPED_SHOWN = 4


def _skipped_lines(run) -> list[int]:
    """The first lines of the top-level statements the child skipped (its ``Imported`` record,
    sent before any student code could run; a contract error's, else none)."""
    rx = received(run)
    rec = rx.first(Imported) or next(iter(rx.errors("contract")), None)
    return sorted({int(line) for line, _ in (rec.skipped if rec and rec.skipped else [])})


def skipped_for_student(source, lines: list[int]) -> str:
    """The student's one-paragraph note on the top-level statements the grader did not run
    (``lines``: their first source lines, 1-based), grouped by notebook cell: ``"Not run when
    graded (...): cell 1, line 9 (`if ...:`); cell 2, lines 30, 31, 32 (`C = ...`, …)."``,
    with the code of each group's first statement. At most :data:`SKIPPED_SHOWN` cells and 6
    line numbers a cell, then how many more; the reasons are the instructor's
    (:func:`autograder.judge.collect.skipped_note`). Lines of the instructor's read-only cells
    (``source.given_cells``: the setup cell's own check) are left out. ``""`` for no lines."""
    given = getattr(source, "given_cells", frozenset())
    lines = [n for n in lines if n >= 1 and not (
        n <= len(source.origins) and source.origins[n - 1][0] in given)]
    if not lines:
        return ""
    groups: dict = {}
    for n in lines:
        origin = source.origins[n - 1] if n <= len(source.origins) else (None, n)
        groups.setdefault(origin[0], []).append((origin[1], n))  # None: a .py file
    shown = []
    for key, items in list(groups.items())[:SKIPPED_SHOWN]:
        where = f"cell {key}, " if key is not None else ""
        numbers = ", ".join(str(line) for line, _ in items[:6]) + (", …" if items[6:] else "")
        code = source.line_text(items[0][1])
        code = code if len(code) <= 40 else code[:39] + "…"
        more = ", …" if len(items) > 1 else ""
        shown.append(f"{where}line{'s' if len(items) > 1 else ''} {numbers}"
                     + (f" (`{code}`{more})" if code else ""))
    rest = len(groups) - len(shown)
    return ("Not run when graded (the grader runs only imports of numba, numpy and math, "
            "constant assignments and function definitions): " + "; ".join(shown)
            + (f"; and {rest} more cells" if rest > 0 else "") + ".")


def _scrub_paths(result: ExerciseResult, work: Path) -> None:
    """Messages name the submission as ``submission.py``, not by the random scratch folder (so
    a replayed or resumed run gives the same messages)."""
    prefix = str(work) + os.sep
    for t in result.tests:
        if prefix in t.message:
            t.message = t.message.replace(prefix, "")
    result.notes = [n.replace(prefix, "") for n in result.notes]
    result.instructor_notes = [n.replace(prefix, "") for n in result.instructor_notes]
