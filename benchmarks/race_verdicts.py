"""Do racy kernels get one verdict? (issue 22) Grades each racy file below several times and
compares the correctness verdicts the outputs alone gave with those the race rule gives
(:func:`autograder.judge.cases.apply_race_verdict`).

    python3 benchmarks/race_verdicts.py [--device sim|gpu] [--runs 4] [--jobs 2] \
        [--seeds 20261122,99] [--sanitize both|on|off] [--out FILE]

Each file is graded ``--runs`` times per seed, ``--jobs`` gradings at a time (on a GPU their
cases share it, as in a class), alternating compute-sanitizer on and off with ``--sanitize
both``. A decided case keeps what its outputs got in ``details["observed"]``, so one set of
gradings gives both columns: "outputs alone" counts a case's points when its outputs passed,
"race rule" is the grade. A column is deterministic when every grading of the file at one seed
gave the same per-case verdicts (``distinct`` is 1 per seed). Prints a Markdown table naming
the device and the date.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

#: (label, submission, exercise): kernels whose outputs depend on the threads' order.
RACY = [
    ("transpose without its barrier", "assignments/transpose/mutants/missing_barrier.py",
     "transpose"),
    ("block_sum without the step barrier",
     "assignments/block_sum/mutants/missing_step_barrier.py", "block_sum"),
    ("block_sum barrier inside the branch",
     "assignments/block_sum/mutants/barrier_in_branch.py", "block_sum"),
    ("tiled_matmul without the second barrier",
     "assignments/tiled_matmul/mutants/missing_second_barrier.py", "tiled_matmul"),
    ("tiled_matmul early return before the barriers", "tests/files/racy/early_return_matmul.py",
     "tiled_matmul"),
]


def verdicts(result) -> tuple[tuple, tuple, float, float]:
    """(per-case verdicts by outputs alone, per-case verdicts graded, their points): a case's
    verdict is (name, status); outputs alone read ``details["observed"]`` where the race rule
    decided."""
    alone, graded, p_alone, p_graded = [], [], 0.0, 0.0
    for t in result.tests:
        if t.kind.value != "correctness":
            continue
        observed = (t.details or {}).get("observed", t.status.value)
        alone.append((t.name, observed))
        graded.append((t.name, t.status.value))
        p_alone += t.max_points if observed == "passed" else 0.0
        p_graded += t.points
    return tuple(alone), tuple(graded), p_alone, p_graded


def _span(values) -> str:
    lo, hi = min(values), max(values)
    return f"{lo:g}" if lo == hi else f"{lo:g}–{hi:g}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="sim", choices=("gpu", "sim", "auto"))
    ap.add_argument("--runs", type=int, default=2, help="gradings per file and seed")
    ap.add_argument("--jobs", type=int, default=1, help="gradings at a time")
    ap.add_argument("--seeds", default="20261122,99")
    ap.add_argument("--sanitize", default="both", choices=("both", "on", "off"))
    ap.add_argument("--out", type=Path, help="also write the table here")
    args = ap.parse_args(argv)
    from autograder.grader import grade

    seeds = [int(s) for s in args.seeds.split(",")]
    jobs = []
    for label, path, exercise in RACY:
        for seed in seeds:
            for i in range(args.runs):
                sanitize = {"on": True, "off": False}.get(args.sanitize, i % 2 == 0)
                jobs.append((label, path, exercise, seed, sanitize))

    def one(job):
        label, path, exercise, seed, sanitize = job
        result = grade(ROOT / path, exercise, device=args.device, seed=seed, sanitize=sanitize)
        print(f"graded {path} seed {seed} sanitize {sanitize}: {result.score:g}",
              file=sys.stderr)
        return job, result

    # One grading per exercise first, alone: its preflight (the instructor's solution) is then
    # remembered on disk before gradings run side by side.
    first = {job[2]: i for i, job in reversed(list(enumerate(jobs)))}
    done = [one(jobs[i]) for i in sorted(first.values())]
    rest = [job for i, job in enumerate(jobs) if i not in first.values()]
    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        done += list(pool.map(one, rest))
    device = done[0][1].device if done else args.device
    lines = [f"# Racy kernels' correctness verdicts on {device} ({dt.date.today().isoformat()})",
             "", f"{args.runs} gradings per file and seed (seeds {args.seeds}), {args.jobs} at "
             "a time, compute-sanitizer " + ("none (the simulator)" if device == "sim"
                                             else args.sanitize) + ".", "",
             "| kernel | outputs alone: points | distinct verdicts per seed | race rule: points "
             "| distinct verdicts per seed | score |", "| --- | --- | --- | --- | --- | --- |"]
    for label, _, _ in RACY:
        mine = [(job, r) for job, r in done if job[0] == label]
        rows = [(job[3], verdicts(r), r.score) for job, r in mine]
        alone = [v[2] for _, v, _ in rows]
        graded = [v[3] for _, v, _ in rows]
        distinct_alone = [len({v[0] for s, v, _ in rows if s == seed}) for seed in seeds]
        distinct_graded = [len({v[1] for s, v, _ in rows if s == seed}) for seed in seeds]
        lines.append(f"| {label} | {_span(alone)} | {'/'.join(map(str, distinct_alone))} | "
                     f"{_span(graded)} | {'/'.join(map(str, distinct_graded))} | "
                     f"{_span([sc for _, _, sc in rows])} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
