"""What checking every timed launch costs, on a GPU: each timed exercise's solution timed as a
student with the checks (:class:`autograder.timing.outputs.LaunchChecks`) and without them,
alternately, ``--trials`` times each, in one process: the timing's main loop
(:func:`autograder.timing.measure.time_pair`) at least 30 rounds, then to 1 % precision (no early stop
at the thresholds). Per exercise: the ratio's median with and without, the medians of
the instructor's samples, and the sampling's wall seconds per round (flushes, launches and, with
the checks, their refills, poisons and compares). With the checks it also says whether every
launch passed (:func:`autograder.timing.outputs.wrong_launches`).

Usage: python benchmarks/timed_outputs_cost.py [--trials 3] [--exercise NAME ...]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autograder import exercises  # noqa: E402
from autograder.child import harness  # noqa: E402
from autograder.exercises import solution_path  # noqa: E402
from autograder.grading.plan import timing_request  # noqa: E402
from autograder.timing.outputs import wrong_launches  # noqa: E402
from autograder.child.timing import MAX_ROUNDS  # noqa: E402
from autograder.timing.measure import ratio_stats, time_pair  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--exercise", action="append")
    args = ap.parse_args()
    from numba import cuda

    print("| exercise | checks | trials | ratio (median) | instructor ms (median) | rounds "
          "(median) | s per round (median) | every launch right |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    names = args.exercise or [n for n in exercises.names() if exercises.get(n).timing]
    for name in names:
        ex = exercises.get(name)
        path = solution_path(ex)
        contract = ex.contract
        module = harness.import_submission(str(path))
        kernel, consts = harness.resolve(module, contract, str(path), "gpu")
        p = harness.prepare_timing(cuda, kernel, contract, consts, timing_request(ex))
        harness.warm_up(cuda, kernel, p)
        checks, copies = p["checks"], len(p["arg_sets"])
        grid, block = p["grid"], p["block"]

        def student(r):
            kernel[grid, block](*p["arg_sets"][r % copies])

        def instructor(r):
            p["reference"][grid, block](*p["reference_arg_sets"][r % copies])

        rows = {True: [], False: []}
        for _ in range(args.trials):
            for with_checks in (True, False):
                hooks = {}
                if with_checks:
                    checks.reset()
                    hooks = {"before": checks.before, "after_round": checks.after_round}
                out = time_pair(cuda, student, instructor, p["flush"], min_rounds=30,
                                max_rounds=MAX_ROUNDS, budget_s=ex.timing.budget_s, **hooks)
                rounds = len(out["a_ms"])
                right = None
                if with_checks:
                    right = wrong_launches(checks.results(rounds), ex.outputs(ex.timing.params),
                                           ex.tolerance.rel_frobenius, ex.tolerance.exact,
                                           rounds).message is None
                rows[with_checks].append((ratio_stats(out["a_ms"], out["b_ms"]).ratio,
                                          statistics.median(out["b_ms"]), rounds,
                                          out["seconds"] / rounds, right))
        for with_checks in (True, False):
            r = rows[with_checks]
            med = [statistics.median(x[i] for x in r) for i in range(4)]
            right = "" if not with_checks else ("yes" if all(x[4] for x in r) else "NO")
            print(f"| {name} | {'with' if with_checks else 'without'} | {len(r)} | {med[0]:.4f} | "
                  f"{med[1]:.3f} | {med[2]:.0f} | {med[3] * 1000:.2f} ms | {right} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
