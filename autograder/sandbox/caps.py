"""Caps on a child's whole process tree: its memory and the number of its processes (issue 30).

``RLIMIT_DATA`` (:mod:`autograder.sandbox.limits`) holds each process alone: a submission's forks
held 6.2 GiB against a 4 GiB cap, and some dozens of forks could take a grading host down. So
every child's tree, the sandbox's own processes included, is held to :class:`TreeCaps`: its
memory cap (the backend's ``RLIMIT_DATA`` value, for all its processes together), a cap on its
processes (:data:`PROCESSES`) and one on its tasks, threads included (:data:`TASKS`: the
simulator runs a Python thread per CUDA thread of a block). A child over a cap is stopped, and
its grading ends in an error that names the cap (:func:`message`); no other grading notices.

How, in order of preference:

* **cgroup v2** (:class:`Cgroup`), where the grader may make cgroups with the memory and pids
  controllers (as root, or in a delegated subtree: ``systemd-run --user --scope -p
  Delegate=yes``, or a folder named in ``KERNELGRADE_CGROUP``; :func:`probe` says which, or why
  not). Each child gets a cgroup of its own, entered before the child's first instruction
  (``memory.max``, ``memory.swap.max`` 0, ``memory.oom.group`` 1, ``pids.max``): the kernel
  holds the caps, and the grader reads ``memory.events`` and ``pids.events`` afterwards to say
  which one stopped it.
* **Otherwise, the watchdog** (:mod:`autograder.sandbox.watchdog`) counts the tree's processes
  and sums their memory (:func:`tree_memory`: proportional set sizes, so pages a fork shares
  with its parent count once) every :data:`POLL_SECONDS`, and kills the tree over a cap; and in
  bubblewrap's user namespace, where the kernel counts a user's tasks per namespace,
  ``RLIMIT_NPROC`` holds the task cap at once (:mod:`autograder.sandbox.nproc`; the kernel
  exempts root, so a grader run as root has the watchdog alone, unless cgroups).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from autograder import settings

#: Processes a child's tree may hold (the sandbox's own two, the harness, a sanitizer's).
PROCESSES = 64
#: Tasks (processes and threads) a child's tree may hold, by backend: the simulator parks up to
#: 2048 block lanes (threads) and runs a block of up to 1024 more.
TASKS = {"sim": 4096, "compile": 512, "gpu": 1024}
#: How often the watchdog reads the tree's processes and memory (seconds).
POLL_SECONDS = 0.25
_PAGE = os.sysconf("SC_PAGE_SIZE")


@dataclass(frozen=True)
class TreeCaps:
    """The caps of one child's tree: ``memory_bytes`` (all its processes together),
    ``processes`` and ``tasks`` (processes and threads)."""

    memory_bytes: int
    processes: int
    tasks: int


def message(kind: str, caps: TreeCaps) -> str:
    """What a grading stopped for a cap says (``kind``: ``"memory"``, ``"processes"`` or
    ``"tasks"``)."""
    if kind == "memory":
        return (f"the grading's processes together used more than "
                f"{_size(caps.memory_bytes)} of memory (the cap for all of them: your code and "
                f"every process it started) and were stopped")
    if kind == "processes":
        return (f"your code started more than {caps.processes} processes (the cap for one "
                f"grading) and was stopped")
    return (f"your code started more than {caps.tasks} processes and threads (the cap for one "
            f"grading) and was stopped")


def _size(n: int) -> str:
    return f"{n / (1 << 30):g} GiB" if n >= 1 << 30 else f"{n / (1 << 20):g} MiB"


# ---------------------------------------------------------------------------------------------
# The watchdog's measures (no cgroup)


def tree_pids(root: int, table: dict[int, int]) -> list[int]:
    """``root`` and its descendants, from ``table`` (PID → parent PID of every process)."""
    children: dict[int, list[int]] = {}
    for pid, ppid in table.items():
        children.setdefault(ppid, []).append(pid)
    found, todo = [], [root] if root in table else []
    seen: set[int] = set()
    while todo:
        pid = todo.pop()
        if pid not in seen:
            seen.add(pid)
            found.append(pid)
            todo += children.get(pid, [])
    return found


def _rss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm", "rb") as f:
            return int(f.read().split()[1]) * _PAGE
    except (OSError, IndexError, ValueError):
        return 0


def _pss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as f:
            for line in f:
                if line.startswith(b"Pss:"):
                    return int(line.split()[1]) * 1024
    except (OSError, IndexError, ValueError):
        pass
    return _rss(pid)


def tree_memory(pids: list[int], cap: int) -> int:
    """Bytes of memory the processes ``pids`` hold: the sum of their resident sizes, or, when
    that is over ``cap``, of their proportional set sizes (a page shared by a fork and its
    parent counts once, split between them). Processes that are gone count 0."""
    rss = sum(_rss(p) for p in pids)
    if rss <= cap:
        return rss
    return sum(_pss(p) for p in pids)


# ---------------------------------------------------------------------------------------------
# cgroup v2


def _mount() -> Path | None:
    """Where the cgroup v2 hierarchy is mounted, or None."""
    try:
        with open("/proc/self/mountinfo", encoding="utf-8") as f:
            for line in f:
                left, _, right = line.partition(" - ")
                if right.split(" ", 1)[0] == "cgroup2":
                    return Path(left.split()[4])
    except OSError:
        pass
    return None


def _own() -> str | None:
    """This process's cgroup v2 path (``/user.slice/...``), or None."""
    try:
        with open("/proc/self/cgroup", encoding="utf-8") as f:
            for line in f:
                if line.startswith("0::"):
                    return line[3:].strip()
    except OSError:
        pass
    return None


