#!/usr/bin/env bash
# Tuned against untuned, side by side on one GPU (issue 19): `assocgen tune bench/spec.toml` measures
# the benchmark's reduces and scans in candidate shapes and writes $OUT/tuning.toml; the benchmark
# is generated with it into build/bench-tuned/ and built beside the untuned one (ninja bench); both
# run in turn: tuned, untuned, tuned, untuned.  The last lines compare them, row by row.
#   on the GPU machine:  bash bench/tuned.sh [bench args, e.g. --quick]     (TUNE="--quick": a smoke tune)
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-build/tuned}; mkdir -p "$OUT"
. bench/build.sh   # PATH, the generator, bench_compile
T=build/bench-tuned
python3 -m assocgen tune bench/spec.toml -o "$OUT/tuning.toml" --work build/tuned-work ${TUNE:-} > "$OUT/tune.log" 2>&1 ||
    { tail -20 "$OUT/tune.log"; exit 1; }
tail -n +1 "$OUT/tune.log" | grep -E "of the built-in|^note|^wrote"
ninja bench > "$OUT/build-untuned.log" 2>&1 || { tail -20 "$OUT/build-untuned.log"; exit 1; }
rm -rf "$T" && mkdir -p "$T"
python3 -m assocgen bench/spec.toml -o "$T" --tuning "$OUT/tuning.toml" --no-compile-check > /dev/null &&
    bench_compile "$T" bench/bench.cu "$T/bench" "$OUT/build-tuned.log" || exit 1
for run in tuned1 untuned1 tuned2 untuned2; do
    exe=build/bench/bench; [ "${run#tuned}" != "$run" ] && exe=$T/bench
    "$exe" "$@" > "$OUT/$run.log" 2> "$OUT/$run-progress.log"
    echo "== $run: rc=$?"
done
for run in tuned1 untuned1 tuned2 untuned2; do
    echo "== $run"; grep -E "^[a-z0-9]+ [a-z0-9/]+ |MISMATCH|checked" "$OUT/$run.log"
done > "$OUT/tuned.txt"
grep -c MISMATCH "$OUT/tuned.txt"
python3 bench/compare_before_after.py "$OUT/tuned.txt" --names tuned,untuned
