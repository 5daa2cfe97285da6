#!/usr/bin/env bash
# Issue 30 on a GPU: every check of "evidence from the launches that earn the points" where only a
# GPU can judge it, with bubblewrap required. On the device machine: carry .whl (numpy 2.4 and the
# rest, see gpu_checks.sh) and run from the repository root.
# Usage: [STEPS="solutions games pytest mutants"] bash benchmarks/issue30_gpu.sh OUTDIR
# Writes OUTDIR/env.txt, solutions.txt, games.md, attacks.txt, pytest.txt, mutants.json.
set -uo pipefail
OUT_DIR=${1:-${OUT:-/tmp/kernelgrade-issue30}}
mkdir -p "$OUT_DIR"
if ls .whl/*.whl >/dev/null 2>&1; then
  [ -d /tmp/site/numpy ] || python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl
  export PYTHONPATH=/tmp/site:$PWD
else
  export PYTHONPATH=$PWD
fi
if ! command -v bwrap >/dev/null && ls .whl/bubblewrap*.deb >/dev/null 2>&1; then
  dpkg -x .whl/bubblewrap*.deb /tmp/bwrap && export PATH=/tmp/bwrap/usr/bin:$PATH
fi
command -v bwrap >/dev/null && export KERNELGRADE_SANDBOX=${KERNELGRADE_SANDBOX:-require}
export PYTHONUNBUFFERED=1
AG="python3 -m autograder.cli"
STEPS=${STEPS:-solutions games pytest}
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; git log -1 --format=%h 2>/dev/null
  python3 -m autograder.sandbox 2>&1; echo "KERNELGRADE_SANDBOX=${KERNELGRADE_SANDBOX:-auto}"
} | tee "$OUT_DIR/env.txt"
has() { case " $STEPS " in *" $1 "*) return 0 ;; esac; return 1; }

# Every instructor solution and known-bad submission (the attacks of issue 30 are known-bad
# files of their exercises now): 0 wrong verdicts.
if has solutions; then
  start=$(date +%s)
  $AG solutions --device gpu > "$OUT_DIR/solutions.txt" 2>&1
  echo "solutions: exit $?, $(( $(date +%s) - start )) s" | tee -a "$OUT_DIR/solutions.txt"
  tail -n 30 "$OUT_DIR/solutions.txt"
fi

# The games and honest kernels as students: one line each (score, parts).
if has games; then
  python3 benchmarks/reference_config_gpu.py --part games,solutions,variants --jobs 4 --device gpu \
    --out "$OUT_DIR/games.md" > /dev/null 2>&1
  grep '^|' "$OUT_DIR/games.md" | cut -c1-160
  : > "$OUT_DIR/attacks.txt"
  for spec in ${ATTACKS:-}; do
    file=${spec%%:*}; ex=${spec##*:}
    [ -f "$file" ] || { echo "missing $file" >> "$OUT_DIR/attacks.txt"; continue; }
    $AG grade "$file" -e "$ex" --device gpu --json > /tmp/a.json 2>/tmp/a.err
    rc=$?
    python3 - "$file" "$ex" "$rc" >> "$OUT_DIR/attacks.txt" <<'PY'
import json, sys
f, ex, rc = sys.argv[1:]
try:
    d = json.load(open("/tmp/a.json"))
except Exception as e:
    print(f"{f} [{ex}] exit {rc}: no JSON ({e}): {open('/tmp/a.err').read()[-300:]}"); sys.exit()
parts = {}
for t in d["tests"]:
    k = t["kind"]; p = parts.setdefault(k, [0.0, 0.0]); p[0] += t["points"]; p[1] += t["max_points"]
first = next((t for t in d["tests"] if t["status"] not in ("passed",) and t["max_points"]), None)
print(f"{f} [{ex}] exit {rc}: {d['score']}/{d['max_score']} " +
      " ".join(f"{k} {a:g}/{b:g}" for k, (a, b) in parts.items()) +
      (f" | first lost: {first['name']}: {first['message'][:160]}" if first else ""))
PY
  done
  cat "$OUT_DIR/attacks.txt"
fi

# The tests marked for the GPU that issue 30 added or changed.
if has pytest; then
  KERNELGRADE_TEST_DEVICE=gpu timeout ${PYTEST_TIMEOUT:-400} python3 -m pytest -q -p no:xdist \
    ${PYTEST_FILES:-tests/test_kernel_cache_gpu.py tests/test_timing.py tests/test_timed_outputs.py \
    tests/test_variants_gpu.py tests/test_occupancy_driver.py tests/test_honest_spellings.py} \
    > "$OUT_DIR/pytest.txt" 2>&1
  tail -n 25 "$OUT_DIR/pytest.txt"
fi

if has mutants; then
  EXERCISES=${EXERCISES:-$(python3 -c 'from autograder import exercises; print(" ".join(exercises.names()))')}
  for ex in $EXERCISES; do
    start=$(date +%s)
    $AG mutants "$ex" --device gpu --no-sanitize --json > "$OUT_DIR/m_$ex.json" 2>> "$OUT_DIR/mutants.txt"
    echo "=== $ex: exit $?, $(( $(date +%s) - start )) s" | tee -a "$OUT_DIR/mutants.txt"
  done
fi
