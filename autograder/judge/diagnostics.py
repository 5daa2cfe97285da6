"""Diagnostics: what outputs alone miss, in one vocabulary on both backends.

On either backend, instrumented simulator launches of the graded cases
(:mod:`autograder.instrument`: each case's own size and inputs, a sample of its blocks) report
races in shared and in global memory, divergent barriers, out-of-bounds accesses, reads of
shared elements no thread of the block wrote, bank conflicts and divergent warp branches; on a
GPU with compute-sanitizer, racecheck, synccheck and memcheck add
their findings. They become ``diagnostic`` tests (no points, messages naming the student's
lines) and the problems that fail the concept test (see :class:`exercises.base.Diagnose`).
"""

from __future__ import annotations

import tempfile
import threading
from dataclasses import replace
from pathlib import Path

from autograder.judge import concept_use
from autograder.judge import sanitizer
from autograder.exercises.base import Exercise
from autograder.judge.inputs import Grading
from autograder.wire.results import Kind, Status, TestResult
from autograder.sandbox.limits import Limits
from autograder.sandbox.run import ChildRun, run_child
from autograder.source.submission import Source

BARRIERS = "diagnostic: barriers"
RACES = "diagnostic: shared-memory races"
BOUNDS = "diagnostic: boundary checks"
MEMORY = "diagnostic: memory accesses"
WARPS = "diagnostic: warps (bank conflicts, divergence, global loads)"


def _lines(source: Source, lines) -> str:
    return ", ".join(source.where(int(n)) for n in lines if n) or "an unknown line"


#: Wall-clock seconds for a case under compute-sanitizer, at least: its tools slow every launch
#: (and module loading) many times over, so these runs keep the 15 s GPU cases had before
#: compiling moved out of them (:func:`autograder.grading.devices.default_limits`).
SANITIZER_CASE_TIMEOUT = 15.0


def run_sanitizers(request: dict, limits: Limits, work: Path,
                   runner=None) -> dict[str, sanitizer.Report]:
    """Run the request (graded cases, :func:`autograder.grading.plan.sanitizer_cases`,
    ``lineinfo``) under each sanitizer tool, side by side;
    returns the parsed reports of the tools that ran. Empty when compute-sanitizer is missing.
    Each child gets ``limits`` with a case limit of at least :data:`SANITIZER_CASE_TIMEOUT`.
    ``runner(request, limits, work, wrapper=..., writable=...)`` runs each child (default: a
    plain GPU child; :func:`autograder.grading.children.run_holding` holds the GPU lock for its cases).
    :func:`autograder.grading.children.run_all` runs it beside the graded child and keeps its
    reports only when that child shows the submission imported."""
    if runner is None:
        def runner(request, limits, work, **kw):
            return run_child(request, "gpu", limits, work, **kw)
    if sanitizer.executable() is None:
        return {}
    limits = replace(limits, case_timeout=max(limits.case_timeout, SANITIZER_CASE_TIMEOUT))
    reports: dict[str, sanitizer.Report] = {}

    def one(tool: str) -> None:
        with tempfile.TemporaryDirectory(prefix=f"kernelgrade-{tool}-") as logs:
            log = Path(logs) / "sanitizer.log"
            child = runner(request, limits, work,
                           wrapper=tuple(sanitizer.command(tool, str(log))),
                           writable=Path(logs))
            if child.first("case") is not None or child.of_type("error"):
                text = log.read_text(errors="replace") if log.exists() else ""
                if text:
                    reports[tool] = sanitizer.parse(tool, text, request["source_path"])

    threads = [threading.Thread(target=one, args=(t,)) for t in sanitizer.TOOLS]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return reports


def instrument_report(run: ChildRun | None) -> dict | None:
    """The instrumented runs' reports as one (:func:`merged`); None: no report came."""
    if run is None:
        return None
    reports = [h.get("report") for h, _ in run.of_type("instrumented")]
    return merged([r for r in reports if isinstance(r, dict)])


#: Findings gathered from every instrumented run, each entry naming its run's ``params``; the
#: rest of a merged report is the first run's, and ``each`` keeps every run's report (the
#: concept's counts and the warps' bounds are judged at each graded size).
FINDINGS = ("divergent_barriers", "races", "out_of_bounds", "uninitialized_reads")


