"""A child as an unprivileged user of its own (autograder.sandbox.dropuser; issue 32, item 13): the
sandbox of a root grader where bubblewrap cannot make its namespaces (a Docker container with
the default seccomp profile, as on Gradescope).

Which mode is chosen is checked anywhere (the probes are stood in for). What the child can do is
checked as root only (another user cannot give a child another user id; skipped otherwise),
with small programs run by the sandbox as the harness would be (``program=``) under the system's
Python, which every user may run, in scratch folders under the shared temporary folder as a
grading's are. The end-to-end grading on Gradescope's layout is
tests/red_team/test_gradescope_user.py."""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from autograder.sandbox import dropuser, landlock, mode as sandbox_mode, run as sandbox_run
from autograder.sandbox.limits import Limits

SYSTEM_PYTHON = Path(f"/usr/bin/python{sys.version_info[0]}.{sys.version_info[1]}")
BLOCKED = "bwrap: No permissions to creating new namespace"
as_root = pytest.mark.skipif(not dropuser.applies() or not SYSTEM_PYTHON.is_file(),
                             reason=f"needs root and {SYSTEM_PYTHON}")


@pytest.fixture
def modes(monkeypatch):
    """Bubblewrap fails its probe here; the user probe is set by each test."""
    monkeypatch.setattr(sandbox_mode, "_probe", lambda: sandbox_mode.SandboxStatus(False, BLOCKED))
    monkeypatch.setattr(sandbox_mode, "_status", None)
    monkeypatch.setattr(sandbox_mode, "_broken", {})
    monkeypatch.delenv("KERNELGRADE_SANDBOX", raising=False)
    return monkeypatch


def test_a_root_grader_without_bubblewrap_runs_children_as_users_of_their_own(modes):
    modes.setattr(dropuser, "applies", lambda: True)
    modes.setattr(dropuser, "probe", lambda: "")
    status = sandbox_mode.sandbox_status()
    assert status.user and status.sandboxed and not status.available and status.name == "user"
    assert status.reason == BLOCKED
    with pytest.raises(sandbox_mode.SandboxUnavailable):  # one grading at a time, not a class
        sandbox_mode.for_class()


def test_a_grader_that_is_not_root_is_as_before(modes):
    """A TA's laptop without bubblewrap: plain children, and a class refused (no probe run)."""
    modes.setattr(dropuser, "applies", lambda: False)
    modes.setattr(dropuser, "probe", lambda: pytest.fail("probed without root"))
    status = sandbox_mode.sandbox_status()
    assert status == sandbox_mode.SandboxStatus(False, BLOCKED) and status.name == "plain"
    with pytest.raises(sandbox_mode.SandboxUnavailable):
        sandbox_mode.for_class()


def test_a_failed_user_probe_says_why_and_no_sandbox_is_left(modes, tmp_path):
    modes.setattr(dropuser, "applies", lambda: True)
    modes.setattr(dropuser, "probe", lambda: "a child could read /x/solutions")
    status = sandbox_mode.sandbox_status()
    assert not status.sandboxed and "a child could read /x/solutions" in status.reason
    modes.setenv("KERNELGRADE_SANDBOX", "require")
    with pytest.raises(sandbox_mode.SandboxUnavailable, match="could read /x/solutions"):
        sandbox_run.run_child({}, "sim", Limits(), tmp_path)


def test_off_never_uses_another_user(modes):
    modes.setattr(dropuser, "applies", lambda: True)
    modes.setattr(dropuser, "probe", lambda: "")
    modes.setenv("KERNELGRADE_SANDBOX", "off")
    assert sandbox_mode.sandbox_status().name == "plain"


@as_root
def test_the_probe_refuses_solutions_other_users_can_read(monkeypatch, tmp_path):
    """Solutions that any user may read (a checkout's, say) leave no user sandbox: the probe
    tries them as such a user."""
    folder = Path(tempfile.mkdtemp(prefix="kg-open-solutions-"))
    try:
        folder.chmod(0o755)
        (folder / "tiled_matmul.py").write_text("SECRET = 1\n")
        (folder / "tiled_matmul.py").chmod(0o644)
        monkeypatch.setenv("KERNELGRADE_SOLUTIONS", str(folder))
        monkeypatch.setattr(sys, "executable", str(SYSTEM_PYTHON))
        assert str(folder) in dropuser.secret_paths()
        assert "a child could read" in dropuser.probe()
    finally:
        shutil.rmtree(folder)


