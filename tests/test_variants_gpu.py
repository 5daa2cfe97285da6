"""Issue 22: textbook-correct variants of each timed exercise (``variants/`` in its folder: loop
bounds from ``cuda.blockDim``, ``cuda.grid()`` indexing, the course material's own kernel) get
full points on a GPU, timing included. A kernel whose loops are bounded by ``cuda.blockDim`` at
run time (no unrolling: 1.32x for the reduction, 1.37x for the transpose against the
instructor's compile-time bounds, H100 2026-11-24) is timed against the instructor's kernel
bounded the same way (``solution_blockdim.py``); every other kernel against ``solution.py``."""

from __future__ import annotations

import pytest

from autograder import exercises
from autograder.wire.results import Kind

from autograder.timing.measure import loop_bounds_at_run_time
from conftest import grade_file, needs_gpu

VARIANTS = [(name, path) for name in exercises.names() for path in exercises.variants(name)]


def test_every_timed_exercise_lists_variants():
    timed = {e.name for e in exercises.all_exercises() if e.timing}
    assert timed <= {name for name, _ in VARIANTS}


def _reads_block_dim(name, path, text=None) -> bool:
    contract = exercises.get(name).contract
    return loop_bounds_at_run_time(text or path.read_text(encoding="utf-8"), contract.kernel,
                                   [c.name for c in contract.constants])


def test_the_timing_reference_follows_the_students_loop_bounds():
    """Only kernels whose loops are bounded by ``cuda.blockDim`` get the run-time reference:
    the ``blockdim_loop`` variants and each ``solution_blockdim.py``, never a solution, a
    known-bad submission or a variant that reads ``cuda.blockDim`` only for an index."""
    for name, path in VARIANTS:
        assert _reads_block_dim(name, path) == (path.stem == "blockdim_loop"), path
    timed = [e.name for e in exercises.all_exercises() if e.timing]
    for name in timed:
        blockdim = exercises.solution_folders(name)[0] / f"{name}_blockdim.py"
        assert _reads_block_dim(name, blockdim), blockdim
        assert exercises.timing_solution_path(name, True) == blockdim
        assert exercises.timing_solution_path(name, False) == exercises.solution_path(name)
        for path in [exercises.solution_path(name), *exercises.mutants(name)]:
            assert not _reads_block_dim(name, path), path


def test_an_added_loop_over_block_dim_does_not_buy_the_slower_reference():
    """A knowing student who keeps the interleaved reduction's compile-time loop and adds a loop
    over ``cuda.blockDim`` is still timed against ``solution.py``."""
    path = exercises.folder("block_sum") / "mutants" / "interleaved.py"
    text = path.read_text(encoding="utf-8").replace(
        "    stride = 1\n", "    stride = 1\n    for _ in range(cuda.blockDim.x // 4096):\n"
        "        stride = 1\n")
    assert "4096" in text
    assert not _reads_block_dim("block_sum", path, text)
    runtime = text.replace("while stride < BLOCK_SIZE:", "while stride < cuda.blockDim.x:")
    assert _reads_block_dim("block_sum", path, runtime)  # then its loop is compiled so too


@needs_gpu("grades each textbook variant on a GPU with its timing")
@pytest.mark.gpu
@pytest.mark.parametrize("name,path", VARIANTS, ids=[f"{n}/{p.stem}" for n, p in VARIANTS])
def test_textbook_variant_gets_full_points_on_a_gpu(name, path):
    result = grade_file(path, name, sanitize=False)
    timing = [t for t in result.tests if t.kind == Kind.TIMING]
    assert timing and timing[0].points == timing[0].max_points, timing[0].message if timing else ""
    lost = [f"{t.name}: {t.status.value} {t.message[:160]}" for t in result.tests
            if t.points < t.max_points]
    assert not lost, "\n".join(lost)