def _finding_key(key: str, entry: dict):
    if key == "races":
        return (entry.get("kind"), entry.get("array"), entry.get("first", {}).get("line"),
                entry.get("second", {}).get("line"), entry.get("space"), entry.get("scope"))
    if key == "divergent_barriers":
        return tuple(entry.get("lines") or ())
    return (entry.get("array"), entry.get("access"), entry.get("line"))


def merged(reports: list[dict]) -> dict | None:
    """One report from the instrumented runs' (one per graded case): the first's keys, with the
    findings of :data:`FINDINGS` from every run (one entry per distinct finding, from the first
    run that found it, with that run's ``params``; a race's ``values_differ`` is true when it was
    in any run), ``runs``: each run's ``params``,
    ``blocks_run``, ``blocks_total`` and ``error``, and ``each``: every run's report. None for
    no report."""
    if not reports:
        return None
    out = dict(reports[0])
    for key in FINDINGS:
        seen, entries = {}, []
        for r in reports:
            found = r.get(key)
            for e in found if isinstance(found, list) else []:
                if not isinstance(e, dict):
                    continue
                k = _finding_key(key, e)
                if k in seen:   # a race whose values differed in any run differed
                    if e.get("values_differ") and not entries[seen[k]].get("values_differ"):
                        entries[seen[k]] = {**entries[seen[k]], "values_differ": True}
                    continue
                seen[k] = len(entries)
                entries.append(e if "params" in e or "params" not in r
                               else {**e, "params": r["params"]})
        out[key] = entries
    out["runs"] = [{"params": r.get("params"), "blocks_run": r.get("blocks_run"),
                    "blocks_total": r.get("blocks_total"), "error": r.get("error")}
                   for r in reports]
    out["each"] = list(reports)  # every run's counts: each graded size is judged
    return out


def _size(params) -> str:
    return ", ".join(f"{k} {v}" for k, v in params.items()) if isinstance(params, dict) else ""


def _at(entry: dict) -> str:
    size = _size(entry.get("params"))
    return f" (at {size})" if size else ""


def _barrier_problems(source, report, sanitized) -> list[str]:
    found = []
    for b in (report or {}).get("divergent_barriers") or []:
        left = f", {b['exited']} others having already left the kernel" if b.get("exited") else ""
        count = (f"reached by only {b.get('fewest_threads')} of {b.get('live_threads')} live "
                 f"threads{left}")
        found.append(f"{_lines(source, b.get('lines', []))}: a barrier {count} (a "
                     f"cuda.syncthreads() inside a branch or after an early return){_at(b)}")
    for f in getattr(sanitized.get("synccheck"), "findings", []):
        found.append(f"{_lines(source, f.lines)}: {f.what} (compute-sanitizer synccheck)")
    return found


def _race(source, r: dict, seen: dict | None = None) -> str:
    """One race of the instrumented runs, as the diagnostics and the race verdict word it;
    ``seen``: the interval texts said already, each with the race that said it (a later race
    with the same barriers and fix points to that one, not the whole sentence again)."""
    first, second = r.get("first", {}), r.get("second", {})
    space = "global" if r.get("space") == "global" else "shared"
    grid = r.get("scope") == "grid"

    def who(side):
        thread = f"thread {tuple(side.get('thread', ()))}"
        return f"{thread} of block {tuple(side.get('block', ()))}" if grid else thread

    index = r.get("index")
    element = (f"{r.get('array', '?')}[{', '.join(str(i) for i in index)}]"
               if isinstance(index, list) and index else f"{space} array {r.get('array', '?')}")
    between = ("in two blocks, with no fence protocol between them (cuda.threadfence() then an "
               "atomic in the block that goes first, an atomic then cuda.threadfence() in the "
               "other)" if grid else "with no barrier between them")
    later = {}
    if not grid and isinstance(r.get("barriers"), dict):
        between, later = _race_interval(source, r["barriers"], first, second)
        if seen is not None:
            if between in seen:
                between = f"; the same barriers and the same fix as the {seen[between]} above"
            else:
                seen[between] = f"{r.get('kind', 'race')} race on {r.get('array', '?')}"
    return (f"{r.get('kind', 'race')} race on {space} array {r.get('array', '?')} ({element}): "
            f"{first.get('access', '?')} at {_lines(source, [first.get('line')])} by "
            f"{who(first)}{later.get('first', '')}, {second.get('access', '?')} at "
            f"{_lines(source, [second.get('line')])} by {who(second)}{later.get('second', '')}"
            f"{between if between.startswith(';') else ' ' + between}{_at(r)}")


