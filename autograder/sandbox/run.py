"""The child process: spawn the harness in a sandbox, feed it a request, watch it with deadlines,
collect its records from the private channel, and kill everything it started when it ends.

A spinning kernel or a hung import costs the test it was in, never the batch: the watchdog gives
the import ``import_timeout`` seconds, each case ``case_timeout`` seconds, and the whole child
``total_timeout`` seconds, then kills it. For a child that runs only on the host (the simulator,
the compile check) those are seconds of *CPU time* of the child's whole process tree, so a
loaded machine slows a child down without failing it, and only a child that makes no progress
runs out; wall-time backstops catch one that blocks without using CPU (see :class:`Limits`). A
GPU child's deadlines are wall time: a spinning kernel burns the GPU, not the host's CPU.

Two ways to run the child, chosen once per grader process (:func:`sandbox_status`):

* **bubblewrap** (``bwrap``, an optional system package), when it is installed and a cheap probe
  shows it can create namespaces here. The child sees a read-only system (``/usr`` and the
  loader's files in ``/etc``), the Python installation and virtual environment, every folder the
  grader's own imports come from (PYTHONPATH entries, the user site, conda prefixes: see
  :func:`import_path`, searched by the child in the grader's order), the ``autograder``
  package (each exercise folder's solution, known-bad submissions and notebook source hidden)
  and the scratch folder with the submission,
  read-only; a private ``/tmp`` (a size-capped tmpfs, also its working folder and
  ``HOME``); no network (``--unshare-net``); its own PID namespace (``--unshare-pid``: it cannot
  see or signal the grader, and every process it starts dies with it); no capabilities; and
  ``--die-with-parent``. The project's ``tests/``, ``examples/``, ``.git``, other users' files
  and other submissions are simply not there. GPU device nodes (``/dev/nvidia*``: the child's
  own GPU's only, where :mod:`autograder.sandbox.gpu_nodes` can name it) and ``/sys`` are passed
  through only where a GPU is present.
* **plain**: a child process under :mod:`autograder.sandbox.reaper` (a subreaper that kills every
  descendant when the harness ends, and absorbs a kill aimed at the harness's parent), in its
  own session and process group. Every result graded this way carries the note
  ``"sandbox: bubblewrap unavailable (<reason>); ran in a plain child process"``.

``KERNELGRADE_SANDBOX`` chooses: ``auto`` (the default: bubblewrap where it works), ``off``
(always plain) or ``require`` (refuse to grade without bubblewrap: :class:`SandboxUnavailable`).

Limits in both modes (:class:`Limits`): time (the deadlines above); host memory with
``RLIMIT_DATA`` (heap and private writable mappings; ``RLIMIT_AS`` would break CUDA, which
reserves huge address ranges); captured output with ``RLIMIT_FSIZE`` (the grader reads only its
tail); and the bytes the grader accepts from the channel (a child that sends more is stopped).

The instructor solution is not visible in the sandbox: for GPU timing the grader sends its
source text inside the request (on standard input, read before any student code is defined), so
there is no path to find and nothing on disk to read; simulator runs, which do no timing, never
receive it.
"""

from __future__ import annotations

import glob
import os
import pickle
import queue
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from autograder.sandbox import gpu_nodes
from autograder.host import kernel_cache
from autograder.wire.channel import ChannelError, read_record
from autograder.sandbox.reaper import proc_stats
from autograder.errors import GraderSetupError
from autograder.host.blas import ONE_THREAD_ENV
from autograder import settings

OUTPUT_LIMIT_BYTES = 64 << 20
PROJECT_ROOT = Path(__file__).resolve().parents[2]
PACKAGE_DIR = Path(__file__).resolve().parents[1]
REAPER = Path(__file__).resolve().with_name("reaper.py")
TMPFS_BYTES = 256 << 20
# Measured: a simulator child grading tiled_matmul peaks near 0.6 GiB of data segment (numba,
# numpy, the simulator's threads); the compile child near 0.5 GiB. 4 GiB leaves room for real
# kernels at the simulator's sizes and stops a runaway allocation long before the host suffers.
SIM_MEMORY_BYTES = 4 << 30
# On a GPU the CUDA driver maps device memory shared and reserves address space without
# writing it, which RLIMIT_DATA does not count; host data stays small (inputs, outputs).
GPU_MEMORY_BYTES = 32 << 30
CHANNEL_BYTES = 256 << 20  # all of a GPU run's outputs (guarded) fit in a tenth of it
# The smallest CPU budget of a case scaled by its size (Limits.case_cpu_per_element): the
# harness's own work around a launch (guard bands, copies) and the simulator's start-up.
CASE_CPU_FLOOR = 10.0
_HAS_PROC = os.path.exists("/proc/self/stat")
PLAIN_NOTE = "sandbox: bubblewrap unavailable ({reason}); ran in a plain child process"


