#!/usr/bin/env bash
# The benchmark of reduces along rows on the GPU machine: generate bench/rows/spec.toml, build it
# with bench.cu (CUB beside it), run it, then the PyTorch / CuPy anchors.  Logs under $OUT.
#   bash bench/rows/run.sh
set -u
cd "$(dirname "$0")/../.."
. bench/build.sh
bench_build rows || exit 1
$B/rows_bench | tee "$OUT/rows-bench.txt"
python3 bench/rows/anchors.py | tee "$OUT/rows-anchors.txt"
