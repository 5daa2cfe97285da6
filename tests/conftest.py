"""Shared fixtures: grading on the simulator, and the paths of solutions and mutants."""

from __future__ import annotations

import fcntl
import functools
import hashlib
import json
import os
import re
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings as hypothesis_settings

from autograder.exercises import known_bad
from autograder.grader import grade, gpu_available
from autograder.wire.results import ExerciseResult

# Hypothesis's timing checks measure the machine, not the code: on CI's 2 cores its draws share
# the CPU with the gradings of the other test workers (a 1 s "too slow" health check failed there).
hypothesis_settings.register_profile("kernelgrade", deadline=None,
                                     suppress_health_check=[HealthCheck.too_slow])
hypothesis_settings.load_profile("kernelgrade")

ROOT = Path(__file__).resolve().parents[1]
EXERCISES = ROOT / "assignments"
SOLUTIONS = ROOT / "solutions"
FILES = ROOT / "tests" / "files"

# The same tests run on the simulator (CI, laptops) and on a GPU (KERNELGRADE_TEST_DEVICE=gpu).
TEST_DEVICE = os.environ.get("KERNELGRADE_TEST_DEVICE", "sim")
#: the seed of :func:`grade_file` (and of the preflight's grading of a solution)
SEED = 20261122

# The preflight's on-disk cache (autograder.grading.preflight) of this test run: shared by the CLI
# processes the tests start, never the user's ~/.cache.
_MADE_HERE: list[str] = []  # removed when the run ends (pytest_sessionfinish, below)
if "KERNELGRADE_CACHE_DIR" not in os.environ:
    os.environ["KERNELGRADE_CACHE_DIR"] = tempfile.mkdtemp(prefix="kernelgrade-test-cache-")
    _MADE_HERE.append(os.environ["KERNELGRADE_CACHE_DIR"])
# The gradings graded_once shares between this run's processes (the controller makes the folder
# before pytest-xdist starts its workers, which inherit the variable): one run, one tree.
SHARED_ENV = "KG_TESTS_SHARED_GRADINGS"
if SHARED_ENV not in os.environ:
    os.environ[SHARED_ENV] = tempfile.mkdtemp(prefix="kernelgrade-test-gradings-")
    _MADE_HERE.append(os.environ[SHARED_ENV])


def pytest_sessionfinish(session):
    """The run's folders go with the process that made them (the controller under xdist)."""
    for folder in _MADE_HERE:
        shutil.rmtree(folder, ignore_errors=True)


def stored_count(db) -> int:
    """Rows in a batch's SQLite store, read-only (0 while it does not exist or is locked)."""
    import sqlite3

    if not Path(db).exists():
        return 0
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as con:
            return con.execute("SELECT count(*) FROM results").fetchone()[0]
    except sqlite3.Error:
        return 0


def grade_file(path, exercise: str, **kw):
    """Grade ``path`` for ``exercise`` on the test device with a fixed seed."""
    kw.setdefault("seed", SEED)
    return grade(path, exercise, device=TEST_DEVICE, **kw)


def graded_once(path, exercise: str, seed: int = SEED):
    """``grade_file(path, exercise, seed=seed)`` with its other defaults, once per test run for
    one file's bytes, exercise and seed, shared by the tests that read it (in several files and
    xdist workers: a known-bad submission is also a racy kernel and a concept variant). Only
    for tests that change nothing a grading depends on (no monkeypatch, no environment) and
    never change the result."""
    try:  # a pipe, a folder or a file that cannot be read: graded every time, never shared
        text = Path(path).resolve().read_bytes() if Path(path).is_file() else None
    except OSError:
        text = None
    if text is None:
        return grade_file(path, exercise, seed=seed)
    return _graded_once(text, str(Path(path).resolve()), exercise, seed)


@functools.cache
def _graded_once(text: bytes, path: str, exercise: str, seed: int):
    """The grading, or the one another process of this run stored (``$KG_TESTS_SHARED_GRADINGS``,
    one JSON file per key; processes that want the same key take turns under a file lock)."""
    key = hashlib.sha256(b"\0".join([text, path.encode(), exercise.encode(), str(seed).encode(),
                                      TEST_DEVICE.encode()])).hexdigest()
    folder = Path(os.environ[SHARED_ENV])
    stored = folder / f"{key}.json"
    with open(folder / f"{key}.lock", "a+b") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if stored.is_file():
            return ExerciseResult.from_dict(json.loads(stored.read_text(encoding="utf-8")))
        result = grade_file(path, exercise, seed=seed)
        partial = folder / f".{key}.{os.getpid()}.tmp"
        partial.write_text(json.dumps(result.to_dict()), encoding="utf-8")
        os.replace(partial, stored)
        return result


