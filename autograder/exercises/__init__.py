"""The exercise registry: one folder per assignment, found by looking.

The course's layout (docs/architecture.md, "Where a change goes")::

    assignments/<name>/exercise.py    the definition: ``EXERCISE = Exercise(...)`` (contract,
                                      cases, reference, points, concept, timing), written with
                                      :mod:`autograder.define`
    assignments/<name>/notebook.py    the student notebook's own text, jupytext percent format
    assignments/<name>/mutants/*.py   known-bad submissions with their ``# kernelgrade-expect:``
                                      headers
    assignments/<name>/variants/*.py  (timed exercises) textbook-correct kernels that must get
                                      full points on a GPU
    assignments/<name>/driver.py      (some exercises) the grader's kernel that calls the
                                      student's device function
    solutions/<name>.py               the instructor's solution (never in a wheel, never shown
                                      to a child)
    solutions/<name>_blockdim.py      (timed exercises) the instructor's kernel with loop bounds
                                      read from ``cuda.blockDim`` (issue 22): a second timing
                                      reference; the timing takes the faster (issue 30)

The built-in assignments are the checkout's ``assignments/`` (an installed kernelgrade carries
them as the package ``kernelgrade_assignments``, without mutants or variants); their solutions
the checkout's ``solutions/``, else ``$KERNELGRADE_SOLUTIONS`` (``--solutions DIR``). A course's
own assignments live in a folder of the same layout anywhere: :func:`add_folder` (``--assignments
DIR``, or ``$KERNELGRADE_ASSIGNMENTS``, a list separated by ``os.pathsep``) registers them; an
exercise of a built-in name replaces the built-in one. Their solutions are in the ``solutions/``
folder beside that folder, else ``$KERNELGRADE_SOLUTIONS``. Each folder is imported as a package
of its own (:mod:`autograder.exercises.package`), so an assignment may import its siblings
relatively (``from . import driver``). The engine (``autograder/``) names no exercise.
"""

from __future__ import annotations

import functools
import importlib
import os
from dataclasses import replace
from pathlib import Path

from autograder import settings
from autograder.exercises import package as assignment_package
from ..errors import GraderSetupError
from .base import Exercise

#: The project's root in a source checkout (where ``assignments/`` and ``solutions/`` are).
CHECKOUT = Path(__file__).resolve().parents[2]
DEFINITION = "exercise.py"
NOTEBOOK = "notebook.py"
MUTANTS = "mutants"
VARIANTS = "variants"
DRIVER = "driver.py"
#: The folder of solutions beside a folder of assignments.
SOLUTIONS_FOLDER = "solutions"

#: A folder of instructor solutions (``<name>.py`` or ``<name>/solution.py``), for an installed
#: kernelgrade that carries none; a course's nbgrader_config.py sets it to the course's
#: ``instructor/solutions`` (``autograder course build`` copies them there).
SOLUTIONS_ENV = settings.SOLUTIONS
#: Folders of a course's own assignments (``os.pathsep``-separated), registered in every
#: process that reads this registry (grader, batch workers): ``--assignments DIR`` sets it.
ASSIGNMENTS_ENV = settings.ASSIGNMENTS


@functools.lru_cache(maxsize=1)
def builtin_root() -> Path | None:
    """The folder of the built-in assignments: the checkout's ``assignments/``, else the
    installed package ``kernelgrade_assignments``; None when neither is there. Looked up once
    per process."""
    if (CHECKOUT / "assignments").is_dir() and (CHECKOUT / "pyproject.toml").is_file():
        return CHECKOUT / "assignments"
    import importlib.util

    try:
        spec = importlib.util.find_spec(assignment_package.BUILTIN)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0]).resolve()


class DefinitionError(GraderSetupError):
    """An assignment's ``exercise.py`` (or a module it imports) cannot be loaded, or defines no
    ``EXERCISE = Exercise(...)``: the instructor's fault, so a setup error (exit status 2),
    never a student's grade. ``str()`` names the file and what it raised, on one line."""


class UnknownExercise(KeyError):
    """No exercise of that name; ``str()`` lists the known ones."""

    def __str__(self) -> str:
        return f"unknown exercise {self.args[0]!r}; known: {', '.join(names())}"


#: Course folders registered by :func:`add_folder`, in order (later ones win).
_ADDED: list[Path] = []
#: Definitions loaded: name → (folder of assignments it came from, Exercise).
_LOADED: dict[str, tuple[Path, Exercise]] = {}


