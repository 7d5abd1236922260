"""The transpose family on the CPU: spec errors (one line, nothing written), the shapes the tuning
module resolves, what the generated code holds for each unit path, and nvcc over element sizes x
tile shapes (the GPU test: tests/gpu/transpose/run.py)."""

import pytest

from assocgen import emit, tuning
from assocgen.spec import SpecError, parse

from .util import WARNING, assert_one_error_line, gen_ok, nvcc_compile_all, run_gen

TYPES = [
    {"name": "rgb", "size": 12, "c": "typedef struct { float r, g, b; } rgb;"},
    {"name": "rgb8", "size": 3, "c": "typedef struct { unsigned char r, g, b; } rgb8;"},
    {"name": "c128", "size": 16, "c": "typedef struct { double re, im; } c128;"},
]


def _spec(**table):
    return {"prefix": "t", "type": TYPES, "transpose": [table]}


@pytest.mark.parametrize(
    "table,key,words",
    [
        ({}, "type", "missing"),
        ({"type": "f99"}, "type", "unknown type"),
        ({"type": "f32", "tile": 48}, "tile", "not a power of two"),
        ({"type": "f32", "rows": 3}, "rows", "not a power of two"),
        ({"type": "f32", "tile": 8, "rows": 16}, "rows", "more than the tile"),
        ({"type": "u8", "tile": 64}, "tile", "tiles of 128"),
        ({"type": "u8", "remedy": "pad"}, "remedy", "swizzle"),
        ({"type": "rgb", "remedy": "swizzle"}, "remedy", "use remedy = 'pad'"),
        ({"type": "f32", "remedy": "diagonal"}, "remedy", "not one of"),
        ({"type": "f64", "tile": 128}, "tile", "48 KiB"),
        ({"type": ["f32", "f64"], "name": "x"}, "name", "exactly one type"),
        ({"type": "f32", "block": 256}, "block", "unknown key"),
        ({"type": "f32", "naive": True, "remedy": "pad"}, "remedy", "no bank remedy"),
        ({"type": "f32", "naive": True, "tile": 8, "rows": 16}, "rows", "at most the tile"),
        ({"type": "f32", "naive": "yes"}, "naive", "true or false"),
    ],
)
def test_spec_errors_name_the_key(table, key, words):
    with pytest.raises(SpecError) as e:
        parse(_spec(**table), "s.toml")
    assert f"transpose[0].{key}" in str(e.value) and words in str(e.value), str(e.value)


def test_a_bad_transpose_is_one_line_and_writes_nothing(tmp_path):
    spec = tmp_path / "s.toml"
    spec.write_text('prefix = "t"\n[[transpose]]\ntype = "u8"\nremedy = "pad"\n')
    r = run_gen(spec, "-o", tmp_path / "out")
    assert_one_error_line(r)
    assert "transpose[0].remedy" in r.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "size,tile,rows,unit,per_word,stride",
    [
        (1, 128, 8, 4, 4, 32),
        (2, 64, 8, 4, 2, 32),
        (4, 64, 16, 4, 1, 65),
        (8, 32, 8, 4, 1, 66),
        (12, 32, 8, 4, 1, 99),
        (16, 32, 16, 4, 1, 132),
        (36, 32, 8, 4, 1, 297),
        (3, 32, 4, 1, 1, 100),
        (1024, 4, 4, 4, 1, 1024),
    ],
)
def test_default_shapes(size, tile, rows, unit, per_word, stride):
    sh = tuning.transpose_shape(size)
    assert (sh.tile, sh.rows, sh.unit, sh.per_word, sh.stride) == (tile, rows, unit, per_word, stride)
    assert sh.smem_bytes <= 48 * 1024