class SandboxUnavailable(GraderSetupError):
    """``KERNELGRADE_SANDBOX=require`` and bubblewrap cannot run here (a fault of the grader's
    setup: exit status 2 from every front end)."""


@dataclass
class Limits:
    """Deadlines in seconds and resource caps for one child process.

    Deadlines: ``import_timeout`` (from the spawn to the submission imported and checked
    against the contract), ``case_timeout`` (each case, and the instrumented run),
    ``timing_timeout`` (the timing phase: JIT, self-check and sampling) and ``total_timeout``
    (the whole child). ``clock`` says what they count:

    * ``"cpu"``: seconds of CPU time (user + system) used by the child's whole process tree,
      every thread of every process (the simulator runs one Python thread per CUDA thread).
      A loaded machine makes a child take longer but not use more CPU, so a correct kernel
      never runs out on a busy grader, and the budget needs no slack for load. Two wall-time
      backstops catch a child that does not use its CPU: ``idle_timeout`` seconds with no CPU
      used at all (blocked: a sleep, a lock, a deadlock), and ``wall_factor`` times a deadline
      in wall time (a child that trickles CPU without finishing, or a machine overloaded
      beyond reason). With ``case_cpu_per_element`` > 0, a case's budget is
      ``min(case_timeout, CASE_CPU_FLOOR + case_cpu_per_element × its input elements)``, so a
      kernel that spins on a small case is stopped sooner than one on the largest. (Not a
      retry with a longer wall limit: that would cost every spinning kernel twice its time
      and still blame the student whenever the load outlasts the retry.)
    * ``"wall"``: seconds of wall time.
    * ``"auto"`` (the default): ``"cpu"`` for children that run only on the host (backends
      ``sim`` and ``compile``), ``"wall"`` for GPU children (a spinning kernel burns the GPU,
      not necessarily host CPU; the GPU is not shared by CPU load; and a GPU child waits,
      idle, for its turn on the GPU).

    ``memory_bytes``: ``RLIMIT_DATA`` of the child (None: the backend's default,
    :data:`SIM_MEMORY_BYTES` or :data:`GPU_MEMORY_BYTES`). ``output_bytes``: the most the child
    may write to standard output and error (``RLIMIT_FSIZE``). ``channel_bytes``: the most the
    grader reads from the child's channel before it stops the child.
    """

    import_timeout: float = 30.0
    case_timeout: float = 30.0
    total_timeout: float = 120.0
    timing_timeout: float = 45.0  # the timing phase: JIT, self-check and sampling
    clock: str = "auto"
    idle_timeout: float = 60.0
    wall_factor: float = 10.0
    case_cpu_per_element: float = 0.0
    memory_bytes: int | None = None
    output_bytes: int = OUTPUT_LIMIT_BYTES
    channel_bytes: int = CHANNEL_BYTES

    def case_budget(self, case: dict, clock: str) -> float:
        """Seconds for ``case`` (a request's case: ``inputs`` holds its arrays) on ``clock``."""
        if clock != "cpu" or self.case_cpu_per_element <= 0:
            return self.case_timeout
        elements = sum(int(getattr(a, "size", 1)) for a in (case.get("inputs") or {}).values())
        return round(min(self.case_timeout,
                         CASE_CPU_FLOOR + self.case_cpu_per_element * elements), 1)

    def clock_for(self, backend: str) -> str:
        """``"cpu"`` or ``"wall"``: what the deadlines count for a child of ``backend``
        (``sim``, ``compile`` or ``gpu``). Raises ``ValueError`` for a bad ``clock``."""
        if self.clock not in ("auto", "cpu", "wall"):
            raise ValueError(f"Limits.clock must be auto, cpu or wall, not {self.clock!r}")
        if self.clock == "auto":  # without /proc (not Linux) there is no CPU clock
            return "wall" if backend == "gpu" or not _HAS_PROC else "cpu"
        return self.clock


