#!/usr/bin/env python3
"""GPU test of the generated transposes: generate tests/gpu/transpose/spec.toml, build it with
driver.cu (a CPU transpose checks every output byte), run it, then run the padded, swizzled,
sub-word, byte-unit and naive shapes under compute-sanitizer memcheck and racecheck.

    python3 tests/gpu/transpose/run.py [--quick] [--build-only] [--no-sanitizer]

Logs under $OUT (or build/transpose-test); the last line is `N passed, M failed`.
"""

import argparse
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
BUILD = ROOT / "build" / "transpose-test"
NVCC = os.environ.get("NVCC", "nvcc")
ARCH = os.environ.get("ARCH", "sm_90")
SANITIZED = (
    "tt_transpose_f32",
    "tt_f32_swizzle",
    "tt_transpose_u8",
    "tt_transpose_i16",
    "tt_transpose_rgb8",
    "tt_f32_naive",
    "tt_transpose_widen",
    "tt_transpose_clamp",
)

try:
    from assocgen import emit
    from assocgen.spec import load
except ImportError as e:
    sys.exit(f"error: {e}: install the generator first (pip install -e . from the repository root)")


def cases(spec) -> str:
    """The driver's table: a wrapper a transpose (its pointers as bytes) and its element size;
    with a lift, the input's size and alignment and the lift on the CPU (the spec's C)."""
    lines, rows = [], []
    for n, inst in enumerate(spec.instances):
        T, In = inst.type.c, inst.in_type.c
        lines.append(
            f"static cudaError_t call_{n}(const void *in, size_t ip, size_t is, size_t r, size_t c, size_t b, "
            f"void *out, size_t op, size_t os, cudaStream_t s)\n"
            f"{{\n    return {inst.public_name}((const {In} *)in, ip, is, r, c, b, ({T} *)out, op, os, NULL, 0, s);\n}}"
        )
        lift = "0, 1, NULL"
        if inst.op:
            body = "\n    ".join(inst.op.lift.splitlines())
            lines.append(
                f"static {T} lift_body_{n}({In} x, size_t i)\n{{\n    (void)i;\n    {body}\n}}\n"
                f"static void lift_{n}(const unsigned char *x, size_t i, unsigned char *y)\n{{\n"
                f"    {In} v;\n    memcpy(&v, x, sizeof v);\n    const {T} r = lift_body_{n}(v, i);\n"
                f"    memcpy(y, &r, sizeof r);\n}}"
            )
            lift = f"{inst.in_type.size}, alignof({In}), lift_{n}"
        rows.append(f'    {{"{inst.public_name}", {inst.type.size}, {inst.shape.tile}, call_{n}, {lift}}}')
    table = ",\n".join(rows)
    return "\n".join(lines) + f"\n\nstatic const Instance instances[] = {{\n{table},\n}};\n"


def build(jobs: int) -> Path:
    spec = load(HERE / "spec.toml")
    files = emit.render(spec, "tt.h")
    src = BUILD / "src"
    src.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (src / name).write_text(text)
    (src / "cases.inc").write_text(cases(spec))
    flags = ["-O3", f"-arch={ARCH}", "-std=c++17", "-Xcompiler", "-Wall,-Wextra", "-I", str(src)]
    sources = [src / n for n in files if n.endswith(".cu")] + [HERE / "driver.cu"]
    procs, objs = [], []
    for s in sources:
        obj = BUILD / (s.stem + ".o")
        objs.append(obj)
        procs.append(subprocess.Popen([NVCC, *flags, "-c", str(s), "-o", str(obj)], stderr=subprocess.PIPE, text=True))
        if len(procs) >= jobs:
            _wait(procs.pop(0))
    for p in procs:
        _wait(p)
    exe = BUILD / "transpose_test"
    subprocess.run([NVCC, f"-arch={ARCH}", "-o", str(exe), *map(str, objs)], check=True)
    return exe


def _wait(p):
    err = p.communicate()[1]
    if p.returncode or "warning" in err.lower():
        sys.exit(f"build: {' '.join(p.args)}\n{err}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--build-only", action="store_true")
    ap.add_argument("--no-sanitizer", action="store_true")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    args = ap.parse_args()
    out = Path(os.environ.get("OUT", BUILD))
    out.mkdir(parents=True, exist_ok=True)
    exe = build(args.jobs)
    if args.build_only:
        print(f"built {exe}")
        return 0
    rc = subprocess.run([str(exe)] + (["--quick"] if args.quick else [])).returncode
    if not args.no_sanitizer:
        for tool in ("memcheck", "racecheck"):
            for name in SANITIZED:
                r = subprocess.run(
                    ["compute-sanitizer", f"--tool={tool}", "--error-exitcode=3", str(exe), "--quick", "--only", name],
                    capture_output=True,
                    text=True,
                )
                (out / f"{tool}-{name}.log").write_text(r.stdout + r.stderr)
                summary = [ln for ln in (r.stdout + r.stderr).splitlines() if "SUMMARY" in ln or "passed," in ln]
                print(f"{tool:9s} {name:22s} rc={r.returncode} {' | '.join(summary)}")
                rc = rc or r.returncode
    return rc


if __name__ == "__main__":
    sys.exit(main())
