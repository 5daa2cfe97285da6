"""What a timed launch's check costs on a GPU (issue 30: the expected outputs kept as host-held
keyed digests): per timed exercise, at its timing size, the digest of its outputs
(:meth:`autograder.timing.outputs.LaunchChecks.digest`: the kernels, the two table copies each
way, the wait) in milliseconds of wall time, median of ``--repeat``, beside one launch of the
instructor's kernel. The GPU's exclusive time per grading grows by about this times the rounds.

Usage: python benchmarks/digest_cost_gpu.py [--repeat 20]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autograder import exercises  # noqa: E402
from autograder.child import harness  # noqa: E402
from autograder.grading.plan import timing_request  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args()
    from numba import cuda

    name = cuda.get_current_device().name
    print(name.decode() if isinstance(name, bytes) else name)
    print("| exercise | elements | digest ms (median) | instructor launch ms (median) |")
    print("| --- | --- | --- | --- |")
    for name in [n for n in exercises.names() if exercises.get(n).timing]:
        ex = exercises.get(name)
        path = exercises.solution_path(ex)
        module = harness.import_submission(str(path))
        kernel, consts = harness.resolve(module, ex.contract, str(path), "gpu")
        p = harness.prepare_timing(cuda, kernel, ex.contract, consts, timing_request(ex))
        harness.warm_up(cuda, kernel, p)
        checks = p["checks"]
        digest, launch = [], []
        for _ in range(args.repeat):
            cuda.synchronize()
            t = time.perf_counter()
            checks.digest(checks.student)
            digest.append((time.perf_counter() - t) * 1e3)
            start, end = cuda.event(), cuda.event()
            start.record()
            p["reference"][p["grid"], p["block"]](*p["reference_arg_sets"][0])
            end.record()
            end.synchronize()
            launch.append(cuda.event_elapsed_time(start, end))
        n = sum(a.size for a in checks.student)
        print(f"| {name} | {n} | {statistics.median(digest):.3f} | "
              f"{statistics.median(launch):.3f} |", flush=True)
        del p, checks
    return 0


if __name__ == "__main__":
    sys.exit(main())
