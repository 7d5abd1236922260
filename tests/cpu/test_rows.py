"""Reduces and scans along rows and reduces down columns on the CPU: spec errors (one line, naming
the key), what the generated code holds (a kernel for each group of lanes, the long-row kernels,
column order for a non-commutative operator, 16-byte words only where an element fits them; a
scan's carry across rounds and its long rows by the scan family's kernel), the header, and nvcc
over a small spec (the GPU test: the rows instances of tests/gpu/run.py)."""

import pytest

from assocgen import emit, tuning
from assocgen.spec import SpecError, parse

from .util import nvcc_problems

MAT2 = {
    "type": [{"name": "mat2u", "size": 16, "c": "typedef struct { uint32_t a, b, c, d; } mat2u;"}],
    "operator": [
        {
            "name": "mat2mul",
            "type": "mat2u",
            "identity": "{1u, 0u, 0u, 1u}",
            "commutative": False,
            "combine_body": "mat2u r;\nr.a = a.a * b.a + a.b * b.c;\nr.b = a.a * b.b + a.b * b.d;\n"
            "r.c = a.c * b.a + a.d * b.c;\nr.d = a.c * b.b + a.d * b.d;\nreturn r;",
        }
    ],
}


def _spec(*tables, kind="rows"):
    return {"prefix": "t", **MAT2, kind: list(tables)}


@pytest.mark.parametrize(
    "table,key,words",
    [
        ({"type": "f32"}, "op", "missing"),
        ({"op": "sum"}, "type", "needs a type"),
        ({"op": "sum", "type": "f7"}, "type", "unknown type 'f7'"),
        ({"op": "mat2mul", "type": "f32"}, "type", "reduces mat2u"),
        ({"op": ["sum", "max"], "type": "f32", "name": "x"}, "name", "exactly one"),
        ({"op": "sum", "type": "f32", "block": 128}, "block", "unknown key"),
        ({"op": "sum", "type": "f32", "kind": "prefix"}, "kind", 'none of "reduce", "inclusive", "exclusive"'),
        ({"op": "sum", "type": "f32", "kind": ["inclusive", "inclusive"]}, "kind", "listed twice"),
        ({"op": "sum", "type": "f32", "kind": ["reduce", "exclusive"], "name": "x"}, "name", "exactly one"),
    ],
)
def test_spec_errors_name_the_key(table, key, words):
    with pytest.raises(SpecError) as e:
        parse(_spec(table), "s.toml")
    assert f"rows[0].{key}" in str(e.value) and words in str(e.value), str(e.value)


def _render(table, kind="rows"):
    spec = parse(_spec(table, kind=kind), "s.toml")
    files = emit.render(spec, "t.h")
    return spec.instances[0], next(v for k, v in files.items() if k.endswith(".cu")), files["t.h"]


def test_every_group_of_lanes_and_the_long_rows_kernels():
    inst, src, header = _render({"op": "sum", "type": "f32"})
    assert inst.public_name == "t_rows_reduce_sum_f32"
    for g in tuning.RowsShape.GROUPS:
        assert f"{inst.kernel_name}_g{g}(" in src
    assert f"{inst.kernel_name}_long(" in src and f"{inst.kernel_name}_parts(" in src
    assert "const uint4 w = *(const uint4 *)(row + c);" in src  # 4 floats a word
    assert "acc = ag_group_fold_32(acc);" in src  # commutative: lanes fold across rounds, then once
    head = "cudaError_t t_rows_reduce_sum_f32(const float *d_in, size_t rows, size_t cols, size_t pitch,\n"
    assert head + "    float *d_out," in header
    assert "size_t t_rows_reduce_sum_f32_workspace_bytes(size_t rows, size_t cols);" in header
    assert "REDUCES ALONG ROWS" in header


def test_a_non_commutative_operator_folds_each_round_in_column_order():
    _, src, _ = _render({"op": "mat2mul"})
    assert "acc = ag_op_combine(acc, ag_group_fold_8(v));     /* the round's fold, in order */" in src
    assert "uint4" not in src and "words" not in src  # 16-byte elements: one a lane a round


def test_the_index_a_lift_reads_is_the_column():
    _, src, _ = _render({"op": "argmin", "type": "f32"})
    assert "v = ag_op_combine(v, ag_op_lift(x[e], c + e));" in src