@dataclass
class ChildRun:
    """What a child process sent and how it ended.

    ``ended``: ``"finished"`` (sent ``done``), ``"timeout"`` (killed by the watchdog while in
    ``last_started``, a case id, ``"timing"``, or ``None`` for the import), or ``"exited"``
    (ended without ``done``: crashed, exited early or was killed). ``output`` is the tail of
    what the student's code printed. ``sandbox`` is ``"bubblewrap"`` or ``"plain"``;
    ``notes`` holds what the result should tell about how the child ran (the plain-mode note,
    a child stopped for flooding the channel).

    For a timeout, ``timeout_reason`` says which limit ran out and ``timeout_after`` its size
    in seconds: ``"cpu"`` (the phase used that much CPU time without finishing: an endless
    loop), ``"idle"`` (the child used no CPU for that many seconds of wall time: blocked),
    ``"wall"`` (that many seconds of wall time: a GPU child's deadline, or the CPU clock's
    backstop). ``cpu_seconds``: CPU time the child's process tree used, when measured (CPU
    clock), else None; each record's header then carries ``_cpu``, the tree's CPU seconds when
    it arrived (as ``_arrived`` carries wall seconds since the spawn).
    """

    records: list[tuple[dict, dict]] = field(default_factory=list)
    ended: str = "finished"
    exit_code: int | None = None
    last_started: object = None
    output: str = ""
    seconds: float = 0.0
    sandbox: str = "plain"
    notes: list[str] = field(default_factory=list)
    timeout_reason: str = ""
    timeout_after: float = 0.0
    cpu_seconds: float | None = None

    def timeout_text(self, hint: str) -> str:
        """What ran out, for a timeout's message: ``"(13 s of CPU time): " + hint`` (``hint``:
        what the student should look for, such as an endless loop), ``"(15 s): " + hint`` on
        the wall clock, or, for the CPU clock's backstops, a child that was waiting."""
        after = f"{self.timeout_after:.3g}"
        if self.timeout_reason == "cpu":
            return f"({after} s of CPU time): {hint}"
        if self.timeout_reason == "idle":
            return (f"(it made no progress for {after} s, using no CPU time): is it waiting for "
                    "something that never happens, such as a lock or a sleep?")
        if self.timeout_reason == "wall" and self.cpu_seconds is not None:
            return (f"({after} s, using only {self.cpu_seconds:.1f} s of CPU time): is it "
                    "waiting for something, such as a lock or a sleep?")
        return f"({after} s): {hint}"

    def of_type(self, kind: str) -> list[tuple[dict, dict]]:
        return [r for r in self.records if r[0].get("type") == kind]

    def first(self, kind: str) -> dict | None:
        found = self.of_type(kind)
        return found[0][0] if found else None


# ---------------------------------------------------------------------------------------------
# Choosing the mode


@dataclass(frozen=True)
class SandboxStatus:
    """``available``: bubblewrap runs here; ``reason``: why not (for the plain-mode note)."""

    available: bool
    reason: str = ""


_status: SandboxStatus | None = None
_status_lock = threading.Lock()


def _mode() -> str:
    mode = os.environ.get(settings.SANDBOX, "auto").strip().lower() or "auto"
    if mode not in ("auto", "off", "require"):
        raise ValueError(f"KERNELGRADE_SANDBOX must be auto, off or require, not {mode!r}")
    return mode


def _probe() -> SandboxStatus:
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return SandboxStatus(False, "bwrap is not installed")
    with tempfile.TemporaryDirectory(prefix="kernelgrade-probe-") as tmp:
        cmd = _bwrap_command(Path(tmp), gpu=False) + ["/usr/bin/env", "true"]
        try:
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=20,
                                 stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return SandboxStatus(False, f"bwrap did not start: {exc}")
    if out.returncode != 0:
        msg = (out.stderr.strip().splitlines() or [f"exit code {out.returncode}"])[-1]
        return SandboxStatus(False, f"bwrap cannot create its namespaces here: {msg}")
    return SandboxStatus(True)


def sandbox_status(refresh: bool = False) -> SandboxStatus:
    """Whether bubblewrap can run here, probed once per process (a sandboxed ``true``)."""
    global _status
    if _mode() == "off":
        return SandboxStatus(False, "KERNELGRADE_SANDBOX=off")
    with _status_lock:
        if _status is None or refresh:
            _status = _probe()
        return _status


# ---------------------------------------------------------------------------------------------
# The bubblewrap command line

_SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_ETC_FILES = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "ld.so.preload", "alternatives",
              "localtime", "passwd", "group", "nsswitch.conf", "hosts", "host.conf")


def _covered(path: Path, bound: list[Path]) -> bool:
    return any(path == b or b in path.parents for b in bound)


def _hidden_from_children() -> tuple[list[Path], list[Path]]:
    """(folders no bind may contain, lie in or be: the checkout's tests, examples and .git;
    folders no bind may contain or be: the temporary folder, where other
    submissions' scratch folders are)."""
    from autograder import exercises

    inside = exercises.every_solution_folder()
    if (PROJECT_ROOT / "pyproject.toml").is_file():  # a source checkout, not site-packages
        inside += [PROJECT_ROOT / n for n in ("tests", "examples", ".git")
                   if (PROJECT_ROOT / n).exists()]
    return [p.resolve() for p in inside], [Path(tempfile.gettempdir()).resolve()]


