"""Is the grader itself sound here? Checked before any student is graded, so a broken setup is a
:class:`~autograder.errors.GraderSetupError` (exit status 2, nothing stored), never a class of
zeros with messages that blame each student.

Two checks: the packages a child imports (:mod:`autograder.host.environment`, on every grading),
and:

* **The instructor solution** (:func:`start`, :func:`check`): graded in the same sandbox, on the
  same device, with the same ``sanitize`` choice, once per process, exercise and device (the
  result is cached and shared between threads). It must get full marks, skipped tests aside
  (:func:`autograder.exercises.known_bad.full_marks_problems`); otherwise ``GraderSetupError`` with a
  one-line cause.

:func:`autograder.grader.grade` runs the preflight unless told not to (``preflight=False``: the
preflight's own run, ``autograder solutions``, which grades the solutions itself, and a public
tests run, which has no solution to compare with). On a GPU the preflight runs beside the first
student's grading, whose result is discarded if the preflight fails; on the simulator it runs
first (both at once would compete for the CPU and could push a student past a time limit).

**A passed preflight is kept on disk** (:func:`cache_dir`: ``$KERNELGRADE_CACHE_DIR``, else
``$XDG_CACHE_HOME/kernelgrade``, else ``~/.cache/kernelgrade``; one JSON file per key under
``preflight/``), so the next process (the next ``autograder grade``, each ``batch`` worker) does
not grade the solution again. The key (:func:`fingerprint`) is a SHA-256 over everything that
could change the verdict: the exercise; the bytes of every ``.py`` file of the ``autograder``
package and of the exercise's ``exercise.py``, ``driver.py`` and solution (wherever
:func:`autograder.exercises.solution_path` finds it); :func:`package_facts` and the child's
import path (:func:`autograder.sandbox.bwrap.import_path`) with the packages installed there (their
``dist-info`` names, which carry the versions); the Python executable and version; the device
(``sim``, or every GPU's UUID, name, driver version and compute capability from ``nvidia-smi``,
and ``CUDA_VISIBLE_DEVICES``); the sandbox (bubblewrap, its binary, or plain, and why); the
sanitize choice (and compute-sanitizer's binary on a GPU); the environment the children inherit
(``NUMBA_*``, ``CUDA_*``, ``LD_*``, ``PYTHON*``, ``NVIDIA_*``, ``KERNELGRADE_*``), less those
whose effect is a part already (``PYTHONPATH``, ``KERNELGRADE_SOLUTIONS``,
``KERNELGRADE_DEVICE``: the same setup reached another way shares the pass). A key whose
parts cannot all be read (no ``nvidia-smi`` answer) is not cached. A failure is never stored;
an entry that cannot be read, parsed or does not match its key is ignored (and replaced by the
next pass). Processes that miss the same key at once take turns (a file lock), so a batch's
workers grade the solution once per machine, not once each. On a GPU the same miss also fills
the host's cache of compiled timing kernels (:mod:`autograder.grading.reference_warmup`), beside the
solution's grading. ``KERNELGRADE_PREFLIGHT_CACHE=off`` turns both caches off. The cache can
only skip this check, never change a grade: every child still compares its packages with the
grader's (above) on every grading.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
import time
from concurrent.futures import Future
from pathlib import Path

from autograder.host.cache_folder import CACHE_ENV, CACHE_MAX_AGE_S, CACHE_SWITCH_ENV, cache_dir  # noqa: F401 (re-exported)
from autograder.host.environment import PACKAGES, package_facts
from autograder.errors import GraderSetupError
from autograder.grading.preflight_key import CACHE_FORMAT, fingerprint

PREFLIGHT_SEED = 20261122  # fixed: a failing preflight can be replayed as is
# The preflight cache (see the module's docstring).
log = logging.getLogger(__name__)


# ---------------------------------------------------------------------------------------------
# The instructor solution, once per process, exercise, device and sanitize choice

_checks: dict[tuple, Future] = {}
_checks_lock = threading.Lock()


def start(exercise: str, backend: str, sanitize: bool = True) -> Future:
    """The preflight of ``exercise`` on ``backend`` (``"gpu"`` or ``"sim"``, already resolved):
    a future whose ``result()`` is None, or raises :class:`GraderSetupError`. The first call in
    this process starts it in a background thread; later calls get the same future."""
    key = (exercise, backend, bool(sanitize))
    with _checks_lock:
        future = _checks.get(key)
        if future is not None:
            return future
        future = _checks[key] = Future()
    future.set_running_or_notify_cancel()

    def run() -> None:
        try:
            _preflight(exercise, backend, sanitize)
        except BaseException as exc:  # kept for every caller, re-raised by result()
            future.set_exception(exc)
        else:
            future.set_result(None)

    threading.Thread(target=run, name=f"preflight-{exercise}-{backend}", daemon=True).start()
    return future


def check(exercise: str, backend: str, sanitize: bool = True) -> None:
    """Run (or wait for) the preflight; raises :class:`GraderSetupError` when it fails."""
    start(exercise, backend, sanitize).result()


def _preflight(exercise: str, backend: str, sanitize: bool) -> None:
    """The preflight itself: a passed one found in the disk cache, else the solution graded
    (and, when it passes, remembered there)."""
    entry = _CacheEntry.open(exercise, backend, sanitize)
    if entry is None:
        _grade_solution(exercise, backend, sanitize)
        return
    with entry.locked():
        if entry.passed():
            log.info("preflight of %s on %s: passed before (%s), not run again", exercise,
                     backend, entry.path)
            return
        with _warming_up(exercise, backend):
            result = _grade_solution(exercise, backend, sanitize)
        entry.store(result)


@contextlib.contextmanager
def _warming_up(exercise: str, backend: str):
    """On a GPU, the exercise's timing kernels compiled into the host's cache
    (:mod:`autograder.grading.reference_warmup`) beside what the block does, waited for at its end; a
    warm-up that fails only leaves the children to compile them."""
    if backend != "gpu":
        yield
        return
    from autograder.exercises import get
    from autograder.grading.reference_warmup import warm

    thread = threading.Thread(target=lambda: warm(get(exercise)), daemon=True,
                              name=f"warm-up-{exercise}")
    thread.start()
    try:
        yield
    finally:
        thread.join()


def _grade_solution(exercise: str, backend: str, sanitize: bool):
    """Grade the instructor solution of ``exercise``; returns its result when it gets full
    marks, else raises :class:`GraderSetupError`."""
    from autograder.exercises import known_bad
    from autograder.exercises import get, solution_path
    from autograder.grading.steps import grade_submission
    from autograder.host.blas import single_threaded_blas

    try:
        path = solution_path(get(exercise))
    except FileNotFoundError as exc:
        raise GraderSetupError(f"preflight: {exc}") from None
    log.info("preflight of %s on %s: grading the instructor solution %s", exercise, backend,
             path)
    for attempt in range(2):
        single_threaded_blas()  # as grader.grade does, before any child is forked
        result = grade_submission(path, get(exercise), backend, PREFLIGHT_SEED, None, sanitize)
        problems = known_bad.full_marks_problems(result)
        failed = [t for t in result.tests if t.status.value not in ("passed", "skipped")
                  or (t.status.value == "passed" and t.points < t.max_points)]
        # A noisy GPU clock or a load spike can cost the solution its timing test or a time
        # limit once; anything else would happen again.
        transient = failed and all(t.kind.value == "timing" or t.status.value == "timeout"
                                   for t in failed)
        if not problems or not transient or attempt:
            break
    if problems:
        raise GraderSetupError(_message(exercise, result, problems))
    return result


def _message(exercise: str, result, problems: list[str]) -> str:
    """One line: what the solution got, the likely cause, and its first lost test."""
    text = " ".join(problems)
    facts = package_facts()
    versions = ", ".join(f"{PACKAGES[n]} {f.get('version') or '?'}"
                         for n, f in facts.items() if f)
    causes = [
        (("NvvmSupportError", "libNVVM", "libnvvm"),
         "numba-cuda cannot find NVVM, the CUDA compiler library (install numba-cuda's CUDA "
         "extras, e.g. numba-cuda[cu12])"),
        (("CudaSupportError", "CUDA_ERROR", "cuInit", "CUDA driver"),
         "the CUDA driver cannot be used from the grading process"),
        (("ModuleNotFoundError", "No module named"),
         "a package is not visible in the sandbox"),
        (("module 'numpy' has no attribute", "module 'numba", "Numba needs NumPy",
          "ImportError"),
         f"these versions do not work together ({versions}): a numba/numpy version mismatch"),
        (("did not finish in time", "timeout"),
         "the solution ran out of time: the machine is too slow or too busy for the time limits"),
        (("timing",), "the GPU's timing is unstable"),
    ]
    cause = next((c for words, c in causes if any(w in text for w in words)),
                 "the grader's setup is broken")
    first = " ".join(problems[0].split())[:240]
    return (f"preflight: the instructor solution of {exercise} gets {result.score:g}/"
            f"{result.max_score:g} on {result.device}, so no student is graded: {cause}. "
            f"First lost test: {first}{_referred(result, problems[0])}")


def _referred(result, problem: str) -> str:
    """The message of the test that ``problem`` sends its reader to ("see the concept test"),
    as ``" The concept test: ..."``; ``""`` when it names none or that test has no message."""
    for t in result.tests:
        name = t.kind.value
        if f"see the {name} test" in problem and t.message:
            return f" The {name} test ({t.name}): " + " ".join(t.message.split())[:400]
    return ""


# ---------------------------------------------------------------------------------------------
# A passed preflight, kept on disk across processes


class _CacheEntry:
    """One key's file in the cache: ``preflight/<key>.json`` (and ``<key>.lock``)."""

    def __init__(self, folder: Path, key: str, parts: dict):
        self.folder, self.key, self.parts = folder, key, parts
        self.path = folder / f"{key}.json"

    @classmethod
    def open(cls, exercise: str, backend: str, sanitize: bool) -> "_CacheEntry | None":
        """The entry of this preflight, or None without a cache (turned off, no folder, a key
        that cannot be made)."""
        root = cache_dir()
        if root is None:
            return None
        try:
            made = fingerprint(exercise, backend, sanitize)
        except OSError as exc:
            log.info("preflight cache not used: %s", exc)
            return None
        return None if made is None else cls(root / "preflight", *made)

    @contextlib.contextmanager
    def locked(self):
        """Hold this key's lock file (processes missing the same key take turns); without a
        lock (the folder cannot be written), go on unlocked."""
        handle = None
        try:
            self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            handle = open(self.folder / f"{self.key}.lock", "a+b")
            import fcntl

            fcntl.flock(handle, fcntl.LOCK_EX)
        except (OSError, ImportError) as exc:
            log.info("preflight cache: no lock (%s)", exc)
        try:
            yield self
        finally:
            if handle is not None:
                handle.close()  # releases the lock

    def passed(self) -> bool:
        """True when a readable entry of this very key says the solution passed."""
        try:
            entry = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError, UnicodeDecodeError):
            return False
        return (isinstance(entry, dict) and entry.get("key") == self.key
                and entry.get("format") == CACHE_FORMAT and entry.get("verdict") == "passed")

    def store(self, result) -> None:
        """Remember that the solution passed (``result``: its ExerciseResult), atomically;
        a folder that cannot be written is no error. Removes entries older than
        :data:`CACHE_MAX_AGE_S`."""
        entry = {"format": CACHE_FORMAT, "key": self.key, "verdict": "passed",
                 "score": result.score, "max_score": result.max_score, "device": result.device,
                 "written": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                 "parts": self.parts}
        tmp = self.folder / f".{self.key}.{os.getpid()}.{threading.get_ident()}.tmp"
        try:
            self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            tmp.write_text(json.dumps(entry, indent=1, default=str), encoding="utf-8")
            os.replace(tmp, self.path)
        except OSError as exc:
            log.info("preflight cache: cannot write %s (%s)", self.path, exc)
            with contextlib.suppress(OSError):
                tmp.unlink()
            return
        self._prune()

    def _prune(self) -> None:
        cutoff = time.time() - CACHE_MAX_AGE_S
        with contextlib.suppress(OSError):
            for old in self.folder.iterdir():
                with contextlib.suppress(OSError):
                    if old.suffix in (".json", ".lock", ".tmp") and old.stat().st_mtime < cutoff:
                        old.unlink()
