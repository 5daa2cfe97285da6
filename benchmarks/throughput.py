"""Grading throughput: a class of N submissions of one exercise through ``autograder batch``.

The class cycles through the instructor solution and the exercise's known-bad submissions, so
it mixes full marks, wrong answers, timeouts and timing failures like a real class. Prints the
wall time, submissions per minute and the score distribution.

Usage: python benchmarks/throughput.py [--n 300] [--exercise tiled_matmul] [--device gpu]
       [--workers-per-gpu 4] [--workers N] [--no-sanitize] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import collections
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autograder import exercises  # noqa: E402
from autograder.batch.run import run_batch  # noqa: E402
from autograder.grader import gpu_count  # noqa: E402
from autograder.exercises import mutants, solution_path  # noqa: E402


def make_class(folder: Path, exercise: str, n: int) -> None:
    ex = exercises.get(exercise)
    pool = [solution_path(ex)] * 3 + mutants(exercise)
    for i in range(n):
        shutil.copy(pool[i % len(pool)], folder / f"student{i:04d}.py")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--exercise", default="tiled_matmul")
    ap.add_argument("--device", default="auto")
    ap.add_argument("--workers", type=int)
    ap.add_argument("--workers-per-gpu", type=int, default=4)
    ap.add_argument("--no-sanitize", action="store_true")
    ap.add_argument("--out")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "class"
        folder.mkdir()
        make_class(folder, args.exercise, args.n)
        start = time.monotonic()
        store, failures = run_batch(folder, Path(tmp) / "results.sqlite", args.exercise,
                                    args.device, args.workers, None, seed=1, progress=False,
                                    workers_per_gpu=args.workers_per_gpu,
                                    sanitize=not args.no_sanitize)
        wall = time.monotonic() - start
        rows = store.rows()
    timing_status = collections.Counter(
        t["status"] for r in rows for t in r["result"]["tests"] if t["kind"] == "timing")
    report = {
        "exercise": args.exercise, "submissions": len(rows), "grader_failures": len(failures),
        "gpus": gpu_count() or 0, "workers_per_gpu": args.workers_per_gpu,
        "sanitize": not args.no_sanitize, "wall_s": round(wall, 1),
        "per_minute": round(len(rows) / wall * 60, 1),
        "scores": dict(collections.Counter(r["score"] for r in rows)),
        "timing_statuses": dict(timing_status),
        "devices": sorted({r["device"] for r in rows}),
    }
    print(json.dumps(report, indent=2))
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=2))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
