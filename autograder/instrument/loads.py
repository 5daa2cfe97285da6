"""Global memory traffic: loads of the kernel's array arguments, per output element written.
A naive matmul loads 2n values per element of C; a tiled one 2n / TILE_WIDTH."""

from __future__ import annotations

from .analysis import Analysis
from .trace import ARRAYS


class GlobalLoads(Analysis):
    key = "global_loads"

    def result(self, rec):
        by_array, by_line = {}, {}
        for key, n in rec.global_loads.items():
            site, array = divmod(key, ARRAYS)
            loc = rec.site_loc(site)
            name = rec.arrays[array].name
            by_array[name] = by_array.get(name, 0) + n
            by_line[loc] = by_line.get(loc, 0) + n
        written = {}
        for array, _ in rec.global_stores:
            name = rec.arrays[array].name
            written[name] = written.get(name, 0) + 1
        total = sum(by_array.values())
        outputs = sum(written.values())
        return {"loads": total,
                "by_array": dict(sorted(by_array.items())),
                "by_line": [{**rec.where(loc), "loads": n} for loc, n in sorted(by_line.items())],
                "outputs_written": dict(sorted(written.items())),
                "per_output": round(total / outputs, 4) if outputs else None}
