# adversarial: allocates and touches far more host memory than the machine has.
# adversarial-exercise: occupancy
# adversarial-message: MemoryError
# kernelgrade-expect: correctness=error


def answer(**kw):
    import numpy as np

    block = np.ones(1 << 36, np.uint8)  # 64 GiB, written
    return int(block.sum())


warps_per_block = resident_blocks_per_sm = resident_threads_per_sm = answer
tile_shared_bytes = global_traffic_reduction = answer
