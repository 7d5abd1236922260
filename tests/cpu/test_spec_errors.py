"""Malformed specs and command lines: exit code 2, one `error: SOURCE: KEY: problem` line on
stderr, no traceback, and nothing written."""

import re
from pathlib import Path

import pytest

from .util import gen_ok, run_gen, write_spec

FILE, CLI = "file", "command line"
MISSING, DIRECTORY = object(), object()  # spec "contents" for a missing path / a directory
NO_SPEC = object()  # no spec argument at all

SUM = {"op": "sum", "type": "f32"}
PAIR_T = {"name": "pair", "size": 8, "c": "typedef struct { float x, y; } pair;"}
PAIR_OP = {
    "name": "padd",
    "type": "pair",
    "identity": "{0.0f, 0.0f}",
    "commutative": True,
    "combine": "{a.x + b.x, a.y + b.y}",
}
MAT3_T = {"name": "mat3u", "size": 36, "c": "typedef struct { uint32_t m[9]; } mat3u;"}
MAT3_OP = {
    "name": "mat3mul",
    "type": "mat3u",
    "identity": "{{1u, 0u, 0u, 0u, 1u, 0u, 0u, 0u, 1u}}",
    "commutative": False,
    "combine_body": "mat3u r = a; (void)b; return r;",
}
F32_OP = {"name": "m", "type": "f32", "identity": "0.0f", "commutative": True, "combine": "a + b"}
DOT_OP = {
    "name": "dot",
    "type": "f32",
    "inputs": ["f32", "f32"],
    "identity": "0.0f",
    "commutative": True,
    "combine": "a + b",
    "lift": "x0 * x1",
}
U2_T = {"name": "u2", "size": 8, "c": "typedef struct { uint32_t a, b; } u2;"}
U2_OP = {"name": "u", "type": "u2", "identity": "{1.5, 2}", "commutative": True, "combine": "{a.a + b.a, a.b + b.b}"}
BIG_T = {"name": "big", "size": 100, "c": "typedef struct { unsigned char b[100]; } big;"}
BIG_OP = {"name": "bigop", "type": "big", "identity": "{{0}}", "commutative": True, "combine": "a"}


def S(*reduce, types=(), ops=(), prefix="v", **top):
    """A spec as a dict; prefix=None leaves it out."""
    d = {} if prefix is None else {"prefix": prefix}
    d.update(top)
    if types:
        d["type"] = list(types)
    if ops:
        d["operator"] = list(ops)
    if reduce:
        d["reduce"] = list(reduce)
    return d


def W(table, **changes):
    """A copy of a table with keys changed; a value None removes the key."""
    d = dict(table)
    for k, v in changes.items():
        if v is None:
            d.pop(k, None)
        else:
            d[k] = v
    return d


def P(spec, source, key, *problems, args=(), id):
    return pytest.param(spec, list(args), source, key, list(problems), id=id)


PADD = dict(types=[PAIR_T], ops=[PAIR_OP])

