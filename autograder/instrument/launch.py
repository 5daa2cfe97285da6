"""``instrumented_launch``: run one launch of a kernel on the simulator with every hook in place
and return the report (a JSON-serialisable dict)."""

from __future__ import annotations

import gc
import math
import traceback
from contextlib import contextmanager

import numpy as np

from autograder.simulator import adapter as sim

from .banks import BankConflicts
from .barriers import DivergentBarriers
from .dataflow import SharedUse
from .divergence import DivergentBranches
from .loads import GlobalLoads, GlobalStores
from . import taint
from .memory import Atomics, Local, SharedMemory, fence_hooks, global_proxy
from .proxies import OutOfBounds
from .races import GlobalRaces, SharedRaces
from .rewrite import instrumented, swapped_device_functions
from autograder.simulator.scheduler import BlockRunner, KernelFailure
from .trace import ACCESS_NAMES, Recorder

REPORT_VERSION = 1


def select_blocks(grid_dim: tuple[int, int, int], max_blocks: int | None) -> list[tuple]:
    """Every block in the simulator's order, or ``max_blocks`` of them in that order: the
    first block and the last (the last in every grid dimension at once: the block that holds
    each dimension's partial tile, where guards diverge and bounds are crossed), then the
    blocks last in one dimension and first in the others, then evenly spaced ones. One block:
    the first."""
    blocks = list(np.ndindex(*grid_dim))
    if max_blocks is None or max_blocks >= len(blocks):
        return blocks
    if max_blocks < 1:
        raise ValueError("max_blocks must be at least 1")
    chosen = [blocks[0], blocks[-1]]
    for d, n in enumerate(grid_dim):
        if n > 1:
            chosen.append(tuple(n - 1 if e == d else 0 for e in range(len(grid_dim))))
    if max_blocks > 2:
        step = (len(blocks) - 1) / (max_blocks - 1)
        chosen += [blocks[round(i * step)] for i in range(1, max_blocks - 1)]
    picked = list(dict.fromkeys(chosen))[:max_blocks]
    order = {b: i for i, b in enumerate(blocks)}
    return sorted(picked, key=order.__getitem__)


def _module(grid_dim, block_dim, dynshared, rec):
    module = sim.FakeCUDAModule(grid_dim, block_dim, dynshared)
    module._shared = SharedMemory(rec, dynshared)
    module._atomic = Atomics()
    module._local = Local(rec)
    module.threadfence, module.threadfence_system = fence_hooks(rec)
    return module


def _kernel_args(args, names, rec, writebacks):
    """The simulator's own argument rules (host arrays copied in and back), then proxies."""
    ArgHint, InOut, FakeCUDAArray = sim.ArgHint, sim.InOut, sim.FakeCUDAArray
    out = []
    for i, arg in enumerate(args):
        if isinstance(arg, np.ndarray) and arg.ndim > 0:
            arg = InOut(arg).to_device(writebacks)
        elif isinstance(arg, ArgHint):
            arg = arg.to_device(writebacks)
        elif isinstance(arg, np.void):
            arg = FakeCUDAArray(arg)
        elif hasattr(arg, "copy_to_host") and not isinstance(arg, FakeCUDAArray):
            arg = _from_device(arg, writebacks)   # a real GPU array, in a GPU process
        if isinstance(arg, FakeCUDAArray) and isinstance(arg._ary, np.ndarray) \
                and arg._ary.dtype.names is None:
            name = names[i] if i < len(names) else f"argument {i}"
            arg = global_proxy(rec, arg, name)
        out.append(arg)
    return out


def _from_device(device_array, writebacks):
    """A host copy to run on, copied back to the device array after the launch."""
    host = device_array.copy_to_host()
    writebacks.append(lambda: device_array.copy_to_device(host))
    return sim.FakeCUDAArray(host)


def _error(rec, failure: KernelFailure) -> dict:
    line = None
    for frame, lineno in traceback.walk_tb(failure.exc.__traceback__):
        if frame.f_code.co_filename in rec.files:
            line = rec.where(rec.file_offset(frame.f_code.co_filename) + lineno)
    kind = "IndexError" if isinstance(failure.exc, OutOfBounds) else type(failure.exc).__name__
    error = {"message": f"{kind}: {failure.exc}"[:500],
             "where": line, "thread": rec.thread_index(failure.tid),
             "block": [int(b) for b in failure.block]}
    if isinstance(failure.exc, OutOfBounds):
        error["kind"] = "out_of_bounds"   # the access is in report["out_of_bounds"]
    return error


def _unwritten(rec) -> list[dict]:
    """The shared reads of elements no thread of their block wrote in this launch, one entry
    per array and line: ``{"array", "index", "line", "thread", "block", "access", "count"}``
    (the first such read's element, thread and block)."""
    found = {}
    for (array, site), (count, (tid, block, addr, kind)) in rec.unwritten.items():
        info = rec.arrays[array]
        loc = rec.site_loc(site)
        entry = found.get((array, loc))
        if entry is None:
            found[(array, loc)] = {"array": info.name, "index": info.index_of(addr),
                                   **rec.where(loc), "thread": rec.thread_index(tid),
                                   "block": [int(b) for b in block],
                                   "access": ACCESS_NAMES[kind], "count": count}
        else:
            entry["count"] += count
    return sorted(found.values(), key=lambda e: (e.get("file", ""), e["line"], e["array"]))


