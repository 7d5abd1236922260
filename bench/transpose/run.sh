#!/usr/bin/env bash
# The transpose benchmark on the GPU machine: generate bench/transpose/spec.toml, build it with
# bench.cu (cuBLAS beside it), run it, then the PyTorch / CuPy anchors.  Logs under $OUT.
#   bash bench/transpose/run.sh
set -u
cd "$(dirname "$0")/../.."
. bench/build.sh
bench_build transpose -lcublas || exit 1
$B/transpose_bench | tee "$OUT/transpose-bench.txt"
python3 bench/transpose/anchors.py | tee "$OUT/transpose-anchors.txt"
