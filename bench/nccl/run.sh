#!/usr/bin/env bash
# The NCCL test, example and benchmark on the GPU machine, every visible GPU a rank, in both forms:
# a host thread a rank (one process), and one process a rank started by tests/gpu/nccl/launch.py
# (the NCCL id handed over by a file), the latter over NCCL's default transport and over its
# socket network ("net": peer-to-peer and shared memory off).  Generates tests/gpu/nccl/spec.toml,
# builds the test driver, bench/nccl/bench.cu and examples/nccl, runs them, then the test's --tiny
# cases under compute-sanitizer memcheck and racecheck (each rank its own sanitizer in the process
# form; the threaded form on two GPUs at most).  Logs under $OUT; the benchmark's tables as
# nccl-bench-<form>-<G>gpu-<transport>.txt.
# NVLink multicast stays off (NCCL_NVLS_ENABLE=0, also in every rank's process).
#   bash bench/nccl/run.sh [--quick]         (--quick: the tests' smaller cases)
# Parts of it, e.g. to keep each call within a time limit (a build is reused where SKIP_BUILD=1):
#   FORMS="threads procs" TRANSPORTS="default net" STEPS="test example bench sanitize" (the defaults)
# FORMS may also name "mpi" (where mpicxx is found): the three built with -DAG_WITH_MPI, the NCCL id
# by MPI_Bcast, started by $MPIRUN (default "mpirun -np G"; as root Open MPI wants
# MPIRUN="mpirun --allow-run-as-root -np G").
# STEPS may also name "onelaunch" (not a default): bench/nccl/onelaunch.cu, the one-launch all-reduce
# prototype of issue 48, built alone and run in the threaded form (onelaunch-threads-<G>gpu.txt), e.g.
#   FORMS=threads STEPS=onelaunch bash bench/nccl/run.sh
set -u
cd "$(dirname "$0")/../.." || exit 1
OUT=${OUT:-build/nccl-bench}; mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH NCCL_NVLS_ENABLE=0
FORMS=${FORMS:-threads procs} TRANSPORTS=${TRANSPORTS:-default net} STEPS=${STEPS:-test example bench sanitize}
has() { case " $1 " in *" $2 "*) return 0 ;; esac; return 1; }
. tests/gpu/pyshim.sh
B=build/nccl
mkdir -p $B
if has "$STEPS" onelaunch && [ "${SKIP_BUILD:-0}" != 1 ]; then
    nvcc -O3 -arch=sm_90 -std=c++17 -o $B/onelaunch bench/nccl/onelaunch.cu -lnccl -lpthread > "$OUT/onelaunch-build.log" 2>&1 ||
        { tail -20 "$OUT/onelaunch-build.log"; exit 1; }
fi
gen=0; for s in test example bench sanitize; do has "$STEPS" $s && gen=1; done   # the generated code's steps
if [ "${SKIP_BUILD:-0}" != 1 ] && [ $gen = 1 ]; then
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
    if has "$FORMS" mpi; then   # the programs again with MPI (the generated objects as they are)
        # shellcheck disable=SC2206  # $flags: several flags
        mpi=(nvcc -ccbin mpicxx -DAG_WITH_MPI $flags "-I$B/src")
        mkdir -p $B/mpi
        { "${mpi[@]}" -DAG_NCCL_NO_SHORTCUT -c tests/gpu/nccl/driver.cu -o $B/mpi/driver.o &&
            "${mpi[@]}" -c bench/nccl/bench.cu -o $B/mpi/bench.o &&
            nvcc -ccbin mpicxx -arch=sm_90 -o $B/mpi/nccl_test $B/mpi/driver.o $B/test/nt_*.o -lnccl &&
            nvcc -ccbin mpicxx -arch=sm_90 -o $B/mpi/nccl_bench $B/mpi/bench.o $B/bench/nt_*.o -lnccl &&
            mpicc -DAG_WITH_MPI -std=c99 -O2 -Wall -Wextra -Werror -pedantic -isystem /usr/local/cuda/include -I$B/example \
                -c examples/nccl/main.c -o $B/mpi/main.o &&
            nvcc -ccbin mpicxx -arch=sm_90 -o $B/mpi/example $B/mpi/main.o $B/example/r.o $B/example/s.o -lnccl -lpthread
        } >> "$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 1; }
    fi