def _instructor_files_hidden(bound: list[Path]) -> list[str]:
    """bwrap arguments that hide what only the instructor sees, wherever a bound folder shows
    it: in every folder of assignments, each assignment's known-bad submissions and textbook
    variants (empty folders) and notebook source (an empty file); every folder of solutions
    (:func:`autograder.exercises.every_solution_folder`) inside a ``bound`` one as an empty
    folder (no bind is made of one or of a folder that holds one: :func:`_shows_hidden`)."""
    from autograder import exercises

    args: list[str] = []
    for root in exercises.roots():
        for definition in sorted(root.glob(f"*/{exercises.DEFINITION}")):
            folder = definition.parent
            if (folder / exercises.NOTEBOOK).is_file():
                args += ["--ro-bind", "/dev/null", str(folder / exercises.NOTEBOOK)]
            for hidden in (exercises.MUTANTS, exercises.VARIANTS):
                if (folder / hidden).is_dir():
                    args += ["--tmpfs", str(folder / hidden)]
    for folder in exercises.every_solution_folder():  # inside a bound venv or course: emptied
        if _covered(folder, bound):
            args += ["--tmpfs", str(folder)]
    return args


def assignment_dirs() -> list[Path]:
    """The folders of assignments a child reads (an exercise's driver), bound read-only."""
    from autograder import exercises

    return [r.resolve() for r in exercises.roots()]


def _shows_hidden(path: Path) -> bool:
    """True when binding ``path`` (resolved) would show a child what it must not see."""
    inside, around = _hidden_from_children()
    return (any(path == h or path in h.parents or h in path.parents for h in inside)
            or any(path == h or path in h.parents for h in around))


def import_path() -> list[str]:
    """The grader's own ``sys.path`` entries a child searches too, in the grader's order (the
    installation, the venv, the user site, PYTHONPATH entries, conda prefixes, ``.pth``
    additions): absolute, existing, not ``sys.path[0]`` (the script's or working folder, unless
    ``-P``), not the working folder, and none that would show the project's solutions or tests or
    other submissions (:func:`_shows_hidden`; a package only found there is reported by the
    child's package check instead)."""
    entries = sys.path if sys.flags.safe_path else sys.path[1:]
    cwd = Path.cwd().resolve() if os.path.isdir(os.curdir) else None
    out: list[str] = []
    for e in entries:
        if not e or not os.path.isabs(e) or e in out or not os.path.exists(e):
            continue
        real = Path(e).resolve()
        if real == cwd or _shows_hidden(real):
            continue
        out.append(e)
    return out


def _imported_from() -> list[Path]:
    """Folders of the packages a child needs (numpy, numba, numba-cuda, llvmlite), wherever the
    grader finds them: an editable install's finder may map them outside ``sys.path``."""
    from autograder.host.environment import package_facts

    found = [Path(f["path"]) for f in package_facts().values() if f]
    return [p for p in found if p.is_dir() and not _shows_hidden(p)]


def _python_dirs() -> list[Path]:
    """Folders the interpreter and its packages live in (installation, venv, real executable),
    and every folder the grader's own imports come from (:func:`import_path`,
    :func:`_imported_from`)."""
    dirs = []
    for p in (sys.base_prefix, sys.base_exec_prefix, sys.prefix, sys.exec_prefix,
              os.path.dirname(os.path.realpath(sys.executable)),
              os.path.dirname(os.path.abspath(sys.executable))):
        path = Path(p).resolve()
        if path.is_dir():
            dirs.append(path)
    import site

    for p in site.getsitepackages():
        path = Path(p).resolve()
        if path.is_dir():
            dirs.append(path)
    dirs += [Path(p).resolve() for p in import_path()] + _imported_from()
    # Widest first, so nested ones are skipped.
    out: list[Path] = []
    for d in sorted(set(dirs), key=lambda d: len(d.parts)):
        if not _covered(d, out):
            out.append(d)
    return out


def _library_dirs() -> list[Path]:
    """Where the CUDA toolkit and driver libraries may live outside ``/usr``: ``CUDA_HOME`` and
    friends, ``LD_LIBRARY_PATH``, and the folders ``/etc/ld.so.conf.d`` lists."""
    found = [os.environ.get(v) for v in ("CUDA_HOME", "CUDA_PATH", "CUDA_ROOT")]
    found += os.environ.get("LD_LIBRARY_PATH", "").split(os.pathsep)
    for conf in sorted(glob.glob("/etc/ld.so.conf.d/*.conf")):
        try:
            found += [ln.strip() for ln in Path(conf).read_text().splitlines()]
        except OSError:
            pass
    dirs = []
    for v in found:
        if v and v.startswith("/") and Path(v).is_dir():
            path = Path(v).resolve()
            if path.parts[1:2] not in (("proc",), ("sys",), ("dev",)):
                dirs.append(path)
    return dirs


