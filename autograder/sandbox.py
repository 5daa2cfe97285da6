"""The child process: spawn the harness, feed it a request, watch it with deadlines, collect its
records from the private channel, and kill its whole process group when time runs out.

A spinning kernel or a hung import costs the test it was in, never the batch: the watchdog gives
the import ``import_timeout`` seconds, each case ``case_timeout`` seconds, and the whole child
``total_timeout`` seconds, then kills it (SIGKILL to the process group).
"""

from __future__ import annotations

import os
import pickle
import queue
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from .channel import ChannelError, read_record

OUTPUT_LIMIT_BYTES = 64 << 20
PROJECT_ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Limits:
    """Deadlines in seconds for one child process."""

    import_timeout: float = 30.0
    case_timeout: float = 30.0
    total_timeout: float = 120.0


@dataclass
class ChildRun:
    """What a child process sent and how it ended.

    ``ended``: ``"finished"`` (sent ``done``), ``"timeout"`` (killed by the watchdog while in
    ``last_started``, a case id, ``"timing"``, or ``None`` for the import), or ``"exited"``
    (ended without ``done``: crashed, exited early or was killed). ``output`` is the tail of
    what the student's code printed.
    """

    records: list[tuple[dict, dict]] = field(default_factory=list)
    ended: str = "finished"
    exit_code: int | None = None
    last_started: object = None
    output: str = ""
    seconds: float = 0.0

    def of_type(self, kind: str) -> list[tuple[dict, dict]]:
        return [r for r in self.records if r[0].get("type") == kind]

    def first(self, kind: str) -> dict | None:
        found = self.of_type(kind)
        return found[0][0] if found else None


def _child_env(backend: str) -> dict:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("KERNELGRADE_", "NUMBA_ENABLE_CUDASIM"))}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PROJECT_ROOT), env.get("PYTHONPATH")]))
    env["PYTHONUNBUFFERED"] = "1"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    if backend == "sim":
        env["NUMBA_ENABLE_CUDASIM"] = "1"
    return env


def _limit_child() -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (OUTPUT_LIMIT_BYTES, OUTPUT_LIMIT_BYTES))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _reader(stream, out: queue.Queue) -> None:
    try:
        while True:
            out.put(read_record(stream))
    except (EOFError, ChannelError, OSError):
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


def run_child(request: dict, backend: str, limits: Limits, workdir: Path) -> ChildRun:
    """Run the harness on ``request`` (see :mod:`autograder.harness`) in ``workdir``."""
    rfd, wfd = os.pipe()
    out_path = workdir / f"output-{backend}-{os.getpid()}-{threading.get_ident()}.txt"
    started = time.monotonic()
    with open(out_path, "wb") as out_file:
        proc = subprocess.Popen(
            [sys.executable, "-m", "autograder.harness", str(wfd)],
            stdin=subprocess.PIPE, stdout=out_file, stderr=subprocess.STDOUT,
            pass_fds=(wfd,), cwd=workdir, env=_child_env(backend),
            start_new_session=True, preexec_fn=_limit_child,
        )
    os.close(wfd)
    records: queue.Queue = queue.Queue()
    stream = os.fdopen(rfd, "rb")
    reader = threading.Thread(target=_reader, args=(stream, records), daemon=True)
    reader.start()
    try:
        proc.stdin.write(pickle.dumps(request, protocol=pickle.HIGHEST_PROTOCOL))
        proc.stdin.close()
    except BrokenPipeError:
        pass
    run = ChildRun()
    phase_deadline = started + limits.import_timeout
    total_deadline = started + limits.total_timeout
    while True:
        now = time.monotonic()
        wait = min(phase_deadline, total_deadline) - now
        if wait <= 0:
            run.ended = "timeout"
            break
        try:
            item = records.get(timeout=wait)
        except queue.Empty:
            continue
        if item is None:
            run.ended = "finished" if run.first("done") else "exited"
            break
        header = item[0]
        header["_arrived"] = round(time.monotonic() - started, 4)  # seconds since the spawn
        run.records.append(item)
        kind = header.get("type")
        if kind == "start":
            run.last_started = header.get("id")
            phase_deadline = time.monotonic() + limits.case_timeout
        elif kind in ("imported", "error") and header.get("phase") in (None, "import", "contract"):
            phase_deadline = total_deadline
    _kill_group(proc)
    run.exit_code = proc.wait()
    stream.close()
    run.output = _tail(out_path)
    run.seconds = time.monotonic() - started
    return run


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def scratch_dir() -> tempfile.TemporaryDirectory:
    """A private scratch folder for one submission's child processes."""
    return tempfile.TemporaryDirectory(prefix="kernelgrade-")
