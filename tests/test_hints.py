"""Performance hints (autograder/judge/hints.py): each hint fires on a small kernel that has the
problem (tests/files/hints/) and stays quiet on the same kernel without it.

The PTX comes from Numba's real CUDA target (NVVM, no GPU) and the instrumented report from the
simulator, each in its own child process (one process cannot hold both targets)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.exercises import known_bad
from autograder.judge import hints
from autograder.judge import occupancy_calculator as occupancy
from autograder.judge.inputs import Children, Grading
from autograder.sandbox.run import ChildRun
from autograder.wire.protocol import Compiled, Imported
from autograder.wire.results import ExerciseResult, Kind, Status, TestResult
from autograder.source.submission import load_source
from autograder.timing.measure import ratio_stats, timing_details
from conftest import SOLUTIONS, grade_file

HINTS = Path(__file__).resolve().parent / "files" / "hints"
KERNELS = ["f64_accumulator", "f32_accumulator", "column_tile", "padded_tile",
           "interleaved_sum", "sequential_sum", "big_shared", "small_shared", "strided_read",
           "coalesced_read", "blockdim_sum", "naive_matmul", "edge_cut_tile", "whole_tile",
           "halo_tile"]

# An H200 as its driver reports it (harness.device_facts), and the simulator's fallback.
H200 = hints.DeviceLimits(max_threads_per_sm=2048, max_blocks_per_sm=32,
                          shared_per_sm=228 * 1024, registers_per_sm=65536, sm_count=132,
                          reserved_shared_per_block=1024)

_PROBE = r"""
import importlib.util, json, sys
out = {}
for path in sys.argv[2:]:
    spec = importlib.util.spec_from_file_location("hint_kernel", path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    if sys.argv[1] == "ptx":
        from numba import cuda, typeof
        sig = tuple(typeof(a) for a in m.make_args())
        out[path] = cuda.compile_ptx(m.kernel.py_func, sig, cc=(9, 0), lineinfo=True)[0]
    else:
        from autograder.instrument import instrumented_launch
        out[path] = instrumented_launch(m.kernel, m.GRID, m.BLOCK, m.make_args(), max_blocks=2)
json.dump(out, sys.stdout)
"""


def _probe(mode: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    if mode == "report":
        env["NUMBA_ENABLE_CUDASIM"] = "1"
    paths = [str(HINTS / f"{k}.py") for k in KERNELS]
    done = subprocess.run([sys.executable, "-c", _PROBE, mode, *paths], capture_output=True,
                          text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return {Path(p).stem: v for p, v in json.loads(done.stdout).items()}


@pytest.fixture(scope="module")
def ptx() -> dict:
    return _probe("ptx")


@pytest.fixture(scope="module")
def report() -> dict:
    return _probe("report")


def _kinds(name, ptx, report, **kw):
    found, _ = hints.find(ptx[name], report[name], load_source(HINTS / f"{name}.py"),
                          f"{name}.py", **kw)
    return found


def _line_of(name: str, text: str) -> int:
    """The first code line (not the docstring) of a hint kernel containing ``text``."""
    lines = (HINTS / f"{name}.py").read_text().splitlines()
    return next(n for n, ln in enumerate(lines, 1) if text in ln and ln.startswith(" "))


def test_float64_accumulator_is_named_with_its_line_and_its_literal(ptx, report):
    found = _kinds("f64_accumulator", ptx, report)
    f64 = [h for h in found if h.kind == "float64"]
    assert len(f64) == 1
    assert f64[0].line == _line_of("f64_accumulator", "acc += x[i, j]")
    assert f"line {_line_of('f64_accumulator', 'acc = 0.')} (`acc = 0.`)" in f64[0].text
    assert "float32(0.0)" in f64[0].text
    assert _line_of("f64_accumulator", "acc = 0.") in f64[0].also  # shown beside it


def test_float32_accumulator_has_no_float64_hint(ptx, report):
    assert not [h for h in _kinds("f32_accumulator", ptx, report) if h.kind == "float64"]


def test_column_read_of_unpadded_tile_is_a_bank_conflict(ptx, report):
    found = [h for h in _kinds("column_tile", ptx, report) if h.kind == "bank_conflict"]
    assert [h.line for h in found] == [_line_of("column_tile", "b[r, tx] = tile[tx, r]")]
    assert "32-way" in found[0].text


def test_bank_conflict_advice_is_the_arrays_own_and_pads_only_where_that_helps(ptx, report):
    """Issue 32, item 19: the advice names the student's array and widths, never another
    exercise's TILE_DIM, and suggests padding only where padding by one removes the conflict:
    a 32x32 tile read along a column (32-way, 1-way padded), not a 16x16 block reading an
    18-wide halo tile (2-way either way). The instrumented run's own messages say the same."""
    from autograder.instrument import messages

    column = [h for h in _kinds("column_tile", ptx, report) if h.kind == "bank_conflict"]
    assert "padding tile's inner dimension by one element (tile of shape (32, 32 + 1))" in \
        column[0].text.lower()
    halo = [h for h in _kinds("halo_tile", ptx, report) if h.kind == "bank_conflict"]
    assert halo and all("2-way" in h.text for h in halo)
    for h in halo:
        assert "would not remove it" in h.text
        assert "padding halo's inner dimension" not in h.text.lower()
    said = [m["text"] for name in ("column_tile", "halo_tile")
            for m in messages(report[name]) if m["concept"] == "bank_conflict"]
    assert len(said) == 3 and "tile of shape (32, 32 + 1)" in said[0]
    for text in [h.text for h in column + halo] + said:
        assert "TILE_DIM" not in text


def test_padded_tile_has_no_bank_conflict_hint(ptx, report):
    assert not [h for h in _kinds("padded_tile", ptx, report) if h.kind == "bank_conflict"]


def test_interleaved_reduction_is_divergent(ptx, report):
    found = [h for h in _kinds("interleaved_sum", ptx, report) if h.kind == "divergence"]
    assert [h.line for h in found] == [_line_of("interleaved_sum", "tid % (2 * stride)")]


def test_sequential_reduction_has_no_divergence_hint(ptx, report):
    assert not [h for h in _kinds("sequential_sum", ptx, report) if h.kind == "divergence"]


def test_big_shared_array_limits_occupancy_on_a_gpu(ptx, report):
    found = _kinds("big_shared", ptx, report, device="gpu:NVIDIA H200", threads_per_block=128,
                   grid_blocks=4096)
    occ = [h for h in found if h.kind == "occupancy_shared"]
    assert len(occ) == 1 and "49152 bytes" in occ[0].text and "4 block(s)" in occ[0].text


def test_small_shared_array_does_not_limit_occupancy(ptx, report):
    found = _kinds("small_shared", ptx, report, device="gpu:NVIDIA H200", threads_per_block=128,
                   grid_blocks=4096)
    assert not [h for h in found if h.kind in ("occupancy_shared", "few_blocks")]


def test_too_few_blocks_for_the_sms(ptx, report):
    few = _kinds("small_shared", ptx, report, device="gpu:NVIDIA H200", threads_per_block=128,
                 grid_blocks=8, limits=H200)
    assert [h.kind for h in few if h.kind == "few_blocks"] == ["few_blocks"]
    assert "8 blocks for 132 SMs" in next(h.text for h in few if h.kind == "few_blocks")


def test_simulator_falls_back_to_the_compute_capability_table(ptx, report):
    found, missing = hints.find(ptx["big_shared"], report["big_shared"], device="sim",
                                threads_per_block=128, grid_blocks=8)
    occ = [h for h in found if h.kind == "occupancy_shared"]
    assert len(occ) == 1 and "limits of compute capability 9.0" in occ[0].text
    assert not [h for h in found if h.kind == "few_blocks"]  # no SM count without a GPU
    assert any("registers per thread: need a GPU" in m for m in missing)
    assert any("SM count" in m for m in missing)


def test_strided_read_is_uncoalesced(ptx, report):
    found = [h for h in _kinds("strided_read", ptx, report) if h.kind == "uncoalesced"]
    assert [h.line for h in found] == [_line_of("strided_read", "a[col, row]")]
    assert "32 32-byte sectors" in found[0].text and "fit in 4" in found[0].text
    coal = report["strided_read"]["global_loads"]["coalescing"]
    assert [(c["array"], c["sectors"] / c["requests"]) for c in coal] == [("a", 32.0)]


def test_coalesced_read_has_no_uncoalesced_hint(ptx, report):
    assert not [h for h in _kinds("coalesced_read", ptx, report) if h.kind == "uncoalesced"]
    coal = report["coalesced_read"]["global_loads"]["coalescing"]
    assert [(c["array"], c["sectors"] / c["requests"]) for c in coal] == [("a", 4.0)]


def test_a_column_write_is_an_uncoalesced_store(ptx, report):
    """coalesced_read reads A along rows and writes B down a column: its stores move 32
    sectors per warp where 4 hold the elements; strided_read writes along rows."""
    found = [h for h in _kinds("coalesced_read", ptx, report) if h.kind == "uncoalesced_store"]
    assert [h.line for h in found] == [_line_of("coalesced_read", "b[col, row] = a[row, col]")]
    assert "the stores of b are not coalesced" in found[0].text
    assert "32 32-byte sectors" in found[0].text and found[0].basis == "measured"
    stores = report["coalesced_read"]["global_stores"]["coalescing"]
    assert [(c["array"], c["sectors"] / c["requests"]) for c in stores] == [("b", 32.0)]
    assert not [h for h in _kinds("strided_read", ptx, report) if h.kind == "uncoalesced_store"]
    stores = report["strided_read"]["global_stores"]["coalescing"]
    assert [(c["array"], c["sectors"] / c["requests"]) for c in stores] == [("b", 4.0)]


def test_a_loop_bound_from_blockdim_is_not_unrolled(ptx, report):
    """The issue's reduction: `stride = cuda.blockDim.x // 2` keeps the loop in the PTX (1.33x
    on a GPU), `BLOCK_SIZE // 2` unrolls it. Named only where the block size is a constant."""
    line = _line_of("blockdim_sum", "while stride > 0")
    assert line in hints.ptx_loop_lines(ptx["blockdim_sum"])
    assert _line_of("sequential_sum", "while stride > 0") not in \
        hints.ptx_loop_lines(ptx["sequential_sum"])
    found = [h for h in _kinds("blockdim_sum", ptx, report, block_constants=("BLOCK_SIZE",))
             if h.kind == "runtime_loop_bound"]
    assert [h.line for h in found] == [line]
    assert "cuda.blockDim" in found[0].text and "BLOCK_SIZE // 2" in found[0].text
    assert found[0].basis == "inferred" and found[0].text.endswith(
        "(inferred: read off the source and the compiled PTX)")
    assert not [h for h in _kinds("sequential_sum", ptx, report, block_constants=("BLOCK_SIZE",))
                if h.kind == "runtime_loop_bound"]
    assert not [h for h in _kinds("blockdim_sum", ptx, report)
                if h.kind == "runtime_loop_bound"]   # no constant to use instead


def test_an_inner_loop_cut_at_the_matrix_s_edge_is_not_unrolled(ptx, report):
    """matmul_any_size's honest kernel lost its timing points on an H200 (3.39x) to its inner
    loop's run-time trip count, and the timing message blamed a divergent branch instead."""
    line = _line_of("edge_cut_tile", "for q in range")
    assert line in hints.ptx_loop_lines(ptx["edge_cut_tile"])
    assert _line_of("whole_tile", "for q in range") not in hints.ptx_loop_lines(ptx["whole_tile"])
    kw = dict(block_constants=("TILE_WIDTH",))
    found = _kinds("edge_cut_tile", ptx, report, **kw)
    inner = [h for h in found if h.kind == "runtime_inner_loop"]
    assert [h.line for h in inner] == [line]
    assert "min(TILE_WIDTH, n - p * TILE_WIDTH)" in inner[0].text
    assert "range(TILE_WIDTH)" in inner[0].text
    assert found[0].kind == "runtime_inner_loop" or found[0].weight > inner[0].weight
    assert not [h for h in found if h.kind == "divergence" and h.weight > inner[0].weight]
    assert not [h for h in _kinds("whole_tile", ptx, report, **kw)
                if h.kind == "runtime_inner_loop"]
    # the outer phase loop's trip count is known only at run time too, and is no inner loop
    assert not [h for h in found if h.line == _line_of("edge_cut_tile", "for p in range")]


def test_a_naive_matmul_is_told_it_does_not_reuse_through_shared_memory(ptx, report):
    from autograder import exercises

    ex = exercises.get("tiled_matmul")
    rep = {**report["naive_matmul"], "constants": {"TILE_WIDTH": 16}, "params": {"width": 37}}
    found = hints.reuse_hint(ex, rep, load_source(HINTS / "naive_matmul.py"))
    assert found is not None and found.kind == "no_reuse" and found.basis == "measured"
    assert "74.0 times per output element" in found.text and "about 6.0" in found.text
    assert found.line == _line_of("naive_matmul", "acc += A[row, k] * B[k, col]")
    assert hints.reuse_hint(ex, {**rep, "global_loads": {}}) is None
    assert hints.reuse_hint(exercises.get("block_sum"), rep) is None  # no load count to compare


def _occupancy(regs: int, threads: int = 256, shared: int = 0):
    return hints._occupancy_hints(shared, threads, 4096, H200, regs)


def test_registers_that_limit_the_blocks_per_sm_are_named():
    # 128 registers x 32 lanes = 4096 per warp: 16 warps of 2048 slots, 2 blocks of 256.
    found = _occupancy(128)
    assert [h.kind for h in found] == ["occupancy_registers"]
    assert "128 registers per thread" in found[0].text and "2 block(s)" in found[0].text
    assert hints.occupancy(256, 0, H200, 128) == (2, "registers")


def test_registers_that_do_not_limit_occupancy_are_not_named():
    assert _occupancy(32) == []   # 8 blocks of 256 by registers and by threads alike
    assert hints.occupancy(256, 0, H200, 32) == (8, "threads")
    # 33 x 32 = 1056 registers per warp, allocated as 1280: 51 warps, 6 blocks of 8 warps
    assert occupancy.blocks_by_registers(256, 33) == 6


def test_device_and_kernel_records_feed_the_hints():
    from autograder.child import harness

    class Dev:  # what numba's Device answers, attribute by attribute
        name, compute_capability = b"NVIDIA H200", (9, 0)
        MULTIPROCESSOR_COUNT, MAX_THREADS_PER_MULTIPROCESSOR = 132, 2048
        MAX_BLOCKS_PER_MULTIPROCESSOR, MAX_SHARED_MEMORY_PER_MULTIPROCESSOR = 32, 233472
        MAX_REGISTERS_PER_MULTIPROCESSOR, MAX_THREADS_PER_BLOCK = 65536, 1024
        MAX_SHARED_MEMORY_PER_BLOCK, MAX_REGISTERS_PER_BLOCK = 49152, 65536
        RESERVED_SHARED_MEMORY_PER_BLOCK = 1024

    class Overload:
        regs_per_thread, shared_mem_per_block = 128, 2048
        local_mem_per_thread, max_threads_per_block = 0, 512

    class Kernel:
        overloads = {("sig",): Overload()}

    device = harness.device_facts(Dev())
    assert device["name"] == "NVIDIA H200" and device["multiprocessors"] == 132
    assert hints.DeviceLimits.from_record(device) == H200
    kernel = harness.kernel_facts(Kernel())
    assert hints.KernelFacts.from_record(kernel) == hints.KernelFacts(128, 2048)
    assert hints.DeviceLimits.from_record({"type": "device", "name": "old child"}) is None


def test_clean_kernels_report_nothing(ptx, report):
    kw = dict(device="gpu:NVIDIA H200", threads_per_block=128, grid_blocks=4096, limits=H200,
              kernel=hints.KernelFacts(32, 0))
    for name in ("padded_tile", "sequential_sum", "small_shared"):
        assert _kinds(name, ptx, report, **kw) == [], name
    # Reads along rows, writes down a column: its stores are the one cause.
    assert [h.kind for h in _kinds("coalesced_read", ptx, report, **kw)] == ["uncoalesced_store"]
    # One row per thread: lanes 32 bytes apart, so this one's loads are uncoalesced (8x).
    assert [h.kind for h in _kinds("f32_accumulator", ptx, report, **kw)] == ["uncoalesced"]


def test_occupancy_uses_the_lecture_calculator():
    # 256 threads, 48 KB per block on Hopper: shared memory allows 4 blocks, threads 8.
    assert hints.occupancy(256, 48 * 1024, hints.SM_LIMITS[(9, 0)]) == (4, "shared")
    assert hints.occupancy(256, 2048, hints.SM_LIMITS[(9, 0)]) == (8, "threads")


class _Exercise:
    """The parts of an exercise :func:`hints.apply` reads."""

    class contract:  # noqa: N801
        kernel, functions = "kernel", ()
        grid, block = ("ceil(n / BLOCK)",), ("BLOCK",)

    class timing:  # noqa: N801
        params = {"n": 1 << 20}


def _kids(ptx: str | None, consts: dict) -> Children:
    """A grading's children as :func:`hints.apply` reads them: the correctness child
    sent the submission's ``consts``, the compile child the kernel's ``ptx`` (None: none)."""
    compiled = [(Compiled(ptx=ptx).to_header(), {})] if ptx else []
    return Children(run=ChildRun(records=[(Imported(constants=consts).to_header(), {})]),
                    compiled=ChildRun(records=compiled))


def _grading(exercise, source) -> Grading:
    return Grading(exercise=exercise, source=source, backend="gpu")


def _timed(ratio: float, points: float) -> ExerciseResult:
    s, i = [ratio] * 12, [1.0] * 12
    t = TestResult(name="timing: against the instructor's kernel", kind=Kind.TIMING,
                   visibility="hidden", status=Status.PASSED if points == 25 else Status.FAILED,
                   points=points, max_points=25.0, message="ratio",
                   details=timing_details(s, i, ratio_stats(s, i), 1.25, 2.0, {"n": 1 << 20}))
    return ExerciseResult("block_sum", "x.py", "gpu:NVIDIA H200", [t])


def test_a_timing_loss_names_its_likeliest_cause(ptx, report):
    result = _timed(1.5, 12.5)
    hints.apply(result, _grading(_Exercise, load_source(HINTS / "f64_accumulator.py")),
                _kids(ptx["f64_accumulator"], {"BLOCK": 256}), report["f64_accumulator"],
                "f64_accumulator.py")
    timing, added = result.tests[0], result.tests[-1]
    assert "likeliest cause: line" in timing.message and "float64" in timing.message
    assert timing.points == 12.5 and timing.status is Status.FAILED
    assert added.name == hints.NAME and added.kind is Kind.DIAGNOSTIC
    assert added.max_points == 0 and added.status is Status.PASSED
    # float64 first; its row-per-thread loads are uncoalesced too (a lesser cause)
    assert [h["kind"] for h in added.details["hints"]] == ["float64", "uncoalesced"]
    json.dumps(result.to_dict())


def test_full_timing_points_and_a_clean_kernel_say_so(ptx, report):
    result = _timed(1.0, 25.0)
    hints.apply(result, _grading(_Exercise, load_source(HINTS / "padded_tile.py")),
                _kids(ptx["padded_tile"], {"BLOCK": 256}), report["padded_tile"],
                "padded_tile.py")
    assert result.tests[0].message == "ratio"
    assert result.tests[-1].message.startswith("nothing to report")
    assert result.score == 25.0


def test_lost_timing_points_without_a_found_cause_say_what_was_compared(ptx, report):
    """Never "no likely cause found": the message names what was compared and that the
    difference is in the kernel's speed."""
    result = _timed(1.4, 20.0)
    hints.apply(result, _grading(_Exercise, load_source(HINTS / "padded_tile.py")),
                _kids(ptx["padded_tile"], {"BLOCK": 256}), report["padded_tile"],
                "padded_tile.py")
    msg = result.tests[0].message
    assert "no likely cause" not in msg
    assert "it compared: float64 instructions" in msg and "instrumented run" in msg
    assert "the difference is in your kernel's speed itself" in msg
    bare = _timed(1.4, 20.0)
    hints.apply(bare, _grading(_Exercise, None), _kids(None, {"BLOCK": 256}), None)
    assert "nothing (no PTX and no instrumented run came back)" in bare.tests[0].message


class _Reduction(_Exercise):
    class contract:  # noqa: N801
        kernel, functions = "kernel", ()
        grid, block = ("ceil(n / BLOCK_SIZE)",), ("BLOCK_SIZE",)


def test_the_issue_s_cases_name_their_cause_in_the_timing_message(ptx, report):
    """The reduction bounded by cuda.blockDim at 1.33x, a naive matmul at 6.2x (issue 22):
    both read "no likely cause found" before."""
    result = _timed(1.33, 22.6)
    hints.apply(result, _grading(_Reduction, load_source(HINTS / "blockdim_sum.py")),
                _kids(ptx["blockdim_sum"], {"BLOCK_SIZE": 256}), report["blockdim_sum"],
                "blockdim_sum.py")
    assert "likeliest cause: line" in result.tests[0].message
    assert "cuda.blockDim" in result.tests[0].message
    assert "(inferred: read off the source and the compiled PTX)" in result.tests[0].message

    from autograder import exercises

    ex = exercises.get("tiled_matmul")
    naive = _timed(6.2, 0.0)
    hints.apply(naive, _grading(ex, load_source(HINTS / "naive_matmul.py")),
                _kids(ptx["naive_matmul"], {"TILE_WIDTH": 16}),
                {**report["naive_matmul"], "constants": {"TILE_WIDTH": 16},
                 "params": {"width": 37}}, "naive_matmul.py")
    assert "likeliest cause: line" in naive.tests[0].message
    assert "from global memory 74.0 times per output element" in naive.tests[0].message
    assert naive.tests[-1].details["hints"][0]["basis"] == "measured"


def test_every_hint_says_whether_it_was_measured_or_inferred(ptx, report):
    kw = dict(device="gpu:NVIDIA H200", threads_per_block=128, grid_blocks=8, limits=H200,
              block_constants=("BLOCK_SIZE",))
    seen = set()
    for name in KERNELS:
        for h in _kinds(name, ptx, report, **kw):
            seen.add(h.kind)
            assert h.basis in ("measured", "inferred")
            assert h.text.endswith(")") and f"({h.basis}: " in h.text, h.text
    assert {"float64", "uncoalesced", "uncoalesced_store", "bank_conflict", "divergence",
            "runtime_loop_bound", "runtime_inner_loop", "occupancy_shared",
            "few_blocks"} <= seen


# -- on a GPU: the issue's cases through a whole grading ----------------------------------------

@pytest.mark.gpu
@pytest.mark.parametrize("name, path, cause", [
    ("block_sum", HINTS / "block_sum_blockdim.py", "cuda.blockDim"),
    ("tiled_matmul", HINTS.parents[2] / "assignments" / "tiled_matmul" / "mutants"
     / "naive.py", "from global memory"),
], ids=["blockdim-bound reduction", "naive matmul"])
def test_on_a_gpu_lost_timing_points_name_the_issue_s_causes(name, path, cause):
    """KERNELGRADE_TEST_DEVICE=gpu: the hint is in the hints test, and a timing test that
    loses points names it (the reduction may keep full points once the reference is fair)."""
    from conftest import grade_file

    from autograder.grader import gpu_available

    if os.environ.get("KERNELGRADE_TEST_DEVICE") != "gpu" or not gpu_available():
        pytest.skip("needs a CUDA GPU (KERNELGRADE_TEST_DEVICE=gpu)")
    result = grade_file(path, name)
    found = next(t for t in result.tests if t.name == hints.NAME)
    assert cause in found.message, found.message
    timing = next(t for t in result.tests if t.kind is Kind.TIMING)
    assert "no likely cause" not in timing.message
    if timing.points < timing.max_points and (timing.details or {}).get("timing"):
        assert "likeliest cause: " in timing.message and cause in timing.message, timing.message


def test_a_fault_of_the_hints_never_costs_the_grading(monkeypatch):
    """The hints are a no-points diagnostic: when they fail (a grader bug, or CPython's AST
    converter under load), the grading keeps every point and the instructor is told."""
    def broken(*args, **kwargs):
        raise SystemError("AST constructor recursion depth mismatch (before=42, after=25)")

    monkeypatch.setattr(hints, "apply", broken)
    result = grade_file(SOLUTIONS / "occupancy.py", "occupancy")
    assert not known_bad.full_marks_problems(result)
    assert any("performance hints not given" in n and "SystemError" in n
               for n in result.instructor_notes)
    assert not any("performance hints" in n for n in result.notes)


def _timed_at(student: dict, instructor: dict, ratio: float, points: float) -> ExerciseResult:
    result = _timed(ratio, points)
    result.tests[0].details["timing"]["reference"] = {
        "name": "tiled_matmul.py", "constants": instructor, "student_constants": student}
    return result


def test_a_timing_loss_at_other_constants_than_the_instructors_says_so():
    """Issue 30: timed against the instructor's kernel at its own TILE_WIDTH 16, a kernel at
    TILE_WIDTH 2 is told that the block shape it chose is part of its time (block granularity:
    how many of an SM's thread slots blocks of 4 threads can fill, from the driver's limits)."""
    from autograder import exercises
    from autograder.wire.protocol import Device

    ex = exercises.get("tiled_matmul")
    device = Device(name="NVIDIA H100", multiprocessors=132, max_threads_per_sm=2048,
                    max_blocks_per_sm=32, shared_per_sm=228 * 1024, registers_per_sm=65536)
    kids = _kids(None, {"TILE_WIDTH": 2})
    kids.run.records.insert(0, (device.to_header(), {}))
    result = _timed_at({"TILE_WIDTH": 2}, {"TILE_WIDTH": 16}, 3.0, 0.0)
    hints.apply(result, _grading(ex, None), kids, None)
    found = [h for h in result.tests[-1].details["hints"] if h["kind"] == "configuration"]
    assert len(found) == 1, result.tests[-1].details["hints"]
    text = found[0]["text"]
    assert "TILE_WIDTH 2, the instructor's with TILE_WIDTH 16" in text
    assert "blocks of 4 threads against 256" in text
    assert "fill at most 128 of its thread slots, the instructor's 2048" in text
    assert "block granularity" in text and found[0]["basis"] == "inferred"
    assert "likeliest cause: your kernel runs with TILE_WIDTH 2" in result.tests[0].message
    # The same constants, or full points at other ones: no such hint.
    for student, ratio, points in (({"TILE_WIDTH": 16}, 3.0, 0.0), ({"TILE_WIDTH": 32}, 1.0, 25.0)):
        result = _timed_at(student, {"TILE_WIDTH": 16}, ratio, points)
        hints.apply(result, _grading(ex, None), _kids(None, student), None)
        assert not [h for h in result.tests[-1].details["hints"]
                    if h["kind"] == "configuration"]
