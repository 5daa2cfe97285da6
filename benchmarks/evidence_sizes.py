"""CPU cost of the instrumented runs at the graded cases' own sizes and inputs (issue 30, goal 1).

    .venv/bin/python benchmarks/evidence_sizes.py [--repeats 3] [--exercise NAME ...]

For each exercise with a ``Diagnose`` and each of its graded cases (the simulator's, and the
GPU-only ``sim=False`` sizes, which a GPU grading analyses in its simulator child), the
instructor solution's instrumented launch runs in this process at the case's inputs (drawn
from seed 1) with the blocks the grader asks for (:func:`autograder.grading.plan.evidence_cases`,
:func:`autograder.child.cases.sampled_blocks`), as :func:`autograder.child.cases.run_instrumented`
does in the child. Prints one Markdown table:
CPU seconds per launch (``time.process_time``, the median of ``repeats``), blocks run of the
grid, and the sums per grading on each backend.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autograder import exercises  # noqa: E402
from autograder.child.contract import import_submission, resolve  # noqa: E402
from autograder.child.cases import run_instrumented  # noqa: E402
from autograder.simulator.adapter import prepare_simulator  # noqa: E402
from autograder.grading import plan  # noqa: E402


def measure(name: str, repeats: int) -> list[dict]:
    """One row per graded case of exercise ``name``."""
    from numba import cuda

    ex = exercises.get(name)
    path = str(exercises.solution_path(ex))
    module = import_submission(path, Path(path).read_text(encoding="utf-8"),
                               live=ex.contract.names)
    kernel, consts = resolve(module, ex.contract, path, "sim")
    rows = []
    for case in plan.evidence_cases(ex, plan.make_cases(ex, 1), 1):  # a GPU's: every case
        times, report = [], None
        for _ in range(repeats):
            start = time.process_time()
            report = run_instrumented(cuda, kernel, ex.contract, consts, case)
            times.append(time.process_time() - start)
        rows.append({"exercise": name, "case": ", ".join(f"{k} {v}" for k, v in
                                                           case.params.items()),
                     "sim": ex.cases[case.id].sim, "cpu_s": statistics.median(times),
                     "blocks": f"{report['blocks_run']}/{report['blocks_total']}",
                     "threads": report["blockdim"], "error": report["error"]})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--exercise", nargs="*")
    args = parser.parse_args()
    prepare_simulator()
    names = args.exercise or [n for n in exercises.names() if exercises.get(n).diagnose]
    print(f"Python {platform.python_version()}, {platform.machine()}, "
          f"{os.cpu_count()} CPUs; median of {args.repeats}\n")
    print("| exercise | case | simulator case | blocks run | block | CPU s |")
    print("|---|---|---|---|---|---|")
    totals = {}
    for name in names:
        for r in measure(name, args.repeats):
            print(f"| {r['exercise']} | {r['case']} | {'yes' if r['sim'] else 'GPU only'} | "
                  f"{r['blocks']} | {'x'.join(map(str, r['threads']))} | {r['cpu_s']:.3f} |"
                  + (f" error: {r['error']}" if r["error"] else ""))
            sim, gpu = totals.get(name, (0.0, 0.0))
            totals[name] = (sim + (r["cpu_s"] if r["sim"] else 0.0), gpu + r["cpu_s"])
    print("\n| exercise | per simulator grading (CPU s) | per GPU grading (CPU s) |")
    print("|---|---|---|")
    for name, (sim, gpu) in totals.items():
        print(f"| {name} | {sim:.2f} | {gpu:.2f} |")


if __name__ == "__main__":
    main()
