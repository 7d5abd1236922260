# What the benchmark scripts share, sourced from the repository root: build the benchmark of
# bench/NAME (its spec.toml generated, the sources and bench.cu compiled in parallel, linked with
# LIBS) into build/NAME-bench/NAME_bench.  Sets B to that folder, and OUT (the logs' folder, made
# if missing) to that folder where the caller set none.  Returns non-zero, with the build log's
# tail, if anything fails.
#   . bench/build.sh && bench_build NAME [LIBS...] && $B/NAME_bench
# bench_compile compiles generated sources already written (SRC/*.cu) with a main program into
# EXE, objects beside EXE, the log to LOG (bench/before_after.sh, bench/tuned.sh); the generated
# sources for $GEN_ARCH (default -arch=sm_90; e.g. "-gencode arch=compute_75,code=compute_75"
# for PTX the driver JIT-compiles, bench/archs.sh), MAIN.cu for sm_90 (with -I$MAIN_INC too, where
# set: files it includes that are not to be compiled alone, such as bench/matmul's ceiling.cu):
#   bench_compile SRC MAIN.cu EXE LOG [LIBS...]
export PATH=/usr/local/cuda/bin:$PATH
. tests/gpu/pyshim.sh   # assocgen importable on the lent machine

bench_build() {
    local name=$1
    shift
    B=build/$name-bench
    OUT=${OUT:-$B}
    mkdir -p "$OUT" "$B"
    python3 -m assocgen "bench/$name/spec.toml" -o "$B/src" --no-compile-check > /dev/null || return 1
    bench_compile "$B/src" "bench/$name/bench.cu" "$B/${name}_bench" "$OUT/build.log" "$@"
}

bench_compile() {
    local src=$1 main=$2 exe=$3 log=$4 flags="-O3 -std=c++17" jobs=${JOBS:-16}
    shift 4
    local dir
    dir=$(dirname "$exe")
    mkdir -p "$dir" && rm -f "$dir"/*.o
    nvcc $flags -arch=sm_90 -I"$src" ${MAIN_INC:+-I"$MAIN_INC"} -c "$main" -o "$dir/$(basename "$main" .cu).o" > "$log.main" 2>&1 &
    local main_pid=$!
    ls "$src"/*.cu | xargs -P "$jobs" -I{} sh -c 'nvcc '"$flags ${GEN_ARCH:--arch=sm_90}"' -I'"$src"' -c {} -o '"$dir"'/$(basename {} .cu).o' > "$log" 2>&1
    local rc=$?
    wait "$main_pid" || rc=1
    cat "$log.main" >> "$log" && rm -f "$log.main"
    [ "$rc" = 0 ] && nvcc -arch=sm_90 -o "$exe" "$dir"/*.o "$@" >> "$log" 2>&1 ||
        { tail -20 "$log"; return 1; }
}
