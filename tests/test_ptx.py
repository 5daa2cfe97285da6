"""Concept facts read off PTX: shared memory bytes, and source lines with barriers, atomics and
fences (an unrolled loop must not multiply one barrier)."""

from autograder.judge.ptx import facts

UNROLLED = """
.shared .align 4 .b8 _cudapy_tile[1024];
.shared .align 4 .b8 _cudapy_tile2[1024];
\t.loc\t1 12 0
\tst.shared.f32 \t[%r1], %f1;
\t.loc\t1 13 0
\tbar.sync \t0;
\t.loc\t1 14 0
\tld.shared.f32 \t%f2, [%r2];
\t.loc\t1 13 0
\tbar.sync \t0;
\t.loc\t1 13 0
\tbarrier.sync \t0;
\t.loc\t1 20 0
\tmembar.gl;
\tatom.global.add.u32 \t%r3, [%rd1], 1;
"""


def test_shared_bytes_add_up_over_arrays():
    assert facts(UNROLLED).shared_bytes == 2048


def test_an_unrolled_barrier_counts_once_per_source_line():
    assert facts(UNROLLED).barriers == 1


def test_atomics_and_fences_are_found():
    f = facts(UNROLLED)
    assert (f.atomics, f.fences) == (1, 1)


def test_without_line_info_instructions_are_counted():
    assert facts("bar.sync 0;\nbar.sync 0;\n").barriers == 2


def test_a_kernel_without_shared_memory_or_barriers_has_none():
    f = facts("\t.loc\t1 3 0\n\tld.global.f32 %f1, [%rd1];\n")
    assert (f.shared_bytes, f.barriers, f.atomics, f.fences) == (0, 0, 0, 0)


def test_fences_are_placed_before_the_first_atomic_and_after_the_last():
    arrive_then_wait = "membar.gl;\natom.global.add.u32 %r1, [%rd1], 1;\n" \
                       "$L1:\natom.global.add.u32 %r2, [%rd1], 0;\n@%p1 bra $L1;\n"
    f = facts(arrive_then_wait + "membar.gl;\n")
    assert (f.fence_before_atomics, f.fence_after_atomics) == (True, True)
    f = facts(arrive_then_wait)  # no fence after the wait
    assert (f.fence_before_atomics, f.fence_after_atomics) == (True, False)
    f = facts("atom.global.add.u32 %r1, [%rd1], 1;\nfence.sc.gpu;\n")  # fence after arriving
    assert (f.fence_before_atomics, f.fence_after_atomics) == (False, True)
    assert (facts("membar.gl;\n").fence_before_atomics, facts("").fence_after_atomics) == \
        (False, False)


def test_a_barrier_between_a_fence_and_an_atomic_breaks_the_order():
    """The lock-free checker: wait, fence, barrier, fence, write. Without the first fence what
    one checker thread saw does not reach the others; without the second the write is not
    ordered after the barrier."""
    wait, write = "atom.global.add.u32 %r2, [%rd1], 0;\n", "atom.global.exch.b32 %r3, [%rd2], 1;\n"
    fence, barrier = "membar.gl;\n", "bar.sync 0;\n"
    whole = facts(fence + wait + fence + barrier + fence + write + fence)
    assert (whole.fence_before_atomics, whole.fence_after_atomics) == (True, True)
    assert not facts(fence + wait + barrier + fence + write + fence).fence_after_atomics
    assert not facts(fence + wait + fence + barrier + write + fence).fence_before_atomics