CASES = [
    # ---- reading the file
    P('prefix = "v"\n[[reduce]\nop = "sum"\ntype = "f32"\n', FILE, None, r"toml", id="invalid_toml_header"),
    P("prefix = v\n", FILE, None, r"toml", id="invalid_toml_value"),
    P('prefix = "v"\nprefix = "w"\n', FILE, None, r"toml", id="invalid_toml_duplicate_key"),
    P(MISSING, FILE, None, r"no such file|not found|does not exist", id="file_missing"),
    P(DIRECTORY, FILE, None, r"director", id="file_is_directory"),
    P(b'prefix = "\xff\xfe"\n', FILE, None, r"utf-?8", id="file_not_utf8"),
    # ---- top level
    P("", FILE, "prefix", r"missing|required", id="empty_file"),
    P(S(SUM, prefix=None), FILE, "prefix", r"missing|required", id="missing_prefix"),
    P(S(SUM, prefix="9v"), FILE, "prefix", r"9v", r"identifier", id="prefix_starts_with_digit"),
    P(S(SUM, prefix="my-lib"), FILE, "prefix", r"my-lib", r"identifier", id="prefix_with_dash"),
    P(S(SUM, prefix=""), FILE, "prefix", r"identifier|empty", id="prefix_empty"),
    P(S(SUM, prefix=3), FILE, "prefix", r"string", id="prefix_not_a_string"),
    P(S(SUM, prefix="__v"), FILE, "prefix", r"__", id="prefix_reserved"),
    P(S(SUM, prefix="p" * 40), FILE, "prefix", r"32|long", id="prefix_too_long"),
    P(S(SUM, block=256), FILE, "block", r"unknown", id="unknown_top_level_key"),
    P(
        'prefix = "v"\n[reduce]\nop = "sum"\ntype = "f32"\n',
        FILE,
        "reduce",
        r"array|\[\[reduce\]\]",
        id="reduce_is_a_table",
    ),
    P(
        'prefix = "v"\ntype = "f32"\n[[reduce]]\nop = "sum"\ntype = "f32"\n',
        FILE,
        "type",
        r"array|\[\[type\]\]",
        id="type_is_a_string",
    ),
    P(S(prefix="v"), FILE, "reduce", r"no kernel|no reduce|nothing|missing|empty", id="no_reduce"),
    P(S(**PADD), FILE, "reduce", r"no kernel|no reduce|nothing|missing|empty", id="no_reduce_with_operators"),
    # ---- [[reduce]]
    P(S(W(SUM, blocks=256)), FILE, "reduce[0].blocks", r"unknown", id="reduce_unknown_key"),
    P(
        S(SUM, {"op": "min", "type": "f32", "itms": 4}),
        FILE,
        "reduce[1].itms",
        r"unknown",
        id="reduce_unknown_key_second_table",
    ),
    P(S({"type": "f32"}), FILE, "reduce[0].op", r"missing|required", id="reduce_missing_op"),
    P(S({"op": "summ", "type": "f32"}), FILE, "reduce[0].op", r"summ", id="unknown_operator"),
    P(S({"op": ["sum", "avg"], "type": "f32"}), FILE, "reduce[0].op", r"avg", id="unknown_operator_in_list"),
    P(S({"op": "sum", "type": "f33"}), FILE, "reduce[0].type", r"f33", id="unknown_type"),
    P(S({"op": "sum", "type": ["f32", "float"]}), FILE, "reduce[0].type", r"float", id="unknown_type_in_list"),
    P(S({"op": "sum"}), FILE, "reduce[0].type", r"missing|needs|required", id="builtin_operator_without_type"),
    P(S({"op": "and", "type": "f32"}), FILE, "reduce[0].type", r"\band\b", r"\bf32\b", id="and_on_f32"),
    P(S({"op": "xor", "type": "f64"}), FILE, "reduce[0].type", r"\bxor\b", r"\bf64\b", id="xor_on_f64"),
    P(S({"op": "ksum", "type": "i32"}), FILE, "reduce[0].type", r"\bksum\b", r"\bi32\b", id="ksum_on_i32"),
    P(
        S({"op": ["sum", "or"], "type": ["u8", "f32"]}),
        FILE,
        "reduce[0].type",
        r"\bor\b",
        r"\bf32\b",
        id="or_on_f32_in_lists",
    ),
    P(S(W(SUM, block=300)), FILE, "reduce[0].block", r"\b300\b", id="block_300"),
    P(S(W(SUM, block=16)), FILE, "reduce[0].block", r"\b16\b", id="block_16"),
    P(S(W(SUM, block=2048)), FILE, "reduce[0].block", r"\b2048\b", id="block_2048"),
    P(S(W(SUM, block=0)), FILE, "reduce[0].block", r"\b0\b", id="block_0"),
    P(S(W(SUM, block=-256)), FILE, "reduce[0].block", r"-256", id="block_negative"),
    P(S(W(SUM, items=0)), FILE, "reduce[0].items", r"\b0\b", id="items_0"),
    P(S(W(SUM, items=65)), FILE, "reduce[0].items", r"\b65\b", id="items_65"),
    P(S(W(SUM, items=-4)), FILE, "reduce[0].items", r"-4", id="items_negative"),
    P(
        S({"op": "bigop", "items": 16}, types=[BIG_T], ops=[BIG_OP]),
        FILE,
        "reduce[0].items",
        r"\b16\b",
        id="items_too_large_for_100_byte_type",
    ),
    P(
        S({"op": "mat3mul", "items": 32}, types=[MAT3_T], ops=[MAT3_OP]),
        FILE,
        "reduce[0].items",
        r"\b32\b",
        id="items_too_large_for_36_byte_type",
    ),
    P(
        S({"op": ["sum", "min"], "type": "f32", "name": "x"}),
        FILE,
        "reduce[0].name",
        r"one|single",
        id="name_with_several_ops",
    ),
    P(
        S({"op": "sum", "type": ["f32", "f64"], "name": "x"}),
        FILE,
        "reduce[0].name",
        r"one|single",
        id="name_with_several_types",
    ),
    P(S(W(SUM, name="my sum")), FILE, "reduce[0].name", r"my sum", id="name_not_an_identifier"),
    P(S(SUM, SUM), FILE, "reduce[1]", r"v_reduce_sum_f32", id="duplicate_public_name"),
    P(
        S({"op": ["sum", "sum"], "type": "f32"}),
        FILE,
        "reduce[0].op",
        r"'sum' is listed twice",
        id="duplicate_op_in_one_table",
    ),
    P(
        S({"op": "sum", "type": ["f32", "i32", "f32"]}),
        FILE,
        "reduce[0].type",
        r"'f32' is listed twice",
        id="duplicate_type_in_one_table",
    ),
    P(
        S(W(SUM, name="x"), {"op": "min", "type": "f32", "name": "x"}),
        FILE,
        "reduce[1]",
        r"\bv_x\b",
        id="duplicate_given_names",
    ),
    P(
        S(SUM, {"op": "min", "type": "f32", "name": "v_reduce_sum_f32"}),
        FILE,
        "reduce[1]",
        r"v_reduce_sum_f32",
        id="given_name_equals_generated_name",
    ),
    P(
        S({"op": "padd", "type": "f32"}, **PADD),
        FILE,
        "reduce[0].type",
        r"padd|pair",
        r"\bf32\b",
        id="user_operator_with_wrong_type",
    ),
    P(
        S({"op": "padd", "type": ["pair", "f64"]}, **PADD),
        FILE,
        "reduce[0].type",
        r"\bf64\b",
        id="user_operator_with_wrong_type_in_list",
    ),
    # ---- wrong kinds of values
    P(S(W(SUM, block="256")), FILE, "reduce[0].block", r"integer|string", id="block_is_a_string"),
    P(
        'prefix = "v"\n[[reduce]]\nop = "sum"\ntype = "f32"\nblock = 256.0\n',
        FILE,
        "reduce[0].block",
        r"integer|number|float",
        id="block_is_a_float",
    ),
    P(S(W(SUM, items=True)), FILE, "reduce[0].items", r"integer|bool", id="items_is_a_boolean"),
    P(S({"op": 3, "type": "f32"}), FILE, "reduce[0].op", r"string|integer", id="op_is_an_integer"),
    P(S({"op": [], "type": "f32"}), FILE, "reduce[0].op", r"empty|list", id="op_is_an_empty_list"),
    P(S({"op": "sum", "type": 32}), FILE, "reduce[0].type", r"string|integer", id="type_is_an_integer"),
    P(S(SUM, types=[W(PAIR_T, size="8")]), FILE, "type[0].size", r"integer|string", id="size_is_a_string"),
    P(
        S(SUM, types=[PAIR_T], ops=[W(PAIR_OP, commutative="no")]),
        FILE,
        "operator[0].commutative",
        r"true|false|bool",
        id="commutative_is_a_string",
    ),
    P(
        S(SUM, types=[PAIR_T], ops=[W(PAIR_OP, identity=0)]),
        FILE,
        "operator[0].identity",
        r"string|integer",
        id="identity_is_an_integer",
    ),
    # ---- [[type]]
    P(S(SUM, types=[W(PAIR_T, size=None)]), FILE, "type[0].size", r"missing|required", id="type_missing_size"),
    P(S(SUM, types=[W(PAIR_T, size=0)]), FILE, "type[0].size", r"\b0\b", id="type_size_0"),
    P(S(SUM, types=[W(PAIR_T, size=-8)]), FILE, "type[0].size", r"-8", id="type_size_negative"),
    P(
        S(SUM, types=[W(PAIR_T, c="typedef struct { float x, y; } pear;")]),
        FILE,
        "type[0].c",
        r"pair",
        id="type_c_does_not_define_name",
    ),
    P(
        S(SUM, types=[W(PAIR_T, c="typedef struct { float x, y; } pairs;")]),
        FILE,
        "type[0].c",
        r"pair",
        id="type_c_defines_longer_name",
    ),
    P(S(SUM, types=[W(PAIR_T, c=None)]), FILE, "type[0].c", r"missing|required", id="type_missing_c"),
    P(S(SUM, types=[W(PAIR_T, name=None)]), FILE, "type[0].name", r"missing|required", id="type_missing_name"),
    P(S(SUM, types=[W(PAIR_T, name="my pair")]), FILE, "type[0].name", r"my pair", id="type_name_not_identifier"),
    P(
        S(SUM, types=[{"name": "f32", "size": 4, "c": "typedef float f32;"}]),
        FILE,
        "type[0].name",
        r"f32",
        id="type_redefines_builtin",
    ),
    P(S(SUM, types=[PAIR_T, PAIR_T]), FILE, "type[1].name", r"pair", id="type_defined_twice"),
    P(S(SUM, types=[W(PAIR_T, align=8)]), FILE, "type[0].align", r"unknown", id="type_unknown_key"),
    # ---- [[operator]]
    P(
        S(SUM, types=[PAIR_T], ops=[W(PAIR_OP, identity=None)]),
        FILE,
        "operator[0].identity",
        r"missing|required",
        id="operator_missing_identity",
    ),
    P(
        S(SUM, types=[PAIR_T], ops=[W(PAIR_OP, identity="  ")]),
        FILE,
        "operator[0].identity",
        r"empty",
        id="operator_empty_identity",
    ),
    P(
        S(SUM, types=[PAIR_T], ops=[W(PAIR_OP, commutative=None)]),
        FILE,
        "operator[0].commutative",
        r"missing|required",
        id="operator_missing_commutative",
    ),
    P(
        S(SUM, types=[PAIR_T], ops=[W(PAIR_OP, combine=None)]),
        FILE,
        "operator[0].combine",
        r"missing|required",
        id="operator_missing_combine",
    ),
    P(
        S(SUM, types=[PAIR_T], ops=[W(PAIR_OP, type=None)]),
        FILE,
        "operator[0].type",
        r"missing|required",
        id="operator_missing_type",
    ),
    P(
        S(SUM, types=[PAIR_T], ops=[W(PAIR_OP, type="pear")]),
        FILE,
        "operator[0].type",
        r"pear",
        id="operator_unknown_type",
    ),
    P(
        S(SUM, types=[PAIR_T], ops=[W(PAIR_OP, name="sum")]),
        FILE,
        "operator[0].name",
        r"sum",
        id="operator_redefines_builtin",
    ),
    P(S(SUM, types=[PAIR_T], ops=[PAIR_OP, PAIR_OP]), FILE, "operator[1].name", r"padd", id="operator_defined_twice"),
    P(
        S(SUM, types=[PAIR_T], ops=[W(PAIR_OP, name="p add")]),
        FILE,
        "operator[0].name",
        r"p add",
        id="operator_name_not_identifier",
    ),
    P(
        S(SUM, types=[PAIR_T], ops=[W(PAIR_OP, combine_body="pair r = a; return r;")]),
        FILE,
        "operator[0].combine",
        r"both|either|only one|one of",
        id="combine_and_combine_body",
    ),
    P(
        S(SUM, types=[PAIR_T], ops=[W(PAIR_OP, combine=None, combine_body="a.x += b.x; a.y += b.y;")]),
        FILE,
        "operator[0].combine_body",
        r"return",
        id="combine_body_without_return",
    ),
    P(
        S(SUM, types=[PAIR_T], ops=[W(PAIR_OP, lift="{x, x}")]),
        FILE,
        "operator[0].lift",
        r"input",
        id="lift_without_input",
    ),
    P(
        S(SUM, types=[PAIR_T], ops=[W(PAIR_OP, lift_body="pair r = {x, x}; return r;")]),
        FILE,
        "operator[0].lift",
        r"input",
        id="lift_body_without_input",
    ),
    P(
        S(SUM, types=[PAIR_T], ops=[W(PAIR_OP, input="f33", lift="{x, x}")]),
        FILE,
        "operator[0].input",
        r"f33",
        id="input_of_unknown_type",
    ),
    P(
        S(SUM, types=[PAIR_T], ops=[W(PAIR_OP, input="f32")]),
        FILE,
        "operator[0].lift",
        r"missing|required",
        id="input_without_lift",
    ),
    P(
        S(SUM, types=[PAIR_T], ops=[W(PAIR_OP, associative=True)]),
        FILE,
        "operator[0].associative",
        r"unknown",
        id="operator_unknown_key",
    ),
    # ---- names that would break the header (issue 13)
    *[
        P(
            S(SUM, types=[{"name": n, "size": 4, "c": f"typedef struct {{ float x; }} {n};"}]),
            FILE,
            "type[0].name",
            re.escape(n),
            why,
            id=f"type_named_{n}",
        )
        for n, why in [
            ("float", "keyword"),
            ("int", "keyword"),
            ("size_t", "standard|CUDA"),
            ("int32_t", "standard|CUDA"),
            ("float4", "standard|CUDA"),
            ("dim3", "standard|CUDA"),
            ("class", "keyword"),
            ("_Pair", "reserved"),
            ("ag_pair", "ag_"),
        ]
    ],
    *[
        P(S(SUM, prefix=n), FILE, "prefix", re.escape(n), why, id=f"prefix_{n}")
        for n, why in [
            ("int", "keyword"),
            ("math", "shadows"),
            ("stdint", "shadows"),
            ("limits", "shadows"),
            ("cuda_runtime", "shadows"),
            ("String", "shadows"),
        ]
    ],
    P(S(SUM), CLI, "--prefix", r"math", r"shadows", args=["--prefix", "math"], id="cli_prefix_math"),
    P(
        S(SUM, types=[PAIR_T], ops=[W(PAIR_OP, summary="pair sum */ #error")]),
        FILE,
        "operator[0].summary",
        r"comment",
        id="summary_ends_a_comment",
    ),
    P(
        S(SUM, types=[PAIR_T], ops=[W(PAIR_OP, summary="pair /* sum")]),
        FILE,
        "operator[0].summary",
        r"comment",
        id="summary_opens_a_comment",
    ),
    P(
        S(SUM, types=[PAIR_T], ops=[W(PAIR_OP, summary="pair\nsum")]),
        FILE,
        "operator[0].summary",
        r"comment",
        id="summary_with_a_newline",
    ),
    # ---- the spec's C, compiled at generation (nvcc and cc are on the PATH in these tests)
    P(
        S({"op": "padd"}, types=[PAIR_T], ops=[W(PAIR_OP, identity="{0.0f, 0.0f, 1.0f}")]),
        FILE,
        "operator 'padd': identity",
        r"excess",
        id="identity_with_too_many_fields",
    ),
    P(
        S({"op": "padd"}, types=[PAIR_T], ops=[W(PAIR_OP, identity="{1.0f}")]),
        FILE,
        "operator 'padd': identity",
        r"missing initializer",
        id="identity_with_too_few_fields",
    ),
    P(
        S({"op": "padd"}, types=[PAIR_T], ops=[W(PAIR_OP, combine=None, combine_body="pair r = a return r;")]),
        FILE,
        "operator 'padd': combine_body",
        r'expected a ";"',
        id="combine_body_syntax_error",
    ),
    P(
        S({"op": "padd"}, types=[PAIR_T], ops=[W(PAIR_OP, combine="{a.x + b.z, a.y + b.y}")]),
        FILE,
        "operator 'padd': combine",
        r"no member|\bz\b",
        id="combine_unknown_field",
    ),
    P(
        S({"op": "padd"}, types=[PAIR_T], ops=[W(PAIR_OP, input="f32", lift="{x, undefined_thing}")]),
        FILE,
        "operator 'padd': lift",
        r"undefined_thing",
        id="lift_undefined_identifier",
    ),
    # ---- several inputs: a lift of x0, x1, ...
    P(
        S({"op": "padd"}, types=[PAIR_T], ops=[W(PAIR_OP, inputs=["f32", "f32"], lift="{x, x1}")]),
        FILE,
        "operator 'padd': lift",
        r"\bx\b",
        id="inputs_lift_reads_x",
    ),
    P(
        S({"op": "padd"}, types=[PAIR_T], ops=[W(PAIR_OP, inputs=["f32"], lift="{x0, x0}")]),
        FILE,
        "operator[0].inputs",
        r"1 type",
        r"input =",
        id="inputs_only_one",
    ),
    P(
        S({"op": "padd"}, types=[PAIR_T], ops=[W(PAIR_OP, inputs=["f32"] * 9, lift="{x0, x8}")]),
        FILE,
        "operator[0].inputs",
        r"9 type",
        r"2 to 8",
        id="inputs_too_many",
    ),
    P(
        S({"op": "padd"}, types=[PAIR_T], ops=[W(PAIR_OP, inputs=["f32", "f33"], lift="{x0, x1}")]),
        FILE,
        "operator[0].inputs",
        r"unknown type 'f33'",
        id="inputs_unknown_type",
    ),
    P(
        S({"op": "padd"}, types=[PAIR_T], ops=[W(PAIR_OP, inputs=[], lift="{x0, x1}")]),
        FILE,
        "operator[0].inputs",
        r"non-empty list",
        id="inputs_empty",
    ),
    P(
        S({"op": "padd"}, types=[PAIR_T], ops=[W(PAIR_OP, input="f32", inputs=["f32", "f32"], lift="{x0, x1}")]),
        FILE,
        "operator[0].inputs",
        r"either input .* or inputs",
        id="input_and_inputs",
    ),
    P(
        S({"op": "padd"}, types=[PAIR_T], ops=[W(PAIR_OP, inputs=["f32", "f32"])]),
        FILE,
        "operator[0].lift",
        r"missing",
        r"x0, x1",
        id="inputs_without_lift",
    ),
    P(
        S({"op": "padd", "type": "i32"}, types=[PAIR_T], ops=[W(PAIR_OP, inputs=["f32", "u8"], lift="{x0, x1}")]),
        FILE,
        "reduce[0].type",
        r"reads f32, u8; .*widest, 'f32'",
        id="inputs_with_another_type",
    ),
    P(
        dict(
            S(types=[PAIR_T], ops=[W(PAIR_OP, inputs=["f32", "f32"], lift="{x0, x1}")]),
            rows=[{"op": "padd"}],
        ),
        FILE,
        "rows[0].op",
        r"reads 2 input arrays",
        r"one only for \[\[rows\]\]",
        id="inputs_along_rows",
    ),
    P(
        dict(
            S(types=[PAIR_T], ops=[W(PAIR_OP, inputs=["f32", "f32"], lift="{x0, x1}")]),
            transpose=[{"op": "padd"}],
        ),
        FILE,
        "transpose[0].op",
        r"reads 2 input arrays",
        id="inputs_through_a_transpose",
    ),
    P(
        S({"op": "padd"}, ops=[PAIR_OP], types=[W(PAIR_T, c="typedef struct { float x, y } pair;")]),
        FILE,
        "type 'pair': c",
        r"semicolon|;",
        id="type_c_syntax_error",
    ),
    P(
        S({"op": "padd"}, ops=[PAIR_OP], types=[W(PAIR_T, size=12)]),
        FILE,
        "type 'pair': size",
        r"12",
        id="type_size_differs_from_sizeof",
    ),
    P(
        S(
            {"op": "padd"},
            ops=[PAIR_OP],
            types=[W(PAIR_T, c="struct pair { float x = 0, y = 0; }; typedef struct pair pair;")],
        ),
        FILE,
        "type 'pair': c",
        r".",
        id="type_c_is_not_c",
    ),
    P(
        S({"op": "padd"}, types=[PAIR_T], ops=[W(PAIR_OP, combine=None, combine_body="pair r = a;\nreturn r")]),
        FILE,
        "operator 'padd': combine_body",
        r'expected a ";" \(at its end\)',
        id="combine_body_without_final_semicolon",
    ),
    P(S(SUM), CLI, "--ninja", r"one of the files", args=["--ninja", "OUTHEADER"], id="cli_ninja_onto_the_header"),
    P(S(SUM), CLI, "--ninja", r"empty", args=["--ninja", ""], id="cli_ninja_empty"),
    # ---- the command line
    P(S(SUM), CLI, "--output", r"file, not a folder", args=["-o", "SPECFILE"], id="cli_out_is_a_file"),
    P(S(SUM), CLI, "--reduce sum", r"OP:TYPE|expected", args=["--reduce", "sum"], id="cli_reduce_without_type"),
    P(S(SUM), CLI, "--reduce sum:f32:x9", r"x9", args=["--reduce", "sum:f32:x9"], id="cli_reduce_bad_part"),
    P(S(SUM), CLI, "--reduce :f32", r"OP:TYPE|expected", args=["--reduce", ":f32"], id="cli_reduce_empty_op"),
    P(
        S(SUM),
        CLI,
        "--reduce sum:f32:b",
        r"\bb\b|bBLOCK",
        args=["--reduce", "sum:f32:b"],
        id="cli_reduce_b_without_number",
    ),
    P(
        S(SUM),
        CLI,
        "--reduce min:f32:",
        r"''|empty|OP:TYPE",
        args=["--reduce", "min:f32:"],
        id="cli_reduce_trailing_colon",
    ),
    P(S(SUM), CLI, "--reduce min:f33", r"f33", args=["--reduce", "min:f33"], id="cli_reduce_unknown_type"),
    P(S(SUM), CLI, "--reduce min:f32:b300", r"\b300\b", args=["--reduce", "min:f32:b300"], id="cli_reduce_block_300"),
    P(S(SUM), CLI, "--reduce min:f32:t65", r"\b65\b", args=["--reduce", "min:f32:t65"], id="cli_reduce_items_65"),
    P(S(SUM), CLI, "--reduce and:f32", r"\band\b", args=["--reduce", "and:f32"], id="cli_reduce_not_applicable"),
    P(
        S(SUM),
        CLI,
        "--reduce sum:f32",
        r"v_reduce_sum_f32.*reduce\[0\].*drop one",
        args=["--reduce", "sum:f32"],
        id="cli_reduce_duplicates_file_entry",
    ),
    P(
        S(SUM),
        CLI,
        "--reduce min:f32",
        r"v_reduce_min_f32.*--reduce min:f32.*drop one",
        args=["--reduce", "min:f32", "--reduce", "min:f32"],
        id="cli_reduce_given_twice",
    ),
    P(
        S(SUM),
        CLI,
        "--reduce min:f32:b256:b128",
        r"'b128' conflicts with 'b256'",
        args=["--reduce", "min:f32:b256:b128"],
        id="cli_reduce_two_blocks",
    ),
    P(
        S(SUM),
        CLI,
        "--reduce min:f32:t4:t8",
        r"'t8' conflicts with 't4'",
        args=["--reduce", "min:f32:t4:t8"],
        id="cli_reduce_two_items",
    ),
    P(
        S(SUM),
        CLI,
        "--reduce min:f32:b0256",
        r"leading zero",
        args=["--reduce", "min:f32:b0256"],
        id="cli_reduce_leading_zero",
    ),
    P(
        S(SUM),
        CLI,
        "--scan sum:f32:inclusive:exclusive",
        r"'exclusive' conflicts with 'inclusive'",
        args=["--scan", "sum:f32:inclusive:exclusive"],
        id="cli_scan_two_kinds",
    ),
    # ---- issue 43: names checked whole, and short enough for file names
    P(S(SUM, prefix="v\n"), FILE, "prefix", r"identifier", id="prefix_ending_in_a_newline"),
    P(S(SUM, prefix="\nv"), FILE, "prefix", r"identifier", id="prefix_starting_with_a_newline"),
    P(S({"op": "m"}, ops=[W(F32_OP, name="m\n")]), FILE, "operator[0].name", r"identifier", id="op_name_newline"),
    P(S(W(SUM, name="mine\n")), FILE, "reduce[0].name", r"identifier", id="instance_name_newline"),
    P(S(SUM, types=[W(PAIR_T, name="pair\n")]), FILE, "type[0].name", r"identifier", id="type_name_newline"),
    P(S(W(SUM, name="n" * 65)), FILE, "reduce[0].name", r"65 characters, more than 64", id="name_too_long"),
    P(
        S(SUM, types=[{"name": "t" * 65, "size": 4, "c": f"typedef float {'t' * 65};"}]),
        FILE,
        "type[0].name",
        r"more than 64.*255",
        id="type_name_too_long",
    ),
    P(S(SUM, prefix="p" * 33), FILE, "prefix", r"at most 32", id="prefix_too_long"),
    P(S(SUM), CLI, "--prefix", r"identifier", args=["--prefix", "v\n"], id="cli_prefix_newline"),
    # ---- issue 43: the generator's names are its own
    P(
        S(SUM, types=[{"name": "V_TUNING", "size": 4, "c": "typedef float V_TUNING;"}]),
        FILE,
        "type[0].name",
        r"macro",
        id="type_named_as_a_header_macro",
    ),
    P(S(W(SUM, name="V_TUNING"), prefix="V"), FILE, "reduce[0].name", r"macro", id="function_named_as_a_macro"),
    P(
        S(SUM, types=[{"name": "pp", "size": 4, "c": "typedef float pp; typedef float v_reduce_sum_f32;"}]),
        FILE,
        "type 'pp': c",
        r"v_reduce_sum_f32.*header declares",
        id="type_c_declares_a_public_function_name",
    ),
    P(
        S(SUM, types=[{"name": "pp", "size": 4, "c": "typedef float pp; typedef pp ag_seg_f32;"}]),
        FILE,
        "type 'pp': c",
        r"ag_seg_f32.*ag_",
        id="type_c_declares_an_internal_name",
    ),
    P(
        S({"op": "m"}, ops=[W(F32_OP, combine="ag_op_combine(a, b)")]),
        FILE,
        "operator 'm': combine",
        r"ag_op_combine",
        id="combine_uses_an_internal_name",
    ),
    P(
        S({"op": "m"}, ops=[W(F32_OP, combine=None, combine_body="float V_H = a + b; return V_H;")]),
        FILE,
        "operator 'm': combine_body",
        r"V_H.*macro",
        id="combine_body_uses_the_header_guard",
    ),
    P(
        S(SUM, {"op": "sum", "type": "f32", "name": "reduce_sum_f32_nccl_all"}, nccl=True),
        FILE,
        "reduce[1].name",
        r"generated twice",
        id="name_taken_by_a_function_across_ranks",
    ),
    # ---- issue 43: the wrong key no more
    P(
        S({"op": "padd"}, types=[W(PAIR_T, c="struct pair { float x, y; };")], ops=[PAIR_OP]),
        FILE,
        "type 'pair': c",
        r"typedef",
        id="type_that_is_not_a_typedef",
    ),
    # ---- issue 43: nothing dropped without a word
    P(S({"op": "argmin", "type": "f32"}, nccl=True), FILE, "nccl", r"argmin.*index", id="nccl_with_nothing_across"),
    P(
        S({"op": "dot"}, ops=[DOT_OP], nccl=True),
        FILE,
        "nccl",
        r"dot.*2 input arrays",
        id="nccl_with_only_several_inputs",
    ),
    P(
        {"prefix": "v", "nccl": True, "transpose": [{"type": "f32"}]},
        FILE,
        "nccl",
        r"no \[\[reduce\]\]",
        id="nccl_no_reduce",
    ),
    P(
        {"prefix": "v", "operator": [F32_OP], "transpose": [{"op": "m"}]},
        FILE,
        "transpose[0].op",
        r"no lift",
        id="transpose_through_an_operator_without_a_lift",
    ),
    # ---- issue 43: the compile check takes warnings as errors
    P(
        S({"op": "m"}, ops=[W(F32_OP, combine=None, combine_body="if (a < b) return b;")]),
        FILE,
        "operator 'm': combine_body",
        r"missing return",
        id="combine_body_that_can_fall_off_its_end",
    ),
    P(
        S({"op": "m"}, ops=[W(F32_OP, combine=None, combine_body="float r = a + b; /* return r; */")]),
        FILE,
        "operator[0].combine_body",
        r"no return",
        id="combine_body_return_in_a_comment",
    ),
    P(
        S({"op": "m"}, ops=[W(F32_OP, combine=None, combine_body="a + b; // return a;\nreturn a;")]),
        FILE,
        "operator 'm': combine_body",
        r"no effect",
        id="combine_body_result_unused",
    ),
    P(
        S({"op": "u"}, types=[U2_T], ops=[U2_OP]),
        FILE,
        "operator 'u': identity",
        r"narrowing",
        id="identity_narrowing",
    ),
    P(S(SUM), CLI, "--prefix", r"9a", args=["--prefix", "9a"], id="cli_prefix_not_identifier"),
    P(S(SUM), CLI, "--prefix", r"__v", args=["--prefix", "__v"], id="cli_prefix_reserved"),
    P(NO_SPEC, CLI, "--prefix", r"missing|give", args=["--reduce", "sum:f32"], id="cli_no_spec_no_prefix"),
    P(
        NO_SPEC,
        CLI,
        "--reduce sum",
        r"OP:TYPE|expected",
        args=["--prefix", "v", "--reduce", "sum"],
        id="cli_no_spec_bad_reduce",
    ),
    P(NO_SPEC, CLI, None, r"spec|--reduce", id="cli_nothing_to_do"),
    P(S(SUM), CLI, None, r"--bogus", args=["--bogus"], id="cli_unknown_option"),
]