def _bwrap_command(workdir: Path, gpu: bool, extra_ro: tuple[Path, ...] = (),
                   writable: Path | None = None) -> list[str]:
    """The ``bwrap`` arguments for one child (up to, not including, the command).
    ``extra_ro``: more folders to show read-only (a wrapper tool's installation);
    ``writable``: a folder shown read-write at its own path (a wrapper's log folder)."""
    cmd = ["bwrap", "--die-with-parent", "--new-session",
           "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
           "--unshare-cgroup-try", "--cap-drop", "ALL",
           "--hostname", "kernelgrade"]
    bound: list[Path] = []
    for d in _SYSTEM_DIRS:
        p = Path(d)
        if p.is_symlink():
            cmd += ["--symlink", os.readlink(p), d]
        elif p.is_dir():
            cmd += ["--ro-bind", d, d]
            bound.append(p)
    for name in _ETC_FILES:
        cmd += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    # The private /tmp first: bwrap mounts in order, so a Python, a venv or a checkout that
    # lives under /tmp (a CI clone, say) is bound over it below, not hidden by it.
    cmd += ["--proc", "/proc", "--dev", "/dev",
            "--size", str(TMPFS_BYTES), "--tmpfs", "/tmp",
            "--size", str(16 << 20), "--tmpfs", "/dev/shm"]
    for d in _python_dirs() + _library_dirs() + [Path(p).resolve() for p in extra_ro]:
        if not _covered(d, bound):
            cmd += ["--ro-bind", str(d), str(d)]
            bound.append(d)
    for entry in import_path():  # reached through a symlink the child would not have
        alias = Path(os.path.abspath(entry))
        if alias != Path(entry).resolve() and not _covered(alias, bound):
            cmd += ["--symlink", str(Path(entry).resolve()), str(alias)]
            bound.append(alias)
    if not _covered(PACKAGE_DIR, bound):
        cmd += ["--ro-bind", str(PACKAGE_DIR), str(PACKAGE_DIR)]
        bound.append(PACKAGE_DIR)
    for d in assignment_dirs():
        if not _covered(d, bound) and not _shows_hidden(d):
            cmd += ["--ro-bind", str(d), str(d)]
            bound.append(d)
    cmd += _instructor_files_hidden(bound)
    cmd += ["--ro-bind", str(workdir), str(workdir)]
    if writable is not None:
        cmd += ["--bind", str(writable), str(writable)]
    cmd += ["--chdir", "/tmp", "--setenv", "HOME", "/tmp", "--setenv", "TMPDIR", "/tmp"]
    if gpu:
        for node in gpu_nodes.device_nodes(gpu_nodes.child_gpu()):
            cmd += ["--dev-bind", node, node]
        cmd += ["--ro-bind", "/sys", "/sys"]
        for d in ("/proc/driver/nvidia",):
            if Path(d).exists():
                cmd += ["--ro-bind-try", d, d]
    return cmd


# ---------------------------------------------------------------------------------------------
# CPU time of a process tree, and the watchdog's deadlines

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


class _Watchdog:
    """The deadlines of one child (see :class:`Limits`): the current phase's and the whole
    child's, on the CPU clock (with its idle and wall backstops) or the wall clock."""

    def __init__(self, limits: Limits, backend: str, root: int, started: float):
        self.limits, self.root, self.started = limits, root, started
        self.cpu_clock = limits.clock_for(backend) == "cpu"
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

    def wait(self, now: float) -> float:
        """Seconds until the next check is due."""
        if self.cpu_clock:
            return POLL_SECONDS
        return max(0.0, min(at + s for s, at, _ in self._deadlines()) - now)


# ---------------------------------------------------------------------------------------------
# Running one child