def test_padding_puts_a_column_on_distinct_banks():
    """The out path reads unit q of column j at row q / per_elem: 32 lanes, 32 banks."""
    for size in (4, 8, 12, 16, 36):
        sh = tuning.transpose_shape(size, remedy="pad")
        banks = {(q // sh.per_elem * sh.stride + 5 * sh.per_elem + q % sh.per_elem) % 32 for q in range(32)}
        assert len(banks) == 32, size


def _render(table):
    spec = parse(_spec(**table), "s.toml")
    files = emit.render(spec, "t.h")
    return spec.instances[0], next(v for k, v in files.items() if k.endswith(".cu")), files["t.h"]


def test_sub_word_elements_travel_as_words_transposed_in_registers():
    _, src, _ = _render({"type": "u8"})
    assert "__byte_perm" in src and "ag_transpose_words(w);" in src
    assert "return r * 32 + (c ^ (r / 4));" in src  # the swizzle keys on the word's row group


def test_the_header_documents_the_transpose():
    inst, _, header = _render({"type": "rgb"})
    assert "size_t t_transpose_rgb_workspace_bytes(size_t rows, size_t cols, size_t batch);" in header
    assert "cudaError_t t_transpose_rgb(const rgb *d_in, size_t in_pitch, size_t in_stride," in header
    assert "TRANSPOSES" in header and "t_transpose_rgb" in inst.public_name


@pytest.mark.slow
def test_nvcc_compiles_element_sizes_by_tile_shapes(tmp_path, nvcc):  # noqa: ARG001 - nvcc: present
    spec = tmp_path / "s.toml"
    types = "".join(f'[[type]]\nname = "{t["name"]}"\nsize = {t["size"]}\nc = "{t["c"]}"\n' for t in TYPES)
    tables = [
        ("u8", ""),
        ("i16", ""),
        ("f32", ""),
        ("f64", ""),
        ("rgb", ""),
        ("rgb8", ""),
        ("c128", ""),
        ("f32", 'tile = 32\nrows = 2\nremedy = "swizzle"\nname = "a"\n'),
        ("f64", 'remedy = "none"\nname = "b"\n'),
        ("c128", 'tile = 8\nrows = 8\nname = "c"\n'),
        ("u8", 'rows = 32\nremedy = "none"\nname = "d"\n'),
    ]
    body = "".join(f'[[transpose]]\ntype = "{t}"\n{extra}' for t, extra in tables)
    spec.write_text(f'prefix = "t"\n{types}{body}')
    out = tmp_path / "out"
    gen_ok(spec, "-o", out)
    results = nvcc_compile_all(sorted(out.glob("*.cu")), out)
    problems = [f"{cu}: {r.stderr}" for cu, r in results.items() if r.returncode or WARNING.search(r.stderr)]
    assert len(results) == len(tables) and not problems, "\n".join(problems)


@pytest.mark.parametrize(
    "size,tile,skew",
    [(4, 0, 7), (8, 0, 3), (16, 0, 1), (32, 0, 0), (12, 0, 0), (1, 0, 0), (2, 0, 0), (3, 0, 0), (4, 4, 0), (4, 8, 7)],
)
def test_sector_skew(size, tile, skew):
    """Whole-word elements that tile a 32-byte sector, in tiles of whole sectors, get the rows
    that let an output row's window start on a sector; the tile's shared memory counts them."""
    sh = tuning.transpose_shape(size, tile)
    assert sh.skew == skew
    assert sh.smem_bytes == (sh.tile + skew) * sh.stride * sh.unit


def test_only_skewed_shapes_carry_windows():
    _, f32, _ = _render({"type": "f32"})
    assert "ag_skew(row, extra)" in f32 and "ag_tile_out(tile, dst, out_pitch, lane, warp, 7, first);" in f32
    pick = "const auto kernel = sectors % 32 ? t_k_transpose_f32_t64_r16_pad_skew : t_k_transpose_f32_t64_r16_pad;"
    assert pick in f32
    _, rgb, _ = _render({"type": "rgb"})
    assert "extra" not in rgb and "ag_skew" not in rgb and "_skew" not in rgb


def test_the_seeds_naive_kernel_has_no_tile():
    inst, src, header = _render({"type": "u8", "naive": True, "name": "u8_naive"})
    assert inst.kernel_name == "t_k_transpose_u8_t32_r8_naive"
    assert "__shared__" not in src and "ag_tile_in" not in src and "ag_at" not in src
    assert "ag_elem(dst + (size_t)c * out_pitch + r, src + (size_t)r * in_pitch + c);" in src
    assert "naive (no shared memory)" in header


WIDEN = {"name": "widen", "type": "f64", "input": "f32", "identity": "0.0", "commutative": True}
WIDEN.update(combine="a + b", lift="(double)x")


def _op_spec(**table):
    return {"prefix": "t", "type": TYPES, "operator": [WIDEN], "transpose": [table]}


@pytest.mark.parametrize(
    "table,key,words",
    [
        ({"op": "nope"}, "op", "unknown operator 'nope'"),
        ({"op": "widen", "type": "f32"}, "type", "leave type out"),
        ({"op": "widen", "naive": True}, "naive", "takes no op"),
    ],
)
def test_lift_spec_errors_name_the_key(table, key, words):
    with pytest.raises(SpecError) as e:
        parse(_op_spec(**table), "s.toml")
    assert f"transpose[0].{key}" in str(e.value) and words in str(e.value)


def test_a_lift_maps_elements_on_the_way_into_the_tile():
    spec = parse(_op_spec(op="widen"), "s.toml")
    inst = spec.instances[0]
    files = emit.render(spec, "t.h")
    src, header = files["t_transpose_widen.cu"], files["t.h"]
    assert inst.kernel_name == "t_k_transpose_widen_f32_to_f64_t32_r8_pad"
    assert "cudaError_t t_transpose_widen(const float *d_in, size_t in_pitch, size_t in_stride," in header
    assert "double *d_out, size_t out_pitch, size_t out_stride," in header
    assert "static __device__ __forceinline__ double ag_op_lift(float x, size_t i)" in src
    assert "ag_op_combine" not in src and "ag_op_identity" not in src and "ag_tile_in(" not in src
    assert "ag_put(ag_elem_at(tile, r, c), ag_op_lift(v[k][0], index + (size_t)r * pitch + c));" in src
    assert "if (a % alignof(float))\n        return cudaErrorMisalignedAddress;" in src
