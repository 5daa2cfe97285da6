"""Performance hints: why a correct kernel may be slow, each naming the line it comes from and
saying how it was found: *measured* (counted in the instrumented run) or *inferred* (read off
the PTX or the source, or computed; its effect on the time is expected, not timed), see
:data:`BASIS`.

Read off what the grader already has, so no extra run is needed:

- the PTX Numba compiled from the student's source (``.loc`` line info; :mod:`autograder.judge.ptx`):
  float64 arithmetic and conversions in a float32 kernel (``tmp = 0.``, a ``/`` division),
  static shared memory per block, and loops the compiler kept (a branch back to the loop's
  line) whose bound the source takes from ``cuda.blockDim`` where the exercise's block size is
  a constant (``stride = cuda.blockDim.x // 2`` where ``BLOCK_SIZE // 2`` unrolls:
  :func:`autograder.source.loops.loops`, :func:`ptx_loop_lines`);
- on a GPU, the child's ``device`` record (the driver's device attributes: SMs, per-SM limits
  of threads, blocks, shared memory and registers; :class:`DeviceLimits`) and ``kernel`` record
  (Numba's registers per thread and shared memory per block of the compiled kernel;
  :class:`KernelFacts`): the occupancy (lecture 2.1's calculator with the register limit,
  :mod:`autograder.judge.occupancy_calculator`) and the grid's blocks against the SMs. On the
  simulator, the per-SM limits come from :data:`SM_LIMITS` by the PTX's compute capability
  (shared memory only: registers need a GPU; the SM count too);
- the instrumented simulator run (:mod:`autograder.instrument`): shared-memory bank conflicts,
  divergent warp branches, uncoalesced global loads and stores (32-byte sectors per warp
  request), by line, and global loads per output element against the instructor's count at the
  same size and constants (no reuse through shared memory, :func:`reuse_hint`: the exercise's
  :class:`autograder.exercises.base.Use` count).

:func:`find` returns :class:`Hint` objects, likeliest cause of a timing loss first;
:func:`apply` adds them to a graded :class:`ExerciseResult`: one ``diagnostic`` test with no
points (``"diagnostic: performance hints"``, always ``passed``: a hint is advice, not a verdict)
whose ``details["hints"]`` holds them, and the likeliest cause appended to the message of a
timing test that lost points. Where no hint has a cause, that message says what was compared
and that the difference is in the kernel's speed itself (:func:`compared_text`): lost points
never stand beside "no likely cause found". No existing verdict or score changes.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass

from autograder.instrument import bank_advice
from autograder.source import loops, pyast
from autograder.judge.inputs import Children, Grading
from autograder.judge.occupancy_calculator import REGISTERS_PER_SM, resident_blocks
from autograder.wire.protocol import Compiled, Device, Imported, Kernel, received
from autograder.wire.results import ExerciseResult, Kind, Status, TestResult

NAME = "diagnostic: performance hints"

UNAVAILABLE: tuple[str, ...] = ()  # every hint has its data on some backend

# Per-SM limits by compute capability (CUDA C++ Programming Guide, "Technical Specifications per
# Compute Capability"): max resident threads, max resident blocks, shared memory bytes. Only the
# fallback where no driver answers (the simulator and compile-only path): on a GPU the child
# reports the device's own attributes.
SM_LIMITS = {
    (7, 0): (2048, 32, 96 * 1024),
    (7, 5): (1024, 16, 64 * 1024),
    (8, 0): (2048, 32, 164 * 1024),
    (8, 6): (1536, 16, 100 * 1024),
    (8, 9): (1536, 24, 100 * 1024),
    (9, 0): (2048, 32, 228 * 1024),
}

# Uncoalesced loads: a (line, array) whose warp requests move at least this many times the
# sectors their distinct elements need, and at least MIN_SECTORS per request on average. The
# instructor solutions stay at or under 1.5x (tiled matmul at an odd width: rows not aligned to
# a 32-byte sector); a column read of float32 is 8x (32 sectors for 4), of float64 4x.
UNCOALESCED_RATIO = 3.0
UNCOALESCED_MIN_SECTORS = 8.0

# How much of a timing loss each cause usually explains, for ordering (likeliest first).
_WEIGHT = {"no_reuse": 6.0, "float64": 5.0, "uncoalesced": 4.0, "occupancy_shared": 4.0,
           "occupancy_registers": 4.0, "uncoalesced_store": 3.5, "runtime_loop_bound": 3.0,
           "runtime_inner_loop": 3.0, "configuration": 3.5,
           "bank_conflict": 3.0, "few_blocks": 3.0, "divergence": 2.0}

_LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)")
_FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]*)"')
_TARGET = re.compile(r"^\s*\.target\s+sm_(\d+)(\d)", re.M)
_F64 = re.compile(r"^\s*(?:@!?%p\d+\s+)?([a-z]+(?:\.[a-z0-9]+)*\.f64(?:\.[a-z0-9]+)*)\b")
_FLOAT_LITERAL = re.compile(r"^\s*([A-Za-z_]\w*)\s*=\s*[-+]?(?:\d+\.\d*|\.\d+)(?:[eE][-+]?\d+)?\s*"
                            r"(?:#.*)?$")


@dataclass(frozen=True)
class DeviceLimits:
    """What bounds resident blocks on one SM, and the SM count. ``sm_count``: None when unknown
    (no GPU); ``registers_per_sm``: 32-bit registers; ``shared_per_sm`` and
    ``reserved_shared_per_block`` in bytes; ``source``: where the numbers came from (``"the
    driver"`` or ``"compute capability 9.0"``)."""

    max_threads_per_sm: int
    max_blocks_per_sm: int
    shared_per_sm: int
    registers_per_sm: int = REGISTERS_PER_SM
    sm_count: int | None = None
    reserved_shared_per_block: int = 0
    source: str = "the driver"

    @classmethod
    def from_record(cls, rec: dict | None) -> "DeviceLimits | None":
        """From the GPU child's ``device`` record (:func:`autograder.child.harness.device_facts`);
        None when it lacks the per-SM limits (an older child, the simulator)."""
        try:
            return cls(int(rec["max_threads_per_sm"]), int(rec["max_blocks_per_sm"]),
                       int(rec["shared_per_sm"]), int(rec["registers_per_sm"]),
                       int(rec["multiprocessors"]), int(rec.get("reserved_shared_per_block", 0)))
        except (KeyError, TypeError, ValueError):
            return None

    @classmethod
    def from_cc(cls, cc: tuple[int, int] | None) -> "DeviceLimits | None":
        """The fallback table's limits for compute capability ``cc`` (no SM count)."""
        t = SM_LIMITS.get(cc) if cc else None
        return cls(*t, source=f"compute capability {cc[0]}.{cc[1]}") if t else None


@dataclass(frozen=True)
class KernelFacts:
    """Numba's counts for the compiled kernel (GPU child's ``kernel`` record):
    ``regs_per_thread`` (None: unknown, e.g. on the simulator) and ``shared_bytes`` of static
    shared memory per block."""

    regs_per_thread: int | None
    shared_bytes: int

    @classmethod
    def from_record(cls, rec: dict | None) -> "KernelFacts | None":
        try:
            return cls(int(rec["regs_per_thread"]), int(rec["shared_bytes"]))
        except (KeyError, TypeError, ValueError):
            return None


#: How each kind of hint knows what it says: ``measured`` (counted in the instrumented run:
#: sectors, bank ways, divergent branches, global loads against the instructor's count) or
#: ``inferred`` (read off the compiled PTX, the source or the occupancy calculator; its effect
#: on the time is expected, not measured). The sentence ends every hint's text.
BASIS = {
    "float64": ("inferred", "read off the compiled PTX"),
    "runtime_loop_bound": ("inferred", "read off the source and the compiled PTX"),
    "runtime_inner_loop": ("inferred", "read off the source and the compiled PTX"),
    "occupancy_shared": ("inferred", "computed from the shared memory per block and the SM's "
                                     "limits"),
    "occupancy_registers": ("inferred", "computed from the registers per thread and the SM's "
                                        "limits"),
    "few_blocks": ("inferred", "computed from the grid and the GPU's SM count"),
    "configuration": ("inferred", "computed from your constants and the instructor's, and the "
                                  "SM's limits"),
    "no_reuse": ("measured", "global loads counted in the instrumented run, against the "
                             "instructor's kernel at the same size"),
    "uncoalesced": ("measured", "sectors counted in the instrumented run"),
    "uncoalesced_store": ("measured", "sectors counted in the instrumented run"),
    "bank_conflict": ("measured", "bank conflicts counted in the instrumented run"),
    "divergence": ("measured", "warp branches counted in the instrumented run"),
}


@dataclass(frozen=True)
class Hint:
    """One likely cause of slowness. ``kind``: a key of :data:`BASIS` (``float64``,
    ``runtime_loop_bound``, ``runtime_inner_loop``, ``no_reuse``, ``uncoalesced``,
    ``uncoalesced_store``, ``bank_conflict``, ``divergence``, ``occupancy_shared``,
    ``occupancy_registers``, ``few_blocks``, ``configuration``); ``line``: the submission's line (None for the
    whole kernel); ``text``: the student-facing sentence, naming the line and ending with how
    it was found ("(measured: ...)" or "(inferred: ...)"); ``weight``: how much of a timing
    loss it usually explains (larger: likelier); ``also``: other lines the text names;
    ``basis``: ``"measured"`` or ``"inferred"`` (:data:`BASIS`)."""

    kind: str
    line: int | None
    text: str
    weight: float
    also: tuple[int, ...] = ()  # other lines the text names (shown beside ``line``)
    basis: str = ""

    def __post_init__(self):
        basis, how = BASIS.get(self.kind, ("inferred", "read off the kernel"))
        if not self.basis:
            object.__setattr__(self, "basis", basis)
            object.__setattr__(self, "text", f"{self.text} ({basis}: {how})")

    def to_dict(self) -> dict:
        return asdict(self)


def _where(source, line: int | None) -> str:
    if not line:
        return "your kernel"
    code = source.line_text(line) if source is not None else ""
    label = source.where(line) if source is not None else f"line {line}"
    return label + (f" (`{code}`)" if code else "")


def float64_sites(ptx: str, filename: str | None = None) -> dict[int, list[str]]:
    """Lines of the source holding float64 instructions (``add.f64``, ``cvt.f64.f32``, ...), each
    with the distinct opcodes found there; line 0 (no line info) is left out. ``filename``:
    only ``.loc`` entries of a ``.file`` whose path ends with it count (None: any file)."""
    files = {m.group(1): m.group(2) for m in map(_FILE.match, ptx.splitlines()) if m}
    sites: dict[int, list[str]] = {}
    line = 0
    for text in ptx.splitlines():
        m = _LOC.match(text)
        if m:
            fid, ln = m.group(1), int(m.group(2))
            ok = filename is None or files.get(fid, "").endswith(filename)
            line = ln if ok else 0
            continue
        m = _F64.match(text)
        if m and line and not m.group(1).startswith(("ld.param", "mov")):
            ops = sites.setdefault(line, [])
            if m.group(1) not in ops:
                ops.append(m.group(1))
    return sites


def _float64_hints(ptx: str, source, filename: str | None) -> list[Hint]:
    sites = float64_sites(ptx, filename)
    if not sites:
        return []
    lines = sorted(sites, key=lambda ln: (-len(sites[ln]), ln))
    literal, literal_line = "", None
    if source is not None:
        for n, text in enumerate(source.text.splitlines(), 1):
            m = _FLOAT_LITERAL.match(text)
            if m and any(re.search(rf"\b{re.escape(m.group(1))}\b", source.line_text(ln) or "")
                         for ln in sites):
                literal = (f"; {_where(source, n)} starts {m.group(1)} from a Python float, "
                           f"which Numba types float64: write float32(0.0)")
                literal_line = n
                break
    first = lines[0]
    more = (f" (also {', '.join(_where(source, ln) for ln in lines[1:3])})"
            if len(lines) > 1 else "")
    text = (f"{_where(source, first)}: float64 arithmetic in a float32 kernel "
            f"({', '.join(sites[first][:4])}){more}; float64 runs at a fraction of float32 speed "
            f"on most GPUs and doubles the registers{literal}. Keep every value float32 (no "
            f"Python float literals, `//` instead of `/` for indices)")
    also = tuple(lines[1:3]) + ((literal_line,) if literal_line else ())
    return [Hint("float64", first, text, _WEIGHT["float64"], also)]


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _bank_hints(report: dict | None, source) -> list[Hint]:
    out = []
    for c in (report or {}).get("bank_conflicts") or []:
        if "file" in c or c.get("max_ways", 1) < 2:
            continue
        if c.get("conflicted_instructions", 0) < 0.25 * max(1, c.get("instructions", 1)):
            continue
        verb = "reading" if c.get("access") == "read" else "writing"
        out.append(Hint("bank_conflict", c.get("line"), (
            f"{_where(source, c.get('line'))}: {verb} shared array {c.get('array')} is a "
            f"{c['max_ways']}-way bank conflict in {c['conflicted_instructions']} of "
            f"{c['instructions']} warp accesses: accesses of one warp to one bank are served "
            f"one after another. {_capital(bank_advice.advice(c))}"),
            _WEIGHT["bank_conflict"] * min(c["max_ways"], 32) / 32 + 1))
    return out


def _divergence_hints(report: dict | None, source) -> list[Hint]:
    """Branch lines whose warps split in at least half their executions and at least twice per
    warp of each block run (a bounds check splits only the edge blocks' warps, once or twice)."""
    div = (report or {}).get("divergent_branches") or {}
    block = (report or {}).get("blockdim") or [1, 1, 1]
    warps = max(1, math.ceil(math.prod(block) / 32))
    blocks = max(1, (report or {}).get("blocks_run") or 1)
    out = []
    for d in div.get("by_line") or []:
        if "file" in d or d["divergent"] < 0.5 * d["warp_branches"]:
            continue
        if d["divergent"] < 2 * warps * blocks:
            continue
        out.append(Hint("divergence", d.get("line"), (
            f"{_where(source, d.get('line'))}: this branch splits warps {d['divergent']} times "
            f"out of {d['warp_branches']}: the lanes of a warp take different sides, so the "
            f"warp runs both one after the other. Keep the active threads contiguous (e.g. "
            f"`if tid < stride`) so whole warps take the same side"), _WEIGHT["divergence"]))
    return out


def _uncoalesced_hints(report: dict | None, source) -> list[Hint]:
    """(line, array) pairs whose warp load requests move at least :data:`UNCOALESCED_RATIO`
    times the 32-byte sectors their elements need (the instrumented run's
    ``global_loads["coalescing"]``), and likewise for stores (``global_stores["coalescing"]``:
    a transpose writing its output down a column)."""
    out = []
    for key, kind, verb in (("global_loads", "uncoalesced", "loads"),
                            ("global_stores", "uncoalesced_store", "stores")):
        for c in ((report or {}).get(key) or {}).get("coalescing") or []:
            if "file" in c or not c.get("requests") or not c.get("ideal_sectors"):
                continue
            per = c["sectors"] / c["requests"]
            ratio = c["sectors"] / c["ideal_sectors"]
            if ratio < UNCOALESCED_RATIO or per < UNCOALESCED_MIN_SECTORS:
                continue
            ideal = c["ideal_sectors"] / c["requests"]
            fix = ("index the last dimension with the x thread index, or stage a tile through "
                   "shared memory (read along rows, write it back transposed)" if verb == "loads"
                   else "write the last dimension with the x thread index: stage the values in a "
                   "shared-memory tile and store it along rows")
            out.append(Hint(kind, c.get("line"), (
                f"{_where(source, c.get('line'))}: the {verb} of {c['array']} are not "
                f"coalesced: each warp's {verb[:-1]} touches {per:.3g} 32-byte sectors of global "
                f"memory on average, where its elements fit in {ideal:.3g}, so {ratio:.3g}x the "
                f"traffic. Neighbouring threads (threadIdx.x) should access neighbouring "
                f"elements: {fix}"),
                _WEIGHT[kind] + min(ratio, 8.0) / 10))
    return out


#: Loops the compiler cannot unroll: a ``for`` / ``while`` whose bound comes from
#: ``cuda.blockDim`` (known only when the kernel runs) in an exercise whose block size is a
#: compile-time constant, kept as a loop in the PTX (a branch back to its first line).
_BRA = re.compile(r"^\s*(?:@!?%p\d+\s+)?bra(?:\.uni)?\s+(\S+?);")
_LABEL = re.compile(r"^(\$?[\w$]+):")


def ptx_loop_lines(ptx: str, filename: str | None = None) -> set[int]:
    """Source lines of the loops the PTX keeps: the ``.loc`` line of each branch back to a
    label above it (a loop the compiler unrolled has none). ``filename`` as in
    :func:`float64_sites`."""
    files = {m.group(1): m.group(2) for m in map(_FILE.match, ptx.splitlines()) if m}
    seen_labels, lines, line = set(), set(), 0
    for text in ptx.splitlines():
        m = _LOC.match(text)
        if m:
            ok = filename is None or files.get(m.group(1), "").endswith(filename)
            line = int(m.group(2)) if ok else 0
            continue
        m = _LABEL.match(text.strip())
        if m:
            seen_labels.add(m.group(1))
            continue
        m = _BRA.match(text)
        if m and m.group(1) in seen_labels and line:
            lines.add(line)
    return lines


def _loop_hints(ptx: str, source, filename: str | None,
                block_constants: tuple[str, ...]) -> list[Hint]:
    """The loops the PTX keeps (:func:`ptx_loop_lines`) that a bound known at compile time
    would let Numba unroll, in one pass over the kernel's loops (:mod:`autograder.source.loops`):

    - ``runtime_loop_bound``: a bound from ``cuda.blockDim`` where the block size is a constant
      (``block_constants``; none: no constant to use instead);
    - ``runtime_inner_loop``: an inner ``for ... in range(...)`` (inside another loop: a tile's
      dot product) whose trip count neither the block's size nor the constants set
      (``range(min(TILE_WIDTH, n - p * TILE_WIDTH))``). Cutting the tile's loop at the matrix's
      edge cost 3.39x the instructor's time on an H200 (2026-11-26), looping over the whole
      zero-padded tile 1.40x."""
    if source is None:
        return []
    kept = ptx_loop_lines(ptx, filename)
    names = " and ".join(block_constants)
    whole = (f"`range({block_constants[0]})` over a whole tile, whose elements past the "
             f"matrix's edge you loaded as zeros" if block_constants else "a constant")
    out = []
    for loop in loops.loops(source.text, constants=block_constants):
        line, bound = loop.line, loop.bound
        if line not in kept:
            continue
        if loop.block_size and block_constants:
            out.append(Hint("runtime_loop_bound", line, (
                f"{_where(source, line)}: this loop's bound (`{bound}`) depends on "
                f"cuda.blockDim, known only when the kernel runs, so the compiler keeps it as a "
                f"loop with a test and a branch each step (the PTX has a branch back to this "
                f"line) instead of unrolling it. The block size is {names}, a constant: compute "
                f"the bound from {names} (a reduction's `stride = {block_constants[0]} // 2`, a "
                f"range's step of {block_constants[-1]}) and Numba unrolls the loop"),
                _WEIGHT["runtime_loop_bound"]))
        elif (loop.nested and not loop.block_size and not loop.constants
              and bound.startswith("range(")):
            out.append(Hint("runtime_inner_loop", line, (
                f"{_where(source, line)}: this inner loop's trip count (`{bound}`) is "
                f"computed when the kernel runs, so the compiler keeps it as a loop with a test "
                f"and a branch each step (the PTX has a branch back to this line) instead of "
                f"unrolling it. Bound it by a constant ({whole}) and Numba unrolls it"),
                _WEIGHT["runtime_inner_loop"]))
    return out


def reuse_hint(exercise, report: dict | None, source=None) -> Hint | None:
    """No reuse through shared memory: the kernel loads the exercise's tiled arrays from
    global memory more than ``Use.load_factor`` times as often per output element as the
    instructor's kernel does at the same size and constants (the concept's
    :class:`autograder.exercises.base.Use` count, :mod:`autograder.judge.concept_use`). None when the
    exercise has no such count or the report lacks it."""
    from autograder.judge import concept_use

    use = getattr(getattr(exercise, "concept", None), "use", None)
    if use is None or use.loads_per_output is None or exercise.diagnose is None \
            or not isinstance(report, dict) or report.get("out_of_bounds"):
        return None
    try:
        params = concept_use.at(exercise, report)
        got = concept_use.measured(exercise, report)["loads_per_output"]
        expected = use.loads_per_output(params)
    except Exception:  # a count that does not fit: no hint, never a crash
        return None
    if got is None or not expected or got <= use.load_factor * expected:
        return None
    arrays = " and ".join(use.tiled)
    line = None
    for entry in ((report.get("global_loads") or {}).get("by_line") or []):
        if isinstance(entry, dict) and "file" not in entry and entry.get("loads"):
            if line is None or entry["loads"] > line[1]:
                line = (entry.get("line"), entry["loads"])
    return Hint("no_reuse", line[0] if line else None, (
        f"{_where(source, line[0] if line else None)}: your kernel reads {arrays} from global "
        f"memory {got:.1f} times per output element where the instructor's kernel needs about "
        f"{expected:.1f}: each value is loaded again by every thread that uses it instead of "
        f"once per block. Load each tile into shared memory once, then compute from the tile"),
        _WEIGHT["no_reuse"] + min(got / expected, 20.0) / 20)


def compute_capability(ptx: str) -> tuple[int, int] | None:
    """The PTX's target (``.target sm_90`` → (9, 0)); None when absent."""
    m = _TARGET.search(ptx)
    return (int(m.group(1)), int(m.group(2))) if m else None


def occupancy(threads_per_block: int, shared_bytes: int, limits,
              regs_per_thread: int | None = None) -> tuple[int, str]:
    """(resident blocks per SM, the limit that binds: ``threads``, ``blocks``, ``shared`` or
    ``registers``) for a block of ``threads_per_block`` threads, ``shared_bytes`` of static
    shared memory and ``regs_per_thread`` registers (None: not counted), with the lecture's
    calculator and the register file (:func:`autograder.judge.occupancy_calculator.resident_blocks`; the
    driver reserves ``reserved_shared_per_block`` bytes more for a block that uses shared
    memory). ``limits``: a :class:`DeviceLimits`, or (max threads, max blocks, shared bytes)
    per SM."""
    if not isinstance(limits, DeviceLimits):
        limits = DeviceLimits(*limits)
    shared = shared_bytes + (limits.reserved_shared_per_block if shared_bytes else 0)
    return tuple(resident_blocks(threads_per_block, shared, limits.max_threads_per_sm,
                                 limits.max_blocks_per_sm, limits.shared_per_sm,
                                 regs_per_thread, limits.registers_per_sm))


def _occupancy_hints(shared_bytes: int, threads: int, grid_blocks: int | None,
                     limits: DeviceLimits, regs_per_thread: int | None = None) -> list[Hint]:
    out = []
    blocks, bound = occupancy(threads, shared_bytes, limits, regs_per_thread)
    resident = blocks * threads
    cap = limits.max_threads_per_sm
    on = "" if limits.source == "the driver" else f" (limits of {limits.source})"
    if bound == "shared" and resident < 0.5 * cap:
        out.append(Hint("occupancy_shared", None, (
            f"occupancy limited by shared memory: each block of {threads} threads declares "
            f"{shared_bytes} bytes, so only {blocks} block(s) ({resident} of {cap} thread "
            f"slots) fit on an SM of {limits.shared_per_sm // 1024} KB{on}; fewer resident "
            f"warps hide less memory latency. Use smaller tiles or fewer shared arrays"),
            _WEIGHT["occupancy_shared"]))
    if bound == "registers" and resident < 0.5 * cap:
        out.append(Hint("occupancy_registers", None, (
            f"occupancy limited by registers: the kernel uses {regs_per_thread} registers per "
            f"thread, so a block of {threads} threads needs "
            f"{threads * regs_per_thread} of the SM's {limits.registers_per_sm} and only "
            f"{blocks} block(s) ({resident} of {cap} thread slots) fit{on}; fewer resident "
            f"warps hide less memory latency. Keep fewer values live at once (float32, not "
            f"float64; fewer per-thread arrays and unrolled temporaries)"),
            _WEIGHT["occupancy_registers"]))
    sms = limits.sm_count
    if grid_blocks is not None and sms and blocks and grid_blocks < sms:
        out.append(Hint("few_blocks", None, (
            f"too few blocks to fill the GPU: the timed launch has {grid_blocks} blocks for "
            f"{sms} SMs, so {sms - grid_blocks} SMs sit idle. Use smaller blocks"),
            _WEIGHT["few_blocks"]))
    return out


def find(ptx: str | None, report: dict | None, source=None, filename: str | None = None,
         device: str = "sim", threads_per_block: int | None = None,
         grid_blocks: int | None = None, limits: DeviceLimits | None = None,
         kernel: KernelFacts | None = None,
         block_constants: tuple[str, ...] = ()) -> tuple[list[Hint], list[str]]:
    """Hints for one kernel, likeliest first, and what could not be checked (sentences).

    ``ptx``: the PTX of the student's kernel (None: not compiled); ``report``: the instrumented
    run's report (None: not run); ``source``: :class:`autograder.source.submission.Source` for line
    labels; ``filename``: the file name the PTX's ``.file`` entries end with; ``device``:
    ``"sim"`` or ``"gpu:<name>"``; ``threads_per_block`` and ``grid_blocks``: of the timed
    launch (None: unknown); ``limits``: the GPU's (:meth:`DeviceLimits.from_record`; None: the
    fallback table by the PTX's compute capability, without SM count); ``kernel``: Numba's
    register and shared-memory counts (None: the PTX's shared memory, registers unknown);
    ``block_constants``: the constants the exercise's block size is made of (``BLOCK_SIZE``):
    a loop bounded by ``cuda.blockDim`` could use them and be unrolled."""
    hints: list[Hint] = []
    missing = list(UNAVAILABLE)
    on_gpu = device.startswith("gpu")
    if ptx:
        hints += _float64_hints(ptx, source, filename)
        hints += _loop_hints(ptx, source, filename, block_constants)
    else:
        missing.append("float64 arithmetic and loop unrolling: the kernel's PTX is not "
                       "available")
    cc = compute_capability(ptx) if ptx else None
    limits = limits or DeviceLimits.from_cc(cc)
    shared = kernel.shared_bytes if kernel else None
    if shared is None and ptx:
        from autograder.judge import ptx as ptx_facts

        shared = ptx_facts.facts(ptx).shared_bytes
    regs = kernel.regs_per_thread if kernel else None
    if not regs:
        missing.append("registers per thread: need a GPU (Numba counts them when it builds "
                       "the kernel for a device)")
    if limits is None or shared is None:
        missing.append(f"{_OCCUPANCY_MISSING}no per-SM limits or shared-memory count"
                       + (f" (compute capability {cc})" if cc else ""))
    elif not threads_per_block:
        missing.append(f"{_OCCUPANCY_MISSING}this exercise has no timed launch to size")
    else:
        if not limits.sm_count:
            missing.append("grid size against the SMs: needs the GPU's SM count"
                           + ("" if on_gpu else " (simulator)"))
        hints += _occupancy_hints(shared, threads_per_block, grid_blocks, limits, regs)
    if report is not None:
        hints += (_uncoalesced_hints(report, source) + _bank_hints(report, source)
                  + _divergence_hints(report, source))
    else:
        missing.append("uncoalesced loads and stores, bank conflicts, divergent branches and "
                       "global loads per output element: no instrumented run")
    hints.sort(key=lambda h: (-h.weight, h.line or 0))
    return hints, missing


def _launch_size(exercise, consts: dict) -> tuple[int | None, int | None]:
    """Threads per block and blocks of the exercise's timed launch at the student's constants."""
    from autograder.wire import shapes

    if exercise.timing is None or not exercise.contract.kernel:
        return None, None
    try:
        params = exercise.timing.params
        grid = shapes.evaluate(exercise.contract.grid, params, consts)
        block = shapes.evaluate(exercise.contract.block, params, consts)
        return math.prod(block), math.prod(grid)
    except Exception:  # a student's odd constant: no occupancy hint, never a crash
        return None, None


def _block_constants(exercise, consts: dict) -> tuple[str, ...]:
    """The submission's constants that the exercise's block size is written with
    (``("BLOCK_SIZE",)``, ``("TILE_DIM", "BLOCK_ROWS")``), in the contract's order."""
    import ast

    names: list[str] = []
    for expr in getattr(exercise.contract, "block", ()) or ():
        try:
            found = [n.id for n in ast.walk(pyast.parse(str(expr), mode="eval"))
                     if isinstance(n, ast.Name)]
        except SyntaxError:
            continue
        names += [n for n in found if n in consts and n not in names]
    return tuple(names)


def configuration_hint(exercise, reference: dict | None,
                       limits: DeviceLimits | None = None) -> Hint | None:
    """The student's constants are not the instructor's (issue 30: the timing compares with the
    instructor's kernel at the instructor's configuration): which differ, the blocks of the
    timed launch at each (threads per block) and, with the GPU's ``limits``, the thread slots
    of an SM such blocks can fill (block granularity: an SM holds at most
    ``max_blocks_per_sm`` blocks, however small). ``reference``: the timing test's
    ``details["timing"]["reference"]`` (:func:`autograder.timing.measure.reference_details`:
    ``constants``, ``student_constants``). None where the constants agree or are not known."""
    reference = reference if isinstance(reference, dict) else {}
    theirs, yours = reference.get("constants"), reference.get("student_constants")
    if not isinstance(theirs, dict) or not isinstance(yours, dict):
        return None
    differ = [name for name in yours if name in theirs and yours[name] != theirs[name]]
    if not differ:
        return None
    mine = " and ".join(f"{name} {yours[name]}" for name in differ)
    instructor = " and ".join(f"{name} {theirs[name]}" for name in differ)
    t_you, _ = _launch_size(exercise, yours)
    t_them, _ = _launch_size(exercise, theirs)
    sizes = (f" (blocks of {t_you} threads against {t_them})" if t_you and t_them else "")
    text = (f"your kernel runs with {mine}, the instructor's with {instructor}{sizes}: the "
            f"timing compares with the instructor's kernel at its own configuration, so the "
            f"block shape you chose is part of your time")
    weight = _WEIGHT["configuration"]
    if limits is not None and t_you and t_them:
        b_you, _ = occupancy(t_you, 0, limits)
        b_them, _ = occupancy(t_them, 0, limits)
        filled, theirs_filled = b_you * t_you, b_them * t_them
        if filled < theirs_filled:
            text += (f". An SM holds at most {limits.max_blocks_per_sm} blocks and "
                     f"{limits.max_threads_per_sm} threads, so blocks of {t_you} threads fill "
                     f"at most {filled} of its thread slots, the instructor's {theirs_filled}: "
                     f"fewer resident warps hide less memory latency")
            weight += 1.5 * (1 - filled / theirs_filled)
    return Hint("configuration", None, text + ". See the lecture on block granularity",
                weight)


#: What :func:`find` and :func:`reuse_hint` compare, by what they need: named in the timing
#: test's message when none of them found a cause (:func:`compared_text`).
_COMPARED_PTX = "float64 instructions and loops left un-unrolled in the compiled PTX"
_COMPARED_RUN = ("global loads per output element against the instructor's kernel, coalescing "
                 "of global loads and stores, shared-memory bank conflicts and divergent warp "
                 "branches in the instrumented run")
_OCCUPANCY_MISSING = "occupancy: "  # how an entry of find()'s missing list about occupancy starts
_COMPARED_OCC = "occupancy (shared memory, registers and blocks per SM)"


def compared_text(ptx: str | None, report: dict | None, missing: list[str]) -> str:
    """The timing test's words when no hint found a cause for its lost points: what was
    compared, and that the difference is in the kernel's speed itself."""
    checked = ([_COMPARED_PTX] if ptx else []) + ([_COMPARED_RUN] if report is not None else [])
    if not any(m.startswith(_OCCUPANCY_MISSING) for m in missing):
        checked.append(_COMPARED_OCC)
    what = "; ".join(checked) if checked else "nothing (no PTX and no instrumented run came back)"
    return ("; none of the causes the grader looks for shows in your kernel (it compared: "
            f"{what}), so the difference is in your kernel's speed itself: the same work takes "
            "longer in the way your code does it. Compare your loop structure and memory "
            "accesses with the pattern the exercise teaches")


def apply(result: ExerciseResult, grading: Grading, kids: Children, report: dict | None,
          filename: str = "submission.py") -> None:
    """Add the hints test of ``grading`` to ``result`` and name the likeliest cause in the
    message of a timing test that lost points; where no hint has one, that message says what
    was compared and that the difference is in the kernel's speed (:func:`compared_text`),
    never that no cause was found. Read from the children: the kernel's PTX
    (``kids.compiled``'s ``compiled`` record; None: not compiled), the submission's constants
    (``kids.run``'s ``imported`` record: ``TILE_WIDTH``, ... for the timed launch's size and
    the block's constants) and, from a GPU child, its ``device`` and ``kernel`` records.
    ``report``: the instrumented runs' merged report (None: none); ``filename``: what the PTX's
    ``.file`` paths end with (the grader compiles a scratch ``submission.py``). Does nothing
    for an exercise without a kernel."""
    exercise, source = grading.exercise, grading.source
    if not exercise.contract.kernel or exercise.contract.functions:
        return
    rx = received(kids.run)
    compiled, imported = received(kids.compiled).first(Compiled), rx.first(Imported)
    device, kernel = rx.first(Device), rx.first(Kernel)
    ptx, consts = compiled.ptx if compiled else None, imported.constants if imported else None
    threads, blocks = _launch_size(exercise, consts or {})
    hints, missing = find(ptx, report, source, filename, result.device, threads, blocks,
                          DeviceLimits.from_record(device.to_header() if device else None),
                          KernelFacts.from_record(kernel.to_header() if kernel else None),
                          _block_constants(exercise, consts or {}))
    reuse = reuse_hint(exercise, report, source)
    if reuse is not None:
        hints.append(reuse)
    lost = [t for t in result.tests if t.kind is Kind.TIMING and t.points < t.max_points
            and (t.details or {}).get("timing")]
    config = configuration_hint(exercise, lost[0].details["timing"].get("reference"),
                                DeviceLimits.from_record(device.to_header() if device else None)
                                ) if lost else None
    if config is not None:  # only where it may explain lost points
        hints.append(config)
    hints.sort(key=lambda h: (-h.weight, h.line or 0))
    if hints:
        message = f"{len(hints)} hint(s), no points: " + "; ".join(h.text for h in hints[:4])
    else:
        message = ("nothing to report: no float64 arithmetic, loop bounds known only at run "
                   "time, missing reuse, uncoalesced loads or stores, bank conflicts, "
                   "divergent warps or low occupancy found")
    result.tests.append(TestResult(name=NAME, kind=Kind.DIAGNOSTIC, visibility="hidden",
                                   status=Status.PASSED, points=0.0, max_points=0.0,
                                   message=message,
                                   details={"hints": [h.to_dict() for h in hints],
                                            "unavailable": missing}))
    for t in result.tests:
        if t.kind is Kind.TIMING and t.status in (Status.PASSED, Status.FAILED) \
                and t.points < t.max_points and (t.details or {}).get("timing"):
            t.message += ("; likeliest cause: " + hints[0].text) if hints else \
                compared_text(ptx, report, missing)
