"""The plain-mode guardian between the grader and the harness, for when bubblewrap cannot run.

Run as ``python -S reaper.py GRADER_PID [--user=UID [--nproc=N]] [--write=DIR ...] CMD
ARGS...`` (standard library only, no package import, so it starts in a few milliseconds). With
``--user`` (a root grader without bubblewrap: :mod:`autograder.sandbox.dropuser`), the harness
runs as that user, without capabilities (and at most ``N`` processes and threads of that user),
while this guardian stays root. With ``--write`` folders, the harness may write only beneath
them and ``/dev`` (:mod:`autograder.sandbox.landlock`, applied just before it runs; under
``--user`` also no TCP connect or bind, where the kernel can refuse them). A user or a rule that
cannot be made ends the child with status 126 before anything runs. It becomes a *child
subreaper*: every process the harness starts stays its descendant even after ``setsid()`` and a double fork. When the harness exits, or when the grader sends
SIGTERM (timeout) or dies (``PR_SET_PDEATHSIG``), it SIGKILLs every remaining descendant, reaps
them, and exits with the harness's status (``128 + signal`` when the harness was killed by a
signal).

It also makes the student's ``os.kill(os.getppid(), 9)`` kill only this guardian: the harness
then dies with it (its own death signal), and the grader sees the child end.

What it cannot do as the harness's own user (only bubblewrap's PID namespace or ``--user`` can):
a descendant that first kills this guardian and then leaves the session escapes it. Under
``--user`` the harness cannot signal this guardian at all.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36

_libc = ctypes.CDLL(None, use_errno=True)


def _prctl(option: int, arg: int) -> None:
    _libc.prctl(option, ctypes.c_ulong(arg), ctypes.c_ulong(0), ctypes.c_ulong(0),
                ctypes.c_ulong(0))


def proc_stats():
    """``(pid, fields)`` for every process in ``/proc``: ``fields`` are the words of its
    ``/proc/<pid>/stat`` after the command name, so ``fields[1]`` is the parent PID (field 4 of
    proc(5)) and ``fields[11:15]`` utime, stime, cutime and cstime in clock ticks."""
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        # The command name (field 2) may hold spaces and parentheses: split after the last ')'.
        yield int(name), stat[stat.rfind(b")") + 2:].split()


def _children(me: int) -> list[int]:
    """PIDs whose parent is ``me`` (orphans of our descendants are reparented to us)."""
    return [pid for pid, fields in proc_stats() if len(fields) > 1 and int(fields[1]) == me]


def _reap_nowait() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def kill_descendants() -> None:
    """SIGKILL every descendant until none is left (each kill reparents its children to us)."""
    me = os.getpid()
    for _ in range(10_000):
        kids = _children(me)
        if not kids:
            _reap_nowait()
            return
        for pid in kids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for _ in kids:
            try:
                os.waitpid(-1, 0)
            except ChildProcessError:
                break


def main(argv: list[str]) -> int:
    grader = int(argv[0])
    cmd = argv[1:]
    writable, user, tasks = [], None, None
    while cmd and cmd[0].startswith(("--write=", "--user=", "--nproc=")):
        name, _, value = cmd.pop(0).partition("=")
        if name == "--write":
            writable.append(value)
        elif name == "--user":
            user = int(value)
        else:
            tasks = int(value)
    _prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != grader:  # the grader died before the death signal was armed
        return 137
    _prctl(PR_SET_CHILD_SUBREAPER, 1)

    def stop(signum, frame):
        kill_descendants()
        os._exit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    me = os.getpid()
    pid = os.fork()
    if pid == 0:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        if user is not None:
            try:
                # this script's siblings (sys.path[0]), imported while every file is readable
                import dropuser
                import landlock  # noqa: F401

                dropuser.become(user, tasks)
            except Exception as exc:  # noqa: BLE001 - never run the child as root
                os.write(2, f"reaper: cannot run the child as user {user}: {exc}\n".encode())
                os._exit(126)
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # after become: a new user id clears it
        if os.getppid() != me:
            os._exit(137)
        if writable:
            try:
                import landlock  # this script's sibling (sys.path[0])

                landlock.restrict_writes(writable, tcp=user is None)
            except Exception as exc:  # noqa: BLE001 - never run the child unrestricted
                os.write(2, f"reaper: cannot restrict the child's writes: {exc}\n".encode())
                os._exit(126)
        try:
            os.execv(cmd[0], cmd)
        finally:
            os._exit(127)
    status = 0
    while True:
        try:
            done, st = os.waitpid(-1, 0)
        except ChildProcessError:
            break
        except InterruptedError:
            continue
        if done == pid:
            status = st
            break
    kill_descendants()
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