def _make_spec(tmp_path, spec):
    if spec is NO_SPEC:
        return None
    path = tmp_path / "spec.toml"
    if spec is MISSING:
        return path
    if spec is DIRECTORY:
        path.mkdir()
    elif isinstance(spec, bytes):
        path.write_bytes(spec)
    else:
        write_spec(path, spec)
    return path


def assert_one_error_line(r, source, key, problems):
    assert "Traceback" not in r.stderr, r.stderr
    assert r.returncode == 2, f"exit code {r.returncode}\nstdout: {r.stdout}\nstderr: {r.stderr}"
    assert r.stdout == "", f"nothing should be printed on stdout: {r.stdout!r}"
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and r.stderr.endswith("\n"), f"expected exactly one line on stderr:\n{r.stderr}"
    line = lines[0]
    assert line.startswith("error: "), line
    assert source in line, f"the line should name the source {source!r}: {line}"
    rest = line[line.index(source) + len(source) :]
    if key is not None:
        assert key in rest, f"the line should name the key {key!r} after the source: {line}"
        rest = rest[rest.index(key) + len(key) :]
    assert rest.strip(" :"), f"the line should say what is wrong: {line}"
    for pattern in problems:
        assert re.search(pattern, rest, re.IGNORECASE), f"expected /{pattern}/ in the problem: {line}"