@contextmanager
def _libdevice_keeping_taint(functions):
    """For the launch, the simulator's libdevice functions (:mod:`autograder.simulator.libdevice`,
    on ``numba.cuda.libdevice`` and where the kernel or a device function imported one by name:
    the globals of ``functions``) keep their arguments' taint, as ``math``'s do
    (:func:`taint.swapped_math`): ``libdevice.fmaf(a, b, acc)`` depends on a, b and acc. Put
    back afterwards."""
    import sys

    from autograder.simulator import libdevice

    module = sys.modules.get("numba.cuda.libdevice")
    ours = {name: fn for name, fn in vars(module).items() if not name.startswith("_")
            and getattr(fn, "__module__", None) == libdevice.__name__} if module else {}
    wrapped = {id(fn): taint._wrap_function(fn) for fn in ours.values()}
    by_id = {id(fn): fn for fn in ours.values()}
    saved = []
    try:
        for name, fn in ours.items():
            saved.append((vars(module), name, fn))
            setattr(module, name, wrapped[id(fn)])
        seen = set()
        for f in functions:
            globs = getattr(f, "__globals__", None)
            if globs is None or id(globs) in seen:
                continue
            seen.add(id(globs))
            for name, value in list(globs.items()):
                if id(value) in by_id and by_id[id(value)] is value:
                    saved.append((globs, name, value))
                    globs[name] = wrapped[id(value)]
        yield
    finally:
        for namespace, name, value in reversed(saved):
            namespace[name] = value


def instrumented_launch(kernel, griddim, blockdim, args, max_blocks: int | None = None,
                        dynshared: int = 0, blocks: list | None = None) -> dict:
    """Launch ``kernel[griddim, blockdim](*args)`` on the simulator, instrumented; see the
    package docstring for the report's keys. Runs only ``max_blocks`` blocks when given
    (:func:`select_blocks`), or exactly ``blocks`` (block indices, in the simulator's order)."""
    from numba.cuda.errors import normalize_kernel_dimensions

    grid_dim, block_dim = normalize_kernel_dimensions(griddim, blockdim)
    py_func = getattr(kernel, "py_func", kernel)
    code = py_func.__code__
    races = GlobalRaces()
    analyses = [DivergentBarriers(), SharedRaces(), races, BankConflicts(), DivergentBranches(),
                GlobalLoads(), GlobalStores(), SharedUse()]
    rec = Recorder(code.co_filename, block_dim, analyses)
    fn = instrumented(py_func, rec)
    notes = []
    if fn is None:
        fn = py_func
        notes.append("the kernel's source could not be read: branches were not counted")
    blocks = select_blocks(grid_dim, max_blocks) if blocks is None else blocks
    module = _module(grid_dim, block_dim, dynshared, rec)
    error = None
    done = 0
    writebacks = []
    gc_was_enabled = gc.isenabled()
    gc.disable()   # the logs are many small tuples and no cycles: collections only cost time
    try:
        with sim.push_kernel_context(module), sim.swapped_cuda_module(fn, module), \
                swapped_device_functions(py_func, rec) as devices, \
                taint.swapped_math([fn, *devices]), _libdevice_keeping_taint([fn, *devices]), \
                taint.recording(rec):
            kargs = _kernel_args(args, code.co_varnames[:code.co_argcount], rec, writebacks)
            runner = BlockRunner(fn, block_dim, rec)
            try:
                for block in blocks:
                    runner.run_block(tuple(int(b) for b in block), kargs)
                    done += 1
            except KernelFailure as failure:
                error = _error(rec, failure)
            finally:
                runner.close()
    finally:
        if gc_was_enabled:
            gc.enable()
    for wb in writebacks:
        wb()
    report = {
        "version": REPORT_VERSION,
        "kernel": code.co_name,
        "file": code.co_filename,
        "griddim": list(grid_dim),
        "blockdim": list(block_dim),
        "blocks_run": done,   # completed; the failing block, if any, is not counted
        "blocks_total": math.prod(grid_dim),
        "error": error,
        "notes": notes,
        "shared_arrays": [{"name": a.name, "line": a.line, "shape": list(a.shape),
                           "dtype": a.dtype} for a in rec.arrays if a.space == "shared"],
        "out_of_bounds": rec.out_of_bounds[:1],
    }
    for a in analyses:
        if a is not races:
            report[a.key] = a.result(rec)
    report["races"] = report["races"] + races.result(rec)   # shared, then global
    report["uninitialized_reads"] = _unwritten(rec)
    report["global_loads_per_output"] = report["global_loads"]["per_output"]
    if fn is py_func:
        report["divergent_branches"] = None
    return report
