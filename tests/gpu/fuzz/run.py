#!/usr/bin/env python3
"""GPU fuzzer: random associative operators whose results are exact, drawn from a small grammar
(affine maps modulo 2^32 or 2^64, max-plus matrices over integers, (min, max, count) tuples lifted
from integers, with or without the element's index, products of permutations), each through every
family that takes a user operator (reduces and scans in a random or the default shape, segmented
scans by flags and by keys, segmented reduces by offsets, reduces by key, along rows, down
columns), at random sizes around every threshold its shape has (the tile, the sized shapes'
picks), against a CPU fold with the spec's own C, bit for bit.  The main GPU test's runners
(tests/gpu/driver.cuh) add n = 0 and 1, every segment distribution, inputs off 16-byte words,
odd pitches, and a second call for the same bits; one instance of each operator runs under
compute-sanitizer memcheck and racecheck.

    python3 tests/gpu/fuzz/run.py                     # seed 1, 6 operators (the GPU script's run)
    python3 tests/gpu/fuzz/run.py --seed 7 --ops 20   # another draw; --build-only needs no GPU
    python3 tests/gpu/fuzz/run.py --spec-only         # print the drawn spec and stop

Logs under $OUT (or build/fuzz-test); a failure prints the seed, which redraws the same spec.
"""

import argparse
import copy
import os
import random
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import family_run  # noqa: E402 - tests/gpu, beside this folder

from assocgen import tuning  # noqa: E402
from assocgen.spec import SpecError, parse  # noqa: E402

PREFIX = "fz"
NEG = -(1 << 28)  # max-plus's -infinity: far below any sum the inputs reach, never overflowing
INDEX_TYPES = ["i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"]
OFFSET_TYPES = ["i32", "i64", "u32", "u64"]  # offsets hold n (up to 2^21 here); keys may wrap