def add_folder(path: str | os.PathLike) -> list[str]:
    """Register, for this process, every assignment in the folder ``path`` (each
    ``<name>/exercise.py`` below it, laid out as the built-in ``assignments/``). An exercise of
    a built-in name replaces the built-in one, and a later folder an earlier one. Nothing is
    imported until :func:`get` asks for it. Returns the names found, sorted. Raises
    ``NotADirectoryError`` for a path that is not a folder."""
    root = Path(path).resolve()
    if not root.is_dir():
        raise NotADirectoryError(f"no folder of assignments at {path}")
    if root in _ADDED:
        _ADDED.remove(root)
    _ADDED.append(root)
    found = sorted(p.parent.name for p in root.glob(f"*/{DEFINITION}"))
    for name in found:
        _LOADED.pop(name, None)
    return found


def _from_environment() -> None:
    for entry in os.environ.get(ASSIGNMENTS_ENV, "").split(os.pathsep):
        if entry and Path(entry).resolve() not in _ADDED and Path(entry).is_dir():
            add_folder(entry)


def roots() -> list[Path]:
    """Every folder of assignments this process reads, built-in first, later ones winning."""
    _from_environment()
    builtin = builtin_root()
    return ([builtin] if builtin is not None else []) + list(_ADDED)


def _root_of(name: str) -> Path | None:
    for root in reversed(roots()):
        if (root / name / DEFINITION).is_file():
            return root
    return None


def names() -> list[str]:
    """Names of all exercises (``<name>/exercise.py`` in every folder of :func:`roots`),
    sorted."""
    return sorted({p.parent.name for root in roots() for p in root.glob(f"*/{DEFINITION}")})


def folder(name: str) -> Path:
    """The folder of exercise ``name``. Raises :class:`UnknownExercise`."""
    root = _root_of(name)
    if root is None:
        raise UnknownExercise(name)
    return root / name


def package_of(root: Path) -> str:
    """The package name the folder of assignments ``root`` is imported as."""
    return assignment_package.package_name(root, builtin=root == builtin_root())


def is_builtin(name: str) -> bool:
    """True when exercise ``name`` comes from the built-in assignments (which a wheel carries),
    not from a course's own folder. Raises :class:`UnknownExercise`."""
    return folder(name).parent == builtin_root()


def shared_helpers(name: str) -> list[Path]:
    """The ``*.py`` files beside exercise ``name``'s folder, which its definition may import
    (``from ..matmul_common import ...``), sorted. Raises :class:`UnknownExercise`."""
    return sorted(folder(name).parent.glob("*.py"))


def _import(root: Path, name: str, part: str):
    package = package_of(root)
    assignment_package.register(package, root)
    return importlib.import_module(f"{package}.{name}.{part}")


def module(name: str, part: str = "exercise"):
    """The module ``part`` of exercise ``name``'s folder (``"exercise"``, ``"driver"``),
    imported from its folder of assignments. Raises :class:`UnknownExercise` and
    ``ImportError``."""
    root = _root_of(name)
    if root is None:
        raise UnknownExercise(name)
    return _import(root, name, part)


def get(name: str) -> Exercise:
    """The exercise called ``name``. Raises :class:`UnknownExercise`; a definition that does
    not load or defines no ``EXERCISE = Exercise(...)`` raises :class:`DefinitionError` naming
    its file. A contract's ``driver`` (a module below the folder of assignments, e.g.
    ``grid_barrier.driver``) comes back as the full module name, with the folder the child
    registers it from (``driver_root``)."""
    root = _root_of(name)
    if root is None:
        raise UnknownExercise(name)
    known = _LOADED.get(name)
    if known is not None and known[0] == root:
        return known[1]
    package = package_of(root)
    try:
        exercise = getattr(_import(root, name, "exercise"), "EXERCISE", None)
    except Exception as exc:  # noqa: BLE001 - the instructor's code: whatever it raises
        first = (str(exc).strip().splitlines() or [""])[0]
        raise DefinitionError(f"{root / name / DEFINITION} does not load: "
                              f"{type(exc).__name__}: {first}") from exc
    if not isinstance(exercise, Exercise):
        raise DefinitionError(f"{root / name / DEFINITION} defines no EXERCISE = Exercise(...)")
    driver = exercise.contract.driver
    if driver and not driver.startswith(package + "."):
        exercise = replace(exercise, contract=replace(
            exercise.contract, driver=f"{package}.{driver}", driver_root=str(root)))
    _LOADED[name] = (root, exercise)
    return exercise