def assert_full_marks(result):
    problems = known_bad.full_marks_problems(result)
    assert not problems, "instructor solution lost points:\n" + "\n".join(problems)


def assert_rejected(path, result):
    problems = known_bad.unmet(path, result)
    assert not problems, f"{Path(path).name}: " + "; ".join(problems) + "\n" + \
        "\n".join(f"  {t.name}: {t.status.value} {t.message[:200]}" for t in result.tests)


def env_with_root(**extra: str) -> dict:
    """This process's environment for a child Python with the checkout first on ``PYTHONPATH``,
    what was there kept after it (the GPU checks carry their packages on ``PYTHONPATH``: a child
    given the checkout alone could not import them)."""
    paths = [str(ROOT), os.environ.get("PYTHONPATH", "")]
    return {**os.environ, **extra, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}


def needs_gpu(reason: str = "needs a CUDA GPU"):
    return pytest.mark.skipif(TEST_DEVICE != "gpu" or not gpu_available(), reason=reason)


def simulator_in_process(request) -> None:
    """Skip a test that needs this process's Numba to be the simulator where another test
    imported it for a GPU target first (a parallel run may); the file's
    :func:`run_file_on_the_simulator` test runs it in a fresh interpreter instead."""
    from numba import config

    if not config.ENABLE_CUDASIM and not request.node.name.startswith("test_in_a_fresh"):
        pytest.skip("numba was imported in this process for a GPU target: "
                    "test_in_a_fresh_interpreter runs this test")


def run_file_on_the_simulator(path: str, minimum: int,
                              select: str = "not test_in_a_fresh") -> None:
    """Run the tests of the file ``path`` that ``select`` picks (``-k``; its fresh-interpreter
    test left out) with the simulator as Numba's target, in a fresh interpreter: at least
    ``minimum`` pass and none is skipped or fails."""
    import subprocess
    import sys

    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          "-p", "no:xdist", "-rs", path, "-k", select],
                         capture_output=True, text=True, env=env, timeout=900,
                         cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    assert out.returncode == 0, out.stdout[-3000:]
    passed = re.search(r"(\d+) passed", out.stdout)
    assert passed and int(passed.group(1)) >= minimum, out.stdout[-1000:]
    assert "skipped" not in out.stdout, out.stdout[-1000:]


@pytest.fixture(scope="session")
def gradescope_bundle(tmp_path_factory) -> Path:
    """``autograder gradescope build tiled_matmul``'s zip, built once per test session (the
    workers of a parallel run share it; the tests only read it)."""
    import shutil
    import subprocess
    import sys

    from course.nbhelpers import shared_dir

    with shared_dir(tmp_path_factory, "kg-gradescope-bundle") as (folder, done):
        out = folder / "autograder.zip"
        if not done:
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            proc = subprocess.run([sys.executable, "-m", "autograder.cli", "gradescope", "build",
                                   "tiled_matmul", "--out", str(out)], capture_output=True,
                                  text=True, timeout=120)
            assert proc.returncode == 0, proc.stdout + proc.stderr
            (folder / ".done").touch()
    return out


@pytest.fixture(scope="session")
def gradescope_python(gradescope_bundle, tmp_path_factory) -> str:
    """The python of a venv with the bundle's wheel installed (pip, --no-deps), as Gradescope's
    image has it; made once per test session (the workers of a parallel run share it)."""
    import shutil
    import zipfile

    from course.nbhelpers import shared_dir
    from test_packaging import install

    with shared_dir(tmp_path_factory, "kg-gradescope-image") as (where, done):
        python = where / "venv" / "bin" / "python"
        if not done:
            shutil.rmtree(where, ignore_errors=True)
            where.mkdir()
            with zipfile.ZipFile(gradescope_bundle) as z:
                [wheel] = [n for n in z.namelist() if n.endswith(".whl")]
                z.extract(wheel, where)
            assert install(where / "venv", where / wheel) == python
            (where / ".done").touch()
    return str(python)