def _affine(k: int, rng: random.Random) -> tuple:
    """x -> a x + b, modulo 2^32 or 2^64, composed in order: not commutative."""
    w = rng.choice([32, 64])
    T, U = f"aff{k}", f"uint{w}_t"
    types = [{"name": T, "size": w // 4, "c": f"typedef struct {{ {U} a, b; }} {T};"}]
    op = {
        "name": f"affine{k}",
        "type": T,
        "identity": "{1u, 0u}",
        "commutative": False,
        "combine_body": f"{T} r; r.a = b.a * a.a; r.b = b.a * a.b + b.b; return r;",
    }
    return types, op, f"{T} v; v.a = ({U})r.next(); v.b = ({U})r.next(); return v;"


def _maxplus(k: int, rng: random.Random) -> tuple:
    """m x m matrices over (max, +) of 32-bit integers: products stay far from overflow."""
    m = rng.choice([2, 3])
    T = f"mp{k}"
    types = [{"name": T, "size": 4 * m * m, "c": f"typedef struct {{ int32_t e[{m * m}]; }} {T};"}]
    ident = ", ".join("0" if i == j else str(NEG) for i in range(m) for j in range(m))
    body = (
        f"{T} r;\nfor (int i = 0; i < {m}; ++i)\n    for (int j = 0; j < {m}; ++j) {{\n"
        f"        int32_t best = a.e[i * {m}] + b.e[j];\n"
        f"        for (int l = 1; l < {m}; ++l)\n"
        f"            best = a.e[i * {m} + l] + b.e[l * {m} + j] > best ? a.e[i * {m} + l] + b.e[l * {m} + j] : best;\n"
        f"        r.e[i * {m} + j] = best;\n    }}\nreturn r;"
    )
    op = {"name": f"maxplus{k}", "type": T, "identity": f"{{{{{ident}}}}}", "commutative": False, "combine_body": body}
    draw = f"{T} v; for (int q = 0; q < {m * m}; ++q) v.e[q] = (int32_t)(r.next() % 101) - 50; return v;"
    return types, op, draw


def _range(k: int, rng: random.Random) -> tuple:
    """(min, max, count) of 32-bit integers, lifted from each element; the count may weigh each
    element by its index (the lift reads i): commutative."""
    T = f"rng{k}"
    types = [{"name": T, "size": 12, "c": f"typedef struct {{ int32_t lo, hi; uint32_t count; }} {T};"}]
    weight = "(uint32_t)(i % 7) + 1u" if rng.random() < 0.5 else "1u"
    op = {
        "name": f"range{k}",
        "input": "i32",
        "type": T,
        "identity": "{2147483647, -2147483647 - 1, 0u}",
        "commutative": True,
        "combine_body": f"{T} r;\nr.lo = a.lo < b.lo ? a.lo : b.lo;\nr.hi = a.hi > b.hi ? a.hi : b.hi;\n"
        "r.count = a.count + b.count;\nreturn r;",
        "lift_body": f"{T} r;\nr.lo = x;\nr.hi = x;\nr.count = {weight};\nreturn r;",
    }
    return types, op, "return (int32_t)r.next();"


def _perm(k: int, rng: random.Random) -> tuple:
    """Permutations of 4 or 8 things, 4 bits each, composed in order: not commutative."""
    m = rng.choice([4, 8])
    T, U = f"pm{k}", "uint16_t" if m == 4 else "uint32_t"
    types = [{"name": T, "size": m // 2, "c": f"typedef struct {{ {U} p; }} {T};"}]
    ident = "0x3210u" if m == 4 else "0x76543210u"
    body = (
        f"{T} r;\nuint32_t p = 0;\nfor (unsigned i = 0; i < {m}; ++i)\n"
        "    p |= ((uint32_t)a.p >> (4 * (((uint32_t)b.p >> (4 * i)) & 15u)) & 15u) << (4 * i);\n"
        f"r.p = ({U})p;\nreturn r;"
    )
    op = {"name": f"perm{k}", "type": T, "identity": f"{{{ident}}}", "commutative": False, "combine_body": body}
    draw = (
        f"unsigned s[{m}]; for (unsigned q = 0; q < {m}; ++q) s[q] = q;\n"
        f"        for (unsigned q = {m} - 1; q > 0; --q) {{ unsigned j = (unsigned)(r.next() % (q + 1)); "
        "unsigned t = s[q]; s[q] = s[j]; s[j] = t; }\n"
        f"        {T} v; uint32_t p = 0; for (unsigned q = 0; q < {m}; ++q) p |= s[q] << (4 * q); "
        f"v.p = ({U})p; return v;"
    )
    return types, op, draw


GRAMMAR = [_affine, _maxplus, _range, _perm]


def _shape(rng: random.Random, size: int) -> dict:
    """A random block and items a thread within the spec's limits, or none (the default shapes)."""
    if rng.random() < 0.3:
        return {}
    block = rng.choice([32, 64, 128, 256, 512])
    items = rng.choice([i for i in (1, 2, 3, 4, 5, 7, 8, 12, 16) if i * size <= 256])
    return {"block": block, "items": items}


def draw_spec(seed: int, ops: int) -> tuple:
    """(spec dict, {operator name: C++ body drawing an input}): `ops` operators, each in every
    family that takes a user operator."""
    rng = random.Random(seed)
    spec: dict = {"prefix": PREFIX, "type": [], "operator": []}
    draws = {}
    tables: dict = {t: [] for t in ("reduce", "scan", "segscan", "segreduce", "rows", "cols")}
    for k in range(ops):
        types, op, draw = rng.choice(GRAMMAR)(k, rng)
        spec["type"] += types
        spec["operator"].append(op)
        draws[op["name"]] = draw
        size = types[0]["size"]
        key = rng.choice(INDEX_TYPES)
        tables["reduce"].append({"op": op["name"], **_shape(rng, size)})
        tables["scan"].append({"op": op["name"], "kind": ["inclusive", "exclusive"], **_shape(rng, size)})
        kinds = ["inclusive", "exclusive"]
        tables["segscan"].append({"op": op["name"], "kind": rng.choice(kinds), **_shape(rng, size)})
        tables["segscan"].append(
            {"op": op["name"], "heads": "keys", "key": key, "kind": rng.choice(kinds), **_shape(rng, size)}
        )
        offset = rng.choice(OFFSET_TYPES)
        tables["segreduce"].append({"op": op["name"], "offset": offset, **_shape(rng, size)})
        tables["segreduce"].append({"op": op["name"], "by": "keys", "key": key, **_shape(rng, size)})
        tables["rows"].append({"op": op["name"], "kind": ["reduce", rng.choice(["inclusive", "exclusive"])]})
        tables["cols"].append({"op": op["name"]})
    spec.update(tables)
    return _fit(spec), draws


def _fit(spec: dict) -> dict:
    """The spec with each shape the generator refuses under its documented limits (items a thread,
    shared memory) left to the defaults; any other refusal is the fuzzer's finding."""
    while True:
        try:
            parse(copy.deepcopy(spec), "fuzz")
            return spec
        except SpecError as e:
            m = re.fullmatch(r"(\w+)\[(\d+)\]\.(items|block)", e.key)
            if not m or "block" not in spec[m[1]][int(m[2])]:
                raise
            entry = spec[m[1]][int(m[2])]
            del entry["block"], entry["items"]


def _toml(spec: dict) -> str:
    """The spec as TOML (strings, integers, booleans and lists of them are all it holds)."""

    def value(v) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, int):
            return str(v)
        if isinstance(v, list):
            return "[" + ", ".join(map(value, v)) + "]"
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'

    lines = [f"prefix = {value(spec['prefix'])}"]
    for table, entries in spec.items():
        for entry in entries if isinstance(entries, list) else []:
            lines += ["", f"[[{table}]]"] + [f"{k} = {value(v)}" for k, v in entry.items()]
    return "\n".join(lines) + "\n"


def sizes(inst, rng: random.Random) -> list:
    """Sizes around every threshold of the instance's shape: its tile's multiples, and for the
    default shapes every pick of the sized tables up to 2^21, each just below, at and above."""
    edges = set()
    shapes = [(inst.block * inst.items, 0)] if inst.items else []
    if not inst.items:
        table = tuning.SEGSCAN_SIZE_SHAPES if inst.heads else tuning.SCAN_SIZE_SHAPES
        shapes = [(s.block * s.items, s.upto) for s in table]
    for tile, upto in shapes:
        for m in (1, 2, rng.randint(3, 40), rng.randint(41, 300)):
            edges |= {m * tile - 1, m * tile, m * tile + 1}
        if upto and upto <= 1 << 21:
            edges |= {upto - 1, upto, upto + 1}
    edges |= {rng.randint(2, 1 << 20) for _ in range(3)}
    return sorted(n for n in edges if 0 < n <= 1 << 21)


def _operator_case(op, draw: str) -> str:
    """The host copy of an operator (the spec's own C) and the runners' case for it."""
    n, A, In = op.name, op.acc_type.c, op.in_type.c
    lift = f"h_lift_{n}(x, i)" if op.in_type.c != op.acc_type.c else "x"
    out = [
        f"// ---- {n}: {op.summary}",
        family_run.host_fn(A, f"h_identity_{n}", "void", op.identity),
        family_run.host_fn(A, f"h_combine_{n}", f"{A} a, {A} b", op.combine),
    ]
    if lift != "x":
        out.append(family_run.host_fn(A, f"h_lift_{n}", f"{In} x, size_t i", f"(void)i;\n{op.lift}"))
    out.append(
        f"struct Case_{n} {{\n"
        f"    void gen(std::vector<{In}> &h, uint64_t seed) const\n"
        f"    {{\n        fill(h, seed, [](Rng &r, size_t) {{\n        {draw}\n        }});\n    }}\n"
        f"    {A} start() const {{ return h_identity_{n}(); }}\n"
        f"    {A} step({A} r, const {In} &x, size_t i) const {{ (void)i; return h_combine_{n}(r, {lift}); }}\n"
        f"    Result same({A} got, {A} want) const {{ return exact(got, want); }}\n}};\n"
    )
    return "\n".join(out)


def _call(inst, rng: random.Random) -> str:
    """The runner's call for an instance, at its sizes."""
    name = inst.public_name

    def ns() -> str:  # drawn only where the runner takes sizes
        return "{" + ", ".join(f"(size_t){n}" for n in [0, 1, 2] + sizes(inst, rng)) + "}"

    call = family_run.driver_call(inst, name, f"Case_{inst.op.name}{{}}", ns, quick="a.quick")
    return f'    if (!a.only || std::strstr("{name}", a.only))\n        {call}\n'


def cases_for(draws: dict, seed: int):
    """The driver's cases.inc for a loaded spec: the operators' host copies, then run_all."""

    def cases(spec) -> str:
        rng = random.Random(seed * 7919)
        ops = {inst.op.name: inst.op for inst in spec.instances}
        calls = "".join(_call(inst, rng) for inst in spec.instances)
        return (
            "".join(_operator_case(op, draws[name]) for name, op in ops.items())
            + "\nstatic void run_all(const Args &a, Stats &st)\n{\n"
            + calls
            + "}\n"
        )

    return cases


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--ops", type=int, default=6)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--build-only", action="store_true")
    ap.add_argument("--spec-only", action="store_true")
    ap.add_argument("--no-sanitizer", action="store_true")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    args = ap.parse_args()
    spec, draws = draw_spec(args.seed, args.ops)
    if args.spec_only:
        print(_toml(spec), end="")
        return 0
    out = Path(os.environ.get("OUT", family_run.ROOT / "build" / "fuzz-test"))
    out.mkdir(parents=True, exist_ok=True)
    spec_file = family_run.ROOT / "build" / "fuzz-test" / "spec.toml"
    spec_file.parent.mkdir(parents=True, exist_ok=True)
    spec_file.write_text(_toml(spec))
    print(f"fuzz: seed {args.seed}, {args.ops} operators: {', '.join(o['name'] for o in spec['operator'])}", flush=True)
    exe = family_run.build(HERE, "fuzz", f"{PREFIX}.h", cases_for(draws, args.seed), args.jobs, True, spec_file)
    if args.build_only:
        print(f"built {exe}")
        return 0
    rc = family_run.subprocess.run([str(exe)] + (["--quick"] if args.quick else [])).returncode
    if rc:
        print(f"fuzz: FAILED with seed {args.seed} (the spec: {spec_file})")
    if not args.no_sanitizer:  # each operator's reduces and scans
        names = [f"{PREFIX}_{p}_{o['name']}_" for o in spec["operator"] for p in ("reduce", "scan")]
        rc = family_run.sanitize(exe, names, out, args.jobs) or rc
    return rc


if __name__ == "__main__":
    sys.exit(main())