@pytest.mark.parametrize("spec,args,source,key,problems", CASES)
def test_malformed_input_is_one_error_line_and_writes_nothing(tmp_path, spec, args, source, key, problems):
    path = _make_spec(tmp_path, spec)
    out, inc = tmp_path / "out", tmp_path / "inc"
    if "OUTHEADER" in args:  # --ninja onto the header the run writes
        args = [inc / "v.h" if a == "OUTHEADER" else a for a in args]
    if "SPECFILE" in args:  # an output folder that is a file: the spec file itself
        args = [path if a == "SPECFILE" else a for a in args]
        key = str(path)
        argv = [path, "--header-dir", inc] + args
    else:
        argv = ([path] if path is not None else []) + ["-o", out, "--header-dir", inc] + args
    r = run_gen(*argv)
    if source == FILE:
        source = str(path)
    assert_one_error_line(r, source, key, problems)
    assert not out.exists(), f"{out} was created: {list(out.iterdir())}"
    assert not inc.exists(), f"{inc} was created: {list(inc.iterdir())}"


def test_base_tables_of_the_cases_are_valid(tmp_path):
    """The error cases are variations of these: on their own they must generate."""
    spec = write_spec(
        tmp_path / "ok.toml",
        S(
            SUM,
            {"op": "padd"},
            {"op": "bigop", "items": 8},
            {"op": "mat3mul", "items": 16},
            types=[PAIR_T, BIG_T, MAT3_T],
            ops=[PAIR_OP, BIG_OP, MAT3_OP],
        ),
    )
    gen_ok(spec, "-o", tmp_path / "out", "--reduce", "min:f32:b128:t4")
    names = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert names == [
        "v.h",
        "v_reduce_bigop_big.cu",
        "v_reduce_mat3mul_mat3u.cu",
        "v_reduce_min_f32.cu",
        "v_reduce_padd_pair.cu",
        "v_reduce_sum_f32.cu",
    ]


