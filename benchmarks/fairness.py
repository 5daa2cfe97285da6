"""Issue 22: identical files, identical scores. Builds a class in nbgrader's layout of copies of
every exercise's instructor solution, its known-bad submissions (``mutants/``) and its textbook
variants (``variants/``), grades it with ``autograder batch --device gpu`` (its defaults) once
with compute-sanitizer and once without, and reports for each distinct file the spread of its
scores, timing ratios and timing points across its copies and any correctness verdict that
differs between copies.

Goals (issue 22): 0 files whose copies get different correctness verdicts (any test but the
timing test); each file's timing ratio within ±3 % of the median of its copies; its timing
points within 1 point.

Usage (on a GPU, ``KERNELGRADE_SANDBOX=require`` for the issue's setting)::

    python benchmarks/fairness.py --copies 4 --out OUTDIR [--exercises block_sum transpose]
        [--sanitize on off] [--max-mutants N] [--result benchmarks/results/NAME]

Writes ``OUTDIR/fairness.json`` and ``OUTDIR/fairness.md`` (and the same at ``--result`` +
``.json`` / ``.md``); the class and its result databases stay in ``OUTDIR``. Exit status 0 when
every goal holds, 1 when one does not, 2 when a batch could not run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from autograder import exercises  # noqa: E402
from autograder.batch.store import ResultStore  # noqa: E402

RATIO_BAND = 0.03
POINTS_BAND = 1.0


def distinct_files(names: list[str], max_mutants: int | None) -> list[dict]:
    """Every file of the class before copying: ``{"id", "exercise", "kind", "path"}`` with kind
    ``solution``, ``known_bad`` or ``variant`` (``extra``: a file named by ``--extra``)."""
    files = []
    for name in names:
        folder = exercises.folder(name)
        found = [("solution", exercises.solution_path(name))]
        # Timed known-bad ones first (their ratios are what the timing goals are about).
        bad = sorted(exercises.mutants(name), key=lambda p: (
            "timing=" not in p.read_text(encoding="utf-8").split('"""')[0], p.name))
        found += [("known_bad", p) for p in bad[:max_mutants]]
        found += [("variant", p) for p in sorted((folder / "variants").glob("*.py"))]
        for kind, path in found:
            stem = "solution" if kind == "solution" else path.stem
            files.append({"id": f"{name}.{stem}", "exercise": name, "kind": kind,
                          "path": str(path)})
    return files


def build_class(root: Path, files: list[dict], copies: int) -> None:
    """``root/<student>/<exercise>/<exercise>.py``, one student per copy of each file; copies
    of one file are spread through the class (students are graded in key order)."""
    if root.exists():
        shutil.rmtree(root)
    for c in range(copies):
        for f in files:
            folder = root / f"c{c}-{f['id']}" / f["exercise"]
            folder.mkdir(parents=True)
            shutil.copy(f["path"], folder / f"{f['exercise']}.py")


def grade(root: Path, db: Path, sanitize: bool, log: Path, device: str = "gpu") -> dict:
    """Run ``autograder batch --device DEVICE`` on the class; wall seconds and exit status."""
    if db.exists():
        db.unlink()
    cmd = [sys.executable, "-m", "autograder.cli", "batch", str(root), "--db", str(db),
           "--device", device, "--sanitize" if sanitize else "--no-sanitize"]
    start = time.monotonic()
    with open(log, "w") as out:
        rc = subprocess.run(cmd, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT).returncode
    return {"seconds": round(time.monotonic() - start, 1), "exit": rc, "command": " ".join(cmd[1:])}


def _timing(result: dict) -> dict | None:
    for t in result["tests"]:
        if t["kind"] == "timing":
            d = (t.get("details") or {}).get("timing") or {}
            return {"status": t["status"], "points": t["points"], "ratio": d.get("ratio"),
                    "message": t["message"][:160], "retaken": d.get("retaken") or 0,
                    "samples": [d.get("student_ms"), d.get("instructor_ms")]}
    return None


