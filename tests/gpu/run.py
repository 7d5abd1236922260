#!/usr/bin/env python3
"""GPU test runner: generate the instance matrix of tests/matrix.toml (reduces, scans, segmented
scans and reduces, along rows and down columns; the nvcc matrix and golden tests use it too),
build them with a C++ driver that holds an independent CPU reference per operator, run every
instance on random data over the sizes below (segmented ones over several distributions of
segment lengths), then run a subset under compute-sanitizer (memcheck and racecheck).

    python3 tests/gpu/run.py            # everything (needs a GPU; on an H100 over 9 minutes past the build)
    python3 tests/gpu/run.py --quick    # small sizes only (on an H100: a 3-minute build, a 3-minute run)
    python3 tests/gpu/run.py --build-only   # generate and compile (no GPU needed)
    python3 tests/gpu/run.py --no-build --filter reduce   # a run in parts: the instances named so
    python3 tests/gpu/run.py --single-header   # one instance of each kernel shape (the sanitized
                                               # subset), built from one stb-style header
    python3 tests/gpu/run.py --ptx 75          # built as compute_75 PTX only (the pre-sm_80 paths),
                                               # JIT-compiled by the driver (build/gputest-ptx75)
    python3 tests/gpu/run.py --gencode arch=compute_80,code=compute_80 --gencode arch=compute_90,code=sm_90
                                               # other code targets (nvcc -gencode); a fat binary
    python3 tests/gpu/run.py --ptx 75 --build-only --dry-run   # the nvcc commands, nothing run

Logs go to $OUT (or build/gputest) as gputest.log; the last line is `N passed, M failed`.  The
driver's first line names the device and the code that runs (its PTX version, and the binary's
architecture: PTX 75 on sm_90 is compute_75 JIT-compiled for an H100).
"""

import argparse
import os
import subprocess
import sys
import tomllib
from functools import partial
from pathlib import Path
from typing import TextIO

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from family_run import driver_call, sanitize  # noqa: E402 - beside this file

try:
    from assocgen import emit, tuning
    from assocgen.operators import INTEGERS
    from assocgen.spec import parse
except ImportError as e:
    sys.exit(f"error: {e}: install the generator first (pip install -e . from the repository root)")

BUILD = ROOT / "build" / "gputest"
PREFIX = "t"
MATRIX = ROOT / "tests" / "matrix.toml"  # the instance matrix, shared with the CPU tests
NVCC = os.environ.get("NVCC", "nvcc")
ARCH = os.environ.get("ARCH", "sm_90")

SMALL = [0, 1, 2, 31, 32, 33, 1000, 4097, 12289, (1 << 20) + 7]
LARGE = [1 << 28]
PAST_2_31 = (1 << 31) + 17  # one run past 2^31 elements of a 1-byte type


# each kernel shape under memcheck and racecheck: reduce striped, blocked (non-commutative), a pair
# accumulator, a one-warp block, a multi-word shuffle; scans with 16-byte staging, a wide exclusive
# one, a one-warp block
SANITIZED = (
    "t_reduce_sum_f32",
    "t_mat2mul_b256_t4",
    "t_reduce_argmin_f64",
    "t_sum_f32_b32_t1",
    "t_reduce_mat3mul_mat3u",
    "t_scan_sum_f32",
    "t_exscan_mat2mul_mat2u",
    "t_scan_i32_b32_t3",
    "t_segscan_sum_f32",
    "t_exsegscan_mat2mul_mat2u_by_u8",
    "t_segscan_sum_i32_by_i32",  # by 4-byte keys, resident: head bits merged by shuffles
    "t_segreduce_sum_f32",
    "t_reduce_mat2mul_mat2u_by_i64",
    "t_segreduce_i32_b32_t3",
    "t_segreduce_i32_b32_t8",  # by offsets, resident: one launch to 128 tiles, bounds and carry kernels past
    "t_segreduce_mat2mul_mat2u",  # by offsets, spans of one element a lane, folded in lane order
    "t_rows_reduce_sum_f32",  # along rows: every group of lanes, words, several blocks a row
    "t_rows_reduce_mat2mul_mat2u",  # along rows, in column order
    "t_cols_reduce_sum_f32",  # down columns, chunks of rows
    "t_cols_reduce_mat2mul_mat2u",  # down columns, in row order
    "t_rows_scan_sum_f32",  # scans along rows: every group of lanes, a block a row, in place
    "t_rows_exscan_mat2mul_mat2u",  # exclusive, in column order
)