def child_env(backend: str) -> dict:
    """The child's environment: the grader's, less its own settings, with the grader's import
    path (:func:`import_path`, so PYTHONPATH entries, the user site and ``.pth`` additions are
    searched in the grader's order whatever the child's ``HOME``), the grader's user site or
    none, and the grader's package facts for the harness's check
    (:data:`autograder.host.environment.PACKAGES_ENV`)."""
    import json
    import site

    from autograder.host.environment import PACKAGES_ENV, package_facts

    env = {k: v for k, v in os.environ.items()
           if not k.startswith((settings.PREFIX, "NUMBA_ENABLE_CUDASIM", "DASK_"))}
    env["PYTHONPATH"] = os.pathsep.join([str(PROJECT_ROOT), *import_path()])
    if site.ENABLE_USER_SITE:  # the same user site (and its .pth files), whatever HOME is
        env["PYTHONUSERBASE"] = site.getuserbase()
    else:
        env["PYTHONNOUSERSITE"] = "1"
    env[PACKAGES_ENV] = json.dumps(package_facts())
    env.update(ONE_THREAD_ENV)  # see autograder.host.blas: ~2 s of CPU per child otherwise
    env["PYTHONUNBUFFERED"] = "1"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.pop("PYTHONSTARTUP", None)
    env.pop("PYTHONINSPECT", None)
    if backend == "sim":
        env["NUMBA_ENABLE_CUDASIM"] = "1"
    if backend == "gpu":
        for key, value in GPU_CHILD_ENV.items():
            env.setdefault(key, value)  # the host's own setting, when it has one, wins
        own = gpu_nodes.child_gpu()
        if own is not None:  # the same GPU, named so that it is device 0 with only its node
            env["CUDA_VISIBLE_DEVICES"] = own.uuid
    return env


#: Set in every GPU child's environment (unless the grader's has it). A child uses one stream,
#: so one hardware work queue per CUDA context is all it needs, and fewer queues make creating
#: a context cheaper: on an H200 host, 48 processes that each create a context, compile and
#: launch one kernel took 15.3 s at the default (8) and 8.6 s with 1 (2026-11-23). Creating
#: contexts is what a class on one host waits for (each grading creates one; four with
#: compute-sanitizer).
GPU_CHILD_ENV = {"CUDA_DEVICE_MAX_CONNECTIONS": "1"}


def memory_limit(backend: str, limits: Limits) -> int:
    """The child's ``RLIMIT_DATA`` in bytes."""
    if limits.memory_bytes is not None:
        return int(limits.memory_bytes)
    return GPU_MEMORY_BYTES if backend == "gpu" else SIM_MEMORY_BYTES


def _limiter(output_bytes: int, memory_bytes: int):
    def limit() -> None:  # runs in the forked child before exec: async-signal-safe calls only
        resource.setrlimit(resource.RLIMIT_FSIZE, (output_bytes, output_bytes))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_DATA, (memory_bytes, memory_bytes))
    return limit


class _Budget:
    """A binary stream that refuses to read past ``limit`` bytes in all (raises ChannelError
    before the read, so a huge declared length never allocates)."""

    def __init__(self, stream, limit: int):
        self.stream, self.left, self.exceeded = stream, limit, False

    def read(self, n: int) -> bytes:
        if n > self.left:
            self.exceeded = True
            raise ChannelError("the child sent more than the grader reads")
        data = self.stream.read(n)
        self.left -= len(data)
        return data


def _reader(stream, out: queue.Queue) -> None:
    try:
        while True:
            out.put(read_record(stream))
    except (EOFError, ChannelError, OSError, MemoryError):
        pass
    finally:
        out.put(None)


def _tail(path: Path, limit: int = 4000) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - limit))
            return f.read().decode("utf-8", "replace")
    except OSError:
        return ""


def _shown_kernel_cache(request: dict, backend: str, use_bwrap: bool) -> Path | None:
    """The host's compiled kernels for the timing of ``request``'s exercise
    (:mod:`autograder.host.kernel_cache`), which a timed GPU child reads, shown read-only inside
    bubblewrap; None for a plain child (it could write where the grader reads), a child that
    does not time, and when the warm-up has not made that folder yet."""
    text = (request.get("timing") or {}).get("solution_source")
    if backend != "gpu" or not use_bwrap or not text:
        return None
    folder = kernel_cache.host_folder(text)
    return folder.resolve() if folder is not None and folder.is_dir() else None


def _command(backend: str, wfd: int, workdir: Path, use_bwrap: bool,
             wrapper: tuple[str, ...] = (), writable: Path | None = None,
             read_only: tuple[Path, ...] = ()) -> list[str]:
    harness = [*wrapper, sys.executable, "-P", "-m", "autograder.child.harness", str(wfd)]
    if use_bwrap:
        extra = ((Path(wrapper[0]).resolve().parent,) if wrapper else ()) + tuple(read_only)
        return _bwrap_command(workdir, gpu=backend == "gpu" and bool(gpu_nodes.device_nodes()),
                              extra_ro=extra, writable=writable) + ["--", *harness]
    return [sys.executable, "-S", str(REAPER), str(os.getpid()), *harness]


