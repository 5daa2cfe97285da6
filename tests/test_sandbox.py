"""The sandbox (bubblewrap or a reaper-guarded plain child) and the definitions-only loader.

The hostile submissions themselves are in ``tests/adversarial``; here: the loader's rules one by
one, the mode choice (probe, ``KERNELGRADE_SANDBOX``), the channel budget, and the plain mode's
guarantees exercised even on machines where bubblewrap runs.
"""

from __future__ import annotations

import io
import os

os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")  # in-process numba, as tests/instrument does

import pytest  # noqa: E402

from autograder.exercises import known_bad
from autograder.sandbox import bwrap, mode as sandbox_mode, run as sandbox_run  # noqa: E402
from autograder.sandbox.limits import Limits, child_env  # noqa: E402
from autograder.wire.channel import ChannelError, encode, read_record  # noqa: E402
from autograder.source.definitions import run_definitions  # noqa: E402

PATH = "/nonexistent/submission.py"


def _run(src: str, lazy: bool = False):
    ns = {"__name__": "submission"}
    skipped = run_definitions(src, PATH, ns, lazy=lazy)
    return ns, {s.lineno: s.reason for s in skipped}


def test_definitions_keep_constants_imports_kernels_and_functions():
    ns, skipped = _run(
        "import math\n"                                  # 1
        "import numpy as np\n"                           # 2
        "from numba import cuda, float32, void\n"        # 3
        "TILE = 16\n"                                    # 4
        "PADDED = TILE + 1\n"                            # 5
        "SHAPE: tuple = (TILE, PADDED)\n"                # 6
        "N = int(math.ceil(7 / 2)) * 2\n"                # 7
        "DT = np.float32\n"                              # 8
        "jit = cuda.jit\n"                               # 9
        "SIG = void(float32[:, ::1])\n"                  # 10
        "TILE += 0\n"                                    # 11
        '"""a docstring"""\n'                            # 12
        "@jit\n"                                         # 13
        "def k(A):\n"
        "    A[0] = TILE\n"
        "@cuda.jit(device=True, inline=True)\n"          # 16
        "def helper(a, b=3, *, c=PADDED):\n"
        "    return a + b + c\n"
        "def plain(x: int = 5) -> int:\n"                # 19
        "    return x\n"
        "if __name__ == '__main__':\n"                   # 21
        "    plain()\n")
    assert skipped == {}
    assert (ns["TILE"], ns["PADDED"], ns["SHAPE"], ns["N"]) == (16, 17, (16, 17), 8)
    assert ns["plain"]() == 5 and ns["plain"].__annotations__ == {}
    assert ns["helper"].py_func.__defaults__ == (3,)
    assert ns["helper"].py_func.__kwdefaults__ == {"c": 17}
    assert type(ns["k"]).__name__ in ("FakeCUDAKernel", "CUDADispatcher")


@pytest.mark.parametrize("line, words", [
    ("import os", "only numba, numpy and math"),
    ("from subprocess import run", "only numba, numpy and math"),
    ("from numba import _helperlib", "not imported"),
    ("print('hello')", "a call or expression"),
    ("if True:\n    print(1)", "an if block"),
    ("if np.random.rand() > 0.5:\n    Y = 1", "an if block"),
    ("for i in range(3):\n    pass", "a for loop"),
    ("class K:\n    pass", "a class"),
    ("np.allclose = None", "only plain names"),
    ("X = np.load('x.npy', allow_pickle=True)", "attribute load"),
    ("X = open('/etc/passwd')", "built-in open"),
    ("X = __import__('os')", "__import__"),
    ("X = ().__class__", "attribute __class__"),
    ("X = numba.config.ENABLE_CUDASIM", "numba.core.config is not available"),
    ("X = np.zeros(1 << 40)", "an array that large"),
    ("X = 2 ** 100000", "an exponent that large"),
    ("def __getattr__(name):\n    return 1", "def __getattr__"),
    ("@staticmethod\ndef f():\n    pass", "only @cuda.jit"),
    ("@cuda.jit(link=['/etc/passwd'])\ndef f():\n    pass", "option link="),
    ("@cuda.jit(\"void(float32[:]) if __import__('os').system('true') else 0\")\n"
     "def f(a):\n    pass", "IfExp is not allowed"),
    ("@cuda.jit('void(np.float32[:])')\ndef f(a):\n    pass", "Attribute is not allowed"),
    ("def f(x=open('/etc/passwd')):\n    pass", "built-in open"),
    ("X = [c for c in range(3)]", "ListComp"),
    ("X = [lambda: 0]", "Lambda"),
])
def test_definitions_skip_everything_else(line, words):
    ns, skipped = _run("import numpy as np, numba\nfrom numba import cuda\n" + line + "\n")
    assert 3 in skipped, f"not skipped: {line!r}"
    assert words in skipped[3], skipped[3]


