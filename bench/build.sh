# What bench/{rows,transpose,inputs}/run.sh share, sourced from the repository root: build the
# benchmark of bench/NAME (its spec.toml generated, the sources and bench.cu compiled in
# parallel, linked with LIBS) into build/NAME-bench/NAME_bench.  Sets B to that folder, and OUT
# (the logs' folder, made if missing) to that folder where the caller set none.  Returns non-zero,
# with the build log's tail, if anything fails.
#   . bench/build.sh && bench_build NAME [LIBS...] && $B/NAME_bench
export PATH=/usr/local/cuda/bin:$PATH
. tests/gpu/pyshim.sh   # assocgen importable on the lent machine

bench_build() {
    local name=$1 flags="-O3 -arch=sm_90 -std=c++17"
    shift
    B=build/$name-bench
    OUT=${OUT:-$B}
    mkdir -p "$OUT" "$B"
    python3 -m assocgen "bench/$name/spec.toml" -o "$B/src" --no-compile-check > /dev/null || return 1
    rm -f "$B"/*.o
    ls "$B"/src/*.cu "bench/$name/bench.cu" |
        xargs -P 16 -I{} sh -c 'nvcc '"$flags"' -I'"$B"'/src -c {} -o '"$B"'/$(basename {} .cu).o' > "$OUT/build.log" 2>&1 &&
        nvcc -arch=sm_90 -o "$B/${name}_bench" "$B"/*.o "$@" >> "$OUT/build.log" 2>&1 ||
        { tail -20 "$OUT/build.log"; return 1; }
}
