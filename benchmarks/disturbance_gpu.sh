#!/usr/bin/env bash
# benchmarks/disturbance.py on the device (carry .whl): which unheld work beside a measurement disturbs it.
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
nvidia-smi -q | grep -iE "persistence|Product Name|Clocks Event|Compute Mode" | head
python3 -c "import pynvml; print('pynvml', pynvml.__file__)" 2>&1 | tail -1
python3 -c "import dask, distributed; print('nvml config', dask.config.get('distributed.diagnostics.nvml'))" 2>&1 | tail -1
# Every timed exercise's cuda.grid() variant (TARGETS="assignments/X/variants/Y.py ..." for others).
for f in ${TARGETS:-assignments/*/variants/grid_index.py}; do
  ex=$(basename "$(dirname "$(dirname "$f")")")
  python3 benchmarks/disturbance.py "$ex" "$f" --measurements ${N:-40} ${MODES:+--modes $MODES} --out "$OUT/$ex.json" 2>&1 | grep -v Warn | tail -12
done
