"""A fuzzer of specs (Hypothesis): specs drawn from a grammar of the whole spec language.

- every valid spec generates (exit 0, nothing on stderr but `note:` lines);
- a few of them also compile: the spec's C through the generator's own check, a sample of the
  sources with nvcc without a warning, and the header as strict C99;
- every mutation of a valid spec (a key removed, renamed, given the wrong type or an out-of-range
  value, a name with odd characters) gives exit 2, one `error:` line naming a key the mutated spec
  has, and writes nothing.

CI runs it with a fixed seed (derandomized) and a small budget. A longer run on a developer's
machine: `python3 -m tests.cpu.test_fuzz_spec --examples 2000 [--compiles 10] [--seed N]` (or the
environment variables FUZZ_EXAMPLES, FUZZ_COMPILES, FUZZ_SEED with pytest).
"""

import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from assocgen import cli

from .util import GCC_C_FLAGS, NVCC, WARNING, nvcc_compile_all

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "30"))  # valid specs, and five times as many mutations
COMPILES = int(os.environ.get("FUZZ_COMPILES", "2"))  # valid specs compiled (nvcc, gcc)
SEED = os.environ.get("FUZZ_SEED")  # unset: derandomized (the same examples every run)
SOURCES_A_COMPILE = 2  # the .cu files of a compiled spec that nvcc builds (the first and the last)


def _settings(n: int) -> settings:
    return settings(
        max_examples=n,
        deadline=None,
        database=None,
        derandomize=SEED is None,
        phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink],
        suppress_health_check=list(HealthCheck),
    )


# ---------------------------------------------------------------------------------------------
# the grammar of valid specs

INTEGERS = ["i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"]
FLOATS = ["f32", "f64"]
C_OF = {"i32": "int32_t", "u32": "uint32_t", "u64": "uint64_t", "f32": "float", "f64": "double"}
BUILTIN_OPS = {
    "sum": INTEGERS + FLOATS,
    "prod": INTEGERS + FLOATS,
    "min": INTEGERS + FLOATS,
    "max": INTEGERS + FLOATS,
    "and": INTEGERS,
    "or": INTEGERS,
    "xor": INTEGERS,
    "argmin": INTEGERS + FLOATS,
    "argmax": INTEGERS + FLOATS,
    "ksum": FLOATS,
}
SEMIRINGS = {
    "plus_times": ["f32", "f64", "i32"],
    "min_plus": ["f32", "f64", "i32"],
    "max_plus": ["f32", "f64", "i32"],
    "max_min": ["f32", "f64", "i32"],
    "min_max": ["f32", "f64", "i32"],
    "or_and": ["u8", "u32"],
}
SELECTIVE = {"min_plus", "max_plus", "max_min", "min_max"}
PREFIXES = st.text("abcdefghjkpqrwyz", min_size=1, max_size=6).map(lambda s: "g" + s)


@st.composite
def user_type(draw, n):
    """A struct of 1 to 4 fields of one builtin type."""
    field = draw(st.sampled_from(["u32", "f32", "u64", "f64"]))
    count = draw(st.integers(1, 4))
    name = f"ty{n}"
    size = count * (8 if field in ("u64", "f64") else 4)
    fields = ", ".join(f"f{k}" for k in range(count))
    return {"name": name, "size": size, "c": f"typedef struct {{ {C_OF[field]} {fields}; }} {name};"}, field, count


@st.composite
def user_operator(draw, n, types):
    """An operator of a builtin accumulator (maybe with an input and a lift, or several inputs) or
    of a user struct, combined field by field."""
    name = f"op{n}"
    op = {"name": name, "commutative": draw(st.booleans())}
    if types and draw(st.booleans()):
        t, field, count = draw(st.sampled_from(types))
        op["type"] = t["name"]
        op["identity"] = "{" + ", ".join("0" for _ in range(count)) + "}"
        parts = ", ".join(f"a.f{k} + b.f{k}" for k in range(count))
        if draw(st.booleans()):
            op["combine"] = "{" + parts + "}"
        else:
            op["combine_body"] = f"{t['name']} r = {{{parts}}};\n/* return a; */\nreturn r;"
        if draw(st.booleans()):
            op["input"] = field
            op["lift"] = "{" + ", ".join("x" for _ in range(count)) + "}"
        return op
    acc = draw(st.sampled_from(["i32", "u32", "u64", "f32", "f64"]))
    op.update(type=acc, identity="0")
    if draw(st.booleans()):
        op["combine"] = "a + b"
    else:
        op["combine_body"] = f"{C_OF[acc]} s = a + b;  // return b\nreturn s;"
    how = draw(st.sampled_from(["none", "input", "index", "inputs"]))
    if how == "input":
        op["input"] = draw(st.sampled_from(["u8", "i16", "u32"]))
        op["lift"] = f"({C_OF[acc]})x"
    elif how == "index":  # a struct member named i is not the index: such a lift goes across ranks
        op["input"] = acc
        op["lift_body"] = f"struct {{ {C_OF[acc]} i; }} w;\nw.i = x;\nreturn w.i;"
    elif how == "inputs":
        op["inputs"] = [acc] * draw(st.integers(2, 3))
        op["lift"] = " + ".join(f"x{k}" for k in range(len(op["inputs"])))
    if draw(st.booleans()):
        op["summary"] = draw(st.sampled_from(["a sum", "sum; of things", "Σ"]))
    return op