def test_scans_along_rows_carry_the_rounds_before_and_scan_long_rows_by_the_scan_family():
    inst, src, header = _render({"op": "mat2mul", "kind": "exclusive"})
    assert inst.public_name == "t_rows_exscan_mat2mul_mat2u"
    for g in tuning.RowsShape.GROUPS:
        assert f"ag_rows::{inst.kernel_name}_g{g}," in src  # the host's table of group kernels
    assert f"{inst.kernel_name}_long(" in src  # a block a row
    # the group's lanes before this one, after the rounds before; then the group's total
    assert "before = j == 0 ? carry : ag_op_combine(carry, before);" in src
    assert "carry = ag_op_combine(carry, ag_shfl(upto, (int)last));" in src
    assert "y = ag_op_finalize(before);" in src  # exclusive: the identity at column 0
    # a few long rows by the whole GPU in one launch: the scan family's kernel in its own
    # namespace, its tickets row after row, a look-back tree a row
    assert "namespace ag_line {" in src and "namespace ag_rows {" in src
    assert "return ag_line::ag_scan_rows(d_in, rows, cols, pitch, d_out, out_pitch, NULL, d_work," in src
    assert "const unsigned int row = ticket / row_tiles, tile = ticket - row * row_tiles;" in src
    assert "ag_tile_prefix(&tile_prefix, &warp_totals[7], row_slots, row_tiles, tile, lane, warp, init)" in src
    assert "ag_line::ag_scan(" not in src and "_clear" not in src  # the one-line scan's entry: not here
    head = "cudaError_t t_rows_exscan_mat2mul_mat2u(const mat2u *d_in, size_t rows, size_t cols, size_t pitch,\n"
    assert head + "    mat2u *d_out, size_t out_pitch," in header
    assert "SCANS ALONG ROWS" in header
    _, src, _ = _render({"op": "sum", "type": "f32", "kind": "inclusive"})
    assert "*(uint4 *)(row + c) = w;" in src  # 4 floats a word out too


def test_columns_fold_down_the_rows_in_order():
    inst, src, header = _render({"op": "mat2mul"}, kind="cols")
    assert inst.public_name == "t_cols_reduce_mat2mul_mat2u"
    for g in tuning.ColsShape.GROUPS:
        assert f"{inst.kernel_name}_g{g}(" in src
    assert "acc[0] = ag_op_combine(acc[0], ag_op_lift(*at, r));" in src  # the lift's index: the row
    assert "v = ag_op_combine(v, slices[k][k0]);" in src  # the slices in order
    assert "acc = ag_op_combine(acc, part[y * cols + c]);" in src  # the chunks in order
    assert "REDUCES DOWN COLUMNS" in header
    assert "for (size_t r = lo; r < hi; ++r, at += pitch)" in src  # a contiguous slice of rows a lane
    _, src, _ = _render({"op": "sum", "type": "u8"}, kind="cols")  # 16 columns a lane: 512 a block
    assert "for (unsigned int k0 = threadIdx.x; k0 < 512; k0 += 256)" in src


def test_a_commutative_operator_reads_consecutive_rows_across_a_blocks_lanes():
    """Row lane q of a block takes rows q, q + S, ... of the chunk (S lanes), so the block reads S
    consecutive rows at a time; a non-commutative one keeps contiguous slices (above)."""
    _, src, _ = _render({"op": "sum", "type": "f32"}, kind="cols")
    assert "for (size_t r = lo; r < hi; r += step, at += stride)" in src
    assert "const size_t lo = first + q < last ? first + q : last, hi = last;" in src
    assert "c < cols ? cols - c : 0, words, 64);" in src  # g = 4 column lanes: 8 warps x 8 row lanes
    assert "++r, at += pitch" not in src


@pytest.mark.parametrize(
    "kind,tables,count",
    [
        ("rows", [{"op": ["sum", "argmin"], "type": ["f32", "u8", "f64"]}, {"op": "mat2mul"}], 7),
        ("rows", [{"op": ["sum", "argmin"], "type": ["f32", "u8"], "kind": ["inclusive", "exclusive"]}], 8),
        ("rows", [{"op": ["mat2mul"], "kind": ["inclusive", "exclusive", "reduce"]}], 3),
        ("cols", [{"op": ["sum", "argmin"], "type": ["f32", "u8"]}, {"op": "mat2mul"}], 5),
    ],
)
def test_nvcc_compiles_instances(tmp_path, nvcc, kind, tables, count):  # noqa: ARG001 - nvcc: present
    spec = parse(_spec(*tables, kind=kind), "s.toml")
    files = emit.render(spec, "t.h")
    compiled, problems = nvcc_problems(files, tmp_path)
    assert compiled == count and not problems, "\n".join(problems)
