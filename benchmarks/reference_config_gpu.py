"""Issue 30, goal 2 on a GPU: the instructor's kernel is timed at the instructor's configuration
(its own constants and launch; the fastest of its references), never at the student's.

Grades, through the command line (``autograder grade FILE -e EXERCISE --device gpu --json
--no-sanitize``), each file below and prints one markdown row per grading: score, timing
points, the ratio with its 95 % interval, the reference that was timed (and the ratio of the
choice between the solution and its run-time-bounds kernel), the constants on each side, what
was expected and whether it held.

- ``games``: the issue's naive matmul at ``TILE_WIDTH = 2`` (must lose its timing points), a
  block sum at ``BLOCK_SIZE = 64`` that skips its work at the timing size (its outputs, shaped by
  its own constants, must still be checked: timing failed, "gave wrong results"), an honest
  8x8-tile matmul (informational: the timing message must name TILE_WIDTH 8 against 16);
- ``solutions``: every timed exercise's ``solutions/<name>.py`` and ``<name>_blockdim.py``
  graded as a student;
- ``variants``: every ``assignments/<name>/variants/*.py``.

Expected: full timing points, except that a kernel whose loops are bounded by ``cuda.blockDim``
(``*_blockdim.py``, ``variants/blockdim_loop.py``) is now timed against the faster compile-time
reference where that one is faster, so it may lose some timing points, only with the
run-time loop bound named as the likeliest cause ("full|hinted").

Also prints the choice's cost: seconds of GPU-exclusive sampling spent choosing the reference
per grading (``details.timing.reference.choice_seconds``).

Usage: python benchmarks/reference_config_gpu.py [--part games,solutions,variants]
       [--jobs 2] [--device gpu] [--out FILE.md]
(about 25 gradings; with --jobs 2 roughly 8-12 minutes on an H100: run the parts in separate
calls where a call is limited to 10 minutes.)
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CONFIG = ROOT / "tests" / "files" / "timing_config"
#: (file, exercise, expectation): "lost" (timing points below full), "wrong" (timing failed
#: with wrong launches), "named" (the message names the student's constant against the
#: instructor's), "full" (full timing points), "zero" (no timing points: failed or error).
GAMES = [
    (CONFIG / "naive_tile2.py", "tiled_matmul", "lost+named"),
    (CONFIG / "block_sum_64_skips_at_timing_size.py", "block_sum", "wrong"),
    (CONFIG / "tiled_tile8.py", "tiled_matmul", "named"),
    # Issue 30's red team: the grader's answers read (a) or zeroed (b) out of bounds.
    (CONFIG / "reads_expected_out_of_bounds.py", "tiled_matmul", "zero"),
    (CONFIG / "zeroes_expected_out_of_bounds.py", "tiled_matmul", "zero"),
]


def honest_files() -> tuple[list, list]:
    """(solutions, variants) of every timed exercise: (path, exercise, expectation)."""
    from autograder import exercises

    solutions, variants = [], []
    for ex in exercises.all_exercises():
        if not ex.timing:
            continue
        for path in exercises.timing_solution_paths(ex):
            solutions.append((path, ex.name, "full|hinted" if "blockdim" in path.stem
                              else "full"))
        variants += [(path, ex.name, "full|hinted" if path.stem == "blockdim_loop" else "full")
                     for path in exercises.variants(ex.name)]
    return solutions, variants


def grade(path: Path, exercise: str, device: str) -> dict:
    out = subprocess.run([sys.executable, "-m", "autograder.cli", "grade", str(path), "-e",
                          exercise, "--device", device, "--json", "--no-sanitize"],
                         capture_output=True, text=True, cwd=ROOT, timeout=900)
    try:
        return json.loads(out.stdout)
    except json.JSONDecodeError:
        return {"score": None, "tests": [], "error": (out.stderr or out.stdout)[-300:]}


def timing_of(result: dict) -> dict | None:
    return next((t for t in result.get("tests", []) if t.get("kind") == "timing"), None)


def row(path: Path, exercise: str, want: str, result: dict) -> tuple[str, bool, float | None]:
    t = timing_of(result) or {}
    timing = (t.get("details") or {}).get("timing") or {}
    ref = timing.get("reference") or {}
    msg = t.get("message") or result.get("error") or ""
    points = t.get("points")
    ratio = (f"{timing['ratio']:.2f}x [{timing['low']:.2f}, {timing['high']:.2f}]"
             if "ratio" in timing else "-")
    choice = "; ".join(f"{a} / {b} = {r:.3f}" for a, b, r in ref.get("compared") or []) or "-"
    consts = (f"{ref.get('student_constants')} / {ref.get('constants')}"
              if ref.get("constants") else "-")
    def holds(part: str) -> bool:
        if part == "full":
            return points is not None and points == t.get("max_points")
        if part == "lost":
            return points is not None and points < t.get("max_points", 0)
        if part == "zero":  # no timing points: wrong launches, or an error (a freed buffer)
            return points == 0.0 and t.get("status") in ("failed", "error")
        if part == "wrong":
            return t.get("status") == "failed" and "gave wrong results" in msg
        if part == "named":
            return "against the instructor's" in msg and "block granularity" in msg
        if part == "hinted":  # lost some timing points, with the run-time loop bound named
            return bool(points) and "likeliest cause" in msg and "cuda.blockDim" in msg
        raise ValueError(part)

    ok = any(all(holds(p) for p in alt.split("+")) for alt in want.split("|"))
    rel = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    line = (f"| `{rel}` | {exercise} | {result.get('score')} | {points}/{t.get('max_points')} | "
            f"{ratio} | {ref.get('name', '-')} | {choice} | {consts} | {want} | "
            f"{'yes' if ok else 'NO'} |")
    return line, ok, ref.get("choice_seconds")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="gpu")
    ap.add_argument("--part", default="games,solutions,variants")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out")
    args = ap.parse_args()
    solutions, variants = honest_files()
    parts = {"games": GAMES, "solutions": solutions, "variants": variants}
    todo = [item for name in args.part.split(",") for item in parts[name.strip()]]
    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        results = list(pool.map(lambda item: grade(item[0], item[1], args.device), todo))
    lines = ["| file | exercise | score | timing | ratio [95% CI] | reference timed | "
             "choice (a / b) | yours / instructor's | expected | ok |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    bad, costs, messages = 0, [], []
    for (path, exercise, want), result in zip(todo, results):
        line, ok, cost = row(path, exercise, want, result)
        lines.append(line)
        bad += not ok
        if cost is not None:
            costs.append(cost)
        t = timing_of(result) or {}
        messages.append(f"- `{path.name}` ({exercise}): {t.get('status')} "
                        f"{(t.get('message') or result.get('error') or '')[:500]}")
    if costs:
        lines += ["", f"choice of reference: {statistics.median(costs):.3f} s median, "
                      f"{max(costs):.3f} s max of GPU-exclusive sampling per grading "
                      f"({len(costs)} gradings)"]
    lines += ["", "Timing messages:", *messages]
    text = "\n".join(lines)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