def run_child(request: dict, backend: str, limits: Limits, workdir: Path,
              wrapper: tuple[str, ...] = (), writable: Path | None = None,
              on_record=None, cancel: threading.Event | None = None,
              records: list | None = None) -> ChildRun:
    """Run the harness on ``request`` (see :mod:`autograder.child.harness`) with ``workdir`` (the
    submission's scratch folder, read-only to the child) visible. Never raises for anything
    the child does; raises :class:`SandboxUnavailable` only under ``KERNELGRADE_SANDBOX=require``.

    ``wrapper``: a command the harness runs under, inside the sandbox (``compute-sanitizer
    --tool racecheck --log-file F``); its installation folder is shown read-only. ``writable``:
    a folder the child may write (where that log goes; give a fresh one, outside ``workdir``).
    Only use a wrapper's output from GPU runs, where no student Python runs in the child.

    ``on_record(header, send)``: called for each record; ``send(bytes)`` writes to the child's
    standard input (kept open for it); returning True stops the child. While it blocks, the
    child's deadlines wait too (:meth:`_Watchdog.pause`). ``records``: a list that becomes the
    run's ``records``, filled as they arrive (a hook may read the records so far). ``cancel``:
    when set, the child is stopped (``ended == "cancelled"``).
    """
    status = sandbox_status()
    broken = _broken.get(backend)
    if status.available and broken:
        status = SandboxStatus(False, broken)
    if not status.available and _mode() == "require":
        raise SandboxUnavailable(f"bubblewrap cannot run: {status.reason}")
    hooks = (on_record, cancel, records)
    run = _run_once(request, backend, limits, workdir, status.available, wrapper, writable, hooks)
    if status.available and _infrastructure_failed(run):
        # The probe passed, yet the sandboxed child died before its first record (which it
        # sends before any student code exists): a mount or device it lacks. Grade without
        # bubblewrap from now on for this backend, and say so.
        # Under ``require`` there is no plain rerun: bubblewrap's own failure ("bwrap: ...") is
        # SandboxUnavailable; a Python that died inside it (an import that fails) is returned
        # for the caller to report as the grader's environment (environment.setup_problem).
        # Either way the grader's setup, never a student's zero.
        last = (run.output.strip().splitlines() or [f"exit code {run.exit_code}"])[-1][:200]
        if _mode() == "require":
            if "bwrap:" in run.output:
                raise SandboxUnavailable(f"bubblewrap cannot run: the sandboxed {backend} child "
                                         f"failed to start: {last}")
            return run
        _broken[backend] = f"the sandboxed {backend} child failed to start: {last}"
        run = _run_once(request, backend, limits, workdir, False, wrapper, writable, hooks)
        run.notes.insert(0, PLAIN_NOTE.format(reason=_broken[backend]))
    elif not status.available:
        run.notes.insert(0, PLAIN_NOTE.format(reason=status.reason))
    return run


_broken: dict[str, str] = {}


def _infrastructure_failed(run: ChildRun) -> bool:
    """No record at all: the child died before ``hello`` (sent before any student code)."""
    return not run.records and run.ended == "exited"