fi
nvidia-smi --query-gpu=name --format=csv,noheader | tee "$OUT/gpus.txt"
G=$(wc -l < "$OUT/gpus.txt")
launch() {   # launch NAME TRANSPORT TIMEOUT PROGRAM ARGS...: G processes, a log a rank under $OUT/NAME
    local name=$1 transport=$2 timeout=$3; shift 3
    python3 tests/gpu/nccl/launch.py -n "$G" --transport "$transport" --timeout "$timeout" --log-dir "$OUT/$name" -- "$@"
}
for form in $FORMS; do
    for transport in $TRANSPORTS; do
        [ "$form" = threads ] && [ "$transport" = net ] && continue   # net: the process forms'
        tag=$form-${G}gpu-$transport
        t0=$(date +%s) rc=- erc=- brc=-
        if [ "$form" = threads ]; then
            has "$STEPS" test && { $B/nccl_test "$@" > "$OUT/nccl-test-$tag.txt" 2>&1; rc=$?; }
            has "$STEPS" example && { $B/example/nccl > "$OUT/example-$tag.txt" 2>&1; erc=$?; }
            has "$STEPS" bench && { $B/nccl_bench > "$OUT/nccl-bench-$tag.txt" 2>&1; brc=$?; }
            if has "$STEPS" onelaunch; then   # a missing rank's wait gives up after 5 s; 300 s in all
                timeout 300 $B/onelaunch > "$OUT/onelaunch-threads-${G}gpu.txt" 2>&1
                echo "== onelaunch threads-${G}gpu: rc=$?"; cat "$OUT/onelaunch-threads-${G}gpu.txt"
            fi
        elif [ "$form" = mpi ]; then
            # shellcheck disable=SC2206  # $MPIRUN: a command and its flags
            run=(${MPIRUN:-mpirun -np $G} env "AG_NCCL_TRANSPORT=$transport")
            has "$STEPS" test && { timeout 1800 "${run[@]}" $B/mpi/nccl_test "$@" > "$OUT/nccl-test-$tag.txt" 2>&1; rc=$?; }
            has "$STEPS" example && { timeout 600 "${run[@]}" $B/mpi/example > "$OUT/example-$tag.txt" 2>&1; erc=$?; }
            has "$STEPS" bench && { timeout 900 "${run[@]}" $B/mpi/nccl_bench > "$OUT/nccl-bench-$tag.txt" 2>&1; brc=$?; }
        else
            has "$STEPS" test && { launch test-$tag "$transport" 1800 $B/nccl_test "$@" > "$OUT/nccl-test-$tag.txt" 2>&1; rc=$?; }
            has "$STEPS" example && { launch example-$tag "$transport" 600 $B/example/nccl > "$OUT/example-$tag.txt" 2>&1; erc=$?; }
            has "$STEPS" bench && { launch bench-$tag "$transport" 900 $B/nccl_bench > "$OUT/nccl-bench-$tag.txt" 2>&1; brc=$?; }
        fi
        echo "== $tag: test rc=$rc $(grep -hE 'passed,' "$OUT/nccl-test-$tag.txt" 2>/dev/null | tail -1); example rc=$erc; bench rc=$brc [$(( $(date +%s) - t0 ))s]"
        grep -hE "^FAIL|^\[[0-9]+\] FAIL|launch:" "$OUT/nccl-test-$tag.txt" "$OUT/example-$tag.txt" 2>/dev/null | head -20
        has "$STEPS" bench && cat "$OUT/nccl-bench-$tag.txt"
    done
done
has "$STEPS" sanitize || exit 0
for tool in memcheck racecheck; do   # NCCL's own probes for kernels of other GPUs are API errors, not ours
    san=(compute-sanitizer "--tool=$tool" --report-api-errors=no --error-exitcode=3)
    for form in $FORMS; do
        t0=$(date +%s)
        [ "$form" = mpi ] && continue
        if [ "$form" = threads ]; then
            # one process driving four GPUs under the sanitizer did not finish in 200 s: two
            CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-$(seq -s, 0 $(( (G < 2 ? G : 2) - 1 )))} \
                timeout 200 "${san[@]}" $B/nccl_test --tiny > "$OUT/$tool-threads.txt" 2>&1; rc=$?
            seen=$(grep -hE 'passed,|SUMMARY' "$OUT/$tool-threads.txt" | tr '\n' ' ')
        else   # each rank its own sanitizer; every rank's log read
            launch $tool-procs default 200 "${san[@]}" $B/nccl_test --tiny > "$OUT/$tool-procs.txt" 2>&1; rc=$?
            seen="$(grep -hE 'passed,|SUMMARY' "$OUT/$tool-procs"/rank*.log | sort | uniq -c | tr -s ' \n' ' ')$(grep -h launch: "$OUT/$tool-procs.txt")"
        fi
        echo "$tool ($form, --tiny) rc=$rc $seen [$(( $(date +%s) - t0 ))s]"
    done
done
