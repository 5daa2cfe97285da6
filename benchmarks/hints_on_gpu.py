"""Which performance hint each known-slow mutant gets on a GPU (issue 12's record).

    python3 benchmarks/hints_on_gpu.py [--device gpu] [--out benchmarks/results/DATE_GPU_hints.md]

Grades each mutant below with the full grader (``autograder.grader.grade``, timing included)
and prints a Markdown table: the mutant, the timing ratio to the instructor's kernel with its
95 % interval, the points (timing and total), the hint named first (its kind and line) and
whether the timing test's message names a likeliest cause. The header names the device and the
date. ``--device sim`` works too (no timing: the ratio reads "skipped"), to try it without a GPU.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

#: (label, submission, exercise): known-slow kernels and the hint each should get.
MUTANTS = [
    ("tiled_matmul naive (no tiles, float64 acc)", "assignments/tiled_matmul/mutants/naive.py",
     "tiled_matmul"),
    ("block_sum interleaved (divergent)", "assignments/block_sum/mutants/interleaved.py",
     "block_sum"),
    ("transpose unpadded tile (bank conflicts)", "assignments/transpose/mutants/unpadded_tile.py",
     "transpose"),
    ("tiled_matmul float64 accumulator", "tests/files/hints/f64_tiled_matmul.py", "tiled_matmul"),
    # issue 22: these read "no likely cause found" before (the naive matmul's no_reuse: the first
    # row; tests/files/hints/naive_matmul.py is a test fixture, not a tiled_matmul submission)
    ("block_sum loop bound from cuda.blockDim", "tests/files/hints/block_sum_blockdim.py",
     "block_sum"),
]
HINTS_TEST = "diagnostic: performance hints"
SEED = 20261122


def row(label: str, result) -> dict:
    """One table row from a graded :class:`autograder.wire.results.ExerciseResult`: ``mutant``,
    ``ratio`` (text), ``points`` (text), ``hint`` (the first hint's kind and line, or what the
    hints test said) and ``cause`` (whether the timing message names a likeliest cause)."""
    timing = next((t for t in result.tests if t.kind.value == "timing"), None)
    hints_test = next((t for t in result.tests if t.name == HINTS_TEST), None)
    stats = ((timing.details or {}).get("timing") if timing else None) or {}
    if stats.get("ratio") is not None:
        ratio = f"{stats['ratio']:.2f}x [{stats.get('low', 0):.2f}, {stats.get('high', 0):.2f}]"
    else:
        ratio = timing.status.value if timing else "no timing test"
    points = (f"timing {timing.points:g}/{timing.max_points:g}, " if timing else "") + \
        f"total {result.score:g}/{result.max_score:g}"
    found = ((hints_test.details or {}).get("hints") or []) if hints_test else []
    if found:
        first = found[0]
        hint = first["kind"] + (f" (line {first['line']})" if first.get("line") else "")
        if len(found) > 1:
            hint += "; also " + ", ".join(h["kind"] for h in found[1:4])
    else:
        hint = (hints_test.message[:60] if hints_test else "no hints test")
    cause = bool(timing and "likeliest cause" in timing.message)
    if timing and "it compared:" in timing.message:
        cause = None  # lost points, no cause found: the message says what was compared
    return {"mutant": label, "ratio": ratio, "points": points, "hint": hint,
            "cause": {True: "yes", False: "no", None: "none found (what was compared)"}[cause]}


def table(rows: list[dict], device: str, when: str | None = None) -> str:
    """The Markdown record: a header naming ``device`` and the date, then one line per row."""
    when = when or dt.date.today().isoformat()
    lines = [f"# Performance hints of known-slow mutants on {device} ({when})", "",
             "| mutant | timing ratio [95% CI] | points | hint named (first) | timing names a "
             "cause |", "| --- | --- | --- | --- | --- |"]
    for r in rows:
        cells = [str(r[k]).replace("|", "\\|") for k in ("mutant", "ratio", "points", "hint",
                                                         "cause")]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="gpu", choices=("gpu", "sim", "auto"))
    ap.add_argument("--out", type=Path, help="also write the table here")
    args = ap.parse_args(argv)
    from autograder.grader import grade

    rows, device = [], args.device
    for label, path, exercise in MUTANTS:
        result = grade(ROOT / path, exercise, device=args.device, seed=SEED)
        device = result.device
        rows.append(row(label, result))
        print(f"graded {path}: {result.score:g}/{result.max_score:g}", file=sys.stderr)
    text = table(rows, device)
    print(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
