"""Instrumented runs of a kernel on the Numba CUDA simulator: what outputs alone miss.

One launch runs on the simulator's kernel API with hooks in place, and comes back as a report
(a JSON-serialisable dict) of

- ``divergent_barriers``: barrier episodes that not every live thread of the block reaches from
  the same ``cuda.syncthreads()`` line (a barrier inside ``if tid < stride:``, an early
  ``return`` before a barrier, a barrier in each arm of an ``if``);
- ``races``: RAW / WAR / WAW hazards, with the array, the element, both lines and both threads:
  in shared memory between two barriers (``"space": "shared"``), and in global memory
  (``"space": "global"``) between two threads of a block with no barrier between them
  (``"scope": "block"``) or between two blocks with no fence protocol ordering them
  (``"scope": "grid"``: ``cuda.threadfence()`` then an atomic in one, an atomic then
  ``cuda.threadfence()`` in the other; see ``races``); the simulator's serial order makes
  neither kind right;
- ``uninitialized_reads``: shared reads (or atomics) of an element no thread of the block wrote
  in the launch, one entry per array and line: ``{"array", "index", "line", "thread",
  "block", "access", "count"}`` (a halo never loaded: the value is whatever was there);
- ``bank_conflicts``: shared-memory lines whose warp accesses hit one bank several times
  (``max_ways`` 32 for a 32x32 float32 tile read along a column);
- ``divergent_branches``: warp branches whose lanes went both ways (``total``, ``by_line``);
- ``global_loads`` and ``global_loads_per_output`` (2n for a naive matmul, 2n / TILE_WIDTH
  tiled): every read of global memory, by a plain load, an atomic of any kind or an array
  method; ``global_loads["blocks"]``: each block's loads per array and outputs;
  ``global_loads["coalescing"]``: per line and array, the warp load requests, the
  distinct 32-byte sectors they touched (``sectors``; 4 per request for 32 consecutive float32,
  32 down a column), the fewest that hold their elements (``ideal_sectors``) and the 128-byte
  lines (``lines_128``), see ``loads``; ``global_stores["coalescing"]``: the same for plain
  global stores (a transpose writing its output down a column: 32 sectors per request);
- ``shared_use``: per shared array, reads, writes and reads of a value another thread wrote; the
  most shared reads by one thread in a block; per ``cuda.syncthreads()`` line, the cross-thread
  dependences it was the first to separate; from the data flow of every output element
  (``taint``: each value carries the input elements it depends on, and whether they reached it
  through shared memory written by another thread of the block), the inputs that came that
  way, the outputs wholly made of them, and the longest chain of combining operations (see
  ``dataflow``).
- ``out_of_bounds``: the first element access, global or shared, whose index lies outside the
  array's shape in some dimension (negative indices included: NumPy and Numba wrap them), as
  ``{"array", "space", "access", "index", "shape", "line", "thread", "block"}``; the launch
  stops there (``error["kind"]`` is ``"out_of_bounds"``). Empty: none. It does not depend on
  the values read.

The same kernel gives the same report every run: the lanes run one at a time in a fixed order
(``scheduler``), and hazards are found from the set of accesses (and, across blocks, the fences
and atomics between them), not from values.

Calling it from the child (``autograder/harness.py``), after ``resolve`` gave ``kernel``::

    from autograder.instrument import instrumented_launch, messages

    args = [views[a] for a in contract.args]             # as run_case builds them
    report = instrumented_launch(kernel, grid, block, args, max_blocks=4)
    send({"type": "instrumented", "report": report})     # plain JSON types only

- Run it in a child with ``NUMBA_ENABLE_CUDASIM=1`` (set before numba is imported), on a small
  case: it costs about what a plain simulator run of the same launch costs (0.2x to 2x in
  ``benchmarks/results/instrument_overhead_*.md``), so keep to tens or a few hundred threads per
  block and a few blocks. It also works in a GPU child: the kernel's Python function runs on the
  simulator's API (real device arrays are copied to the host and back), the GPU is not used.
- Give it its own buffers, or call it after the outputs were sent: it writes the outputs, but
  ``max_blocks`` leaves blocks out and a racy kernel's values follow the fixed thread order, so
  never grade the outputs of an instrumented run.
- ``max_blocks`` runs that many blocks: the first and the last (last in every grid dimension),
  then blocks last in one dimension, then evenly spaced ones (edge blocks are where bounds
  checks diverge); ``report["blocks_run"]`` says how many ran.
- If the kernel raises, ``report["error"]`` holds the message, ``where`` (line) and the thread;
  the findings cover what ran before. The call itself raises only for a bad launch
  configuration (as ``kernel[grid, block]`` would).
- Branches are counted by recompiling the kernel's source with hooks, read through
  ``linecache`` from ``py_func.__code__.co_filename``: the harness's ``import_submission``
  compiles from a real file, which is enough. Without source, ``divergent_branches`` is None
  and ``report["notes"]`` says why; the other findings do not need source.
- Lines are lines of the file the code came from: ``report["file"]`` is the kernel's; an entry
  from another file (a device function imported from elsewhere) carries its own ``"file"``.

In the grader, with the report::

    for m in messages(report, where=cell_label, max_loads_per_output=2 * n / tile):
        ...  # m["concept"], m["severity"] (error / warning / info), m["line"], m["file"],
             # m["locations"], m["text"]: e.g. a concept test failed by each "error" message

``where(file, line) -> str`` renders a location ("cell 4, line 7"); by default "line 7".
Thresholds belong to the exercise: compare ``report["divergent_branches"]["total"]``,
``report["bank_conflicts"][i]["max_ways"]`` or ``report["global_loads_per_output"]`` with the
instructor kernel's report at the same launch.

Limits: shared and global arrays only (local arrays, constant memory and registers are not
seen); a warp instruction is the k-th execution of one instruction by each lane within a
barrier interval, so lanes whose paths differ are lined up approximately; banks are 4 bytes
(8-byte elements count two words, against an ideal of two); ``and``/``or`` short-circuits are
not counted as branches; hazards between blocks are found among the blocks that ran
(``max_blocks``) only; the data flow does not follow comparisons, ``float()``/``int()`` or
functions other than ``math``'s (``taint``); the simulator's own limits hold (one
``cuda.shared.array`` per source line, no warp primitives).
"""

from .launch import instrumented_launch
from .messages import messages

__all__ = ["instrumented_launch", "messages"]