def spec_dict(prefix: str = PREFIX) -> dict:
    """The instance matrix of tests/matrix.toml as a spec with this prefix: the types and operators
    of the specs it names taken in, each sweep (lists of blocks and items) one instance a shape."""
    data = tomllib.loads(MATRIX.read_text())
    spec: dict = {"prefix": prefix, "type": [], "operator": []}
    for path in data.pop("user_operators_from"):
        taken = tomllib.loads((ROOT / path).read_text())
        spec["type"] += taken.get("type", [])
        spec["operator"] += taken.get("operator", [])
    for table, entries in data.items():
        spec[table] = [one for entry in entries for one in _shapes(entry)]
    return spec


def _shapes(entry: dict) -> list:
    """An entry of the matrix as spec entries: itself, or one a (block, items) of its sweep."""
    blocks, items = entry.get("block"), entry.get("items")
    if not isinstance(blocks, list) and not isinstance(items, list):
        return [entry]
    blocks = blocks if isinstance(blocks, list) else [blocks]
    items = items if isinstance(items, list) else [items]
    return [
        {**entry, "block": b, "items": t, "name": entry["name"].format(block=b, items=t)} for b in blocks for t in items
    ]


def case_expr(inst):
    """The driver's reference for an instance (test code may look at operator names)."""
    op, t = inst.op, inst.op.in_type
    if op.name in ("mat2mul", "mat3mul", "welford", "minmax"):
        return {
            "mat2mul": "Mat2Case{}",
            "mat3mul": "Mat3Case{}",
            "welford": "WelfordCase{}",
            "minmax": "MinMaxPairCase{}",
        }[op.name]
    if op.name in ("argmin", "argmax"):
        return f"ArgCase<{t.c}, {op.out_type.c}>{{{str(op.name == 'argmin').lower()}}}"
    if t.name in INTEGERS:
        tag = {"sum": "sum", "prod": "prod", "min": "min", "max": "max", "and": "band", "or": "bor", "xor": "bxor"}
        return f"IntCase<{t.c}>{{IntOp::{tag[op.name]}}}"
    if op.name in ("min", "max"):
        return f"FloatMinMaxCase<{t.c}>{{{str(op.name == 'min').lower()}}}"
    return f"FloatCase<{t.c}>{{FloatCase<{t.c}>::{op.name}}}"


BIG_SCANS = {
    f"{PREFIX}_scan_sum_f32",
    f"{PREFIX}_exscan_sum_f32",
    f"{PREFIX}_scan_sum_i32",
    f"{PREFIX}_scan_max_u8",
    f"{PREFIX}_scan_mat2mul_mat2u",
    f"{PREFIX}_exscan_mat2mul_mat2u",
    f"{PREFIX}_scan_ksum_f64",
    f"{PREFIX}_scan_argmin_f32",
    f"{PREFIX}_exscan_welford_f32",
    f"{PREFIX}_segscan_sum_f32",
    f"{PREFIX}_exsegscan_mat2mul_mat2u_by_u8",
    f"{PREFIX}_segreduce_sum_f32",
    f"{PREFIX}_reduce_sum_i32_by_i32",
}


def sizes_for(inst):
    """Every size up to 2^28 for the main reduce instances and a spread of scans; sweeps stay small;
    a scan of several shapes by n also just below, at and above each of its thresholds; a segmented
    reduce by offsets at its thresholds too, at the most tiles of each shape's one launch and one
    element past, at the spans' size limit and one past, where they begin to split long segments
    and one past, and at each size where the spans' pick or their launch changes and one past (up
    to 2^25; past 2^21 only without --quick)."""
    sizes = tuning.size_shapes(inst)
    if sizes and inst.primitive in ("scan", "exscan"):
        return "edges"
    if inst.primitive == "reduce":
        return "sizes" if inst.public_name.startswith(f"{PREFIX}_reduce_") else "small"
    listed = "sizes" if inst.public_name in BIG_SCANS else "small"
    more = []
    for upto, shape in sizes or [(None, inst)]:
        if upto:
            more += [upto - 1, upto, upto + 1]
        s = tuning.scan_shape(shape)
        last = s.block * s.one_launch_totals * s.tile
        if last and (upto is None or last < upto):
            more += [last, last + 1]
        if s.seg_spans:  # the spans' size limit (spans at it, tiles past it) and their split's
            sp = s.seg_spans
            more += [sp.max_n, sp.max_n + 1, sp.split_n, sp.split_n + 1]
            # where the average counts less, where a block size's entry is passed over, and where
            # the kernels let the next kernel in at their start (PDL)
            for m in [m for m, _ in sp.shifts] + [e[2] for e in sp.blocks if e[2]] + [sp.wait_n, sp.block_wait_n]:
                more += [m, m + 1]
    more = sorted({m for m in more if m <= 1 << 25})
    if not more:
        return listed
    return f"with_sizes({listed}, quick, {{{', '.join(f'(size_t){m}' for m in more)}}})"