def _race_interval(source, barriers: dict, first: dict, second: dict) -> tuple[str, dict]:
    """What a shared race's two accesses ran between (``barriers``: the interval's opening and
    closing barrier, :class:`autograder.instrument.races.SharedRaces`), without saying "no
    barrier between" two lines that have one between them in the source: an access at a line
    above the opening barrier (same file) ran in the next iteration of its loop, and the
    message says so, with where a barrier would order them. Returns (the words after the
    accesses, starting ``"; "``, and ``{"first"|"second": " in the next iteration of the
    loop"}`` for the access that looped)."""
    def loc(side):
        return side if isinstance(side, dict) and isinstance(side.get("line"), int) else None

    after, before = loc(barriers.get("after")), loc(barriers.get("before"))
    opened = (f"the barrier at {_lines(source, [after['line']])}" if after
              else "the kernel's start")
    closed = (f"the next barrier a thread reaches ({_lines(source, [before['line']])})" if before
              else "the kernel's end")
    later = {}
    for name, side in (("first", first), ("second", second)):
        line = side.get("line")
        if after and isinstance(line, int) and line < after["line"] \
                and side.get("file") == after.get("file"):
            later[name] = " in the next iteration of the loop"
    text = f"; both ran after {opened} and before {closed}, so nothing orders them"
    if len(later) == 1:
        looped, other = (first, second) if "first" in later else (second, first)
        text += (f" (a cuda.syncthreads() after {_lines(source, [other.get('line')])}, at the "
                 f"end of the loop body before the next iteration's "
                 f"{looped.get('access', 'access')} at {_lines(source, [looped.get('line')])}, "
                 "would)")
    return text, later


def _race_problems(source, report, sanitized) -> list[str]:
    seen: dict = {}
    found = [_race(source, r, seen) for r in (report or {}).get("races") or []
             if isinstance(r, dict)]
    for f in getattr(sanitized.get("racecheck"), "findings", []):
        found.append(f"{_lines(source, f.lines)}: {f.what} (compute-sanitizer racecheck)")
    return found


def sanitizer_hazards(source, sanitized: dict) -> list[str]:
    """compute-sanitizer's racecheck and synccheck findings (``sanitized``: the tools' reports
    by name), each with the student's lines: the evidence of a race or a divergent barrier on
    the GPU itself (:func:`autograder.judge.cases.apply_sanitizer_verdict`)."""
    return _race_problems(source, None, sanitized) + _barrier_problems(source, None, sanitized)


def _plain_writes_only(race: dict) -> bool:
    """Two plain stores of one value to one element (no read, no atomic): the same value stored
    by several threads (a halo element loaded twice), which no schedule can change. It still
    costs the concept test (a diagnostic); it does not decide the correctness cases. A race, in
    shared or in global memory, says whether the values differed (``values_differ``: then the
    last store wins, the simulator's order chose it, and the race decides as any other does);
    a report without the key (an older child's) is taken as one value."""
    return all((race.get(side) or {}).get("access") == "write" for side in ("first", "second")) \
        and not race.get("values_differ", False)


def scheduling_hazards(source, report) -> list[str]:
    """The instrumented runs' races, in shared and in global memory, and divergent barriers
    (:func:`merged` ``report``; None: no report), as the diagnostics word them: what makes a
    kernel's outputs depend on the order its threads (or blocks) run. Read off the
    deterministic instrumented run only, never compute-sanitizer's findings (``--no-sanitize``
    turns those off), so the same submission and seed give the same list whatever the GPU's
    schedule and settings (:func:`autograder.judge.cases.apply_race_verdict`). Races between
    plain stores of one value are left out (:func:`_plain_writes_only`)."""
    if not isinstance(report, dict):
        return []
    report = {k: [e for e in report.get(k) or [] if isinstance(e, dict)]
              if isinstance(report.get(k), list) else [] for k in ("races", "divergent_barriers")}
    report["races"] = [r for r in report["races"] if not _plain_writes_only(r)]
    return _race_problems(source, report, {}) + _barrier_problems(source, report, {})


