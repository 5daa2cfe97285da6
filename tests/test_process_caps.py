"""A child's whole process tree is held to its memory cap and to a cap on its processes
(autograder.sandbox.caps, issue 30: a submission's forks held 6.2 GiB against a 4 GiB cap, which
RLIMIT_DATA holds per process only). The cap holds for any program the sandbox runs, so these
drive the sandbox with small programs of their own (student code gets ``os`` some way or other;
numpy, numba and multiprocessing can fork). Each program is bounded so that, without the caps,
it would still not harm this 2-core, 24 GiB machine: 20 forks of 300 MiB, a fork tree of 255."""

from __future__ import annotations

import sys
import textwrap

import pytest

from autograder.judge.cases import early_failure
from autograder.sandbox import caps, mode as sandbox_mode, run as sandbox_run
from autograder.sandbox.limits import Limits
from autograder.wire.results import Status

MIB = 1 << 20

#: 20 processes, each holding 300 MiB of its own for up to 20 s: 6 GiB in all.
FORKS_TOUCHING_MEMORY = """
import os, time
kids = []
for _ in range(20):
    pid = os.fork()
    if pid == 0:
        block = bytearray(b"x") * (300 << 20)  # written: resident, not shared
        time.sleep(20)
        os._exit(0)
    kids.append(pid)
    time.sleep(0.05)
for pid in kids:
    os.waitpid(pid, 0)
print("all forks held their memory")
"""

#: A fork bomb with an end: every process forks two children down to depth 7 (255 processes),
#: each then sleeps 15 s.
FORK_TREE = """
import os, time
for depth in range(7):
    if os.fork() and os.fork():
        break
time.sleep(15)
"""


@pytest.fixture(params=["bubblewrap", "plain"])
def sandbox(request, monkeypatch):
    """Each test in both modes (bubblewrap where it runs here)."""
    if request.param == "bubblewrap":
        if not sandbox_mode.sandbox_status().available:
            pytest.skip(f"needs bubblewrap: {sandbox_mode.sandbox_status().reason}")
        monkeypatch.setenv("KERNELGRADE_SANDBOX", "require")
    else:
        monkeypatch.setenv("KERNELGRADE_SANDBOX", "off")
    return request.param


def _run(tmp_path, program: str, limits: Limits):
    work = tmp_path / "work"
    work.mkdir()
    (work / "program.py").write_text(textwrap.dedent(program))
    return sandbox_run.run_child({}, "sim", limits, work,
                                 program=[sys.executable, "-S", str(work / "program.py")])


def test_forks_that_together_pass_the_memory_cap_stop_that_grading(sandbox, tmp_path):
    limits = Limits(memory_bytes=1 << 30, total_timeout=60, import_timeout=60)
    run = _run(tmp_path, FORKS_TOUCHING_MEMORY, limits)
    assert run.ended == "capped", (run.ended, run.output)
    assert "more than 1 GiB of memory" in run.capped
    assert "all forks held" not in run.output
    status, message = early_failure(None, run)
    assert status is Status.ERROR and "1 GiB" in message and "every process it started" in message


def test_a_fork_bomb_stops_at_the_process_cap(sandbox, tmp_path):
    limits = Limits(processes=64, total_timeout=60, import_timeout=60)
    run = _run(tmp_path, FORK_TREE, limits)
    assert run.ended == "capped", (run.ended, run.output)
    assert run.capped in (caps.message("processes", sandbox_run.tree_caps("sim", limits)),
                          caps.message("tasks", sandbox_run.tree_caps("sim", limits)))
    assert run.seconds < 10  # stopped, not left to sleep out its 15 s


def test_a_tree_within_its_caps_runs_to_its_end(sandbox, tmp_path):
    """Four forks of 20 MiB each under the default caps: nothing is stopped."""
    program = FORKS_TOUCHING_MEMORY.replace("range(20)", "range(4)").replace("300 << 20",
                                                                             "20 << 20")
    run = _run(tmp_path, program.replace("time.sleep(20)", "time.sleep(0.5)"),
               Limits(total_timeout=60, import_timeout=60))
    assert run.ended == "exited" and run.capped == "", run.output
    assert "all forks held their memory" in run.output


