# kernelgrade-expect: correctness=failed
"""resident_threads_per_sm counts its blocks on its own and ignores warp granularity there
(resident_blocks_per_sm is right): Volta, 200 threads per block would give 2000 resident
threads, where blocks of 7 whole warps leave 1800."""


def warps_per_block(threads_per_block, warp_size=32):
    """Warps a block of ``threads_per_block`` threads occupies (a partial warp counts whole)."""
    return -(-threads_per_block // warp_size)


def resident_blocks_per_sm(threads_per_block, shared_bytes_per_block, max_threads_per_sm,
                           max_blocks_per_sm, shared_bytes_per_sm, warp_size=32):
    """Blocks resident on one SM at once; 0 when one block does not fit."""
    threads_held = warps_per_block(threads_per_block, warp_size) * warp_size
    by_threads = max_threads_per_sm // threads_held
    by_shared = (shared_bytes_per_sm // shared_bytes_per_block
                 if shared_bytes_per_block else max_blocks_per_sm)
    return min(by_threads, max_blocks_per_sm, by_shared)


def resident_threads_per_sm(threads_per_block, shared_bytes_per_block, max_threads_per_sm,
                            max_blocks_per_sm, shared_bytes_per_sm, warp_size=32):
    """Threads resident on one SM at once (Fermi, 16×16 blocks: 1536)."""
    by_shared = (shared_bytes_per_sm // shared_bytes_per_block
                 if shared_bytes_per_block else max_blocks_per_sm)
    blocks = min(max_threads_per_sm // threads_per_block, max_blocks_per_sm, by_shared)
    return threads_per_block * blocks


def tile_shared_bytes(tile_width, bytes_per_element=4):
    """Shared memory a tiled matmul block uses: one tile of A and one of B (16×16 floats: 2 KB)."""
    return 2 * tile_width * tile_width * bytes_per_element


def global_traffic_reduction(tile_width):
    """Factor by which tiling divides global-memory loads of a matmul: each loaded element is
    used tile_width times."""
    return float(tile_width)
