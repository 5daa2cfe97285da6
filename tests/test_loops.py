"""One reading of a kernel's loop bounds (``autograder.source.loops``) for both places that ask:
the timing's choice of reference (``timing.measure.loop_bounds_at_run_time``: the instructor's
kernel bounded by ``cuda.blockDim`` too) and the hint about loops the compiler cannot unroll
(``judge.hints``). Source only: no child, no Numba."""

from __future__ import annotations

from autograder import exercises
from autograder.source import loops
from autograder.timing.measure import loop_bounds_at_run_time

HEAD = ("from numba import cuda\n@cuda.jit\ndef k(x, n):\n    tid = cuda.threadIdx.x\n"
        "    i = cuda.blockIdx.x * cuda.blockDim.x + tid\n")


def _block_size(text: str) -> list[tuple[int, str]]:
    """What the hint reads: (line, bound) of each loop the block's size bounds."""
    return [(loop.line, loop.bound) for loop in loops.loops(text) if loop.block_size]


def _timed_as_blockdim(body: str) -> bool:
    return loop_bounds_at_run_time(HEAD + body, "k", ("TILE_DIM",))


def test_names_assigned_from_blockdim_bound_loops():
    text = ("from numba import cuda\n@cuda.jit\ndef k(x):\n    n = cuda.blockDim.x\n"
            "    half = n // 2\n    for i in range(half):\n        pass\n"
            "    for j in range(8):\n        pass\n    while half > 0:\n        half //= 2\n")
    assert _block_size(text) == [(6, "range(half)"), (10, "half > 0")]
    assert loop_bounds_at_run_time(text, "k")
    assert _block_size("def (") == [] and not loop_bounds_at_run_time("def (", "k")


def test_a_step_of_the_block_size_bounds_a_loop_from_and_to_fixed_places():
    """The transpose's ``range(0, TILE_DIM, cuda.blockDim.y)`` runs TILE_DIM / blockDim.y
    times, known only at launch: the timing takes the blockdim reference and the hint names
    the loop. A block-stride loop from the thread's own index does neither: it runs a
    different number of times in each thread whatever its step, as the instructor's
    ``range(tid, n, BLOCK_SIZE)`` does."""
    tile = "    for j in range(0, TILE_DIM, cuda.blockDim.y):\n        pass\n"
    assert _block_size(HEAD + tile) == [(6, "range(0, TILE_DIM, cuda.blockDim.y)")]
    assert _timed_as_blockdim(tile)
    for stride in ("range(tid, n, cuda.blockDim.x)",
                   "range(i, n, cuda.blockDim.x * cuda.gridDim.x)",
                   "range(cuda.threadIdx.x, x.size, cuda.blockDim.x)"):
        body = f"    for j in {stride}:\n        pass\n"
        assert _block_size(HEAD + body) == [] and not _timed_as_blockdim(body), stride
    counting_down = "    for s in range(cuda.blockDim.x // 2, 0, -1):\n        pass\n"
    assert _block_size(HEAD + counting_down) == [(6, "range(cuda.blockDim.x // 2, 0, -1)")]
    assert _timed_as_blockdim(counting_down)


def test_an_index_that_reads_blockdim_is_no_bound():
    for body in ("    for j in range(i, 8):\n        pass\n",
                 "    for j in range(0, i):\n        pass\n",
                 "    while i < n:\n        i += cuda.blockDim.x * cuda.gridDim.x\n"):
        assert _block_size(HEAD + body) == [] and not _timed_as_blockdim(body), body
    through_names = "    bd = cuda.blockDim\n    s = bd.x // 2\n    while s > 0:\n        s //= 2\n"
    assert _block_size(HEAD + through_names) == [(8, "s > 0")]
    assert _timed_as_blockdim(through_names)
    assert not loop_bounds_at_run_time(HEAD + through_names, "other")


def test_a_loop_bounded_by_the_constants_keeps_the_compile_time_reference():
    body = ("    for j in range(0, TILE_DIM, cuda.blockDim.y):\n        pass\n"
            "    for j in range(tid, TILE_DIM):\n        pass\n")
    found = loops.loops(HEAD + body, "k", ("TILE_DIM",))
    assert [(loop.block_size, loop.constants) for loop in found] == [(True, False),
                                                                     (False, True)]
    assert not _timed_as_blockdim(body)


def test_every_blockdim_solution_is_read_so_by_the_hints_too():
    """The hints and the timing read each instructor kernel bounded at run time the same way:
    some loop of it is the block size's."""
    for name in [e.name for e in exercises.all_exercises() if e.timing]:
        contract = exercises.get(name).contract
        text = exercises.timing_solution_path(name, True).read_text(encoding="utf-8")
        assert loop_bounds_at_run_time(text, contract.kernel, [c.name for c in contract.constants])
        assert any(loop.block_size for loop in loops.loops(text)), name
