"""Issue 22: textbook-correct variants of each timed exercise (``variants/`` in its folder: loop
bounds from ``cuda.blockDim``, ``cuda.grid()`` indexing, the course material's own kernel) get
full points on a GPU. Issue 30: every student is timed against the fastest instructor reference
(``solution.py`` or ``solution_blockdim.py``) at the instructor's constants, whatever the
student's loops look like. A kernel whose loops are bounded by ``cuda.blockDim`` at run time
cannot be unrolled (1.32x for the reduction, 1.37x for the transpose, 2.7x for the tiled
matmuls, whose inner loop then stays a loop, against the instructor's compile-time bounds, H100
2026-11-27): a ``blockdim_loop`` variant may lose timing points, all of them for a matmul, and
then only with that cause named in its timing message (the ``runtime_loop_bound`` hint). Likewise
a variant whose constants differ from the instructor's (``transpose/square_block``: BLOCK_ROWS 32
against 8, 1.58x) may lose timing points only with the two configurations named (the
``configuration`` hint, the lecture on block granularity). Correctness and concept are full for
every variant."""

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


def test_only_the_blockdim_variants_bound_their_loops_at_run_time():
    """The ``blockdim_loop`` variants and each ``solution_blockdim.py`` are read as bounding
    their loops by ``cuda.blockDim`` (what the GPU test below allows to cost time), never a
    solution, a known-bad submission or a variant that reads ``cuda.blockDim`` only for an
    index; every timed exercise's run-time-bounds kernel is one of its timing references."""
    for name, path in VARIANTS:
        assert _reads_block_dim(name, path) == (path.stem == "blockdim_loop"), path
    timed = [e.name for e in exercises.all_exercises() if e.timing]
    for name in timed:
        blockdim = exercises.solution_folders(name)[0] / f"{name}_blockdim.py"
        assert _reads_block_dim(name, blockdim), blockdim
        assert exercises.timing_solution_paths(name) == [exercises.solution_path(name), blockdim]
        for path in [exercises.solution_path(name), *exercises.mutants(name)]:
            assert not _reads_block_dim(name, path), path


@needs_gpu("grades each textbook variant on a GPU with its timing")
@pytest.mark.gpu
@pytest.mark.parametrize("name,path", VARIANTS, ids=[f"{n}/{p.stem}" for n, p in VARIANTS])
def test_textbook_variant_keeps_its_points_or_is_told_why_on_a_gpu(name, path):
    result = grade_file(path, name, sanitize=False)
    timing = [t for t in result.tests if t.kind == Kind.TIMING]
    assert timing, "no timing test"
    if timing[0].points < timing[0].max_points:
        message = timing[0].message
        assert "likeliest cause" in message, message
        if path.stem == "blockdim_loop":
            assert "cuda.blockDim" in message, message
        else:  # its own configuration, named against the instructor's
            assert "against the instructor's" in message and "block granularity" in message, \
                message
        print(f"\n{name}/{path.stem}: {timing[0].points}/{timing[0].max_points} {message[:300]}")
    lost = [f"{t.name}: {t.status.value} {t.message[:160]}" for t in result.tests
            if t.points < t.max_points and t.kind != Kind.TIMING]
    assert not lost, "\n".join(lost)
