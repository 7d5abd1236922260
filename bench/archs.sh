#!/usr/bin/env bash
# Older GPUs' code paths measured on this one: the generated kernels of the benchmarks (bench/,
# bench/rows, bench/transpose, bench/matmul) built three ways, sm_90 code, compute_80 PTX and compute_75 PTX
# (which the driver JIT-compiles: the paths without TMA and programmatic launch, and below sm_80
# without cp.async), each main program and its reference library built for sm_90.
#   bash bench/archs.sh build          # anywhere with nvcc (JOBS=2 on a small machine): build/archs/
#   bash bench/archs.sh run            # on the GPU: the builds in turn, ROUNDS times (2); logs under $OUT
# The rows: the main benchmark at 2^28 (--logs 28 --no-graph), the rows, transpose and matmul
# benchmarks whole; bench/archs_table.py prints each row as a fraction of the sm_90 build.
# BENCHES="matmul" (a list) builds or runs only those of the four.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-build/archs}; mkdir -p "$OUT"
. bench/build.sh   # PATH, the generator, bench_compile
ARCHS=(sm90 ptx80 ptx75)
declare -A GEN=([sm90]="-arch=sm_90" [ptx80]="-gencode arch=compute_80,code=compute_80"
                [ptx75]="-gencode arch=compute_75,code=compute_75")
declare -A LIBS=([main]="" [rows]="" [transpose]="-lcublas" [matmul]="-lcublas")
read -r -a NAMES <<< "${BENCHES:-main rows transpose matmul}"

spec_of() { [ "$1" = main ] && echo bench/spec.toml || echo "bench/$1/spec.toml"; }
main_of() { [ "$1" = main ] && echo bench/bench.cu || echo "bench/$1/bench.cu"; }

build() {
    for name in "${NAMES[@]}"; do
        python3 -m assocgen "$(spec_of $name)" -o "build/archs/src-$name" --no-compile-check > /dev/null || return 1
        # matmul's main includes the step ceilings (sm_90 in every build: one yardstick)
        if [ "$name" = matmul ]; then
            mkdir -p build/archs/inc-matmul && python3 bench/matmul/ceiling.py build/archs/inc-matmul/ceiling.cu || return 1
        fi
        for a in "${ARCHS[@]}"; do
            echo "build $name $a"
            MAIN_INC=$([ "$name" = matmul ] && echo build/archs/inc-matmul) GEN_ARCH=${GEN[$a]} bench_compile "build/archs/src-$name" "$(main_of $name)" \
                "build/archs/$a/$name" "build/archs/$a/$name.log" ${LIBS[$name]} || return 1
        done
    done
}

run() {
    for round in $(seq "${ROUNDS:-2}"); do
        for a in "${ARCHS[@]}"; do
            for name in "${NAMES[@]}"; do
                args=(); [ "$name" = main ] && args=(--logs 28 --no-graph)
                build/archs/$a/$name "${args[@]}" > "$OUT/$name-$a-$round.txt" 2>> "$OUT/progress.log"
                echo "$name $a $round: rc=$?"
            done
        done
    done
    python3 bench/archs_table.py "$OUT"
}

case ${1:-} in
build) build ;;
run) run ;;
*) echo "usage: bash bench/archs.sh build|run"; exit 2 ;;
esac
