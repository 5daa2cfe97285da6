"""Is the grader itself sound here? Checked before any student is graded, so a broken setup is a
:class:`~autograder.errors.GraderSetupError` (exit status 2, nothing stored), never a class of
zeros with messages that blame each student.

Two checks:

* **The packages a child imports** (:func:`package_facts`): numpy, numba, numba-cuda and llvmlite,
  each with its version and folder. The grader passes its own facts to every child
  (:data:`PACKAGES_ENV`, set by :mod:`autograder.sandbox`); the harness compares them with its own
  before it imports numba or any student code, and reports a difference as an ``error`` record of
  phase ``environment``. :func:`raise_for_setup` turns that, or a child that died before its
  first record (before any student code existed), into a ``GraderSetupError`` whose message
  starts with ``"grader environment: "``.
* **The instructor solution** (:func:`start`, :func:`check`): graded in the same sandbox, on the
  same device, with the same ``sanitize`` choice, once per process, exercise and device (the
  result is cached and shared between threads). It must get full marks, skipped tests aside
  (:func:`autograder.known_bad.full_marks_problems`); otherwise ``GraderSetupError`` with a
  one-line cause.

:func:`autograder.grader.grade` runs the preflight unless told not to (``preflight=False``: the
preflight's own run, ``autograder solutions``, which grades the solutions itself, and a public
tests run, which has no solution to compare with). On a GPU the preflight runs beside the first
student's grading, whose result is discarded if the preflight fails; on the simulator it runs
first (both at once would compete for the CPU and could push a student past a time limit).
"""

from __future__ import annotations

import functools
import importlib.metadata
import importlib.util
import sys
import threading
from concurrent.futures import Future
from pathlib import Path

from .errors import GraderSetupError

# Module name → distribution name: the packages whose copy a child must share with the grader.
PACKAGES = {"numpy": "numpy", "numba": "numba", "numba_cuda": "numba-cuda",
            "llvmlite": "llvmlite"}
# The grader's package_facts(), as JSON, in each child's environment (removed by the harness
# before any student code runs).
PACKAGES_ENV = "KERNELGRADE_GRADER_PACKAGES"
PREFIX = "grader environment: "
PREFLIGHT_SEED = 20261122  # fixed: a failing preflight can be replayed as is


# ---------------------------------------------------------------------------------------------
# The packages a process imports


def package_facts() -> dict[str, dict | None]:
    """Where this process imports (or would import) each of :data:`PACKAGES` from, without
    importing any: ``{"numpy": {"version": "2.4.6", "path": "/…/site-packages/numpy"}, …}``.
    ``path`` is the package's folder with symlinks resolved; ``version`` is that of the
    distribution installed beside it (None without one); a package that cannot be found is None.
    """
    return _facts(tuple(sys.path), tuple(sorted(
        (name, getattr(sys.modules[name], "__file__", None))
        for name in PACKAGES if name in sys.modules)))


@functools.lru_cache(maxsize=16)
def _facts(path: tuple, imported: tuple) -> dict[str, dict | None]:
    facts: dict[str, dict | None] = {}
    for module, dist in PACKAGES.items():
        try:
            loaded = sys.modules.get(module)
            spec = loaded.__spec__ if loaded is not None else importlib.util.find_spec(module)
        except (ImportError, ValueError):
            spec = None
        if spec is None or not spec.origin or spec.origin in ("built-in", "frozen"):
            facts[module] = None
            continue
        folder = Path(spec.origin).parent
        versions = [d.version for d in importlib.metadata.distributions(
            name=dist, path=[str(folder.parent)])]
        facts[module] = {"version": versions[0] if versions else None,
                         "path": str(folder.resolve())}
    return facts


def _describe(name: str, fact: dict | None) -> str:
    if fact is None:
        return f"no {name} at all"
    return f"{name} {fact.get('version') or '(no version)'} from {fact.get('path')}"


def package_mismatch(expected: dict | None, actual: dict) -> str | None:
    """One line saying how ``actual`` (a child's :func:`package_facts`) differs from
    ``expected`` (the grader's), or None when they agree or nothing is expected."""
    if not expected:
        return None
    for name in PACKAGES:
        want, got = expected.get(name), actual.get(name)
        if want != got:
            return (f"the grading process imports {_describe(name, got)}, the grader "
                    f"{_describe(name, want)} (a folder the grader imports from is not visible "
                    "in the sandbox, or its path or user site differs)")
    return None


def setup_problem(run) -> str | None:
    """Why ``run`` (a :class:`autograder.sandbox.ChildRun`) shows a fault of the grader's setup,
    or None: an ``environment`` error record (its packages differ from the grader's), or a child
    that ended before its first record, which it sends before any student code exists (a package
    it cannot import, a CUDA driver that fails, numba refusing this numpy)."""
    if run is None:
        return None
    for header, _ in run.of_type("error"):
        if header.get("phase") == "environment":
            return PREFIX + str(header.get("message", ""))
    if not run.records and run.ended == "exited":
        last = (run.output.strip().splitlines() or [""])[-1].strip()[:300]
        return (PREFIX + f"the grading process ended before it started grading (exit code "
                f"{run.exit_code})" + (f": {last}" if last else ""))
    return None


def raise_for_setup(*runs) -> None:
    """Raise :class:`GraderSetupError` if any of ``runs`` shows a fault of the grader's setup
    (see :func:`setup_problem`); None entries are ignored."""
    for run in runs:
        problem = setup_problem(run)
        if problem:
            raise GraderSetupError(problem)


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
    from . import known_bad
    from .exercises import solution_path
    from .grader import grade
    from .exercises import get

    try:
        path = solution_path(get(exercise))
    except FileNotFoundError as exc:
        raise GraderSetupError(f"preflight: {exc}") from None
    for attempt in range(2):
        result = grade(path, exercise, device=backend, seed=PREFLIGHT_SEED, sanitize=sanitize,
                       preflight=False)
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
            f"First lost test: {first}")
