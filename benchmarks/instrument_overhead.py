"""Cost of an instrumented launch against a plain simulator launch of the same kernel.

    NUMBA_ENABLE_CUDASIM=1 .venv/bin/python benchmarks/instrument_overhead.py [--repeats 3]

For each launch: ``plain`` is ``kernel[grid, block](*args)`` on the simulator; ``fixed order``
is this package's deterministic block scheduler with no hooks (no proxies, no branch
rewrite); ``instrumented`` is ``instrumented_launch``. Each is timed ``repeats`` times,
interleaved, and the median kept, in wall time and in process CPU time (all threads; less
sensitive to other processes on a shared machine). Prints Markdown tables.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
FILES = ROOT / "tests" / "instrument" / "files"
sys.path.insert(0, str(ROOT))

from autograder.instrument import instrumented_launch  # noqa: E402


def load(path: Path):
    spec = importlib.util.spec_from_file_location(f"bench_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def fixed_order(kernel, grid, block, args):
    """The scheduler alone: the simulator's own module and arrays, lanes in fixed order."""
    from numba.cuda.errors import normalize_kernel_dimensions
    from numba.cuda.simulator.cudadrv.devicearray import FakeWithinKernelCUDAArray
    from numba.cuda.simulator.args import InOut
    from numba.cuda.simulator.kernel import _push_kernel_context
    from numba.cuda.simulator.kernelapi import FakeCUDAModule, swapped_cuda_module

    from autograder.instrument.launch import select_blocks
    from autograder.simulator.scheduler import BlockRunner
    from autograder.instrument.trace import Recorder

    grid, block = normalize_kernel_dimensions(grid, block)
    fn = kernel.py_func
    module = FakeCUDAModule(grid, block, 0)
    retr = []
    with _push_kernel_context(module), swapped_cuda_module(fn, module):
        fake = [FakeWithinKernelCUDAArray(InOut(a).to_device(retr)) for a in args]
        runner = BlockRunner(fn, block, Recorder(fn.__code__.co_filename, block, []))
        try:
            for b in select_blocks(grid, None):
                runner.run_block(b, fake)
        finally:
            runner.close()
    for wb in retr:
        wb()


def cases():
    rng = np.random.default_rng(0)
    f32 = lambda *s: rng.random(s, dtype=np.float32)  # noqa: E731
    tiled = load(ROOT / "solutions" / "tiled_matmul.py")
    n = 32
    yield ("tiled matmul n=32, TILE_WIDTH 16", tiled.tiled_matmul, (2, 2), (16, 16),
           lambda: [f32(n, n), f32(n, n), np.zeros((n, n), np.float32)])
    yield ("naive matmul n=32", load(FILES / "naive_matmul.py").matmul, (2, 2), (16, 16),
           lambda: [f32(n, n), f32(n, n), np.zeros((n, n), np.float32)])
    yield ("interleaved reduction 4x256", load(FILES / "reduction_interleaved.py").reduce_sum,
           4, 256, lambda: [f32(1024), np.zeros(4, np.float32)])
    yield ("transpose 64x64 unpadded", load(FILES / "transpose_unpadded.py").transpose,
           (2, 2), (32, 8), lambda: [np.zeros((64, 64), np.float32), f32(64, 64)])
    yield ("racy scan 1x64", load(FILES / "scan_race.py").scan, 1, 64,
           lambda: [f32(64), np.zeros(64, np.float32)])
    loops = load(Path(__file__).with_name("instrument_loops.py"))
    yield ("global dot, 32 threads x 2000 loads x 2", loops.dot, 1, 32,
           lambda: [f32(2000), f32(2000), np.zeros(32, np.float32)])
    yield ("shared dot, 256 threads x 256 loads x 2", loops.shared_dot, 1, 256,
           lambda: [f32(256), np.zeros(256, np.float32)])


def timed(fn) -> tuple[float, float]:
    t, c = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - t, time.process_time() - c


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--repeats", type=int, default=3)
    opts = p.parse_args(argv)
    print(f"python {platform.python_version()}, {platform.machine()}, "
          f"{os.cpu_count()} logical CPUs, load average {os.getloadavg()}")
    print()
    print("| launch | plain sim, wall (s) | fixed order, no hooks | instrumented "
          "| instrumented / plain | plain sim, CPU (s) | instrumented, CPU (s) "
          "| instrumented / plain, CPU | instrumented / fixed order, CPU |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, kernel, grid, block, make in cases():
        instrumented_launch(kernel, grid, block, make())    # warm: rewrite cache, imports
        t = {"plain": [], "fixed": [], "inst": []}
        for _ in range(opts.repeats):
            t["plain"].append(timed(lambda: kernel[grid, block](*make())))
            t["fixed"].append(timed(lambda: fixed_order(kernel, grid, block, make())))
            t["inst"].append(timed(lambda: instrumented_launch(kernel, grid, block, make())))
        w = {k: statistics.median(x for x, _ in v) for k, v in t.items()}
        c = {k: statistics.median(y for _, y in v) for k, v in t.items()}
        print(f"| {name} | {w['plain']:.3f} | {w['fixed']:.3f} | {w['inst']:.3f} "
              f"| {w['inst'] / w['plain']:.2f} | {c['plain']:.3f} | {c['inst']:.3f} "
              f"| {c['inst'] / c['plain']:.2f} | {c['inst'] / c['fixed']:.2f} |", flush=True)
    print()
    print(f"load average after: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
