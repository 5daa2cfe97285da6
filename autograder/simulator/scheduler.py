"""Deterministic execution of a block: one Python thread per CUDA thread, as in the simulator,
but only one runs at a time and the order is fixed.

In each *episode* the live lanes run, in linear thread-id order, each until it reaches a barrier
or returns; then the episode ends (a recorder, if any, sees who arrived where and who exited)
and the lanes at the barrier run the next episode. This is the simulator's barrier rule
(release when every live thread waits), with the arbitrary thread interleaving replaced by a
fixed one, so the same kernel gives the same outputs (and record) every run. Handing over is
baton passing between locks; the lane threads are reused for every block, and by
:func:`install` for every launch of the child.

Without a recorder a runner may *let go*: when no lane hands over while the process uses
``patience`` seconds of CPU time (a lane spinning on a flag that a later lane sets, which the
fixed order would never reach), every lane of the episode runs at once from then on, as in
Numba's own simulator.
"""

from __future__ import annotations

import os
import sys
import threading
import time

import numpy as np

from autograder.simulator import adapter as sim
from autograder.wire.exception_text import exception_text

_INTERNAL = {os.path.abspath(__file__)}


class Abort(BaseException):
    """Unwinds the other lanes of a block after one of them raised."""


def _internal_files() -> set[str]:
    if len(_INTERNAL) == 1:
        _INTERNAL.add(os.path.abspath(sim.kernelapi.__file__))
    return _INTERNAL


def caller_frame(frame):
    """The innermost frame outside the simulator's kernel API and this module."""
    internal = _internal_files()
    while frame is not None and os.path.abspath(frame.f_code.co_filename) in internal:
        frame = frame.f_back
    return frame


class KernelFailure(Exception):
    """A simulated thread raised; ``lane``, ``block`` and the original exception are kept."""

    def __init__(self, exc: BaseException, tid: int, block):
        super().__init__(exception_text(exc))
        self.exc, self.tid, self.block = exc, tid, block


class Lane(threading.Thread):
    """One CUDA thread: the attributes the simulator's kernel API reads, and its barriers."""

    def __init__(self, runner: "BlockRunner", tid: int, thread_idx: tuple[int, int, int]):
        super().__init__(daemon=True, name=f"kernelgrade-lane-{tid}")
        self.runner = runner
        self.thread_id = tid
        self.threadIdx = sim.Dim3(*thread_idx)
        self.blockIdx = None
        self.go = threading.Lock()
        self.go.acquire()

    def run(self):
        r = self.runner
        while True:
            self.go.acquire()
            if r.closing:
                return
            try:
                if not r.aborting:
                    if r.debug:  # as Numba's simulator does for @cuda.jit(debug=True)
                        np.seterr(divide="raise")
                    r.fn(*r.args)
            except Abort:
                pass
            except BaseException as exc:  # the kernel's own error: the launch reports it
                r.fail(self, exc)
            if r.closing:
                return
            r.lane_done(self, None)

    def syncthreads(self):
        r = self.runner
        if r.aborting:
            raise Abort
        r.lane_done(self, r.rec.loc(caller_frame(sys._getframe(1))) if r.rec else 0)
        self.go.acquire()
        if r.aborting:
            raise Abort

    def _vote(self, value, reduce):
        state = self.runner.block_state
        state[self.thread_id] = bool(value)
        self.syncthreads()
        result = reduce(state)
        self.syncthreads()
        return result

    def syncthreads_count(self, value):
        return self._vote(value, lambda s: int(np.count_nonzero(s)))

    def syncthreads_and(self, value):
        return self._vote(value, lambda s: 1 if np.all(s) else 0)

    def syncthreads_or(self, value):
        return self._vote(value, lambda s: 1 if np.any(s) else 0)


