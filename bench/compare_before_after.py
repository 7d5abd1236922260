"""Reads the output of bench/before_after.sh (runs after1, before1, after2, before2) and prints, a
row each, this project's time after the change and before it (best of the two runs each), the ratio
before / after (above 1: the change is faster), per call and replayed from a CUDA graph.

    python3 bench/compare_before_after.py OUT/ba.txt
"""

import re
import statistics
import sys

RUNS = ("after1", "before1", "after2", "before2")


def read(path: str) -> dict:
    """{run: {row: (us per call, us from a graph or None)}}"""
    runs, cur = {}, None
    for line in open(path):
        m = re.match(r"^== (\w+)$", line.strip())
        if m:
            cur = runs.setdefault(m[1], {})
        elif cur is not None and "|" in line and re.match(r"^[a-z0-9]+ ", line):
            parts = [p.strip() for p in line.split("|")]
            graph = parts[5].split() if len(parts) > 6 else []
            cur[re.sub(r"\s+", " ", parts[0])] = (
                float(parts[1].split()[0]),
                float(graph[0]) if graph and graph[0] != "-" else None,
            )
    return runs


def main(path: str) -> None:
    runs = read(path)
    missing = [r for r in RUNS if r not in runs]
    if missing:
        sys.exit(f"{path}: no run {', '.join(missing)}")
    large, graphs = [], []
    print(f"{'row':44s} {'after':>9s} {'before':>9s} {'ratio':>6s} {'graph':>6s}")
    for row in runs["after1"]:
        best = {side: min(runs[f"{side}{k}"][row][0] for k in (1, 2)) for side in ("after", "before")}
        ratio = best["before"] / best["after"]
        g = [runs[r][row][1] for r in RUNS]
        gratio = min(g[1], g[3]) / min(g[0], g[2]) if None not in g else None
        if re.search(r"2\^(2\d)\b", row):
            large.append(ratio)
        if gratio:
            graphs.append(gratio)
        gtext = f"{gratio:6.3f}" if gratio else "     -"
        print(f"{row:44s} {best['after']:9.2f} {best['before']:9.2f} {ratio:6.3f} {gtext}")
    print(f"per call, n >= 2^20: min {min(large):.3f}, median {statistics.median(large):.3f} ({len(large)} rows)")
    if graphs:
        print(f"from a graph: min {min(graphs):.3f}, median {statistics.median(graphs):.3f} ({len(graphs)} rows)")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "build/before-after/ba.txt")
