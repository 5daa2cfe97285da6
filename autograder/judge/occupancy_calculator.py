"""The grader's occupancy calculator: how many blocks of a kernel one streaming multiprocessor
(SM) holds at once, and which limit binds.

Lecture 2.1's calculator (thread slots, taken by whole warps; block slots; shared memory per
SM), plus the register file (registers are given to a warp in units of
:data:`REGISTER_ALLOCATION_UNIT`). The grader's own code, so an installed kernelgrade needs no
instructor solution for it (the ``occupancy`` exercise asks students for the first part; a test
checks this calculator against that exercise's solution). Pure integer arithmetic; sizes in
threads, bytes and 32-bit registers.
"""

from __future__ import annotations

from typing import NamedTuple

WARP_SIZE = 32
REGISTERS_PER_SM = 64 * 1024      # every compute capability from 7.0 to 9.0
REGISTER_ALLOCATION_UNIT = 256    # registers are given to a warp in units of 256
UNLIMITED = 1 << 30               # "no limit" for a resource the block does not use


class Occupancy(NamedTuple):
    """Resident ``blocks`` per SM (0: one block does not fit) and the limit that binds:
    ``"threads"``, ``"blocks"``, ``"shared"`` or ``"registers"``."""

    blocks: int
    bound: str


def warps_per_block(threads_per_block: int, warp_size: int = WARP_SIZE) -> int:
    """Warps a block of ``threads_per_block`` threads occupies (a partial warp counts whole)."""
    return -(-threads_per_block // warp_size)


def blocks_by_threads(threads_per_block: int, max_threads_per_sm: int,
                      warp_size: int = WARP_SIZE) -> int:
    """Blocks whose warps fit in the SM's ``max_threads_per_sm`` thread slots."""
    return max_threads_per_sm // (warps_per_block(threads_per_block, warp_size) * warp_size)


def blocks_by_shared(shared_bytes_per_block: int, shared_bytes_per_sm: int) -> int:
    """Blocks whose shared memory fits in the SM's; :data:`UNLIMITED` for a block that uses
    none."""
    if shared_bytes_per_block <= 0:
        return UNLIMITED
    return shared_bytes_per_sm // shared_bytes_per_block


def blocks_by_registers(threads_per_block: int, regs_per_thread: int | None,
                        registers_per_sm: int = REGISTERS_PER_SM,
                        warp_size: int = WARP_SIZE) -> int:
    """Blocks of ``threads_per_block`` threads whose registers fit in one SM's register file:
    each warp gets ``regs_per_thread * warp_size`` registers rounded up to a multiple of
    :data:`REGISTER_ALLOCATION_UNIT`; :data:`UNLIMITED` when the count is unknown (None or 0)."""
    if not regs_per_thread or regs_per_thread <= 0:
        return UNLIMITED
    unit = REGISTER_ALLOCATION_UNIT
    per_warp = -(-regs_per_thread * warp_size // unit) * unit
    return (registers_per_sm // per_warp) // warps_per_block(threads_per_block, warp_size)


def resident_blocks(threads_per_block: int, shared_bytes_per_block: int,
                    max_threads_per_sm: int, max_blocks_per_sm: int, shared_bytes_per_sm: int,
                    regs_per_thread: int | None = None,
                    registers_per_sm: int = REGISTERS_PER_SM,
                    warp_size: int = WARP_SIZE) -> Occupancy:
    """Blocks resident on one SM at once, the tightest of the thread slots, the block slots,
    shared memory and (when ``regs_per_thread`` is given) registers, and which of them binds.

    A block of more threads than the SM holds gives ``Occupancy(0, "threads")``. Between
    equal limits, registers are named only when they are strictly tighter, and shared memory
    only when it is strictly tighter than the thread and block slots.
    """
    by_threads = blocks_by_threads(threads_per_block, max_threads_per_sm, warp_size)
    by_shared = blocks_by_shared(shared_bytes_per_block, shared_bytes_per_sm)
    slots = min(by_threads, max_blocks_per_sm)
    blocks = min(slots, by_shared)
    by_regs = blocks_by_registers(threads_per_block, regs_per_thread, registers_per_sm,
                                  warp_size)
    if by_regs < blocks:
        return Occupancy(by_regs, "registers")
    if by_shared == blocks < slots:
        return Occupancy(blocks, "shared")
    return Occupancy(blocks, "threads" if by_threads <= max_blocks_per_sm else "blocks")