class BlockRunner:
    """The lanes of one block shape, run block after block by :meth:`run_block`.

    ``rec``: the instrument's recorder (``loc``, ``switch``, ``block_start``, ``episode_end``,
    ``block_end``), or None for a plain run. ``patience``: seconds of CPU time without a
    hand-over before the runner lets go (None: never; only without a recorder)."""

    def __init__(self, fn, block_dim: tuple[int, int, int], rec=None,
                 patience: float | None = None, debug: bool = False):
        if rec is not None and patience is not None:
            raise ValueError("a recorded run never lets go: its order is the record")
        self.fn = fn
        self.args = ()
        self.rec = rec
        self.patience = patience
        self.debug = debug
        self.free = False
        bx, by, bz = block_dim
        self.block_state = np.zeros(bx * by * bz, dtype=np.bool_)
        self.closing = False
        self.aborting = False
        self.error = None
        self._lock = threading.Lock()
        self._main = threading.Lock()
        self._main.acquire()
        self._handovers = 0
        self.lanes = [Lane(self, x + bx * (y + by * z), (x, y, z))
                      for z in range(bz) for y in range(by) for x in range(bx)]
        for lane in self.lanes:
            lane.start()

    # -- called by lanes (exactly one runs at a time until the runner lets go) -----------------
    def lane_done(self, lane: Lane, loc: int | None) -> None:
        """``lane`` reached a barrier at ``loc``, or (``loc`` None) returned."""
        with self._lock:
            if loc is None:
                self._exited.append(lane.thread_id)
            else:
                self._arrived.append((lane, loc))
            self._handovers += 1
            if self._pos < len(self._queue):
                nxt = self._queue[self._pos]
                self._pos += 1
                if self.rec is not None:
                    self.rec.switch(nxt.thread_id)
                nxt.go.release()
            elif len(self._arrived) + len(self._exited) == len(self._queue):
                self._main.release()

    def fail(self, lane: Lane, exc: BaseException) -> None:
        with self._lock:
            if self.error is None:
                self.error = KernelFailure(exc, lane.thread_id, self._block)
                self.error.__traceback__ = exc.__traceback__
            self.aborting = True

    # -- called by the launching thread ------------------------------------------------------
    def _let_go(self) -> None:
        """Every lane of the episode not yet started starts now (with the lock held)."""
        self.free = True
        while self._pos < len(self._queue):
            self._queue[self._pos].go.release()
            self._pos += 1

    def _wait_episode(self) -> None:
        if self.patience is None or self.free:
            self._main.acquire()
            return
        # Patience counts the process's CPU time, which only the running lane uses: a lane
        # slowed by a busy machine does not make the runner let go, so a racy kernel's outputs
        # do not depend on what else runs.
        seen, since = -1, 0.0
        while not self._main.acquire(timeout=min(self.patience, 0.1)):
            with self._lock:
                now = time.process_time()
                if self._handovers != seen:
                    seen, since = self._handovers, now
                elif now - since >= self.patience:
                    self._let_go()
                    break
        else:
            return
        self._main.acquire()

    def run_block(self, block_idx: tuple[int, int, int], args) -> None:
        """Run every lane of block ``block_idx`` on ``args`` to its end.

        Raises :class:`KernelFailure` for the first lane (in the fixed order) that raised."""
        self.args = args
        self._block = block_idx
        self.aborting, self.error = False, None
        for lane in self.lanes:
            lane.blockIdx = sim.Dim3(*block_idx)
        if self.rec is not None:
            self.rec.block_start(block_idx)
        queue = self.lanes
        episode = 0
        while queue:
            with self._lock:
                self._queue, self._pos = queue, 0
                self._arrived, self._exited = [], []
                if self.free:
                    self._let_go()
                else:
                    self._pos = 1
                    if self.rec is not None:
                        self.rec.switch(queue[0].thread_id)
                    queue[0].go.release()
            self._wait_episode()
            if self.rec is not None and not self.aborting:
                self.rec.episode_end(episode, [(lane.thread_id, loc) for lane, loc in
                                               self._arrived], self._exited)
            queue = [lane for lane, _ in self._arrived]
            episode += 1
        if self.error is not None:
            raise self.error
        if self.rec is not None:
            self.rec.block_end()

    def close(self) -> None:
        """End every lane thread: those parked at a barrier (after a failure in the launching
        thread) unwind with ``Abort``, the others leave their loop."""
        self.closing = True
        self.aborting = True
        for lane in self.lanes:
            lane.go.release()
        for lane in self.lanes:
            lane.join(timeout=5)
