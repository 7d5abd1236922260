#!/usr/bin/env bash
# Where a 2^28 f32 scan tile's time goes, on a GPU: generates the benchmark's f32 scan in its large-n
# shape (trace_spec.toml), copies it with globaltimer stamps a tile (start, ticket known, loads and
# thread 0's fold done, prefix known, end of warp 0's store) and prints the means, percentiles and
# the look-back's own latency.  A diagnostic, not a test.
#   bash bench/trace/run.sh [log2 n]     (default 28)
set -e
cd "$(dirname "$0")/../.."
. bench/build.sh   # PATH, the generator
tmp=$(mktemp -d)
python3 -m assocgen bench/trace/trace_spec.toml -o "$tmp/src" --no-compile-check > /dev/null
python3 bench/trace/patch_trace.py "$tmp/src/bench_scan_sum_f32.cu" "$tmp/scan_trace.cu"
nvcc -arch=sm_90 -O3 -I"$tmp/src" -rdc=true -o "$tmp/trace" bench/trace/trace_main.cu "$tmp/scan_trace.cu"
"$tmp/trace" "${1:-28}"
