#!/usr/bin/env bash
# The benchmark of operators of several inputs on the GPU machine: generate bench/inputs/spec.toml,
# build it with bench.cu (cuBLAS and CUB beside it), run it, then the PyTorch / CuPy anchors.
#   bash bench/inputs/run.sh            logs under $OUT
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-build/inputs-bench}; mkdir -p "$OUT" build/inputs-bench
export PATH=/usr/local/cuda/bin:$PATH
. tests/gpu/pyshim.sh   # assocgen importable on the lent machine
B=build/inputs-bench
python3 -m assocgen bench/inputs/spec.toml -o $B/src --no-compile-check > /dev/null || exit 1
flags="-O3 -arch=sm_90 -std=c++17"
rm -f $B/*.o
ls $B/src/*.cu bench/inputs/bench.cu | xargs -P 16 -I{} sh -c 'nvcc '"$flags"' -I'"$B"'/src -c {} -o '"$B"'/$(basename {} .cu).o' \
    > "$OUT/build.log" 2>&1 && nvcc -arch=sm_90 -o $B/inputs_bench $B/*.o -lcublas >> "$OUT/build.log" 2>&1 ||
    { tail -20 "$OUT/build.log"; exit 1; }
$B/inputs_bench | tee "$OUT/inputs-bench.txt"
python3 bench/inputs/anchors.py | tee "$OUT/inputs-anchors.txt"
