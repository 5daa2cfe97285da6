"""An exercise's student notebook authored as one notebook (issue 32, item 20).

``assignments/<name>/notebook.py`` holds the task text only: the builder makes every code cell.
An instructor who wants a partial skeleton, cells of the student's own or questions answered in
words writes the whole notebook instead, as nbgrader's ``create_assignment`` and ``otter
assign`` have it, in Jupyter with nbgrader's "Create Assignment" toolbar or any editor:

    solutions/<name>.ipynb              (or solutions/<name>/notebook.ipynb)

It lives with the solutions, not in ``assignments/<name>/``: its solution regions are the
instructor's answer, and a solutions folder is what no wheel carries and no grading child sees
(:func:`autograder.exercises.every_solution_folder`). An exercise has one or the other: a
folder with both ``notebook.py`` and the notebook is refused.

The cells, in the instructor's order (empty cells dropped):

* **the task** (the first cell, markdown): a ``# `` title and a ``## Your task`` section with the
  contract, as in ``notebook.py``; "How it is graded" is appended to it.
* **text** (markdown without nbgrader metadata): read-only for the student.
* **skeleton** (code holding ``### BEGIN SOLUTION`` / ``### END SOLUTION``): an "autograded
  answer" cell; ``nbgrader generate_assignment`` replaces each region with ``# YOUR CODE
  HERE`` / ``raise NotImplementedError()`` and keeps the rest (imports, constants, ``def``
  lines). The code of every code cell together, regions kept, is the instructor's solution: it
  must define each name ``solutions/<name>.py`` defines exactly as that file does (the grader,
  the preflight and ``autograder check`` run ``solutions/<name>.py``), and no function the
  contract names may reach the release whole (its body goes in a region).
* **the student's cells** (code without markers or nbgrader metadata): released as they are,
  editable (exploration: try the kernel, plot). nbgrader's "read-only" code cells stay locked.
* **written answers** (markdown with nbgrader's "Manually graded answer" metadata:
  ``solution`` and ``grade`` true, ``points`` > 0): the instructor's model answer, released as
  "YOUR ANSWER HERE" (or the text outside its solution region), graded by hand in formgrader;
  their points add to the assignment's. nbgrader's "Manually graded task" cells are kept too.

The builder adds what every source notebook has (:mod:`autograder.nbgrader.authoring`): the
grading table; after the task, the simulator text, the setup cell and the text on what to
complete and what of the notebook the autograder runs; and the public-test and hidden grade
cells at the end. An autograded test cell of the instructor's own is refused: autograde never
runs the notebook (the hidden grade cells hold kernelgrade's tests).
"""

from __future__ import annotations

import ast
import copy
import re
from pathlib import Path

import nbformat

from autograder import exercises
from autograder.exercises.base import Exercise
from . import authoring as nba
from . import notebook as nbb
from autograder.source import pyast
from autograder.source.submission import SubmissionError, notebook_source

__all__ = ["NOTEBOOK_NAMES", "build_source_notebook", "notebook_path", "released_code"]

#: Where an exercise's one notebook may be, in each of its solution folders, in this order.
NOTEBOOK_NAMES = ("{name}.ipynb", "{name}/notebook.ipynb")

#: What nbgrader accepts as a grade_id (its CheckCellMetadata preprocessor).
_GRADE_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")

#: What nbgrader's ClearSolutions puts in place of a solution region of a Python code cell.
CODE_STUB = "# YOUR CODE HERE\nraise NotImplementedError()"
#: What marks a line as a region's first or last for nbgrader's ClearSolutions (anywhere in the
#: line: ``### BEGIN SOLUTION`` is the usual spelling).
BEGIN, END = "BEGIN SOLUTION", "END SOLUTION"

YOUR_CODE_INTRO = """\
Complete the code cells below where a region says `# YOUR CODE HERE` ({names}). Keep the
names and the arguments of the task above: the autograder imports your code and {calls}
itself. Cells of your own, to try things out, are welcome anywhere."""


def notebook_path(name: str) -> Path | None:
    """Exercise ``name``'s one notebook (:data:`NOTEBOOK_NAMES` in its solution folders,
    :func:`autograder.exercises.solution_folders`), or None when it is authored with
    ``notebook.py``. Raises :class:`autograder.exercises.UnknownExercise`."""
    for folder in exercises.solution_folders(name):
        for pattern in NOTEBOOK_NAMES:
            path = folder / pattern.format(name=name)
            if path.is_file():
                return path
    return None


