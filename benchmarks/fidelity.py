"""Timing fidelity on a GPU: how often the timing verdict is wrong.

For every exercise with a timing test: the instructor solution timed as a student ``--trials``
times (goal: 0 timing failures), and each known-slow variant (a mutant declaring
``kernelgrade-expect-gpu: timing=failed``) ``--trials`` times (goal: 0 passes); the ratio's
p1 / p50 / p99. Uses the grader's own timing path (``harness.prepare_timing`` /
``measure_timing`` and ``timing.verdict``), in one process per exercise to save JIT time.

Usage: python benchmarks/fidelity.py [--trials 100] [--exercise NAME ...] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autograder import exercises
from autograder.exercises import known_bad  # noqa: E402
from autograder.child import harness  # noqa: E402
from autograder.exercises import mutants, solution_path  # noqa: E402
from autograder.grading.plan import timing_request as _timing_request  # noqa: E402
from autograder.timing.measure import self_check_problem, verdict  # noqa: E402


def slow_variants(name: str) -> list[Path]:
    return [p for p in mutants(name)
            if any(e.selector == "timing" and e.status == "failed"
                   for e in known_bad.expectations(p))]


def run_variant(cuda, ex, path: Path, trials: int) -> dict:
    contract = ex.contract
    module = harness.import_submission(str(path))
    kernel, consts = harness.resolve(module, contract, str(path), "gpu")
    prepared = harness.prepare_timing(cuda, kernel, contract, consts, _timing_request(ex))
    harness.warm_up(cuda, kernel, prepared)
    ratios, passes, unstable, seconds = [], 0, 0, []
    for _ in range(trials):
        rec = harness.measure_timing(cuda, kernel, prepared)
        seconds.append(rec["seconds"])
        if self_check_problem(rec["self_a_ms"], rec["self_b_ms"]):
            unstable += 1
            continue
        points, stats, _ = verdict(rec["student_ms"], rec["instructor_ms"], ex.timing.full_ratio,
                                   ex.timing.zero_ratio, ex.timing.points)
        ratios.append(stats.ratio)
        passes += points >= ex.timing.points
    r = np.array(ratios) if ratios else np.array([np.nan])
    return {
        "exercise": ex.name, "variant": path.name, "consts": consts, "trials": trials,
        "full_passes": int(passes), "self_check_errors": unstable,
        "ratio_p1": float(np.percentile(r, 1)), "ratio_p50": float(np.percentile(r, 50)),
        "ratio_p99": float(np.percentile(r, 99)),
        "instructor_ms_median": float(np.median(rec["instructor_ms"])),
        "seconds_per_trial": float(np.mean(seconds)),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=100)
    ap.add_argument("--exercise", action="append")
    ap.add_argument("--out")
    args = ap.parse_args()
    from numba import cuda

    rows = []
    names = args.exercise or [n for n in exercises.names() if exercises.get(n).timing]
    for name in names:
        ex = exercises.get(name)
        for path in [solution_path(ex)] + slow_variants(name):
            start = time.monotonic()
            row = run_variant(cuda, ex, path, args.trials)
            row["role"] = "solution" if path == solution_path(ex) else "known-slow"
            rows.append(row)
            print(f"{name:16} {path.name:28} {row['role']:10} passes {row['full_passes']:3}/"
                  f"{args.trials} ratio p1/p50/p99 {row['ratio_p1']:.3f}/{row['ratio_p50']:.3f}/"
                  f"{row['ratio_p99']:.3f} instr {row['instructor_ms_median']:.3f} ms "
                  f"({time.monotonic() - start:.0f} s)", flush=True)
    device = cuda.get_current_device()
    name = device.name.decode() if isinstance(device.name, bytes) else str(device.name)
    report = {"device": name, "date": time.strftime("%Y-%m-%d"), "rows": rows}
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=2))
    print("\n| exercise | variant | role | full passes | self-check errors | ratio p1 | p50 | p99 | instructor ms |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        print(f"| {r['exercise']} | {r['variant']} | {r['role']} | {r['full_passes']}/{r['trials']}"
              f" | {r['self_check_errors']} | {r['ratio_p1']:.3f} | {r['ratio_p50']:.3f} | "
              f"{r['ratio_p99']:.3f} | {r['instructor_ms_median']:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
