"""Grade the code a notebook's kernel ran, from inside that kernel: for instructors by hand.

Stored grades do not come from here. ``nbgrader autograde`` grades with the preprocessor
:class:`autograder.nbgrader.preprocessor.GradeWithAutograder`, in nbgrader's own process, from
the submitted notebook's cells; the grade cells of the assignment notebooks hold only a comment
(see :mod:`autograder.nbgrader.authoring`). Anything that runs in a student's kernel can be rewritten
by the student's code (this module can be monkeypatched there), so it must never be what a
gradebook stores.

An instructor trying a notebook in Jupyter can add a cell::

    from autograder.nbgrader.cells import grade_this_notebook
    grade_this_notebook("tiled_matmul", "correctness")

:func:`grade_this_notebook`

1. collects the code this kernel has executed so far (IPython's input history, in order), leaving
   out IPython magics and the autograder's own test cells (those whose source contains
   :data:`TEST_CELL_MARKER` or calls ``grade_this_notebook``), exactly as
   :mod:`autograder.source.submission` does for a notebook file;
2. grades it with :func:`autograder.grader.grade`, which runs the code in child processes with
   hard timeouts;
3. keeps the :class:`~autograder.wire.results.ExerciseResult` in this kernel, so later calls for the
   other parts with the same code reuse it;
4. prints the part's tests as the grader reported them (hidden sizes and the seed included:
   :func:`autograder.report.parts.render_part`) and returns that part's points.
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

from autograder.wire.results import ExerciseResult, Kind
from autograder.source.submission import Source, notebook_source
from ..report.parts import part_points, render_part
from .. import settings

__all__ = ["TEST_CELL_MARKER", "DEVICE_ENV", "is_test_cell", "executed_cells",
           "executed_notebook", "executed_source", "session_notebook", "unsaved_input",
           "part_points", "grade_this_notebook", "cached_result"]

#: A code cell whose source contains this line is one of the autograder's own test cells
#: (public or hidden): it is left out of the code that is graded.
TEST_CELL_MARKER = "# autograder test cell"

#: Environment variable naming the device to grade on: ``auto`` (the default), ``gpu`` or ``sim``.
#: Read by :func:`grade_this_notebook` and by the grading preprocessor (in nbgrader's process).
DEVICE_ENV = settings.DEVICE

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


#: The variable Jupyter Server sets in a notebook kernel's environment: the notebook's path
#: (ipykernel also puts it in the user namespace as ``__session__``).
SESSION_ENV = "JPY_SESSION_NAME"


def session_notebook() -> Path | None:
    """The notebook file this kernel belongs to, or None: the path Jupyter Server gave the
    kernel (:data:`SESSION_ENV`, relative paths from the kernel's working folder, which is the
    notebook's) when it names an ``.ipynb`` regular file here. A kernel that nbclient or
    ``nbgrader validate`` started for a file has none: it runs the file's cells top to bottom,
    so its input history is that file's code."""
    name = os.environ.get(SESSION_ENV, "").strip()
    if not name.endswith(".ipynb"):
        return None
    for path in (Path(name), Path.cwd() / Path(name).name):
        try:
            if path.is_file() and not path.is_symlink():
                return path.resolve()
        except OSError:
            continue
    return None


def _code_text(source) -> str:
    return ("".join(source) if isinstance(source, list) else str(source or "")).strip()


def unsaved_input(executed: Sequence[str], notebook: dict) -> str | None:
    """The student's last input in ``executed`` (this kernel's input history; the
    autograder's test cells and empty inputs left out) when no code cell of ``notebook`` (the
    saved file, parsed) holds it as it ran: an edit run but not saved yet; else None. Earlier
    inputs are not looked at: a cell run again after a fix, or an exploratory cell since
    deleted, left its old text in the history, and the file rightly lacks it."""
    saved = {_code_text(c.get("source")) for c in notebook.get("cells", [])
             if isinstance(c, dict) and c.get("cell_type") == "code"}
    last = next((src for src in reversed(list(executed))
                 if _code_text(src) and not is_test_cell(src)), None)
    return None if last is None or _code_text(last) in saved else last


def executed_notebook(cells: Sequence[str]) -> dict:
    """A notebook (as a JSON-ready dict) with one code cell per executed input, in order.

    The autograder's test cells (:func:`is_test_cell`) are marked as nbgrader grade cells, so
    :func:`autograder.source.submission.notebook_source` leaves them out and still counts them: "cell 3"
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
    """The code that :func:`grade_this_notebook` grades, as :class:`autograder.source.submission.Source`.

    Magics and test cells are left out as for a notebook file. Raises
    :class:`autograder.source.submission.SubmissionError` when no code is left.
    """
    return notebook_source(json.dumps(executed_notebook(cells)), name)


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
    part's maximum). For trying a notebook by hand: stored grades come from
    :class:`autograder.nbgrader.preprocessor.GradeWithAutograder`, never from a kernel.

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
    out.write(render_part(result, part, with_header=fresh, reveal_hidden=True))
    points, _ = part_points(result, part)
    return float(points)


def cached_result(exercise: str) -> ExerciseResult | None:
    """The latest result :func:`grade_this_notebook` computed in this kernel for ``exercise``,
    or None (for a cell that wants to show the whole report)."""
    found = [r for (name, *_), r in _RESULTS.items() if name == exercise]
    return found[-1] if found else None
