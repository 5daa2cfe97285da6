#!/usr/bin/env bash
# Issue 20 on a GPU: `autograder mutants` for every exercise (compute-sanitizer on unless
# SANITIZE=--no-sanitize), the instructor solutions and known-bad submissions, and the tests
# marked for the GPU that issue 20 added. On the device machine: carry .whl (see gpu_checks.sh).
# Usage: [EXERCISES="..."] [PYTEST_FILES="..."] bash benchmarks/mutants_gpu.sh OUTDIR
# Writes OUTDIR/env.txt, OUTDIR/mutants.json (every exercise's `mutants --json`, one object per
# exercise), OUTDIR/mutants.txt (their tables), OUTDIR/solutions.txt and OUTDIR/pytest.txt.
set -uo pipefail
OUT_DIR=${1:-${OUT:-/tmp/kernelgrade-mutants}}
mkdir -p "$OUT_DIR"
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl
  export PYTHONPATH=/tmp/site:$PWD
else
  export PYTHONPATH=$PWD
fi
if ! command -v bwrap >/dev/null && ls .whl/bubblewrap*.deb >/dev/null 2>&1; then
  dpkg -x .whl/bubblewrap*.deb /tmp/bwrap && export PATH=/tmp/bwrap/usr/bin:$PATH
fi
if command -v bwrap >/dev/null; then export KERNELGRADE_SANDBOX=${KERNELGRADE_SANDBOX:-require}; fi
export PYTHONUNBUFFERED=1
AG="python3 -m autograder.cli"
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; git log -1 --format=%h 2>/dev/null
  echo "sandbox: $(python3 -m autograder.sandbox 2>&1 | head -1) (KERNELGRADE_SANDBOX=${KERNELGRADE_SANDBOX:-auto})"
} | tee "$OUT_DIR/env.txt"

EXERCISES=${EXERCISES:-$(python3 -c 'from autograder import exercises; print(" ".join(exercises.names()))')}
: > "$OUT_DIR/mutants.txt"; echo "{" > "$OUT_DIR/mutants.json"
first=1
for ex in $EXERCISES; do
  start=$(date +%s)
  $AG mutants "$ex" --device gpu ${SANITIZE:-} --json > "$OUT_DIR/m_$ex.json" 2>> "$OUT_DIR/mutants.txt"
  rc=$?
  echo "=== $ex: exit $rc, $(( $(date +%s) - start )) s" | tee -a "$OUT_DIR/mutants.txt"
  [ $first = 1 ] || echo "," >> "$OUT_DIR/mutants.json"; first=0
  printf '"%s": ' "$ex" >> "$OUT_DIR/mutants.json"
  if [ -s "$OUT_DIR/m_$ex.json" ]; then cat "$OUT_DIR/m_$ex.json" >> "$OUT_DIR/mutants.json"; else echo null >> "$OUT_DIR/mutants.json"; fi
  rm -f "$OUT_DIR/m_$ex.json"
done
echo "}" >> "$OUT_DIR/mutants.json"
python3 - "$OUT_DIR/mutants.json" <<'PY' | tee -a "$OUT_DIR/mutants.txt"
import json, sys
data = json.load(open(sys.argv[1]))
for ex, d in data.items():
    if not d:
        print(f"{ex}: no result"); continue
    rows = d.get("mutants", [])
    counts = {}
    for r in rows:
        counts[r.get("verdict")] = counts.get(r.get("verdict"), 0) + 1
    print(f"{ex}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    for r in rows:
        if r.get("verdict") in ("survived", "not graded"):
            print(f"   {r.get('id')}: {r.get('description', '')[:110]}")
PY
$AG solutions --device gpu > "$OUT_DIR/solutions.txt" 2>&1; echo "solutions: exit $?" | tee -a "$OUT_DIR/env.txt"
tail -5 "$OUT_DIR/solutions.txt"
KERNELGRADE_TEST_DEVICE=gpu timeout ${PYTEST_TIMEOUT:-240} python3 -m pytest -q -p no:cacheprovider -x ${PYTEST_FILES:-tests/test_occupancy_driver.py tests/test_printed_output.py tests/test_grid_barrier_drivers.py} > "$OUT_DIR/pytest.txt" 2>&1
echo "pytest: exit $?" | tee -a "$OUT_DIR/env.txt"; tail -5 "$OUT_DIR/pytest.txt"
