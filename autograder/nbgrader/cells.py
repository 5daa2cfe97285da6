"""What the hidden-test cells of an nbgrader notebook call: grade the code the notebook ran.

A hidden-test cell of an assignment notebook (``assignments/``) reads, in the instructor's source
version::

    # autograder test cell: hidden correctness tests (60 points) ...
    ### BEGIN HIDDEN TESTS
    from autograder.nbgrader.cells import grade_this_notebook
    grade_this_notebook("tiled_matmul", "correctness")
    ### END HIDDEN TESTS

``nbgrader generate_assignment`` removes the hidden part from the students' copy and
``nbgrader autograde`` puts it back. When the cell runs, :func:`grade_this_notebook`

1. collects the code this kernel has executed so far (IPython's input history, in order), leaving
   out IPython magics and the autograder's own test cells (those whose source contains
   :data:`TEST_CELL_MARKER` or calls ``grade_this_notebook``), exactly as
   :mod:`autograder.submission` does for a notebook file;
2. grades it with :func:`autograder.grader.grade`, which runs the student's code in child processes
   with hard timeouts, so a spinning kernel never hangs the notebook;
3. keeps the :class:`~autograder.results.ExerciseResult` in this kernel, so the next grade cells of
   the same notebook (concept, timing) reuse it instead of grading again;
4. prints the tests of the part the cell grades, and returns that part's points as a float.

nbgrader (≥ 0.6; see ``nbgrader.utils.determine_grade`` / ``get_partial_grade`` in 0.9.6) takes
the number a grade cell *outputs* as partial credit. The call must therefore be the cell's last
expression, and the cell's ``points`` must equal the part's maximum (``get_partial_grade`` rejects
a score above the cell's points). Anything a grade cell writes to standard error makes nbgrader
give it zero, so the report goes to standard output only.

Trust: as with every nbgrader hidden test, this runs in the kernel that ran the student's code, so
a student who monkeypatches this module (or ``autograder.grader``) in the notebook can fake the
points. The student's *kernel* code itself never runs here (grading happens in child processes),
and ``autograder batch`` on the submitted notebooks grades without running anything of the
student's in the grader's process: use it to confirm nbgrader's scores. A notebook whose kernel
dies (``os._exit``) is not graded by nbgrader at all ("Kernel died"), so it cannot earn the
full credit nbgrader gives a grade cell without output.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Sequence

from ..results import ExerciseResult, Kind, Status
from ..submission import Source, notebook_source

#: A code cell whose source contains this line is one of the autograder's own test cells
#: (public or hidden): it is left out of the code that is graded.
TEST_CELL_MARKER = "# autograder test cell"

#: Environment variable naming the device the hidden tests grade on: ``auto`` (the default),
#: ``gpu`` or ``sim``. Read in the notebook's kernel (the grading children never see it).
DEVICE_ENV = "KERNELGRADE_DEVICE"

#: Results already computed in this kernel, keyed by (exercise, device, seed, source digest).
_RESULTS: dict[tuple, ExerciseResult] = {}


def is_test_cell(source: str) -> bool:
    """True for the autograder's own test cells: public tests and hidden-test grade cells.

    ``source``: a cell's code as text. A cell counts as a test cell when it contains
    :data:`TEST_CELL_MARKER` or calls ``grade_this_notebook``.
    """
    return TEST_CELL_MARKER in source or "grade_this_notebook" in source


def executed_cells() -> list[str]:
    """The code cells this IPython kernel has executed, oldest first, as typed (magics included).

    Entry ``i`` of the list is the input of execution count ``i + 1`` (``In [i + 1]``). Raises
    ``RuntimeError`` outside IPython/Jupyter. nbgrader runs kernels with an in-memory history
    (``--HistoryManager.hist_file=:memory:``), which keeps the current session's inputs.
    """
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython comes with Jupyter and nbgrader
        get_ipython = None
    ip = get_ipython() if get_ipython else None
    if ip is None:
        raise RuntimeError("grade_this_notebook() runs inside a Jupyter notebook (an IPython "
                           "kernel); to grade a file, use `autograder grade FILE --exercise NAME`")
    return [str(s) for s in ip.history_manager.input_hist_raw[1:]]


def executed_notebook(cells: Sequence[str]) -> dict:
    """A notebook (as a JSON-ready dict) with one code cell per executed input, in order.

    The autograder's test cells (:func:`is_test_cell`) are marked as nbgrader grade cells, so
    :func:`autograder.submission.notebook_source` leaves them out and still counts them: "cell 3"
    in a grading message is then ``In [3]``, which is also the third code cell of a notebook run
    top to bottom (as ``nbgrader autograde`` runs it).
    """
    nb_cells = []
    for src in cells:
        meta = {"nbgrader": {"grade": True, "solution": False}} if is_test_cell(src) else {}
        nb_cells.append({"cell_type": "code", "metadata": meta, "source": src,
                         "outputs": [], "execution_count": None})
    return {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": nb_cells}


def executed_source(cells: Sequence[str], name: str = "this notebook") -> Source:
    """The code that :func:`grade_this_notebook` grades, as :class:`autograder.submission.Source`.

    Magics and test cells are left out as for a notebook file. Raises
    :class:`autograder.submission.SubmissionError` when no code is left.
    """
    return notebook_source(json.dumps(executed_notebook(cells)), name)


def part_points(result: ExerciseResult, kind: str | Kind) -> tuple[float, float]:
    """``(points, max_points)`` of the tests of one kind (``correctness``, ``concept``,
    ``timing`` or ``diagnostic``) in ``result``. Raises ``ValueError`` for another kind."""
    kind = Kind(kind)
    tests = [t for t in result.tests if t.kind is kind]
    return (round(sum(t.points for t in tests), 4), round(sum(t.max_points for t in tests), 4))


def _grade_cells(cells: Sequence[str], exercise: str, device: str, seed: int | None
                 ) -> tuple[ExerciseResult, bool]:
    """Grade the executed ``cells`` (or reuse this kernel's earlier result); returns
    ``(result, fresh)``."""
    from ..grader import grade  # imported late: the notebook may never need it

    notebook = executed_notebook(cells)
    graded_text = "\n\x00\n".join(c["source"] for c in notebook["cells"]
                                  if not c["metadata"])
    digest = hashlib.sha256(graded_text.encode("utf-8")).hexdigest()
    key = (exercise, device, seed, digest)
    if key in _RESULTS:
        return _RESULTS[key], False
    with tempfile.TemporaryDirectory(prefix="kernelgrade-nb-") as tmp:
        path = Path(tmp) / f"{exercise}.ipynb"
        path.write_text(json.dumps(notebook), encoding="utf-8")
        result = grade(path, exercise, device=device, seed=seed)
    result.submission = "this notebook (the cells it ran, test cells left out)"
    _RESULTS[key] = result
    return result, True


def _report(result: ExerciseResult, kind: Kind, fresh: bool, out) -> None:
    points, max_points = part_points(result, kind)
    where = "the CUDA simulator" if result.device == "sim" else result.device.partition(":")[2]
    if fresh:
        print(f"{result.exercise}: graded the code this notebook ran on {where}: "
              f"{result.score:g} / {result.max_score:g} points in all"
              + (" (provisional: some tests need a GPU)" if result.provisional else ""), file=out)
        if result.seed is not None:
            print(f"  seed {result.seed} (replay: autograder grade NOTEBOOK --exercise "
                  f"{result.exercise} --seed {result.seed})", file=out)
        for note in result.notes:
            print("  " + note.replace("\n", "\n  "), file=out)
        print(file=out)
    print(f"{kind.value}: {points:g} / {max_points:g}", file=out)
    for t in result.tests:
        if t.kind is not kind:
            continue
        mark = {Status.PASSED: "ok  ", Status.SKIPPED: "skip"}.get(t.status, "FAIL")
        print(f"  [{mark}] {t.name}: {t.points:g}/{t.max_points:g} ({t.status.value}) "
              f"{t.message}", file=out)


def grade_this_notebook(exercise: str, kind: str, device: str | None = None,
                        seed: int | None = None, cells: Sequence[str] | None = None) -> float:
    """Grade the code this notebook has run for ``exercise``; return the points of one part.

    ``exercise``: an exercise name (``autograder exercises`` lists them), e.g. ``"tiled_matmul"``.
    ``kind``: the part this grade cell scores: ``"correctness"`` (the public and hidden sizes),
    ``"concept"`` (shared memory and barriers, read off the compiled PTX) or ``"timing"``
    (against the instructor's kernel; GPU only, ``skipped`` with 0 points on the simulator).
    ``device``: ``auto``, ``gpu`` or ``sim``; None reads :data:`DEVICE_ENV` (default ``auto``).
    ``seed``: the secret input seed (random when None). ``cells``: the executed code cells
    (default: this kernel's input history, see :func:`executed_cells`).

    The first call in a kernel grades every part at once (in child processes with timeouts; on the
    simulator about 15 s for ``tiled_matmul``); later calls with the same code reuse that result.
    Prints the part's tests to standard output and returns its points (a float between 0 and the
    part's maximum), which nbgrader records as the grade cell's partial credit.

    Raises ``ValueError`` for an unknown ``kind`` or ``device``,
    :class:`autograder.exercises.UnknownExercise` for an unknown exercise, and ``RuntimeError``
    outside a Jupyter kernel when ``cells`` is not given. A problem in the student's code is
    never raised: it becomes a failed test with a message.
    """
    part = Kind(kind)
    device = device or os.environ.get(DEVICE_ENV, "").strip() or "auto"
    if cells is None:
        cells = executed_cells()
    out = sys.stdout
    # Anything on stderr would make nbgrader give this cell zero: keep warnings and stray
    # writes from the grading machinery on stdout.
    with warnings.catch_warnings(), contextlib.redirect_stderr(out):
        warnings.simplefilter("ignore")
        result, fresh = _grade_cells(list(cells), exercise, device, seed)
    _report(result, part, fresh, out)
    points, _ = part_points(result, part)
    return float(points)


def cached_result(exercise: str) -> ExerciseResult | None:
    """The latest result :func:`grade_this_notebook` computed in this kernel for ``exercise``,
    or None (for a cell that wants to show the whole report)."""
    found = [r for (name, *_), r in _RESULTS.items() if name == exercise]
    return found[-1] if found else None
