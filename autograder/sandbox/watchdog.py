"""The deadlines of one child, and the CPU time of its process tree that they count.

A spinning kernel or a hung import costs the test it was in, never the batch: the watchdog gives
the import ``import_timeout`` seconds, each case its budget, the timing phase
``timing_timeout`` seconds and the whole child ``total_timeout`` seconds (see
:class:`autograder.sandbox.limits.Limits`), and the run loop (:mod:`autograder.sandbox.run`)
kills the child when one runs out. For a child that runs only on the host (the simulator, the
compile check) those are seconds of *CPU time* of the child's whole process tree
(:func:`tree_cpu_seconds`, from ``/proc``), so a loaded machine slows a child down without
failing it, and only a child that makes no progress runs out; wall-time backstops catch one that
blocks without using CPU. A GPU child's deadlines are wall time: a spinning kernel burns the
GPU, not the host's CPU.

It also holds the child's whole process tree to its caps where no cgroup does
(:mod:`autograder.sandbox.caps`): every :data:`~autograder.sandbox.caps.POLL_SECONDS` it counts
the tree's processes and sums their memory (:meth:`Watchdog.capped`), and the run loop kills
the tree over a cap.
"""

from __future__ import annotations

import os
import time

from autograder.sandbox import caps as tree_caps
from autograder.sandbox.limits import Limits
from autograder.sandbox.reaper import proc_stats

_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
POLL_SECONDS = 0.25  # how often the CPU clock reads /proc (about 1 ms for 100 processes)
BUSY_CPU_SECONDS = 0.05  # CPU a child must use to count as not idle (a blocked one uses ~0)


def _process_table() -> dict[int, tuple[int, int]]:
    """Every process's (parent PID, CPU clock ticks), from ``/proc/<pid>/stat``: user and
    system time of all its threads, plus that of the children it has waited for."""
    table = {}
    for pid, fields in proc_stats():
        try:
            table[pid] = (int(fields[1]), sum(int(x) for x in fields[11:15]))
        except (IndexError, ValueError):
            continue
    return table


def tree_cpu_seconds(root: int) -> float:
    """CPU seconds (user + system) used so far by process ``root`` and every descendant: all
    threads of each, and the descendants already waited for (counted in their parent's
    ``cutime``/``cstime``). Finds descendants by walking parent PIDs in ``/proc``, so a
    process that left the session or was reparented to a subreaper (the plain mode's reaper,
    bubblewrap's init) still counts. 0.0 when ``root`` is gone; Linux only."""
    table = _process_table()
    if root not in table:
        return 0.0
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    ticks, todo, seen = 0, [root], set()
    while todo:
        pid = todo.pop()
        if pid not in seen:
            seen.add(pid)
            ticks += table[pid][1]
            todo += children.get(pid, [])
    return ticks / _CLOCK_TICKS


class Watchdog:
    """The deadlines of one child (see :class:`Limits`): the current phase's and the whole
    child's, on the CPU clock (with its idle and wall backstops) or the wall clock."""

    def __init__(self, limits: Limits, backend: str, root: int, started: float,
                 caps: tree_caps.TreeCaps | None = None, cgroup=None):
        self.limits, self.root, self.started = limits, root, started
        self.cpu_clock = limits.clock_for(backend) == "cpu"
        self.caps, self.cgroup = caps, cgroup
        self._caps_at = float("-inf")
        self.cpu = 0.0
        self.busy_at, self.busy_cpu = started, 0.0
        self.phase(limits.import_timeout, started)

    def read_cpu(self) -> float:
        """The tree's CPU seconds now (never less than before: a reaped process's time may
        reach its parent's ``cutime`` a moment later)."""
        self.cpu = max(self.cpu, tree_cpu_seconds(self.root))
        if self.cpu - self.busy_cpu >= BUSY_CPU_SECONDS:
            self.busy_at, self.busy_cpu = time.monotonic(), self.cpu
        return self.cpu

    def phase(self, budget: float | None, now: float | None = None) -> None:
        """A phase starts with ``budget`` seconds (None: only the total deadline applies)."""
        self.budget = budget
        self.phase_at = time.monotonic() if now is None else now
        self.phase_cpu = self.read_cpu() if self.cpu_clock else 0.0

    def pause(self, seconds: float) -> None:
        """Move every wall-clock deadline ``seconds`` later: the child waited for the grader
        that long (a hook that blocked, such as one waiting for the GPU lock)."""
        self.started += seconds
        self.phase_at += seconds
        self.busy_at += seconds

    def _deadlines(self) -> list[tuple[float, float, float]]:
        """(seconds, wall start, CPU at start): the phase's first, then the total's."""
        found = [(self.budget, self.phase_at, self.phase_cpu)] if self.budget is not None else []
        return found + [(self.limits.total_timeout, self.started, 0.0)]

    def expired(self, now: float) -> tuple[str, float] | None:
        """``(reason, seconds)`` of a limit that ran out (see ``ChildRun.timeout_reason``)."""
        if not self.cpu_clock:
            return next((("wall", s) for s, at, _ in self._deadlines() if now - at >= s), None)
        cpu = self.read_cpu()
        for seconds, _, cpu0 in self._deadlines():
            if cpu - cpu0 >= seconds:
                return "cpu", seconds
        if now - self.busy_at >= self.limits.idle_timeout:
            return "idle", self.limits.idle_timeout
        for seconds, at, _ in self._deadlines():
            if now - at >= self.limits.wall_factor * seconds:
                return "wall", self.limits.wall_factor * seconds
        return None

    def capped(self) -> str | None:
        """Which cap of :class:`~autograder.sandbox.caps.TreeCaps` the child's tree is over now
        (``"processes"`` or ``"memory"``), or None; at most one reading per
        :data:`~autograder.sandbox.caps.POLL_SECONDS` (else None). In a cgroup the kernel holds
        memory and tasks; the processes are counted there. Else the tree is found in ``/proc``
        (:func:`autograder.sandbox.caps.tree_pids`) and its memory summed
        (:func:`autograder.sandbox.caps.tree_memory`)."""
        now = time.monotonic()
        if self.caps is None or now - self._caps_at < tree_caps.POLL_SECONDS:
            return None
        self._caps_at = now
        if self.cgroup is not None:
            return "processes" if len(self.cgroup.pids()) > self.caps.processes else None
        table = {pid: int(fields[1]) for pid, fields in proc_stats() if len(fields) > 1}
        pids = tree_caps.tree_pids(self.root, table)
        if len(pids) > self.caps.processes:
            return "processes"
        if tree_caps.tree_memory(pids, self.caps.memory_bytes) > self.caps.memory_bytes:
            return "memory"
        return None

    def wait(self, now: float) -> float:
        """Seconds until the next check is due."""
        if self.cpu_clock:
            return POLL_SECONDS
        due = max(0.0, min(at + s for s, at, _ in self._deadlines()) - now)
        return due if self.caps is None else min(due, tree_caps.POLL_SECONDS)