def spreads(db: Path, files: list[dict]) -> list[dict]:
    """Per distinct file: its copies' scores, timing ratios and points, and the tests whose
    statuses differ between copies (timing excluded: its points are the spread's)."""
    rows = ResultStore(db).rows()
    by_file: dict[str, list[dict]] = {}
    for row in rows:
        student = row["key"].split("/")[0]
        by_file.setdefault(student.split("-", 1)[1], []).append(row["result"])
    out = []
    for f in files:
        results = by_file.get(f["id"], [])
        scores = [r["score"] for r in results]
        timings = [_timing(r) for r in results]
        ratios = [t["ratio"] for t in timings if t and t["ratio"]]
        points = [t["points"] for t in timings if t]
        statuses: dict[str, set] = {}
        for r in results:
            for t in r["tests"]:
                if t["kind"] != "timing":
                    statuses.setdefault(t["name"], set()).add(t["status"])
        differing = sorted(n for n, s in statuses.items() if len(s) > 1)
        differing += [f"({len(results)} copies graded)"] if len(
            {len(r["tests"]) for r in results}) > 1 else []
        med = statistics.median(ratios) if ratios else None
        ratio_dev = max((abs(x / med - 1) for x in ratios), default=0.0) if med else 0.0
        timing_statuses = sorted({t["status"] for t in timings if t})
        outliers = [t["samples"] for t in timings  # the raw samples of a copy off its median
                    if t and t["ratio"] and med and abs(t["ratio"] / med - 1) > RATIO_BAND / 2]
        out.append({**f, "copies": len(results), "scores": scores,
                    "score_spread": round(max(scores) - min(scores), 2) if scores else None,
                    "ratios": [round(x, 4) for x in ratios],
                    "ratio_median": round(med, 4) if med else None,
                    "ratio_max_dev": round(ratio_dev, 4),
                    "timing_points": points,
                    "retaken": [t["retaken"] for t in timings if t],
                    "outlier_samples": outliers,
                    "points_spread": round(max(points) - min(points), 2) if points else 0.0,
                    "timing_statuses": timing_statuses,
                    "timing_messages": sorted({t["message"] for t in timings if t
                                               and t["status"] not in ("passed", "failed")}),
                    "differing_verdicts": differing})
    return out


def goals(per_file: list[dict]) -> dict:
    """Whether the issue's goals hold over ``per_file`` (:func:`spreads`)."""
    verdicts = [f["id"] for f in per_file if f["differing_verdicts"]]
    ratios = [f["id"] for f in per_file if f["ratio_max_dev"] > RATIO_BAND]
    points = [f["id"] for f in per_file if f["points_spread"] > POINTS_BAND]
    mixed = [f["id"] for f in per_file if len(f["timing_statuses"]) > 1]
    return {"differing_correctness_verdicts": verdicts, "ratio_outside_3pct": ratios,
            "timing_points_spread_over_1": points, "timing_status_differs": mixed,
            "met": not (verdicts or ratios or points or mixed)}


