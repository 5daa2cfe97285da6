"""What the host's cache of compiled timing kernels saves a timed child, on a GPU (issue 30: the
cache holds cubin entries, no pickle). Per timed exercise: the trusted warm-up fills a fresh
cache folder (:func:`autograder.grading.reference_warmup.warm`), then fresh processes prepare the
timing as a timed child does (:func:`autograder.child.timing.prepare_timing`, the solution timed
as the student), ``--trials`` times each, alternately without the cache and with the entries the
grader would send (:func:`autograder.host.kernel_cache.read_folder`, then ``provide``). Prints a
Markdown table (median seconds of ``prepare_timing``, which kernels were loaded) and writes JSON.

Usage: python benchmarks/kernel_cache_gpu.py [--trials 5] [--exercise NAME ...] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def child(name: str, cached: bool) -> dict:
    """One timed child's preparation of ``name``'s timing: seconds and the cache's events."""
    from numba import cuda

    from autograder import exercises
    from autograder.child.timing import import_solution, prepare_timing
    from autograder.grading.plan import timing_request
    from autograder.host import kernel_cache

    cuda.current_context()  # the context is not the cache's to save
    exercise = exercises.get(name)
    timing = timing_request(exercise)
    if cached:
        entries, bad = kernel_cache.read_folder(kernel_cache.host_folder(timing.solution_source))
        timing.kernels = entries
    student = import_solution(timing.solution_path, {}, timing.solution_source)
    kernel = getattr(student, exercise.contract.kernel)
    kernel.targetoptions["lineinfo"] = True
    consts = {c.name: getattr(student, c.name) for c in exercise.contract.constants}
    began = time.perf_counter()
    prepare_timing(cuda, kernel, exercise.contract, consts, timing)
    cuda.synchronize()
    return {"seconds": time.perf_counter() - began, "events": kernel_cache.events,
            "entries": len(timing.kernels or {})}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--exercise", action="append")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.child[0], args.child[1] == "1")))
        return 0
    from autograder import exercises
    from autograder.grading.reference_warmup import warm

    names = args.exercise or [n for n in exercises.names() if exercises.get(n).timing]
    cache = tempfile.mkdtemp(prefix="kernelgrade-cache-bench-")
    os.environ["KERNELGRADE_CACHE_DIR"] = cache
    rows = []
    print("| exercise | warm-up s | entries | prepare_timing s, compiled (median) | "
          "with the cache (median) | saved s | loaded kernels |")
    print("|---|---|---|---|---|---|---|")
    for name in names:
        began = time.perf_counter()
        why = warm(exercises.get(name))
        warmed = time.perf_counter() - began
        runs: dict[bool, list] = {False: [], True: []}
        for _ in range(args.trials):
            for cached in (False, True):
                out = subprocess.run([sys.executable, __file__, "--child", name, str(int(cached))],
                                     capture_output=True, text=True, timeout=600)
                if out.returncode != 0:
                    print(f"{name}: child failed: {out.stderr.strip()[-500:]}", file=sys.stderr)
                    return 1
                runs[cached].append(json.loads(out.stdout.strip().splitlines()[-1]))
        plain = statistics.median(r["seconds"] for r in runs[False])
        fast = statistics.median(r["seconds"] for r in runs[True])
        loaded = sum(1 for _, what in runs[True][-1]["events"] if what == "loaded")
        total = len(runs[True][-1]["events"])
        rows.append({"exercise": name, "warm_up_s": warmed, "warm_up_problem": why,
                     "compiled_s": [r["seconds"] for r in runs[False]],
                     "cached_s": [r["seconds"] for r in runs[True]],
                     "events_cached": runs[True][-1]["events"],
                     "entries": runs[True][-1]["entries"]})
        print(f"| {name} | {warmed:.2f}{' (' + why + ')' if why else ''} | "
              f"{runs[True][-1]['entries']} | {plain:.3f} | {fast:.3f} | {plain - fast:.3f} | "
              f"{loaded}/{total} |")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
