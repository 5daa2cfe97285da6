"""Red team (issue 21): one rule for exit codes (README, "Exit status").

``autograder grade`` and ``grade --public``: 2 when nothing can be graded (bad arguments, nothing
at the path, a path the grader may not read), with one line on standard error and nothing on
standard output; 0 with a 0 and a message for anything a student can leave at the path that is
not a submission. Every case here is refused before a grading child starts, so the table is
cheap: typer's CliRunner in this process, and the real ``python -m autograder.cli`` for two rows.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from autograder import exercises
from autograder.cli import app
from conftest import ROOT, env_with_root

EXERCISE = "tiled_matmul"
SOLUTION = exercises.solution_path(EXERCISE)


def _txt(tmp):
    (tmp / "kernel.txt").write_text(SOLUTION.read_text())  # the right code, the wrong file
    return tmp / "kernel.txt"


def _write(name: str, data: bytes):
    def make(tmp):
        (tmp / name).write_bytes(data)
        return tmp / name
    return make


def _link(target):
    def make(tmp):
        (tmp / "kernel.py").symlink_to(target(tmp) if callable(target) else target)
        return tmp / "kernel.py"
    return make


def _fifo(tmp):
    os.mkfifo(tmp / "kernel.py")
    return tmp / "kernel.py"


def _socket(tmp):
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(tmp / "kernel.py"))
    _SOCKETS.append(sock)
    return tmp / "kernel.py"


_SOCKETS: list[socket.socket] = []


def _folder(tmp):
    (tmp / "kernel.py").mkdir()
    return tmp / "kernel.py"


def _big(tmp):
    with open(tmp / "kernel.py", "wb") as f:
        f.truncate(8 * 2**20 + 1)
    return tmp / "kernel.py"


def _below_a_file(tmp):
    (tmp / "kernel.py").write_text("x = 1\n")
    return tmp / "kernel.py" / "more.py"


#: A student's thing at the path: graded 0 with exit 0, the message saying what it is.
STUDENTS = {
    ".txt file": (_txt, "is neither a .py file nor an .ipynb notebook"),
    "empty .py": (_write("kernel.py", b""), "is empty"),
    "blank .py": (_write("kernel.py", b"\n  \n"), "is empty"),
    "binary .py": (_write("kernel.py", bytes(range(256))), "is not UTF-8 text"),
    "Latin-1 .py": (_write("kernel.py", "x = 'é'\n".encode("latin-1")), "is not UTF-8 text"),
    "empty .ipynb": (_write("kernel.ipynb", b""), "is not a valid notebook"),
    "JSON list .ipynb": (_write("kernel.ipynb", b"[1, 2]"), "is not a Jupyter notebook"),
    "over 8 MiB": (_big, "is over 8 MiB"),
    "link to the solution": (_link(SOLUTION), "is a symbolic link"),
    "link to /etc/passwd": (_link(Path("/etc/passwd")), "is a symbolic link"),
    "dangling link": (_link(lambda tmp: tmp / "gone.py"), "is a symbolic link"),
    "named pipe": (_fifo, "is a named pipe (FIFO)"),
    "socket": (_socket, "is a socket"),
    "folder": (_folder, "is a folder"),
}

#: The grader's problem: exit 2, one line on standard error.
INSTRUCTORS = {
    "nothing at the path": (lambda tmp: tmp / "typo.py", [], "typo.py: no such file"),
    "a file used as a folder": (_below_a_file, [], "more.py: no such file"),
    "unknown exercise": (_txt, ["-e", "no_such_exercise"], "unknown exercise"),
    "bad --device": (_txt, ["--device", "banana"], "banana"),
    "unknown option": (_txt, ["--frobnicate"], "No such option"),
}


@pytest.fixture(autouse=True)
def _no_hang_and_close_sockets():
    """Fail instead of hanging (a pipe opened for reading waits for a writer), then close the
    sockets a case made."""
    def _stop(*_):
        raise TimeoutError("the grader blocked on the submission")
    old = signal.signal(signal.SIGALRM, _stop)
    signal.alarm(60)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)
    while _SOCKETS:
        _SOCKETS.pop().close()


def _grade(path: Path, *extra: str):
    args = ["grade", str(path), "-e", EXERCISE, "--device", "sim", *extra]
    if "-e" in extra:
        args[3:5] = []
    return CliRunner().invoke(app, args)


@pytest.mark.parametrize("public", [False, True], ids=["grade", "grade --public"])
@pytest.mark.parametrize("case", sorted(STUDENTS))
def test_a_students_bad_file_is_exit_0_with_a_0_and_a_message(tmp_path, case, public):
    make, words = STUDENTS[case]
    path = make(tmp_path)
    out = _grade(path, "--json", *(["--public"] if public else []))
    assert out.exit_code == 0, (out.stdout, out.stderr, out.exception)
    result = json.loads(out.stdout)
    assert result["score"] == 0
    assert all(t["status"] == "error" and t["points"] == 0 for t in result["tests"])
    assert f"{path} {words}" in result["tests"][0]["message"]
    assert "root:" not in out.stdout and "cuda.syncthreads" not in out.stdout


@pytest.mark.parametrize("public", [False, True], ids=["grade", "grade --public"])
@pytest.mark.parametrize("case", sorted(INSTRUCTORS))
def test_bad_arguments_are_exit_2_with_one_line(tmp_path, case, public):
    make, extra, words = INSTRUCTORS[case]
    out = _grade(make(tmp_path), *extra, *(["--public"] if public else []))
    assert out.exit_code == 2, (out.stdout, out.stderr)
    assert out.stdout == ""
    assert words in out.stderr
    if case != "unknown option":  # typer's own usage message is a box
        assert out.stderr.startswith("error: ") and len(out.stderr.strip().splitlines()) == 1


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file whatever its mode")
def test_a_file_the_grader_may_not_read_is_exit_2(tmp_path):
    path = _write("kernel.py", b"x = 1\n")(tmp_path)
    path.chmod(0)
    try:
        out = _grade(path)
    finally:
        path.chmod(0o600)
    assert out.exit_code == 2 and out.stderr.startswith(f"error: cannot read {path}")


def test_the_real_entry_point_keeps_the_rule(tmp_path):
    env = env_with_root()
    base = [sys.executable, "-m", "autograder.cli", "grade", "-e", EXERCISE, "--device", "sim"]
    txt = subprocess.run([*base, "--json", str(_txt(tmp_path))], capture_output=True, text=True,
                         cwd=ROOT, env=env, timeout=120)
    assert txt.returncode == 0, txt.stderr[-2000:]
    result = json.loads(txt.stdout)
    assert result["score"] == 0 and "is neither a .py file" in result["tests"][0]["message"]
    gone = subprocess.run([*base, str(tmp_path / "typo.py")], capture_output=True, text=True,
                          cwd=ROOT, env=env, timeout=120)
    assert gone.returncode == 2 and gone.stdout == ""
    assert gone.stderr.strip() == f"error: {tmp_path / 'typo.py'}: no such file"


def test_the_rule_is_in_the_help_and_the_readme():
    from autograder.cli import EXIT_STATUS

    assert "README, 'Exit status'" in EXIT_STATUS
    readme = (ROOT / "README.md").read_text()
    assert "**Exit status: one rule everywhere**" in readme
    assert "Exit status" in CliRunner().invoke(app, ["grade", "--help"]).stdout


def test_no_instructor_solution_is_exit_2_whatever_the_preflight_s_order(monkeypatch, tmp_path):
    """On a GPU the preflight runs beside the student's grading, which met the missing solution
    first (its timing reference) and ended in a traceback, exit 1 (an installed kernelgrade on an
    H200, 2026-11-26). A preflight that has not finished stands in for the GPU's here."""
    from autograder.grading import preflight

    class Running:
        def done(self):
            return False

        def result(self):
            return None

    def missing(exercise):
        raise FileNotFoundError("no instructor solution: set KERNELGRADE_SOLUTIONS")

    monkeypatch.setattr(preflight, "start", lambda *a, **k: Running())
    monkeypatch.setattr(exercises, "solution_path", missing)
    sub = tmp_path / "kernel.py"
    sub.write_text(SOLUTION.read_text())
    result = CliRunner().invoke(app, ["grade", str(sub), "-e", EXERCISE, "--device", "sim"])
    assert result.exit_code == 2, result.output
    assert "KERNELGRADE_SOLUTIONS" in result.output
