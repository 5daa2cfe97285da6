"""Running one child process: spawn the harness (:mod:`autograder.child.harness`) in the mode
:mod:`autograder.sandbox.mode` chose, feed it a request, collect its records from the private
channel while :class:`autograder.sandbox.watchdog.Watchdog` keeps its deadlines, and kill
everything it started when it ends (:func:`run_child`, which returns a :class:`ChildRun`).

Under bubblewrap the command is ``bwrap`` with :func:`autograder.sandbox.bwrap.arguments`; in
plain mode the harness runs under :mod:`autograder.sandbox.reaper` (a subreaper that kills every
descendant when the harness ends), in its own session and process group, and may write only its
own scratch folder and ``/dev`` where the kernel has Landlock (:mod:`autograder.sandbox.landlock`).
A root grader without bubblewrap runs the harness so as a user of its own, without capabilities
(:mod:`autograder.sandbox.dropuser`; the reaper stays root).
Either way the child gets :func:`autograder.sandbox.limits.child_env`, the resource limits of
:mod:`autograder.sandbox.limits`, and its whole process tree is held to its memory, process and
task caps (:mod:`autograder.sandbox.caps`: its own cgroup, else the watchdog and, in bubblewrap's
user namespace, ``RLIMIT_NPROC``); a child over a cap ends ``"capped"``.

A timed GPU child gets the host's compiled timing kernels in its request (:func:`kernel_entries`:
cubin entries the grader verified, :mod:`autograder.host.kernel_cache`); no child is shown the
cache's folder.
"""

from __future__ import annotations

import logging
import os
import pickle
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path

from autograder.host import kernel_cache
from autograder.sandbox import bwrap, caps, dropuser, gpu_nodes, landlock, mode
from autograder.sandbox.limits import Limits, child_env, limiter, memory_limit, tree_caps
from autograder.sandbox.watchdog import Watchdog
from autograder.wire.channel import ChannelError, read_record

REAPER = Path(__file__).resolve().with_name("reaper.py")
NPROC = Path(__file__).resolve().with_name("nproc.py")
log = logging.getLogger(__name__)


@dataclass
class ChildRun:
    """What a child process sent and how it ended.

    ``ended``: ``"finished"`` (sent ``done``), ``"timeout"`` (killed by the watchdog while in
    ``last_started``, a case id, ``"timing"``, or ``None`` for the import), or ``"exited"``
    (ended without ``done``: crashed, exited early or was killed). ``output`` is the tail of
    what the student's code printed (whole lines), ``output_lines`` how many lines it printed
    in all. ``sandbox`` is ``"bubblewrap"``, ``"user"`` (a user of its own:
    :mod:`autograder.sandbox.dropuser`) or ``"plain"``;
    ``notes`` holds what the result should tell about how the child ran (the plain-mode note,
    a child stopped for flooding the channel).

    For a timeout, ``timeout_reason`` says which limit ran out and ``timeout_after`` its size
    in seconds: ``"cpu"`` (the phase used that much CPU time without finishing: an endless
    loop), ``"idle"`` (the child used no CPU for that many seconds of wall time: blocked),
    ``"wall"`` (that many seconds of wall time: a GPU child's deadline, or the CPU clock's
    backstop). ``ended == "capped"``: the child's process tree went over one of its caps
    (:mod:`autograder.sandbox.caps`) and was stopped; ``capped`` says which, in words for the
    student (:func:`autograder.sandbox.caps.message`). ``cpu_seconds``: CPU time the child's
    process tree used, when measured (CPU clock), else None; each record's header then carries
    ``_cpu``, the tree's CPU seconds when it arrived (as ``_arrived`` carries wall seconds since
    the spawn).
    """

    records: list[tuple[dict, dict]] = field(default_factory=list)
    ended: str = "finished"
    exit_code: int | None = None
    last_started: object = None
    output: str = ""
    output_lines: int = 0
    seconds: float = 0.0
    sandbox: str = "plain"
    notes: list[str] = field(default_factory=list)
    timeout_reason: str = ""
    timeout_after: float = 0.0
    cpu_seconds: float | None = None
    capped: str = ""

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


def _tail(path: Path, limit: int = 4000) -> tuple[str, int]:
    """The last whole lines of the file at ``path`` within ``limit`` bytes (from a line start,
    unless its one last line is longer), and how many lines the whole file holds."""
    try:
        with open(path, "rb") as f:
            lines = sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b""))
            size = f.tell()
            if size and not _ends_with_newline(f, size):
                lines += 1
            f.seek(max(0, size - limit))
            data = f.read()
    except OSError:
        return "", 0
    if size > limit and b"\n" in data[:-1]:
        data = data[data.index(b"\n") + 1:]  # the first line was cut: leave it out
    return data.decode("utf-8", "replace"), lines


