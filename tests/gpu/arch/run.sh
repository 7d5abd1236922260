#!/usr/bin/env bash
# GPU test of one library built for several architectures (issue 44), on the lent GPU machine:
#   bash tests/gpu/arch/run.sh                 (from anywhere; logs under $OUT or build/arch-test)
# Generates tests/gpu/arch/spec.toml once and builds it with driver.cu three ways:
#   fat    -gencode for sm_75, sm_80 and sm_90 (code only): on an H100 the sm_90 image must run
#   ptx75  compute_75 PTX only, JIT-compiled by the driver: the pre-sm_80 paths on the GPU
#   ptx80  compute_80 PTX only: the pre-sm_90 paths
# each checked against the CPU at sizes that take every shape by n.  The driver prints the image's
# binaryVersion and ptxVersion; the last line is `N passed, M failed` over the three builds.
set -u
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
. tests/gpu/pyshim.sh
OUT=${OUT:-build/arch-test}
rm -rf "$OUT/gen" && mkdir -p "$OUT"
python3 -m assocgen tests/gpu/arch/spec.toml -o "$OUT/gen" > /dev/null || exit 1
# the device's architecture, e.g. 90: the image the fat build must run (built for 75, 80 and 90)
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d '.')
fat=90; [ "$cc" -lt 90 ] && fat=80; [ "$cc" -lt 80 ] && fat=75
passed=0 failed=0
one() {  # name, expected binaryVersion, expected ptxVersion, nvcc's architecture flags...
    local name=$1 bin=$2 ptx=$3; shift 3
    local dir="$OUT/$name" ok=1
    rm -rf "$dir" && mkdir -p "$dir"
    for f in "$OUT"/gen/*.cu; do
        [ "$(basename "$f")" = ar_fixed.cu ] && continue   # the driver includes it
        nvcc -O3 -std=c++17 "$@" -I"$OUT/gen" -c "$f" -o "$dir/$(basename "${f%.cu}").o" >> "$dir/build.log" 2>&1 || ok=0
    done
    [ $ok = 1 ] && nvcc -O3 -std=c++17 "$@" -I"$OUT/gen" tests/gpu/arch/driver.cu "$dir"/*.o -o "$dir/driver" \
        >> "$dir/build.log" 2>&1 || ok=0
    if [ $ok = 1 ] && "$dir/driver" "$bin" "$ptx" > "$dir/run.log" 2>&1; then
        passed=$((passed + 1)); echo "ok   $name: $(head -1 "$dir/run.log")"
    else
        failed=$((failed + 1)); echo "FAIL $name (logs: $dir)"; grep -E "FAIL|error" "$dir/build.log" "$dir/run.log" | head -20
    fi
}
one fat "$fat" "$fat" -gencode arch=compute_75,code=sm_75 -gencode arch=compute_80,code=sm_80 \
    -gencode arch=compute_90,code=sm_90
one ptx75 "$cc" 75 -gencode arch=compute_75,code=compute_75
one ptx80 "$cc" 80 -gencode arch=compute_80,code=compute_80
echo "$passed passed, $failed failed"
[ $failed = 0 ]