def _uninitialized_problems(source, report) -> list[str]:
    """Shared reads of elements no thread of the block wrote in the launch, e.g. ``line 21:
    reads tile[0] of shared array tile, which no thread of the block wrote (thread 0 of block
    (1, 0, 0)) ...``: the value is whatever the memory held (another block's data on a GPU)."""
    found = []
    for e in (report or {}).get("uninitialized_reads") or []:
        if not isinstance(e, dict):
            continue
        index = e.get("index") if isinstance(e.get("index"), list) else []
        name = e.get("array", "?")
        verb = "updates" if e.get("access") == "atomic" else "reads"
        count = e.get("count")
        more = (f", {count} reads at this line" if isinstance(count, int) and count > 1 else "")
        size = _size(e.get("params"))
        element = f"{name}[{', '.join(map(str, index))}]"
        found.append(f"{_lines(source, [e.get('line')])}: {verb} {element}"
                     f" of shared array {name}, which no thread of the block wrote before "
                     f"(thread {tuple(e.get('thread') or ())} of block "
                     f"{tuple(e.get('block') or ())}{more}{', at ' + size if size else ''}): "
                     "its value is whatever that memory held. Every shared element a thread "
                     "reads must be written first by a thread of the same block (a halo, the "
                     "padding of a partial tile), with a barrier between")
    return found


_ACCESS_VERB = {"read": "reads", "write": "writes", "atomic": "updates"}


def _bounds_problems(source, report) -> list[str]:
    """Out-of-bounds accesses of the instrumented runs, e.g. ``line 14: reads A[16, 3], but A
    has shape (16, 16) (thread (0, 15, 0) of block (1, 1, 0), at width 17): add a bounds
    check ...``."""
    found = []
    for e in (report or {}).get("out_of_bounds") or []:
        name, index = e.get("array", "?"), e.get("index")
        index = index if isinstance(index, list) else []
        shown = ", ".join(str(i) for i in index)
        space = "shared array " if e.get("space") == "shared" else ""
        who = f"thread {tuple(e.get('thread') or ())} of block {tuple(e.get('block') or ())}"
        size = _size(e.get("params"))
        negative = any(isinstance(i, int) and i < 0 for i in index)
        why = (": a negative index wraps around to the array's other end in NumPy and Numba"
               if negative else "")
        found.append(f"{_lines(source, [e.get('line')])}: "
                     f"{_ACCESS_VERB.get(e.get('access'), 'accesses')} {name}[{shown}], but "
                     f"{space}{name} has shape {tuple(e.get('shape') or ())}{why} ({who}"
                     f"{', at ' + size if size else ''}): add a bounds check so that every "
                     "index stays inside the array, even where the value is never used")
    return found


def bounds_problems(source, report) -> list[str]:
    """The instrumented runs' out-of-bounds accesses (``report``: :func:`merged`; None: none),
    as the :data:`BOUNDS` diagnostic and the concept test word them: a boundary check missing,
    whatever the outputs were."""
    return _bounds_problems(source, report)


def _memory_problems(source, sanitized) -> list[str]:
    return [f"{_lines(source, f.lines)}: {f.what} (compute-sanitizer memcheck)"
            for f in getattr(sanitized.get("memcheck"), "findings", [])]


def _kernel_errors(report) -> list[str]:
    """The instrumented runs' kernel errors other than out-of-bounds accesses, with the size."""
    found = []
    runs = (report or {}).get("runs") or [{"error": (report or {}).get("error")}]
    for run in runs:
        err = run.get("error")
        if not err or (isinstance(err, dict) and err.get("kind") == "out_of_bounds"):
            continue
        text = err.get("message", str(err)) if isinstance(err, dict) else str(err)
        size = _size(run.get("params"))
        found.append(text + (f" (at {size})" if size and len(runs) > 1 else ""))
    return found


def _warp_problems(exercise: Exercise, source, report) -> list[str]:
    """Bank conflicts and divergent branches over the bounds, at the first instrumented run
    (one graded case each, :func:`autograder.judge.concept_use.each_run`) that has any, with
    its size when there were several."""
    if report is None:
        return []
    runs = concept_use.each_run(report)
    for run in runs:
        found = _run_warp_problems(exercise, source, run)
        if found:
            size = _size(run.get("params")) if len(runs) > 1 else ""
            return [f"{p} (at {size})" for p in found] if size else found
    return []