def _read(path: Path) -> nbformat.NotebookNode:
    try:
        nb = nbformat.read(str(path), as_version=4)
    except OSError as exc:
        raise nba.AuthoringError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    except Exception as exc:  # noqa: BLE001 - nbformat raises JSON, validation and value errors
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise nba.AuthoringError(f"{path}: not a Jupyter notebook ({first[:200]})") from None
    return nb


def _meta(cell) -> dict:
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return dict(meta) if isinstance(meta, dict) else {}


def _where(path: Path, number: int, cell) -> str:
    first = (cell.source.strip().splitlines() or [""])[0]
    return f"{path}, cell {number} ({cell.cell_type}, {first[:50]!r})"


def _check_task(path: Path, cell) -> str:
    if cell.cell_type != "markdown":
        raise nba.AuthoringError(f"{path}: the first cell must be the task, in markdown "
                                 f"(found a {cell.cell_type} cell)")
    task = cell.source.strip("\n")
    if not task.startswith("# "):
        raise nba.AuthoringError(f"{path}: the task cell must start with a '# ' title")
    if "\n## Your task\n" not in task + "\n":
        raise nba.AuthoringError(f"{path}: the task cell has no '## Your task' section")
    return task


def _grade_meta(grade_id: str, *, grade: bool, solution: bool, task: bool, locked: bool,
                points: float | None) -> dict:
    meta = {"grade": grade, "grade_id": grade_id, "locked": locked,
            "schema_version": nbb.SCHEMA_VERSION, "solution": solution, "task": task}
    if grade or task:
        meta["points"] = float(points or 0.0)
    return {"nbgrader": meta}


def _manual_cell(path: Path, number: int, cell, meta: dict, grade_id: str):
    """A written answer (nbgrader's "Manually graded answer") or a manually graded task."""
    where = _where(path, number, cell)
    if meta.get("grade") and not meta.get("solution"):
        raise nba.AuthoringError(f"{where}: a markdown grade cell must be a written answer "
                                 "(nbgrader's 'Manually graded answer': solution and grade)")
    points = meta.get("points")
    if isinstance(points, bool) or not isinstance(points, (int, float)) or not points > 0:
        raise nba.AuthoringError(f"{where}: a written answer needs its points (a number "
                                 f"above 0 in its nbgrader metadata), not {points!r}")
    out = nbformat.v4.new_markdown_cell(cell.source.strip("\n"), id=grade_id)
    out.metadata = _grade_meta(grade_id, grade=bool(meta.get("grade")),
                               solution=bool(meta.get("solution")),
                               task=bool(meta.get("task")) and not meta.get("grade"),
                               locked=bool(meta.get("task")) and not meta.get("grade"),
                               points=float(points))
    return out, float(points)


def _code_cell(path: Path, number: int, cell, meta: dict, grade_id: str):
    """A skeleton cell (solution regions or nbgrader's "Autograded answer"), a read-only code
    cell, or a cell of the student's own (no metadata)."""
    where = _where(path, number, cell)
    if meta.get("grade") or meta.get("task"):
        raise nba.AuthoringError(
            f"{where}: an autograded test cell of your own never runs (nbgrader autograde "
            "does not run the notebook; kernelgrade writes the hidden grade cells): make it a "
            "plain code cell, or a public case in exercise.py")
    source = cell.source.strip("\n")
    out = nbformat.v4.new_code_cell(source, id=grade_id)
    if BEGIN in source or meta.get("solution"):
        try:
            released_code(source)
        except ValueError as exc:
            raise nba.AuthoringError(f"{where}: {exc}") from None
        out.metadata = _grade_meta(grade_id, grade=False, solution=True, task=False,
                                   locked=False, points=None)
        return out, True
    if meta.get("locked"):
        out.metadata = _grade_meta(grade_id, grade=False, solution=False, task=False,
                                   locked=True, points=None)
    return out, False


def released_code(source: str) -> str:
    """A skeleton cell's ``source`` as ``nbgrader generate_assignment`` releases it: each
    ``### BEGIN SOLUTION`` … ``### END SOLUTION`` region replaced by :data:`CODE_STUB` at the
    marker's indentation; a solution cell without a region becomes the stub alone. Raises
    ``ValueError`` for a region that is not closed or a marker out of place."""
    lines, out, inside, indent = source.splitlines(), [], False, ""
    if not any(BEGIN in ln for ln in lines):
        return CODE_STUB
    for number, line in enumerate(lines, 1):
        if BEGIN in line:
            if inside:
                raise ValueError(f"line {number}: {nbb.BEGIN_SOLUTION} inside a solution region")
            inside, indent = True, line[: len(line) - len(line.lstrip())]
            out += [indent + stub for stub in CODE_STUB.splitlines()]
        elif END in line:
            if not inside:
                raise ValueError(f"line {number}: {nbb.END_SOLUTION} without its "
                                 f"{nbb.BEGIN_SOLUTION}")
            inside = False
        elif not inside:
            out.append(line)
    if inside:
        raise ValueError(f"a solution region has no {nbb.END_SOLUTION}")
    return "\n".join(out)


