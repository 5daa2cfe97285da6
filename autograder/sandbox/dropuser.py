"""A user of its own for each grading child: the sandbox where the grader runs as root and
bubblewrap cannot (a Docker container with the default seccomp profile: Gradescope's).

Docker's default seccomp profile refuses ``unshare(CLONE_NEWUSER)`` and ``mount`` to a process
without ``CAP_SYS_ADMIN``, so bubblewrap cannot make its namespaces in such a container, while
root there keeps ``CAP_SETUID``, ``CAP_SETGID`` and ``CAP_CHOWN`` (Docker's default set) and
the profile allows ``setresuid``, ``setgroups`` and ``prctl``. Gradescope runs one submission per
container, as root. So each child runs as an unprivileged user of its own:

* The grader picks a user id for the child (:func:`child_user`: one that no account in
  ``/etc/passwd`` has and that no other child on this host holds, by a lock kept for the
  child's life), gives it the child's own working folder and makes the scratch folder
  traversable (:func:`prepare`).
* The reaper (:mod:`autograder.sandbox.reaper`) stays root. The process it forks for the
  harness calls :func:`become` before anything runs: no supplementary groups; real, effective
  and saved user and group ids the child's (which clears every capability: checked);
  ``PR_SET_NO_NEW_PRIVS``; umask 077; ``RLIMIT_NPROC`` at the tree's task cap where no cgroup
  holds it (the kernel counts the child's user id, which only this child has). Landlock
  follows where the kernel and the seccomp profile allow it (Docker's profile allows the
  Landlock calls since Docker 23; it does not need a user namespace): writes only beneath its
  own folder and ``/dev``, and no TCP connect or bind (Linux 6.7).

As another user without capabilities the child cannot read what only root or the solutions'
owner reads (the solutions and the class seed, locked by
:func:`autograder.gradescope.run.lock_solutions`: :func:`probe` checks every instructor file
the bubblewrap sandbox hides, as such a user, before the mechanism is chosen); cannot write
outside its own folder and the world-writable ones (``/tmp``, ``/dev/shm``; with Landlock, only
its own folder and ``/dev``); cannot signal, trace or read the memory of the grader, its reaper
or another child (each has its own user id), so ``os.kill(os.getppid(), 9)`` fails and no
descendant escapes the reaper. Unlike bubblewrap it still sees what every user may read
(``/proc``'s process list, the system's files), the network but TCP where Landlock cannot
refuse it, and, for code past the reach layers, ``/dev/shm`` (and without Landlock ``/tmp``)
as a place a sibling child of the same grading can read what it leaves there on purpose. So it
serves one grading at a time (a container per submission), not a class
(:func:`autograder.sandbox.mode.for_class`).

Standard library only at import (the reaper imports this file as a script's sibling); the
grader's side (:func:`secret_paths`, :func:`probe`) imports the package inside.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import resource
import sys

#: User (and group) ids a child may get: none has an account on a usual image; each child gets
#: one that is free on this host (:func:`child_user`).
UIDS = range(50_000, 60_000)
#: Where the grader keeps a lock for each user id it gave a child (root's alone).
LOCK_DIRS = ("/run/kernelgrade-users", "/dev/shm/kernelgrade-users-0")
_PR_SET_NO_NEW_PRIVS = 38


class Unusable(OSError):
    """The mechanism cannot run here (not root, a lock folder that is not root's, ...)."""


def applies() -> bool:
    """Whether this process could start children as other users: Linux, running as root."""
    return sys.platform.startswith("linux") and hasattr(os, "setresuid") and os.geteuid() == 0


def _capabilities() -> int:
    """This process's effective and permitted capabilities (``/proc/self/status``), or-ed."""
    found = 0
    with open("/proc/self/status", "rb") as f:  # bytes: no codec to import as the new user
        for line in f:
            if line.startswith((b"CapEff:", b"CapPrm:", b"CapAmb:")):
                found |= int(line.split()[1], 16)
    return found


def become(uid: int, tasks: int | None = None) -> None:
    """Turn this process (a freshly forked child of root, before it runs anything) into user and
    group ``uid`` with no supplementary groups, no capabilities, ``PR_SET_NO_NEW_PRIVS``, umask
    077 and, when ``tasks`` is given, ``RLIMIT_NPROC`` at ``tasks`` (processes and threads of
    that user). Raises ``OSError`` when any step fails or a capability is left."""
    if tasks is not None:
        resource.setrlimit(resource.RLIMIT_NPROC, (tasks, tasks))
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    if os.getresuid() != (uid, uid, uid) or os.getresgid() != (uid, uid, uid) \
            or os.getgroups():
        raise OSError(f"could not become user {uid}")
    if _capabilities():
        raise OSError(f"user {uid} kept capabilities")
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(ctypes.c_int(_PR_SET_NO_NEW_PRIVS), ctypes.c_ulong(1), ctypes.c_ulong(0),
                  ctypes.c_ulong(0), ctypes.c_ulong(0)) != 0:
        raise OSError(ctypes.get_errno(), "PR_SET_NO_NEW_PRIVS failed")
    os.umask(0o077)


def _lock_dir() -> str:
    """A folder only root can write, for the user ids' locks (made when missing)."""
    import stat

    for folder in LOCK_DIRS:
        try:
            os.makedirs(folder, mode=0o700, exist_ok=True)
            st = os.lstat(folder)
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode) and st.st_uid == 0 and not st.st_mode & 0o022:
            return folder
    raise Unusable(f"no folder for the child users' locks ({', '.join(LOCK_DIRS)}) is root's "
                   "alone")


