# adversarial: a grandchild leaves the session, SIGKILLs the harness's parent (a plain child's
# reaper; the harness is the process that forked this case's), and lives on as
# `sleep 31337.5`. Only bubblewrap's PID namespace can catch this one.
# adversarial-exercise: occupancy
# adversarial-lift: reach
# adversarial-needs: bubblewrap
# adversarial-orphan: 31337.5
# kernelgrade-expect: correctness=failed
STARTED = []


def answer(**kw):
    import os
    import signal
    import time

    if not STARTED:
        STARTED.append(1)
        with open(f"/proc/{os.getppid()}/stat") as f:  # each case runs in a fork of the harness
            harness_parent = int(f.read().rsplit(")", 1)[1].split()[1])
        pid = os.fork()
        if pid == 0:
            os.setsid()
            if os.fork() == 0:
                if harness_parent > 1:
                    os.kill(harness_parent, signal.SIGKILL)
                os.execv("/bin/sleep", ["sleep", "31337.5"])
            os._exit(0)
        os.waitpid(pid, 0)
        time.sleep(0.5)
    return -1


warps_per_block = resident_blocks_per_sm = resident_threads_per_sm = answer
tile_shared_bytes = global_traffic_reduction = answer
