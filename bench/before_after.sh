#!/usr/bin/env bash
# The benchmark built twice and run side by side on one GPU: from the generated sources in
# bench/before/ (written by an earlier generator) and from this tree (ninja bench), so that a
# change to generated code is measured against what it replaces, in one run.
#   on the CPU machine, from an earlier commit's tree (git archive REV | tar -x -C /tmp/old):
#     PYTHONPATH=<a folder holding assocgen -> /tmp/old/generator> \
#       python3 -m assocgen bench/spec.toml -o bench/before --no-compile-check
#   on the GPU machine:  bash bench/before_after.sh [bench args, e.g. --quick]   (logs in $OUT)
#   (bench/before/ is ignored by git: name it in the device call's carry)
# Runs after, before, after, before; the last lines are the rows of each run.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-build/before-after}; mkdir -p "$OUT" build/before
. bench/build.sh   # PATH, the generator, bench_compile
[ -f bench/before/bench.h ] || { echo "bench/before/ holds no generated sources"; exit 2; }
ninja bench > "$OUT/build-after.log" 2>&1 || { tail -20 "$OUT/build-after.log"; exit 1; }
bench_compile bench/before bench/bench.cu build/before/bench "$OUT/build-before.log" || exit 1
for run in after1 before1 after2 before2; do
    exe=build/bench/bench; [ "${run#before}" != "$run" ] && exe=build/before/bench
    "$exe" "$@" > "$OUT/$run.log" 2> "$OUT/$run-progress.log"
    echo "== $run: rc=$?"
done
for run in after1 before1 after2 before2; do
    echo "== $run"; grep -E "^[a-z0-9]+ [a-z0-9/]+ |MISMATCH|checked" "$OUT/$run.log"
done