def all_exercises() -> list[Exercise]:
    """Every exercise, in course order (:attr:`Exercise.number`, then name)."""
    return sorted((get(n) for n in names()), key=lambda e: (e.number, e.name))


def _with_named_folder(folders: list[Path]) -> list[Path]:
    extra = os.environ.get(SOLUTIONS_ENV)
    return folders + [Path(extra)] if extra else folders


def solution_folders(name: str) -> list[Path]:
    """Where the instructor's solutions of exercise ``name`` may be: the ``solutions/``
    folder beside its folder of assignments, then ``$KERNELGRADE_SOLUTIONS``."""
    return _with_named_folder([folder(name).parent.parent / SOLUTIONS_FOLDER])


def every_solution_folder() -> list[Path]:
    """Every folder of instructor solutions this process knows (the ``solutions/`` beside
    each of :func:`roots`, and ``$KERNELGRADE_SOLUTIONS``): those that exist, resolved, once
    each. What the sandbox never shows a child."""
    found = _with_named_folder([root.parent / SOLUTIONS_FOLDER for root in roots()])
    return [p for p in dict.fromkeys(p.resolve() for p in found) if p.is_dir()]


def solution_path(exercise: Exercise | str) -> Path:
    """The instructor solution of ``exercise``: ``<name>.py`` (or ``<name>/solution.py``) in
    one of :func:`solution_folders` (an installed kernelgrade carries none: ``--solutions DIR``
    or ``$KERNELGRADE_SOLUTIONS``). Raises ``FileNotFoundError`` naming where it looked."""
    name = exercise if isinstance(exercise, str) else exercise.name
    candidates = [p for d in solution_folders(name)
                  for p in (d / f"{name}.py", d / name / "solution.py")]
    for path in candidates:
        if path.is_file():
            return path
    raise FileNotFoundError(
        f"no instructor solution for {name}: looked at {', '.join(map(str, candidates))} "
        f"(an installed kernelgrade carries none: pass --solutions DIR or set {SOLUTIONS_ENV} "
        "to a folder of solutions, e.g. a course's instructor/solutions)")


def timing_solution_path(exercise: Exercise | str, bounds_at_run_time: bool = False) -> Path:
    """:func:`solution_path`, or with ``bounds_at_run_time`` the instructor's kernel with its
    loop bounds read from ``cuda.blockDim`` at run time where the exercise has one
    (``<name>_blockdim.py`` or ``<name>/solution_blockdim.py`` in one of
    :func:`solution_folders`; the bundles of a course and of Gradescope carry it). Which of
    them a student is timed against is not chosen by the student's code: every one is a
    candidate (:func:`timing_solution_paths`). Raises ``FileNotFoundError`` as
    :func:`solution_path` does."""
    name = exercise if isinstance(exercise, str) else exercise.name
    if bounds_at_run_time:
        for d in solution_folders(name):
            for path in (d / f"{name}_blockdim.py", d / name / "solution_blockdim.py"):
                if path.is_file():
                    return path
    return solution_path(name)


def timing_solution_paths(exercise: Exercise | str) -> list[Path]:
    """Every instructor reference a student's kernel may be timed against: :func:`solution_path`
    first, then the run-time-bounds kernel where the exercise has one
    (:func:`timing_solution_path`). The timing compares with the fastest of them on the GPU
    that measures (:func:`autograder.child.timing.measure_timing`), each at the instructor's own
    constants, whatever the student's code. Raises ``FileNotFoundError`` as
    :func:`solution_path` does."""
    first = solution_path(exercise)
    other = timing_solution_path(exercise, bounds_at_run_time=True)
    return [first] if other == first else [first, other]


def mutants(name: str) -> list[Path]:
    """The known-bad submissions of exercise ``name`` (``mutants/*.py`` in its folder), sorted;
    empty for the built-in assignments of an installed kernelgrade, which carries none."""
    return sorted((folder(name) / MUTANTS).glob("*.py"))


def variants(name: str) -> list[Path]:
    """The textbook-correct variants of exercise ``name`` (``variants/*.py`` in its folder,
    issue 22): kernels a course teaches that must get full points, timing included, on a GPU
    (``tests/test_variants_gpu.py``); sorted, empty for an installed kernelgrade."""
    return sorted((folder(name) / VARIANTS).glob("*.py"))