@st.composite
def user_semiring(draw):
    sr = {"name": "srx", "type": "f32", "zero": "0.0f", "add": "fmaxf(x, y)", "mul": "a * b", "selective": True}
    if draw(st.booleans()):  # A, B and C of their own types
        del sr["type"]
        sr.update(a="u8", b="f32", c="f32", mul="(float)a * b")
    if draw(st.booleans()):
        sr["step"] = "fmaxf(c, a * b)"
    if draw(st.booleans()):
        sr.update(fast="v == 0.0f", fast_step="c")
    if draw(st.booleans()):
        sr["summary"] = "max-times"
    return sr


def _one_or_list(draw, values):
    values = list(dict.fromkeys(values))
    return values[0] if len(values) == 1 and draw(st.booleans()) else values


@st.composite
def op_type(draw, ops, one_input=False):
    """(op value, type value or None, instance count) of a table: builtin operators with types
    they take, or user operators (their own type)."""
    usable = [o for o in ops if not (one_input and "inputs" in o)]
    if usable and draw(st.booleans()):
        chosen = draw(st.lists(st.sampled_from(usable), min_size=1, max_size=2, unique_by=lambda o: o["name"]))
        return _one_or_list(draw, [o["name"] for o in chosen]), None, len(chosen)
    names = draw(st.lists(st.sampled_from(sorted(BUILTIN_OPS)), min_size=1, max_size=2, unique=True))
    if names != ["ksum"] and "ksum" in names and ({"and", "or", "xor"} & set(names)):
        names = [n for n in names if n != "ksum"]  # no type takes both
    allowed = [t for t in INTEGERS + FLOATS if all(t in BUILTIN_OPS[o] for o in names)]
    types = draw(st.lists(st.sampled_from(allowed), min_size=1, max_size=2, unique=True))
    return _one_or_list(draw, names), _one_or_list(draw, types), len(names) * len(types)


