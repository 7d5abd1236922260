#!/usr/bin/env bash
# The transpose benchmark on the GPU machine: generate bench/transpose/spec.toml, build it with
# bench.cu (cuBLAS beside it), run it, then the PyTorch / CuPy anchors.  Logs under $OUT.
#   bash bench/transpose/run.sh
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-build/transpose-bench}; mkdir -p "$OUT" build/transpose-bench
export PATH=/usr/local/cuda/bin:$PATH
. tests/gpu/pyshim.sh   # assocgen importable on the lent machine
B=build/transpose-bench
python3 -m assocgen bench/transpose/spec.toml -o $B/src --no-compile-check > /dev/null || exit 1
flags="-O3 -arch=sm_90 -std=c++17"
ls $B/src/*.cu bench/transpose/bench.cu | xargs -P 16 -I{} sh -c 'nvcc '"$flags"' -I'"$B"'/src -c {} -o '"$B"'/$(basename {} .cu).o' \
    > "$OUT/build.log" 2>&1 && nvcc -arch=sm_90 -o $B/transpose_bench $B/*.o -lcublas >> "$OUT/build.log" 2>&1 ||
    { tail -20 "$OUT/build.log"; exit 1; }
$B/transpose_bench | tee "$OUT/transpose-bench.txt"
python3 bench/transpose/anchors.py | tee "$OUT/transpose-anchors.txt"
