#!/usr/bin/env bash
# An experiment (not the generator's code): resident scan tiles larger than static shared memory
# allows, their stage in dynamic shared memory (patch_dyn_smem.py), against the default 256 x 36,
# CUB and a copy (bigtile_main.cu); then each under compute-sanitizer memcheck and racecheck at
# odd sizes with exact allocations. Logs under $OUT (default build/bigtile).
#   bash bench/trace/bigtile.sh
set -u
cd "$(dirname "$0")/../.."
export PATH=/usr/local/cuda/bin:$PATH
. tests/gpu/pyshim.sh
D=build/bigtile
OUT=${OUT:-$D}
rm -rf "$D/src" && mkdir -p "$D/src" "$OUT"
cat > "$D/spec.toml" <<'SPEC'
prefix = "bt"
[[scan]]
op = "sum"
type = "i32"
block = 512
items = 36
name = "b512t36"

[[scan]]
op = "sum"
type = "i32"
block = 512
items = 44
name = "b512t44"

[[scan]]
op = "sum"
type = "i32"
block = 512
items = 52
name = "b512t52"

[[scan]]
op = "sum"
type = "i32"
block = 256
items = 36
name = "b256t36"
SPEC
# the stage past the static limit: generated as if it fitted, then moved to dynamic shared memory
python3 -c "
import assocgen.tuning as t
t.STAGE_LIMIT = 220 * 1024
from assocgen.cli import main
main(['$D/spec.toml', '-o', '$D/src', '--no-compile-check'])
" > /dev/null || exit 1
for v in b512t36 b512t44 b512t52; do
    python3 bench/trace/patch_dyn_smem.py "$D/src/bt_$v.cu" "$D/src/bt_$v.cu" || exit 1
done
for f in "$D"/src/*.cu bench/trace/bigtile_main.cu; do
    nvcc -O3 -std=c++17 -arch=sm_90 -I"$D/src" -c "$f" -o "$D/$(basename "$f" .cu).o" &
done
wait
nvcc -arch=sm_90 -o "$D/bigtile" "$D"/*.o > "$OUT/build.log" 2>&1 || { cat "$OUT/build.log"; exit 1; }
"$D/bigtile" | tee "$OUT/bigtile.txt"
for n in 4097 1048579 3000011; do
    "$D/bigtile" check $n | tail -1
done
for tool in memcheck racecheck; do
    compute-sanitizer --tool $tool "$D/bigtile" check 300007 > "$OUT/$tool.txt" 2>&1
    echo "$tool rc=$? $(tail -1 "$OUT/$tool.txt")"
done