@as_root
def test_become_leaves_no_capability_and_cannot_signal_root(tmp_path):
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through the pipe
        os.close(read)
        try:
            dropuser.become(dropuser.UIDS[0], tasks=32)
            try:
                os.kill(os.getppid(), 0)
                parent = "signalled"
            except PermissionError:
                parent = "refused"
            import resource
            said = {"ids": [os.getresuid(), os.getresgid()], "groups": os.getgroups(),
                    "caps": dropuser._capabilities(), "parent": parent,
                    "nproc": resource.getrlimit(resource.RLIMIT_NPROC)[0],
                    "nnp": open("/proc/self/status").read().split("NoNewPrivs:")[1].split()[0]}
        except BaseException as exc:  # noqa: BLE001
            said = {"error": repr(exc)}
        os.write(write, json.dumps(said).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as f:
        said = json.loads(f.read())
    os.waitpid(pid, 0)
    uid = dropuser.UIDS[0]
    assert said.get("ids") == [[uid] * 3, [uid] * 3], said
    assert said["groups"] == [] and said["caps"] == 0 and said["nnp"] == "1"
    assert said["parent"] == "refused" and said["nproc"] == 32


#: What a child as its own user can and cannot do, as JSON on standard output: argv[1] a file
#: only root reads, argv[2] one owned by the solutions' owner with mode 0400, argv[3] the
#: scratch folder, argv[4] the port of a TCP socket listening on 127.0.0.1.
PROBE = """
import json, os, resource, socket, sys, threading, time
said = {"uid": os.getuid(), "cwd_writable": os.access(".", os.W_OK)}
for key, path in (("root_file", sys.argv[1]), ("locked", sys.argv[2])):
    try:
        open(path).read(); said[key] = "read"
    except OSError as exc:
        said[key] = exc.strerror
for key, path in (("scratch", os.path.join(sys.argv[3], "forged")),
                  ("tmp", "/tmp/kg-forged-" + str(os.getpid()))):
    try:
        open(path, "w").write("x"); said[key] = "wrote"; os.unlink(path)
    except OSError as exc:
        said[key] = exc.strerror
try:
    os.kill(os.getppid(), 9); said["guardian"] = "killed"
except OSError as exc:
    said["guardian"] = exc.strerror
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[4])), timeout=5).close()
    said["tcp"] = "connected"
except OSError as exc:
    said["tcp"] = exc.strerror or str(exc)
said["data"] = resource.getrlimit(resource.RLIMIT_DATA)[0]
said["nproc"] = resource.getrlimit(resource.RLIMIT_NPROC)[0]
started = 0
try:
    for _ in range(200):
        threading.Thread(target=time.sleep, args=(3,), daemon=True).start(); started += 1
except RuntimeError:
    pass
said["threads"] = started
print(json.dumps(said), flush=True)
"""


@as_root
def test_a_child_of_its_own_user_is_held_to_its_folder_and_caps(modes, monkeypatch):
    from autograder.gradescope.run import SOLUTIONS_OWNER

    modes.setattr(sandbox_mode, "_status",
                  sandbox_mode.SandboxStatus(False, BLOCKED, user=True))
    modes.setenv("KERNELGRADE_SANDBOX", "require")
    secret = Path(tempfile.mkdtemp(prefix="kg-secret-"))
    try:
        secret.chmod(0o755)
        (secret / "root_only").write_text("root's\n")
        (secret / "root_only").chmod(0o600)
        (secret / "locked").write_text("the solution\n")
        os.chown(secret / "locked", SOLUTIONS_OWNER, SOLUTIONS_OWNER)
        (secret / "locked").chmod(0o400)
        limits = Limits(tasks=40, memory_bytes=1 << 30, total_timeout=60, import_timeout=60)
        server = socket.create_server(("127.0.0.1", 0))
        with server, sandbox_run.scratch_dir() as work:
            (Path(work) / "probe.py").write_text(textwrap.dedent(PROBE))
            run = sandbox_run.run_child({}, "sim", limits, Path(work), program=[
                str(SYSTEM_PYTHON), "-I", "-S", str(Path(work) / "probe.py"),
                str(secret / "root_only"), str(secret / "locked"), work,
                str(server.getsockname()[1])])
            outputs = [p for p in Path(work).glob("output-*")]
            assert outputs and all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in outputs)
    finally:
        shutil.rmtree(secret)
    assert run.sandbox == "user", run.output
    said = json.loads(run.output.strip().splitlines()[-1])
    assert said["uid"] in dropuser.UIDS
    assert said["root_file"] == said["locked"] == "Permission denied"
    assert said["scratch"] == "Permission denied" and said["cwd_writable"]
    assert said["tmp"] == ("Permission denied" if landlock.abi() > 0 else "wrote")
    assert said["guardian"] == "Operation not permitted"
    assert said["tcp"] == ("Permission denied" if landlock.abi() >= 4 else "connected")
    assert said["data"] == 1 << 30  # the limits set before the drop hold after it
    assert said["threads"] < 40  # RLIMIT_NPROC of its own user, or the cgroup's pids.max
