"""Fixtures for the nbgrader integration: a course built by ``autograder course build``, its
release notebooks (``nbgrader generate_assignment``) and an autograded pair of students.

The expensive fixtures are built once per test session, also under pytest-xdist: the workers
share one copy, guarded by a file lock.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from .nbhelpers import make_course, nbgrader, shared_dir, submit


@pytest.fixture(scope="session")
def released_course(tmp_path_factory) -> Path:
    """A course with every assignment released (``release/<assignment>/<notebook>``)."""
    with shared_dir(tmp_path_factory, "kg-released-course") as (path, done):
        if not done:
            make_course(path)
            (path / ".done").touch()
    return path


@pytest.fixture(scope="session")
def autograded_course(tmp_path_factory, released_course) -> Path:
    """A copy of ``released_course`` where alice (correct) and bob (no boundary checks) of the
    example class handed in 01_tiled_matmul, autograded by ``nbgrader autograde``."""
    with shared_dir(tmp_path_factory, "kg-autograded-course") as (path, done):
        if not done:
            if path.exists():
                shutil.rmtree(path)
            course = Path(shutil.copytree(released_course, path))
            (course / ".done").unlink()
            for student in ("alice", "bob"):
                submit(course, student, "01_tiled_matmul")
            nbgrader(course, "autograde", "01_tiled_matmul", "--log-level=WARN")
            (path / ".done").touch()
    return path
