"""Driver for ``grid_barrier``: a multi-phase kernel whose phases read what other blocks wrote in
the previous phase, separated by the student's grid-wide barrier.

Phase ``p`` computes ``buf_p[e] = 3 * buf_{p-1}[(e + shift_p) % n] + p`` (int32, wrapping) for
every element ``e``, with ``buf_{-1} = x`` and the last phase writing ``out``; the shift makes each
block depend on other blocks. The j-th barrier call passes ``goal = j * gridDim.x`` (the seed
article's ``goalVal``). The grid never exceeds the blocks that can be resident at once, queried
from the driver's occupancy calculator: one block too many would deadlock any correct barrier.

Two things make a barrier that is only nearly right give wrong results. A case may set
``skew_us``: in every phase, in the odd-numbered blocks, the threads outside the block's first
warp sleep that long before their work, so thread 0 reaches the barrier long before the rest of
its block, and long before the other blocks' slow threads are done (a barrier that lets thread 0
arrive before its own block has finished, or that lets a block through before every block has
arrived, is seen: the even blocks go on at once). A case may set ``block``
(a 2-D or 3-D block shape, e.g. ``[32, 4]``) instead of ``threads``: a barrier that picks "thread
0" by ``threadIdx.x`` alone then arrives several times per block. And the barrier's state arrays
are views into larger buffers whose margins hold :data:`STATE_SENTINEL`: a barrier that reads or
writes past them (a checker thread with no ``tid < gridDim.x`` guard) is reported by
:func:`check_state` after the launch.

And in every case the grid's last block is held back :data:`HOLD_US` µs before each barrier
call, while every thread counts itself in before its call and, once its call returns, checks
that every thread of the grid has counted in: a barrier that lets any thread through before
the whole grid has arrived (thread 0 waits, the rest of its block goes on) is caught on every
launch, whatever the outputs were (:class:`BarrierLetThrough`). A barrier that waits is never
caught: no thread returns before the last block's threads have counted in, and each counts in
with an atomic whose reply it waits for, so the count is in L2 before its block can arrive.

The multi-phase kernel, its reference and the launch (:func:`run_phases`) are shared with the
other grid-barrier drivers (``grid_barrier_lockfree``): each gives its barrier's state (a tuple of
device arrays, here ``(counter,)``) and a device function ``call(state, j)`` that makes the j-th
barrier call. Each driver's ``prepare(function, consts)`` compiles that kernel around the
student's barrier before the first case starts (:func:`compile_phases`), so compiling never
counts against a case's wall-clock limit.
"""

from __future__ import annotations

import functools
import math

import numpy as np

#: What the margins around a barrier's state arrays hold: below any goal, so a wait that reads
#: past an array never ends (a deadlock, reported as a timeout), and not a value a barrier writes,
#: so a write past it shows (:func:`check_state`).
STATE_SENTINEL = -0x3EEDBEE
#: Elements of margin on each side of a state array (a checker block has at most 1024 threads).
STATE_MARGIN = 1024


#: How long the grid's last block waits before each barrier call (µs): far longer than a barrier
#: takes, so a thread that leaves early finds that block not yet counted in.
HOLD_US = 20


class BarrierOutOfBounds(Exception):
    """The barrier wrote outside its state arrays (raised by :func:`check_state`)."""


class BarrierLetThrough(Exception):
    """A thread came out of a barrier call before every thread of the grid had made that call
    (raised by :func:`check_entered`): the case fails with this message (a driver's finding,
    :func:`autograder.child_channel.is_finding`), the kernel raised nothing."""

    kernelgrade_finding = True


def shifts(n: int, phases: int) -> list[int]:
    """The per-phase shift, large and odd so that each block reads other blocks' elements."""
    return [((p + 1) * 7919) % n for p in range(phases)]


def reference(x: np.ndarray, phases: int) -> np.ndarray:
    """The expected ``out`` for input ``x`` (int32, shape (n,))."""
    buf = x.astype(np.int64)
    for p, s in enumerate(shifts(x.size, phases)):
        buf = (3 * np.roll(buf, -s) + p).astype(np.int32).astype(np.int64)
    return buf.astype(np.int32)