def _run_once(request: dict, backend: str, limits: Limits, workdir: Path,
              use_bwrap: bool, wrapper: tuple[str, ...] = (),
              writable: Path | None = None, hooks=(None, None, None)) -> ChildRun:
    on_record, cancel, records_list = hooks
    rfd, wfd = os.pipe()
    out_path = workdir / f"output-{backend}-{os.getpid()}-{threading.get_ident()}.txt"
    plain_cwd = None
    if not use_bwrap:
        plain_cwd = tempfile.mkdtemp(prefix=f"cwd-{backend}-", dir=workdir)
    env = child_env(backend)
    if plain_cwd:
        env["HOME"] = env["TMPDIR"] = plain_cwd
    kernels = _shown_kernel_cache(request, backend, use_bwrap)
    if kernels is not None:
        env[kernel_cache.CACHE_ENV] = str(kernels)
    started = time.monotonic()
    with open(out_path, "wb") as out_file:
        proc = subprocess.Popen(
            _command(backend, wfd, workdir, use_bwrap, tuple(wrapper), writable,
                     () if kernels is None else (kernels,)),
            stdin=subprocess.PIPE, stdout=out_file, stderr=subprocess.STDOUT,
            pass_fds=(wfd,), cwd=plain_cwd or workdir, env=env,
            start_new_session=True,
            preexec_fn=_limiter(limits.output_bytes, memory_limit(backend, limits)),
        )
    os.close(wfd)
    records: queue.Queue = queue.Queue()
    stream = _Budget(os.fdopen(rfd, "rb"), limits.channel_bytes)
    reader = threading.Thread(target=_reader, args=(stream, records), daemon=True)
    reader.start()
    feeder = threading.Thread(target=_feed, args=(proc, request, on_record is not None),
                              daemon=True)
    feeder.start()
    run = ChildRun(sandbox="bubblewrap" if use_bwrap else "plain")
    if records_list is not None:
        records_list.clear()  # a second try (without bubblewrap) starts afresh
        run.records = records_list
    watch = _Watchdog(limits, backend, proc.pid, started)
    clock = "cpu" if watch.cpu_clock else "wall"
    budgets = {c.get("id"): limits.case_budget(c, clock) for c in request.get("cases") or ()}
    while True:
        now = time.monotonic()
        expired = watch.expired(now)
        if expired is not None:
            run.ended = "timeout"
            run.timeout_reason, run.timeout_after = expired
            break
        if cancel is not None and cancel.is_set():
            run.ended = "cancelled"
            break
        wait = watch.wait(now)
        try:
            item = records.get(timeout=min(wait, 0.2) if cancel is not None else wait)
        except queue.Empty:
            continue
        if item is None:
            run.ended = "exited"
            break
        header = item[0]
        header["_arrived"] = round(time.monotonic() - started, 4)  # seconds since the spawn
        if watch.cpu_clock:
            header["_cpu"] = round(watch.read_cpu(), 3)
        run.records.append(item)
        kind = header.get("type")
        if on_record is not None:
            hooked = time.monotonic()
            stop = on_record(header, lambda data: _send(proc, data))
            # A hook may block (waiting for the GPU lock): that time is not the child's.
            watch.pause(time.monotonic() - hooked)
            if stop:
                run.ended = "cancelled"
                break
        if kind == "done":  # nothing more to read: threads the child left running don't count
            run.ended = "finished"
            break
        if kind == "start":
            run.last_started = header.get("id")
            watch.phase(limits.timing_timeout if header.get("id") == "timing"
                        else _budget(budgets, header.get("id"), limits.case_timeout))
        elif kind in ("imported", "error") and header.get("phase") in (None, "import", "contract"):
            watch.phase(None)
    if watch.cpu_clock:
        run.cpu_seconds = round(watch.read_cpu(), 3)
    _stop(proc, use_bwrap)
    run.exit_code = proc.returncode
    reader.join(timeout=5)
    if not reader.is_alive():  # else a process that escaped holds the pipe: leave it to the thread
        stream.stream.close()
    if stream.exceeded:
        run.notes.append(f"the grading process sent more than {limits.channel_bytes} bytes of "
                         "results and was stopped")
    run.output = _tail(out_path)
    run.seconds = time.monotonic() - started
    return run


def _budget(budgets: dict, case_id, default: float) -> float:
    """A case's budget by the id the child sent (anything at all: the child may be hostile)."""
    try:
        return budgets.get(case_id, default)
    except TypeError:  # an unhashable id
        return default


def _feed(proc: subprocess.Popen, request: dict, keep_open: bool = False) -> None:
    """Write the request on the child's standard input (in a thread: a child that never reads
    must not block the watchdog); close it unless the grader will send more."""
    try:
        proc.stdin.write(pickle.dumps(request, protocol=pickle.HIGHEST_PROTOCOL))
        proc.stdin.flush()
        if not keep_open:
            proc.stdin.close()
    except (BrokenPipeError, OSError, ValueError):
        pass


def _send(proc: subprocess.Popen, data: bytes) -> None:
    try:
        proc.stdin.write(data)
        proc.stdin.flush()
    except (BrokenPipeError, OSError, ValueError):
        pass


def _stop(proc: subprocess.Popen, use_bwrap: bool) -> None:
    """End the child and everything it started.

    bubblewrap: SIGKILL to its process group; the PID namespace dies with its first process.
    plain: SIGTERM to the reaper, which SIGKILLs every descendant (those that left the
    session included) and exits; then SIGKILL to the group as a backstop.
    """
    if not use_bwrap and proc.poll() is None:
        try:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=10)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            pass
    _kill_group(proc)
    proc.wait()


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def scratch_dir() -> tempfile.TemporaryDirectory:
    """A private scratch folder for one submission's child processes."""
    return tempfile.TemporaryDirectory(prefix="kernelgrade-")


def main() -> int:
    """``python -m autograder.sandbox.run``: say how children will run here (exit status 0 either
    way; 1 under ``KERNELGRADE_SANDBOX=require`` when bubblewrap cannot run)."""
    status = sandbox_status()
    if status.available:
        print("sandbox: bubblewrap (read-only system, private /tmp, no network, own PID namespace)")
        return 0
    print(PLAIN_NOTE.format(reason=status.reason))
    return 1 if _mode() == "require" else 0


if __name__ == "__main__":
    sys.exit(main())
