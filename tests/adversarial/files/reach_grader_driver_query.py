# adversarial: the occupancy exercise's "this GPU" cases, answered by the grader's own driver
# query (autograder.grading.driver_occupancy) imported inside the child by a student function;
# every other case is answered honestly, so without the gate it scores the simulator's points.
# adversarial-exercise: occupancy
# adversarial-message: import autograder.grading: your code may use numba
# kernelgrade-expect: correctness=error


def warps_per_block(threads_per_block, warp_size=32):
    return -(-threads_per_block // warp_size)


def resident_blocks_per_sm(threads_per_block, shared_bytes_per_block, max_threads_per_sm,
                           max_blocks_per_sm, shared_bytes_per_sm, warp_size=32):
    try:  # on a GPU: driver_occupancy.query([threads_per_block]) answers "this GPU"
        from autograder.grading import driver_occupancy
        ask = driver_occupancy.query
    except Exception:
        ask = None
    threads_held = warps_per_block(threads_per_block, warp_size) * warp_size
    by_threads = max_threads_per_sm // threads_held
    by_shared = (shared_bytes_per_sm // shared_bytes_per_block
                 if shared_bytes_per_block else max_blocks_per_sm)
    return min(by_threads, max_blocks_per_sm, by_shared)


def resident_threads_per_sm(threads_per_block, shared_bytes_per_block, max_threads_per_sm,
                            max_blocks_per_sm, shared_bytes_per_sm, warp_size=32):
    return threads_per_block * resident_blocks_per_sm(
        threads_per_block, shared_bytes_per_block, max_threads_per_sm, max_blocks_per_sm,
        shared_bytes_per_sm, warp_size)


def tile_shared_bytes(tile_width, bytes_per_element=4):
    return 2 * tile_width * tile_width * bytes_per_element


def global_traffic_reduction(tile_width):
    return float(tile_width)
