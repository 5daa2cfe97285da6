# %% [markdown]
# # Occupancy: warps, block granularity and resident threads
#
# *Lecture 2.1 (thread scheduling, block granularity) and "Shared Memory and Threading"*
#
# A streaming multiprocessor (SM) runs threads in **warps** of 32. A block is assigned to one SM as
# a whole and stays there until all its threads finish (**block granularity**), and it occupies
# whole warps: a block of 100 threads takes 4 warps, 128 thread slots. An SM holds several blocks at
# once: as many as the tightest of its limits allows,
#
# * its **thread slots**: at most `max_threads_per_sm` threads, counted in whole warps;
# * its **block slots**: at most `max_blocks_per_sm` blocks;
# * its **shared memory**: the blocks' shared memory together at most `shared_bytes_per_sm`.
#
# The lecture's Fermi SM holds 1536 threads and 8 blocks, with 48 KB of shared memory. Blocks of
# 8×8 threads fill its 8 block slots with only 512 threads, a third of its thread slots; the
# lecture asks the same of 16×16 and 32×32 blocks.
#
# "Shared Memory and Threading" adds the shared memory of the tiled matrix multiplication: each
# block holds one `TILE_WIDTH × TILE_WIDTH` tile of `A` and one of `B`, 4-byte floats, so 16×16
# tiles use 2 KB per block. Tiling also changes how often the kernel reads global memory: in the
# simple kernel every thread loads a whole row of `A` and a whole column of `B`; in the tiled one
# the threads of a block load each tile once and share it.
#
# ## Your task
#
# Write these plain Python functions (no kernel, no GPU). All arguments are `int`s, sizes count
# threads and bytes; return a Python `int` (a `float` for the last one), not a NumPy number.
#
# * `warps_per_block(threads_per_block, warp_size=32)` → `int`: the warps a block occupies (a
#   partial warp counts whole).
# * `resident_blocks_per_sm(threads_per_block, shared_bytes_per_block, max_threads_per_sm,
#   max_blocks_per_sm, shared_bytes_per_sm, warp_size=32)` → `int`: how many such blocks one SM
#   holds at once, by the three limits above; `0` when a single block does not fit. A block
#   without shared memory (`shared_bytes_per_block` 0) is not limited by it.
# * `resident_threads_per_sm(threads_per_block, shared_bytes_per_block, max_threads_per_sm,
#   max_blocks_per_sm, shared_bytes_per_sm, warp_size=32)` → `int`: the threads of those blocks
#   (`threads_per_block` each: the idle lanes of a partial warp are not threads).
# * `tile_shared_bytes(tile_width, bytes_per_element=4)` → `int`: the shared memory one block of
#   the tiled matrix multiplication uses (one tile of `A` and one of `B`).
# * `global_traffic_reduction(tile_width)` → `float`: by what factor tiling with
#   `tile_width × tile_width` tiles divides the global-memory loads of a matrix multiplication
#   (whose width is a multiple of `tile_width`), compared with the simple kernel.
#
# The hidden tests use other limits and current GPUs, block sizes that are not a multiple of the
# warp size, and other values of `warp_size`; on a GPU some also fill in the device's own limits
# and compare `resident_blocks_per_sm` with the CUDA driver's occupancy calculator.
