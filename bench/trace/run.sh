#!/usr/bin/env bash
# Where a 2^28 f32 scan tile's time goes, on a GPU: copies the bench's generated scan with
# globaltimer stamps a tile (start, ticket, total known, prefix known, end) and prints the means,
# percentiles and the look-back's own latency.  A diagnostic, not a test: run after `ninja bench`.
#   bash bench/trace/run.sh [log2 n]     (default 28)
set -e
cd "$(dirname "$0")/../.."
export PATH=/usr/local/cuda/bin:$PATH
tmp=$(mktemp -d)
python3 bench/trace/patch_trace.py build/bench/bench_scan_sum_f32.cu "$tmp/scan_trace.cu"
nvcc -arch=sm_90 -O3 -Ibuild/bench -rdc=true -o "$tmp/trace" bench/trace/trace_main.cu "$tmp/scan_trace.cu"
"$tmp/trace" "${1:-28}"