def _words(path: Path) -> set[str]:
    try:
        return set(path.read_text().split())
    except OSError:
        return set()


def _writable(folder: Path) -> bool:
    return os.access(folder, os.W_OK) and os.access(folder / "cgroup.procs", os.W_OK)


def _enable(folder: Path) -> None:
    """Turn on the memory and pids controllers for ``folder``'s children. Raises OSError."""
    have = _words(folder / "cgroup.subtree_control")
    missing = [c for c in ("memory", "pids") if c not in have]
    if missing:
        (folder / "cgroup.subtree_control").write_text(" ".join(f"+{c}" for c in missing))


def _ours(parent: Path) -> Path:
    """Make (or reuse) ``parent``'s subtree for this grader's children, controllers on."""
    folder = parent / f"kernelgrade-{os.getuid()}"
    folder.mkdir(exist_ok=True)
    _enable(folder)
    return folder


def _candidates() -> list[Path]:
    """Where a subtree may be made: ``KERNELGRADE_CGROUP`` (used as it is), else the ancestors
    of this process's cgroup, nearest first, whose children have memory and pids controllers
    and that this user may write (a child is moved from this process's cgroup into one below
    them, which needs the common ancestor's ``cgroup.procs``)."""
    explicit = os.environ.get(settings.CGROUP, "").strip()
    if explicit:
        return [Path(explicit)]
    mount, own = _mount(), _own()
    if mount is None or own is None:
        return []
    here = mount / own.lstrip("/")
    found = []
    # A cgroup with processes has no controlled children (cgroup v2's rule), the root aside.
    for folder in ([here] if here == mount else []) + [*here.parents]:
        if folder != mount and mount not in folder.parents:
            break
        if ({"memory", "pids"} <= _words(folder / "cgroup.subtree_control")
                and _writable(folder)):
            found.append(folder)
    return found


_probed: tuple[Path | None, str] | None = None
_probe_lock = threading.Lock()


def probe(refresh: bool = False) -> tuple[Path | None, str]:
    """``(folder, "")``: the cgroup v2 folder each child's cgroup is made in (memory and pids
    controllers on), tried by making and removing one; or ``(None, reason)``. Once per
    process."""
    global _probed
    with _probe_lock:
        if _probed is None or refresh:
            _probed = _probe()
        return _probed


