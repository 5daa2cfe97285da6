"""Issue 21, Gradescope, attacked: the bundle built by the CLI from this tree, unpacked into a
root laid out like Gradescope's (``source/``, ``submission/``, ``results/``), prepared once as
``setup.sh`` does (``run.py --setup``: solutions locked, the preflight passed and remembered),
then each submission in a fresh copy of that image through ``run_autograder``: the solution
(full marks, no second preflight), a known-bad mutant (hidden tests say nothing of their
sizes), a link and a pipe (refused, unread), a submission that hunts for the instructor
solution (finds nothing), a malformed notebook (the student's 0, not the grader's fault), and
the same with bubblewrap unable to run (no score, nothing run). One exercise; the bundle, venv
and image are shared by the module."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import zipfile
from pathlib import Path

import pytest

from autograder import exercises
from autograder.gradescope.run import SOLUTIONS_OWNER
from autograder.report.parts import HIDDEN_SKIPPED_ON_SIM, HIDDEN_STATUS_TEXT

from conftest import EXERCISES, TEST_DEVICE, SOLUTIONS
from tests.adversarial.lift import lift_folder

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None,
                                reason="needs bubblewrap (apt-get install bubblewrap)")

EXERCISE = "tiled_matmul"
SOLUTION = SOLUTIONS / f"{EXERCISE}.py"
#: Lines of the instructor solution that no submission here contains.
SOLUTION_MARKS = ("Shared Memory Fundamentals", "acc += tile_a[ty, i] * tile_b[i, tx]",
                  "tile_b[ty, tx] = B[b_row, col]")

# A kernel that hunts for the instructor solution at import and in its body, and says what it
# read where the student reads it: its printed output and the message of the error it raises.
ATTACKER = '''
from numba import cuda

TILE_WIDTH = 16
GUESSES = {guesses!r}


def steal():
    os = __import__("os")
    glob = __import__("glob")
    paths = list(GUESSES)
    if os.environ.get("KERNELGRADE_SOLUTIONS"):
        paths.append(os.path.join(os.environ["KERNELGRADE_SOLUTIONS"], "tiled_matmul",
                                  "solution.py"))
    try:
        import autograder.exercises as ex
        paths += glob.glob(os.path.join(os.path.dirname(ex.__file__), "*", "solution.py"))
    except Exception:
        pass
    read = []
    for p in paths:
        try:
            with open(p) as f:
                data = f.read()
        except Exception:
            continue
        if data:
            read.append(p + ": " + data)
    return "ATTACK-REPORT tried %d read %d %s" % (len(paths), len(read), " ".join(read))


print(steal())


@cuda.jit
def tiled_matmul(A, B, C):
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if row == 0 and col == 0:
        raise RuntimeError(steal())
    n = A.shape[0]
    if row < n and col < n:
        acc = 0.0
        for k in range(n):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc
'''


@pytest.fixture(scope="module")
def bundle(gradescope_bundle) -> Path:
    return gradescope_bundle


@pytest.fixture(scope="module")
def python(gradescope_python) -> str:
    return gradescope_python


def _env(python: str, **extra: str) -> dict:
    """Gradescope's environment: no PYTHONPATH (the venv's own kernelgrade, as installed by
    setup.sh), no solutions or cache folder of ours."""
    drop = ("PYTHONPATH", exercises.SOLUTIONS_ENV, "KERNELGRADE_CACHE_DIR", "KERNELGRADE_SANDBOX")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(KERNELGRADE_GRADESCOPE_PYTHON=python, KERNELGRADE_DEVICE=TEST_DEVICE)
    return env | extra


@pytest.fixture(scope="module")
def image(bundle, python, tmp_path_factory) -> Path:
    """The image after setup.sh: the zip in source/, run_autograder at the root, the solutions
    locked and the preflight's pass in cache/."""
    root = tmp_path_factory.mktemp("image") / "autograder"
    with zipfile.ZipFile(bundle) as z:
        z.extractall(root / "source")
    shutil.copy(root / "source" / "run_autograder", root / "run_autograder")
    (root / "run_autograder").chmod(0o755)
    proc = subprocess.run([python, "-m", "autograder.gradescope.run", EXERCISE, "--setup",
                           "--root", str(root), "--device", TEST_DEVICE], cwd=root,
                          env=_env(python), capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "preflight of tiled_matmul" in proc.stdout and "passed" in proc.stdout
    return root


def _preflight_entries(root: Path) -> set[str]:
    return {p.name for p in (root / "cache" / "preflight").glob("*.json")}


def container(image: Path, files: dict[str, str | bytes | Path | None]) -> Path:
    """The image as a submission's container finds it, with ``files`` in submission/ (a Path
    value: a link to that path; None: a named pipe). The image's own root is reused (emptied of
    the last submission and its results): the preflight's key names the root's paths, which
    are the same in every container on Gradescope (/autograder)."""
    for folder in ("submission", "results"):
        shutil.rmtree(image / folder, ignore_errors=True)
    (image / "submission").mkdir()
    for name, data in files.items():
        path = image / "submission" / name
        if isinstance(data, Path):
            path.symlink_to(data)
        elif data is None:
            os.mkfifo(path)
        else:
            path.write_bytes(data if isinstance(data, bytes) else data.encode())
    return image


def run_autograder(root: Path, python: str, **env: str) -> tuple[subprocess.CompletedProcess,
                                                                  dict, str]:
    proc = subprocess.run([str(root / "run_autograder")], cwd=root,
                          env=_env(python, KERNELGRADE_GRADESCOPE_ROOT=str(root), **env),
                          capture_output=True, text=True, timeout=600)
    text = (root / "results" / "results.json").read_text()
    return proc, json.loads(text), text


def _no_solution_in(*texts: str) -> None:
    for text in texts:
        for mark in SOLUTION_MARKS:
            assert mark not in text


def _no_bwrap(where: Path) -> str:
    """A PATH whose ``bwrap`` fails as it does in a container without namespaces."""
    fake = where / "fake-bin"
    fake.mkdir()
    (fake / "bwrap").write_text("#!/bin/sh\necho 'bwrap: No permissions to create new "
                                "namespace' >&2\nexit 1\n")
    (fake / "bwrap").chmod(0o755)
    return f"{fake}{os.pathsep}{os.environ['PATH']}"


def _attacker(root: Path) -> str:
    guesses = [str(root / "source" / "solutions" / EXERCISE / "solution.py"),
               f"/autograder/source/solutions/{EXERCISE}/solution.py", str(SOLUTION),
               str(root / "source" / "solutions" / f"{EXERCISE}.py")]
    return ATTACKER.format(guesses=guesses)


def test_setup_locks_the_solutions_and_its_preflight_key_is_the_one_submissions_compute(
        image, python, tmp_path):
    """The pass setup stored is found by a submission's grading (same key), and a changed
    solution changes the key: the preflight runs again."""
    folder = image / "source" / "solutions"
    for path in (folder, folder / EXERCISE, folder / EXERCISE / "solution.py"):
        st = path.lstat()
        assert stat.S_IMODE(st.st_mode) == (0o400 if path.is_file() else 0o700), path
        if os.geteuid() == 0:
            assert st.st_uid == SOLUTIONS_OWNER
    key = ("from pathlib import Path; import sys; "
           "from autograder.gradescope.run import grading_environment; "
           "grading_environment(Path(sys.argv[1])); from autograder.grading import preflight_key; "
           f"print(preflight_key.fingerprint({EXERCISE!r}, {TEST_DEVICE!r}, True)[0])")

    def fingerprint(root: Path) -> str:
        env = _env(python, KERNELGRADE_GRADESCOPE_ROOT=str(root))
        return subprocess.run([python, "-c", key, str(root)], env=env, cwd=root,
                              capture_output=True,
                              text=True, check=True, timeout=120).stdout.strip()

    assert _preflight_entries(image) == {fingerprint(image) + ".json"}
    copy = tmp_path / "autograder"
    shutil.copytree(image, copy, symlinks=True)
    before = fingerprint(copy)
    solution = copy / "source" / "solutions" / EXERCISE / "solution.py"
    solution.chmod(0o600)
    solution.write_text(solution.read_text() + "# edited\n")
    assert fingerprint(copy) != before


def test_solution_gets_its_points_without_a_second_preflight(image, python, tmp_path):
    root = container(image, {"tiled_matmul.py": SOLUTION.read_text()})
    proc, results, _ = run_autograder(root, python)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert results["tests"] and all(t["status"] == "passed" and t["score"] == t["max_score"]
                                    for t in results["tests"])
    assert results["score"] == pytest.approx(sum(t["score"] for t in results["tests"]))
    assert _preflight_entries(root) == _preflight_entries(image)  # nothing new was stored


def test_hidden_tests_say_only_how_they_ended(image, python, tmp_path):
    mutant = EXERCISES / EXERCISE / "mutants" / "no_boundary_checks.py"
    root = container(image, {"tiled_matmul.py": mutant.read_text()})
    proc, results, text = run_autograder(root, python)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    ex = exercises.get(EXERCISE)
    hidden = [c for c in ex.cases if c.visibility == "hidden"]
    shown = [t for t in results["tests"] if t["name"].startswith("hidden")]
    assert shown and all(t["name"].startswith("hidden test ") for t in shown)
    assert {t["output"] for t in shown} <= set(HIDDEN_STATUS_TEXT.values())
    assert any(t["status"] == "failed" for t in shown)
    for t in shown:
        assert t["visibility"] in ("after_published", "hidden")
    words = set(HIDDEN_STATUS_TEXT.values()) | {HIDDEN_SKIPPED_ON_SIM}
    for line in results["output"].splitlines():
        if line.startswith("- hidden"):
            assert line.split(": ", 1)[1] in words, line
    assert "hidden:" not in text and "IndexError" not in "".join(t["output"] for t in shown)
    assert "hidden:" in proc.stdout  # the instructor's stdout keeps every test as graded
    public = [t for t in results["tests"] if t["name"].startswith("public")]
    assert any("IndexError" in t["output"] for t in public)  # public tests keep their message
    assert len(shown) == len([t for t in results["tests"] if "hidden" in t["name"]])
    assert len(shown) + sum(ln.startswith("- hidden") for ln in results["output"].splitlines()) \
        == len(hidden)


@pytest.mark.parametrize("kind", ["link to the solution", "link to /etc/passwd", "pipe"])
def test_links_and_special_files_are_refused_unread(image, python, tmp_path, kind):
    target = {"link to the solution": image / "source" / "solutions" / EXERCISE / "solution.py",
              "link to /etc/passwd": Path("/etc/passwd"), "pipe": None}[kind]
    root = container(image, {"tiled_matmul.py": target})
    proc, results, text = run_autograder(root, python)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert results["score"] == 0
    assert ("link" if target else "not a regular file") in results["output"]
    assert "root:" not in text
    _no_solution_in(text, proc.stdout)


def test_a_submission_that_hunts_for_the_solution_finds_nothing(image, python, tmp_path):
    root = container(image, {})
    guess = root / "source" / "solutions" / EXERCISE / "solution.py"
    assert guess.is_file()  # the attacker guesses the right path (readable by the grader)
    (root / "submission" / "tiled_matmul.py").write_text(_attacker(root))
    proc, results, text = run_autograder(root, python, PYTHONPATH=lift_folder())  # past reach
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ATTACK-REPORT tried" in text  # its words reach the student...
    assert "read 0" in text and "read 1" not in text  # ...and it read nothing
    _no_solution_in(text, proc.stdout)


def _user_sandbox_runs(python: str, root: Path) -> bool:
    """Whether this image's grader, as root, would fall back to a user of its own for each child
    (tests/red_team/test_gradescope_user.py) where bubblewrap cannot run."""
    if os.geteuid() != 0:
        return False
    probe = ("import sys; from pathlib import Path; from autograder.gradescope.run import "
             "grading_environment; grading_environment(Path(sys.argv[1])); "
             "from autograder.sandbox import dropuser; print(dropuser.probe() or 'runs')")
    out = subprocess.run([python, "-c", probe, str(root)], env=_env(python), capture_output=True,
                         text=True, timeout=120)
    return out.stdout.strip() == "runs"


def test_without_bubblewrap_nothing_is_graded_and_there_is_no_score(image, python, tmp_path):
    if _user_sandbox_runs(python, image):
        pytest.skip("as root with a Python every user may run, the grader falls back to a user "
                    "of its own for each child (tests/red_team/test_gradescope_user.py)")
    root = container(image, {})
    (root / "submission" / "tiled_matmul.py").write_text(_attacker(root))
    proc, results, text = run_autograder(root, python, PATH=_no_bwrap(tmp_path))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "score" not in results and all("score" not in t for t in results["tests"])
    assert results["extra_data"]["grader_failed"] is True
    assert "bubblewrap" in results["output"] and "not your score" in results["output"]
    assert "namespaces" in results["output"]  # what the container needs
    assert "ATTACK-REPORT" not in text + proc.stdout + proc.stderr  # no student code ran
    _no_solution_in(text)


def test_setup_without_bubblewrap_warns_and_keeps_no_pass(image, python, tmp_path):
    root = tmp_path / "autograder"  # a fresh image: its own root, no cache
    shutil.copytree(image, root, symlinks=True, ignore=shutil.ignore_patterns("cache"))
    proc = subprocess.run([python, "-m", "autograder.gradescope.run", EXERCISE, "--setup",
                           "--root", str(root)], cwd=root,
                          env=_env(python, PATH=_no_bwrap(tmp_path)), capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "WARNING" in proc.stderr and "bubblewrap" in proc.stderr
    assert not (root / "cache" / "preflight").exists() or not _preflight_entries(root)


@pytest.mark.parametrize("name, data", [
    ("tiled_matmul.ipynb", json.dumps({"cells": [{"cell_type": "code", "metadata": [],
                                                  "source": 7}], "nbformat": 4})),
    ("tiled_matmul.ipynb", "{not json"),
    ("tiled_matmul.py", b"\xff\xfe\x00binary"),
    ("tiled_matmul.py", "x = " + "1 + " * 100_000 + "1\n"),
])
def test_a_bad_file_is_the_students_zero_not_the_graders_fault(image, python, tmp_path, name,
                                                               data):
    root = container(image, {name: data})
    proc, results, text = run_autograder(root, python)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert results["score"] == 0 and results["output"]
    assert "grader's own setup" not in text and "Traceback" not in text
    assert str(root) not in text  # the file is named as the student named it


def test_a_locked_solution_is_closed_to_a_sandboxed_child_even_if_shown(image, tmp_path):
    """The second wall: were the solutions folder bound into the sandbox by mistake, the
    child (root without capabilities) still cannot read it."""
    if os.geteuid() != 0:
        pytest.skip("the lock changes the owner only as root (Gradescope runs as root)")
    from autograder.sandbox import bwrap

    folder = image / "source" / "solutions"
    work = tmp_path / "work"
    work.mkdir()
    cmd = bwrap.arguments(work, gpu=False) + [
        "--ro-bind", str(folder), str(folder), "--", "/bin/cat",
        str(folder / EXERCISE / "solution.py")]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0 and "Permission denied" in proc.stderr
    _no_solution_in(proc.stdout)
    assert SOLUTION_MARKS[0] in (folder / EXERCISE / "solution.py").read_text()  # the grader can


def test_required_sandbox_never_falls_back_to_a_plain_child(monkeypatch, tmp_path):
    """bubblewrap passes its probe, then the sandboxed child dies before its first record: under
    ``require`` that is the grader's fault (SandboxUnavailable), not a rerun in a plain child."""
    from autograder.sandbox import mode as sandbox_mode
    from autograder.sandbox import run as sandbox_run
    from autograder.sandbox.limits import Limits

    runs = []

    def dead_child(request, backend, limits, workdir, use_bwrap, *rest):
        runs.append(use_bwrap)
        return sandbox_run.ChildRun(ended="exited", exit_code=1, output="bwrap: Can't mount proc")

    monkeypatch.setenv("KERNELGRADE_SANDBOX", "require")
    monkeypatch.setattr(sandbox_mode, "sandbox_status", lambda: sandbox_mode.SandboxStatus(True))
    monkeypatch.setattr(sandbox_run, "_run_once", dead_child)
    monkeypatch.setattr(sandbox_mode, "_broken", {})
    with pytest.raises(sandbox_mode.SandboxUnavailable, match="Can't mount proc"):
        sandbox_run.run_child({}, "sim", Limits(), tmp_path)
    assert runs == [True]
