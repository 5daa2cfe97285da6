#!/usr/bin/env bash
# The project's GPU checks, for the `device` machine (or any machine with an NVIDIA GPU).
# Usage: [STEPS="latency solutions preflight fidelity hints pytest class throughput"] bash benchmarks/gpu_checks.sh [OUTDIR]
#        STEPS=speed bash benchmarks/gpu_checks.sh [OUTDIR]   # issue 13's table (long: not a default step)
# Prints a short table last.
# On the device machine, carry a numpy 2.4 wheel in .whl/ (the image's numpy 2.5 breaks numba-cuda).
set -uo pipefail
OUT_DIR=${1:-${OUT:-/tmp/kernelgrade-gpu}}
mkdir -p "$OUT_DIR"
BASE_PYTHONPATH=$PWD
if ls .whl/*.whl >/dev/null 2>&1; then
  # The carried wheels live in a PYTHONPATH folder under /tmp: the sandbox must show it to the
  # children (the case that once zeroed every submission).
  python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
  export PYTHONPATH=/tmp/site:$PWD
else
  export PYTHONPATH=$PWD
fi
# bubblewrap, carried as Debian's package, so GPU runs use the sandbox real classes use.
if ! command -v bwrap >/dev/null && ls .whl/bubblewrap*.deb >/dev/null 2>&1; then
  dpkg -x .whl/bubblewrap*.deb /tmp/bwrap && export PATH=/tmp/bwrap/usr/bin:$PATH
fi
if command -v bwrap >/dev/null; then export KERNELGRADE_SANDBOX=${KERNELGRADE_SANDBOX:-require}; fi
AG="python3 -m autograder.cli"
DATE=$(date -u +%Y-%m-%d)
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
{
  echo "device: $GPU"; echo "date: $DATE"
  python3 -c 'import numba, numba.cuda, numpy, sys; print("python", sys.version.split()[0], "numba", numba.__version__, "numba-cuda", __import__("importlib.metadata").metadata.version("numba-cuda"), "numpy", numpy.__version__)'
  echo "sandbox: $(python3 -m autograder.sandbox) (KERNELGRADE_SANDBOX=${KERNELGRADE_SANDBOX:-auto})"
} | tee "$OUT_DIR/env.txt"

declare -A STATUS
STEPS=${STEPS:-latency solutions preflight fidelity hints pytest class throughput}
run_check() {  # name, command...
  local name=$1; shift
  case " $STEPS " in *" ${name%%_*} "*) ;; *) return 0 ;; esac
  echo "=== $name: $*"
  local start=$(date +%s.%N)
  "$@" > "$OUT_DIR/$name.txt" 2>&1
  local rc=$?
  local secs=$(python3 -c "import time; print(f'{$(date +%s.%N)-$start:.1f}')")
  tail -n 40 "$OUT_DIR/$name.txt"
  STATUS[$name]="rc=$rc ${secs}s"
}

# 1. Latency of one tiled_matmul submission, fresh process each time (start-up, JIT, all tests,
#    timing, the instrumented simulator run; with and without compute-sanitizer).
for i in 1 2 3; do
  run_check "latency_nosan_$i" $AG grade solutions/tiled_matmul.py -e tiled_matmul --device gpu --json --no-sanitize
done
for i in 1 2; do
  run_check "latency_san_$i" $AG grade solutions/tiled_matmul.py -e tiled_matmul --device gpu --json
done
# 2. Every instructor solution and known-bad submission.
run_check solutions $AG solutions --device gpu ${EXERCISES:-}
# 2b. Preflight: without the carried numpy 2.4 wheel (the image's numpy 2.5 breaks numba-cuda) the
#     grader must refuse with exit 2, naming the cause, and grade no one.
preflight_refuses() {
  env PYTHONPATH="$BASE_PYTHONPATH" $AG grade solutions/tiled_matmul.py -e tiled_matmul --device gpu --no-sanitize
  local rc=$?; echo "exit status $rc (2 expected)"; [ $rc -eq 2 ]
}
run_check preflight_without_numpy24 preflight_refuses
# 3. Timing fidelity: solutions timed as students, known-slow variants (see benchmarks/fidelity.py).
run_check fidelity python3 benchmarks/fidelity.py --trials ${TRIALS:-100} --out "$OUT_DIR/fidelity.json"
# 3b. Which performance hint each known-slow mutant gets (issue 12's record).
run_check hints python3 benchmarks/hints_on_gpu.py --device gpu --out "$OUT_DIR/hints.md"
# 4. The test suite's device-independent tests, on the GPU.
run_check pytest_gpu env KERNELGRADE_TEST_DEVICE=gpu python3 -m pytest -q -p no:cacheprovider ${PYTEST_ARGS:-tests/test_bad_input.py tests/test_timing.py}
# 5. The example class, if present.
if [ -d examples/submitted ]; then
  run_check class_example $AG batch examples/submitted --device gpu --workers-per-gpu 4 --db "$OUT_DIR/class.sqlite"
fi
# 6. Throughput: a class of THROUGHPUT_N submissions (skipped unless set).
if [ -n "${THROUGHPUT_N:-}" ]; then
  run_check throughput python3 benchmarks/throughput.py --n "$THROUGHPUT_N" --device gpu --workers-per-gpu "${WORKERS_PER_GPU:-4}" ${THROUGHPUT_ARGS:-} --out "$OUT_DIR/throughput.json"
fi

# 7. Grading speed (issue 13; benchmarks/speed.py): the fresh-Python floor, one grading with a
#    cold and a warm preflight cache, with and without the sanitizer, `solutions`, and a class of
#    SPEED_CLASS_N on one GPU and (when visible) two, at batch's default workers per GPU unless
#    WORKERS_PER_GPU is set. Its markdown table is the output's end.
run_check speed python3 benchmarks/speed.py --device gpu --runs "${SPEED_RUNS:-5}" --class-n "${SPEED_CLASS_N:-300}" ${WORKERS_PER_GPU:+--workers-per-gpu "$WORKERS_PER_GPU"} --out "$OUT_DIR/speed.json"

echo
echo "| check | result |"
echo "| --- | --- |"
for k in $(echo "${!STATUS[@]}" | tr ' ' '\n' | sort); do echo "| $k | ${STATUS[$k]} |"; done
