#!/usr/bin/env bash
# Issue 22 on a GPU: benchmarks/fairness.py (a class of copies of every solution, known-bad
# submission and textbook variant, graded by `autograder batch --device gpu` with the sanitizer
# on and off) and the textbook variants' GPU test. On the device machine: carry .whl (see
# gpu_checks.sh; WHL=path/to/.whl when the tree is elsewhere).
# Usage: [WHL=.whl] [FAIRNESS="--copies 4"] [PYTEST_FILES=tests/test_variants_gpu.py]
#        [STEPS="pytest fairness"] bash benchmarks/fairness_gpu.sh OUTDIR
# Writes OUTDIR/env.txt, OUTDIR/fairness.{md,json}, OUTDIR/batch_{on,off}.log, OUTDIR/pytest.txt.
set -uo pipefail
OUT_DIR=${1:-${OUT:-/tmp/kernelgrade-fairness}}
mkdir -p "$OUT_DIR"
WHL=${WHL:-.whl}
if ls "$WHL"/*.whl >/dev/null 2>&1; then
  [ -d /tmp/site/numpy ] || python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$WHL"/*.whl
  export PYTHONPATH=/tmp/site:$PWD
else
  export PYTHONPATH=$PWD
fi
if ! command -v bwrap >/dev/null && ls "$WHL"/bubblewrap*.deb >/dev/null 2>&1; then
  dpkg -x "$WHL"/bubblewrap*.deb /tmp/bwrap && export PATH=/tmp/bwrap/usr/bin:$PATH
fi
if command -v bwrap >/dev/null; then export KERNELGRADE_SANDBOX=${KERNELGRADE_SANDBOX:-require}; fi
export PYTHONUNBUFFERED=1
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; nproc
  echo "sandbox: $(python3 -m autograder.sandbox 2>&1 | head -1) (KERNELGRADE_SANDBOX=${KERNELGRADE_SANDBOX:-auto})"
} | tee -a "$OUT_DIR/env.txt"
for step in ${STEPS:-pytest fairness}; do
  start=$(date +%s)
  case $step in
    fairness)
      work=$(mktemp -d /tmp/fairness-XXXX)
      python3 benchmarks/fairness.py --out "$work" --result "$OUT_DIR/fairness" ${FAIRNESS:-}
      echo "fairness: exit $?, $(( $(date +%s) - start )) s" | tee -a "$OUT_DIR/env.txt"
      [ -z "${LOGS:-}" ] || cp "$work"/batch_*.log "$OUT_DIR"/ ;;
    pytest)
      KERNELGRADE_TEST_DEVICE=gpu timeout ${PYTEST_TIMEOUT:-300} python3 -m pytest -q -p no:cacheprovider -rA \
        ${PYTEST_FILES:-tests/test_variants_gpu.py} > "$OUT_DIR/pytest.txt" 2>&1
      echo "pytest: exit $?, $(( $(date +%s) - start )) s" | tee -a "$OUT_DIR/env.txt"
      grep -E "passed|failed|FAILED|Error" "$OUT_DIR/pytest.txt" | tail -20 ;;
  esac
done
