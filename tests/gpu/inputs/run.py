#!/usr/bin/env python3
"""GPU test of operators of several input arrays: generate tests/gpu/inputs/spec.toml, build it
with driver.cu, which runs each instance through tests/gpu/driver.cuh (the main GPU test's
runners: random data, odd sizes, n = 0 and 1, every segment distribution, a second call for the
same bits, the workspace counter, an input off 16-byte words), then run one instance of each
kernel shape under compute-sanitizer memcheck and racecheck.

The runners hand a function one array of records (x0, x1, ...); the wrapper written here splits
it on the device into one exact-size array an input (one element in where the records' pointer
is, so that the unaligned paths run) and calls the generated function.  The reference is a CPU
fold with the spec's own C (identity, combine, lift) compiled for the host: exact for the
integer and the non-commutative operators, a bound for the float dot product.

    python3 tests/gpu/inputs/run.py [--quick] [--build-only] [--no-sanitizer]

Logs under $OUT (or build/inputs-test); the driver's last line is `N passed, M failed`.
"""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import family_run  # noqa: E402 - tests/gpu, beside this folder

# each kernel shape the inputs reach: striped (one size, mixed sizes), ordered (blocked through
# shared memory, one word a lane), a scan of words, segmented by flags and keys, by offsets, by key
SANITIZED = (
    "mi_reduce_dot_f32",
    "mi_reduce_masked_i64",
    "mi_reduce_wsum_u32",
    "mi_reduce_affine8_u32",
    "mi_affine_t2",
    "mi_exscan_affine8_u32",
    "mi_scan_affine_u32",
    "mi_scan_wdist_i32",
    "mi_exsegscan_affine_u32",
    "mi_segscan_affine8_u32_by_i32",
    "mi_segreduce_masked_i64",
    "mi_reduce_affine_u32_by_u16",
)

# the instances run up to 2^28 elements (the rest at the small sizes), and past 2^31
LARGE = {"mi_reduce_dot_f32", "mi_reduce_affine8_u32", "mi_scan_idot_i32", "mi_exscan_affine_u32"}
HUGE = "mi_reduce_affine8_u32"


def _operator(op) -> str:
    """The records, the split, the host copy of the operator and the runners' case for `op`."""
    n, A = op.name, op.acc_type.c
    xs = [f"x{k}" for k in range(len(op.inputs))]
    fields = "".join(f" {t.c} {x};" for t, x in zip(op.inputs, xs, strict=True))
    ptrs = ", ".join(f"{t.c} *{x}" for t, x in zip(op.inputs, xs, strict=True))
    moves = "".join(f" {x}[i] = r[i].{x};" for x in xs)
    widest = max(t.size for t in op.inputs)
    narrow = any(t.size < widest for t in op.inputs)
    out = [
        f"// ---- {n}: {op.summary}",
        f"struct In_{n} {{{fields} }};",
        f"__global__ void split_{n}(const In_{n} *r, size_t n, {ptrs})\n{{\n"
        f"    for (size_t i = first_index(); i < n; i += grid_stride()) {{{moves} }}\n}}",
        # one exact array an input, one element in when the records are (the unaligned paths); a
        # call on a capturing stream reuses the split of the direct call before it (same records):
        # allocations and the split are not captured
        f"struct Soa_{n} {{\n"
        + "".join(f"    {t.c} *{x} = nullptr;\n" for t, x in zip(op.inputs, xs, strict=True))
        + f"    const In_{n} *r = nullptr;\n    size_t n = 0;\n"
        + f"    cudaError_t make(const In_{n} *r, size_t n, cudaStream_t s)\n    {{\n"
        "        cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;\n"
        "        cudaError_t e = cudaStreamIsCapturing(s, &cs);\n"
        "        if (e != cudaSuccess || (cs == cudaStreamCaptureStatusActive && r == this->r && n == this->n))\n"
        "            return e;\n"
        "        cudaDeviceSynchronize();\n"
        + "".join(f"        exact_free({x});\n" for x in xs)
        + "        this->r = r, this->n = n;\n"
        "        const size_t off = ((uintptr_t)r & 255) ? 1 : 0;\n"
        # unaligned, at an odd n only the narrower inputs are one element in (the wider ones'
        # words then load while the narrower ones go element by element)
        + ("        const size_t off_wide = off && !(n & 1);\n" if narrow else "")
        + "".join(
            f"        if (exact_alloc(&{x}, n, {'off_wide' if narrow and t.size == widest else 'off'}))"
            " return cudaErrorMemoryAllocation;\n"
            for t, x in zip(op.inputs, xs, strict=True)
        )
        + f"        if (n) split_{n}<<<split_blocks(n), 256>>>(r, n, {', '.join(xs)});\n"
        "        return cudaGetLastError();\n    }\n};",
        family_run.host_fn(
            A,
            f"h_lift_{n}",
            ", ".join(f"{t.c} {x}" for t, x in zip(op.inputs, xs, strict=True)) + ", size_t i",
            f"(void)i;\n{op.lift}",
        ),
    ]
    draws = "".join(f" v.{x} = draw<{t.c}>(r);" for t, x in zip(op.inputs, xs, strict=True))
    gen = (
        f"    void gen(std::vector<In_{n}> &h, uint64_t seed) const\n"
        f"    {{\n        fill(h, seed, [](Rng &r, size_t) {{ In_{n} v;{draws} return v; }});\n    }}\n"
    )
    lift = f"h_lift_{n}({', '.join(f'x.{x}' for x in xs)}, i)"
    if op.acc_type.is_float:  # a sum of lifts, against a long double sum and a bound
        out.append(
            f"struct Case_{n} {{\n{gen}"
            f"    FloatCase<{A}> f{{FloatCase<{A}>::sum}};\n"
            f"    FloatRef start() const {{ return f.start(); }}\n"
            f"    FloatRef step(FloatRef r, const In_{n} &x, size_t i) const {{ return f.step(r, {lift}, i); }}\n"
            f"    Result same({A} got, FloatRef want) const {{ return f.same(got, want); }}\n}};"
        )
    else:  # exact: the spec's combine and lift in order
        out.append(family_run.host_fn(A, f"h_identity_{n}", "void", op.identity))
        out.append(family_run.host_fn(A, f"h_combine_{n}", f"{A} a, {A} b", op.combine))
        out.append(
            f"struct Case_{n} {{\n{gen}"
            f"    {A} start() const {{ return h_identity_{n}(); }}\n"
            f"    {A} step({A} r, const In_{n} &x, size_t i) const {{ return h_combine_{n}(r, {lift}); }}\n"
            f"    Result same({A} got, {A} want) const {{ return exact(got, want); }}\n}};"
        )
    return "\n".join(out) + "\n"


