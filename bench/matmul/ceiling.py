"""Writes ceiling.cu: for each builtin semiring of bench/matmul/spec.toml, a kernel that applies
its step, add(c, mul(a, b)), as generated (semirings.py), over 16 accumulators a thread, so the
step's own instruction throughput is the bound the multiply is measured against (and, for the
semirings with a fast step, that step's: the bound of the tiles it serves).  Each step's a
is another accumulator and b changes every round (a float: + 1; an integer: a xorshift), so that
the compiler can neither hoist a product nor fold the rounds into a closed form.

    python3 bench/matmul/ceiling.py OUT.cu
"""

import sys

from assocgen.semirings import builtin_semiring

CASES = [(s, t) for s in ("plus_times", "min_plus", "max_plus", "max_min", "min_max") for t in ("f32", "i32")]
CASES += [("plus_times", "f64"), ("min_plus", "f64"), ("or_and", "u32")]
# a semiring's fast step (semirings.py), the bound of the tiles it serves: "<name> <type> fast"
FAST = [("min_plus", "i32"), ("max_plus", "i32")]


def kernel(n, sr, step) -> str:
    C = sr.c_type.c
    nudge = f"b = b + ({C})1;" if sr.c_type.is_float else "b ^= b << 13;\n        b ^= b >> 17;"
    return f"""
static __device__ __forceinline__ {C} step_{n}({C} c, {C} a, {C} b)
{{
    {step}
}}

__global__ void __launch_bounds__(256) ceiling_{n}(const {C} *in, {C} *out, int rounds)
{{
    {C} c[16], b = in[threadIdx.x % 32] + ({C})1;
    for (int i = 0; i < 16; ++i)
        c[i] = in[(threadIdx.x + i) % 64];
    for (int r = 0; r < rounds; ++r) {{
#pragma unroll
        for (int i = 0; i < 16; ++i)
            c[i] = step_{n}(c[i], c[(i + 5) & 15], b);
        {nudge}
    }}
    {C} s = c[0];
    for (int i = 1; i < 16; ++i)
        s = (s == c[i]) ? s : c[i];
    if (s == ({C})12345)
        out[0] = s;                     /* keeps the steps; never true */
}}
"""


def main():
    parts = ["#include <math.h>\n#include <stdint.h>\n#include <cuda_runtime.h>\n"]
    table = []
    cases = [(s, t, "") for s, t in CASES] + [(s, t, " fast") for s, t in FAST]
    for n, (s, t, fast) in enumerate(cases):
        sr = builtin_semiring(s, t)
        parts.append(kernel(n, sr, sr.fast_step if fast else sr.step))
        table.append(f'    {{"{s} {t}{fast}", {sr.c_type.size}, (void *)ceiling_{n}}}')
    parts.append("struct Ceiling { const char *name; size_t size; void *kernel; };\n")
    parts.append("static const Ceiling ceilings[] = {\n" + ",\n".join(table) + ",\n};\n")
    with open(sys.argv[1], "w") as f:
        f.write("".join(parts))


if __name__ == "__main__":
    main()
