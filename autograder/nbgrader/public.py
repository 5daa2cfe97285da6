"""What the public-test cell of an assignment notebook calls: the public cases, in child processes.

The public-test cell of an assignment notebook (``assignments/``) reads::

    # autograder test cell: public tests (read-only) ...
    from autograder.nbgrader.public import run_public_tests

    run_public_tests("tiled_matmul")

:func:`run_public_tests` takes the code of the notebook as it will be handed in: in Jupyter, the
notebook file the kernel belongs to, as saved (:func:`autograder.nbgrader.cells.session_notebook`),
exactly what ``nbgrader validate`` and ``nbgrader autograde`` read, whatever ran before in the
kernel (a cell run once with a syntax error and again fixed, a deleted exploratory cell). When
the cell the kernel ran last is not in the saved file as it ran (an edit not saved yet), the
report says so and asks to save and run the cell again. A kernel started for a file (``nbgrader validate``,
nbclient) runs the file top to bottom: there the code it executed
(:func:`autograder.nbgrader.cells.executed_cells`) is the file's. Test cells and magics are left
out, as for a submitted notebook. It grades the code with :func:`autograder.grader.grade` restricted to the exercise's
*public* cases (``visibility="public"``), and prints one line per public case, the concept test
(read off the PTX: it reveals nothing hidden) and the diagnostics' findings. The student's code
runs in child processes with time limits, as for the hidden tests: a kernel that spins is reported
as a timeout and the cell returns; the notebook's own kernel never launches the student's kernel.
The cell gives no grade (0 points): the stored grades come from the hidden tests
(:mod:`autograder.nbgrader.preprocessor`).

When a public case or the concept test failed, raised an error or timed out (:func:`failures`),
the cell raises :class:`PublicTestsFailed` (an ``AssertionError``, as nbgrader's own test cells
raise) whose text is the report: ``nbgrader validate`` and the Validate button then report the
cell as failed (a grade cell worth 0 points fails validation when it shows an error) and print
the report as the error, and Jupyter shows the report once, as the cell's error, with no
traceback into the grader's code. A skipped test (it needs a GPU) and a grader that cannot run here (a
setup fault, printed as one line) are not the student's failure: the cell ends without an error.
``nbgrader autograde`` is not affected: by default it never runs the notebook, and with
``--run-notebooks`` nbgrader's ``Execute`` records the error and runs the remaining cells.

What the output never shows: hidden cases (their sizes or labels), points, the secret seed and
the timing test (which needs the instructor's solution and a GPU). A public run needs no
instructor solution, so it works from a student's ``pip install``: kernel exercises compare
with the float64 reference, and ``occupancy``'s public cases carry their expected values in the
definition (``PUBLIC_EXPECTED`` in its ``exercise.py``).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import tempfile
import textwrap
import warnings
from pathlib import Path
from typing import Sequence

from .. import exercises
from ..errors import GraderSetupError
from autograder.judge.cases import RACE_RULE
from autograder.wire.results import ExerciseResult, Kind, Status, TestResult
from autograder.sandbox.limits import Limits
from ..report.parts import where
from .cells import (DEVICE_ENV, executed_cells, executed_notebook, session_notebook,
                    unsaved_input)

#: Time limits of a public run, in seconds: the public cases are small, and the whole run stays
#: well inside nbgrader's limit for an ordinary cell (``CELL_TIMEOUT``, 120 s by default). A GPU
#: case gets 5 s of wall time, as in a grading (:func:`autograder.grading.devices.default_limits` says
#: why that is safe): a deadlocked grid barrier costs the student 5 s.
PUBLIC_LIMITS = {"sim": Limits(import_timeout=30.0, case_timeout=30.0, total_timeout=90.0),
                 "gpu": Limits(import_timeout=30.0, case_timeout=5.0, total_timeout=60.0)}

_MARKS = {Status.PASSED: "ok", Status.FAILED: "FAILED", Status.ERROR: "ERROR",
          Status.TIMEOUT: "TIMEOUT", Status.SKIPPED: "skipped"}


def public_result(exercise: str, device: str | None = None,
                  cells: Sequence[str] | None = None,
                  limits: Limits | None = None) -> ExerciseResult:
    """Grade the public cases of ``exercise`` on the code this notebook ran; the result keeps only
    what a student may see before handing in.

    ``exercise``: an exercise name (``autograder exercises``). ``device``: ``auto``, ``gpu`` or
    ``sim``; None reads :data:`autograder.nbgrader.cells.DEVICE_ENV` (default ``auto``: a GPU
    when there is one, else the simulator). ``cells``: the code cells to grade (default: the
    saved notebook this kernel belongs to (:func:`saved_notebook_result`), else this kernel's
    input history). ``limits``: the children's time limits (default :data:`PUBLIC_LIMITS` of
    the device).

    The returned :class:`~autograder.wire.results.ExerciseResult` holds the public ``correctness``
    tests, the ``concept`` test and the ``diagnostic`` tests, never a hidden case or the timing
    test; its ``seed`` is None (a public run's inputs are random each time). No compute-sanitizer
    run (too slow for a public test).

    No instructor solution is needed (a student's install has none). Raises ``ValueError``
    for a bad ``device``, :class:`autograder.exercises.UnknownExercise` for an unknown
    exercise, ``RuntimeError`` outside a Jupyter kernel when ``cells`` is not given, and
    :class:`autograder.errors.GraderSetupError` when the grader cannot run here (``gpu``
    without a GPU, a sandbox that imports other packages). A problem in the student's code is
    never raised: it becomes a test with a message.
    """
    from ..grader import resolve_device  # imported late, as in cells.py

    exercises.get(exercise)  # UnknownExercise before anything runs
    backend = resolve_device(device or os.environ.get(DEVICE_ENV, "").strip() or "auto")
    if cells is None:
        saved = session_notebook()
        if saved is not None:
            return saved_notebook_result(saved, exercise, backend, limits)
        cells = executed_cells()
    with tempfile.TemporaryDirectory(prefix="kernelgrade-public-") as tmp:
        path = Path(tmp) / f"{exercise}.ipynb"
        path.write_text(json.dumps(executed_notebook(list(cells))), encoding="utf-8")
        result = public_file_result(path, exercise, device=backend, limits=limits)
    result.submission = "this notebook (the cells it ran, test cells left out)"
    return result


def saved_notebook_result(notebook: Path, exercise: str, device: str,
                          limits: Limits | None = None) -> ExerciseResult:
    """:func:`public_result` of the notebook file ``notebook`` as saved (the one this kernel
    belongs to: its code cells in order, as the autograder reads them), with a note first
    when the cell this kernel ran last is not in the file as it ran
    (:func:`autograder.nbgrader.cells.unsaved_input`): save, then run the cell again."""
    data = notebook.read_bytes()
    with tempfile.TemporaryDirectory(prefix="kernelgrade-public-") as tmp:
        path = Path(tmp) / f"{exercise}.ipynb"
        path.write_bytes(data)
        result = public_file_result(path, exercise, device=device, limits=limits)
    for t in result.tests:
        t.message = t.message.replace(str(path), notebook.name)
    result.submission = f"{notebook.name} as saved"
    try:
        unsaved = unsaved_input(executed_cells(), json.loads(data))
    except (RuntimeError, ValueError, AttributeError):  # not in IPython, not a notebook's JSON
        unsaved = None
    if unsaved is not None:
        result.notes.insert(0, (
            f"These tests graded {notebook.name} as saved, as the autograder will, and the "
            "cell you ran last is not in it as you ran it (a change not saved yet). Save the "
            "notebook (Ctrl+S) and run this cell again to test what you see."))
    return result


def public_file_result(submission: str | Path, exercise: str, device: str | None = None,
                       limits: Limits | None = None) -> ExerciseResult:
    """The public run of a submission file (``.py`` or ``.ipynb``), as :func:`public_result`
    makes of a notebook's cells (``autograder grade --public``): the public ``correctness``
    tests, the ``concept`` test and the ``diagnostic`` tests, seed None, no instructor solution
    needed. Arguments and errors as for :func:`public_result`."""
    from ..grader import grade, resolve_device  # imported late, as in cells.py

    exercises.get(exercise)
    backend = resolve_device(device or os.environ.get(DEVICE_ENV, "").strip() or "auto")
    result = grade(submission, exercise, device=backend,
                   limits=limits or PUBLIC_LIMITS[backend], sanitize=False, visibility="public")
    result.seed = None
    result.tests = [t for t in result.tests if t.kind in (Kind.CONCEPT, Kind.DIAGNOSTIC)
                    or (t.kind is Kind.CORRECTNESS and t.visibility == "public")]
    return result


def _line(name: str, status: Status, message: str) -> str:
    return f"  [{_MARKS[status]}] {name}: {message}"


#: A public case the race verdict decided, in the report: the finding itself is the
#: diagnostics' line, and the rule (:data:`autograder.judge.cases.RACE_RULE`) follows once.
RACE_CASE = ("counted as failed: the kernel has a race or a barrier not every thread reaches "
             "(the diagnostics below name it; the rule after them)")


def _listed(result: ExerciseResult) -> list[tuple[str, str]]:
    """``(finding, diagnostic name)`` for each finding a failed diagnostic of ``result`` shows
    (its ``details["findings"]``)."""
    out = []
    for t in result.tests:
        if t.kind is Kind.DIAGNOSTIC and t.status is not Status.PASSED:
            for f in (t.details or {}).get("findings") or []:
                if isinstance(f, str) and f:
                    out.append((f, t.name))
    return out


def _pointing(message: str, listed: list[tuple[str, str]]) -> str:
    """``message`` with each finding a diagnostic line shows (``listed``) replaced by
    ``"see <diagnostic> below"`` (one pointer for a run of them): each finding is said once."""
    for finding, name in listed:
        message = message.replace(finding, f"\0{name}\0")
    message = re.sub(r"\0([^\0]*)\0(?:; \0\1\0)+", r"\0\1\0", message)
    return re.sub(r"\0([^\0]*)\0", r"see \1 below", message)


def report(result: ExerciseResult) -> str:
    """The student's report of a :func:`public_result`: a line per public case, the concept test,
    the diagnostics' findings (one line when there are none), what the code printed, and a
    summary line. No points, seed or hidden case."""
    lines = [f"Public tests of {result.exercise} on {where(result)} (your code ran in a "
             "separate process, with a time limit):"]
    if result.submission.endswith(" as saved"):
        lines[0] = (f"Public tests of {result.exercise} on {where(result)}, of "
                    f"{result.submission} (your code ran in a separate process, with a time "
                    "limit):")
    public = [t for t in result.tests if t.kind is Kind.CORRECTNESS]
    raced = False
    for t in public:
        decided = (t.details or {}).get("decided_by") in ("race", "sanitizer")
        raced = raced or decided
        lines.append(_line(t.name.removeprefix("public: "), t.status,
                           RACE_CASE if decided else t.message))
    listed = _listed(result)
    for t in result.tests:
        if t.kind is Kind.CONCEPT:
            lines.append(_line(t.name, t.status, _pointing(t.message, listed)))
    diagnostics = [t for t in result.tests if t.kind is Kind.DIAGNOSTIC]
    # a finding fails its diagnostic; a performance hint is advice in a passed one
    found = [t for t in diagnostics if t.status is not Status.PASSED
             or (t.details or {}).get("hints")]
    for t in found:
        lines.append(_line(t.name, t.status, t.message))
    if diagnostics and not found:
        looked_for = "; ".join(t.name.removeprefix("diagnostic: ") for t in diagnostics)
        lines.append(f"  [ok] diagnostics: nothing found ({looked_for})")
    if raced:
        lines.append("  " + RACE_RULE + ".")
    for note in result.notes:
        lines.append("  " + note.replace("\n", "\n  "))
    concept = [t for t in result.tests if t.kind is Kind.CONCEPT]
    lines.append(_summary(public, concept))
    return "\n".join(lines)


def _summary(public: list, concept: list) -> str:
    passed = sum(t.status is Status.PASSED for t in public)
    skipped = sum(t.status is Status.SKIPPED for t in public)
    if public and skipped == len(public):
        return ("The public tests need a GPU, so they were skipped here; they run when your "
                "notebook is graded on one.")
    summary = f"{passed} of {len(public)} public tests passed" + (
        f" ({skipped} skipped: they need a GPU)" if skipped else "") + "."
    if passed < len(public) - skipped:
        summary += " Fix the failing ones first: they are graded too."
    if any(t.status not in (Status.PASSED, Status.SKIPPED) for t in concept):
        summary += " The concept test did not pass (see above): it is graded too."
    return summary + " The hidden tests run when your notebook is graded."


def failures(result: ExerciseResult) -> list[TestResult]:
    """The public cases and the concept test of a :func:`public_result` that failed, raised an
    error or timed out, in report order. Empty when everything that ran passed: skipped tests
    (they need a GPU) and the diagnostics (a finding fails the concept test) are not listed."""
    return [t for t in result.tests if t.kind in (Kind.CORRECTNESS, Kind.CONCEPT)
            and t.status not in (Status.PASSED, Status.SKIPPED)]


def failure_summary(result: ExerciseResult) -> str:
    """The one line the public-test cell's error carries when :func:`failures` is not empty,
    short enough for ``nbgrader validate``'s 90 columns: ``"1 of 2 public tests and the concept
    test failed"`` (skipped cases are not counted); the report is the error's text
    (:class:`PublicTestsFailed`)."""
    failed = failures(result)
    ran = sum(t.kind is Kind.CORRECTNESS and t.status is not Status.SKIPPED for t in result.tests)
    public = sum(t.kind is Kind.CORRECTNESS for t in failed)
    what = ([f"{public} of {ran} public tests"] if public else []) + (
        ["the concept test"] if any(t.kind is Kind.CONCEPT for t in failed) else [])
    return f"{' and '.join(what)} failed"


#: Columns of a line of :class:`PublicTestsFailed`'s text: ``nbgrader validate`` indents the
#: error by 4 and cuts its lines at 87 columns.
ERROR_COLUMNS = 82


class PublicTestsFailed(AssertionError):
    """What the public-test cell raises when a public case or the concept test failed: its
    ``str`` is :func:`failure_summary`'s line, and in IPython (Jupyter, ``nbgrader validate``)
    it shows as the report itself (``report``), wrapped at :data:`ERROR_COLUMNS`, with no
    traceback into the grader's code: the report is said once, under the cell, and
    ``nbgrader validate`` prints it where it says which cell failed. An ``AssertionError``, as
    nbgrader's own test cells raise."""

    def __init__(self, summary: str, report: str):
        super().__init__(summary)
        self.summary, self.report = summary, report

    def _render_traceback_(self) -> list[str]:  # IPython's hook for an exception's own text
        lines = []
        for line in self.report.splitlines():
            indent = " " * (len(line) - len(line.lstrip(" ")))
            lines += textwrap.wrap(line, ERROR_COLUMNS, subsequent_indent=indent + "    ",
                                   break_on_hyphens=False) or [""]
        return lines


def _in_ipython() -> bool:
    shell = sys.modules.get("IPython")
    try:
        return shell is not None and shell.get_ipython() is not None
    except Exception:  # noqa: BLE001 - an IPython that cannot say: as outside it
        return False


def run_public_tests(exercise: str, device: str | None = None,
                     cells: Sequence[str] | None = None, limits: Limits | None = None) -> None:
    """Run the public tests of ``exercise`` on the code this notebook ran and print the report;
    when a public case or the concept test did not pass (:func:`failures`), raise
    :class:`PublicTestsFailed` instead, whose text in IPython is the report (once, with no
    traceback into this module; outside IPython the report is printed first), so
    ``nbgrader validate`` fails and prints the report.

    Arguments as for :func:`public_result`. Prints to standard output only (warnings of the
    grading machinery included) and returns None, so the public-test cell has no value: nbgrader
    reads a graded cell's number as its points. A few seconds on the simulator or a GPU; a kernel
    that never ends costs at most the case time limit (:data:`PUBLIC_LIMITS`). Skipped tests (no
    GPU) raise nothing. A fault of the grader's setup
    (:class:`autograder.errors.GraderSetupError`) is printed as one line, not raised; other
    errors are raised as for :func:`public_result`.
    """
    out = sys.stdout
    with warnings.catch_warnings(), contextlib.redirect_stderr(out):
        warnings.simplefilter("ignore")
        try:
            result = public_result(exercise, device=device, cells=cells, limits=limits)
        except GraderSetupError as exc:
            print(f"The public tests of {exercise} cannot run here: {exc}", file=out)
            return
    text = report(result)
    if failures(result):
        if not _in_ipython():  # a plain traceback shows only the summary: the report first
            print(text, file=out)
            out.flush()
        raise PublicTestsFailed(failure_summary(result), text) from None
    print(text, file=out)
    out.flush()
