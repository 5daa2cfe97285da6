"""Where one grading's time and CPU go (issue 13): a timeline of one in-process grading, and the
CPU each kind of child costs on its own.

* **timeline**: :func:`autograder.grader.grade` of the instructor's ``tiled_matmul`` with the
  grader's steps wrapped to log when they start and end (device choice, preflight, case
  planning, every child and the records it sent, the GPU lock's holds, judging, hints);
  milliseconds from the call, one line each;
* **costs**: each kind of child of a grading run alone, one after another, with the CPU seconds
  it used (user + system of the whole process tree, read from ``/proc`` by the sandbox) and its wall
  time: the sum is what a class pays per submission on the host's cores.

Usage (repository root; on the device machine with the carried wheels on ``PYTHONPATH``)::

    python benchmarks/timeline.py --device gpu [--no-sanitize] [--repeat 2] [--costs]

Prints the timelines, then the costs' table, in markdown. Exit status 0.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autograder import exercises, grader
from autograder.grading import children
from autograder.judge import diagnostics
from autograder.host import gpulock
from autograder.judge import collect as judge
from autograder.grading import plan
from autograder.sandbox import run as sandbox
from autograder.grading import preflight as preflight_mod  # noqa: E402
from autograder.grading import steps  # noqa: E402

EXERCISE = "tiled_matmul"
_t0 = [0.0]
_events: list[tuple[float, str]] = []
_lock = threading.Lock()


def _log(text: str) -> None:
    with _lock:
        _events.append(((time.perf_counter() - _t0[0]) * 1000, text))


def _kind(request: dict, wrapper=()) -> str:
    label = f"{request['backend']}:{'+'.join(request['phases'])}"
    if wrapper:
        label += " under " + " ".join(w for w in wrapper if w.startswith("--tool") or
                                      w in ("memcheck", "racecheck", "synccheck", "initcheck"))
    return label


def _wrap_run_child(original):
    def run_child(request, backend, limits, work, *args, **kw):
        kind = _kind(request, kw.get("wrapper", ()))
        start = time.perf_counter()
        _log(f"spawn {kind}")
        run = original(request, backend, limits, work, *args, **kw)
        base = (start - _t0[0]) * 1000
        for header, _ in run.records:
            if "_arrived" in header:
                with _lock:
                    _events.append((base + header["_arrived"] * 1000,
                                    f"  {kind} sent {header.get('type')}"
                                    + (f" {header.get('id')}" if header.get("id") is not None
                                       else "")))
        _log(f"end {kind} ({run.ended}, {run.seconds:.2f} s)")
        return run
    return run_child


def _wrap_lock(original):
    @contextlib.contextmanager
    def gpu(exclusive):
        mode = "exclusive" if exclusive else "shared"
        _log(f"GPU lock: ask {mode}")
        with original(exclusive):
            _log(f"GPU lock: hold {mode}")
            try:
                yield
            finally:
                _log(f"GPU lock: let go {mode}")
    return gpu


def _wrap(module, name):
    original = getattr(module, name)

    def wrapped(*args, **kw):
        _log(f"{name} begins")
        try:
            return original(*args, **kw)
        finally:
            _log(f"{name} ends")
    setattr(module, name, wrapped)


def instrument() -> None:
    """Wrap the grader's steps so that :func:`_log` records them."""
    for module in (children, diagnostics):
        module.run_child = _wrap_run_child(module.run_child)
    gpulock.gpu = _wrap_lock(gpulock.gpu)
    for module, name in ((grader, "resolve_device"), (preflight_mod, "start"),
                         (plan, "make_cases"), (judge, "collect"), (steps, "_add_notes")):
        _wrap(module, name)


def timeline(device: str, sanitize: bool) -> list[tuple[float, str]]:
    """One grading of the instructor's solution, its events in order (ms, text)."""
    _events.clear()
    _t0[0] = time.perf_counter()
    result = grader.grade(exercises.solution_path(EXERCISE), EXERCISE, device=device,
                          sanitize=sanitize)
    _log(f"graded: {result.score:g}/{result.max_score:g} on {result.device}")
    return sorted(_events)


def costs(device: str) -> list[tuple[str, float, float]]:
    """Each kind of child of one grading alone: (kind, CPU s, wall s)."""
    ex = exercises.get(EXERCISE)
    backend = grader.resolve_device(device)
    limits = grader.default_limits(backend)
    cases = [c for c in plan.make_cases(ex, 1) if backend == "gpu" or c.spec.sim]
    diagnose = plan.evidence_cases(ex, cases, 1)
    rows = []
    with sandbox.scratch_dir() as tmp:
        work = Path(tmp)
        (work / "submission.py").write_text(exercises.solution_path(ex).read_text())

        def req(back, phases, cs=(), **kw):
            return plan.request(ex, back, phases, work / "submission.py", list(cs), None, **kw)

        if backend == "gpu":  # one child: the cases, then the timing
            graded = plan.request(ex, "gpu", ["compile", "run", "time"], work / "submission.py",
                                  cases, plan.timing_request(ex))
            jobs = [("graded (cases, then timing)", graded, "gpu", {})]
            from autograder.judge import sanitizer
            if sanitizer.executable():
                for tool in sanitizer.TOOLS:
                    jobs.append((f"sanitizer {tool}", req("gpu", ["run"],
                                                          plan.sanitizer_cases(cases),
                                                          lineinfo=True), "gpu",
                                 {"wrapper": tuple(sanitizer.command(tool, str(work / "s.log")))}))
        else:
            jobs = [("correctness", req(backend, ["compile", "run"], cases), backend, {})]
        jobs.append(("instrumented (simulator)", req("sim", ["instrument"], diagnose=diagnose),
                     "sim", {}))
        jobs.append(("compile check (no GPU)", req("compile", ["compile"]), "compile", {}))
        for label, request, back, kw in jobs:
            start = time.perf_counter()
            # The CPU clock makes the sandbox read the tree's CPU time from /proc to the end
            # (the sandbox kills its tree when done: RUSAGE_CHILDREN would miss the reaped).
            run = sandbox.run_child(request, back, replace(limits, clock="cpu"), work, **kw)
            rows.append((f"{label} [{run.ended}]", run.cpu_seconds or 0.0,
                         time.perf_counter() - start))
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="auto")
    ap.add_argument("--no-sanitize", action="store_true")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--costs", action="store_true")
    args = ap.parse_args(argv)
    instrument()
    for i in range(args.repeat):
        print(f"\n## Timeline {i + 1} ({'no ' if args.no_sanitize else ''}sanitizer)\n")
        for ms, text in timeline(args.device, not args.no_sanitize):
            print(f"{ms:8.0f} ms  {text}")
    if args.costs:
        rows = costs(args.device)
        print("\n## Each child alone\n\n| child | CPU s | wall s |\n| --- | --- | --- |")
        for label, cpu, wall in rows:
            print(f"| {label} | {cpu:.2f} | {wall:.2f} |")
        print(f"| **sum** | {sum(r[1] for r in rows):.2f} | {sum(r[2] for r in rows):.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