def _snapshot(d):
    return {p.relative_to(d): (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(d.rglob("*")) if p.is_file()}


@pytest.mark.parametrize(
    "bad",
    [
        pytest.param(S(SUM, {"op": "min", "type": "f32", "block": 300}), id="second_table_bad"),
        pytest.param(S(SUM, types=[W(PAIR_T, size=0)]), id="bad_type"),
        pytest.param('prefix = "v"\n[[reduce]\n', id="invalid_toml"),
    ],
)
def test_error_leaves_existing_output_untouched(tmp_path, bad):
    """An earlier good output must survive a failed run unchanged (no stale-file cleanup,
    no partially written file)."""
    out = tmp_path / "out"
    good = write_spec(tmp_path / "good.toml", S(SUM, {"op": ["min", "max"], "type": "f32"}))
    gen_ok(good, "-o", out)
    (out / "notes.txt").write_text("mine\n")
    before = _snapshot(out)
    assert len(before) == 5
    bad_path = write_spec(tmp_path / "bad.toml", bad)
    r = run_gen(bad_path, "-o", out)
    assert r.returncode == 2, r.stderr
    assert _snapshot(out) == before
    assert not list(out.glob("*.tmp"))


def test_error_is_reported_before_any_output_even_for_the_last_entry(tmp_path):
    """Many valid instances and one bad one at the very end: still nothing written."""
    spec = S(
        {"op": ["sum", "min", "max", "prod"], "type": ["i32", "u32", "f32", "f64"]},
        {"op": "sum", "type": "u8", "items": 70},
    )
    path = write_spec(tmp_path / "spec.toml", spec)
    out = tmp_path / "out"
    r = run_gen(path, "-o", out)
    assert_one_error_line(r, str(path), "reduce[1].items", [r"\b70\b"])
    assert not out.exists()


def test_error_line_is_not_wrapped_for_long_toml_errors(tmp_path):
    path = tmp_path / "spec.toml"
    path.write_text('prefix = "v"\n' + "# comment\n" * 50 + '[[reduce]]\nop = "sum" type = "f32"\n')
    r = run_gen(path, "-o", tmp_path / "out")
    assert_one_error_line(r, str(path), None, [r"toml"])
    assert not (tmp_path / "out").exists()


def test_segmented_reduce_too_wide_for_shared_memory_is_an_error(tmp_path):
    """A segmented reduce whose tile is not held in shared memory keeps its folds there instead:
    one that would not fit is refused, not left to fail in ptxas."""
    spec = {"prefix": "v", "segreduce": [{"op": "sum", "type": "f32", "block": 1024, "items": 12}]}
    path = write_spec(tmp_path / "spec.toml", spec)
    r = run_gen(path, "-o", tmp_path / "out")
    assert_one_error_line(r, str(path), "segreduce[0].items", [r"shared memory"])
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "arg,pattern",
    [
        ("sum:f32:x", r"'x' is neither"),
        ("sum", r"OP:TYPE"),
        ("sum:f32:b100", r"power of two"),
        ("sum:q32", r"unknown type"),
    ],
)
def test_command_line_scan_errors(tmp_path, arg, pattern):
    r = run_gen("--prefix", "v", "--scan", arg, "-o", tmp_path / "out")
    assert_one_error_line(r, CLI, None, [pattern])
    assert not (tmp_path / "out").exists()


