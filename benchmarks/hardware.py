"""The instructor kernels against the hardware: are the timing baselines sound?

For each exercise with a timing test, the instructor kernel at its timing size (default
constants), timed with the grader's own method (CUDA events, L2 flushed, median of 20), reported
as GFLOP/s (matrix products: 2·m·n·k flops) or GB/s (bytes each kernel must read and write),
next to the device's device-to-device copy bandwidth and cuBLAS SGEMM through CuPy at the
matmul's size.

Usage: python benchmarks/hardware.py [--out FILE.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autograder import exercises  # noqa: E402
from autograder.child import harness  # noqa: E402
from autograder.exercises import solution_path  # noqa: E402
from autograder.grading.plan import timing_request as _timing_request  # noqa: E402
from autograder.timing.measure import l2_flusher  # noqa: E402


def event_ms(cuda, fn, flush, n=20) -> float:
    samples = []
    for _ in range(3):
        fn()
    cuda.synchronize()
    for _ in range(n):
        flush()
        start, end = cuda.event(), cuda.event()
        start.record()
        fn()
        end.record()
        end.synchronize()
        samples.append(cuda.event_elapsed_time(start, end))
    return statistics.median(samples)


def work(name: str, params: dict) -> tuple[float, str]:
    """(amount, unit): flops for matrix products, bytes moved otherwise."""
    if name == "tiled_matmul":
        w = params["width"]
        return 2.0 * w ** 3, "GFLOP/s"
    if name == "matmul_any_size":
        return 2.0 * params["m"] * params["n"] * params["k"], "GFLOP/s"
    if name == "block_sum":
        return 4.0 * params["n"], "GB/s"
    if name == "transpose":
        return 2 * 4.0 * params["rows"] * params["cols"], "GB/s"
    raise KeyError(name)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out")
    args = ap.parse_args()
    import cupy as cp
    from numba import cuda

    flush = l2_flusher(cuda)
    rows = []
    for name in exercises.names():
        ex = exercises.get(name)
        if not ex.timing:
            continue
        contract = ex.contract
        path = solution_path(ex)
        module = harness.import_submission(str(path))
        kernel, consts = harness.resolve(module, contract, str(path), "gpu")
        p = harness.prepare_timing(cuda, kernel, contract, consts, _timing_request(ex))
        harness.warm_up(cuda, kernel, p)
        ms = event_ms(cuda, lambda: kernel[p["grid"], p["block"]](*p["arg_sets"][0]), flush)
        amount, unit = work(name, ex.timing.params)
        rows.append({"exercise": name, "params": ex.timing.params, "constants": consts,
                     "ms": round(ms, 4), "rate": round(amount / ms / 1e6, 1), "unit": unit})
        print(rows[-1], flush=True)
    n_bytes = 1 << 30
    a, b = cp.empty(n_bytes, cp.uint8), cp.empty(n_bytes, cp.uint8)
    copy_ms = event_ms(cuda, lambda: b.__setitem__(slice(None), a), flush)
    copy_gbs = 2 * n_bytes / copy_ms / 1e6
    w = 2048
    x = cp.random.rand(w, w, dtype=cp.float32)
    y = cp.random.rand(w, w, dtype=cp.float32)
    gemm_ms = event_ms(cuda, lambda: cp.matmul(x, y), flush)
    device = cuda.get_current_device()
    name = device.name.decode() if isinstance(device.name, bytes) else str(device.name)
    report = {"device": name, "date": time.strftime("%Y-%m-%d"), "kernels": rows,
              "copy_GBps_read_plus_write": round(copy_gbs, 1),
              "cublas_sgemm_2048_GFLOPs": round(2 * w ** 3 / gemm_ms / 1e6, 1)}
    print(json.dumps(report, indent=2))
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
