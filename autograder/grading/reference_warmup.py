"""The warm-up: an exercise's timing kernels compiled once per host, by a process the grader
trusts, into the host's cache of compiled kernels (:mod:`autograder.host.kernel_cache`), which every
timed GPU child then reads instead of compiling them.

:func:`warm` (in the grader) runs ``python -m autograder.grading.reference_warmup EXERCISE`` on the GPU
and waits for it. That process runs no student code: it runs the instructor solution at its own
constants, as a timed child would with a student who kept them (``TILE_WIDTH = 16``), and makes
the timing's inputs and kernels exactly as that child does
(:func:`autograder.child.timing.prepare_timing`), so their argument types and keys match; it
runs no kernel. It is not sandboxed, which is why it may write the cache and a child may not.
The preflight (:mod:`autograder.grading.preflight`) runs it on a GPU beside its grading of the solution,
so it runs once per host and code version, like the preflight. A warm-up that fails is logged
and costs nothing else: the children compile as they did without a cache. Each warm-up also
removes the folders of solutions no warm-up has used for 30 days (:func:`prune_unused`), and
every file of its own folder that is not a verified cubin entry (:func:`remove_foreign`: an
older version's pickles, or a file no kernelgrade process wrote, which the gradings reported to
the instructor and never loaded).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from autograder.host import gpulock
from autograder.host import kernel_cache
from autograder.host.cache_folder import CACHE_MAX_AGE_S

#: Seconds the warm-up may take (it compiles three to four kernels: about 1-2 s on an H200).
WARMUP_TIMEOUT_S = 180.0
log = logging.getLogger(__name__)


def warm(exercise) -> str | None:
    """Compile the timing kernels of ``exercise`` (an :class:`~autograder.exercises.base.Exercise`)
    into the host's cache, in a trusted process on this process's GPU. Returns None when they
    are there (or the exercise has no timing test), else a one-line reason, also logged; never
    raises for the warm-up's own failure."""
    from autograder import exercises
    from autograder.sandbox.limits import child_env

    if not exercise.timing:
        return None
    try:
        text = exercises.solution_path(exercise).read_text(encoding="utf-8")
    except OSError as exc:  # FileNotFoundError: not installed here
        return _failed(exercise.name, f"no solution: {exc}")
    folder = kernel_cache.host_folder(text)
    if folder is None:
        return _failed(exercise.name, "kernelgrade's cache is turned off")
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o755)
        os.utime(folder)  # in use: kept by prune_unused
    except OSError as exc:
        return _failed(exercise.name, f"cannot make {folder}: {exc}")
    prune_unused(folder.parent)
    remove_foreign(folder)
    env = child_env("gpu")
    env[kernel_cache.CACHE_ENV] = str(folder)
    env[kernel_cache.WRITE_ENV] = "1"
    try:
        with gpulock.gpu(exclusive=False):  # its CUDA context and modules: GPU work
            out = subprocess.run([sys.executable, "-P", "-m", __name__, exercise.name], env=env,
                                 capture_output=True, text=True, timeout=WARMUP_TIMEOUT_S,
                                 stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return _failed(exercise.name, str(exc))
    if out.returncode != 0:
        last = (out.stderr.strip().splitlines() or [f"exit status {out.returncode}"])[-1]
        return _failed(exercise.name, last[:300])
    log.info("warm-up of %s: %s", exercise.name, out.stdout.strip()[-300:])
    return None


def prune_unused(kernels: Path) -> None:
    """Remove the folders of ``kernels`` (one per instructor solution) that no warm-up has
    used for :data:`~autograder.host.cache_folder.CACHE_MAX_AGE_S` (an older solution's). A child
    reading one while it goes loses only its cache: it compiles instead."""
    cutoff = time.time() - CACHE_MAX_AGE_S
    try:
        old = [d for d in kernels.iterdir() if d.is_dir() and d.stat().st_mtime < cutoff]
    except OSError:
        return
    for folder in old:
        shutil.rmtree(folder, ignore_errors=True)


def remove_foreign(folder: Path) -> list[str]:
    """Remove each file of ``folder`` that is not a verified entry
    (:func:`autograder.host.kernel_cache.read_folder`), logged; returns their names."""
    _, bad = kernel_cache.read_folder(folder)
    for name, why in bad:
        log.warning("kernel cache: removed %s (%s)", folder / name, why)
        path = folder / name
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                path.unlink()
    return [name for name, _ in bad]


def _failed(name: str, why: str) -> str:
    log.info("warm-up of %s not done (its children compile its kernels): %s", name, why)
    return why


def compile_timing_kernels(name: str) -> list:
    """In the warm-up process: compile (and, with :data:`kernel_cache.WRITE_ENV`, save) the
    timing kernels of exercise ``name``; returns :data:`kernel_cache.events`."""
    from numba import cuda

    from autograder import exercises
    from autograder.grading import plan
    from autograder.child.timing import import_solution, prepare_timing

    exercise = exercises.get(name)
    timing = plan.timing_request(exercise)
    contract = exercise.contract
    solution = import_solution(timing.solution_path, {}, timing.solution_source)
    consts = {c.name: getattr(solution, c.name) for c in contract.constants}
    kernel = getattr(solution, contract.kernel)
    kernel.targetoptions["lineinfo"] = True  # as a timed child compiles the student's kernel
    prepare_timing(cuda, kernel, contract, consts, timing)
    return list(kernel_cache.events)


def main(argv: list[str]) -> int:
    """``python -m autograder.grading.reference_warmup EXERCISE``: prints what was compiled or found,
    as JSON. Exit status 0, or 1 with the reason on standard error."""
    if len(argv) != 1:
        print("usage: python -m autograder.grading.reference_warmup EXERCISE", file=sys.stderr)
        return 1
    try:
        events = compile_timing_kernels(argv[0])
    except Exception as exc:  # noqa: BLE001 - the grader logs it; the children compile instead
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(events))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
