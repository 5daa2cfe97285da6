"""Issue 32, item 13: Gradescope in a container where bubblewrap cannot run (Docker's default
seccomp profile refuses an unprivileged user namespace and ``mount``), as root. The bundle built
by the CLI from this tree is unpacked into a root laid out like Gradescope's, in a folder every
user may traverse (as ``/autograder`` is), with a venv whose Python every user may run (as
setup.sh makes it from the system's Python); ``bwrap`` on the PATH fails as it does there. Then
setup (solutions locked, the preflight passed under the fallback) and each submission through
``run_autograder``: every child runs as an unprivileged user of its own
(:mod:`autograder.sandbox.dropuser`). The solution gets its points; a submission past the reach
layers that reads the solutions, the class seed and the cache, writes outside its folder and
signals the grader's processes is refused each time, and the grading goes on.

Root only (Gradescope runs as root; another user cannot give a child another user id): skipped
otherwise, and where the system's Python is not of this interpreter's version (the venv borrows
this environment's packages)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import pytest

from autograder import exercises
from autograder.sandbox import dropuser, landlock

from conftest import TEST_DEVICE, SOLUTIONS
from tests.adversarial.lift import lift_folder

EXERCISE = "tiled_matmul"
SOLUTION = SOLUTIONS / f"{EXERCISE}.py"
SYSTEM_PYTHON = Path(f"/usr/bin/python{sys.version_info[0]}.{sys.version_info[1]}")

pytestmark = [
    pytest.mark.skipif(not dropuser.applies(), reason="needs root (Gradescope runs as root)"),
    pytest.mark.skipif(not SYSTEM_PYTHON.is_file(),
                       reason=f"needs {SYSTEM_PYTHON}, a Python every user may run"),
]

# A submission past the reach layers (tests/adversarial/lift.py) that attacks at import and in
# its kernel, and says what it got where the student reads it (its error's message).
ATTACKER = '''
from numba import cuda

TILE_WIDTH = 16
READS = {reads!r}
WRITES = {writes!r}


def attack():
    os = __import__("os")
    read, wrote, signalled = [], [], []
    for p in READS + [os.environ.get("KERNELGRADE_SOLUTIONS", "")]:
        try:
            if os.path.isdir(p):
                os.listdir(p)
            else:
                with open(p, "rb") as f:
                    f.read(1)
            read.append(p)
        except Exception:
            pass
    for p in WRITES:
        try:
            with open(p, "w") as f:
                f.write("forged")
            wrote.append(p)
        except Exception:
            pass
    me = os.getuid()
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.stat("/proc/" + name).st_uid != me:
                    os.kill(int(name), 0)  # allowed only where a real signal would be
                    signalled.append(name)
            except Exception:
                pass
    guardian = os.getppid()  # the first ancestor of another user: the reaper, root's
    while os.stat("/proc/%d" % guardian).st_uid == me:
        guardian = int(open("/proc/%d/stat" % guardian).read().rsplit(")", 1)[1].split()[1])
    try:
        os.kill(guardian, 9)  # for real
        signalled.append("guardian")
    except Exception:
        pass
    return "ATTACK-REPORT uid %d read %d %s; wrote %d %s; signalled %d %s" % (
        me, len(read), " ".join(read), len(wrote), " ".join(wrote), len(signalled),
        " ".join(signalled))


print(attack())


@cuda.jit
def tiled_matmul(A, B, C):
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if row == 0 and col == 0:
        raise RuntimeError(attack())
    n = A.shape[0]
    if row < n and col < n:
        acc = 0.0
        for k in range(n):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc
'''


def _venv(where: Path, wheel: Path) -> Path:
    """A venv of the system's Python (every user may run it) with ``wheel`` installed and this
    environment's packages as a site folder after its own (as tests/test_packaging.install)."""
    import sysconfig

    venv = where / "venv"
    subprocess.run([str(SYSTEM_PYTHON), "-m", "venv", "--without-pip", str(venv)], check=True,
                   timeout=120)
    python = venv / "bin" / "python"
    proc = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q",
                           "--no-deps", "--no-index", str(wheel)], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    purelib = subprocess.run([str(python), "-c", "import sysconfig; "
                              "print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    ours = Path(sysconfig.get_paths()["purelib"])
    Path(purelib, "_kernelgrade_test_deps.pth").write_text(
        f"import site; site.addsitedir({str(ours)!r})\n")
    if (ours / "nvidia").is_dir():
        Path(purelib, "nvidia").symlink_to(ours / "nvidia")
    return python


def _fake_bwrap(where: Path) -> str:
    """A PATH whose ``bwrap`` fails as it does in a container without user namespaces."""
    fake = where / "fake-bin"
    fake.mkdir()
    (fake / "bwrap").write_text("#!/bin/sh\necho 'bwrap: No permissions to creating new "
                                "namespace, likely because the kernel does not allow non-"
                                "privileged user namespaces' >&2\nexit 1\n")
    (fake / "bwrap").chmod(0o755)
    return f"{fake}{os.pathsep}{os.environ['PATH']}"


def _env(python: Path, path: str, **extra: str) -> dict:
    drop = ("PYTHONPATH", exercises.SOLUTIONS_ENV, "KERNELGRADE_CACHE_DIR", "KERNELGRADE_SANDBOX")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(KERNELGRADE_GRADESCOPE_PYTHON=str(python), KERNELGRADE_DEVICE=TEST_DEVICE,
               PATH=path)
    return env | extra


@pytest.fixture(scope="module")
def image(gradescope_bundle):
    """(root, python, PATH): the image after setup.sh, in a folder every user may traverse."""
    where = Path(tempfile.mkdtemp(prefix="kg-container-"))
    try:
        where.chmod(0o755)
        with zipfile.ZipFile(gradescope_bundle) as z:
            [wheel] = [n for n in z.namelist() if n.endswith(".whl")]
            z.extract(wheel, where)
        python = _venv(where, where / wheel)
        root = where / "autograder"
        with zipfile.ZipFile(gradescope_bundle) as z:
            z.extractall(root / "source")
        shutil.copy(root / "source" / "run_autograder", root / "run_autograder")
        (root / "run_autograder").chmod(0o755)
        path = _fake_bwrap(where)
        proc = subprocess.run([str(python), "-m", "autograder.gradescope.run", EXERCISE,
                               "--setup", "--root", str(root), "--device", TEST_DEVICE],
                              cwd=root, env=_env(python, path), capture_output=True, text=True,
                              timeout=600)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "sandbox: user" in proc.stdout, proc.stdout + proc.stderr
        assert "preflight of tiled_matmul" in proc.stdout and "passed" in proc.stdout
        yield root, python, path
    finally:
        shutil.rmtree(where, ignore_errors=True)


def run_autograder(image, files: dict[str, str], **env: str):
    root, python, path = image
    for folder in ("submission", "results"):
        shutil.rmtree(root / folder, ignore_errors=True)
    (root / "submission").mkdir()
    for name, text in files.items():
        (root / "submission" / name).write_text(text)
    proc = subprocess.run([str(root / "run_autograder")], cwd=root,
                          env=_env(python, path, KERNELGRADE_GRADESCOPE_ROOT=str(root), **env),
                          capture_output=True, text=True, timeout=600)
    text = (root / "results" / "results.json").read_text()
    return proc, json.loads(text), text


def test_the_solution_gets_its_points_in_a_child_of_its_own_user(image):
    proc, results, _ = run_autograder(image, {"tiled_matmul.py": SOLUTION.read_text()})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert results["tests"] and all(t["status"] == "passed" and t["score"] == t["max_score"]
                                    for t in results["tests"]), results["tests"]
    assert results["extra_data"]["sandbox"] == "user"
    notes = results["extra_data"]["instructor_notes"]
    assert any("ran as an unprivileged user of its own" in n and "No permissions" in n
               for n in notes), notes
    assert "graded without the sandbox" not in results["output"]
    assert "sandbox: user" in proc.stdout  # the instructor's stdout says which sandbox


def test_a_child_of_its_own_user_reads_writes_and_signals_nothing_of_the_grader(image):
    root, _, _ = image
    token = os.urandom(4).hex()
    reads = [str(root / "source" / "solutions" / EXERCISE / "solution.py"),
             str(root / "source" / "solutions" / "class_seed"),
             str(root / "source" / "solutions"), str(root / "cache"),
             f"/proc/{os.getpid()}/environ", "/root"]
    writes = [str(root / "results" / "results.json"), str(root / "source" / f"x-{token}"),
              str(root / "submission" / f"x-{token}"), str(root / "cache" / f"x-{token}"),
              f"/tmp/kg-attack-{token}", f"/dev/shm/kg-attack-{token}"]
    lift = Path(lift_folder())
    lift.chmod(0o755)  # the lift reaches the child (whose user reads only what others may)
    proc, results, text = run_autograder(
        image, {"tiled_matmul.py": ATTACKER.format(reads=reads, writes=writes)},
        PYTHONPATH=str(lift))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ATTACK-REPORT uid" in text, text  # its words reach the student: it ran
    report = text[text.index("ATTACK-REPORT"):].split("\\n")[0]
    uid = int(report.split()[2])
    assert uid in dropuser.UIDS  # neither root nor an account of the image
    assert " read 0 " in report, report
    assert "signalled 0" in report, report
    wrote = report.split("wrote ")[1].split(";")[0]
    if landlock.abi() > 0:
        assert wrote.strip() == "0", report  # Landlock: nowhere outside its own folder
    else:  # only the world-writable folders
        assert all(w.startswith(("/tmp/", "/dev/shm/")) for w in wrote.split()[1:]), report
    for p in writes[:4]:
        assert not Path(p).exists() or "forged" not in Path(p).read_text(), p
    assert results["extra_data"]["sandbox"] == "user"
    assert "Shared Memory Fundamentals" not in text + proc.stdout  # the solution's text
    for p in writes[4:]:
        Path(p).unlink(missing_ok=True)
