#!/usr/bin/env bash
# A/B/... of generated code (first written for the segmented reduce): the benchmark built as the tree
# has it (a) and once for each patch given (b, c, ...: a shell command run on a copy's generator/ and
# templates/, e.g. a sed), then `bench --only segavg --quick` (or $ROWS) of each, twice in turn.  Logs
# under $OUT.
#   bash bench/trace/seg_ab.sh 'sed -i "s/^SEGMENT_SPAN_SPLIT_N = .*/SEGMENT_SPAN_SPLIT_N = 1 << 15/" generator/tuning.py'
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-build/seg-ab}; rm -rf build/ab-orig; mkdir -p "$OUT" build/ab-orig
export PATH=/usr/local/cuda/bin:$PATH
. tests/gpu/pyshim.sh
rows=${ROWS:---only segavg --quick}
cp -r generator templates build/ab-orig/
# whatever happens, the tree's generator and templates come back
trap 'rm -rf generator templates && cp -r build/ab-orig/generator build/ab-orig/templates .' EXIT
variants=(a)
touch generator/*.py   # (a) is the tree's code, whatever variant an earlier run built last
ninja bench > "$OUT/build-a.log" 2>&1 && cp build/bench/bench build/bench-a || { tail "$OUT/build-a.log"; exit 1; }
v=a
for patch in "$@"; do
    v=$(echo "$v" | tr 'a-y' 'b-z'); variants+=("$v")
    echo "$v: $patch"
    bash -c "$patch" && ninja bench > "$OUT/build-$v.log" 2>&1 && cp build/bench/bench "build/bench-$v" || { tail "$OUT/build-$v.log"; exit 1; }
    rm -rf generator templates && cp -r build/ab-orig/generator build/ab-orig/templates .
done
for r in 1 2; do
    for v in "${variants[@]}"; do
        "build/bench-$v" $rows > "$OUT/bench-$v$r.log" 2> /dev/null
    done
done
# dist, n, per call us ours / CUB (x), graph us ours / CUB (x)
for v in "${variants[@]}"; do
    for r in 1 2; do
        echo "== $v run $r"
        grep -hE "^f32 seg" "$OUT/bench-$v$r.log" | awk '{printf "%s %s %s/%s %s | %s/%s %s\n", $3, $4, $9, $12, $15, $20, $21, $22}'
        # other rows (scans, reduces: row, n, per call ours/CUB x | graph ours/CUB x)
        grep -hE "^[a-z0-9]+ (scan|exscan|sum|min|mul) " "$OUT/bench-$v$r.log" | awk -F'|' '{split($1, a, " "); split($2, g, " "); split($3, c, " "); printf "%s %s %s %s/%s %s |%s\n", a[1], a[2], a[3], g[1], c[1], $4, $6}'
    done
done
