# adversarial: leaves processes behind: a double-forked process in a new session (out of the
# child's process group) that becomes `sleep 31337.25`, and a busy non-daemon thread; then
# answers wrongly. Everything must be gone once grading returns.
# adversarial-exercise: occupancy
# adversarial-lift: reach
# adversarial-orphan: 31337.25
# kernelgrade-expect: correctness=failed
STARTED = []


def _leave_behind():
    import os
    import threading

    if STARTED:
        return
    STARTED.append(1)
    pid = os.fork()
    if pid == 0:
        os.setsid()
        if os.fork() == 0:
            os.execv("/bin/sleep", ["sleep", "31337.25"])
        os._exit(0)
    os.waitpid(pid, 0)
    threading.Thread(target=lambda: [None for _ in iter(int, 1)]).start()
    import time

    time.sleep(0.5)  # long enough for the test to see the orphan


def answer(**kw):
    _leave_behind()
    return -1


warps_per_block = resident_blocks_per_sm = resident_threads_per_sm = answer
tile_shared_bytes = global_traffic_reduction = answer
