"""Which work beside a timing measurement disturbs it? (issue 22's leftover outlier)

In one process on a GPU: the student's file against the instructor's kernel, measured again and
again with the grader's own method (:func:`autograder.child.timing.measure_timing`: self-check,
interleaved rounds, L2 flush, every launch checked, the exercise's thresholds, so a kernel near
1.0x settles after ``min_rounds``), while a background process does one kind of GPU-adjacent
work that the GPU lock does not cover. Each mode reports the measured ratios and every round
whose ratio is off the quiet median by more than ``--spike`` (a disturbed round).

Modes: ``none`` (quiet), ``smi`` (``nvidia-smi --query-gpu`` in a loop, as the preflight's key
and the cluster's sizing ask), ``smi_l`` (``nvidia-smi -L``), ``nvml`` (NVML polling like Dask's
system monitor, when ``pynvml`` is importable), ``context`` (processes creating a CUDA context
and exiting), ``teardown`` (processes allocating 2 GiB and exiting), ``cpu`` (every core busy on
the host).

Usage: python benchmarks/disturbance.py EXERCISE FILE [--measurements 12] [--modes a,b]
       [--out FILE.json]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PY = sys.executable
LOOPS = {
    "none": "sleep 100000",
    "smi": "while :; do nvidia-smi --query-gpu=index,uuid,name,driver_version,compute_cap "
           "--format=csv,noheader >/dev/null; sleep 0.2; done",
    "smi_l": "while :; do nvidia-smi -L >/dev/null; sleep 0.2; done",
    "nvml": f"{PY} -c 'import pynvml,time\npynvml.nvmlInit()\nh=pynvml.nvmlDeviceGetHandleByIndex(0)\n"
            "while True:\n pynvml.nvmlDeviceGetUtilizationRates(h); pynvml.nvmlDeviceGetMemoryInfo(h)\n"
            " time.sleep(0.1)'",
    "context": f"while :; do {PY} -c 'from numba import cuda; cuda.current_context()'; done",
    "teardown": f"while :; do {PY} -c 'import numpy as np; from numba import cuda; "
                "a = cuda.device_array(1 << 29, np.float32); cuda.synchronize()'; done",
    "cpu": " & ".join([f"{PY} -c 'while True: pass'"] * (os.cpu_count() or 4)) + " & wait",
}


def prepared_for(exercise_name: str, student_file: str):
    from numba import cuda

    from autograder import exercises
    from autograder.grading import plan
    from autograder.child.timing import import_solution, prepare_timing, warm_up

    exercise = exercises.get(exercise_name)
    timing = plan.timing_request(exercise)
    contract = exercise.contract
    solution = import_solution(timing.solution_path, {}, timing.solution_source)
    consts = {c.name: getattr(solution, c.name) for c in contract.constants}
    student = import_solution(student_file, consts)
    kernel = getattr(student, contract.kernel)
    kernel.targetoptions["lineinfo"] = True  # as a timed child compiles it
    prepared = prepare_timing(cuda, kernel, contract, consts, timing)
    warm_up(cuda, kernel, prepared)
    return cuda, kernel, prepared


def clocks() -> str:
    out = subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm,clocks.mem,temperature.gpu,"
                          "power.draw,clocks_event_reasons.active", "--format=csv,noheader"],
                         capture_output=True, text=True)
    return out.stdout.strip() or out.stderr.strip()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("exercise")
    ap.add_argument("file")
    ap.add_argument("--measurements", type=int, default=12)
    ap.add_argument("--modes", default=",".join(LOOPS))
    ap.add_argument("--spike", type=float, default=0.10)
    ap.add_argument("--out")
    args = ap.parse_args()
    from autograder.child.timing import measure_timing
    from autograder.timing.measure import ratio_stats

    from autograder.timing import measure as timing

    cuda, kernel, prepared = prepared_for(args.exercise, args.file)
    pairs = []  # every time_pair's whole answer (warm-up times included)
    time_pair = timing.time_pair

    def recording(*a, **kw):
        pairs.append(time_pair(*a, **kw))
        return pairs[-1]
    timing.time_pair = recording
    report = {"exercise": args.exercise, "file": args.file, "modes": {}}
    quiet = None
    for mode in args.modes.split(","):
        if mode == "nvml":
            try:
                import pynvml  # noqa: F401
            except ImportError:
                report["modes"][mode] = {"skipped": "pynvml is not installed"}
                print(mode, "skipped: no pynvml", flush=True)
                continue
        bg = subprocess.Popen(["bash", "-c", LOOPS[mode]], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)
        time.sleep(1.5)
        rows = []
        for _ in range(args.measurements):
            m = measure_timing(cuda, kernel, prepared)
            s = ratio_stats(m["student_ms"], m["instructor_ms"])
            per_round = [a / b for a, b in zip(m["student_ms"], m["instructor_ms"])]
            rows.append({"ratio": s.ratio, "rounds": s.rounds, "per_round": per_round,
                         "retaken": m.get("retaken"), "warmup_ms": pairs[-1].get("warmup_ms"),
                         "late": pairs[-1].get("late"),
                         "student_ms": m["student_ms"], "instructor_ms": m["instructor_ms"]})
        os.killpg(bg.pid, 9)
        bg.wait()
        ratios = [r["ratio"] for r in rows]
        if quiet is None:
            quiet = statistics.median(ratios)
        spikes = [(i, j, round(x, 3)) for i, r in enumerate(rows)
                  for j, x in enumerate(r["per_round"]) if abs(math.log(x / quiet)) > args.spike]
        summary = {"ratios": [round(x, 4) for x in ratios],
                   "median": round(statistics.median(ratios), 4),
                   "max_dev": round(max(abs(x / quiet - 1) for x in ratios), 4),
                   "rounds": [r["rounds"] for r in rows], "spikes": spikes,
                   "retaken": sum(r["retaken"] or 0 for r in rows),
                   "late": sum(r["late"] or 0 for r in rows),
                   "clocks_after": clocks(), "rows": rows}
        report["modes"][mode] = summary
        print(f"{mode:9s} median {summary['median']:.4f} max_dev {summary['max_dev']:.3f} "
              f"retaken {summary['retaken']} (late {summary['late']}) spikes {spikes[:12]} | {summary['clocks_after']}",
              flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
