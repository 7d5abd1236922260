#!/usr/bin/env bash
# Where the segmented rows lose at small and medium n (issue 19), on a GPU: generates
# sweep_spec.toml, patches copies of one scan shape (without its look-back, traced, by ticket
# order) and an override of the segmented reduce's spans choice (patch_sweep.py), builds
# sweep_main.cu and runs the parts asked for (its top comment says what each prints).  A
# diagnostic, not a test.
#   bash bench/trace/sweep.sh [PARTS...: any of A, B, C, D, E; default A B C]
set -e
cd "$(dirname "$0")/../.."
. bench/build.sh
S=build/sweep
rm -rf "$S" && mkdir -p "$S"
python3 -m assocgen bench/trace/sweep_spec.toml -o "$S/src" --no-compile-check > /dev/null
python3 bench/trace/patch_sweep.py "$S/src"
bench_compile "$S/src" bench/trace/sweep_main.cu "$S/sweep" "$S/build.log"
"$S/sweep" "$@"
