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
ls "$BUILD"/*.cu "$ROOT/tests/gpu/args/driver.cu" | xargs -P "$(nproc)" -I{} sh -c \
    '"$0" -O2 -arch="$1" -std=c++17 -I"$2" -c "{}" -o "$2/$(basename "{}" .cu).o"' "$NVCC" "$ARCH" "$BUILD"
"$NVCC" -arch="$ARCH" -o "$BUILD/args_test" "$BUILD"/*.o
"$BUILD/args_test" 2>&1 | sed 's/^/run: /' | tee "$LOG" || true
if command -v compute-sanitizer >/dev/null 2>&1; then
    compute-sanitizer --tool memcheck --error-exitcode 9 "$BUILD/args_test" >"$BUILD/memcheck.txt" 2>&1 \
        && echo "memcheck: clean" | tee -a "$LOG" || { echo "memcheck: FAILED" | tee -a "$LOG"; tail -20 "$BUILD/memcheck.txt"; }
fi
grep -q "^run: .* 0 failed$" "$LOG" && ! grep -q "memcheck: FAILED" "$LOG"
