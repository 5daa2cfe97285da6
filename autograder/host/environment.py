"""The packages a grading process imports, and the faults of the grader's own setup that a child
shows: the first of the preflight's two checks (:mod:`autograder.grading.preflight` holds the second).

:func:`package_facts`: numpy, numba, numba-cuda and llvmlite, each with its version and folder.
The grader passes its own facts to every child (:data:`PACKAGES_ENV`, set by
:func:`autograder.sandbox.limits.child_env`); the harness compares them with its own before it
imports numba or any student code, and reports a difference as an ``error`` record of phase
``environment``. :func:`raise_for_setup` turns that, or a child that died before its first record
(before any student code existed), into a :class:`~autograder.errors.GraderSetupError` whose
message starts with ``"grader environment: "``.
"""

from __future__ import annotations

import functools
import importlib.metadata
import importlib.util
import sys
from pathlib import Path

from autograder.errors import GraderSetupError
from autograder import settings

# Module name → distribution name: the packages whose copy a child must share with the grader.
PACKAGES = {"numpy": "numpy", "numba": "numba", "numba_cuda": "numba-cuda",
            "llvmlite": "llvmlite"}
# The grader's package_facts(), as JSON, in each child's environment (removed by the harness
# before any student code runs).
PACKAGES_ENV = settings.GRADER_PACKAGES
PREFIX = "grader environment: "

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
    """Why ``run`` (a :class:`autograder.sandbox.run.ChildRun`) shows a fault of the grader's setup,
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
