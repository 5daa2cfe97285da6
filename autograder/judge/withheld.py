"""What a child that held hidden inputs may tell the student (issue 30, goal 5).

Public cases run in a child of their own (:mod:`autograder.grading.children`): its records alone
may carry what the student's code said (an exception's text, what it printed) to the student.
A child that held a hidden case's inputs, however briefly, could have put them into anything its
code says: a module-level array kept them and a later exception's text listed them. So a
:func:`withheld` copy of such a child's run is what the judges read: every message the code
could have written is replaced by one the grader makes from a fixed vocabulary (the exception's
type when it is a builtin or one of Numba's and CUDA's, a CUDA error code, and the line, which
the judges add), indices of out-of-bounds findings far outside the array are not shown, and the
printed output is taken out. The originals go to the instructor (:class:`Withheld`). Pure: a
function of a run; it starts nothing.
"""

from __future__ import annotations

import builtins
import re
from dataclasses import dataclass, field, replace

#: Said in place of what the code said.
WITHHELD = ("what it said is shown to your instructor only: the process held hidden test "
            "inputs")

#: Exception types named as they are: Python's builtin ones, and those Numba and the CUDA
#: driver raise (never the student's own names, which could spell anything).
NAMED = frozenset(
    {n for n, v in vars(builtins).items() if isinstance(v, type) and issubclass(v, BaseException)}
    | {"CudaAPIError", "CudaSupportError", "CudaDriverError", "TypingError", "LoweringError",
       "NumbaError", "UnsupportedError", "NvvmError", "NvvmSupportError", "LinkerError",
       "KernelFailure", "OutOfBounds"})

#: CUDA driver error codes named when a message holds one.
CUDA_CODES = ("CUDA_ERROR_ILLEGAL_ADDRESS", "CUDA_ERROR_LAUNCH_FAILED", "CUDA_ERROR_UNKNOWN",
              "CUDA_ERROR_MISALIGNED_ADDRESS", "CUDA_ERROR_ILLEGAL_INSTRUCTION",
              "CUDA_ERROR_HARDWARE_STACK_ERROR", "CUDA_ERROR_ASSERT",
              "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "CUDA_ERROR_INVALID_VALUE",
              "CUDA_ERROR_OUT_OF_MEMORY", "CUDA_ERROR_LAUNCH_TIMEOUT", "CUDA_ERROR_INVALID_PTX",
              "CUDA_ERROR_NO_BINARY_FOR_GPU", "CUDA_ERROR_INVALID_HANDLE")


#: The warp intrinsics the simulator cannot run (``autograder.simulator.adapter.GPU_ONLY``, which
#: this layer may not import): a ``SimulatorLimit`` naming one is the grader's limit, said again
#: in the simulator's words so the judge still skips that case
#: (:func:`autograder.judge.collect.simulator_limit`).
GPU_ONLY = ("activemask", "all_sync", "any_sync", "ballot_sync", "eq_sync", "lanemask_lt",
            "match_all_sync", "match_any_sync", "nanosleep", "shfl_down_sync", "shfl_sync",
            "shfl_up_sync", "shfl_xor_sync", "syncwarp")
_LIMIT = re.compile(r"^SimulatorLimit: (?:tid=\[[\d, ]*\] ctaid=\[[\d, ]*\]: )?cuda\.(\w+) is not "
                    r"run by Numba's CUDA simulator")


def said(message: str) -> str:
    """The grader's words for an error whose text the code made (``"Type: text"``, as the child
    sends it): ``"ValueError (what it said is ...)"``, the type only when :data:`NAMED`, and a
    CUDA error code of :data:`CUDA_CODES` when the text holds one. A simulator's limit naming
    one of :data:`GPU_ONLY` is said again in the simulator's own words."""
    text = str(message)
    limit = _LIMIT.match(text)
    if limit and limit.group(1) in GPU_ONLY:
        return (f"SimulatorLimit: cuda.{limit.group(1)} is not run by Numba's CUDA simulator "
                "(it has no warp intrinsics); a GPU runs it")
    name = text.split(":", 1)[0].strip()
    kind = name if name in NAMED else "an exception"
    code = next((c for c in CUDA_CODES if c in text), None)
    return f"{kind}{f' ({code})' if code else ''} ({WITHHELD})"


@dataclass
class Withheld:
    """What a child that held hidden inputs said, for the instructor: ``notes`` (each replaced
    message, with where it came from) and ``printed`` (the tail of its output; empty: none)."""

    notes: list[str] = field(default_factory=list)
    printed: str = ""


def withheld(run, names: dict | None = None, findings_kept: bool = False):
    """``run`` (a :class:`autograder.sandbox.run.ChildRun` of a child that held hidden inputs)
    as the student may read it, and what was taken out (:class:`Withheld`). In the copy: each
    ``error`` record's message is :func:`said` (phase ``environment``, the grader's own setup
    before any student code, is kept; a driver's ``finding`` too when ``findings_kept``: a GPU's,
    where no student Python runs during a case); each ``instrumented`` report's ``error``
    message likewise, and the indices of its out-of-bounds findings that lie far outside the
    array are ``"?"``; the output is empty. ``names``: case id → the test's name, for the
    notes. None gives (None, an empty Withheld)."""
    out = Withheld()
    if run is None:
        return None, out
    names = names or {}
    records = []
    for header, arrays in run.records:
        if isinstance(header, dict) and header.get("type") == "error":
            header = _error(header, names, out, findings_kept)
        elif isinstance(header, dict) and header.get("type") == "instrumented":
            header = _instrumented(header, names, out)
        records.append((header, arrays))
    out.printed = run.output.strip()[-1500:]
    return replace(run, records=records, output=""), out


def _where(header: dict, names: dict) -> str:
    case = header.get("id")
    label = names.get(case, f"case {case}") if case is not None else ""
    return f"{label + ', ' if label else ''}phase {header.get('phase')}"


def _error(header: dict, names: dict, out: Withheld, findings_kept: bool) -> dict:
    message = header.get("message")
    if header.get("phase") == "environment" or not isinstance(message, str) \
            or (findings_kept and header.get("finding") is True):
        return header
    out.notes.append(f"{_where(header, names)}: {message}")
    if header.get("finding") is True:
        return {**header, "message": f"this case failed ({WITHHELD})"}
    return {**header, "message": said(message)}


def _instrumented(header: dict, names: dict, out: Withheld) -> dict:
    report = header.get("report")
    if not isinstance(report, dict):
        return header
    report = dict(report)
    error = report.get("error")
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        label = names.get(report.get("case"), "an instrumented run")
        out.notes.append(f"{label}, instrumented run: {error['message']}")
        report["error"] = {**error, "message": said(error["message"])}
    bounds = report.get("out_of_bounds")
    if isinstance(bounds, list):
        report["out_of_bounds"] = [_plausible(e) for e in bounds]
    return {**header, "report": report}


def _plausible(entry):
    """An out-of-bounds finding whose index components lie within twice the array's extent
    (and a little) of it, each other one ``"?"``: an index is the code's number, and one far
    outside the array says nothing about a bounds check but could carry an input's value."""
    if not isinstance(entry, dict):
        return entry
    index, shape = entry.get("index"), entry.get("shape")
    if not isinstance(index, list) or not isinstance(shape, list):
        return entry
    shown = []
    for i, value in enumerate(index):
        extent = shape[i] if i < len(shape) and isinstance(shape[i], int) else 0
        ok = isinstance(value, int) and -2 * extent - 64 <= value <= 2 * extent + 64
        shown.append(value if ok else "?")
    return {**entry, "index": shown}