@functools.cache
def build(call):
    """The multi-phase kernel ``multi_phase(state, x, out, tmp, shift, phases, skew_ns,
    entered, early)``; after each phase it runs ``call(state, j)`` (a device function; ``j`` =
    1, 2, … counts the barrier calls), each thread adding itself to ``entered[j - 1]`` (int32,
    one per phase, zeroed) before the call and, after it, writing ``j`` to ``early[0]`` (int32,
    zeroed) when fewer than all of the grid's threads had (:func:`check_entered`); the grid's
    last block waits :data:`HOLD_US` µs before each call. Blocks may be 1-, 2- or 3-D: threads are numbered ``x`` fastest. With ``skew_ns`` > 0
    every thread past the first warp of an odd-numbered block sleeps that long before each
    phase's work. One
    kernel per ``call`` in a process: each case launches the same kernel, compiled once, before
    the first case starts (:func:`prepare`)."""
    from numba import cuda

    @cuda.jit
    def multi_phase(state, x, out, tmp, shift, phases, skew_ns, entered, early):
        n = x.shape[0]
        per_block = cuda.blockDim.x * cuda.blockDim.y * cuda.blockDim.z
        everyone = cuda.gridDim.x * per_block
        tid = (cuda.threadIdx.x + cuda.blockDim.x * cuda.threadIdx.y
               + cuda.blockDim.x * cuda.blockDim.y * cuda.threadIdx.z)
        stride = cuda.gridDim.x * per_block
        first = cuda.blockIdx.x * per_block + tid
        calls = 0
        for p in range(phases):
            last_is_out = (phases - 1 - p) % 2 == 0
            if skew_ns > 0 and tid >= 32 and cuda.blockIdx.x % 2 == 1:
                for _ in range(skew_ns // 1000):  # thread 0 and the even blocks go on at once
                    cuda.nanosleep(1000)
            e = first
            while e < n:
                j = (e + shift[p]) % n
                if p == 0:
                    v = x[j]
                elif last_is_out:  # phase p-1 wrote tmp
                    v = tmp[j]
                else:
                    v = out[j]
                if last_is_out:
                    out[e] = 3 * v + p
                else:
                    tmp[e] = 3 * v + p
                e += stride
            calls += 1
            if cuda.blockIdx.x == cuda.gridDim.x - 1:
                for _ in range(HOLD_US):
                    cuda.nanosleep(1000)
            if cuda.atomic.add(entered, p, 1) < 0:  # the reply is awaited: counted in L2 now
                early[1] = 1
            call(state, calls)
            if cuda.atomic.add(entered, p, 0) < everyone:
                cuda.atomic.max(early, 0, calls)

    return multi_phase


@functools.cache
def _call_lock_based(barrier):
    """``call`` for the lock-based barrier: ``barrier(counter, j * gridDim.x)`` (one per
    ``barrier``, so :func:`build` compiles once)."""
    from numba import cuda

    @cuda.jit(device=True)
    def call(state, calls):
        barrier(state[0], calls * cuda.gridDim.x)

    return call


def launch_types(state_arrays: int) -> tuple:
    """The Numba argument types :func:`run_phases` launches :func:`build`'s kernel with:
    ``state`` (a tuple of ``state_arrays`` int32 C-contiguous 1-D device arrays), ``x``, ``out``
    and ``tmp`` (int32, C-contiguous 1-D: the harness's views are contiguous slices of its
    guarded buffers), ``shift`` (int64, C-contiguous 1-D), ``phases`` and ``skew_ns`` (Python
    ints: int64), ``entered`` and ``early`` (int32, C-contiguous 1-D)."""
    from numba import types

    ints = types.Array(types.int32, 1, "C")
    return (types.UniTuple(ints, state_arrays), ints, ints, ints,
            types.Array(types.int64, 1, "C"), types.int64, types.int64, ints, ints)


def compile_phases(call, state_arrays: int):
    """Compile :func:`build`'s kernel for ``call`` for :func:`launch_types` (the launches of
    :func:`run_phases` then find it compiled) and return the compiled kernel. Needs a CUDA
    context; raises Numba's typing and lowering errors (a barrier that does not compile)."""
    return build(call).compile(launch_types(state_arrays))


def prepare(function, consts: dict) -> None:
    """Compile the multi-phase kernel around the student's barrier ``function`` before the
    cases start (the harness calls this outside any case's time limit,
    :func:`autograder.child_cases.compile_for_cases`), so a case's wall-clock limit covers its
    GPU work, not the JIT. Raises what compiling raises; the case's launch then reports it."""
    compile_phases(_call_lock_based(function), 1)  # the state: (counter,)


def block_shape(params: dict) -> tuple[int, ...]:
    """The case's block: ``params["block"]`` (a list of 1 to 3 ints) when given, else
    ``(params["threads"],)``."""
    return tuple(int(t) for t in params.get("block", [params["threads"]]))


def guarded_state(size: int, arrays: int):
    """``arrays`` fresh zeroed int32 device arrays of ``size`` elements, each a view into a
    buffer with :data:`STATE_MARGIN` elements of :data:`STATE_SENTINEL` on each side; returns
    (the views as a tuple, the whole buffers) for :func:`check_state`."""
    from numba import cuda

    views, buffers = [], []
    for _ in range(arrays):
        host = np.full(size + 2 * STATE_MARGIN, STATE_SENTINEL, np.int32)
        host[STATE_MARGIN:STATE_MARGIN + size] = 0
        buf = cuda.to_device(host)
        buffers.append(buf)
        views.append(buf[STATE_MARGIN:STATE_MARGIN + size])
    return tuple(views), buffers


def check_state(buffers, names: tuple[str, ...]) -> None:
    """Raise :class:`BarrierOutOfBounds` naming the first state array whose margins no longer
    hold :data:`STATE_SENTINEL` (the barrier wrote outside it), with the offending index."""
    for name, buf in zip(names, buffers):
        host = buf.copy_to_host()
        size = host.size - 2 * STATE_MARGIN
        changed = np.flatnonzero(host != STATE_SENTINEL)
        changed = changed[(changed < STATE_MARGIN) | (changed >= STATE_MARGIN + size)]
        if changed.size:
            index = int(changed[0]) - STATE_MARGIN
            raise BarrierOutOfBounds(
                f"your barrier wrote {name}[{index}], outside {name}, which has {size} "
                f"element(s) ({changed.size} element(s) outside it changed): guard every "
                f"access to {name} with an index in bounds")


def check_entered(early, blocks: int) -> None:
    """Raise :class:`BarrierLetThrough` when a thread came out of a barrier call before every
    thread of the ``blocks`` blocks had made it (``early``: :func:`build`'s flag array, on the
    device, after the launch)."""
    call = int(early.copy_to_host()[0])
    if call:
        raise BarrierLetThrough(
            f"a thread came out of your barrier (call {call}) before every thread of the grid "
            f"had called it: the grid's last block was held back {HOLD_US} µs before each "
            f"call, and threads of other blocks went on without it. Every thread must wait "
            f"until all {blocks} blocks have arrived, not only the thread that checks the "
            f"counter: its block's other threads wait for it at a cuda.syncthreads()")


def resident_grid(kernel, args, threads: int) -> int:
    """Blocks that fit on the device at once for ``kernel`` at ``threads`` per block."""
    from numba import typeof

    compiled = kernel.compile(tuple(typeof(a) for a in args))
    return int(compiled.max_cooperative_grid_blocks(threads))


def run_phases(call, names: tuple[str, ...], views: dict, params: dict, grid_for,
               state_size=lambda blocks: blocks) -> None:
    """Launch :func:`build`'s kernel for ``call`` on ``views["x"]`` → ``views["out"]`` with
    ``params["phases"]`` phases, :func:`block_shape`'s block and ``params.get("skew_us", 0)``
    microseconds of skew. ``grid_for(resident, threads)`` picks the block count from the blocks
    the occupancy calculator lets be resident at once; the barrier's state is one zeroed int32
    array of ``state_size(blocks)`` elements per name in ``names`` (:func:`guarded_state`), checked by
    :func:`check_state` after the launch (raises :class:`BarrierOutOfBounds`), then
    :func:`check_entered` (raises :class:`BarrierLetThrough`). The argument
    types are :func:`launch_types`'s, so a kernel compiled by :func:`compile_phases` is not
    compiled again."""
    from numba import cuda

    n = views["x"].shape[0]
    phases = int(params["phases"])
    kernel = build(call)
    tmp = cuda.device_array(n, np.int32)
    shift = cuda.to_device(np.array(shifts(n, phases), np.int64))
    entered = cuda.to_device(np.zeros(phases, np.int32))
    early = cuda.to_device(np.zeros(2, np.int32))
    args = (views["x"], views["out"], tmp, shift, phases,
            int(round(float(params.get("skew_us", 0)) * 1000)), entered, early)
    block = block_shape(params)
    threads = math.prod(block)
    probe = (guarded_state(1, len(names))[0],) + args  # the argument types, for the query
    grid = int(grid_for(resident_grid(kernel, probe, threads), threads))
    state, buffers = guarded_state(state_size(grid), len(names))
    kernel[grid, block](state, *args)
    cuda.synchronize()
    check_state(buffers, names)
    check_entered(early, grid)


def drive(function, views: dict, params: dict, consts: dict) -> None:
    """Run ``params["phases"]`` phases with :func:`block_shape`'s block on a grid of
    ``params["grid_fraction"]`` of the resident blocks (at least 2); ``counter`` is one int32."""
    fraction = float(params["grid_fraction"])
    run_phases(_call_lock_based(function), ("counter",), views, params,
               lambda resident, threads: max(2, int(resident * fraction)),
               state_size=lambda blocks: 1)
