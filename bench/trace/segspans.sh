#!/usr/bin/env bash
# Segmented reduce prototypes beside the generated function and CUB (bench/trace/segspans.cu), on
# the GPU machine: bash bench/trace/segspans.sh  (OUT: where the log goes)
set -u
cd "$(dirname "$0")/../.."
. bench/build.sh
OUT=${OUT:-build/segspans}
S=build/segspans
mkdir -p "$S" "$OUT"
# the spans up to 2^24 (SPANS_MAX_N), to compare them with the tiles and CUB past their limit
python3 -c "import sys, assocgen.tuning as t, assocgen.cli as c; t.SEGMENT_SPAN_MAX_N = ${SPANS_MAX_N:-1 << 24}; sys.argv[0] = 'assocgen'; c.run()" \
    bench/spec.toml -o "$S/src" --no-compile-check > /dev/null || exit 1
rm -f "$S/src"/bench_{scan,exscan,reduce,segscan}*.cu "$S/src/bench_segreduce_f32_t8.cu"
bench_compile "$S/src" bench/trace/segspans.cu "$S/segspans" "$OUT/build.log" || exit 1
"$S/segspans" 2>&1 | tee "$OUT/segspans.txt"
