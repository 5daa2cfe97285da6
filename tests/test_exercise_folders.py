"""One exercise, one folder (issues 11 and 23): every registered exercise keeps all of its
files in ``assignments/<name>/`` but its solutions (``solutions/<name>.py``, and
``solutions/<name>_blockdim.py`` where it has one), and nothing else in the project needs to know
about it.

``conv1d`` was added by touching its folder and its solutions only (plus this test and the
generated documents), so no other file may name it. The older exercises are named on purpose by
test fixtures and example classes; for them only the engine (``autograder/``) must not look them
up by name.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
from pathlib import Path

import pytest

from autograder import exercises
from autograder.authoring import docs
from autograder.exercises import known_bad
from autograder.exercises.base import Exercise
from conftest import ROOT

ALL = exercises.names()

#: The exercise added by touching its folder only.
FOLDER_ONLY = "conv1d"

#: Where the name of an exercise may appear outside its folder: documents generated from the
#: definitions and measurement records.
GENERATED = ("docs/", "benchmarks/results/")

#: Package code that looks exercises up by name today (``work()``, the achieved GFLOP/s or GB/s of
#: the HTML report). Remove a name once that code takes the figure from the definition instead.
#: exercises that package code outside autograder/exercises/ still names, with where (xfail)
NAMED_BY_PACKAGE_CODE: dict[str, str] = {}


def _project_files() -> list[Path]:
    """The project's files as git sees them: tracked, plus untracked ones not ignored (a file
    deleted in the work tree but still tracked is left out). Skips the test without git."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs a git checkout of the project")
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, capture_output=True, check=True).stdout.decode("utf-8", "surrogateescape")
    return sorted({ROOT / p for p in listed.split("\0") if p and (ROOT / p).is_file()})


def _text(path: Path) -> str | None:
    """The file's text, or None for a binary file."""
    data = path.read_bytes()
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _without_generated_table(readme: str) -> str:
    """The README without its exercise table (written by ``python -m autograder.authoring.docs``)."""
    start, end = readme.find(docs.TABLE_START), readme.find(docs.TABLE_END)
    assert 0 <= start < end, "the README lost its exercise table markers"
    return readme[:start] + readme[end + len(docs.TABLE_END):]


def _code_strings(source: str) -> list[tuple[int, str]]:
    """(line, value) of every string constant of Python ``source`` that is not a docstring."""
    tree = ast.parse(source)
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docstrings.add(id(body[0].value))
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and id(node) not in docstrings]


@pytest.mark.parametrize("name", ALL)
def test_every_exercise_folder_is_complete(name):
    folder = exercises.folder(name)
    ex = exercises.get(name)
    assert isinstance(ex, Exercise) and ex.name == name, \
        f"{folder / exercises.DEFINITION} must define EXERCISE = Exercise(name={name!r}, ...)"
    assert ex.number > 0, f"{name}: EXERCISE.number is its place in the course (1, 2, ...)"
    assert (folder / exercises.NOTEBOOK).is_file(), f"{name} has no {exercises.NOTEBOOK}"
    assert exercises.solution_path(name) == ROOT / "solutions" / f"{name}.py"
    mutants = exercises.mutants(name)
    assert len(mutants) >= 3, f"{name} keeps {len(mutants)} known-bad submissions (3 at least)"
    for path in mutants:
        assert known_bad.expectations(path), \
            f"{path.relative_to(ROOT)} declares no '# kernelgrade-expect:' line"


def test_course_numbers_are_distinct():
    numbers = [exercises.get(n).number for n in ALL]
    assert len(set(numbers)) == len(numbers), sorted(numbers)


def test_no_file_outside_its_folder_names_the_exercise_added_by_folder_only():
    folder = exercises.folder(FOLDER_ONLY)
    this_file = Path(__file__).resolve()
    offenders = []
    for path in _project_files():
        relative = path.relative_to(ROOT).as_posix()
        if path.resolve() == this_file or path.is_relative_to(folder) \
                or relative.startswith(GENERATED) \
                or relative in (f"solutions/{FOLDER_ONLY}.py", f"solutions/{FOLDER_ONLY}_blockdim.py"):
            continue
        text = _text(path)
        if text is None:
            continue
        if relative == "README.md":
            text = _without_generated_table(text)
        offenders += [f"{relative}:{i}" for i, line in enumerate(text.splitlines(), 1)
                      if FOLDER_ONLY in line]
    assert not offenders, (f"{FOLDER_ONLY} must need no file outside {folder.relative_to(ROOT)}; "
                           f"named in: {', '.join(offenders)}")


@pytest.mark.parametrize("name", [
    pytest.param(n, marks=pytest.mark.xfail(reason=NAMED_BY_PACKAGE_CODE[n], strict=True))
    if n in NAMED_BY_PACKAGE_CODE else n for n in ALL])
def test_package_code_does_not_look_up_the_exercise_by_name(name):
    # a string equal to the exercise's name or assignment in code (docstrings and comments aside)
    # is code that special-cases it: what differs between exercises belongs in their definitions
    wanted = {name, exercises.get(name).assignment}
    package, own = ROOT / "autograder", ROOT / "assignments"
    offenders = []
    for path in _project_files():
        if path.suffix != ".py" or not path.is_relative_to(package) or path.is_relative_to(own):
            continue
        offenders += [f"{path.relative_to(ROOT)}:{line}"
                      for line, value in _code_strings(path.read_text(encoding="utf-8"))
                      if value in wanted]
    assert not offenders, f"package code names {name}: {', '.join(offenders)}"
