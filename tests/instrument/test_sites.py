"""A site names one instruction on every CPython version: 3.11 and 3.12 move a frame's
``f_lasti`` into an instruction's inline caches once they specialize it, part way through a
block, which split one warp instruction in two (the padded transpose's conflict-free read was
counted a 2-way bank conflict on Python 3.12)."""

import sys

from autograder.instrument.trace import SITE, Recorder, instruction_starts


class _Reads:
    def __init__(self, rec):
        self.rec, self.sites = rec, []

    def __getitem__(self, i):
        self.sites.append(self.rec.site(sys._getframe(1)))
        return i


def _two_reads(p):
    return p[1] + p[2]


def test_every_execution_of_a_subscript_is_one_site():
    rec = Recorder(__file__, (32, 1, 1), [])
    p = _Reads(rec)
    for _ in range(200):   # past the interpreter's warm-up, so it specializes the subscripts
        _two_reads(p)
    assert len(set(p.sites)) == 2
    first, second = p.sites[0::2], p.sites[1::2]
    assert len(set(first)) == len(set(second)) == 1
    lines = {rec.site_loc(s) for s in p.sites}
    assert lines == {_two_reads.__code__.co_firstlineno + 1}


def test_instruction_starts_map_cache_units_to_their_instruction():
    code = _two_reads.__code__
    starts = instruction_starts(code)
    assert len(starts) == len(code.co_code) // 2
    assert starts[0] == 0 and all(s % 2 == 0 for s in starts)
    assert all(a <= b for a, b in zip(starts, starts[1:]))
    # a unit is its own start, or a cache unit of the instruction before it
    assert all(starts[i] == 2 * i or starts[i] == starts[i - 1] for i in range(1, len(starts)))


def test_a_site_keeps_its_code_object():
    rec = Recorder(__file__, (32, 1, 1), [])
    f = sys._getframe()
    assert rec.site(f) % SITE == rec.code_index(f.f_code)
