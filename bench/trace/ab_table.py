"""One table of several variants' bench logs (bench/trace/seg_ab.sh writes them as bench-VR.log, R
the run): for each scan or reduce row, ours per call and replayed from a graph, each variant's mean
over its runs, and CUB's (the mean over every log), us.  A diagnostic, not a test.
  python3 bench/trace/ab_table.py DIR a b c ...   (logs DIR/bench-a1.log, DIR/bench-a2.log, ...)
  python3 bench/trace/ab_table.py DIR --prefix med- a b ...   (logs DIR/med-a1.log, ...)"""

import glob
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from compare_before_after import parse_row  # noqa: E402

ROW = re.compile(r"^([a-z0-9]+ (?:scan|exscan|sum|min|mul))\s+(2\^\d+)\s")


def rows(path):
    """{(row, n): (ours, cub, graph ours, graph cub)} of one log (graph columns None where absent)."""
    out = {}
    for line in open(path):
        m = ROW.match(line)
        row = parse_row(line) if m else None
        if row:
            ours, cub, _, gours, gcub, _ = row[1]
            out[(m.group(1), m.group(2))] = (ours, cub, gours, gcub)
    return out


def mean(xs):
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else None


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    folder, prefix, names = argv[1], "bench-", argv[2:]
    if names[0] == "--prefix":
        if len(names) < 3:
            sys.exit(__doc__)
        prefix, names = names[1], names[2:]
    logs = {v: [rows(p) for p in sorted(glob.glob(os.path.join(folder, f"{prefix}{v}[0-9].log")))] for v in names}
    keys = []
    for v in names:
        for r in logs[v]:
            keys += [k for k in r if k not in keys]
    fmt = lambda x: f"{x:7.2f}" if x is not None else "      -"  # noqa: E731
    print(
        f"{'row':<16}{'n':>5} | per call: "
        + " ".join(f"{v:>7}" for v in names)
        + "      cub"
        + " | graph: "
        + " ".join(f"{v:>7}" for v in names)
        + "      cub | graph cub/ours"
    )
    for k in keys:
        per = [mean([r[k][0] for r in logs[v] if k in r]) for v in names]
        gra = [mean([r[k][2] for r in logs[v] if k in r]) for v in names]
        cub = mean([r[k][1] for v in names for r in logs[v] if k in r])
        gcub = mean([r[k][3] for v in names for r in logs[v] if k in r])
        ratio = " ".join(f"{gcub / g:5.2f}" if g and gcub else "    -" for g in gra)
        print(
            f"{k[0]:<16}{k[1]:>5} | per call: "
            + " ".join(fmt(x) for x in per)
            + " "
            + fmt(cub)
            + " | graph: "
            + " ".join(fmt(x) for x in gra)
            + " "
            + fmt(gcub)
            + " | "
            + ratio
        )


if __name__ == "__main__":
    main(sys.argv)
