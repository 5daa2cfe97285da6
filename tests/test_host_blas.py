"""The grader's host arithmetic keeps going while other threads start children (see
autograder.host_blas): OpenBLAS's thread pool stalls beside fork() otherwise."""

import subprocess
import sys

SCENARIO = r"""
import subprocess, sys, threading
import numpy as np
if sys.argv[1] == "grader":
    from autograder.host_blas import single_threaded_blas
    single_threaded_blas()
SPAWNS = 400
done = {"products": 0, "spawned": 0}
finished = threading.Event()

def products():
    rng = np.random.default_rng(0)
    A, B = rng.random((1000, 300)), rng.random((300, 999))  # a float64 reference's size
    while not finished.is_set():
        A @ B
        done["products"] += 1

def spawn():  # as the sandbox starts children: a preexec_fn, so subprocess forks
    for _ in range(SPAWNS // 4):
        subprocess.run(["true"], preexec_fn=lambda: None)
        done["spawned"] += 1

workers = [threading.Thread(target=products, daemon=True) for _ in range(4)]
spawners = [threading.Thread(target=spawn) for _ in range(4)]
for t in workers + spawners:
    t.start()
for t in spawners:
    t.join()
finished.set()
print(done["products"], done["spawned"])
"""


def test_references_keep_going_while_children_are_forked():
    out = subprocess.run([sys.executable, "-c", SCENARIO, "grader"], capture_output=True,
                         text=True, timeout=120)  # a stall: TimeoutExpired, a failure
    assert out.returncode == 0, out.stderr
    products, spawned = map(int, out.stdout.split())
    assert spawned == 400
    # With OpenBLAS's own thread pool, none finished in this project's measurements (2 cores).
    assert products >= 10, (products, spawned)


def test_the_grader_limits_blas_to_one_thread_before_grading(tmp_path):
    from threadpoolctl import threadpool_info

    from autograder.grader import grade

    grade(tmp_path / "missing.py", "tiled_matmul", device="sim", preflight=False)
    blas = [p for p in threadpool_info() if p["user_api"] == "blas"]
    assert blas and all(p["num_threads"] == 1 for p in blas), blas