def test_memory_shared_with_a_parent_counts_once(tmp_path):
    """A fork shares its parent's pages until it writes them: the proportional set sizes count
    them once, so a submission whose library forks is not over the cap for pages it shares."""
    import os
    import time

    held = bytearray(b"x") * (64 * MIB)
    pid = os.fork()
    if pid == 0:
        time.sleep(5)
        os._exit(0)
    try:
        time.sleep(0.2)
        me = caps.tree_memory([os.getpid()], 1 << 40)
        both = caps.tree_memory([os.getpid(), pid], 1)  # over the cap: proportional sizes
        resident = caps.tree_memory([os.getpid(), pid], 1 << 40)
        assert resident > me + 60 * MIB  # resident sizes count the shared pages twice
        assert both < me + 32 * MIB
    finally:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
    del held


def test_a_cgroup_says_which_cap_the_kernel_held(tmp_path):
    """What the grader reads after a child in its own cgroup ended (the files cgroup v2
    writes)."""
    group = object.__new__(caps.Cgroup)
    group.path = tmp_path
    (tmp_path / "memory.events").write_text("low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\n")
    assert group.breach() == "memory"
    (tmp_path / "memory.events").write_text("low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n")
    assert group.breach() is None
    (tmp_path / "pids.events").write_text("max 3\n")
    assert group.breach() == "tasks"


def test_a_real_cgroup_holds_the_caps_where_this_host_has_one(tmp_path, monkeypatch):
    folder, why = caps.probe()
    if folder is None:
        pytest.skip(f"no cgroup v2 here: {why}")
    monkeypatch.setenv("KERNELGRADE_SANDBOX", "off")
    limits = Limits(memory_bytes=1 << 30, total_timeout=60, import_timeout=60)
    run = _run(tmp_path, FORKS_TOUCHING_MEMORY, limits)
    assert run.ended == "capped" and "1 GiB" in run.capped
    mine = f"child-{__import__('os').getpid()}-"
    assert not [p for p in folder.iterdir() if p.name.startswith(mine)]  # removed


def test_rlimit_nproc_is_set_only_in_a_user_namespace_of_the_sandbox():
    """The kernel counts RLIMIT_NPROC per user and user namespace: in the first namespace it
    would count every process of the grader's user (other gradings too). Run here as the
    sandbox runs it, first in this namespace, then (where bubblewrap runs as a user who is not
    root, so it makes a user namespace) inside one, where a fork past the limit is refused."""
    import subprocess

    from autograder.sandbox import nproc

    probe = ("import os, resource, time\n"
             "kids = []\n"
             "try:\n"
             "    for _ in range(40):\n"
             "        pid = os.fork()\n"
             "        if pid == 0:\n"
             "            time.sleep(1); os._exit(0)\n"
             "        kids.append(pid)\n"
             "except OSError:\n"
             "    pass\n"
             "print(resource.getrlimit(resource.RLIMIT_NPROC)[0], len(kids))\n")
    cmd = [sys.executable, "-S", "-E", nproc.__file__, "16", sys.executable, "-S", "-c", probe]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[1] == "40"  # the host's namespace: left alone
    assert out.stdout.split()[0] != "16"
    import os
    import shutil
    from pathlib import Path

    if os.geteuid() != 0 or shutil.which("setpriv") is None or shutil.which("bwrap") is None:
        pytest.skip("needs root here to run bubblewrap as another user (setpriv)")
    python = "/usr/bin/python3"  # one nobody may run (this one may live under /root)
    launcher = Path(nproc.__file__).read_text()  # as text: nobody may not read the checkout
    out = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "bwrap",
                          "--ro-bind", "/", "/", "--unshare-pid", "--proc", "/proc", "--dev",
                          "/dev", python, "-S", "-E", "-c", launcher, "16", python, "-S", "-c",
                          probe], capture_output=True, text=True, timeout=60)
    if out.returncode != 0 and "bwrap" in out.stderr:
        pytest.skip(f"bubblewrap cannot run as nobody here: {out.stderr.strip()}")
    assert out.returncode == 0, out.stderr
    limit, made = out.stdout.split()
    assert limit == "16" and int(made) < 16
