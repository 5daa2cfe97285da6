# kernelgrade-expect: correctness=failed
"""Wrong occupancy answers that matched every case of 2026-11-27 (a red-team student):
tile_shared_bytes ignores bytes_per_element (tile_width**3 // 2 equals 2*w*w*b only at (16, 4)
and (32, 8), its two cases then), and global_traffic_reduction is a constant (one case then,
tile_width 16)."""


def warps_per_block(threads_per_block, warp_size=32):
    return -(-threads_per_block // warp_size)


def resident_blocks_per_sm(threads_per_block, shared_bytes_per_block, max_threads_per_sm,
                           max_blocks_per_sm, shared_bytes_per_sm, warp_size=32):
    held = warps_per_block(threads_per_block, warp_size) * warp_size
    by_shared = (shared_bytes_per_sm // shared_bytes_per_block
                 if shared_bytes_per_block else max_blocks_per_sm)
    return min(max_threads_per_sm // held, max_blocks_per_sm, by_shared)


def resident_threads_per_sm(threads_per_block, shared_bytes_per_block, max_threads_per_sm,
                            max_blocks_per_sm, shared_bytes_per_sm, warp_size=32):
    return threads_per_block * resident_blocks_per_sm(
        threads_per_block, shared_bytes_per_block, max_threads_per_sm, max_blocks_per_sm,
        shared_bytes_per_sm, warp_size)


def tile_shared_bytes(tile_width, bytes_per_element=4):
    return tile_width ** 3 // 2          # wrong: 8x8 floats -> 256, not 512


def global_traffic_reduction(tile_width):
    return 16.0                          # wrong for every tile width but 16
