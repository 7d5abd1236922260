#!/usr/bin/env python3
"""GPU test of tuning (issue 19): `assocgen tune` on a small spec, then the kernels generated with
tuning files checked at every threshold between their shapes.

  1. `assocgen tune tests/gpu/tune/spec.toml --quick` measures the spec's reduces and scans on this
     GPU (every candidate checked against an in-order reference) and writes a tuning file; every
     instance must have an entry.
  2. A tuning file made here gives each instance three shapes (a small tile, a wide block, the
     built-in one), so that the size dispatch is exercised whatever step 1 picked.
  3. For each of the two files the spec is generated with `--tuning`, and each instance's public
     function is checked by tune's measuring program (an in-order reference on random data) at
     0, 1, 2, 1000, 2^20 + 7 and each threshold n - 1, n, n + 1; the ordered operators exactly.
  4. compute-sanitizer memcheck and racecheck on each instance of step 2 just past each
     threshold, with allocations of exactly n elements.

    python3 tests/gpu/tune/run.py [--no-sanitizer]     (logs under $OUT or build/tune-test)
The last line is `N passed, M failed`.
"""

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
HERE = Path(__file__).resolve().parent
NVCC = os.environ.get("NVCC", "nvcc")
ARCH = os.environ.get("ARCH", "sm_90")

try:
    from assocgen import emit, tune, tunefile, tuning
    from assocgen.spec import load
except ImportError as e:
    sys.exit(f"error: {e}: install the generator first (pip install -e . from the repository root)")

OUT = Path(os.environ.get("OUT", ROOT / "build" / "tune-test"))
B = ROOT / "build" / "tune-test"


def sh(cmd, log: Path, cwd=None) -> subprocess.CompletedProcess:
    r = subprocess.run(list(map(str, cmd)), capture_output=True, text=True, cwd=cwd)
    log.write_text(f"$ {' '.join(map(str, cmd))}\n{r.stdout}{r.stderr}")
    return r


def crafted(spec) -> str:
    """A tuning file giving every tunable instance three shapes by n."""
    entries = []
    for inst in spec.instances:
        if tunefile.tunable(inst, spec):
            continue
        cands = tuning.tune_candidates(inst)
        small = min(cands, key=lambda c: (c.block * c.items, c.block))
        wide = max((c for c in cands if c.block == 512), key=lambda c: c.items)
        shapes = ((1000, small.block, small.items, 0), (70000, wide.block, wide.items, 0))
        shapes += ((None, cands[-1].block, cands[-1].items, cands[-1].blocks_per_sm),)
        entries.append((inst, shapes, ["made by tests/gpu/tune/run.py"]))
    return tunefile.write_text("test GPU", "sm_90", entries)


def check(spec_path, tuning_file: Path, name: str, sanitize: bool, stats: list) -> None:
    """Generate with the tuning file, build a measuring program an instance, check at the
    thresholds (and sanitize)."""
    work = B / name
    work.mkdir(parents=True, exist_ok=True)
    spec = tunefile.apply(load(spec_path), tunefile.read(tuning_file))
    files = emit.render(spec)
    for f, text in files.items():
        (work / f).write_text(text)
    flags = ["-O3", f"-arch={ARCH}", "-I", str(work)]
    procs = {}
    for inst in spec.instances:
        if not inst.shapes:
            continue
        p = inst.public_name
        (work / f"check_{p}.cu").write_text(tune.harness_source(inst, [p], f"{spec.prefix}.h", "test"))
        cmd = [NVCC, *flags, "-o", work / f"check_{p}", work / f"check_{p}.cu", work / f"{p}.cu"]
        procs[inst] = subprocess.Popen(list(map(str, cmd)), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    for inst, proc in procs.items():
        p = inst.public_name
        out = proc.communicate()[0]
        if proc.returncode:
            print(f"FAIL {name} {p}: build\n{out[-2000:]}")
            stats[1] += 1
            continue
        ups = [u for u, *_ in inst.shapes if u is not None]
        sizes = sorted({0, 1, 2, 1000, (1 << 20) + 7} | {u + d for u in ups for d in (-1, 0, 1)})
        r = sh([work / f"check_{p}", "check", *sizes], OUT / f"{name}_{p}.log")
        lines = [ln.split("\t") for ln in r.stdout.splitlines() if ln.startswith("check")]
        ok = [f for f in lines if f[3] == "ok"]
        bad = [f for f in lines if f[3] != "ok"]
        if r.returncode or bad or len(ok) != len(sizes):
            print(f"FAIL {name} {p}: {bad[:1] or r.stdout[-300:] + r.stderr[-300:]}")
            stats[1] += 1
        else:
            stats[0] += len(ok)
            print(f"  {name} {p}: {len(ok)} sizes ok, shapes {[(u, b, t) for u, b, t, _ in inst.shapes]}")
        if not sanitize:
            continue
        for tool in ("memcheck", "racecheck"):
            for n in [u + 1 for u in ups]:
                r = sh(
                    ["compute-sanitizer", "--tool", tool, "--error-exitcode", "9", work / f"check_{p}", "check", n],
                    OUT / f"{name}_{p}_{tool}_{n}.log",
                )
                if r.returncode or "\tok\t" not in r.stdout:
                    print(f"FAIL {name} {p}: {tool} at n = {n} (log {name}_{p}_{tool}_{n}.log)")
                    stats[1] += 1
                else:
                    stats[0] += 1
                    print(f"  {name} {p}: {tool} n = {n} clean")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-sanitizer", action="store_true")
    args = ap.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    B.mkdir(parents=True, exist_ok=True)
    spec_path = HERE / "spec.toml"
    stats = [0, 0]
    measured = OUT / "tuning.toml"
    r = sh(
        [sys.executable, "-m", "assocgen", "tune", spec_path, "--quick", "-o", measured, "--work", B / "tune"],
        OUT / "tune.log",
    )
    print(r.stdout + r.stderr)
    spec = load(spec_path)
    want = {i.public_name for i in spec.instances if not tunefile.tunable(i, spec)}
    if r.returncode:
        print(f"FAIL assocgen tune: exit {r.returncode}")
        stats[1] += 1
    else:
        got = set(tunefile.read(measured).entries)
        kept = {n for n in want if f"{n}: keeps the built-in shapes" in r.stderr}
        if got | kept != want or got & kept:
            print(f"FAIL assocgen tune: tuned {sorted(got)}, kept built-in {sorted(kept)}, wanted {sorted(want)}")
            stats[1] += 1
        else:
            stats[0] += 1
        check(spec_path, measured, "measured", False, stats)
    made = OUT / "crafted.toml"
    made.write_text(crafted(spec))
    check(spec_path, made, "crafted", not args.no_sanitizer, stats)
    print(f"{stats[0]} passed, {stats[1]} failed")
    return 1 if stats[1] else 0


if __name__ == "__main__":
    sys.exit(main())