def _ends_with_newline(f, size: int) -> bool:
    f.seek(size - 1)
    return f.read(1) == b"\n"


#: True once this process ran a plain child that Landlock did not restrict: such a child could
#: have written the host's kernel cache, so this process no longer reads it.
_unrestricted_child = False


def writes_restricted(use_bwrap: bool) -> bool:
    """Whether a child cannot write outside its own scratch folders: bubblewrap's read-only
    system, or, for a plain child, Landlock (:mod:`autograder.sandbox.landlock`)."""
    return use_bwrap or _landlock_abi() > 0


_landlock: list[int] = []


def _landlock_abi() -> int:
    if not _landlock:
        _landlock.append(landlock.abi())
    return _landlock[0]


def kernel_entries(request: dict, backend: str,
                   use_bwrap: bool) -> tuple[dict, list[tuple[str, str]]]:
    """The host's compiled kernels for the timing of ``request``'s exercise, for a timed GPU
    child's request: the entries of the exercise's folder that verify (key → entry bytes,
    :func:`autograder.host.kernel_cache.read_folder`), and ``(file name, why)`` for each file
    there that does not (the grader tells the instructor). None for a child that does not time,
    a sanitizer run, or when a child could have written the folder: this one cannot restrict
    its writes, or this process ran one that could not (:func:`writes_restricted`)."""
    timing = request.get("timing") or {}
    text = timing.get("solution_source")
    if (backend != "gpu" or not text or not writes_restricted(use_bwrap)
            or _unrestricted_child):
        return {}, []
    folder = kernel_cache.host_folder(text)
    if folder is None:
        return {}, []
    return kernel_cache.read_folder(folder)


def _forget_kernel_cache() -> None:
    """After a plain child that could write anywhere the grader's user can: remove the host's
    kernel cache, so nothing it may have put there is read by another grading (the next
    preflight's warm-up fills it again)."""
    from autograder.host.cache_folder import cache_dir

    root = cache_dir()
    if root is not None:
        shutil.rmtree(root / "kernels", ignore_errors=True)


def _child_cgroup(limits_caps: caps.TreeCaps) -> caps.Cgroup | None:
    """The child's own cgroup (:class:`autograder.sandbox.caps.Cgroup`), or None where this
    host has none for it (the watchdog holds the caps then)."""
    parent, _ = caps.probe()
    if parent is None:
        return None
    try:
        return caps.Cgroup(parent, limits_caps)
    except OSError as exc:
        log.warning("no cgroup for a child (the watchdog holds its caps): %s", exc)
        return None


def _command(backend: str, wfd: int, workdir: Path, use_bwrap: bool,
             wrapper: tuple[str, ...] = (), writable: Path | None = None,
             read_only: tuple[Path, ...] = (), program: list[str] | None = None,
             tasks: int | None = None, own: Path | None = None,
             uid: int | None = None) -> list[str]:
    """The child's command line: ``program`` (default: the harness on channel ``wfd``) under
    ``wrapper``, in bubblewrap (under :mod:`autograder.sandbox.nproc` with ``tasks``) or under
    the plain mode's reaper (its writes restricted to ``own``, ``writable`` and ``/dev`` where
    Landlock is, :func:`writes_restricted`; run as user ``uid``, with at most ``tasks`` of
    them, when given: :mod:`autograder.sandbox.dropuser`)."""
    harness = [*wrapper, *(program or [sys.executable, "-P", "-m", "autograder.child.harness",
                                       str(wfd)])]
    if use_bwrap:
        extra = ((Path(wrapper[0]).resolve().parent,) if wrapper else ()) + tuple(read_only)
        if tasks is not None:
            harness = [sys.executable, "-S", "-E", str(NPROC), str(tasks), *harness]
        return bwrap.arguments(workdir, gpu=backend == "gpu" and bool(gpu_nodes.device_nodes()),
                               extra_ro=extra, writable=writable) + ["--", *harness]
    writes = []
    if _landlock_abi() > 0:
        writes = [f"--write={d}" for d in (own, writable) if d is not None]
        writes = writes or [f"--write={workdir}"]
    if uid is not None:
        writes = [f"--user={uid}", *([f"--nproc={tasks}"] if tasks is not None else []), *writes]
    return [sys.executable, "-S", str(REAPER), str(os.getpid()), *writes, *harness]


