#!/usr/bin/env bash
# The matrix multiply benchmark on the GPU machine: generate bench/matmul/spec.toml and the step
# ceilings (ceiling.py), build them with bench.cu (cuBLAS beside it) and seed002.cu (seed 002's
# kernels), run both, and profile seed002's launches with Nsight Compute.  Logs under $OUT.  With
# STALLS=1, also where the default plus-times kernel's warps wait beside cuBLAS's SGEMM (ncu of
# `matmul_bench --profile`, bench/matmul/stalls.py).
#   [STALLS=1] bash bench/matmul/run.sh
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
rm -f $B/*.o
ls $B/src/bm_*.cu bench/matmul/bench.cu bench/matmul/seed002.cu | xargs -P 16 -I{} sh -c 'nvcc '"$flags"' -I'"$B"'/src -c {} -o '"$B"'/$(basename {} .cu).o' \
    > "$OUT/build.log" 2>&1 &&
    nvcc -arch=sm_90 -o $B/matmul_bench $(ls $B/*.o | grep -v seed002) -lcublas >> "$OUT/build.log" 2>&1 &&
    nvcc -arch=sm_90 -o $B/seed002 $(ls $B/*.o | grep -v bench.o) -lcublas >> "$OUT/build.log" 2>&1 ||
    { tail -20 "$OUT/build.log"; exit 1; }
for f in $B/src/bm_*.cu; do
    printf '%-36s ' "$(basename $f .cu)"
    nvcc $flags -Xptxas -v -I$B/src -cubin -o /dev/null $f 2>&1 | grep -E "registers" | sed 's/ptxas info *: //'
done > "$OUT/registers.txt"
$B/seed002 3072 | tee "$OUT/seed002.txt"
if command -v ncu > /dev/null; then
    m=gpu__time_duration.sum,launch__registers_per_thread,launch__shared_mem_per_block_static
    m=$m,sm__maximum_warps_per_active_cycle_pct,sm__warps_active.avg.pct_of_peak_sustained_active
    m=$m,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum
    m=$m,smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_shared_st.sum
    ncu --csv --metrics "$m" -k regex:'seed_|bm_k_' $B/seed002 3072 --once > "$OUT/seed002-ncu.csv" 2> "$OUT/ncu.log"
    python3 bench/matmul/ncu_table.py "$OUT/seed002-ncu.csv" | tee "$OUT/seed002-ncu.txt"
fi
if [ "${STALLS:-0}" = 1 ] && command -v ncu > /dev/null; then   # where the warps wait, ours beside SGEMM
    m=gpu__time_duration.sum,smsp__issue_active.avg.pct_of_peak_sustained_active
    m=$m,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active
    m=$m,launch__registers_per_thread,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum
    m=$m,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum
    for r in barrier short_scoreboard long_scoreboard mio_throttle not_selected selected math_pipe_throttle \
        wait dispatch_stall lg_throttle no_instruction branch_resolving membar sleeping tex_throttle drain; do
        m=$m,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio
    done
    ncu --csv --metrics "$m" $B/matmul_bench --profile > "$OUT/stalls.csv" 2> "$OUT/stalls.log"
    python3 bench/matmul/stalls.py "$OUT/stalls.csv" | tee "$OUT/stalls.txt"
fi
$B/matmul_bench | tee "$OUT/matmul-bench.txt"