def test_segmented_reduce_of_1024_threads_takes_a_default_tile_that_fits(tmp_path):
    """A block of 1024 without items: the default tile shrinks until its folds fit in shared
    memory, rather than an error that blames items, which the user never set."""
    spec = {"prefix": "v", "segreduce": [{"op": ["sum", "argmin"], "type": ["f32", "f64"], "block": 1024}]}
    path = write_spec(tmp_path / "spec.toml", spec)
    r = gen_ok(path, "--list")
    assert r.stdout.count("_b1024_t") == 4


@pytest.mark.parametrize("prim", ["reduce", "scan", "segscan", "segreduce"])
@pytest.mark.parametrize("block", [32, 64, 128, 256, 512, 1024])
def test_every_block_size_has_a_default_tile(tmp_path, prim, block):
    """No combination of a block size with the default items is refused."""
    types = [{"name": "mat3u", "size": 36, "c": "typedef struct { uint32_t m[9]; } mat3u;"}]
    ops = [dict(MAT3_OP)]
    table = [
        {"op": ["sum", "argmax", "ksum"], "type": ["f32", "f64"], "block": block},
        {"op": ["sum", "xor"], "type": ["u8", "i16", "u64"], "block": block},
        {"op": "mat3mul", "block": block},
    ]
    spec = {"prefix": "v", "type": types, "operator": ops, prim: table}
    if prim == "segscan":
        table.append({"op": "sum", "type": "f32", "heads": "keys", "key": "i64", "block": block, "name": "k"})
    path = write_spec(tmp_path / "spec.toml", spec)
    gen_ok(path, "--list")