def run_child(request: dict, backend: str, limits: Limits, workdir: Path,
              wrapper: tuple[str, ...] = (), writable: Path | None = None,
              on_record=None, cancel: threading.Event | None = None,
              records: list | None = None, program: list[str] | None = None) -> ChildRun:
    """Run the harness on ``request`` (see :mod:`autograder.child.harness`) with ``workdir`` (the
    submission's scratch folder, read-only to the child) visible. Never raises for anything
    the child does; raises :class:`autograder.sandbox.mode.SandboxUnavailable` only under
    ``KERNELGRADE_SANDBOX=require`` (no sandbox here, or its child could not start).

    ``wrapper``: a command the harness runs under, inside the sandbox (``compute-sanitizer
    --tool racecheck --log-file F``); its installation folder is shown read-only. ``writable``:
    a folder the child may write (where that log goes; give a fresh one, outside ``workdir``).
    Only use a wrapper's output from GPU runs, where no student Python runs in the child.

    ``on_record(header, send)``: called for each record; ``send(bytes)`` writes to the child's
    standard input (kept open for it); returning True stops the child. While it blocks, the
    child's deadlines wait too (:meth:`Watchdog.pause`). ``records``: a list that becomes the
    run's ``records``, filled as they arrive (a hook may read the records so far). ``cancel``:
    when set, the child is stopped (``ended == "cancelled"``). ``program``: a command run in
    the harness's place, in the same sandbox and under the same limits and caps (tests).
    """
    status = mode.status_for(backend)
    if not status.sandboxed and mode.requested() == "require":
        raise mode.SandboxUnavailable(f"no sandbox can run here: {status.reason}")
    hooks = (on_record, cancel, records)
    run = _run_once(request, backend, limits, workdir, status.available, wrapper, writable, hooks,
                    program, status.user)
    if status.sandboxed and _infrastructure_failed(run):
        # The probe passed, yet the sandboxed child died before its first record (which it
        # sends before any student code exists): a mount or device it lacks. Grade without
        # bubblewrap from now on for this backend, and say so.
        # Under ``require`` there is no plain rerun: bubblewrap's own failure ("bwrap: ...") is
        # SandboxUnavailable; a Python that died inside it (an import that fails) is returned
        # for the caller to report as the grader's environment (environment.setup_problem).
        # Either way the grader's setup, never a student's zero.
        last = (run.output.strip().splitlines() or [f"exit code {run.exit_code}"])[-1][:200]
        if mode.requested() == "require":
            if "bwrap:" in run.output or "reaper: cannot run the child as user" in run.output:
                raise mode.SandboxUnavailable(f"the sandbox ({status.name}) cannot run: the "
                                              f"sandboxed {backend} child failed to start: {last}")
            return run
        reason = f"the sandboxed {backend} child failed to start: {last}"
        mode.fall_back(backend, reason)
        run = _run_once(request, backend, limits, workdir, False, wrapper, writable, hooks,
                        program)
        run.notes.insert(0, _plain_note(reason))
    elif status.user:
        run.notes.insert(0, _plain_note(status.reason, mode.USER_NOTE))
    elif not status.available:
        run.notes.insert(0, _plain_note(status.reason))
    return run


def _plain_note(reason: str, note: str = mode.PLAIN_NOTE) -> str:
    """The instructor's note on a plain child (``note``: or on a child of its own user): why,
    and whether its writes were restricted."""
    if _landlock_abi() > 0:
        how = "its writes restricted to its scratch folder by Landlock"
    elif note == mode.USER_NOTE:
        how = ("writing only its scratch folder and world-writable ones (this kernel has no "
               "Landlock)")
    else:
        how = "not restricted in what it writes (this kernel has no Landlock)"
    return note.format(reason=reason) + f", {how}"


def _infrastructure_failed(run: ChildRun) -> bool:
    """No record at all: the child died before ``hello`` (sent before any student code)."""
    return not run.records and run.ended == "exited"


def _run_once(request: dict, backend: str, limits: Limits, workdir: Path,
              use_bwrap: bool, wrapper: tuple[str, ...] = (),
              writable: Path | None = None, hooks=(None, None, None),
              program: list[str] | None = None, user: bool = False) -> ChildRun:
    """One child, under bubblewrap (``use_bwrap``), as a user of its own (``user``, held for
    the child's life: :func:`autograder.sandbox.dropuser.child_user`) or plain."""
    held = dropuser.child_user() if user and not use_bwrap else nullcontext()
    try:
        with held as uid:
            return _run_as(request, backend, limits, workdir, use_bwrap, wrapper, writable,
                           hooks, program, uid)
    except dropuser.Unusable as exc:  # no user id to be had: the grader's setup (exit 2)
        raise mode.SandboxUnavailable(f"a child cannot run as a user of its own: {exc}") from exc


