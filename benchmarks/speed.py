"""Grading speed (issue 13): what one grading, the solutions check and a class cost, beside the
fresh-Python floor; the goals' table last, in markdown.

Measured, each as a user runs it (fresh processes, the ``autograder`` command line):

* **floor**: a fresh Python that imports Numba, compiles the instructor's ``tiled_matmul`` and
  launches it once (what no grading can beat: interpreter, Numba, CUDA context or simulator
  start-up, one JIT): 64×64 on a GPU; on the simulator 33×33, the largest simulator case, with
  the harness's thread switch interval (``autograder.child.harness.SIM_SWITCH_INTERVAL``);
* **grade**: ``autograder grade SOLUTION -e tiled_matmul --json`` with ``--no-sanitize`` and
  (on a GPU) with the sanitizer, each with a *cold* preflight (an empty cache folder:
  the instructor solution is graded first, :mod:`autograder.grading.preflight`) and a *warm* one (a
  cache filled once before), ``--runs`` times each; p50 and every run;
* **solutions** (GPU; on the simulator only with ``--steps``): ``autograder solutions`` wall
  time and its progress lines (one per exercise expected);
* **class**: ``autograder batch`` of ``--class-n`` submissions (the solution and the known-bad
  submissions in turn, :func:`throughput.make_class`), with an empty preflight cache, on one GPU
  (``CUDA_VISIBLE_DEVICES`` = the first) and, when two are visible, on two; submissions per
  minute and the speed-up. On the simulator: one class on this machine's cores.

Usage (from the repository root; on the device machine through ``benchmarks/gpu_checks.sh``'s
``speed`` step)::

    python benchmarks/speed.py --device gpu [--runs 5] [--class-n 300] [--workers-per-gpu N]
    python benchmarks/speed.py --device sim --runs 3 --class-n 4    # here, small
    [--steps floor,grade,solutions,class] [--out FILE.json] [--keep-class-db DIR]

Exit status 0 whatever the numbers (they are for the lead's results file); 1 when a command
failed (its output is in the JSON).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from throughput import make_class  # noqa: E402

from autograder import exercises  # noqa: E402
from autograder.grader import gpu_count, resolve_device  # noqa: E402

EXERCISE = "tiled_matmul"
AG = [sys.executable, "-m", "autograder.cli"]

# The floor: import Numba, compile the solution, launch it once (argv: solution path, width,
# switch interval or "").
FLOOR = r"""
import importlib.util, math, sys, time
t0 = time.perf_counter()
if sys.argv[3]:
    sys.setswitchinterval(float(sys.argv[3]))
