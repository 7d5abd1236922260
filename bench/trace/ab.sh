#!/usr/bin/env bash
# A/B of experimental changes to a generated scan or reduce: each argument is [INSTANCE:]CHANGES, a
# change of bench/trace/patch_variant.py (or changes joined by '+') applied to a copy of one of the
# bench's generated functions (INSTANCE: scan_sum_f32, the default, scan_mat2mul_mat2u,
# reduce_sum_f32 or reduce_mat2mul_mat2u); the copies
# run as rows of the bench (`--only ab`), each beside CUB and a copy on the same data, in the
# order given (name `base` twice to see the run-to-run spread).  A diagnostic, not a test.
#   bash bench/trace/ab.sh [--build-only] base ticket scan_mat2mul_mat2u:lanestore base
#   AB_LOGS="24, 28" (default) sets the sizes (log2 n); build/ab/bench --only ab reruns it
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH=/usr/local/cuda/bin:$PATH
build_only=0
if [ "${1:-}" = --build-only ]; then build_only=1; shift; fi
[ $# -gt 0 ] || { echo "usage: bash bench/trace/ab.sh [--build-only] [INSTANCE:]CHANGE[+CHANGE] ..."; exit 2; }
d=build/ab
rm -rf "$d"; mkdir -p "$d"
ninja bench > /dev/null
flags="-O3 -arch=sm_90 -std=c++17"
decl="" rows="" objs="" pids=""
i=0
for arg in "$@"; do
    inst=scan_sum_f32 c=$arg
    case "$arg" in *:*) inst=${arg%%:*} c=${arg#*:} ;; esac
    case "$inst" in
        scan_sum_f32) T=float cub="CubInclusiveSum()" tag=f32 row=scan ;;
        scan_mat2mul_mat2u) T=mat2u cub="CubMat2Scan()" tag=mat2u row=scan ;;
        reduce_sum_f32) T=float cub="CubSum(), CHECK_REL_1E4" tag=f32r row=reduce ;;
        reduce_mat2mul_mat2u) T=mat2u cub="CubMat2Mul(), CHECK_HOST_PRODUCT" tag=mat2ur row=reduce ;;
        *) echo "ab.sh: no row type for $inst"; exit 2 ;;
    esac
    name=v${i}_${tag}_${c//+/_}; i=$((i + 1))
    python3 bench/trace/patch_variant.py "build/bench/bench_$inst.cu" "$d/$name.cu" "$name" "$c"
    nvcc $flags -Ibuild/bench -c "$d/$name.cu" -o "$d/$name.o" & pids+=" $!"
    decl+="extern \"C\" cudaError_t ab_$name(const $T *, size_t, $T *, void *, size_t, cudaStream_t);"$'\n'
    if [ $row = scan ]; then
        rows+="run_scan_row<$T>(b, \"$name\", ab_$name, $cub, false, std::vector<int>{${AB_LOGS:-24, 28}}); "
    else
        rows+="run_row<$T>(b, \"$name\", ab_$name, $cub, std::vector<int>{${AB_LOGS:-24, 28}}); "
    fi
    objs+=" $d/$name.o"
done
printf '%s#define AB_ROWS %s\n' "$decl" "$rows" > "$d/ab_rows.h"
nvcc $flags -DBENCH_AB -I"$d" -Ibuild/bench -c bench/bench.cu -o "$d/bench.o" & pids+=" $!"
for p in $pids; do wait "$p"; done
nvcc -arch=sm_90 -o "$d/bench" "$d/bench.o" $(ls build/bench/bench_*.o) $objs
[ "$build_only" = 1 ] && { echo "built $d/bench"; exit 0; }
"$d/bench" --only ab
