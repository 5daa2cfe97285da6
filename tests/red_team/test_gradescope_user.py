"""Issue 32, item 13: Gradescope in a container where bubblewrap cannot run, as root. The bundle
built by the CLI from this tree is unpacked into a root laid out like Gradescope's, in a folder
every user may traverse (as ``/autograder`` is), with a venv whose Python every user may run (as
setup.sh makes it from the system's Python). setup.sh's step and every ``run_autograder`` run
as a Docker container's root would (tests/red_team/docker_like.py: Docker's default
capabilities and the part of its default seccomp profile that refuses namespaces and
``mount``, so the real ``bwrap`` fails as it does there; once with the Landlock calls allowed,
as since Docker 23, once refused, as before). Every child then runs as an unprivileged user of
its own (:mod:`autograder.sandbox.dropuser`). The solution gets its points; a submission past
the reach layers that reads the solutions, the class seed and the cache, writes outside its
folder, connects over TCP and signals the grader's processes is refused each time, and the
grading goes on.

Root on x86-64 only (Gradescope runs as root; another user cannot give a child another user
id): skipped otherwise, and where the system's Python is not of this interpreter's version (the
venv borrows this environment's packages)."""

from __future__ import annotations

import json
import os
import platform
import shutil
import socket
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
DOCKER_LIKE = Path(__file__).with_name("docker_like.py")

pytestmark = [
    pytest.mark.skipif(not dropuser.applies(), reason="needs root (Gradescope runs as root)"),
    pytest.mark.skipif(not SYSTEM_PYTHON.is_file(),
                       reason=f"needs {SYSTEM_PYTHON}, a Python every user may run"),
    pytest.mark.skipif(platform.machine() != "x86_64", reason="docker_like.py is x86-64's"),
]

# A submission past the reach layers (tests/adversarial/lift.py) that attacks at import and in
# its kernel, and says what it got where the student reads it (its error's message).
ATTACKER = '''
from numba import cuda

TILE_WIDTH = 16
READS = {reads!r}
WRITES = {writes!r}
PORT = {port!r}


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
    try:
        __import__("socket").create_connection(("127.0.0.1", PORT), timeout=5).close()
        wrote.append("tcp")
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


def _env(python: Path, **extra: str) -> dict:
    drop = ("PYTHONPATH", exercises.SOLUTIONS_ENV, "KERNELGRADE_CACHE_DIR", "KERNELGRADE_SANDBOX")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(KERNELGRADE_GRADESCOPE_PYTHON=str(python), KERNELGRADE_DEVICE=TEST_DEVICE)
    return env | extra


@pytest.fixture(scope="module", params=["docker", "docker-before-23"])
def image(gradescope_bundle, request):
    """(root, python, the container's prefix for a command, whether Landlock holds): the image
    after setup.sh, in a folder every user may traverse."""
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
        landlocked = request.param == "docker" and landlock.abi() > 0
        inside = [str(SYSTEM_PYTHON), str(DOCKER_LIKE)] + ([] if landlocked
                                                           else ["--no-landlock"])
        proc = subprocess.run([*inside, str(python), "-m", "autograder.gradescope.run",
                               EXERCISE, "--setup", "--root", str(root), "--device",
                               TEST_DEVICE], cwd=root, env=_env(python), capture_output=True,
                              text=True, timeout=600)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "sandbox: user" in proc.stdout, proc.stdout + proc.stderr
        assert "preflight of tiled_matmul" in proc.stdout and "passed" in proc.stdout
        yield root, python, inside, landlocked
    finally:
        shutil.rmtree(where, ignore_errors=True)


def run_autograder(image, files: dict[str, str], **env: str):
    root, python, inside, _ = image
    for folder in ("submission", "results"):
        shutil.rmtree(root / folder, ignore_errors=True)
    (root / "submission").mkdir()
    for name, text in files.items():
        (root / "submission" / name).write_text(text)
    proc = subprocess.run([*inside, str(root / "run_autograder")], cwd=root,
                          env=_env(python, KERNELGRADE_GRADESCOPE_ROOT=str(root), **env),
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
    assert any("ran as an unprivileged user of its own" in n and "namespace" in n
               for n in notes), notes  # why: bwrap's own words
    assert "graded without the sandbox" not in results["output"]
    assert "sandbox: user" in proc.stdout  # the instructor's stdout says which sandbox


def test_a_child_of_its_own_user_reads_writes_and_signals_nothing_of_the_grader(image):
    root, _, _, landlocked = image
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
    with socket.create_server(("127.0.0.1", 0)) as server:
        attacker = ATTACKER.format(reads=reads, writes=writes, port=server.getsockname()[1])
        proc, results, text = run_autograder(image, {"tiled_matmul.py": attacker},
                                             PYTHONPATH=str(lift))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ATTACK-REPORT uid" in text, text  # its words reach the student: it ran
    report = text[text.index("ATTACK-REPORT"):].split("\\n")[0]
    uid = int(report.split()[2])
    assert uid in dropuser.UIDS  # neither root nor an account of the image
    assert " read 0 " in report, report
    assert "signalled 0" in report, report
    wrote = report.split("wrote ")[1].split(";")[0]
    if landlocked:  # Landlock: nothing outside its own folder and /dev, no TCP
        assert all(w.startswith("/dev/shm/") for w in wrote.split()[1:]), report
    else:  # only the world-writable folders, and TCP
        assert all(w.startswith(("/tmp/", "/dev/shm/")) or w == "tcp"
                   for w in wrote.split()[1:]), report
    for p in writes[:4]:
        assert not Path(p).exists() or "forged" not in Path(p).read_text(), p
    assert results["extra_data"]["sandbox"] == "user"
    assert "Shared Memory Fundamentals" not in text + proc.stdout  # the solution's text
    for p in writes[4:]:
        Path(p).unlink(missing_ok=True)
