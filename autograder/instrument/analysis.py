"""The interface every analysis implements; the recorder calls these at structure events."""

from __future__ import annotations


class Analysis:
    key = ""  # its key in the report

    def interval(self, rec, iv) -> None:
        """One barrier interval of one block ended: ``iv`` is a ``trace.Interval``."""

    def episode(self, rec, episode: int, arrived: list, exited: list) -> None:
        """A barrier episode ended: ``arrived`` [(tid, loc)], ``exited`` [tid]."""

    def block_end(self, rec) -> None:
        """The block finished."""

    def result(self, rec):
        """JSON-serialisable findings."""
        raise NotImplementedError


def uniform_lanes(lanes: list) -> bool:
    """True when every lane's events have the same sequence of locations (element 1), so the
    i-th event of each lane is one warp instruction."""
    first = [e[1] for e in lanes[0]]
    n = len(first)
    return all(len(lane) == n and [e[1] for e in lane] == first for lane in lanes[1:])


def kth_groups(lanes: list) -> dict:
    """For lanes whose paths differ: (loc, k) -> [events], each lane's k-th event at loc."""
    groups = {}
    for lane in lanes:
        ks = {}
        for e in lane:
            loc = e[1]
            k = ks.get(loc, 0)
            ks[loc] = k + 1
            g = groups.get((loc, k))
            if g is None:
                groups[(loc, k)] = [e]
            else:
                g.append(e)
    return groups
