#!/usr/bin/env bash
# The argument checks on the GPU: generate spec.toml, build the driver, run it, then once more
# under compute-sanitizer memcheck.  Logs to $OUT (or build/args); the last line is `N passed, M failed`.
#   bash tests/gpu/args/run.sh          (ARCH=sm_90 by default; NVCC to pick the compiler)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../../.." && pwd)"
BUILD="$ROOT/build/args"
LOG="${OUT:-$BUILD}/args.log"
NVCC="${NVCC:-nvcc}"
ARCH="${ARCH:-sm_90}"
rm -rf "$BUILD" && mkdir -p "$BUILD" "$(dirname "$LOG")"
python3 -m assocgen "$ROOT/tests/gpu/args/spec.toml" -o "$BUILD" >/dev/null
"$NVCC" -O2 -arch="$ARCH" -std=c++17 -I"$BUILD" -o "$BUILD/args_test" "$ROOT/tests/gpu/args/driver.cu" "$BUILD"/*.cu
{
    "$BUILD/args_test" | sed 's/^/run: /'
    if command -v compute-sanitizer >/dev/null 2>&1; then
        compute-sanitizer --tool memcheck --error-exitcode 9 "$BUILD/args_test" >"$BUILD/memcheck.txt" 2>&1 \
            && echo "memcheck: clean" || { echo "memcheck: FAILED"; tail -20 "$BUILD/memcheck.txt"; }
    fi
} 2>&1 | tee "$LOG"
grep -q "^run: .* 0 failed$" "$LOG" && ! grep -q "memcheck: FAILED" "$LOG"
