"""Find the submissions of a class: nbgrader's ``submitted/<student>/<assignment>/`` layout or a
flat folder of ``.py`` / ``.ipynb`` files (one per student, named after the student)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from . import exercises

SUBMISSION_SUFFIXES = (".ipynb", ".py")


@dataclass(frozen=True)
class Submission:
    """One student's file for one exercise. ``path`` is None when the student's folder holds no
    notebook or ``.py`` file (graded 0 with a message, never dropped)."""

    student: str
    exercise: str
    path: Path | None
    key: str  # unique and stable: "<student>/<assignment or exercise>"


def exercise_for(assignment: str, filename: str | None = None) -> str | None:
    """The exercise an nbgrader assignment folder (``01_tiled_matmul``) or file stem names."""
    known = exercises.names()
    for candidate in (Path(filename).stem if filename else None,
                      re.sub(r"^\d+[_-]", "", assignment), assignment):
        if candidate in known:
            return candidate
    return None


def _files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir()
                  if p.is_file() and p.suffix in SUBMISSION_SUFFIXES
                  and not p.name.startswith("."))


def discover(root: str | Path, exercise: str | None = None) -> list[Submission]:
    """All submissions under ``root``, sorted by key.

    A folder whose sub-folders hold sub-folders is taken as nbgrader's ``submitted/`` layout;
    otherwise ``root`` is a flat folder of files and ``exercise`` must be given. Raises
    ``ValueError`` when ``root`` is not a folder, or for a flat folder without ``exercise``.
    """
    root = Path(root)
    if not root.is_dir():
        raise ValueError(f"{root} is not a folder")
    students = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))
    if any(any(q.is_dir() for q in s.iterdir()) for s in students):
        return _discover_nbgrader(students, exercise)
    if exercise is None:
        raise ValueError(f"{root} is a flat folder of files: give --exercise")
    return [Submission(p.stem, exercise, p, f"{p.stem}/{exercise}") for p in _files(root)]


def _discover_nbgrader(students: list[Path], only: str | None) -> list[Submission]:
    found = []
    for student in students:
        for assignment in sorted(p for p in student.iterdir() if p.is_dir()):
            files = _files(assignment)
            chosen = None
            for f in files:
                if exercise_for(assignment.name, f.name):
                    chosen = f
                    break
            chosen = chosen or (files[0] if files else None)
            name = only or exercise_for(assignment.name, chosen.name if chosen else None)
            if name is None or (only and exercise_for(assignment.name) not in (None, only)):
                continue
            found.append(Submission(student.name, name, chosen, f"{student.name}/{assignment.name}"))
    return sorted(found, key=lambda s: s.key)
