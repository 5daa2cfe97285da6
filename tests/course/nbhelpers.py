"""Helpers for the nbgrader tests: run nbgrader in a course folder, build and release a course,
hand in the example class's notebooks, read the gradebook.

nbgrader runs as a command (``python -m nbgrader``) in temporary folders. Hidden tests grade on
``KERNELGRADE_TEST_DEVICE`` (default ``sim``).
"""

from __future__ import annotations

import fcntl
import importlib.util
import os
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

from autograder import exercises
from autograder.nbgrader.authoring import notebook_file

ROOT = Path(__file__).resolve().parents[2]
TEST_DEVICE = os.environ.get("KERNELGRADE_TEST_DEVICE", "sim")
#: assignment folder → (exercise, notebook), from the registry (``EXERCISE.assignment``), in
#: course order; nbgrader autograde runs on the first two only
ASSIGNMENTS = {ex.assignment: (ex.name, notebook_file(ex.name))
               for ex in exercises.all_exercises()}
#: every registered exercise: the tests parametrize over these
NAMES = exercises.names()


def source_notebook(name: str):
    """The nbgrader source notebook of exercise ``name``, built from its folder (as ``course
    build`` writes it to ``source/<assignment>/``)."""
    from autograder.nbgrader.authoring import build_source_notebook

    return build_source_notebook(name)


def expected_parts(ex) -> dict[str, float]:
    """The points of each part of exercise ``ex`` that needs a grade cell: correctness (the
    cases' points), and concept and timing where ``ex`` has them (diagnostics carry none)."""
    parts = {"correctness": sum(c.points for c in ex.cases)}
    if ex.concept:
        parts["concept"] = ex.concept.points
    if ex.timing:
        parts["timing"] = ex.timing.points
    return parts


def written_names(ex) -> tuple[str, ...]:
    """The functions a submission of ``ex`` writes: its kernel or device function, or its plain
    functions."""
    return ex.contract.functions or (ex.contract.kernel,)


def split_solution(source: str) -> tuple[str, list[str]]:
    """``(scaffolding, regions)`` of a solution cell's source: the text outside the solution
    markers, and the text of each ``### BEGIN SOLUTION`` … ``### END SOLUTION`` region."""
    from autograder.nbgrader import notebook as nbb

    first, *rest = source.split(nbb.BEGIN_SOLUTION)
    outside, regions = [first], []
    for part in rest:
        region, after = part.split(nbb.END_SOLUTION)
        regions.append(region)
        outside.append(after)
    return "".join(outside), regions


def load_script(relpath: str):
    """Import a script of the repository (e.g. ``examples/make_class.py``) as a module."""
    path = ROOT / relpath
    spec = importlib.util.spec_from_file_location(f"kg_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def kernel_env(**extra) -> dict:
    """Environment for nbgrader and the notebook kernels it starts: the venv's tools on PATH
    (nbgrader runs ``alembic``), the test device for hidden tests, the simulator if on ``sim``."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["KERNELGRADE_DEVICE"] = TEST_DEVICE
    if TEST_DEVICE == "sim":
        env["NUMBA_ENABLE_CUDASIM"] = "1"
    env.update(extra)
    return env


def nbgrader(course: Path, *args: str, timeout: float = 900,
             **env) -> subprocess.CompletedProcess:
    """Run ``nbgrader ARGS`` in ``course``; fails the test with nbgrader's log if it fails."""
    run = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=course,
                         env=kernel_env(**env), capture_output=True, text=True, timeout=timeout)
    if run.returncode != 0:
        pytest.fail(f"nbgrader {' '.join(args)} failed ({run.returncode}):\n"
                    f"{run.stdout[-3000:]}\n{run.stderr[-6000:]}")
    return run


@contextmanager
def shared_dir(tmp_path_factory, name: str):
    """A folder shared by all xdist workers of this session, and whether it is already built."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # the session's folder, shared by its workers
    path = base / name
    with open(base / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield path, (path / ".done").exists()
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def student_notebook(release_path: Path, student: str, assignment: str):
    """The example class's student notebook, made from this session's release notebook."""
    make_class = load_script("examples/make_class.py")
    from autograder.nbgrader import notebook as nbb

    code = make_class.student_code(student, assignment)
    return make_class.student_notebook(nbb.read(release_path), code)


def make_course(path: Path) -> Path:
    """Build a course at ``path`` (``autograder course build``; simulator grades allowed, marked
    provisional, when the tests run on the simulator) and release every assignment,
    in one nbgrader run (its assignment argument is a glob): one start-up instead of one per
    assignment."""
    from autograder.nbgrader.course import build_course

    course = build_course(path, device=TEST_DEVICE, cell_timeout=120,
                          allow_provisional=TEST_DEVICE == "sim", force=True)
    nbgrader(course, "generate_assignment", "*", "--log-level=WARN")
    return course


def submit(course: Path, student: str, assignment: str, code: str | None = None) -> Path:
    """Hand in the example class's notebook of ``student`` (made from this course's release
    notebook), or the release notebook with ``code`` in its solution cell, at
    ``submitted/<student>/<assignment>/``."""
    from autograder.nbgrader import notebook as nbb

    nb_name = ASSIGNMENTS[assignment][1]
    release = course / "release" / assignment / nb_name
    if code is None:
        nb = student_notebook(release, student, assignment)
    else:
        nb = load_script("examples/make_class.py").student_notebook(nbb.read(release), code)
    dest = course / "submitted" / student / assignment / nb_name
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(nbb.dumps(nb), encoding="utf-8")
    return dest


def scores(course: Path, assignment: str, student: str) -> dict[str, tuple[float, float]]:
    """``{grade cell id: (auto score, max score)}`` of one submission, read from the course's
    gradebook with nbgrader's Gradebook API."""
    from nbgrader.api import Gradebook

    exercise, nb_name = ASSIGNMENTS[assignment]
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        sub = gb.find_submission_notebook(nb_name[:-len(".ipynb")], assignment, student)
        return {g.name: (g.auto_score, g.max_score) for g in sub.grades}


def output_text(output) -> str:
    """The text of one code-cell output as a terminal shows it: a stream's text, or a rich
    output's ``text/plain`` (the grade cells' report is one ``display_data`` with HTML and
    text, see :mod:`autograder.nbgrader.preprocessor`)."""
    if output.get("output_type") == "stream":
        return "".join(output.get("text", ""))
    text = output.get("data", {}).get("text/plain", "")
    return "".join(text) if isinstance(text, list) else text
