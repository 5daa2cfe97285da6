"""The interface every analysis implements; the recorder calls these at structure events."""

from __future__ import annotations


class Analysis:
    key = ""  # its key in the report

    def interval(self, rec, log: list) -> None:
        """Shared accesses of one barrier interval of one block: (tid, loc, k, array, addr,
        kind) in execution order."""

    def episode(self, rec, episode: int, arrived: list, exited: list) -> None:
        """A barrier episode ended: ``arrived`` [(tid, loc)], ``exited`` [tid]."""

    def block_end(self, rec) -> None:
        """The block finished; ``rec.branch_log`` holds its branch outcomes."""

    def result(self, rec):
        """JSON-serialisable findings."""
        raise NotImplementedError