def test_a_name_left_undefined_by_a_skipped_statement_says_so():
    with pytest.raises(NameError, match="line 1 that would define it is not run") as info:
        _run("class Fake:\n    pass\nkernel = Fake\n")
    assert info.value.submission_lineno == 3


def test_lazy_definitions_drop_checked_signatures():
    ns, skipped = _run("from numba import cuda\n@cuda.jit('void(float32[:])')\ndef k(a):\n"
                       "    pass\n", lazy=True)
    assert skipped == {} and "k" in ns


def test_channel_budget_refuses_before_reading():
    data = encode({"type": "case", "id": 0}, {"C": __import__("numpy").zeros(1000)})
    budget = sandbox_run._Budget(io.BytesIO(data * 3), limit=len(data) * 2)
    assert read_record(budget)[0]["id"] == 0
    assert read_record(budget)[0]["id"] == 0
    with pytest.raises(ChannelError):
        read_record(budget)
    assert budget.exceeded


def test_probe_says_why_without_bwrap(monkeypatch):
    monkeypatch.setattr(sandbox_mode.shutil, "which", lambda name: None)
    assert sandbox_mode._probe() == sandbox_mode.SandboxStatus(False, "bwrap is not installed")


def test_require_mode_refuses_to_grade_without_bubblewrap(monkeypatch, tmp_path):
    monkeypatch.setattr(sandbox_mode, "_status", sandbox_mode.SandboxStatus(False, "not here"))
    monkeypatch.setenv("KERNELGRADE_SANDBOX", "require")
    with pytest.raises(sandbox_mode.SandboxUnavailable, match="not here"):
        sandbox_run.run_child({}, "sim", Limits(), tmp_path)


def test_off_mode_runs_plain_children_with_a_note(monkeypatch):
    monkeypatch.setenv("KERNELGRADE_SANDBOX", "off")
    status = sandbox_mode.sandbox_status()
    assert not status.available
    assert sandbox_mode.PLAIN_NOTE.format(reason=status.reason).startswith(
        "sandbox: bubblewrap unavailable (KERNELGRADE_SANDBOX=off); ran in a plain child process")


def test_bubblewrap_hides_the_project(tmp_path, monkeypatch):
    """Where bubblewrap runs, the child's view has the package, the assignments and the venv,
    nothing else of the project (no solutions/ folder, each assignment's notebook text empty,
    its mutants and variants gone, any $KERNELGRADE_SOLUTIONS folder gone), no network and only
    its own processes."""
    if not sandbox_mode.sandbox_status().available:
        pytest.skip(f"needs bubblewrap: {sandbox_mode.sandbox_status().reason}")
    import subprocess
    import sys

    solutions = tmp_path / "instructor" / "solutions"
    solutions.mkdir(parents=True)
    (solutions / "tiled_matmul.py").write_text("TILE_WIDTH = 16\n")
    monkeypatch.setenv("KERNELGRADE_SOLUTIONS", str(solutions))
    work = tmp_path / "work"
    work.mkdir()
    probe = ("import os, socket\n"
             "pkg = os.path.dirname(os.path.abspath(__import__('autograder').__file__))\n"
             "root = os.path.dirname(pkg)\n"
             "print(sorted(os.listdir(root)))\n"
             "print(sorted(p for p in os.listdir('/proc') if p.isdigit()))\n"
             "try:\n    socket.create_connection(('1.1.1.1', 53), timeout=2); print('net')\n"
             "except OSError:\n    print('no net')\n"
             "folder = os.path.join(root, 'assignments', 'tiled_matmul')\n"
             "print(os.path.getsize(os.path.join(folder, 'notebook.py')),"
             " os.listdir(os.path.join(folder, 'mutants')),"
             " os.listdir(os.path.join(folder, 'variants')),"
             f" os.path.exists({str(solutions / 'tiled_matmul.py')!r}))\n")
    out = subprocess.run(bwrap.arguments(work, gpu=False)
                         + ["--", sys.executable, "-P", "-c", probe],
                         capture_output=True, text=True, env=child_env("sim"),
                         timeout=60)
    lines = out.stdout.splitlines()
    assert out.returncode == 0, out.stderr
    visible = eval(lines[0])
    assert {"autograder", "assignments"} <= set(visible), visible
    assert not {"solutions", "tests", ".git", "examples"} & set(visible), visible
    assert eval(lines[1]) == ["1", "2"]
    assert lines[2] == "no net"
    # no solution, no mutant, no textbook variant, no solutions folder
    assert lines[3] == "0 [] [] False", lines[3]