def _run_as(request: dict, backend: str, limits: Limits, workdir: Path,
            use_bwrap: bool, wrapper: tuple[str, ...], writable: Path | None, hooks,
            program: list[str] | None, uid: int | None) -> ChildRun:
    global _unrestricted_child
    on_record, cancel, records_list = hooks
    rfd, wfd = os.pipe()
    out_path = workdir / f"output-{backend}-{os.getpid()}-{threading.get_ident()}.txt"
    plain_cwd = None
    if not use_bwrap:
        plain_cwd = tempfile.mkdtemp(prefix=f"cwd-{backend}-", dir=workdir)
        if uid is not None:
            dropuser.prepare(uid, plain_cwd, str(workdir), str(writable) if writable else None)
    env = child_env(backend)
    if plain_cwd:
        env["HOME"] = env["TMPDIR"] = plain_cwd
    entries, bad = kernel_entries(request, backend, use_bwrap)
    if entries:
        request = {**request, "timing": {**request["timing"], "kernels": entries}}
    unrestricted = not writes_restricted(use_bwrap)
    if unrestricted:
        _unrestricted_child = True
    limit = tree_caps(backend, limits)
    cgroup = _child_cgroup(limit)
    root = os.geteuid() == 0  # RLIMIT_NPROC does not hold root, in any namespace

    def spawn(group: caps.Cgroup | None) -> subprocess.Popen:
        with open(out_path, "wb") as out_file:
            if uid is not None:  # the grader's alone: the child writes it through its fd
                os.fchmod(out_file.fileno(), 0o600)
            return subprocess.Popen(
                _command(backend, wfd, workdir, use_bwrap, tuple(wrapper), writable,
                         program=program,
                         tasks=None if group or (root and uid is None) else limit.tasks,
                         own=Path(plain_cwd) if plain_cwd else None, uid=uid),
                stdin=subprocess.PIPE, stdout=out_file, stderr=subprocess.STDOUT,
                pass_fds=(wfd,), cwd=plain_cwd or workdir, env=env,
                start_new_session=True,
                preexec_fn=limiter(limits.output_bytes, memory_limit(backend, limits),
                                   group.enter if group else None),
            )

    started = time.monotonic()
    try:
        try:
            proc = spawn(cgroup)
        except subprocess.SubprocessError as exc:  # the child could not enter its cgroup
            if cgroup is None:
                raise
            log.warning("a child could not enter its cgroup (the watchdog holds its caps "
                        "from now on): %s", exc)
            cgroup.close()
            cgroup = None
            caps.give_up(str(exc))
            proc = spawn(None)
    except BaseException:
        os.close(wfd)
        os.close(rfd)
        if cgroup is not None:
            cgroup.close()
        raise
    os.close(wfd)
    records: queue.Queue = queue.Queue()
    stream = _Budget(os.fdopen(rfd, "rb"), limits.channel_bytes)
    reader = threading.Thread(target=_reader, args=(stream, records), daemon=True)
    reader.start()
    feeder = threading.Thread(target=_feed, args=(proc, request, on_record is not None),
                              daemon=True)
    feeder.start()
    run = ChildRun(sandbox="bubblewrap" if use_bwrap else "user" if uid is not None
                   else "plain")
    if bad:
        said = [f"{name}: {why}" for name, why in bad]
        log.warning("the host's kernel cache holds files that do not verify: %s", "; ".join(said))
        run.notes.append(f"sandbox: the host's cache of compiled kernels holds {len(bad)} "
                         "file(s) that do not verify, ignored (no kernelgrade process wrote "
                         "them): " + "; ".join(said[:5]))
    if records_list is not None:
        records_list.clear()  # a second try (without bubblewrap) starts afresh
        run.records = records_list
    watch = Watchdog(limits, backend, proc.pid, started, limit, cgroup)
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
        over = watch.capped()
        if over is not None:
            run.ended, run.capped = "capped", caps.message(over, limit)
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
    if cgroup is not None:
        over = cgroup.breach() if run.ended == "exited" else None
        if over is not None:
            run.ended, run.capped = "capped", caps.message(over, limit)
        cgroup.close()
    if unrestricted:
        _forget_kernel_cache()
    reader.join(timeout=5)
    if not reader.is_alive():  # else a process that escaped holds the pipe: leave it to the thread
        stream.stream.close()
    if stream.exceeded:
        run.notes.append(f"the grading process sent more than {limits.channel_bytes} bytes of "
                         "results and was stopped")
    run.output, run.output_lines = _tail(out_path)
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

