#!/usr/bin/env bash
# Issue 21 on a GPU: a Gradescope bundle unpacked into a root laid out like Gradescope's and run
# as Gradescope runs it (setup once, then run_autograder per submission) on the instructor
# solution, a known-bad submission, a link to the solution and a notebook that is not one, with
# bubblewrap required; then a small class batch (bubblewrap required) holding a link, a FIFO,
# two files for one student and an unknown assignment. On the device machine: carry .whl and
# the bundle (made here with `autograder gradescope build EXERCISE --out BUNDLE`).
# Usage: [WHL=.whl] BUNDLE=path/autograder.zip EXERCISE=tiled_matmul bash benchmarks/red_team_gpu.sh OUTDIR
# Writes OUTDIR/env.txt, OUTDIR/gs_<case>.json (results.json), OUTDIR/gs.txt, OUTDIR/batch.txt.
set -uo pipefail
OUT_DIR=${1:-${OUT:-/tmp/kernelgrade-red-team}}
mkdir -p "$OUT_DIR"
OUT_DIR=$(cd "$OUT_DIR" && pwd)
TREE=$PWD
WHL=${WHL:-.whl}
EXERCISE=${EXERCISE:-tiled_matmul}
if ls "$WHL"/*.whl >/dev/null 2>&1; then
  [ -d /tmp/site/numpy ] || python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$WHL"/*.whl
  SITE=/tmp/site
fi
if ! command -v bwrap >/dev/null && ls "$WHL"/bubblewrap*.deb >/dev/null 2>&1; then
  dpkg -x "$WHL"/bubblewrap*.deb /tmp/bwrap && export PATH=/tmp/bwrap/usr/bin:$PATH
fi
export PYTHONUNBUFFERED=1
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; nproc; } | tee -a "$OUT_DIR/env.txt"

# --- Gradescope: the bundle's own wheel (no solutions inside), outside the checkout.
ROOT=/tmp/gs/autograder
rm -rf /tmp/gs && mkdir -p "$ROOT/source" "$ROOT/submission" "$ROOT/results" /tmp/gs/site
( cd "$ROOT/source" && python3 -m zipfile -e "$BUNDLE" . )
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/gs/site "$ROOT"/source/kernelgrade-*.whl
cat > /tmp/gs/python <<PYEOF
#!/usr/bin/env bash
export PYTHONPATH=/tmp/gs/site${SITE:+:$SITE}
exec python3 "\$@"
PYEOF
chmod +x /tmp/gs/python
export KERNELGRADE_GRADESCOPE_ROOT=$ROOT KERNELGRADE_GRADESCOPE_PYTHON=/tmp/gs/python
cd /tmp/gs
start=$(date +%s%N)
/tmp/gs/python -m autograder.gradescope.run "$EXERCISE" --setup --root "$ROOT" > "$OUT_DIR/gs.txt" 2>&1
echo "setup: exit $?, $(( ($(date +%s%N) - start) / 1000000 )) ms" | tee -a "$OUT_DIR/gs.txt"
MUTANT=$(ls "$TREE"/assignments/$EXERCISE/mutants/*.py | head -1)
submit() {  # case name, then a command that fills $ROOT/submission
  rm -rf "$ROOT/submission" && mkdir -p "$ROOT/submission"
  eval "$2"
  start=$(date +%s%N)
  bash "$ROOT/source/run_autograder" >> "$OUT_DIR/gs.txt" 2>&1
  status=$?
  cp "$ROOT/results/results.json" "$OUT_DIR/gs_$1.json" 2>/dev/null
  echo "$1: exit $status, $(( ($(date +%s%N) - start) / 1000000 )) ms, score $(python3 -c "import json,sys; print(json.load(open('$OUT_DIR/gs_$1.json')).get('score'))" 2>&1)" | tee -a "$OUT_DIR/gs.txt"
}
submit solution "cp $TREE/solutions/$EXERCISE.py $ROOT/submission/$EXERCISE.py"
submit mutant "cp $MUTANT $ROOT/submission/$EXERCISE.py"
submit link "ln -s $ROOT/source/solutions/$EXERCISE/solution.py $ROOT/submission/$EXERCISE.py"
submit not_a_notebook "printf '{\"cells\": [{\"cell_type\": \"code\", \"metadata\": [], \"source\": 7}]}' > $ROOT/submission/$EXERCISE.ipynb"
grep -c "syncthreads" "$OUT_DIR"/gs_*.json | sed 's/^/solution lines (syncthreads) in /' | tee -a "$OUT_DIR/gs.txt"

# --- A class batch on the GPU, bubblewrap required, from the checkout.
cd "$TREE"
export PYTHONPATH=${SITE:+$SITE:}$TREE KERNELGRADE_SANDBOX=require
CLASS=/tmp/redclass && rm -rf $CLASS && mkdir -p $CLASS
for s in alice bob; do mkdir -p $CLASS/$s/$EXERCISE; cp solutions/$EXERCISE.py $CLASS/$s/$EXERCISE/$EXERCISE.py; done
mkdir -p $CLASS/carol/$EXERCISE && cp "$MUTANT" $CLASS/carol/$EXERCISE/$EXERCISE.py
mkdir -p $CLASS/mallory/$EXERCISE && ln -s "$TREE/solutions/$EXERCISE.py" $CLASS/mallory/$EXERCISE/$EXERCISE.py
mkdir -p $CLASS/trudy/$EXERCISE && mkfifo $CLASS/trudy/$EXERCISE/$EXERCISE.py
mkdir -p $CLASS/dan/$EXERCISE && cp "$MUTANT" $CLASS/dan/$EXERCISE/$EXERCISE.py && echo '{}' > $CLASS/dan/$EXERCISE/$EXERCISE.ipynb
mkdir -p $CLASS/erin/hw3 && cp solutions/$EXERCISE.py $CLASS/erin/hw3/answer.py
start=$(date +%s)
timeout 300 python3 -m autograder.cli batch $CLASS --db $OUT_DIR/class.sqlite --device gpu > "$OUT_DIR/batch.txt" 2>&1
echo "batch: exit $?, $(( $(date +%s) - start )) s" | tee -a "$OUT_DIR/batch.txt"
python3 -m autograder.cli export --db $OUT_DIR/class.sqlite --out $OUT_DIR/class.csv >> "$OUT_DIR/batch.txt" 2>&1
echo "export: exit $?" | tee -a "$OUT_DIR/batch.txt"
