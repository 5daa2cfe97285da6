"""The exercise registry: one folder per exercise, found by looking.

An exercise is a folder ``autograder/exercises/<name>/`` holding everything about it::

    exercise.py     the definition: ``EXERCISE = Exercise(...)`` (contract, cases, reference,
                    points, concept, timing)
    solution.py     the instructor's solution (left out of wheels: students never receive it)
    notebook.py     the student notebook's own text, jupytext percent format
    mutants/*.py    known-bad submissions with their ``# kernelgrade-expect:`` headers
    driver.py       (some exercises) the grader's kernel that calls the student's device function

Adding an exercise is adding a folder: the registry, the notebooks, the tests, the docs table and
the GPU checks find it here. Folders are namespace packages (no ``__init__.py``), so a wheel
carries only the files ``pyproject.toml`` lists as package data.

A course's own exercises live in a folder of the same layout anywhere
(``DIR/<name>/exercise.py``, ...): :func:`add_folder` registers them in this process (an
exercise of a built-in name replaces the built-in one). Their ``exercise.py`` imports the
definition API absolutely (``from autograder.exercises.base import Exercise, ...``); a
``driver`` is not supported there yet (the child imports a driver by module name).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from pathlib import Path

from .base import Exercise

HERE = Path(__file__).resolve().parent
DEFINITION = "exercise.py"
SOLUTION = "solution.py"
#: The instructor's kernel with loop bounds read from ``cuda.blockDim`` (issue 22).
SOLUTION_BLOCKDIM = "solution_blockdim.py"
NOTEBOOK = "notebook.py"
MUTANTS = "mutants"
VARIANTS = "variants"

#: A folder of instructor solutions (``<name>.py`` or ``<name>/solution.py``), for an installed
#: kernelgrade that carries none; a course's nbgrader_config.py sets it to the course's
#: ``instructor/solutions`` (``autograder course build`` copies them there).
SOLUTIONS_ENV = "KERNELGRADE_SOLUTIONS"


class UnknownExercise(KeyError):
    """No exercise of that name; ``str()`` lists the known ones."""

    def __str__(self) -> str:
        return f"unknown exercise {self.args[0]!r}; known: {', '.join(names())}"


#: Exercises registered from other folders (:func:`add_folder`): name → folder.
_ADDED: dict[str, Path] = {}
#: Their definitions, loaded once: name → Exercise.
_LOADED: dict[str, Exercise] = {}


def add_folder(path: str | os.PathLike) -> list[str]:
    """Register, for this process, every exercise in ``path``: each ``<name>/exercise.py``
    below it, laid out as a built-in exercise folder (solution, notebook, ``mutants/``). An
    exercise of a built-in name replaces the built-in one, and a later folder an earlier one.
    Nothing is imported until :func:`get` asks for it. Returns the names found, sorted.
    Raises ``NotADirectoryError`` for a path that is not a folder."""
    root = Path(path).resolve()
    if not root.is_dir():
        raise NotADirectoryError(f"no folder of exercises at {path}")
    found = sorted(p.parent.name for p in root.glob(f"*/{DEFINITION}"))
    for name in found:
        _ADDED[name] = root / name
        _LOADED.pop(name, None)
    return found


def names() -> list[str]:
    """Names of all exercises (folders here with an ``exercise.py``, and those registered by
    :func:`add_folder`), sorted."""
    return sorted({p.parent.name for p in HERE.glob(f"*/{DEFINITION}")} | set(_ADDED))


def folder(name: str) -> Path:
    """The folder of exercise ``name``. Raises :class:`UnknownExercise`."""
    path = _ADDED.get(name, HERE / name)
    if not (path / DEFINITION).is_file():
        raise UnknownExercise(name)
    return path


def get(name: str) -> Exercise:
    """The exercise called ``name``. Raises :class:`UnknownExercise`; an added definition
    that does not define ``EXERCISE`` raises ``AttributeError`` naming its file."""
    path = folder(name)
    if name not in _ADDED:
        return importlib.import_module(f"{__name__}.{name}.exercise").EXERCISE
    if name not in _LOADED:
        spec = importlib.util.spec_from_file_location(
            f"kernelgrade_added_exercises.{name}.exercise", path / DEFINITION)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        if not isinstance(getattr(module, "EXERCISE", None), Exercise):
            raise AttributeError(f"{path / DEFINITION} defines no EXERCISE = Exercise(...)")
        _LOADED[name] = module.EXERCISE
    return _LOADED[name]


def all_exercises() -> list[Exercise]:
    """Every exercise, in course order (:attr:`Exercise.number`, then name)."""
    return sorted((get(n) for n in names()), key=lambda e: (e.number, e.name))


def solution_path(exercise: Exercise | str) -> Path:
    """The instructor solution of ``exercise``: ``solution.py`` in its folder (a source
    checkout), else ``$KERNELGRADE_SOLUTIONS/<name>.py`` or ``.../<name>/solution.py`` (an
    installed kernelgrade, which carries no solutions). Raises ``FileNotFoundError`` naming
    where it looked."""
    name = exercise if isinstance(exercise, str) else exercise.name
    candidates = [folder(name) / SOLUTION]
    extra = os.environ.get(SOLUTIONS_ENV)
    if extra:
        candidates += [Path(extra) / f"{name}.py", Path(extra) / name / SOLUTION]
    for path in candidates:
        if path.is_file():
            return path
    raise FileNotFoundError(
        f"no instructor solution for {name}: looked at {', '.join(map(str, candidates))} "
        f"(an installed kernelgrade carries none: pass --solutions DIR or set {SOLUTIONS_ENV} "
        "to a folder of solutions, e.g. a course's instructor/solutions)")


def timing_solution_path(exercise: Exercise | str, bounds_at_run_time: bool = False) -> Path:
    """The instructor solution a student's kernel is timed against: :func:`solution_path`, or,
    for a student whose loops are bounded by ``cuda.blockDim`` at run time
    (:func:`autograder.timing.loop_bounds_at_run_time`), the instructor's kernel bounded the
    same way when the exercise has one (``solution_blockdim.py`` in its folder, or
    ``$KERNELGRADE_SOLUTIONS/<name>_blockdim.py`` / ``.../<name>/solution_blockdim.py``).
    Raises ``FileNotFoundError`` as :func:`solution_path` does."""
    name = exercise if isinstance(exercise, str) else exercise.name
    if bounds_at_run_time:
        candidates = [folder(name) / SOLUTION_BLOCKDIM]
        extra = os.environ.get(SOLUTIONS_ENV)
        if extra:
            candidates += [Path(extra) / f"{name}_blockdim.py", Path(extra) / name / SOLUTION_BLOCKDIM]
        for path in candidates:
            if path.is_file():
                return path
    return solution_path(name)


def mutants(name: str) -> list[Path]:
    """The known-bad submissions of exercise ``name`` (``mutants/*.py`` in its folder), sorted;
    empty for an installed kernelgrade, which carries none."""
    return sorted((folder(name) / MUTANTS).glob("*.py"))


def variants(name: str) -> list[Path]:
    """The textbook-correct variants of exercise ``name`` (``variants/*.py`` in its folder,
    issue 22): kernels a course teaches that must get full points, timing included, on a GPU
    (``tests/test_variants_gpu.py``); sorted, empty for an installed kernelgrade."""
    return sorted((folder(name) / VARIANTS).glob("*.py"))
