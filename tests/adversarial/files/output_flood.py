# adversarial: tries to print 16 GiB (ignoring write errors), then answers wrongly.
# adversarial-exercise: occupancy
# adversarial-lift: reach
# kernelgrade-expect: correctness=failed


def answer(**kw):
    import sys

    chunk = "x" * (1 << 20) + "\n"
    for _ in range(16 << 10):
        try:
            sys.stdout.write(chunk)
        except OSError:
            break
    return -1


warps_per_block = resident_blocks_per_sm = resident_threads_per_sm = answer
tile_shared_bytes = global_traffic_reduction = answer