# ---- issue 43: what is not offered is said, and what is offered is not lost


def test_a_reduce_left_out_across_ranks_is_a_note_naming_it_and_why(tmp_path):
    path = write_spec(tmp_path / "spec.toml", S({"op": ["argmin", "sum"], "type": "f32"}, nccl=True))
    r = run_gen(path, "-o", tmp_path / "out", "--no-compile-check")
    assert r.returncode == 0, r.stderr
    assert r.stderr.splitlines() == [
        "note: v_reduce_argmin_f32: not across ranks (nccl): operator 'argmin' has a lift that reads the index i,"
        " which a rank's part does not know"
    ]
    assert "v_reduce_sum_f32_nccl_all(" in (tmp_path / "out" / "v.h").read_text()


@pytest.mark.parametrize(
    "lift_body",
    [
        "w r; r.i = x; return r.i;",  # a member named i
        "w r; w *p = &r; p->i = x; return *p;",
        "struct { float i; } q; q.i = x; w r; r.i = q.i; return r;",  # found by the spec fuzzer
        "w r; r.i = x; /* not i */ return r; // i",
    ],
)
def test_a_lift_that_names_a_member_i_still_goes_across_ranks(tmp_path, lift_body):
    from assocgen.spec import not_across_ranks, parse

    wt = {"name": "w", "size": 4, "c": "typedef struct { float i; } w;"}
    op = {"name": "m", "type": "w", "input": "f32", "identity": "{0.0f}", "commutative": True}
    op |= {"combine": "{a.i + b.i}", "lift_body": lift_body.replace("return r.i;", "return r;")}
    spec = parse(S({"op": "m"}, types=[wt], ops=[op], nccl=True), "s.toml")
    assert spec.notes == [] and not_across_ranks(spec.instances[0]) == ""


