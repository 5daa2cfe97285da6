# adversarial: SIGKILLs its parent process (in the sandbox: the PID namespace's init, which
# ignores it; in a plain child: the reaper, which takes the harness down with it, never the
# grader), then carries on.
# adversarial-exercise: occupancy


def answer(**kw):
    import os
    import signal

    os.kill(os.getppid(), signal.SIGKILL)
    return -1


warps_per_block = resident_blocks_per_sm = resident_threads_per_sm = answer
tile_shared_bytes = global_traffic_reduction = answer
