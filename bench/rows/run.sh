#!/usr/bin/env bash
# The benchmark of reduces along rows on the GPU machine: generate bench/rows/spec.toml, build it
# with bench.cu (CUB beside it), run it, then the PyTorch / CuPy anchors.  Logs under $OUT.
#   bash bench/rows/run.sh
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-build/rows-bench}; mkdir -p "$OUT" build/rows-bench
export PATH=/usr/local/cuda/bin:$PATH
. tests/gpu/pyshim.sh   # assocgen importable on the lent machine
B=build/rows-bench
python3 -m assocgen bench/rows/spec.toml -o $B/src --no-compile-check > /dev/null || exit 1
flags="-O3 -arch=sm_90 -std=c++17"
rm -f $B/*.o
ls $B/src/*.cu bench/rows/bench.cu | xargs -P 16 -I{} sh -c 'nvcc '"$flags"' -I'"$B"'/src -c {} -o '"$B"'/$(basename {} .cu).o' \
    > "$OUT/build.log" 2>&1 && nvcc -arch=sm_90 -o $B/rows_bench $B/*.o >> "$OUT/build.log" 2>&1 ||
    { tail -20 "$OUT/build.log"; exit 1; }
$B/rows_bench | tee "$OUT/rows-bench.txt"
python3 bench/rows/anchors.py | tee "$OUT/rows-anchors.txt"