def test_a_lift_that_reads_i_does_not_go_across_ranks():
    from assocgen.spec import not_across_ranks, parse

    op = {"name": "m", "type": "f64", "input": "f32", "identity": "0.0", "commutative": True, "combine": "a + b"}
    spec = parse(S({"op": "m"}, SUM, ops=[op | {"lift": "(double)x * (double)i"}], nccl=True), "s.toml")
    assert "reads the index i" in not_across_ranks(spec.instances[0])
    assert spec.notes[0].startswith("v_reduce_m_f32: not across ranks (nccl)")


def test_the_longest_names_keep_every_file_name_within_255_bytes(tmp_path):
    """Every name at its longest (prefix 32, others 64): the longest file written, with the .tmp it
    is written as first, stays within the file system's 255 bytes."""
    t, o = "t" * 64, "o" * 64
    spec = {
        "prefix": "p" * 32,
        "type": [{"name": t, "size": 4, "c": f"typedef float {t};"}],
        "operator": [{"name": o, "type": t, "identity": "{0.0f}", "commutative": True, "combine": "a"}],
        "segscan": [{"op": o, "kind": "exclusive", "heads": "keys", "key": "u64"}],
        "rows": [{"op": o, "kind": "exclusive"}],
        "reduce": [{"op": o, "name": "n" * 64}],
    }
    r = gen_ok(write_spec(tmp_path / "spec.toml", spec), "-o", tmp_path / "out", "--list-files")
    names = [Path(line).name for line in r.stdout.splitlines()]
    assert max(len((n + ".tmp").encode()) for n in names) <= 255
    assert any(n.startswith("p" * 32 + "_exsegscan_") for n in names)
