#!/usr/bin/env bash
# Everything Python-related on the lent GPU machine, logs under $OUT:
#   build   the specs of the steps below built at once (in parallel), into build/py-cache
#   run     tests/gpu/python/run.py: the API without an array library
#   arrays  tests/gpu/python/run_arrays.py: every family from PyTorch and CuPy, torch.compile,
#           CUDA graphs, bad calls; and the host time a call at 2^10 (in its log)
#   others  any other tests/gpu/python/run_*.py (e.g. JAX's; the cache: $ASSOCGEN_CACHE)
#   examples  each examples/python/*.py (exit 0: passed)
#   overhead  bench/python/overhead.py (CPU, stub library: the wrappers' own host time)
#     bash tests/gpu/python/device.sh [STEP ...]      (default: all, in that order)
# The last line sums every step: "N passed, M failed" (a step that gives no such line, or exits
# non-zero, counts as one failure more).  Builds are kept in build/py-cache between calls.
set -u
cd "$(dirname "$0")/../../.."
OUT=${OUT:-build/device-out}; mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
export ASSOCGEN_CACHE=${ASSOCGEN_CACHE:-$PWD/build/py-cache}
. tests/gpu/pyshim.sh   # assocgen importable on the lent machine
steps=("$@"); [ ${#steps[@]} -eq 0 ] && steps=(build run arrays others examples overhead)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
python3 - <<'PY' 2>&1 | tee -a "$OUT/gpu.txt"
import sys
print("python", sys.version.split()[0])
for name in ("numpy", "torch", "cupy", "jax"):
    try:
        print(name, __import__(name).__version__)
    except Exception as e:
        print(name, "not importable:", type(e).__name__, e)
PY
passed=0; failed=0; summary=()

tally() {  # tally NAME RC LOG: add the log's "N passed, M failed" (or one failure)
    local name=$1 rc=$2 log=$3 line p f
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$log" | tail -1)
    if [ -n "$line" ]; then
        p=${line%% passed*}; f=${line#*, }; f=${f%% failed*}
    else
        p=0; f=0
    fi
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
    passed=$((passed + p)); failed=$((failed + f))
    summary+=("$name: rc=$rc ${line:-(no summary line)} [$4 s]")
    grep -E '^FAIL|^Traceback' "$log" | head -40
}

step_build() {
    local t0=$SECONDS pids=() spec
    for spec in tests/gpu/python/spec.toml tests/gpu/python/arrays.toml examples/python/*.toml; do
        python3 -c "import assocgen, sys; print(assocgen.load(sys.argv[1]).folder)" "$spec" \
            > "$OUT/python-build-$(basename "$spec" .toml).log" 2>&1 &
        pids+=($!)
    done
    local rc=0 pid
    for pid in "${pids[@]}"; do wait "$pid" || rc=1; done
    summary+=("build: rc=$rc [$((SECONDS - t0)) s]")
    [ $rc -eq 0 ] || { failed=$((failed + 1)); tail -3 "$OUT"/python-build-*.log; }
}

step_script() {  # step_script NAME SCRIPT [ARGS...]
    local t0=$SECONDS log="$OUT/python-$1.log" script=$2
    shift 2
    python3 "$script" "$@" > "$log" 2>&1
    local rc=$?
    tally "$(basename "$log" .log)" $rc "$log" $((SECONDS - t0))
}

step_examples() {
    local f t0 rc
    for f in examples/python/*.py; do
        t0=$SECONDS
        python3 "$f" > "$OUT/python-example-$(basename "$f" .py).log" 2>&1
        rc=$?
        if [ $rc -eq 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
        summary+=("example $f: rc=$rc $(tail -1 "$OUT/python-example-$(basename "$f" .py).log") [$((SECONDS - t0)) s]")
    done
}

for step in "${steps[@]}"; do
    case $step in
        build) step_build ;;
        run) step_script run tests/gpu/python/run.py --cache "$ASSOCGEN_CACHE" ;;
        arrays) step_script arrays tests/gpu/python/run_arrays.py --cache "$ASSOCGEN_CACHE"
                grep -E '^host time' "$OUT/python-arrays.log" ;;
        others) for s in tests/gpu/python/run_*.py; do
                    [ "$s" = tests/gpu/python/run_arrays.py ] || step_script "$(basename "$s" .py)" "$s"
                done ;;
        examples) step_examples ;;
        overhead) python3 bench/python/overhead.py > "$OUT/python-overhead.log" 2>&1
                  summary+=("overhead (CPU, stub): rc=$?"); cat "$OUT/python-overhead.log" ;;
        *) echo "unknown step $step (build run arrays others examples overhead)"; failed=$((failed + 1)) ;;
    esac
done
printf '%s\n' "${summary[@]}"
echo "$passed passed, $failed failed"
