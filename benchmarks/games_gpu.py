"""Issue 20's games, graded as a student's submission through the command line on a GPU (or
the simulator): each file's score and the verdict of the part the game aims at, as a markdown
table; and a kernel that prints its inputs, checked for printed values in what students see.

Usage: python benchmarks/games_gpu.py [--device gpu|sim] [--out FILE.md]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

#: (file, exercise, the test kind the game aims at, what it must get there)
GAMES = [
    ("tests/files/timing/naive_skips_at_timing_size.py", "tiled_matmul", "timing", "failed"),
    ("tests/files/timing/skips_some_launches.py", "tiled_matmul", "timing", "failed"),
    ("tests/files/timing/writes_half_at_timing_size.py", "tiled_matmul", "timing", "failed"),
    ("tests/files/timing/zeroes_inputs_at_timing_size.py", "tiled_matmul", "timing", "failed"),
    ("tests/adversarial/files/reads_expected.py", "occupancy", "correctness", "not passed"),
    ("tests/files/concept/matmul_presence_only.py", "tiled_matmul", "concept", "failed"),
    ("tests/files/concept/matmul_tile_read_math_from_global.py", "tiled_matmul", "concept",
     "failed"),
    ("tests/instrument/files/scan_barrier_at_published_size.py", "block_scan", "concept",
     "failed"),
    ("tests/instrument/files/matmul_load_guard_le.py", "matmul_any_size", "concept", "failed"),
]


def grade(path: Path, exercise: str, device: str) -> dict:
    out = subprocess.run([sys.executable, "-m", "autograder.cli", "grade", str(path), "-e",
                          exercise, "--device", device, "--json"], capture_output=True,
                         text=True, cwd=ROOT, timeout=600)
    try:
        return json.loads(out.stdout)
    except json.JSONDecodeError:
        return {"score": None, "tests": [], "error": (out.stderr or out.stdout)[-300:]}


def verdict(result: dict, kind: str) -> str:
    statuses = sorted({t["status"] for t in result.get("tests", []) if t["kind"] == kind})
    return "/".join(statuses) or "none"


def printed_check(device: str) -> str:
    """Grade test_printed_output's printing kernel; where do its printed sizes show?"""
    import ast

    test = ROOT / "tests" / "test_printed_output.py"
    consts = {}
    for node in ast.parse(test.read_text()).body:  # BASE and PRINTING, without its imports
        if isinstance(node, ast.Assign) and \
                getattr(node.targets[0], "id", "") in ("BASE", "PRINTING"):
            consts[node.targets[0].id] = eval(compile(ast.Expression(node.value), str(test),
                                                      "eval"), dict(consts))
    t = argparse.Namespace(**consts)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "printing.py"
        path.write_text(t.PRINTING)
        result = grade(path, "block_sum", device)
    student = json.dumps({"notes": result.get("notes"), "tests": result.get("tests")})
    instructor = json.dumps(result.get("instructor_notes"))
    seen = {int(m) - t.BASE for m in re.findall(r"\b9\d{8}\b", student)} - {0}
    kept = {int(m) - t.BASE for m in re.findall(r"\b9\d{8}\b", instructor)} - {0}
    return (f"printing kernel: score {result.get('score')}; sizes printed in what students see: "
            f"{sorted(seen) or 'none'}; in the instructor's notes: {len(kept)} sizes")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="gpu")
    ap.add_argument("--out")
    args = ap.parse_args()
    lines = ["| file | exercise | score | aimed at | verdict there | expected | ok |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    bad = 0
    for rel, exercise, kind, want in GAMES:
        result = grade(ROOT / rel, exercise, args.device)
        got = verdict(result, kind)
        ok = ("passed" not in got) if want == "not passed" else (want in got.split("/"))
        bad += not ok
        lines.append(f"| `{Path(rel).name}` | {exercise} | {result.get('score')} | {kind} | "
                     f"{got} | {want} | {'yes' if ok else 'NO'} |")
    lines += ["", printed_check(args.device)]
    text = "\n".join(lines)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