def markdown(report: dict) -> str:
    lines = [f"# Fairness: identical files, identical scores (issue 22), {report['date']}", "",
             f"Device: {report['device']}; sandbox: {report['sandbox']}; "
             f"{report['distinct_files']} distinct files × {report['copies']} copies = "
             f"{report['submissions']} submissions (exercises: {', '.join(report['exercises'])}).",
             f"Command: `{report['command']}`.", ""]
    for run in report["runs"]:
        g = run["goals"]
        lines += [f"## compute-sanitizer {run['sanitize']}", "",
                  f"`{run['batch']['command']}`: exit {run['batch']['exit']}, "
                  f"{run['batch']['seconds']} s.", "",
                  f"- files whose copies differ in a correctness verdict: "
                  f"{len(g['differing_correctness_verdicts'])} {g['differing_correctness_verdicts']}",
                  f"- timing ratio beyond ±3 % of the file's median: "
                  f"{len(g['ratio_outside_3pct'])} {g['ratio_outside_3pct']}",
                  f"- timing points spread over 1 point: "
                  f"{len(g['timing_points_spread_over_1'])} {g['timing_points_spread_over_1']}",
                  f"- timing status differs between copies: "
                  f"{len(g['timing_status_differs'])} {g['timing_status_differs']}",
                  f"- **goals met: {g['met']}**", "",
                  "| file | kind | copies | scores (min–max) | timing ratio median | max dev | "
                  "timing points (min–max) | disturbed samples retaken | differing verdicts |",
                  "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        for f in run["files"]:
            sc = f"{min(f['scores']):g}–{max(f['scores']):g}" if f["scores"] else "-"
            pt = (f"{min(f['timing_points']):g}–{max(f['timing_points']):g}"
                  if f["timing_points"] else "-")
            ratio = f"{f['ratio_median']:.3f}" if f["ratio_median"] else "-"
            lines.append(f"| `{f['id']}` | {f['kind']} | {f['copies']} | {sc} | {ratio} | "
                         f"{100 * f['ratio_max_dev']:.1f} % | {pt} | "
                         f"{sum(f.get('retaken') or [])} | "
                         f"{', '.join(f['differing_verdicts']) or '-'} |")
        lines.append("")
    return "\n".join(lines) + "\n"


def _write(report: dict, targets: list[Path]) -> None:
    """The report so far as ``T.json`` and ``T.md`` for each T of ``targets`` (after each run, so
    a run cut short leaves the ones before it)."""
    text = markdown(report)
    for t in targets:
        t.parent.mkdir(parents=True, exist_ok=True)
        Path(f"{t}.json").write_text(json.dumps(report, indent=1) + "\n")
        Path(f"{t}.md").write_text(text)


def _device() -> str:
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version",
                              "--format=csv,noheader"], capture_output=True, text=True, timeout=20)
        return out.stdout.strip().splitlines()[0]
    except (OSError, IndexError, subprocess.TimeoutExpired):
        return "unknown"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--copies", type=int, default=4)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--exercises", nargs="*", default=None)
    ap.add_argument("--sanitize", nargs="+", choices=("on", "off"), default=["on", "off"])
    ap.add_argument("--max-mutants", type=int, default=None)
    ap.add_argument("--extra", nargs="*", default=[], metavar="EXERCISE=PATH",
                    help="more files to copy into the class (kind 'extra'), e.g. "
                         "tiled_matmul=tests/files/hints/f64_tiled_matmul.py")
    ap.add_argument("--device", default="gpu", help="gpu (the issue's setting) or sim (a dry run)")
    ap.add_argument("--result", type=Path, default=None,
                    help="also write RESULT.json and RESULT.md (benchmarks/results/...)")
    args = ap.parse_args(argv)
    names = args.exercises or exercises.names()
    files = distinct_files(names, args.max_mutants)
    for item in args.extra:
        name, _, path = item.partition("=")
        files.append({"id": f"{name}.{Path(path).stem}", "exercise": name, "kind": "extra",
                      "path": str((ROOT / path).resolve())})
    args.out.mkdir(parents=True, exist_ok=True)
    root = args.out / "submitted"
    build_class(root, files, args.copies)
    sandbox = subprocess.run([sys.executable, "-m", "autograder.sandbox"], cwd=ROOT,
                             capture_output=True, text=True).stdout.strip()
    report = {"date": time.strftime("%Y-%m-%d", time.gmtime()), "device": _device(),
              "sandbox": f"{sandbox} (KERNELGRADE_SANDBOX={os.environ.get('KERNELGRADE_SANDBOX', 'auto')})",
              "command": "python benchmarks/fairness.py " + " ".join(sys.argv[1:] if argv is None
                                                                      else argv),
              "exercises": names, "copies": args.copies, "distinct_files": len(files),
              "submissions": len(files) * args.copies, "runs": []}
    failed = False
    for setting in args.sanitize:
        db = args.out / f"sanitize_{setting}.sqlite"
        batch = grade(root, db, setting == "on", args.out / f"batch_{setting}.log",
                      args.device)
        failed |= batch["exit"] not in (0, 1)
        per_file = spreads(db, files) if db.exists() else []
        g = goals(per_file)
        report["runs"].append({"sanitize": setting, "batch": batch, "goals": g,
                               "files": per_file})
        print(f"sanitizer {setting}: {batch['seconds']} s, exit {batch['exit']}, goals met "
              f"{g['met']}: {json.dumps({k: v for k, v in g.items() if k != 'met'})}", flush=True)
        _write(report, [args.out / "fairness"] + ([args.result] if args.result else []))
    if failed:
        return 2
    return 0 if all(r["goals"]["met"] for r in report["runs"]) else 1


if __name__ == "__main__":
    sys.exit(main())