PLAIN_SUBSET = ["kill_parent", "fork_left_behind", "os_exit_in_function", "channel_flood"]


@pytest.mark.parametrize("name", PLAIN_SUBSET)
def test_plain_mode_contains_the_child_too(name, monkeypatch, tmp_path):
    """Without bubblewrap the reaper must still absorb a kill of the parent, kill what the
    child left behind (even in a new session), and the grader must go on."""
    from tests.adversarial.test_adversarial import (
        FILES, test_hostile_submission_gets_nothing_and_the_grader_carries_on as hostile)

    monkeypatch.setenv("KERNELGRADE_SANDBOX", "off")
    copy = tmp_path / f"{name}.py"  # its own orphan name: the suite may run it at the same time
    copy.write_text((FILES / f"{name}.py").read_text().replace("31337.", "31338."))
    hostile(copy)


def test_a_wrapper_runs_inside_the_child_and_writes_only_its_folder(tmp_path):
    """The hook compute-sanitizer needs: a command prefix inside the sandbox, and one folder it
    may write (its log), whichever the mode."""
    from autograder import exercises
    from autograder.grading.plan import make_cases as _make_cases, request as _request
    from conftest import SOLUTIONS

    ex = exercises.get("occupancy")
    work, logs = tmp_path / "work", tmp_path / "logs"
    work.mkdir()
    logs.mkdir()
    source = work / "submission.py"
    source.write_text((SOLUTIONS / "occupancy.py").read_text())
    cases = _make_cases(ex, 1)[:2]
    wrapper = ("/bin/sh", "-c", f'echo wrapped > {logs}/log.txt && exec "$@"', "sh")
    run = sandbox_run.run_child(_request(ex, "sim", ["run"], source, cases, None), "sim",
                                Limits(), work, wrapper=wrapper, writable=logs)
    assert run.ended == "finished", run.output
    assert len(run.of_type("case")) == 2
    assert (logs / "log.txt").read_text() == "wrapped\n"


def test_printed_fake_json_does_not_reach_the_command_line_output():
    """``autograder grade --json`` prints exactly one JSON object, the grader's, whatever the
    submission prints (here a perfect fake report, then ``os._exit(0)``)."""
    import json
    import subprocess
    import sys

    from conftest import ROOT, TEST_DEVICE

    path = ROOT / "tests/adversarial/files/os_exit_in_function.py"
    out = subprocess.run([sys.executable, "-m", "autograder.cli", "grade", str(path),
                          "--exercise", "occupancy", "--device", TEST_DEVICE, "--json"],
                         capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    report = json.loads(out.stdout)
    assert report["score"] == 0.0
    assert all(t["status"] != "passed" for t in report["tests"])


def _fake_bwrap(tmp_path, monkeypatch, script: str) -> None:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    fake = bindir / "bwrap"
    fake.write_text("#!/bin/sh\n" + script)
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}:{os.environ['PATH']}")
    monkeypatch.setattr(sandbox_mode, "_status", None)
    monkeypatch.setattr(sandbox_mode, "_broken", {})
    monkeypatch.delenv("KERNELGRADE_SANDBOX", raising=False)


def test_a_bwrap_that_cannot_make_namespaces_fails_the_probe(tmp_path, monkeypatch):
    _fake_bwrap(tmp_path, monkeypatch,
                'echo "bwrap: No permissions to creating new namespace" >&2\nexit 1\n')
    status = sandbox_mode.sandbox_status()
    assert not status.available
    assert "No permissions to creating new namespace" in status.reason


