"""Segmented reduce by offsets by spans (tuning.SegmentWarps): up to SEGMENT_SPAN_MAX_N elements,
segments of moderate average length take a warp each or a block each instead of tiles, picked by
the host from n and n_segments; operators of several inputs keep their tiles.  (The GPU test runs
every distribution of segment lengths on both sides of each pick and of the size limit.)"""

from assocgen import emit, tuning
from assocgen.spec import parse


def _render(*segreduces, **top):
    spec = parse({"prefix": "q", "segreduce": list(segreduces), **top}, "s.toml")
    return emit.render(spec, "q.h")


def test_the_host_picks_warps_blocks_or_tiles_by_average_length():
    src = _render({"op": "sum", "type": "f32", "offset": "i32"})["q_segreduce_sum_f32.cu"]
    lo, mid, hi = tuning.SEGMENT_SPAN_AVG
    most = tuning.SEGMENT_SPAN_MAX_N
    assert f"if (n <= {most} && n / {lo} >= n_segments && n / {hi} <= n_segments) {{" in src
    assert f"if (n / {mid} < n_segments) {{" in src
    # a warp a segment, 8 a block; a block of 128 threads a segment (grid: one a segment)
    assert "q_k_segreduce_sum_f32_oi32_b256_t32_warps, d_in, n, d_offsets, n_segments, d_out," in src
    assert "(unsigned int)(n_segments < 0x7fffffffu ? n_segments : 0x7fffffffu), 128, stream);" in src
    assert "__launch_bounds__(128) q_k_segreduce_sum_f32_oi32_b256_t32_blocks(" in src
    # 16-byte words where whole, 2 rounds loaded before any is folded, a long segment to the block
    assert "const uint4 w = *(const uint4 *)(in + e);" in src
    assert "ag_span_load(x[u], in, c + u * 128, lo, hi, n, words);" in src
    assert f"#define AG_SEG_LONG {tuning.SEGMENT_SPAN_LONG * 2 * 128}" in src
    # no workspace on this path: the launch comes before the tiles' workspace is touched
    assert src.index("_warps, d_in, n") < src.index("const int one_launch")


def test_a_non_commutative_operator_folds_each_round_in_lane_order():
    spec = {
        "type": [{"name": "m2", "size": 16, "c": "typedef struct { float a, b, c, d; } m2;"}],
        "operator": [
            {
                "name": "m2mul",
                "type": "m2",
                "identity": "{1.0f, 0.0f, 0.0f, 1.0f}",
                "commutative": False,
                "combine_body": "m2 r; r.a = a.a * b.a + a.b * b.c; r.b = a.a * b.b + a.b * b.d;"
                " r.c = a.c * b.a + a.d * b.c; r.d = a.c * b.b + a.d * b.d; return r;",
            }
        ],
    }
    src = _render({"op": "m2mul"}, **spec)["q_segreduce_m2mul_m2.cu"]
    assert "acc = ag_op_combine(acc, ag_span_fold(v));" in src  # each round's fold, in order
    assert "words" not in src.split("ag_span_load", 1)[1].split("}", 1)[0]  # 16-byte elements: one a lane
    com = _render({"op": "sum", "type": "f32"})["q_segreduce_sum_f32.cu"]
    assert "acc = ag_op_combine(acc, v);" in com and "return ag_span_fold(acc);" in com


def test_an_operator_of_several_inputs_keeps_its_tiles():
    spec = {
        "operator": [
            {
                "name": "dot",
                "inputs": ["f32", "f32"],
                "type": "f32",
                "identity": "0.0f",
                "commutative": True,
                "combine": "a + b",
                "lift": "x0 * x1",
            }
        ]
    }
    src = _render({"op": "dot"}, **spec)["q_segreduce_dot_f32.cu"]
    assert "_warps" not in src and "ag_span" not in src
