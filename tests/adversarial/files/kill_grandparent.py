# adversarial: looks up its grandparent (in a plain child that would be the grader) in /proc and
# SIGKILLs it and every process it can see. Only run with bubblewrap, whose PID namespace shows
# the child nothing outside the sandbox: it answers 1000 + the processes it saw (3: the
# namespace's init, the harness that forked the process of this case, and itself); the harness
# killed, no later case runs.
# adversarial-exercise: occupancy
# adversarial-lift: reach
# adversarial-needs: bubblewrap
# adversarial-message: returned 1003
# kernelgrade-expect: correctness=failed


def answer(**kw):
    import os
    import signal

    me = os.getpid()
    parent = os.getppid()
    with open(f"/proc/{parent}/stat") as f:
        grandparent = int(f.read().rsplit(")", 1)[1].split()[1])
    visible = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    for pid in [grandparent, parent] + visible:
        if pid > 1 and pid != me:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
    return len(visible) + 1000


warps_per_block = resident_blocks_per_sm = resident_threads_per_sm = answer
tile_shared_bytes = global_traffic_reduction = answer
