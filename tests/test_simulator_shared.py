"""The simulator's shared arrays, as the grading child uses them (autograder.simulator.adapter):
every thread of a block gets the same array from a ``cuda.shared.array`` line, even when a
thread switch falls between the simulator's look-up and its store."""

import time


class _SlowLookups(dict):
    """A dict whose misses take a while: every thread that misses is still between the look-up
    and the store when the others look."""

    def get(self, key, default=None):
        found = super().get(key, default)
        if found is None:
            time.sleep(0.05)
        return found


def test_every_thread_of_a_block_gets_the_same_shared_array(monkeypatch):
    monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", "1")
    import subprocess
    import sys

    # In a fresh interpreter: the simulator is chosen when Numba is first imported.
    probe = r"""
import threading, time
import numpy
from autograder.simulator.adapter import thread_safe_shared_arrays
from numba.cuda.simulator import kernelapi
import test_simulator_shared as t

thread_safe_shared_arrays()
shared = kernelapi.FakeCUDAShared(0)
shared._allocations = t._SlowLookups()
got = []

def thread():
    got.append(id(shared.array(4, numpy.int32)))  # one line, as in a kernel

threads = [threading.Thread(target=thread) for _ in range(8)]
for th in threads: th.start()
for th in threads: th.join()
print(len(got), len(set(got)))
"""
    import os
    here = os.path.dirname(__file__)
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         timeout=120, cwd=here, env={**os.environ, "PYTHONPATH": here})
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["8", "1"], out.stdout  # 8 threads, one array



def test_a_kernel_may_read_its_shape_from_the_end_as_on_a_gpu(tmp_path):
    """``x.shape[-1]`` compiles for a GPU and is the last dimension there; the simulator must
    not make it an error (it raised IndexError: honest kernels lost every point)."""
    from autograder.grader import grade

    solution = (__import__("pathlib").Path(__file__).parent.parent / "solutions"
                / "block_sum.py").read_text()
    assert "x.shape[0]" in solution
    path = tmp_path / "from_the_end.py"
    path.write_text(solution.replace("x.shape[0]", "x.shape[-1]"))
    result = grade(path, "block_sum", device="sim", preflight=False)
    assert all(t.status.value in ("passed", "skipped") for t in result.tests), \
        [(t.name, t.message) for t in result.tests if t.status.value not in ("passed", "skipped")]
