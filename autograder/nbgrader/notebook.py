"""Build nbgrader *source* notebooks: cells with nbgrader's metadata (format version 3).

Used by :mod:`autograder.nbgrader.authoring` (the instructor notebooks, built from the
exercise folders) and by ``examples/make_class.py`` (students' copies). The cell kinds are the
ones nbgrader's "Create Assignment" toolbar makes:

* read-only markdown (``locked``): task text a student cannot change;
* a solution cell (``solution``): the instructor's code between ``### BEGIN SOLUTION`` and
  ``### END SOLUTION``, replaced by ``raise NotImplementedError()`` in the students' copy;
* autograder tests (``grade`` + ``locked`` with ``points``): public tests (0 points; they are
  there for the student to run) and hidden-test cells (the points of one part of the grade).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import nbformat

from autograder.source import pyast
from ..exercises.base import Exercise
from autograder.wire.results import Kind

SCHEMA_VERSION = 3
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
BEGIN_SOLUTION = "### BEGIN SOLUTION"
END_SOLUTION = "### END SOLUTION"
BEGIN_HIDDEN = "### BEGIN HIDDEN TESTS"
END_HIDDEN = "### END HIDDEN TESTS"


#: The grade_id of the grade cell that holds one part of an exercise's grade:
#: ``"<exercise>-hidden-<part>"``, e.g. ``"tiled_matmul-hidden-correctness"``. The grading
#: preprocessor (:class:`autograder.nbgrader.preprocessor.GradeWithAutograder`) finds these cells
#: by this id, which nbgrader checks against the gradebook before grading.
HIDDEN_GRADE_ID = "{exercise}-hidden-{part}"
_HIDDEN_ID = re.compile(r"(?P<exercise>[A-Za-z0-9_]+)-hidden-(?P<part>correctness|concept|timing)")


def hidden_grade_id(exercise: str, part: str | Kind) -> str:
    """The grade_id of the grade cell of ``part`` (correctness, concept or timing) of
    ``exercise``: see :data:`HIDDEN_GRADE_ID`."""
    return HIDDEN_GRADE_ID.format(exercise=exercise, part=Kind(part).value)


def parse_hidden_grade_id(grade_id: str) -> tuple[str, Kind] | None:
    """``(exercise, part)`` of a grade cell id made by :func:`hidden_grade_id`, else None (an
    instructor's own grade cells, public tests, anything else)."""
    m = _HIDDEN_ID.fullmatch(grade_id) if isinstance(grade_id, str) else None
    return (m["exercise"], Kind(m["part"])) if m else None


def _meta(grade_id: str, *, grade: bool = False, solution: bool = False, locked: bool = False,
          points: float | None = None) -> dict:
    meta = {"grade": grade, "grade_id": grade_id, "locked": locked,
            "schema_version": SCHEMA_VERSION, "solution": solution, "task": False}
    if grade:
        meta["points"] = float(points or 0.0)
    return {"nbgrader": meta}


def markdown(grade_id: str, text: str, locked: bool = True):
    """A markdown cell; read-only for students when ``locked``."""
    cell = nbformat.v4.new_markdown_cell(text.strip("\n"), id=grade_id)
    if locked:
        cell.metadata = _meta(grade_id, locked=True)
    return cell


def code(text: str, cell_id: str):
    """A plain code cell (no nbgrader metadata): students may change it freely."""
    return nbformat.v4.new_code_cell(text.strip("\n"), id=cell_id)


def solution(grade_id: str, text: str):
    """A solution cell; ``text`` must contain the solution markers."""
    if BEGIN_SOLUTION not in text or END_SOLUTION not in text:
        raise ValueError(f"solution cell {grade_id!r} has no {BEGIN_SOLUTION} … {END_SOLUTION}")
    cell = nbformat.v4.new_code_cell(text.strip("\n"), id=grade_id)
    cell.metadata = _meta(grade_id, solution=True)
    return cell


def tests(grade_id: str, text: str, points: float):
    """An autograder-tests cell (read-only, graded) worth ``points``."""
    cell = nbformat.v4.new_code_cell(text.strip("\n"), id=grade_id)
    cell.metadata = _meta(grade_id, grade=True, locked=True, points=points)
    return cell


def notebook(cells: list) -> nbformat.NotebookNode:
    """A Python 3 notebook of ``cells``; validated against the nbformat schema."""
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata = {"kernelspec": dict(KERNELSPEC), "language_info": {"name": "python"}}
    nbformat.validate(nb)
    return nb


def dumps(nb) -> str:
    """The notebook as JSON text, exactly as ``nbformat.write`` writes it, with a final newline."""
    text = nbformat.writes(nb)
    return text if text.endswith("\n") else text + "\n"


def part_max_points(exercise: Exercise) -> dict[str, float]:
    """Maximum points of each part of ``exercise`` that carries points, in grading order
    (:attr:`autograder.exercises.base.Exercise.part_points`)."""
    return exercise.part_points


def strip_module_docstring(text: str) -> str:
    """``text`` (Python source) without its module docstring and the blank lines after it."""
    tree = pyast.parse(text)
    body = tree.body
    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None),
                                                             ast.Constant) \
            and isinstance(body[0].value.value, str):
        lines = text.splitlines(keepends=True)[body[0].end_lineno:]
        while lines and not lines[0].strip():
            lines.pop(0)
        return "".join(lines)
    return text


def mark_solution(text: str, function: str) -> str:
    """Wrap the body of top-level function ``function`` in ``text`` in solution markers.

    What lies outside the body (imports, constants, the decorator and ``def`` line) stays in the
    students' copy as scaffolding. Raises ``ValueError`` when ``text`` has no such function.
    """
    tree = pyast.parse(text)
    fn = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == function),
              None)
    if fn is None:
        raise ValueError(f"no top-level function {function!r} to mark as the solution")
    lines = text.splitlines()
    first, last = fn.body[0].lineno - 1, fn.end_lineno  # 0-based first line, 1-based last
    indent = lines[first][: len(lines[first]) - len(lines[first].lstrip())]
    out = lines[:first] + [indent + BEGIN_SOLUTION] + lines[first:last] + \
        [indent + END_SOLUTION] + lines[last:]
    return "\n".join(out) + "\n"


def unmark(text: str) -> str:
    """``text`` without the lines holding solution or hidden-test markers."""
    markers = (BEGIN_SOLUTION, END_SOLUTION, BEGIN_HIDDEN, END_HIDDEN)
    return "".join(ln for ln in text.splitlines(keepends=True)
                   if ln.strip() not in markers)


def read(path: str | Path) -> nbformat.NotebookNode:
    """Read a notebook (nbformat 4)."""
    return nbformat.read(str(path), as_version=4)


def cells_with(nb, **flags) -> list:
    """The cells of ``nb`` whose nbgrader metadata has all of ``flags`` (e.g. ``grade=True``)."""
    found = []
    for cell in nb.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if meta and all(bool(meta.get(k)) == v for k, v in flags.items()):
            found.append(cell)
    return found
