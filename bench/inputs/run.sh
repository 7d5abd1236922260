#!/usr/bin/env bash
# The benchmark of operators of several inputs on the GPU machine: generate bench/inputs/spec.toml,
# build it with bench.cu (cuBLAS and CUB beside it), run it, then the PyTorch / CuPy anchors.
#   bash bench/inputs/run.sh            logs under $OUT
set -u
cd "$(dirname "$0")/../.."
. bench/build.sh
bench_build inputs -lcublas || exit 1
$B/inputs_bench | tee "$OUT/inputs-bench.txt"
python3 bench/inputs/anchors.py | tee "$OUT/inputs-anchors.txt"