@st.composite
def instance_table(draw, family, ops, n):
    op, ty, count = draw(op_type(ops))
    t = {"op": op} | ({"type": ty} if ty is not None else {})
    if family in ("scan", "segscan") and draw(st.booleans()):
        kinds = draw(st.lists(st.sampled_from(["inclusive", "exclusive"]), min_size=1, max_size=2, unique=True))
        t["kind"] = _one_or_list(draw, kinds)
        count *= len(kinds)
    if family == "segscan" and draw(st.booleans()):
        t.update(heads="keys", key=draw(st.sampled_from(INTEGERS)))
    if family == "segreduce":
        by = draw(st.sampled_from(["offsets", "keys", None]))
        if by == "keys":
            t.update(by="keys", key=draw(st.sampled_from(INTEGERS)))
        elif by == "offsets" or draw(st.booleans()):
            t["offset"] = draw(st.sampled_from(["i32", "i64", "u32"]))
    if draw(st.booleans()):
        t["block"] = draw(st.sampled_from([64, 128, 256]))
        if draw(st.booleans()):
            t["items"] = draw(st.sampled_from([1, 2, 4]))
        if draw(st.booleans()):
            t["blocks_per_sm"] = draw(st.integers(1, min(32, 2048 // t["block"])))
    if count == 1 and draw(st.booleans()):
        t["name"] = f"mine{n}"
    return t


@st.composite
def axis_table(draw, family, ops, n):
    op, ty, count = draw(op_type(ops, one_input=True))
    t = {"op": op} | ({"type": ty} if ty is not None else {})
    if family == "rows" and draw(st.booleans()):
        kinds = draw(
            st.lists(st.sampled_from(["reduce", "inclusive", "exclusive"]), min_size=1, max_size=3, unique=True)
        )
        t["kind"] = _one_or_list(draw, kinds)
        count *= len(kinds)
    if count == 1 and draw(st.booleans()):
        t["name"] = f"mine{n}"
    return t


@st.composite
def transpose_table(draw, types, ops, n):
    lifts = [o for o in ops if "input" in o]
    if lifts and draw(st.booleans()):
        t = {"op": draw(st.sampled_from(lifts))["name"]}
    else:
        names = [ty["name"] for ty in types] + INTEGERS + FLOATS
        t = {"type": _one_or_list(draw, draw(st.lists(st.sampled_from(names), min_size=1, max_size=2, unique=True)))}
        four_or_eight = all(
            n in ("i32", "u32", "f32", "i64", "u64", "f64")
            for n in (t["type"] if isinstance(t["type"], list) else [t["type"]])
        )
        choice = draw(
            st.sampled_from(["default", "naive", "none", "pad", "tile"] if four_or_eight else ["default", "naive"])
        )
        if choice == "naive":
            t["naive"] = True
        elif choice in ("none", "pad"):
            t["remedy"] = choice
        elif choice == "tile":
            t.update(tile=32, rows=8)
    if not isinstance(t.get("type", []), list) and draw(st.booleans()):
        t["name"] = f"mine{n}"
    return t


@st.composite
def matmul_table(draw, semiring, n):
    if semiring is not None and draw(st.booleans()):
        t = {"semiring": semiring["name"], "witness": draw(st.booleans())}
    else:
        sr = draw(st.sampled_from(sorted(SEMIRINGS)))
        t = {"semiring": sr, "type": draw(st.sampled_from(SEMIRINGS[sr]))}
        if sr in SELECTIVE and draw(st.booleans()):
            t["witness"] = True
    if draw(st.booleans()):
        layouts = draw(st.lists(st.sampled_from(["nn", "nt", "tn", "tt"]), min_size=1, max_size=2, unique=True))
        t["layout"] = _one_or_list(draw, layouts)
    if draw(st.booleans()):
        t.update(block=[64, 64, 8], thread=[4, 4])
    pipeline = draw(st.sampled_from([None, "registers", "async"]))
    if pipeline == "async" and t.get("type") in ("f32", "f64", "i32"):
        t.update(pipeline="async", stages=2)
    elif pipeline == "registers":
        t["pipeline"] = "registers"
    if not isinstance(t.get("layout", []), list) and draw(st.booleans()):
        t["name"] = f"mine{n}"
    return t


FAMILIES = ["reduce", "scan", "segscan", "segreduce", "transpose", "matmul", "rows", "cols"]


@st.composite
def valid_spec(draw, rich=False):
    """A valid spec; rich: with user types, operators and a semiring, and three families or more
    (what the few compiled ones are drawn as: the simplest specs, drawn first, say little)."""
    spec = {"prefix": draw(PREFIXES)}
    types = [draw(user_type(n)) for n in range(draw(st.integers(int(rich), 2)))]
    ops = [draw(user_operator(n, types)) for n in range(draw(st.integers(2 * rich, 3)))]
    semiring = draw(user_semiring()) if rich or draw(st.booleans()) else None
    if types:
        spec["type"] = [t for t, _, _ in types]
    if ops:
        spec["operator"] = ops
    if semiring:
        spec["semiring"] = [semiring]
    families = draw(st.lists(st.sampled_from(FAMILIES), min_size=1 + 2 * rich, max_size=4, unique=True))
    for n, family in enumerate(families):
        if family == "transpose":
            table = draw(transpose_table([t for t, _, _ in types], ops, n))
        elif family == "matmul":
            table = draw(matmul_table(semiring, n))
        elif family in ("rows", "cols"):
            table = draw(axis_table(family, ops, n))
        else:
            table = draw(instance_table(family, ops, n))
        spec[family] = [table]
    if _across_ranks(spec) and draw(st.booleans()):
        spec["nccl"] = True
    return spec


def _across_ranks(spec):
    """Whether some reduce or inclusive or exclusive scan of the spec can go across ranks."""
    ops = {o["name"]: o for o in spec.get("operator", [])}
    for family in ("reduce", "scan"):
        for t in spec.get(family, []):
            names = t["op"] if isinstance(t["op"], list) else [t["op"]]
            if any(n not in ("argmin", "argmax") and "inputs" not in ops.get(n, {}) for n in names):
                return True
    return False


# ---------------------------------------------------------------------------------------------
# mutations of a valid spec: each must be refused

ODD_NAMES = ["a b", "a-b", "9a", "a\n", "\na", "", "é", "a.b", "a;", "x" * 65, "a\t", "a/b", "a\x00"]
NAME_KEYS = {"prefix", "name"}
INT_KEYS = {
    "size": [0, -4, 1025],
    "block": [0, 16, 100, 2048],
    "items": [0, 65, -1],
    "blocks_per_sm": [-1, 33],
}
REQUIRED = {
    "type": ["name", "size", "c"],
    "operator": ["name", "type", "identity", "commutative"],
    "semiring": ["name", "zero", "add", "mul"],
    "reduce": ["op"],
    "scan": ["op"],
    "segscan": ["op"],
    "segreduce": ["op"],
    "rows": ["op"],
    "cols": ["op"],
    "matmul": ["semiring"],
}


def _wrong_type(value):
    """A value of another TOML type than `value`'s."""
    if isinstance(value, bool):
        return ["true", 1, 1.5]
    if isinstance(value, int):
        return ["8", 1.5, True, [value]]
    if isinstance(value, str):
        return [1, True, 2.5, [1, 2], {"x": 1}]
    if isinstance(value, list):
        return [1, True, [1, 2], [[value[0]]]]
    return [1]


def _path(kind, n, k) -> str:
    return k if kind is None else f"{kind}[{n}].{k}"


@st.composite
def mutation(draw, spec):
    """(mutated spec, what was done, the key changed): one change that makes the spec wrong."""
    spec = {
        k: ([dict(t) for t in v] if isinstance(v, list) and v and isinstance(v[0], dict) else v)
        for k, v in spec.items()
    }
    places = [(None, None)] + [
        (k, n) for k, v in spec.items() if isinstance(v, list) and v and isinstance(v[0], dict) for n in range(len(v))
    ]
    kind, n = draw(st.sampled_from(places))
    table = spec if kind is None else spec[kind][n]
    keys = sorted(
        k for k, v in table.items() if not (kind is None and isinstance(v, list) and v and isinstance(v[0], dict))
    )
    how = draw(st.sampled_from(["remove", "rename", "type", "range", "name"]))
    if how == "remove" and (kind is None or REQUIRED.get(kind)):
        k = "prefix" if kind is None else draw(st.sampled_from(REQUIRED[kind]))
        if kind in ("type", "operator", "semiring") and k == "name":
            k = draw(st.sampled_from([r for r in REQUIRED[kind] if r != "name"]))
        if k in table:
            del table[k]
            return spec, f"removed {_path(kind, n, k)}", _path(kind, n, k)
    if how == "rename" and keys:
        k = draw(st.sampled_from(keys))
        table[k + draw(st.sampled_from(["_", "s", "X"]))] = table.pop(k)
        return spec, f"renamed {_path(kind, n, k)}", _path(kind, n, k)
    ranged = [k for k in keys if k in INT_KEYS]
    if how == "range" and ranged:
        k = draw(st.sampled_from(ranged))
        table[k] = draw(st.sampled_from(INT_KEYS[k]))
        return spec, f"{_path(kind, n, k)} = {table[k]!r}", _path(kind, n, k)
    names = [k for k in keys if k in NAME_KEYS]
    if how == "name" and names:
        k = draw(st.sampled_from(names))
        table[k] = draw(st.sampled_from(ODD_NAMES))
        return spec, f"{_path(kind, n, k)} = {table[k]!r}", _path(kind, n, k)
    k = draw(st.sampled_from(keys))
    table[k] = draw(st.sampled_from(_wrong_type(table[k])))
    return spec, f"{_path(kind, n, k)} = {table[k]!r}", _path(kind, n, k)


def spec_keys(spec) -> set:
    """Every way an error line may name a key the spec has: `prefix`, `reduce[0]`, `reduce[0].op`,
    `operator 'op0': combine`."""
    out = set()
    for k, v in spec.items():
        out.add(k)
        if not (isinstance(v, list) and v and isinstance(v[0], dict)):
            continue
        for n, table in enumerate(v):
            out.add(f"{k}[{n}]")
            out.update(f"{k}[{n}].{kk}" for kk in table)
            if isinstance(table.get("name"), str):
                out.update(f"{k} {table['name']!r}: {kk}" for kk in table)
    return out


def _value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)  # a JSON string is a valid TOML basic string
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    return "{" + ", ".join(f"{k} = {_value(x)}" for k, x in v.items()) + "}"  # an inline table


def toml_dumps(spec: dict) -> str:
    """A spec as TOML: its values (floats and inline tables too), then its arrays of tables."""
    tables = {k: v for k, v in spec.items() if isinstance(v, list) and v and all(isinstance(x, dict) for x in v)}
    lines = [f"{k} = {_value(v)}" for k, v in spec.items() if k not in tables]
    for k, v in tables.items():
        for table in v:
            lines += ["", f"[[{k}]]", *(f"{kk} = {_value(vv)}" for kk, vv in table.items())]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------
# running the generator in this process (a subprocess a spec would cost most of the budget)


def generate(path: Path, *args) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main([str(path), *map(str, args)])
    return code, out.getvalue(), err.getvalue()


def _case_folder(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


@_settings(EXAMPLES)
@given(spec=valid_spec())
def test_every_valid_spec_generates(tmp_path_factory, spec):
    d = _case_folder(tmp_path_factory)
    path = d / "spec.toml"
    path.write_text(toml_dumps(spec))
    code, out, err = generate(path, "-o", d / "out", "--no-compile-check")
    assert code == 0, f"{err}\n{toml_dumps(spec)}"
    assert all(line.startswith("note: ") for line in err.splitlines()), err
    assert (d / "out" / f"{spec['prefix']}.h").is_file()


@_settings(5 * EXAMPLES)  # cheap: refused before anything is rendered
@given(data=st.data(), spec=valid_spec())
def test_every_mutation_of_a_valid_spec_is_one_error_line_and_writes_nothing(tmp_path_factory, data, spec):
    bad, what, changed = data.draw(mutation(spec))
    d = _case_folder(tmp_path_factory)
    path = d / "spec.toml"
    path.write_text(toml_dumps(bad))
    code, out, err = generate(path, "-o", d / "out", "--no-compile-check")
    context = f"{what}\n{err}\n{toml_dumps(bad)}"
    assert code == 2, context
    assert out == "" and not (d / "out").exists(), context
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {path}: "), context
    key = lines[0][len(f"error: {path}: ") :]
    known = spec_keys(bad) | {changed}  # a key removed is named as missing
    assert any(key.startswith(k + ":") for k in known), f"the line names no key of the spec: {context}"


def _compile(spec, d: Path) -> None:
    """The spec through the generator's check of its C, a sample of its sources through nvcc, and
    its header through gcc as strict C99: no error, no warning."""
    path = d / "spec.toml"
    path.write_text(toml_dumps(spec))
    code, out, err = generate(path, "-o", d / "out")
    assert code == 0 and all(line.startswith("note: ") for line in err.splitlines()), f"{err}\n{toml_dumps(spec)}"
    sources = sorted((d / "out").glob("*.cu"))
    sample = sorted({sources[0], sources[-1]})[:SOURCES_A_COMPILE] if sources else []
    print(f"fuzz: compiling {', '.join(cu.name for cu in sample)} of {len(sources)}")
    results = nvcc_compile_all(sample, d / "out")
    for cu, r in results.items():
        assert r.returncode == 0 and not WARNING.search(r.stderr), f"{cu.name}: {r.stderr}\n{toml_dumps(spec)}"
    c = d / "use.c"
    c.write_text(f'#include "{spec["prefix"]}.h"\nint main(void) {{ return 0; }}\n')
    r = subprocess.run(
        ["gcc", *GCC_C_FLAGS, "-I", str(d / "out"), "-fsyntax-only", str(c)], capture_output=True, text=True
    )
    assert r.returncode == 0 and not r.stderr, f"{r.stderr}\n{toml_dumps(spec)}"


@pytest.mark.skipif(not Path(NVCC).exists() or COMPILES < 1, reason="needs nvcc")
@_settings(max(1, COMPILES))
@given(spec=valid_spec(rich=True))
def test_a_sample_of_valid_specs_compiles_without_a_warning(tmp_path_factory, spec):
    _compile(spec, _case_folder(tmp_path_factory))


def main(argv: list[str]) -> int:
    """`python3 -m tests.cpu.test_fuzz_spec --examples N [--compiles N] [--seed N]`: a longer run."""
    import argparse

    p = argparse.ArgumentParser(prog="python3 -m tests.cpu.test_fuzz_spec", description=__doc__.split("\n")[0])
    p.add_argument("--examples", type=int, default=2000, help="valid specs drawn, and five times as many mutations")
    p.add_argument("--compiles", type=int, default=10, help="valid specs compiled with nvcc and gcc")
    p.add_argument("--seed", type=int, help="a seed (default: a new one each run, as Hypothesis does)")
    args = p.parse_args(argv)
    env = {**os.environ, "FUZZ_EXAMPLES": str(args.examples), "FUZZ_COMPILES": str(args.compiles)}
    env["FUZZ_SEED"] = str(args.seed) if args.seed is not None else "random"
    cmd = [sys.executable, "-m", "pytest", __file__, "-q", "-x", "-p", "no:cacheprovider"]
    if args.seed is not None:
        cmd.append(f"--hypothesis-seed={args.seed}")
    return subprocess.call(cmd, env=env)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