import numpy as np
from numba import cuda
spec = importlib.util.spec_from_file_location("solution", sys.argv[1])
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
w, t = int(sys.argv[2]), mod.TILE_WIDTH
rng = np.random.default_rng(0)
A = rng.standard_normal((w, w), dtype=np.float32)
B = rng.standard_normal((w, w), dtype=np.float32)
dA, dB, dC = cuda.to_device(A), cuda.to_device(B), cuda.device_array((w, w), np.float32)
g = math.ceil(w / t)
mod.tiled_matmul[(g, g), (t, t)](dA, dB, dC)
cuda.synchronize()
C = dC.copy_to_host()
assert np.allclose(C, A @ B, rtol=1e-3, atol=1e-3), "wrong result"
print(f"{time.perf_counter() - t0:.3f}")
"""

# The goals: (row key, what, limit, unit); judged where the row was measured.
GOALS = {
    "grade_nosan_warm": ("one grading, sandbox, no sanitizer (p50)", 2.0, "s"),
    "grade_nosan_ratio": ("… over the fresh-Python floor", 1.2, "×"),
    "grade_san_warm": ("one grading with the sanitizer (p50)", 3.5, "s"),
    "class_1gpu": ("class of 300 on one GPU", 90.0, "s"),
    "class_1gpu_san": ("class of 300 on one GPU, sanitizer on", 240.0, "s"),
    "class_speedup": ("two GPUs over one", 1.9, "× (at least)"),
    "solutions": ("`autograder solutions --device gpu`", 60.0, "s"),
    "grade_sim_warm": ("one simulator grading of tiled_matmul (p50)", 8.0, "s"),
}


def _run(cmd: list[str], env: dict | None = None, timeout: float = 1800) -> dict:
    """Run ``cmd``; its wall seconds, exit status and output tails."""
    start = time.monotonic()
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=timeout,
                             env={**os.environ, **(env or {})})
        rc, stdout, stderr = out.returncode, out.stdout, out.stderr
    except subprocess.TimeoutExpired as exc:
        rc, stdout, stderr = 124, str(exc.stdout or ""), str(exc.stderr or "")
    return {"wall_s": round(time.monotonic() - start, 3), "rc": rc, "stdout": stdout,
            "stderr": stderr}


def _host_cpu() -> tuple[int, int]:
    """This host's CPU clock ticks so far, busy (user, nice, system, irq, softirq) and idle
    (idle, iowait), from ``/proc/stat``; (0, 0) where it cannot be read."""
    try:
        with open("/proc/stat") as f:
            ticks = [int(x) for x in f.readline().split()[1:8]]
    except (OSError, ValueError):
        return 0, 0
    idle = ticks[3] + ticks[4]
    return sum(ticks) - idle, idle


def _p50(values: list[float]) -> float | None:
    return round(statistics.median(values), 3) if values else None


def floor(backend: str, runs: int, report: dict) -> None:
    """A fresh Python that imports Numba, compiles the solution and launches it once."""
    try:
        from autograder.child.harness import SIM_SWITCH_INTERVAL
    except ImportError:  # moved: the value measured in 2026-11-22_sim_speed.md
        SIM_SWITCH_INTERVAL = 2e-4
    env = {"NUMBA_ENABLE_CUDASIM": "1"} if backend == "sim" else {}
    args = ["33", str(SIM_SWITCH_INTERVAL)] if backend == "sim" else ["64", ""]
    solution = str(exercises.solution_path(EXERCISE))
    walls = []
    for i in range(runs):
        r = _run([sys.executable, "-c", FLOOR, solution, *args], env)
        if r["rc"] != 0:
            report["errors"].append(f"floor run {i}: rc {r['rc']}: {r['stderr'][-500:]}")
            continue
        walls.append(r["wall_s"])
        print(f"floor {i}: {r['wall_s']:.2f} s", flush=True)
    report["floor"] = {"runs_s": walls, "p50_s": _p50(walls)}


def grade(backend: str, runs: int, report: dict) -> None:
    """``autograder grade`` of the solution: cold and warm preflight cache, with and without
    the sanitizer (GPU only)."""
    solution = str(exercises.solution_path(EXERCISE))
    sanitize_choices = (False, True) if backend == "gpu" else (False,)
    for sanitize in sanitize_choices:
        for cache in ("cold", "warm"):
            key = f"grade_{'san' if sanitize else 'nosan'}_{cache}"
            walls, phases, scores = [], [], set()
            with tempfile.TemporaryDirectory(prefix="kernelgrade-speed-cache-") as warm_dir:
                cmd = AG + ["grade", solution, "-e", EXERCISE, "--device", backend, "--json",
                            "--seed", "1"] + ([] if sanitize else ["--no-sanitize"])
                if cache == "warm":  # fill the cache once (not counted)
                    _run(cmd, {"KERNELGRADE_CACHE_DIR": warm_dir})
                for i in range(runs):
                    with tempfile.TemporaryDirectory(prefix="kernelgrade-speed-cold-") as cold:
                        r = _run(cmd, {"KERNELGRADE_CACHE_DIR":
                                       warm_dir if cache == "warm" else cold})
                    if r["rc"] != 0:
                        report["errors"].append(f"{key} run {i}: rc {r['rc']}: "
                                                f"{r['stderr'][-500:]}")
                        continue
                    result = json.loads(r["stdout"])
                    walls.append(r["wall_s"])
                    phases.append(result.get("phases_s"))
                    scores.add(f"{result['score']:g}/{result['max_score']:g}")
                    print(f"{key} {i}: {r['wall_s']:.2f} s {result.get('phases_s')}", flush=True)
            report[key] = {"runs_s": walls, "p50_s": _p50(walls), "phases_s": phases,
                           "scores": sorted(scores)}


def solutions(backend: str, report: dict) -> None:
    """``autograder solutions`` on ``backend``: wall time and its progress lines."""
    r = _run(AG + ["solutions", "--device", backend])
    lines = [ln for ln in r["stderr"].splitlines() if ln.startswith("[")]
    wrong = next((ln for ln in r["stdout"].splitlines() if "wrong verdict" in ln), "?")
    report["solutions"] = {"wall_s": r["wall_s"], "rc": r["rc"], "progress_lines": lines,
                           "exercises": len(exercises.names()), "summary": wrong,
                           # the table's rows of a wrong verdict (rich may fold a row in two)
                           "wrong_rows": [ln for ln in r["stdout"].splitlines() if "WRONG" in ln],
                           "table": r["stdout"][-6000:]}
    print(f"solutions: {r['wall_s']:.1f} s, rc {r['rc']}, {len(lines)} progress lines, {wrong}",
          flush=True)
    if r["rc"] not in (0, 1):
        report["errors"].append(f"solutions: rc {r['rc']}: {r['stderr'][-500:]}")


def _class(backend: str, n: int, gpus: list[str] | None, workers_per_gpu: int | None,
           sanitize: bool, keep: str | None = None) -> dict:
    """One ``autograder batch`` of ``n`` submissions, a fresh store and preflight cache. The
    store is copied into the folder ``keep`` when given (a score to look into later)."""
    from autograder.batch.store import ResultStore

    with tempfile.TemporaryDirectory(prefix="kernelgrade-speed-class-") as tmp:
        folder = Path(tmp) / "class"
        folder.mkdir()
        make_class(folder, EXERCISE, n)
        db = Path(tmp) / "results.sqlite"
        env = {"KERNELGRADE_CACHE_DIR": str(Path(tmp) / "cache")}
        cmd = AG + ["batch", str(folder), "-e", EXERCISE, "--device", backend, "--db", str(db),
                    "--seed", "1"] + ([] if sanitize else ["--no-sanitize"])
        if gpus is not None:
            env["CUDA_VISIBLE_DEVICES"] = ",".join(gpus)
            if workers_per_gpu:  # else batch's default for this host
                cmd += ["--workers-per-gpu", str(workers_per_gpu)]
        busy0, idle0 = _host_cpu()
        r = _run(cmd, env)
        busy, idle = (a - b for a, b in zip(_host_cpu(), (busy0, idle0)))
        rows = ResultStore(db).rows() if db.exists() else []
        if keep and db.exists():
            Path(keep).mkdir(parents=True, exist_ok=True)
            shutil.copy(db, Path(keep) / f"class_{n}_{len(gpus) if gpus else 0}gpu.sqlite")
    scores: dict[str, int] = {}
    for row in rows:
        scores[f"{row['score']:g}"] = scores.get(f"{row['score']:g}", 0) + 1
    return {"wall_s": r["wall_s"], "rc": r["rc"], "stored": len(rows), "n": n,
            "per_minute": round(len(rows) / r["wall_s"] * 60, 1) if r["wall_s"] else None,
            "gpus": len(gpus) if gpus else 0,
            "workers_per_gpu": (workers_per_gpu or "default") if gpus else None,
            "sanitize": sanitize, "scores": scores, "stderr_tail": r["stderr"][-800:],
            # The whole host's CPU over the batch (its start-up and preflight included).
            "host_busy_pct": round(100 * busy / (busy + idle), 1) if busy + idle else None,
            "host_cpu_s_per_submission":
                round(busy / os.sysconf("SC_CLK_TCK") / len(rows), 2) if rows else None}


def batch(backend: str, n: int, workers_per_gpu: int | None, sanitize: bool, report: dict,
          keep: str | None = None) -> None:
    """A class on one GPU and, when two are visible, on two (or on the simulator's cores)."""
    if backend == "sim":
        report["class_sim"] = _class("sim", n, None, 0, sanitize, keep)
        print(f"class_sim: {report['class_sim']['wall_s']:.1f} s", flush=True)
        return
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    ids = visible.split(",") if visible else [str(i) for i in range(gpu_count() or 1)]
    for k, key in ((1, "class_1gpu"), (2, "class_2gpu")):
        if len(ids) < k:
            continue
        report[key] = _class("gpu", n, ids[:k], workers_per_gpu, sanitize, keep)
        c = report[key]
        print(f"{key}: {c['wall_s']:.1f} s, {c['stored']} stored, rc {c['rc']}", flush=True)
        if c["rc"] != 0 or c["stored"] != n:
            report["errors"].append(f"{key}: rc {c['rc']}, {c['stored']} of {n} stored: "
                                    f"{c['stderr_tail']}")


def table(report: dict, backend: str) -> str:
    """The markdown table: each measure, its goal where the issue sets one, and whether it
    is met."""
    def val(key, field="p50_s"):
        return (report.get(key) or {}).get(field)

    rows = []
    floor_s = val("floor")
    rows.append(("fresh-Python floor (import, compile, one launch; p50)", floor_s, None))
    for key in ("grade_nosan_cold", "grade_nosan_warm", "grade_san_cold", "grade_san_warm"):
        if key in report:
            san, cache = key.split("_")[1:]
            what = (f"one grading, {'sanitizer' if san == 'san' else 'no sanitizer'}, "
                    f"{cache} preflight cache (p50 of {len(report[key]['runs_s'])})")
            goal_key = ("grade_sim_warm" if backend == "sim" and key == "grade_nosan_warm"
                        else key)
            rows.append((what, val(key), goal_key if goal_key in GOALS else None))
    if floor_s and val("grade_nosan_warm"):
        ratio = round(val("grade_nosan_warm") / floor_s, 2)
        rows.append(("one grading (no sanitizer, warm) over the floor", ratio,
                     "grade_nosan_ratio" if backend == "gpu" else None))
    if "solutions" in report:
        s = report["solutions"]
        rows.append((f"`autograder solutions --device {backend}` ({len(s['progress_lines'])} "
                     f"progress lines for {s['exercises']} exercises; {s['summary']})",
                     s["wall_s"], "solutions" if backend == "gpu" else None))
    for key in ("class_sim", "class_1gpu", "class_2gpu"):
        if key in report:
            c = report[key]
            where = (f"{c['gpus']} GPU(s), {c['workers_per_gpu']} workers per GPU"
                     if c["gpus"] else "simulator, one worker per core")
            san = "sanitizer on" if c.get("sanitize") else "no sanitizer"
            goal_key = None
            if key == "class_1gpu" and c["n"] == 300:
                goal_key = "class_1gpu_san" if c.get("sanitize") else "class_1gpu"
            rows.append((f"class of {c['n']} through `batch` ({where}, {san}; "
                         f"{c['per_minute']} per minute)", c["wall_s"], goal_key))
    if "class_1gpu" in report and "class_2gpu" in report:
        speedup = round(report["class_1gpu"]["wall_s"] / report["class_2gpu"]["wall_s"], 2)
        rows.append(("two GPUs over one (class wall time)", speedup, "class_speedup"))
    out = ["| measure | value | goal | met |", "| --- | --- | --- | --- |"]
    for what, value, goal_key in rows:
        unit = "×" if "over" in what else "s"
        shown = "—" if value is None else f"{value:g} {unit}"
        goal, met = "", ""
        if goal_key and value is not None:
            _, limit, goal_unit = GOALS[goal_key]
            at_least = goal_key == "class_speedup"
            goal = f"{'≥' if at_least else '≤'} {limit:g} {goal_unit.split()[0]}"
            met = "yes" if (value >= limit if at_least else value <= limit) else "**no**"
        out.append(f"| {what} | {shown} | {goal} | {met} |")
    return "\n".join(out)


def machine(backend: str) -> dict:
    """Where this ran: CPU cores, GPU names, versions, the sandbox."""
    from autograder.sandbox import mode

    facts = {"host_cores": os.cpu_count(), "python": platform.python_version(),
             "machine": platform.processor() or platform.machine(),
             "sandbox": "bubblewrap" if mode.sandbox_status().available else
             f"plain ({mode.sandbox_status().reason})", "backend": backend,
             "load_avg_start": os.getloadavg()}
    smi = shutil.which("nvidia-smi")
    if backend == "gpu" and smi:
        out = subprocess.run([smi, "--query-gpu=name,driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True)
        facts["gpus"] = out.stdout.strip().splitlines()
    return facts


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="auto", help="auto, gpu or sim")
    ap.add_argument("--runs", type=int, help="gradings per configuration (5 on a GPU, 3 on "
                                             "the simulator)")
    ap.add_argument("--class-n", type=int, help="class size (300 on a GPU, 4 on the simulator)")
    ap.add_argument("--workers-per-gpu", type=int,
                    help="batch's --workers-per-gpu (default: batch's own default)")
    ap.add_argument("--class-sanitize", action="store_true",
                    help="run the class with the sanitizer (default: --no-sanitize)")
    ap.add_argument("--steps", help="comma-separated: floor, grade, solutions, class (default: "
                                    "all on a GPU; floor, grade, class on the simulator)")
    ap.add_argument("--out", help="write every number here (JSON)")
    ap.add_argument("--keep-class-db", metavar="DIR",
                    help="copy each class's result store (SQLite) into this folder")
    args = ap.parse_args()
    backend = resolve_device(args.device)
    runs = args.runs or (5 if backend == "gpu" else 3)
    class_n = args.class_n or (300 if backend == "gpu" else 4)
    steps = (args.steps.split(",") if args.steps else
             ["floor", "grade", "solutions", "class"] if backend == "gpu" else
             ["floor", "grade", "class"])
    report: dict = {"machine": machine(backend), "steps": steps, "errors": []}
    print(json.dumps(report["machine"]), flush=True)
    if "floor" in steps:
        floor(backend, runs, report)
    if "grade" in steps:
        grade(backend, runs, report)
    if "solutions" in steps:
        solutions(backend, report)
    if "class" in steps:
        batch(backend, class_n, args.workers_per_gpu, args.class_sanitize, report,
              args.keep_class_db)
    report["machine"]["load_avg_end"] = os.getloadavg()
    report["table"] = table(report, backend)
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1))
    for e in report["errors"]:
        print(f"error: {e}", file=sys.stderr)
    print()
    print(report["table"])
    return 1 if report["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
