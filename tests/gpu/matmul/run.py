"""GPU test of the generated matrix multiplies: generate tests/gpu/matmul/spec.toml, build it with
driver.cu (a CPU fold of every C element, in k order, with the spec's own semiring C), run it,
then one shape of each kernel kind under compute-sanitizer memcheck and racecheck.

    python3 tests/gpu/matmul/run.py [--quick] [--no-sanitizer]

Logs under $OUT (or build/matmul-test); the last line is `N passed, M failed`.
"""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import family_run  # noqa: E402 - tests/gpu, beside this folder

SANITIZED = (
    "mt_matmul_plus_times_f32",  # tiles in 16-byte words
    "mt_matmul_min_plus_i32",  # the fast step where the block agrees (__syncthreads_and)
    "mt_matmul_min_plus_i32_witness",
    "mt_matmul_count_u8_tn",
    "mt_matmul_or_and_u8",  # two runs of one element a thread
    "mt_pt_b64x32x16_t4x2",
    "mt_pt_f32_async3_tn",  # cp.async: both tiles in 16-byte words
    "mt_pt_f32_async4_tt",  # B element by element into its transposed tile
    "mt_mp_i32_async3",  # the fast step, checked in shared memory
    "mt_mp_i32_async2_witness",
    "mt_mp_f32_async3_one_warp",
    "mt_mp_f32_w64x32",
)


def cases(spec) -> str:
    """The driver's table: a wrapper a multiply (pointers as void), the semiring on the CPU (the
    spec's C), the element sizes and layout, and a reference that instantiates the CPU fold."""
    lines, rows = [], []
    for n, inst in enumerate(spec.instances):
        sr = inst.semiring
        A, B, C = sr.a_type.c, sr.b_type.c, sr.c_type.c
        w = ", w, ldw" if inst.witness else ""
        lines.append(
            f"static {C} zero_{n}(void)\n{{\n    {C} r = {sr.zero};\n    return r;\n}}\n"
            f"static {C} add_{n}({C} x, {C} y)\n{{\n    {sr.add}\n}}\n"
            f"static {C} mul_{n}({A} a, {B} b)\n{{\n    {sr.mul}\n}}\n"
            f"static cudaError_t call_{n}(const void *a, size_t lda, const void *b, size_t ldb, size_t m, size_t n, "
            f"size_t k, int acc, void *c, size_t ldc, int32_t *w, size_t ldw, void *work, size_t work_bytes, "
            f"cudaStream_t s)\n{{\n"
            + ("" if inst.witness else "    (void)w;\n    (void)ldw;\n")
            + f"    return {inst.public_name}((const {A} *)a, lda, (const {B} *)b, ldb, m, n, k, acc, ({C} *)c, "
            f"ldc{w}, work, work_bytes, s);\n}}\n"
            f"static void ref_{n}(const void *a, size_t lda, const void *b, size_t ldb, size_t m, size_t n, size_t k, "
            f"int acc, void *c, size_t ldc, int32_t *w, size_t ldw)\n{{\n"
            f"    ref_mm<{A}, {B}, {C}>(zero_{n}, add_{n}, mul_{n}, {str(inst.layout[0] == 't').lower()}, "
            f"{str(inst.layout[1] == 't').lower()}, (const {A} *)a, lda, (const {B} *)b, ldb, m, n, k, acc, ({C} *)c, "
            f"ldc, w, ldw);\n}}\n"
            f"static void gen_{n}(void *p, size_t count, int which)\n{{\n"
            f"    if (which == 0)\n        fill<{A}>(({A} *)p, count, {'zero_%d()' % n if A == C else '0'});\n"
            f"    else if (which == 1)\n        fill<{B}>(({B} *)p, count, {'zero_%d()' % n if B == C else '0'});\n"
            f"    else\n        fill<{C}>(({C} *)p, count, zero_{n}());\n}}"
        )
        rows.append(
            f'    {{"{inst.public_name}", {sr.a_type.size}, {sr.b_type.size}, {sr.c_type.size}, '
            f"{str(inst.layout[0] == 't').lower()}, {str(inst.layout[1] == 't').lower()}, "
            f"{str(inst.witness).lower()}, call_{n}, ref_{n}, gen_{n}, {inst.public_name}_workspace_bytes}}"
        )
    return "\n".join(lines) + "\n\nstatic const Instance instances[] = {\n" + ",\n".join(rows) + ",\n};\n"


if __name__ == "__main__":
    sys.exit(family_run.main(HERE, "matmul", "mt.h", cases, SANITIZED))
