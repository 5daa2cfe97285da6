#!/usr/bin/env bash
# Issue 20, "skipping work at the timing size": every timed launch checked, measured on a GPU.
# Usage (in this checkout, PYTHONPATH naming it): bash benchmarks/timed_outputs_gpu.sh OUTDIR [BEFORE]
#   BEFORE: a checkout of the code before the change (graded the same way, for the ratios before).
# Writes OUTDIR/summary.txt (one line per grading: score, timing status, message, wall seconds),
# OUTDIR/pytest.txt (the GPU tests), OUTDIR/solutions.txt and OUTDIR/raw.tgz (every JSON).
set -uo pipefail
OUT_DIR=$1; BEFORE=${2:-}
HERE=$PWD
RAW=$(mktemp -d)
TIMED=$(python3 -c 'from autograder import exercises
print(" ".join(n for n in exercises.names() if exercises.get(n).timing))')
reps() { [ "$1" = tiled_matmul ] && echo 3 || echo 1; }  # gradings of each solution
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
  python3 -c 'import numba, numpy, sys; print("python", sys.version.split()[0], "numba", numba.__version__, "numpy", numpy.__version__)'
  echo "sandbox: $(python3 -m autograder.sandbox 2>&1 | head -1)"; } > "$OUT_DIR/env.txt"

summary() {  # label, json file, seconds
  python3 - "$1" "$2" "$3" >> "$OUT_DIR/summary.txt" <<'EOF'
import json, sys
label, path, secs = sys.argv[1:]
try:
    d = json.load(open(path))
except Exception as exc:
    print(f"{label}: no JSON ({exc}) [{secs} s]"); sys.exit()
r = d if "tests" in d else (d.get("results") or [d])[0]
t = next((t for t in r.get("tests", []) if t.get("kind") == "timing"), {})
print(f"{label}: {r.get('score')}/{r.get('max_score')} timing {t.get('status')} "
      f"{t.get('points')}/{t.get('max_points')}: {t.get('message')} [{secs} s]")
EOF
}

grade() {  # label, root, file, exercise
  local label=$1 root=$2 file=$3 ex=$4 start end
  start=$(date +%s.%N)
  (cd "$root" && PYTHONPATH=/tmp/site:$root KERNELGRADE_CACHE_DIR=$RAW/cache_$(basename "$root") \
    timeout 120 python3 -m autograder.cli grade "$file" -e "$ex" --device gpu --no-sanitize --json) \
    > "$RAW/$label.json" 2> "$RAW/$label.err"
  end=$(date +%s.%N)
  summary "$label" "$RAW/$label.json" "$(python3 -c "print(f'{$end-$start:.1f}')")"
}

# 1. The GPU tests: the solution keeps its points, the games in tests/files/timing lose theirs.
KERNELGRADE_TEST_DEVICE=gpu timeout 240 python3 -m pytest -q -s -p no:cacheprovider \
  tests/test_timing.py tests/test_timed_outputs.py > "$OUT_DIR/pytest.txt" 2>&1
echo "pytest rc=$?" >> "$OUT_DIR/summary.txt"
# 2. After: every timed exercise's solution, twice (ratios), then the games through the CLI.
for ex in $TIMED; do
  for i in $(seq "$(reps "$ex")"); do
    grade "after_${ex}_$i" "$HERE" "solutions/$ex.py" "$ex"
  done
done
for f in tests/files/timing/*.py; do
  grade "after_game_$(basename "$f" .py)" "$HERE" "$HERE/$f" tiled_matmul
done
# 3. Before (the code without the checks): the same solutions and games.
if [ -n "$BEFORE" ]; then
  for ex in $TIMED; do
    for i in $(seq "$(reps "$ex")"); do
      grade "before_${ex}_$i" "$BEFORE" "solutions/$ex.py" "$ex"
    done
  done
  for f in tests/files/timing/*.py; do
    grade "before_game_$(basename "$f" .py)" "$BEFORE" "$HERE/$f" tiled_matmul
  done
fi
tar -czf "$OUT_DIR/raw.tgz" -C "$RAW" --exclude 'cache_*' .
# 4. Every timed exercise's solution and known-bad submissions: their verdicts hold.
ARGS=(); for ex in $TIMED; do ARGS+=(-e "$ex"); done
timeout 200 python3 -m autograder.cli solutions --device gpu "${ARGS[@]}" > "$OUT_DIR/solutions.txt" 2>&1
echo "solutions rc=$?" >> "$OUT_DIR/summary.txt"
