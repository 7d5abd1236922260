#!/usr/bin/env bash
# One call on the lent GPU machine: build, GPU tests, sanitizer, benchmark; logs under $OUT.
#   bash tests/gpu/device.sh [quick|full|bench] [bench args...]     (bench: no tests)
# The last lines printed are a short summary table.
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-build/device-out}; mkdir -p "$OUT"
mode=${1:-quick}; shift || true
export PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
. tests/gpu/pyshim.sh   # assocgen importable on the lent machine
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader | tee "$OUT/gpu.txt"
summary=()
t0=$(date +%s)
if [ "$mode" != bench ]; then
    # quick: small sizes, then the sanitizer subset; full: every size (2^28, past 2^31), no sanitizer
    flags=(--jobs 16); [ "$mode" = quick ] && flags+=(--quick) || flags+=(--no-sanitizer)
    python3 tests/gpu/run.py "${flags[@]}" > "$OUT/gputest-stdout.log" 2>&1
    rc=$?
    grep -E "^FAIL|passed,|memcheck|racecheck" "$OUT/gputest-stdout.log" | tail -40
    summary+=("gpu tests ($mode): rc=$rc $(grep -E 'passed,' "$OUT/gputest-stdout.log" | tail -1) [$(( $(date +%s) - t0 ))s]")
    t2=$(date +%s)
    tflags=(--jobs 16); [ "$mode" = quick ] && tflags+=(--quick) || tflags+=(--no-sanitizer)
    python3 tests/gpu/transpose/run.py "${tflags[@]}" > "$OUT/transpose-test.log" 2>&1
    rc=$?
    grep -E "^FAIL|passed,|memcheck|racecheck" "$OUT/transpose-test.log" | tail -20
    summary+=("transpose tests ($mode): rc=$rc $(grep -E 'passed,' "$OUT/transpose-test.log" | head -1) [$(( $(date +%s) - t2 ))s]")
    t4=$(date +%s)   # the argument checks: every public signature's refusals, then memcheck
    OUT=$OUT python3 tests/gpu/args/run.py --jobs 16 > "$OUT/args-test-stdout.log" 2>&1
    rc=$?
    grep -E "FAIL|passed,|memcheck" "$OUT/args-test-stdout.log" | tail -20
    summary+=("args tests: rc=$rc $(grep -E 'passed,' "$OUT/args-test-stdout.log" | tail -1) [$(( $(date +%s) - t4 ))s]")
    t5=$(date +%s)   # random exact operators through every family (seed 1; the sanitizers but in full mode)
    zflags=(--jobs 16); [ "$mode" = quick ] || zflags+=(--no-sanitizer)
    OUT=$OUT/fuzz python3 tests/gpu/fuzz/run.py "${zflags[@]}" > "$OUT/fuzz-test.log" 2>&1
    rc=$?
    grep -E "FAIL|passed,|rc=[1-9]" "$OUT/fuzz-test.log" | tail -10
    summary+=("fuzz (seed 1): rc=$rc $(grep -E 'passed,' "$OUT/fuzz-test.log" | head -1) [$(( $(date +%s) - t5 ))s]")
    t3=$(date +%s)   # assocgen tune on a small spec, then tuned kernels at every threshold
    uflags=(); [ "$mode" = quick ] || uflags+=(--no-sanitizer)
    OUT=$OUT/tune python3 tests/gpu/tune/run.py "${uflags[@]}" > "$OUT/tune-test.log" 2>&1
    rc=$?
    grep -E "^FAIL|passed," "$OUT/tune-test.log" | tail -10
    summary+=("tune tests: rc=$rc $(grep -E 'passed,' "$OUT/tune-test.log" | tail -1) [$(( $(date +%s) - t3 ))s]")
fi
t1=$(date +%s)
if ninja bench > "$OUT/bench-build.log" 2>&1; then
    build/bench/bench "$@" --csv "$OUT/bench.csv" > "$OUT/bench.log" 2> "$OUT/bench-progress.log"
    rc=$?
    summary+=("bench: rc=$rc [$(( $(date +%s) - t1 ))s]")
    grep -E "^[a-z0-9]+ [a-z0-9/]+ |^GPU|MISMATCH" "$OUT/bench.log" | head -150
    if [ -n "${BENCH2:-}" ]; then     # a second run, e.g. BENCH2="--only variants --quick"
        build/bench/bench $BENCH2 > "$OUT/bench2.log" 2>> "$OUT/bench-progress.log"
        summary+=("bench $BENCH2: rc=$?")
        grep -E "^[a-z0-9]+ [a-z0-9/]+ |MISMATCH" "$OUT/bench2.log" | head -80
    fi
else
    tail -20 "$OUT/bench-build.log"; summary+=("bench: build failed")
fi
printf '%s\n' "${summary[@]}"