def _definitions(text: str, shown: str) -> dict[str, ast.AST]:
    """Top-level functions and assigned names of ``text``, each its last definition, with
    function docstrings dropped (they may differ)."""
    try:
        tree = pyast.parse(text, shown)
    except SyntaxError as exc:
        raise nba.AuthoringError(f"{shown} does not parse: {exc.msg} (line {exc.lineno})"
                                 ) from None
    found: dict[str, ast.AST] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if len(body) > 1 and isinstance(body[0], ast.Expr) and isinstance(
                    body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
                node = copy.copy(node)
                node.body = body[1:]
            found[node.name] = node
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    found[target.id] = node.value
    return found


def _difference(mine: ast.AST, theirs: ast.AST) -> str:
    """The first line where two definitions differ, as code (comments and layout aside):
    ``"the notebook: `x = 1`; the file: `x = 2`"``."""
    a, b = ast.unparse(mine).splitlines(), ast.unparse(theirs).splitlines()
    for one, other in zip(a + [""] * len(b), b + [""] * len(a)):
        if one != other:
            return (f"the notebook: `{one.strip()[:80] or '(nothing)'}`; the file: "
                    f"`{other.strip()[:80] or '(nothing)'}`")
    return "they differ"


def _agreement(ex: Exercise, path: Path, cells: list) -> None:
    """Raise :class:`AuthoringError` unless the notebook's code (every code cell, regions kept,
    as the grader reads a notebook) defines each name of ``solutions/<name>.py`` as that file
    does, and no contract function reaches the release whole."""
    solution = nba._solution_path(ex)
    nb = nbb.notebook(list(cells))
    try:
        code = notebook_source(nbformat.writes(nb), str(path)).text
    except SubmissionError as exc:
        raise nba.AuthoringError(str(exc)) from None
    want = _definitions(solution.read_text(encoding="utf-8"), str(solution))
    have = _definitions(code, str(path))
    problems = []
    for name, node in want.items():
        if name not in have:
            problems.append(f"`{name}` is in {solution.name} but no code cell defines it")
        elif ast.dump(have[name]) != ast.dump(node):
            problems.append(f"`{name}` differs from {solution.name}'s "
                            f"({_difference(have[name], node)})")
    if problems:
        raise nba.AuthoringError(
            f"{path} and {solution} disagree: {'; '.join(problems)}. The grader, the preflight "
            f"and `autograder check` run {solution.name}: make its definitions and the "
            "notebook's the same")
    released = "\n".join(released_code(c.source) if _meta(c).get("solution") else c.source
                          for c in cells if c.cell_type == "code")
    out = _definitions(released, f"{path} as released")
    whole = [f for f in ex.contract.functions or (ex.contract.kernel,)
             if f in out and f in want and ast.dump(out[f]) == ast.dump(want[f])]
    if whole:
        raise nba.AuthoringError(
            f"{path}: the release would hand out the solution of {', '.join(whole)}: put "
            f"its body between {nbb.BEGIN_SOLUTION} and {nbb.END_SOLUTION}")


def build_source_notebook(name: str) -> nbformat.NotebookNode:
    """The nbgrader source notebook of exercise ``name`` from its one notebook
    (:func:`notebook_path`; the cells are described in the module docstring): the task with
    "How it is graded" (written answers a row of their own), the simulator text and setup
    cell, the text on what to complete and what the autograder runs, then the instructor's cells
    in order, then the public-test and hidden grade cells. Validated against the
    nbformat schema.

    Raises :class:`autograder.nbgrader.authoring.AuthoringError` (naming the file and cell)
    for a notebook that cannot be read, a first cell that is not the task, an exercise folder
    that also has ``notebook.py``, no skeleton cell, an open solution region, an autograded
    test cell, a written answer without points, a grade_id nbgrader refuses or used twice, code
    that disagrees with ``solutions/<name>.py`` or hands out a contract function;
    :class:`autograder.errors.GraderSetupError` when ``solutions/<name>.py`` is missing;
    ``FileNotFoundError`` when the exercise has no one notebook."""
    ex = exercises.get(name)
    path = notebook_path(name)
    if path is None:
        raise FileNotFoundError(f"{name} has no notebook at "
                                f"{exercises.solution_folders(name)[0] / (name + '.ipynb')}")
    text_file = exercises.folder(name) / exercises.NOTEBOOK
    if text_file.is_file() and exercises.is_builtin(name):  # not the instructor's to remove
        raise nba.AuthoringError(
            f"{name} has both {text_file} and {path}: {name} is a built-in exercise, whose "
            f"text is kernelgrade's {text_file.name}. To author it as one notebook, copy its "
            f"exercise.py into a folder of your own assignments (DIR/{name}/exercise.py, no "
            f"{text_file.name}) and build with --assignments DIR")
    if text_file.is_file():
        raise nba.AuthoringError(f"{name} has both {text_file} and {path}: the notebook holds "
                                 f"the task text too; remove {text_file.name}")
    nb = _read(path)
    cells = [c for c in nb.cells if c.source.strip()]
    if not cells:
        raise nba.AuthoringError(f"{path}: no cell (the first one is the task)")
    task = _check_task(path, cells[0])
    shape = nba._shape(ex)
    head = nba.setup_cells(ex) + [nbb.markdown(f"your-{shape.replace(' ', '-')}",
                                               _your_code_md(ex))]
    tail = nba.grading_cells(ex)
    taken = {c.id for c in head + tail} | {"task"}
    body, written, skeletons = [], [], 0
    for number, cell in enumerate(nb.cells, 1):
        if cell is cells[0] or not cell.source.strip():
            continue
        meta = _meta(cell)
        grade_id = meta.get("grade_id") or f"{name}-cell-{number}"
        if not isinstance(grade_id, str) or not _GRADE_ID.fullmatch(grade_id):
            raise nba.AuthoringError(f"{_where(path, number, cell)}: its grade_id {grade_id!r} "
                                     "is not letters, digits, '-' and '_' (64 at most)")
        if grade_id in taken:
            raise nba.AuthoringError(f"{_where(path, number, cell)}: the grade_id {grade_id!r} "
                                     "is used twice (or is one the builder writes)")
        taken.add(grade_id)
        if cell.cell_type == "markdown" and (meta.get("grade") or meta.get("task")):
            out, points = _manual_cell(path, number, cell, meta, grade_id)
            written.append(points)
        elif cell.cell_type == "markdown":
            if meta.get("solution") or BEGIN in cell.source:
                raise nba.AuthoringError(f"{_where(path, number, cell)}: a solution region "
                                         "in markdown makes a written answer, which needs grade "
                                         "and points (nbgrader's 'Manually graded answer')")
            out = nbb.markdown(grade_id, cell.source)
        elif cell.cell_type == "code":
            out, skeleton = _code_cell(path, number, cell, meta, grade_id)
            skeletons += skeleton
        else:
            out = nbformat.v4.new_raw_cell(cell.source.strip("\n"), id=grade_id)
        body.append(out)
    if not skeletons:
        raise nba.AuthoringError(
            f"{path}: no skeleton cell (a code cell with {nbb.BEGIN_SOLUTION} … "
            f"{nbb.END_SOLUTION} around the code the student writes)")
    _agreement(ex, path, [c for c in body if c.cell_type == "code"])
    first = nbb.markdown("task", task + "\n\n" + nba._grading_md(ex, written))
    return nbb.notebook([first] + head + body + tail)


def _your_code_md(ex: Exercise) -> str:
    """What to write and what of the notebook's code the autograder runs, for a notebook with
    a skeleton (the text of :data:`autograder.nbgrader.authoring.YOUR_CODE`)."""
    shape = nba._shape(ex)
    names = ex.contract.functions or (ex.contract.kernel,)
    listed = ", ".join(f"`{n}`" for n in (*(c.name for c in ex.contract.constants), *names))
    calls = {nba.KERNEL: f"launches `{ex.contract.kernel}`",
             nba.DEVICE_FUNCTION: f"calls `{ex.contract.kernel}` from a kernel of its own",
             nba.FUNCTIONS: "calls each function"}[shape]
    modules = "`numpy` and `math`" if shape == nba.FUNCTIONS else "`numba`, `numpy` and `math`"
    return nba.YOUR_CODE.format(what=shape, intro=YOUR_CODE_INTRO.format(names=listed,
                                                                          calls=calls),
                                modules=modules, its="their" if shape == nba.FUNCTIONS
                                else "its")
