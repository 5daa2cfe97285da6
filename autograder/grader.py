"""Grade one submission for one exercise: the public entry.

The device is chosen (:mod:`autograder.grading.devices`), the instructor's solution checked once
(:mod:`autograder.grading.preflight`), then the submission graded (:mod:`autograder.grading.steps`: the data
flow of docs/architecture.md, "A grading, end to end": submission → child process(es) → typed
records → judged tests).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from . import exercises
from autograder.errors import GraderSetupError
from autograder.grading import preflight as preflight_mod
from autograder.grading.devices import default_limits, gpu_available, gpu_count, no_gpu_reason, resolve_device
from autograder.grading.steps import grade_submission
from autograder.host.blas import single_threaded_blas
from autograder.wire.results import ExerciseResult
from autograder.sandbox.limits import Limits
from autograder.source.submission import SubmissionError, load_source

__all__ = ["grade", "resolve_device", "gpu_count", "gpu_available", "no_gpu_reason",
           "default_limits"]


def grade(submission: str | Path, exercise_name: str, device: str = "auto",
          seed: int | None = None, limits: Limits | None = None,
          sanitize: bool = True, visibility: str | None = None,
          preflight: bool = True) -> ExerciseResult:
    """Grade ``submission`` (a ``.py`` or ``.ipynb`` path) for exercise ``exercise_name``.

    ``device``: ``auto``, ``gpu`` or ``sim``. ``seed``: the secret seed for the inputs (random
    when None; reported in the result so a run can be replayed). Never raises for a bad
    submission: every problem becomes a test result with a message and a score. ``sanitize``:
    on a GPU, also run compute-sanitizer (when installed) for the diagnostics (a few seconds).
    ``visibility``: ``"public"`` grades only the public cases (and the concept test and
    diagnostics), with no timing test, so it needs no instructor solution (a notebook's public
    tests: :mod:`autograder.nbgrader.public`); None grades everything.
    ``preflight``: first check that the instructor solution gets full marks in the same sandbox
    on the same device (:mod:`autograder.grading.preflight`; a passed one is remembered on disk).
    False only for the preflight's own run and ``autograder solutions`` (which grades the
    solutions itself); a public run (``visibility``) has no solution to check and skips it.
    Raises :class:`autograder.exercises.UnknownExercise` and ``ValueError`` for bad arguments,
    and :class:`autograder.errors.GraderSetupError` when the grader cannot grade here (``gpu``
    without a GPU, a child whose packages differ from the grader's, an instructor solution that
    loses points): no result is returned for the student then.
    """
    exercise = exercises.get(exercise_name)
    if visibility is not None:  # only those cases; timing needs the instructor's solution
        exercise = replace(exercise, timing=None,
                           cases=[c for c in exercise.cases if c.visibility == visibility])
    backend = resolve_device(device)
    if visibility is None:
        _require_solution(exercise.name)
    single_threaded_blas()  # before any child is forked: see autograder.host.blas
    check = None
    try:
        load_source(submission)
    except SubmissionError:  # refused as it is (a link, not UTF-8...): no solution to check
        preflight = False
    if preflight and visibility is None:
        check = preflight_mod.start(exercise.name, backend, sanitize)
        if backend == "sim" or check.done():  # the simulator: first (both would share the CPU)
            check.result()
    result = grade_submission(submission, exercise, backend, seed, limits, sanitize)
    if check is not None:
        check.result()  # on a GPU it ran beside the student's: a failure discards their result
    return result


def _require_solution(name: str) -> None:
    """A whole grading needs the instructor's solution (the preflight, the timing reference):
    without one the grader's setup is at fault, before any student's code runs. On a GPU the
    preflight runs beside the student's grading, whose timing step met the missing file first
    and ended in a traceback (exit 1)."""
    try:
        exercises.solution_path(name)
    except FileNotFoundError as exc:
        raise GraderSetupError(str(exc)) from None
