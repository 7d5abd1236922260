#!/usr/bin/env bash
# The segmented reduce's split of long segments (tuning.SEGMENT_SPAN_SPLIT_N) on the GPU machine:
# every segmented reduce by offsets at full sizes, compute-sanitizer memcheck and racecheck on one
# of them past the split's size, then the benchmark's segmented rows (segavg and segmented, all sizes).  Logs under $OUT.
#   bash bench/trace/split.sh [test|sanitize|bench]...   (default: all three)
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-build/split-out}; mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
. tests/gpu/pyshim.sh
steps=${*:-test sanitize bench}
for step in $steps; do
    t0=$(date +%s)
    case $step in
    test)
        python3 tests/gpu/run.py --only segreduce --jobs 16 --no-sanitizer > "$OUT/test.log" 2>&1
        echo "test rc=$? $(grep -E 'passed,' "$OUT/test.log" | tail -1) [$(( $(date +%s) - t0 ))s]"
        grep -E "^FAIL" "$OUT/test.log" | head -20 ;;
    sanitize)
        python3 tests/gpu/run.py --only segreduce --jobs 16 --build-only > "$OUT/build.log" 2>&1
        for tool in memcheck racecheck; do
            # the sizes past the split's threshold (the quick sizes run under the sanitizers in run.py)
            timeout 240 compute-sanitizer --tool=$tool --error-exitcode=9 build/gputest/test_main --exact \
                --from $(python3 -c "from assocgen import tuning; print(tuning.SEGMENT_SPAN_SPLIT_N + 1)") \
                --filter t_segreduce_mat2mul_mat2u > "$OUT/$tool.log" 2>&1
            echo "$tool rc=$? $(grep -E 'passed,|SUMMARY' "$OUT/$tool.log" | tr '\n' ' ') [$(( $(date +%s) - t0 ))s]"
        done ;;
    bench)
        ninja bench > "$OUT/bench-build.log" 2>&1 || { tail -5 "$OUT/bench-build.log"; exit 1; }
        build/bench/bench --only segavg > "$OUT/segavg.log" 2> /dev/null
        build/bench/bench --only segmented > "$OUT/segmented.log" 2> /dev/null
        echo "bench [$(( $(date +%s) - t0 ))s]"
        grep -E "^GPU|segavg|segreduce|MISMATCH" "$OUT/segavg.log" "$OUT/segmented.log" | cut -c1-170 ;;
    esac
done