def write_main(spec, header):
    lines = [f'#include "{header}"']
    for t in spec.user_types:
        lines.append(f"#define HAVE_{t.name.upper()} 1")
    lines += [
        '#include "driver.cuh"',
        "",
        "static __global__ void ag_code_probe(void) {}",
        "",
        "int main(int argc, char **argv) {",
        "    bool quick = false, big = true;",
        "    const char *filter = nullptr;",
        "    for (int i = 1; i < argc; ++i) {",
        '        if (!std::strcmp(argv[i], "--quick")) quick = true;',
        '        else if (!std::strcmp(argv[i], "--no-big")) big = false;',
        '        else if (!std::strcmp(argv[i], "--exact")) g_exact = true;',
        '        else if (!std::strcmp(argv[i], "--filter") && i + 1 < argc) filter = argv[++i];',
        '        else if (!std::strcmp(argv[i], "--from") && i + 1 < argc) g_from = std::strtoull(argv[++i], nullptr, 10);',
        "    }",
        f"    std::vector<size_t> sizes = {{{', '.join(f'(size_t){n}' for n in SMALL)}}};",
        "    const std::vector<size_t> small = sizes;  // block/tile sweeps: small sizes only",
        f"    if (!quick) for (size_t n : {{{', '.join(f'(size_t){n}' for n in LARGE)}}}) sizes.push_back(n);",
        "    // the thresholds of the scans of several shapes by n: just below, at and above each",
        "    std::vector<size_t> edges = sizes;",
        f"    for (size_t t : {{{', '.join(f'(size_t){t}' for t, _, _ in tuning.SCAN_SIZE_SHAPES)}}})",
        "        if (!quick || t <= ((size_t)1 << 21))",
        "            for (size_t d : {t - 1, t, t + 1}) edges.push_back(d);",
        "    // a list and a few more sizes (past 2^21 only without --quick)",
        "    auto with_sizes = [](std::vector<size_t> v, bool q, std::initializer_list<size_t> more) {",
        "        for (size_t m : more)",
        "            if (!q || m <= ((size_t)1 << 21)) v.push_back(m);",
        "        return v;",
        "    };",
        "    Stats st;",
        "    cudaDeviceProp prop;",
        "    CK(cudaGetDeviceProperties(&prop, 0));",
        "    cudaFuncAttributes code;  // this file's code target, as the libraries' (the same flags)",
        "    CK(cudaFuncGetAttributes(&code, ag_code_probe));",
        '    std::printf("device: %s, %d SMs; code: PTX %d, binary sm_%d\\n", prop.name, prop.multiProcessorCount,',
        "                code.ptxVersion, code.binaryVersion);",
    ]
    for inst in spec.instances:
        lines.append(f'    if (!filter || std::strstr("{inst.public_name}", filter))')
        lines.append("        " + driver_call(inst, inst.public_name, case_expr(inst), partial(sizes_for, inst)))
    # one workspace for several functions in turn (the header's workspace contract)
    shared = [f"{PREFIX}_{n}_sum_f32" for n in ("rows_reduce", "cols_reduce", "segreduce", "reduce")]
    if all(n in {inst.public_name for inst in spec.instances} for n in shared):
        fns = ", ".join(f'{{"{n}", {n}_workspace_bytes, {n}}}' for n in shared)
        lines.append('    if (!filter || std::strstr("shared workspace", filter))')
        lines.append(f"        run_shared_workspace({fns}, st);")
    lines += [
        f'    if (!filter || std::strstr("{PREFIX}_exscan_sum_i32", filter))',
        f'        run_exscan_init(ExScanFn<int32_t, int32_t, int32_t>{{"{PREFIX}_exscan_sum_i32 (init 12345)", '
        f"{PREFIX}_exscan_sum_i32_workspace_bytes, {PREFIX}_exscan_sum_i32}}, (int32_t)12345, small, st);",
        f'    if (!filter || std::strstr("{PREFIX}_exsegscan_sum_i32_by_i32", filter))',
        f'        run_exsegscan_init(ExSegScanFn<int32_t, int32_t, int32_t, int32_t>{{"{PREFIX}_exsegscan_sum_i32_by_i32 (init -7)", '
        f"{PREFIX}_exsegscan_sum_i32_by_i32_workspace_bytes, {PREFIX}_exsegscan_sum_i32_by_i32, true}}, (int32_t)-7, small, st);",
    ]
    # past 2^31 elements of a 1-byte type
    lines += [
        "    if (!quick && big) {",
        f"        std::vector<size_t> huge = {{(size_t){PAST_2_31}}};",
        f'        if (!filter || std::strstr("{PREFIX}_reduce_sum_u8", filter))',
        f'            run_reduce(ReduceFn<uint8_t, uint8_t>{{"{PREFIX}_reduce_sum_u8", {PREFIX}_reduce_sum_u8_workspace_bytes, '
        f"{PREFIX}_reduce_sum_u8}}, IntCase<uint8_t>{{IntOp::sum}}, huge, st);",
        f'        if (!filter || std::strstr("{PREFIX}_reduce_max_i8", filter))',
        f'            run_reduce(ReduceFn<int8_t, int8_t>{{"{PREFIX}_reduce_max_i8", {PREFIX}_reduce_max_i8_workspace_bytes, '
        f"{PREFIX}_reduce_max_i8}}, IntCase<int8_t>{{IntOp::max}}, huge, st);",
        "    }",
        '    std::printf("%d passed, %d failed\\n", st.passed, st.failed);',
        "    return st.failed ? 1 : 0;",
        "}",
        "",
    ]
    (BUILD / "main.cu").write_text("\n".join(lines))


