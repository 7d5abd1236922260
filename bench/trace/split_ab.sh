#!/usr/bin/env bash
# A/B of where the segmented reduce's split of long segments begins (tuning.SEGMENT_SPAN_SPLIT_N):
# the benchmark built as the tree has it (A) and with the split from 2^15 elements (B), each run
# twice in turn: segavg (2^16-2^24) and segmented (with one giant segment).  Logs under $OUT.
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-build/split-ab}; mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH
. tests/gpu/pyshim.sh
ninja bench > "$OUT/build-a.log" 2>&1 && cp build/bench/bench "build/bench-a" || { tail "$OUT/build-a.log"; exit 1; }
cp generator/tuning.py build/tuning.py.a
sed -i 's/^SEGMENT_SPAN_SPLIT_N = .*/SEGMENT_SPAN_SPLIT_N = 1 << 15/' generator/tuning.py
ninja bench > "$OUT/build-b.log" 2>&1 && cp build/bench/bench "build/bench-b" || { tail "$OUT/build-b.log"; exit 1; }
cp build/tuning.py.a generator/tuning.py
for r in 1 2; do
    for v in a b; do
        "build/bench-$v" --only segavg --quick > "$OUT/segavg-$v$r.log" 2> /dev/null
        "build/bench-$v" --only segmented --quick > "$OUT/segmented-$v$r.log" 2> /dev/null
    done
done
for v in a b; do
    echo "== $v"
    grep -hE "segreduce .* 2\^(16|20|24) |giant" "$OUT/segavg-${v}1.log" "$OUT/segmented-${v}1.log" | awk '{print $3, $4, $9, $12, $15, $20, $21, $22}'
    grep -hE "segreduce .* 2\^(16|20|24) |giant" "$OUT/segavg-${v}2.log" "$OUT/segmented-${v}2.log" | awk '{print $3, $4, $9, $12, $15, $20, $21, $22}'
done
