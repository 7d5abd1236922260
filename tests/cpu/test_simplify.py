"""The printer's simplifications (generator/simplify.py) and the `uses` test that lets a
template declare only what its rendered body names."""

from assocgen import emit, simplify


def test_a_one_trip_loop_becomes_its_body_with_the_arithmetic_folded():
    text = (
        "    x = 1;\n"
        "#pragma unroll\n"
        "    for (int j = 0; j < 1; ++j)\n"
        "        raw[j] = src[j * 128 + threadIdx.x];\n"
        "    y = raw[0];\n"
    )
    assert simplify.one_trip_loops(text) == "    x = 1;\n    raw[0] = src[threadIdx.x];\n    y = raw[0];\n"


def test_nested_loops_keep_the_inner_loop_that_runs_more_than_once():
    text = (
        "#pragma unroll\n"
        "    for (int j = 0; j < 1; ++j)\n"
        "#pragma unroll\n"
        "        for (int e = 0; e < 4; ++e)\n"
        "            acc = f(acc, x[j * 4 + e], base + (size_t)(j * 128 + threadIdx.x) * 4 + e);\n"
        "    done();\n"
    )
    assert simplify.one_trip_loops(text) == (
        "#pragma unroll\n"
        "    for (int e = 0; e < 4; ++e)\n"
        "        acc = f(acc, x[e], base + (size_t)threadIdx.x * 4 + e);\n"
        "    done();\n"
    )


def test_a_braced_body_keeps_its_scope_only_when_it_declares_something():
    plain = (
        "#pragma unroll\n    for (int e = 0; e < 1; ++e) {\n"
        "        y[e] = g(b);\n        b = h(b, x[e], base + c + e);\n    }\n"
    )
    assert simplify.one_trip_loops(plain) == "    y[0] = g(b);\n    b = h(b, x[0], base + c);\n"
    declaring = (
        "#pragma unroll\n    for (int j = 0; j < 1; ++j) {\n"
        "        const int k = j * 32 + lane;\n        d[k] = s[k];\n    }\n"
    )
    assert simplify.one_trip_loops(declaring) == "    {\n        const int k = lane;\n        d[k] = s[k];\n    }\n"


def test_a_braced_body_in_a_block_that_names_none_of_its_declarations_loses_its_braces():
    loop = (
        "#pragma unroll\n    for (int j = 0; j < 1; ++j) {\n"
        "        const int k = j * 32 + lane, m = f(a, b);\n        d[k] = s[m];\n    }\n"
    )
    free = "{\n    __syncwarp();\n" + loop + "}\n"
    assert (
        simplify.one_trip_loops(free)
        == "{\n    __syncwarp();\n    const int k = lane, m = f(a, b);\n    d[k] = s[m];\n}\n"
    )
    taken = "{\n" + loop + "    e[k] = 0;\n}\n"  # `k` named after it: the body keeps its scope
    assert simplify.one_trip_loops(taken).startswith("{\n    {\n        const int k = lane")
    assert simplify._declared(["    const int k = j * 32 + lane, m = f(a, b);"], 4) == {"k", "m"}


def test_loops_of_more_trips_and_other_code_are_left_alone():
    text = "#pragma unroll\n    for (int j = 0; j < 2; ++j)\n        a[j] = b[j] + 0.5f;\n    c = d + 0x10;\n"
    assert simplify.one_trip_loops(text) == text


def test_blank_lines_never_come_two_in_a_row():
    assert simplify.blank_lines("a\n\n\n\nb\n\nc\n") == "a\n\nb\n\nc\n"


def test_uses_ignores_comments_and_strings():
    assert emit._uses("if (aligned16 && full) {", "full")
    assert not emit._uses('/* a full tile */ x = 1; // full\n s = "full";', "full")
    assert not emit._uses("fullness = 1;", "full")