def give_up(why: str) -> None:
    """No more cgroups in this process (a child could not enter one: ``why``); the watchdog
    holds the caps."""
    global _probed
    with _probe_lock:
        _probed = (None, f"a child could not enter its cgroup: {why}")


def _probe() -> tuple[Path | None, str]:
    explicit = bool(os.environ.get(settings.CGROUP, "").strip())
    tried = _candidates()
    if not tried:
        return None, ("no cgroup v2 folder with the memory and pids controllers that this user "
                      "may write")
    why = ""
    for parent in tried:
        try:
            folder = parent if explicit else _ours(parent)
            if explicit:
                _enable(folder)
            test = Cgroup(folder, TreeCaps(64 << 20, 8, 8))
            test.close()
            return folder, ""
        except OSError as exc:
            why = f"{parent}: {exc.strerror or exc}"
    return None, f"cannot make a cgroup ({why})"


class Cgroup:
    """One child's cgroup, made under ``parent`` with ``caps``; :meth:`enter` (in the child,
    before it runs anything) moves the calling process into it. Raises OSError when it
    cannot be made."""

    _names = itertools.count()

    def __init__(self, parent: Path, caps: TreeCaps):
        self.caps = caps
        self.path = parent / f"child-{os.getpid()}-{next(self._names)}"
        self.path.mkdir()
        try:
            (self.path / "memory.max").write_text(str(int(caps.memory_bytes)))
            (self.path / "pids.max").write_text(str(int(caps.tasks)))
            for name, value in (("memory.swap.max", "0"), ("memory.oom.group", "1")):
                if (self.path / name).exists():
                    (self.path / name).write_text(value)
            self._procs = os.open(self.path / "cgroup.procs", os.O_WRONLY | os.O_CLOEXEC)
        except OSError:
            with contextlib.suppress(OSError):
                self.path.rmdir()
            raise

    def enter(self) -> None:
        """Move the calling process into this cgroup (a ``preexec_fn``: async-signal-safe
        calls only)."""
        os.write(self._procs, b"0")

    def pids(self) -> list[int]:
        """The processes in it now."""
        try:
            return [int(p) for p in (self.path / "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
            return []

    def _events(self, name: str) -> dict[str, int]:
        out = {}
        try:
            for line in (self.path / name).read_text().splitlines():
                key, _, value = line.partition(" ")
                out[key] = int(value)
        except (OSError, ValueError):
            pass
        return out

    def breach(self) -> str | None:
        """Which cap the kernel held: ``"memory"`` (a process was killed for it),
        ``"tasks"`` (a fork or thread was refused), or None."""
        memory = self._events("memory.events")
        if memory.get("oom_kill", 0) or memory.get("oom_group_kill", 0):
            return "memory"
        if self._events("pids.events").get("max", 0):
            return "tasks"
        return None

    def close(self) -> None:
        """Kill whatever is left in it and remove it (never raises)."""
        with contextlib.suppress(OSError):
            os.close(self._procs)
        kill = self.path / "cgroup.kill"
        for _ in range(50):
            left = self.pids()
            if not left:
                break
            try:
                kill.write_text("1")
            except OSError:
                for pid in left:
                    with contextlib.suppress(OSError):
                        os.kill(pid, signal.SIGKILL)
            time.sleep(0.02)
        for _ in range(50):
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.02)


def how() -> str:
    """One line: how a child's tree is held to its caps here (``python -m autograder.sandbox``
    prints it)."""
    folder, why = probe()
    if folder is not None:
        return f"process-tree caps: cgroup v2 ({folder})"
    return (f"process-tree caps: the watchdog every {POLL_SECONDS:g} s, and RLIMIT_NPROC in the "
            f"sandbox's user namespace where the grader is not root (no cgroup v2: {why})")
