"""Reads the output of bench/before_after.sh (runs after1, before1, after2, before2) and prints, a
row each, this project's time after the change and before it (best of the two runs each), the ratio
before / after (above 1: the change is faster), per call and replayed from a CUDA graph, and each
side's against CUB's (gen/cub: above 1, faster than CUB; best of the two runs).

    python3 bench/compare_before_after.py OUT/ba.txt
    python3 bench/compare_before_after.py OUT/tuned.txt --names tuned,untuned   (bench/tuned.sh)
"""

import re
import statistics
import sys

RUNS = ("after1", "before1", "after2", "before2")


def _speedup(text):
    """`1.16x` -> 1.16; `-` -> None"""
    text = text.strip().rstrip("x")
    return float(text) if text and text != "-" else None


def parse_row(line: str):
    """One row of a bench table: (its name, (us per call, CUB's us, gen/cub, us from a graph or
    None, CUB's us from a graph or None, gen/cub from a graph or None)); None for other lines."""
    if "|" not in line or not re.match(r"^[a-z0-9]+ ", line):
        return None
    parts = [p.strip() for p in line.split("|")]
    graph = parts[5].split() if len(parts) > 6 else []
    timed = bool(graph) and graph[0] != "-"
    return re.sub(r"\s+", " ", parts[0]), (
        float(parts[1].split()[0]),
        float(parts[2].split()[0]),
        _speedup(parts[3]),
        float(graph[0]) if timed else None,
        float(graph[1]) if timed else None,
        _speedup(graph[2]) if len(graph) > 2 else None,
    )


def read(path: str) -> dict:
    """{run: {row: (us per call, us from a graph or None, gen/cub per call, gen/cub from a graph)}}"""
    runs, cur = {}, None
    for line in open(path):
        m = re.match(r"^== (\w+)$", line.strip())
        if m:
            cur = runs.setdefault(m[1], {})
        elif cur is not None and (row := parse_row(line)):
            name, (us, _, ratio, gus, _, gratio) = row
            cur[name] = (us, gus, ratio, gratio)
    return runs


def main(path: str, names=("after", "before")) -> None:
    global RUNS
    a, b = names
    RUNS = (f"{a}1", f"{b}1", f"{a}2", f"{b}2")
    runs = read(path)
    missing = [r for r in RUNS if r not in runs]
    if missing:
        sys.exit(f"{path}: no run {', '.join(missing)}")
    large, graphs, every = [], [], []
    print(
        f"{'row':44s} {a:>9s} {b:>9s} {'ratio':>6s} {'graph':>6s}"
        f" | {'vs CUB: ' + a:>14s} {b:>9s} {'graph ' + a:>12s} {b:>9s}"
    )
    for row in runs[RUNS[0]]:
        best = {side: min(runs[f"{side}{k}"][row][0] for k in (1, 2)) for side in (a, b)}
        ratio = best[b] / best[a]
        cub = []
        for col in (2, 3):
            for side in (a, b):
                v = [runs[f"{side}{k}"][row][col] for k in (1, 2)]
                cub.append(f"{max(v):.2f}x" if None not in v else "-")
        g = [runs[r][row][1] for r in RUNS]
        gratio = min(g[1], g[3]) / min(g[0], g[2]) if None not in g else None
        every.append(ratio)
        if re.search(r"2\^(2\d)\b", row):
            large.append(ratio)
        if gratio:
            graphs.append(gratio)
        gtext = f"{gratio:6.3f}" if gratio else "     -"
        print(
            f"{row:44s} {best[a]:9.2f} {best[b]:9.2f} {ratio:6.3f} {gtext}"
            f" | {cub[0]:>14s} {cub[1]:>9s} {cub[2]:>12s} {cub[3]:>9s}"
        )
    if large:
        print(f"per call, n >= 2^20: min {min(large):.3f}, median {statistics.median(large):.3f} ({len(large)} rows)")
    elif every:
        print(f"per call, n < 2^20: min {min(every):.3f}, median {statistics.median(every):.3f} ({len(every)} rows)")
    if graphs:
        print(f"from a graph: min {min(graphs):.3f}, median {statistics.median(graphs):.3f} ({len(graphs)} rows)")


if __name__ == "__main__":
    args = sys.argv[1:]
    names = ("after", "before")
    if "--names" in args:
        k = args.index("--names")
        names = tuple(args[k + 1].split(","))
        del args[k : k + 2]
    main(args[0] if args else "build/before-after/ba.txt", names)
