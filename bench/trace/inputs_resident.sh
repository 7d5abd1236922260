#!/usr/bin/env bash
# An experiment on bench/inputs (not the generator's code), as a row of its benchmark beside the
# generated kernels: the recurrence's scan with a resident tile (patch_inputs_resident.py,
# "resident t16"), checked element by element against the register path by
# inputs_resident_check.cu, also under compute-sanitizer memcheck and racecheck. Logs under $OUT.
#   bash bench/trace/inputs_resident.sh
set -u
cd "$(dirname "$0")/../.."
. bench/build.sh
B=build/inputs-bench
P=bench/inputs/resident_bench.cu
mkdir -p "$B" "$OUT"
trap 'rm -f $P' EXIT
python3 -m assocgen bench/inputs/spec.toml -o "$B/src" --no-compile-check > /dev/null || exit 1
python3 bench/trace/patch_inputs_resident.py "$B/src/bi_recur_t16.cu" "$B/src/bi_recur_res.cu" || exit 1
decl='extern "C" cudaError_t bi_recur_res(const float *, const float *, size_t, affine *, void *, size_t, cudaStream_t);\nextern "C" size_t bi_recur_res_workspace_bytes(size_t);'
sed -e "s|#include \"bi.h\"|#include \"bi.h\"\n$decl|" \
    -e 's|            { "t16", bi_recur_t16_workspace_bytes, bi_recur_t16 },|&\n            { "resident t16", bi_recur_res_workspace_bytes, bi_recur_res },|' \
    -e 's|v.fn != bi_recur_t8 \&\& v.fn != bi_recur_t16)|v.fn != bi_recur_t8 \&\& v.fn != bi_recur_t16 \&\& v.fn != bi_recur_res)|' \
    bench/inputs/bench.cu > $P
[ "$(grep -c 'bi_recur_res' $P)" = 4 ] || { echo "inputs_resident.sh: bench.cu no longer takes the patch"; exit 1; }
C=build/inputs-resident-check
mkdir -p $C
for f in "$B/src/bi_recur_res.cu" "$B/src/bi_recur_t16.cu" bench/trace/inputs_resident_check.cu; do
    nvcc -O3 -std=c++17 -arch=sm_90 -I"$B/src" -c "$f" -o "$C/$(basename "$f" .cu).o" || exit 1
done
nvcc -arch=sm_90 -o $C/check $C/*.o || exit 1
bench_compile "$B/src" $P "$B/inputs_bench" "$OUT/build.log" -lcublas || exit 1
$C/check > "$OUT/check.txt" 2>&1; echo "check rc=$? $(tail -1 "$OUT/check.txt")"
for tool in memcheck racecheck; do
    compute-sanitizer --tool $tool $C/check 300000 > "$OUT/$tool.txt" 2>&1
    echo "$tool rc=$? $(grep -h 'SUMMARY' "$OUT/$tool.txt")"
done
for r in 1 2; do
    $B/inputs_bench > "$OUT/resident$r.txt" 2>&1
    grep "^recur t16 \|^recur resident\|^recur t8 " "$OUT/resident$r.txt"
done