def _has_account(uid: int) -> bool:
    import grp
    import pwd

    for lookup in (pwd.getpwuid, grp.getgrgid):
        try:
            lookup(uid)
            return True
        except KeyError:
            pass
    return False


@contextlib.contextmanager
def child_user():
    """A user id (also the group id) for one child, held for the block: no account has it and
    no other child on this host holds it (an ``flock`` in :func:`_lock_dir`). Raises
    :class:`Unusable` when none is free."""
    import fcntl
    import random

    folder = _lock_dir()
    pick = random.SystemRandom()
    for _ in range(200):
        uid = pick.choice(UIDS)
        if _has_account(uid):
            continue
        fd = os.open(os.path.join(folder, str(uid)), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC
                     | os.O_NOFOLLOW, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue
        try:
            yield uid
        finally:
            os.close(fd)
        return
    raise Unusable("no free user id for a child")


def prepare(uid: int, own: str, workdir: str, writable: str | None = None) -> None:
    """Before a child of user ``uid`` starts: its own folder ``own`` (and ``writable``, a
    wrapper's log folder) the child's, mode 0700; the scratch folder ``workdir`` (root's) 0711,
    so the child opens the submission by its name without listing what else is there."""
    for folder in (own, writable):
        if folder is not None:
            os.chown(folder, uid, uid)
            os.chmod(folder, 0o700)
    os.chmod(workdir, 0o711)


# ---------------------------------------------------------------------------------------------
# The grader's side: is the mechanism sound here?

#: Most instructor files :func:`probe` tries (a checkout's tests and .git hold thousands).
PROBE_FILES = 20_000

_PROBE = r"""
import json, os, sys
paths = json.load(sys.stdin)
status = open("/proc/self/status").read()
caps = [l for l in status.splitlines() if l.startswith(("CapEff:", "CapPrm:"))]
if any(int(l.split()[1], 16) for l in caps):
    print("capabilities left: " + "; ".join(caps)); sys.exit(0)
for path in paths["open"]:
    try:
        if os.path.isdir(path):
            os.listdir(path)
        else:
            open(path, "rb").close()
    except OSError:
        continue
    print("a child could read " + path); sys.exit(0)
for path in paths["need"]:
    try:
        open(path, "rb").close()
    except OSError as exc:
        print("a child could not read what it needs: %s (%s)" % (path, exc.strerror)); sys.exit(0)
print("ok")
"""


def secret_paths() -> list[str]:
    """What only the instructor reads, which the bubblewrap sandbox hides and a child of its own
    user must not be able to read: every folder of solutions, a checkout's tests, examples and
    ``.git`` (:func:`autograder.sandbox.bwrap._hidden_from_children`) and every assignment's
    known-bad submissions and textbook variants, each folder and the files in it (at most
    :data:`PROBE_FILES`)."""
    from autograder import exercises
    from autograder.sandbox import bwrap

    roots, _ = bwrap._hidden_from_children()
    for root in exercises.roots():
        for definition in sorted(root.glob(f"*/{exercises.DEFINITION}")):
            roots += [definition.parent / n for n in (exercises.MUTANTS, exercises.VARIANTS)]
    found: list[str] = []
    for root in roots:
        if not root.is_dir():
            continue
        for folder, dirs, files in os.walk(root):
            found.append(folder)
            found += [os.path.join(folder, f) for f in files]
            if len(found) >= PROBE_FILES:
                return found[:PROBE_FILES]
    return found


def probe() -> str:
    """Why children cannot run as users of their own here, or ``""`` when they can: this
    process is root, a user id and its lock can be had, and a Python started as that user
    (:func:`become`) keeps no capability, reads the harness and cannot read any of
    :func:`secret_paths`."""
    import json
    import subprocess

    if not applies():
        return "the grader is not root"
    from autograder.sandbox import bwrap

    need = [sys.executable, str(bwrap.PACKAGE_DIR / "child" / "harness.py")]
    request = json.dumps({"open": secret_paths(), "need": need})
    try:
        with child_user() as uid:
            out = subprocess.run([sys.executable, "-S", "-c", _PROBE], input=request,
                                 capture_output=True, text=True, timeout=60, cwd="/",
                                 preexec_fn=lambda: become(uid), env={"PATH": "/usr/bin:/bin"})
    except (OSError, subprocess.SubprocessError) as exc:
        return f"a child cannot run as a user of its own: {exc}"
    said = out.stdout.strip()
    if out.returncode != 0 or said != "ok":
        why = said or (out.stderr.strip().splitlines() or [f"exit code {out.returncode}"])[-1]
        return f"a child cannot run as a user of its own: {why}"
    return ""
