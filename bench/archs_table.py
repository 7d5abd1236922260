"""The table of bench/archs.sh: each benchmark row's time built as compute_80 and compute_75 PTX,
as a fraction of the sm_90 build's speed (t_sm90 / t_ptx: 1.0 is as fast, below is slower), the
fastest of each build's runs, and each row's check column.
    python3 bench/archs_table.py OUT"""

import re
import sys
from pathlib import Path

ARCHS = ("sm90", "ptx80", "ptx75")
NAMES = ("main", "rows", "transpose", "matmul")
NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?")


def rows(text: str, name: str) -> dict[str, tuple[float, str]]:
    """Each table line's label (what precedes its first '|') -> (our time in us, its check: the
    last column; the matrix multiply's, whose last column is its reference, "ok" or MISMATCH)."""
    out: dict[str, tuple[float, str]] = {}
    for line in text.splitlines():
        if "|" not in line or line.startswith(("row ", "op ", "GPU")):
            continue
        label, rest = line.split("|", 1)
        first = NUMBER.search(rest)
        if first:
            check = line.rsplit("|", 1)[1].strip()
            if name == "matmul":
                check = "MISMATCH" if "MISMATCH" in line else "ok"
            out[" ".join(label.split())] = (float(first.group()), check)
    return out


def best(folder: Path, name: str, arch: str) -> dict[str, tuple[float, str]]:
    """The fastest of the rounds' times, row by row; a failed check from any round."""
    merged: dict[str, tuple[float, str]] = {}
    for f in sorted(folder.glob(f"{name}-{arch}-*.txt")):
        for label, (us, check) in rows(f.read_text(), name).items():
            old = merged.get(label)
            bad = check if check not in ("ok", "same", "") else (old[1] if old else check)
            merged[label] = (min(us, old[0]) if old else us, bad)
    return merged


def main(folder: Path) -> int:
    print(f"{'row':52} {'sm_90 us':>9} {'ptx80':>6} {'ptx75':>6}  checks")
    worst: dict[str, float] = {a: 1e9 for a in ARCHS[1:]}
    for name in NAMES:
        runs = {a: best(folder, name, a) for a in ARCHS}
        for label, (us, check) in runs["sm90"].items():
            fr = {a: us / runs[a][label][0] if label in runs[a] else float("nan") for a in ARCHS[1:]}
            checks = {runs[a].get(label, (0.0, "missing"))[1] for a in ARCHS} | {check}
            for a in ARCHS[1:]:
                worst[a] = min(worst[a], fr[a])
            cells = f"{us:9.1f} {fr['ptx80']:6.3f} {fr['ptx75']:6.3f}"
            print(f"{name + ' ' + label:52.52} {cells}  {'/'.join(sorted(checks))}")
    print("lowest: " + ", ".join(f"{a} {w:.3f}" for a, w in worst.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