BY_NAME = {f"{PREFIX}_{n}" for n in ("exscan_sum_i32", "exsegscan_sum_i32_by_i32", "reduce_sum_u8", "reduce_max_i8")}


def code_target(gencode: list[str], ptx: int | None) -> tuple[str, str]:
    """nvcc's code target flags and the build folder's suffix: -arch=$ARCH (sm_90) and none unless
    given; --ptx NN is -gencode arch=compute_NN,code=compute_NN (PTX only, JIT-compiled at load)."""
    gencode = list(gencode) + ([f"arch=compute_{ptx},code=compute_{ptx}"] if ptx else [])
    if not gencode:
        return f"-arch={ARCH}", ""
    flags = " ".join(f"-gencode {g}" for g in gencode)
    if ptx and len(gencode) == 1:
        return flags, f"-ptx{ptx}"
    codes = [g.split("code=")[-1] for g in gencode]
    return flags, "-" + "-".join(c.replace(",", "_").strip("[]") for c in codes)


def build(jobs, single_header=False, only=None, target="", dry_run=False):
    spec = parse(spec_dict(), "tests/gpu/run.py")
    header = f"{PREFIX}.h"
    if single_header:  # the kernels' namespaced form: one instance of each shape
        # (and those that write_main calls by name: an initial value, past 2^31)
        named = set(SANITIZED) | BY_NAME
        spec.instances = [inst for inst in spec.instances if inst.public_name in named]
        assert len(spec.instances) == len(named)
    if only:  # the instances whose names hold `only` (and those write_main calls by name)
        words = [w for w in only.split(",") if w]
        spec.instances = [
            i for i in spec.instances if any(w in i.public_name for w in words) or i.public_name in BY_NAME
        ]
    files = emit.render(spec, header, single_header=single_header)
    emit.write(emit.targets(files, BUILD / "gen", BUILD / "gen"), BUILD / "gen", header)
    write_main(spec, header)
    (BUILD / "driver.cuh").write_bytes((ROOT / "tests/gpu/driver.cuh").read_bytes())
    flags = f"-O3 {target or '-arch=' + ARCH} -std=c++17"
    nj = [
        f"rule cu\n  command = {NVCC} {flags} -Igen -c $in -o $out\n",
        f"rule exe\n  command = {NVCC} {flags} -Igen -Xcompiler -fopenmp -o $out $in -lgomp\n",
    ]
    if single_header:
        (BUILD / "gen" / "impl.cu").write_text(f'#define {PREFIX.upper()}_IMPLEMENTATION\n#include "{header}"\n')
        objs = ["gen/impl.o"]
        nj.append(f"build gen/impl.o: cu gen/impl.cu | gen/{header}\n")
    else:
        objs = [f"gen/{inst.public_name}.o" for inst in spec.instances]
        for inst in spec.instances:
            nj.append(f"build gen/{inst.public_name}.o: cu gen/{inst.public_name}.cu\n")
    nj.append(f"build test_main: exe main.cu {' '.join(objs)} | driver.cuh gen/{header}\n")
    (BUILD / "build.ninja").write_text("".join(nj))
    if dry_run:  # the commands ninja would run: the first two and the last (the driver's link)
        cmds = subprocess.run(["ninja", "-C", str(BUILD), "-t", "commands"], check=True, capture_output=True, text=True)
        lines = cmds.stdout.splitlines()
        shown = lines if len(lines) <= 3 else [*lines[:2], f"... ({len(lines)} commands)", lines[-1]]
        print("\n".join(shown), flush=True)
        return spec
    subprocess.run(["ninja", "-C", str(BUILD), f"-j{jobs}"], check=True)
    return spec