def _runner(inst) -> tuple:
    """The wrapper from records to the generated function, and the runner's call."""
    op, name, prim = inst.op, inst.public_name, inst.primitive
    n, A, Out = op.name, op.acc_type.c, op.out_type.c
    In = f"In_{n}"
    ptrs = ", ".join(f"v.x{k}" for k in range(len(op.inputs)))
    K = inst.index.c if inst.index else ""
    H = K or "uint8_t"
    params, args = {
        "reduce": (f"size_t n, {Out} *o", "n, o"),
        "scan": (f"size_t n, {Out} *o", "n, o"),
        "exscan": (f"size_t n, {Out} *o, const {A} *init", "n, o, init"),
        "segscan": (f"const {H} *h, size_t n, {Out} *o", "h, n, o"),
        "exsegscan": (f"const {H} *h, size_t n, {Out} *o, const {A} *init", "h, n, o, init"),
        "segreduce": (f"size_t n, const {K} *off, size_t m, {Out} *o", "n, off, m, o"),
        "reduce_by_key": (f"const {K} *k, size_t n, {Out} *o, {K} *uk, size_t *cnt", "k, n, o, uk, cnt"),
    }[prim]
    wrapper = (
        f"static cudaError_t w_{name}(const {In} *r, {params}, void *w, size_t wb, cudaStream_t s)\n{{\n"
        f"    static Soa_{n} v;  // kept for a captured call (freed at the next split)\n"
        "    cudaError_t e = v.make(r, n, s);\n"
        f"    return e != cudaSuccess ? e : {name}({ptrs}, {args}, w, wb, s);\n}}\n"
    )
    sizes = "sizes" if name in LARGE else "small"
    only = f'    if (!a.only || std::strstr("{name}", a.only))\n'
    call = only + f"        {family_run.driver_call(inst, f'w_{name}', f'Case_{n}{{}}', lambda: sizes, In=In)}\n"
    if name == HUGE:
        huge = family_run.driver_call(inst, f"w_{name}", f"Case_{n}{{}}", lambda: "huge", In=In)
        call += f'    if (!a.quick && (!a.only || std::strstr("{name}", a.only)))\n        {huge}\n'
    return wrapper, call


def cases(spec) -> str:
    ops = []
    for inst in spec.instances:
        if inst.op.name not in [o.name for o in ops]:
            ops.append(inst.op)
    wrappers, calls = zip(*(_runner(inst) for inst in spec.instances), strict=True)
    return (
        "".join(map(_operator, ops))
        + "\n"
        + "\n".join(wrappers)
        + "\nstatic void run_all(const Args &a, const std::vector<size_t> &sizes, const std::vector<size_t> &small,"
        " const std::vector<size_t> &huge, Stats &st)\n{\n" + "".join(calls) + "}\n"
    )


if __name__ == "__main__":
    sys.exit(family_run.main(HERE, "inputs", "mi.h", cases, SANITIZED, openmp=True))