def _run_warp_problems(exercise: Exercise, source, report) -> list[str]:
    d = exercise.diagnose
    found = []
    if d.max_bank_ways is not None:
        for c in report.get("bank_conflicts") or []:
            if c.get("max_ways", 1) > d.max_bank_ways:
                found.append(f"{_lines(source, [c.get('line')])}: shared-memory accesses with "
                             f"{c['max_ways']}-way bank conflicts (allowed: {d.max_bank_ways})")
    branches = report.get("divergent_branches")
    if d.max_divergent_branches is not None and isinstance(branches, dict):
        per_block = branches.get("total", 0) / max(1, report.get("blocks_run") or 1)
        if per_block > d.max_divergent_branches:
            worst = max(branches.get("by_line") or [{}], key=lambda b: b.get("divergent", 0))
            found.append(f"{per_block:g} divergent warp branches per block (most at "
                         f"{_lines(source, [worst.get('line')])}) where at most "
                         f"{d.max_divergent_branches} are expected: keep the active threads "
                         "contiguous (stride halving, tid < stride) so whole warps retire together")
    return found


def _warp_summary(report) -> str:
    if report is None:
        return ""
    ways = max((c.get("max_ways", 1) for c in report.get("bank_conflicts") or []), default=1)
    branches = report.get("divergent_branches")
    total = branches.get("total") if isinstance(branches, dict) else "?"
    loads = report.get("global_loads_per_output")
    loads_txt = f", {loads:.1f} global loads per output element" if isinstance(loads, (int, float)) else ""
    return f"worst bank conflict {ways}-way, {total} divergent warp branches{loads_txt}"


def concept_problems(grading: Grading, report, sanitized) -> list[str]:
    """Findings that fail the concept test of ``grading`` (empty: none), from the
    instrumented runs' ``report`` (:func:`merged`; None: none) and the ``sanitized`` reports:
    out-of-bounds accesses first, then shared memory and barriers not used as the exercise asks
    (:mod:`autograder.judge.concept_use`), then the other diagnostics'."""
    exercise, source = grading.exercise, grading.source
    if exercise.diagnose is None:
        return []
    return (_bounds_problems(source, report) + _uninitialized_problems(source, report)
            + concept_use.problems(exercise, source, report)
            + _barrier_problems(source, report, sanitized)
            + _race_problems(source, report, sanitized) + _warp_problems(exercise, source, report))


NAMES = (BARRIERS, RACES, BOUNDS, MEMORY, WARPS)


def all_tests(exercise: Exercise, status: Status, message: str) -> list[TestResult]:
    """Every diagnostic test of ``exercise`` with one status and message (the submission could
    not be run at all)."""
    if exercise.diagnose is None:
        return []
    return [TestResult(name=n, kind=Kind.DIAGNOSTIC, visibility="hidden", status=status,
                       points=0.0, max_points=0.0, message=message) for n in NAMES]


def tests(grading: Grading, report, sanitized, unavailable: str | None) -> list[TestResult]:
    """The diagnostic tests of ``grading`` (no points), from the instrumented runs' ``report``
    (:func:`merged`; None: none) and the ``sanitized`` reports. ``unavailable``: why the
    instrumented run gave no report (then the tests say so and are skipped)."""
    exercise, source = grading.exercise, grading.source
    if exercise.diagnose is None:
        return []
    if report is None and not sanitized:
        return all_tests(exercise, Status.SKIPPED,
                         unavailable or "the instrumented run did not finish")
    sizes = [_size(r.get("params")) for r in (report or {}).get("runs") or []]
    sizes = [s for s in sizes if s]
    where = ((f"instrumented runs at the {len(sizes)} graded sizes" if len(sizes) > 3 else
              f"instrumented run{'s' if len(sizes) > 1 else ''} at {' and '.join(sizes)}"
              if sizes else "instrumented runs at the graded sizes")
             + (" and compute-sanitizer" if sanitized else ""))
    results = []
    for name, problems in ((BARRIERS, _barrier_problems(source, report, sanitized)),
                           (RACES, _race_problems(source, report, sanitized)),
                           (BOUNDS, _bounds_problems(source, report)),
                           (MEMORY, _uninitialized_problems(source, report)
                            + _memory_problems(source, sanitized) + _kernel_errors(report)),
                           (WARPS, _warp_problems(exercise, source, report))):
        if problems:  # details: the findings as shown, for a report that shows each once
            results.append(TestResult(name=name, kind=Kind.DIAGNOSTIC, visibility="hidden",
                                      status=Status.FAILED, points=0.0, max_points=0.0,
                                      message="; ".join(problems[:5]) + f" ({where})",
                                      details={"findings": problems[:5]}))
        else:
            detail = _warp_summary(report) if name == WARPS else "none found"
            results.append(TestResult(name=name, kind=Kind.DIAGNOSTIC, visibility="hidden",
                                      status=Status.PASSED, points=0.0, max_points=0.0,
                                      message=f"{detail} ({where})"))
    return results