def _run_logged(cmd: list, log: TextIO) -> int:
    """Run the driver: its output to the log as it comes (a run cut short keeps what it did), its
    lines of one instance (not the indented detail) printed too."""
    print("$", " ".join(cmd), flush=True)
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as p:
        assert p.stdout is not None
        for line in p.stdout:
            log.write(line)
            log.flush()
            if not line.startswith("  "):
                print(line, end="", flush=True)
    return p.returncode


def _sanitize(exe: str, args, out: Path) -> int:
    """The subset (SANITIZED, narrowed by --only, --filter and --shapes) under each of --tools, on
    its quick cases with exact allocations; logs under `out`."""
    names = [
        flt
        for flt in SANITIZED
        if (not args.only or any(w and w in flt for w in args.only.split(",")))
        and (not args.filter or args.filter in flt)
        and (not args.shapes or flt in args.shapes.split(","))
    ]
    exact = ["--quick", "--exact", "--filter"]
    return sanitize(Path(exe), names, out, args.jobs, args.tools.split(","), lambda name: [*exact, name])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--build-only", action="store_true")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--no-sanitizer", action="store_true")
    ap.add_argument("--no-build", action="store_true", help="run the test_main already built (carried)")
    ap.add_argument(
        "--single-header",
        action="store_true",
        help="one instance of each kernel shape, from one stb-style header (in build/gputest-single)",
    )
    ap.add_argument(
        "--gencode",
        action="append",
        default=[],
        help="nvcc -gencode ARG instead of -arch=$ARCH (repeatable: a fat binary), e.g. arch=compute_80,code=compute_80",
    )
    ap.add_argument("--ptx", type=int, help="build as compute_NN PTX only (--gencode arch=compute_NN,code=compute_NN)")
    ap.add_argument(
        "--dry-run", action="store_true", help="generate and print the build's commands; build and run nothing"
    )
    ap.add_argument("--only", help="build the instances whose names hold this, or one of A,B,... (a quicker build)")
    ap.add_argument(
        "--filter", help="run only the instances whose names hold this (with --no-build, a full run in parts)"
    )
    ap.add_argument("--tools", default="memcheck,racecheck", help="the sanitizer's tools (default: %(default)s)")
    ap.add_argument("--shapes", help="sanitize these of the subset only, A,B,... (default: all of it)")
    ap.add_argument("--sanitizer-only", action="store_true", help="skip the plain run (e.g. a sanitizer run in parts)")
    args = ap.parse_args()
    global BUILD
    target, suffix = code_target(args.gencode, args.ptx)
    BUILD = ROOT / "build" / (("gputest-single" if args.single_header else "gputest") + suffix)
    if not args.no_build:
        spec = build(args.jobs, args.single_header, args.only, target, args.dry_run)
        print(f"{'generated' if args.dry_run else 'built'} {len(spec.instances)} instances into {BUILD}", flush=True)
    if args.build_only or args.dry_run:
        return 0
    if target:  # PTX is JIT-compiled at load: keep the kernels so compiled (the sanitizer runs reload them)
        os.environ.setdefault("CUDA_CACHE_MAXSIZE", str(4 << 30))
    out = Path(os.environ.get("OUT", BUILD))
    out.mkdir(parents=True, exist_ok=True)
    exe = str(BUILD / "test_main")
    rc = 0
    with open(out / "gputest.log", "w") as log:
        cmd = [exe] + (["--quick"] if args.quick else []) + (["--filter", args.filter] if args.filter else [])
        if not args.sanitizer_only:
            rc |= _run_logged(cmd, log)
        if not args.no_sanitizer:
            rc |= _sanitize(exe, args, out)
    return rc


if __name__ == "__main__":
    sys.exit(main())
