#!/usr/bin/env bash
# A benchmark built twice and run side by side on one GPU: from the generated sources in
# bench/before/ (written by an earlier generator) and from this tree, so that a change to
# generated code is measured against what it replaces, in one run.  BENCH names the benchmark:
# unset, the main one (bench/spec.toml, bench/bench.cu, `ninja bench`); else bench/$BENCH/ (its
# spec.toml and bench.cu, e.g. BENCH=rows for the reduces and scans along rows).
#   on the CPU machine, from an earlier commit's tree (git archive REV | tar -x -C /tmp/old):
#     PYTHONPATH=<a folder holding assocgen -> /tmp/old/generator> \
#       python3 -m assocgen bench/[$BENCH/]spec.toml -o bench/before --no-compile-check
#   on the GPU machine:  [BENCH=rows] bash bench/before_after.sh [bench args, e.g. --quick]   (logs in $OUT)
#   (bench/before/ is ignored by git: name it in the device call's carry)
# Runs after, before, after, before; the last lines are the rows of each run.
set -u
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-build/before-after}; mkdir -p "$OUT" build/before
. bench/build.sh   # PATH, the generator, bench_compile
[ -f bench/before/bench.h ] || [ -n "$(ls bench/before/*.h 2>/dev/null)" ] || { echo "bench/before/ holds no generated sources"; exit 2; }
if [ -z "${BENCH:-}" ]; then
    ninja bench > "$OUT/build-after.log" 2>&1 || { tail -20 "$OUT/build-after.log"; exit 1; }
    after=build/bench/bench main=bench/bench.cu
else
    (OUT=$OUT; bench_build "$BENCH") > /dev/null || { tail -20 "$OUT/build.log"; exit 1; }
    mv "$OUT/build.log" "$OUT/build-after.log"
    after=build/$BENCH-bench/${BENCH}_bench main=bench/$BENCH/bench.cu
fi
bench_compile bench/before "$main" build/before/bench "$OUT/build-before.log" || exit 1
for run in after1 before1 after2 before2; do
    exe=$after; [ "${run#before}" != "$run" ] && exe=build/before/bench
    "$exe" "$@" > "$OUT/$run.log" 2> "$OUT/$run-progress.log"
    echo "== $run: rc=$?"
done
for run in after1 before1 after2 before2; do
    echo "== $run"; grep -E "^[a-z0-9]+ [a-z0-9/]+ |MISMATCH|checked| \| " "$OUT/$run.log"
done
