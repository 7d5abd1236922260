#!/usr/bin/env bash
# The matrix multiply benchmark on the GPU machine: generate bench/matmul/spec.toml and the step
# ceilings (ceiling.py), build them with bench.cu (cuBLAS beside it), run it.  Logs under $OUT.
#   bash bench/matmul/run.sh
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-build/matmul-bench}; mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH
. tests/gpu/pyshim.sh
B=build/matmul-bench
mkdir -p $B
python3 -m assocgen bench/matmul/spec.toml -o $B/src --no-compile-check > /dev/null || exit 1
python3 bench/matmul/ceiling.py $B/src/ceiling.cu || exit 1
flags="-O3 -arch=sm_90 -std=c++17"
ls $B/src/bm_*.cu bench/matmul/bench.cu | xargs -P 16 -I{} sh -c 'nvcc '"$flags"' -I'"$B"'/src -c {} -o '"$B"'/$(basename {} .cu).o' \
    > "$OUT/build.log" 2>&1 && nvcc -arch=sm_90 -o $B/matmul_bench $B/*.o -lcublas >> "$OUT/build.log" 2>&1 ||
    { tail -20 "$OUT/build.log"; exit 1; }
nvcc -arch=sm_90 -Xptxas -v -c $B/src/bm_matmul_plus_times_f32.cu -I$B/src -o /dev/null 2>&1 | grep -E "registers" > "$OUT/registers.txt"
$B/matmul_bench | tee "$OUT/matmul-bench.txt"