def test_a_bwrap_that_fails_after_the_probe_falls_back_with_a_note(tmp_path, monkeypatch):
    """The probe passes, the real child cannot start: graded in a plain child, and said so."""
    from conftest import SOLUTIONS, grade_file

    _fake_bwrap(tmp_path, monkeypatch,
                'for last; do :; done\n[ "$last" = true ] && exit 0\n'
                'echo "bwrap: Can\'t mount proc on /newroot/proc" >&2\nexit 1\n')
    assert sandbox_mode.sandbox_status().available
    result = grade_file(SOLUTIONS / "occupancy.py", "occupancy")
    assert result.score > 0 and not known_bad.full_marks_problems(result)
    assert any("failed to start: bwrap: Can't mount proc" in n for n in result.instructor_notes), \
        result.instructor_notes


def _fake_package(folder, name: str):
    (folder / name).mkdir(parents=True)
    (folder / name / "__init__.py").write_text("VALUE = 42\n")
    return folder


@pytest.mark.parametrize("mode", ["bubblewrap", "plain"])
@pytest.mark.parametrize("where", ["pythonpath", "user_site", "symlinked_folder"])
def test_a_package_the_grader_imports_is_found_by_the_child(where, mode, tmp_path, monkeypatch):
    """What the grader imports through a PYTHONPATH folder, the user site (``pip install
    --user``) or a folder reached through a symlink, the child imports too, from the same file:
    the sandbox shows the folder, and the child's path lists it whatever its ``HOME``."""
    import site
    import subprocess
    import sys
    from pathlib import Path

    if mode == "bubblewrap" and not sandbox_mode.sandbox_status().available:
        pytest.skip(f"needs bubblewrap: {sandbox_mode.sandbox_status().reason}")
    name = f"kg_fake_{where}"
    if where == "pythonpath":
        folder = _fake_package(tmp_path / "pythonpath", name)
        monkeypatch.setenv("PYTHONPATH", str(folder))
    elif where == "user_site":
        base = tmp_path / "userbase"
        folder = _fake_package(base / "lib" / "site-packages", name)
        monkeypatch.setattr(site, "ENABLE_USER_SITE", True)
        monkeypatch.setattr(site, "USER_BASE", str(base))
        monkeypatch.setattr(site, "USER_SITE", str(folder))
    else:
        folder = tmp_path / "link"
        folder.symlink_to(_fake_package(tmp_path / "real", name))
    monkeypatch.setattr(sys, "path", [sys.path[0], str(folder), *sys.path[1:]])
    work = tmp_path / "work"
    work.mkdir()
    env = child_env("sim")
    if where == "user_site":
        assert env["PYTHONUSERBASE"] == str(base)
    probe = ["-P", "-c", f"import {name}; print({name}.__file__, {name}.VALUE)"]
    if mode == "bubblewrap":
        cmd = bwrap.arguments(work, gpu=False) + ["--", sys.executable, *probe]
    else:
        cmd, env["HOME"] = [sys.executable, *probe], str(work)  # as a plain child's
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=work, timeout=60)
    assert out.returncode == 0, out.stderr[-2000:]
    file, value = out.stdout.split()
    assert Path(file).resolve() == (folder / name / "__init__.py").resolve()
    assert value == "42"


def test_the_import_path_shows_no_project_folder_tmp_or_working_folder(tmp_path, monkeypatch):
    """Folders on the grader's path that would show the project's solutions or tests, other
    submissions (the temporary folder) or the working folder are neither bound nor searched."""
    import sys
    import tempfile

    cwd = tmp_path / "course"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    root = bwrap.PROJECT_ROOT
    hidden = [str(root), str(root / "tests"), str(root / "solutions"), "/",
              tempfile.gettempdir(), str(cwd)]
    monkeypatch.setattr(sys, "path", [sys.path[0], *hidden, *sys.path[1:]])
    path = bwrap.import_path()
    assert not set(hidden) & set(path)
    assert any(p.endswith("site-packages") for p in path), path
    cmd = bwrap.arguments(tmp_path / "work", gpu=False)
    sources = {cmd[i + 1] for i, a in enumerate(cmd) if a in ("--ro-bind", "--bind", "--symlink")}
    assert not set(hidden) & sources, sorted(set(hidden) & sources)
    assert child_env("sim")["PYTHONPATH"].split(os.pathsep) == [str(root), *path]