def test_shapes_share_what_they_hold_alike_and_depends_on_nothing_that_differs():
    def shape(tile, pad):
        return (
            f"#define AG_TILE {tile}\n"
            "#define AG_GROUP 32          /* fan-out */\n"
            "\n"
            "/* the shuffle */\n"
            "static __device__ __forceinline__ float ag_shfl(float v) { return __shfl_sync(0xffffffffu, v, 0); }\n"
            "static __device__ __forceinline__ int ag_tiles(int n) { return (n + AG_TILE - 1) / AG_TILE; }\n"
            "\n"
            "static __device__ __forceinline__ int ag_groups(int n)\n"
            "{\n"
            "    return ag_tiles(n) / AG_GROUP;   /* { a brace in a comment */\n"
            "}\n"
            "\n"
            "static __device__ __forceinline__ float ag_pad(int k)\n"
            "{\n"
            "#if defined(__CUDA_ARCH__)\n"
            f"    return k + k / {pad};\n"
            "#endif\n"
            "}\n"
            "\n"
            "static int ag_at_once[64];   /* state: each shape its own, even where the text is alike */\n"
            "\n"
            "static __global__ void __launch_bounds__(256, 8)\n"
            f"k_{tile}(float *x)\n"
            "{\n"
            '    asm volatile("{ .reg .pred p; }");\n'
            "    x[0] = ag_shfl(x[0]) + ag_pad(ag_groups(1));\n"
            "}\n"
        )

    common, rest = simplify.shared([shape(4096, 8), shape(2048, 8), shape(9216, 16)])
    # alike and depending on nothing that differs: the macro, the shuffle (with its comment)
    assert common == (
        "#define AG_GROUP 32          /* fan-out */\n\n"
        "/* the shuffle */\n"
        "static __device__ __forceinline__ float ag_shfl(float v) { return __shfl_sync(0xffffffffu, v, 0); }"
    )
    # ag_groups is alike but calls ag_tiles, which reads AG_TILE; ag_pad differs; the state stays
    for source, tile in zip(rest, (4096, 2048, 9216), strict=True):
        assert source.startswith(f"#define AG_TILE {tile}\n\nstatic __device__ __forceinline__ int ag_tiles(")
        assert "ag_shfl(float v)" not in source and "AG_GROUP 32" not in source
        kept = ("int ag_groups(int n)", "float ag_pad(int k)", "static int ag_at_once[64];", f"k_{tile}(float *x)")
        assert all(k in source for k in kept)
    # shapes alike in all: every macro and device function is shared; state and kernels stay
    common, rest = simplify.shared([shape(4096, 8)] * 2)
    assert common.startswith("#define AG_TILE 4096\n#define AG_GROUP 32") and "ag_pad(int k)" in common
    assert rest[0].startswith("static int ag_at_once[64];") and rest[0].endswith("}") and "k_4096" in rest[0]


def test_shapes_never_share_state_or_what_reads_a_macro_that_differs():
    def shape(tile):
        return (
            "static __device__ unsigned int ag_calls[1] = {0};\n"  # a variable: each shape its own
            "static __device__ int ag_once(void) { static int k = 0; return ++k; }\n"  # a static local
            "#if defined(__CUDA_ARCH__)\n"
            f"#define AG_TILE {tile}\n"
            "#endif\n"
            "#define AG_TILES(n) ((n) / AG_TILE)   /* elements a tile,\n"
            "   a multiple of 16 */\n"
            "static __device__ int ag_tiles(int n) { return AG_TILES(n); }\n"
            "static __device__ int ag_plain(int n) { return n + 1; }\n"
        )

    common, rest = simplify.shared([shape(4096), shape(2048)])
    # only ag_plain: AG_TILES reads AG_TILE, set in an #if block that differs; the comment that
    # begins on AG_TILES's line stays with it, not with ag_tiles
    assert common == "static __device__ int ag_plain(int n) { return n + 1; }"
    for source in rest:
        assert "ag_calls[1]" in source and "static int k" in source and source.count("*/") == 1
        assert "AG_TILES(n) ((n) / AG_TILE)" in source and "int ag_tiles(int n)" in source
