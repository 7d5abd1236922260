#!/usr/bin/env python3
"""GPU test of the generated transposes: generate tests/gpu/transpose/spec.toml, build it with
driver.cu (a CPU transpose checks every output byte), run it, then run the padded, swizzled,
sub-word, byte-unit and naive shapes under compute-sanitizer memcheck and racecheck.

    python3 tests/gpu/transpose/run.py [--quick] [--build-only] [--no-sanitizer]

Logs under $OUT (or build/transpose-test); the last line is `N passed, M failed`.
"""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import family_run  # noqa: E402 - tests/gpu, beside this folder

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


if __name__ == "__main__":
    sys.exit(family_run.main(HERE, "transpose", "tt.h", cases, SANITIZED))
