#!/usr/bin/env bash
# The NCCL test, example and benchmark on the GPU machine (every visible GPU a rank): generate
# tests/gpu/nccl/spec.toml, build the test driver and bench/nccl/bench.cu, run the test, the
# example (examples/nccl), the benchmark, then the quick test under compute-sanitizer memcheck
# and racecheck.  Logs under $OUT.  NVLink multicast stays off (NCCL_NVLS_ENABLE=0).
#   bash bench/nccl/run.sh [--quick]
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-build/nccl-bench}; mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH NCCL_NVLS_ENABLE=0
. tests/gpu/pyshim.sh
B=build/nccl
mkdir -p $B
python3 -m assocgen tests/gpu/nccl/spec.toml -o $B/src --no-compile-check > /dev/null || exit 1
flags="-O3 -arch=sm_90 -std=c++17"
# the test's objects with the one-rank shortcut off (the general path runs on one GPU too)
mkdir -p $B/test $B/bench
{ for f in $B/src/*.cu tests/gpu/nccl/driver.cu; do echo "$f test -DAG_NCCL_NO_SHORTCUT"; done
  for f in $B/src/*.cu bench/nccl/bench.cu; do echo "$f bench"; done; } |
    xargs -P 16 -L 1 sh -c 'nvcc '"$flags"' $2 -I'"$B"'/src -c $0 -o '"$B"'/$1/$(basename $0 .cu).o' > "$OUT/build.log" 2>&1 ||
    { tail -20 "$OUT/build.log"; exit 1; }
nvcc -arch=sm_90 -o $B/nccl_test $B/test/*.o -lnccl >> "$OUT/build.log" 2>&1 &&
    nvcc -arch=sm_90 -o $B/nccl_bench $B/bench/*.o -lnccl >> "$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 1; }
python3 -m assocgen examples/nccl/spec.toml -o $B/example > /dev/null &&
    gcc -std=c99 -O2 -Wall -Wextra -Werror -pedantic -isystem /usr/local/cuda/include -I$B/example -c examples/nccl/main.c \
        -o $B/example/main.o >> "$OUT/build.log" 2>&1 &&
    nvcc -O3 -arch=sm_90 -std=c++17 -I$B/example -c $B/example/mg_reduce_mat3mul_mat3u.cu -o $B/example/r.o &&
    nvcc -O3 -arch=sm_90 -std=c++17 -I$B/example -c $B/example/mg_scan_mat3mul_mat3u.cu -o $B/example/s.o &&
    nvcc -arch=sm_90 -o $B/example/nccl $B/example/*.o -lnccl -lpthread >> "$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 1; }
nvidia-smi --query-gpu=name --format=csv,noheader | tee "$OUT/gpus.txt"
$B/nccl_test "$@" | tee "$OUT/nccl-test.txt" | grep -E "FAIL|passed|rank"
$B/example/nccl | tee "$OUT/example.txt"
$B/nccl_bench | tee "$OUT/nccl-bench.txt"
for tool in memcheck racecheck; do   # NCCL's own probes for kernels of other GPUs are API errors, not ours
    timeout 200 compute-sanitizer --tool=$tool --report-api-errors=no --error-exitcode=3 $B/nccl_test --quick \
        > "$OUT/$tool.txt" 2>&1
    echo "$tool rc=$? $(grep -E 'passed,|SUMMARY' "$OUT/$tool.txt" | tr '\n' ' ')"
done
