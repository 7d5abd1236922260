"""Segmented reduce by offsets by spans (tuning.SegmentSpans): up to SEGMENT_SPAN_MAX_N elements,
segments averaging up to the last block bound take a group of lanes or a block each instead of
tiles, picked by the host from n and n_segments; past SEGMENT_SPAN_SPLIT_N elements a segment
longer than a chunk is split across blocks; operators of several inputs keep their tiles.  (The GPU
test runs every distribution of segment lengths on both sides of each pick, of the size limit and
of the split's.)"""

import re
from pathlib import Path
from types import SimpleNamespace

from assocgen import emit, tuning
from assocgen.spec import parse

from .util import at_arch


def _render(*segreduces, **top):
    spec = parse({"prefix": "q", "segreduce": list(segreduces), **top}, "s.toml")
    return {name: _flat(text) for name, text in emit.render(spec, "q.h").items()}


def _flat(src: str) -> str:
    """`src` with argument lists and kernel heads that were wrapped at 120 columns on one line."""
    src = re.sub(r",\n\s+", ", ", at_arch(src))
    return re.sub(r"(__launch_bounds__\([^()]*\))\n", r"\1 ", src)


def _namespace(src, k):
    return src.split(f"namespace ag_s{k} {{", 1)[1].split(f"}}  /* namespace ag_s{k} */", 1)[0]


def test_the_host_picks_a_group_of_lanes_a_block_or_tiles_by_average_length():
    src = _render({"op": "sum", "type": "f32", "offset": "i32"})["q_segreduce_sum_f32.cu"]
    spec = parse({"prefix": "q", "segreduce": [{"op": "sum", "type": "f32"}]}, "s.toml")
    sp = tuning.segment_spans(spec.instances[0].op)
    most = tuning.SEGMENT_SPAN_BLOCKS[-1].most
    split, least = tuning.SEGMENT_SPAN_SPLIT_N, tuning.SEGMENT_SPAN_MIN_AVG
    avg = "n / n_segments"
    assert f"if (n <= {tuning.SEGMENT_SPAN_MAX_N} && {avg} <= {most} && (n <= {split} || {avg} >= {least}))" in src
    # 4-byte sums are sized (tuning.SEGMENT_SIZE_SHAPES): 256 x 8 up to 2^21 (ag_s0), then 256 x 32
    (upto, block, items) = tuning.SEGMENT_SIZE_SHAPES[0]
    small, large = _namespace(src, 0), _namespace(src, 1)
    # a table of the kernels by average length, one for each group size and block size
    k0, k1 = f"q_k_segreduce_sum_f32_oi32_b{block}_t{items}", "q_k_segreduce_sum_f32_oi32_b256_t32"
    for ns, k in ((small, k0), (large, k1)):
        # an entry with a largest n below the shape's smallest is left out of it, and so are the
        # fields no entry left needs
        entries = list(tuning.SEGMENT_SPAN_BLOCKS)
        if ns is large:
            entries = [e for e in entries if not 0 < e.max_n <= upto]
        used = (any(e.max_n for e in entries), any(e.max_segments for e in entries))
        field = "".join(", 0" for some in used if some)
        for bound, lanes in tuning.SEGMENT_SPAN_LANES:
            assert f"{{{bound}, {k}_lanes{lanes}, 256, {256 // lanes}{field}}}," in ns
            assert f"__launch_bounds__(256, 8) {k}_lanes{lanes}(" in ns  # 4-byte sums: a full SM
        for bound, threads, most_n, most_segs in entries:
            limits = "".join(f", {m}" for m, used in ((most_n, ", 0" in field), (most_segs, field == ", 0, 0")) if used)
            assert f"{{{bound}, {k}_block{threads}, {threads}, 1{limits}}}," in ns
            assert f"__launch_bounds__({threads}) {k}_block{threads}(" in ns
        left = [e for e in tuning.SEGMENT_SPAN_BLOCKS if e not in entries]
        assert all(f"{k}_block{e.threads}(" not in ns for e in left if e.threads not in [f.threads for f in entries])
        test = " || (spans[k].upto != 0 && n > spans[k].upto)" if field else ""
        test += " || (spans[k].segments != 0 && n_segments > spans[k].segments)" if field == ", 0, 0" else ""
        assert (f"(avg > spans[k].most{test}))" if test else "&& avg > spans[k].most)") in " ".join(ns.split())
    # an entry with limits is searched before one of the same average without (a warp alone in its
    # block before eight warps to a block, up to 2^17 and 1024 segments)
    small_k = re.findall(r"\{(\d+), " + k0 + r"_(\w+), \d+, \d+, (\d+), (\d+)\},", small)
    assert [int(b) for b, *_ in small_k] == sorted(int(b) for b, *_ in small_k)
    warp_alone = ("767", "block32", str(1 << 17), "1024")
    assert warp_alone in small_k and small_k.index(("767", "lanes32", "0", "0")) == small_k.index(warp_alone) + 1
    # an entry with a largest n is passed over past it; the last entry takes what is left at any n
    last = tuning.SEGMENT_SPAN_BLOCKS[-1]
    assert not (last.max_n or last.max_segments) and any(e.max_n for e in tuning.SEGMENT_SPAN_BLOCKS)
    assert any(0 < e.max_n <= upto for e in tuning.SEGMENT_SPAN_BLOCKS)  # so the large shape has fewer
    # on small inputs the average counts more (more lanes a segment); the last kernel past every
    # bound; a shape picked only past every shift's n counts it as it is
    shifts = " : ".join(f"n <= {m} ? {sh}" for m, sh in tuning.SEGMENT_SPAN_SHIFTS)
    assert f"const size_t avg = (n / n_segments) << ({shifts} : 0);" in small
    assert max(m for m, _ in tuning.SEGMENT_SPAN_SHIFTS) <= upto
    assert "const size_t avg = n / n_segments;" in large
    assert "while (k + 1 < sizeof spans / sizeof spans[0] && (avg > spans[k].most" in " ".join(src.split())
    # with PDL past SEGMENT_SPAN_PDL_MIN_N elements (0: at every n, which cold inputs gain from)
    when = f"n > {tuning.SEGMENT_SPAN_PDL_MIN_N}" if tuning.SEGMENT_SPAN_PDL_MIN_N else "1"
    assert "ag_launch(spans[k].kernel, " in src and f"spans[k].threads, stream, {when}, " in src
    # 16-byte words up to the last whole one, then elements; a group's lanes shuffle among themselves
    assert "const uint4 w = *(const uint4 *)(in + e);" in src
    # off 16 bytes no word is loaded: the words' loop starts at lo's word, which is then its end
    assert "split = words ? (hi < whole ? hi : whole) : lo / 4 * 4;" in src
    assert "0xffu << lane / 8 * 8" in src and "__shfl_down_sync(mask, w, offset, width)" in src
    # a group's long segment goes to the block, checked once a block with one barrier
    assert f"const int is_long = hi - lo > {sp.long(8)};" in src
    assert "if (!__syncthreads_or(is_long))" in src
    # no workspace on this path but the split's: the launch comes before the tiles' workspace is touched
    assert src.index("ag_launch(spans[k].kernel, ") < src.index("const int one_launch")


def test_past_the_split_size_long_segments_go_to_the_split_kernel():
    src = _render({"op": "sum", "type": "f32", "offset": "i32"})["q_segreduce_sum_f32.cu"]
    spec = parse({"prefix": "q", "segreduce": [{"op": "sum", "type": "f32"}]}, "s.toml")
    sp = tuning.segment_spans(spec.instances[0].op)
    c, k = sp.chunk, "q_k_segreduce_sum_f32_oi32_b256_t32"
    assert c == 32768 and c & (c - 1) == 0  # 128 KiB of floats, a power of two
    # the workspace grows by the split's past its size only, after the tiles' on 16 bytes
    assert f"return n > {sp.split_n} ? (bytes + 15) / 16 * 16 + ag_span_split_bytes(n) : bytes;" in src
    # below it the kernels get no split (NULL), past it a second launch
    assert f"unsigned int *split = NULL;\n        if (n > {sp.split_n})\n            split = " in src
    assert f"(unsigned int)(chunks < {sp.split_grid} ? chunks : {sp.split_grid}), {sp.split_block}, stream, 1, " in src
    assert f"__launch_bounds__({sp.split_block}) {k}_split(" in src
    # every group and block kernel leaves a segment longer than a chunk to it, marking its chunks
    # (in each shape of the sized source)
    shapes = src.count("_split(const float *__restrict__ in")
    assert shapes >= 1
    assert src.count(f"if (split != NULL && end - first > {c}) {{") == shapes * len(sp.lanes)
    large = _namespace(src, 1)  # the shape past the split's size; its blocks have no largest n
    assert large.count(f"if (split != NULL && hi - lo > {c}) {{") == len([e for e in sp.blocks if not e[2]])
    # another function's data in the workspace: a mark counts only where its segment bears it out,
    # and the marking kernel zeroes the segment's counter
    flat = " ".join(src.split())  # (the printer breaks the condition across lines)
    mark = f"(k == 0 ? lo <= h * {c} && h * {c} < hi : lo > h * {c} && lo < (h + 1) * {c})"
    assert f"if (hi - lo > {c} && {mark})" in flat
    assert f"ag_span_counts(split, ag_span_chunks(n))[lo / {c}] = 0;" in src
    # the last block of a segment folds its pieces in chunk order and zeroes its counter
    assert '"atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;" : "=r"(done) : "l"(counts + c0) : "memory");' in src
    assert f"ag_span_pieces(slots, c0, lo % {c} != 0, pieces, lane, warp, {sp.split_block // 32}, folds);" in src
    # a chunk is never shorter than what a group leaves to its block (the marks are written there)
    assert all(sp.long(g) <= c for _, g in sp.lanes)


def test_a_shape_picked_only_below_the_split_size_carries_no_split():
    # 4-byte sums are sized: tuning.SEGMENT_SIZE_SHAPES's shape up to 2^21, then the default
    src = _render({"op": "sum", "type": "f32", "offset": "i32"})["q_segreduce_sum_f32.cu"]
    (upto, block, items), split = tuning.SEGMENT_SIZE_SHAPES[0], tuning.SEGMENT_SPAN_SPLIT_N
    assert upto <= split
    small, large = src.split("namespace ag_s1 {", 1)
    assert f"q_k_segreduce_sum_f32_oi32_b{block}_t{items}_lanes1(" in small
    # below: no split kernel, marks, workspace for it or argument, and no floor on the average
    for gone in ("_split(", "ag_span_mark", "ag_span_split_bytes", "ag_store_slot", "ag_span_pieces", "split != NULL"):
        assert gone not in small, gone
    assert "float *__restrict__ out, int words)" in small
    assert f"n / n_segments >= {tuning.SEGMENT_SPAN_MIN_AVG}" not in small
    assert "d_out, ((uintptr_t)d_in & 15) == 0);" in small
    # the default shape, picked past 2^21, keeps all of it
    for kept in ("_split(", "ag_span_mark(", "ag_span_split_bytes(n)", "if (split != NULL) {"):
        assert kept in large, kept


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
    assert "acc = ag_op_combine(acc, ag_span_fold(v, lanes, mask));" in src  # each round's fold, in order
    assert "uint4" not in src.split("ag_span_run", 1)[1].split("\n}", 1)[0]  # 16-byte elements: one a lane
    assert "ag_span_lanes" not in src  # a block's warps each a contiguous run, folded in warp order
    assert "__launch_bounds__(256) q_k_segreduce_m2mul_m2_" in src  # 16-byte totals: the compiler's choice
    com = _render({"op": "sum", "type": "f32"})["q_segreduce_sum_f32.cu"]
    assert "acc = ag_op_combine(acc, v);" in com
    assert "return ag_span_fold(ag_span_lanes(in, lo, hi, n, lane, lanes, words), lanes, mask);" in com
    # a commutative block: the threads stride over the segment together
    assert "ag_span_lanes(in, lo, hi, n, threadIdx.x, warps * 32, words), 32, 0xffffffffu);" in com


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


def test_the_gpu_drivers_workspace_header_is_the_generators():
    # the GPU test fills the workspace past its header with other data, as the contract allows
    driver = (Path(__file__).parents[1] / "gpu" / "driver.cuh").read_text()
    assert f"static const size_t kWorkHeader = {tuning.SLOT0 * 4};" in driver


def test_a_chunk_is_a_power_of_two_never_shorter_than_a_groups_long_segment():
    # else a segment longer than a chunk that its group folds would go unmarked past the split's size
    for size in (1, 2, 4, 8, 12, 16, 36, 600, 1024, 200000):
        op = SimpleNamespace(inputs=(), in_type=SimpleNamespace(size=size), acc_type=SimpleNamespace(words=1))
        sp = tuning.segment_spans(op)
        assert sp.chunk & (sp.chunk - 1) == 0, size
        assert all(sp.long(g) <= sp.chunk for _, g in sp.lanes), size


def test_a_shape_keeps_the_split_when_any_of_its_picks_reaches_past_its_size(monkeypatch):
    split = tuning.SEGMENT_SPAN_SPLIT_N
    # 256 x 8 up to 2^20 and again up to 2^24 (past the split's size), 256 x 16 between; the split's
    # size itself: a shape picked up to it never splits (the split runs past it)
    shapes = (tuning.SizeShape(1 << 20, 256, 8), tuning.SizeShape(1 << 21, 256, 16), tuning.SizeShape(1 << 24, 256, 8))
    monkeypatch.setattr(tuning, "SEGMENT_SIZE_SHAPES", shapes)
    src = _render({"op": "sum", "type": "f32", "offset": "i32"})["q_segreduce_sum_f32.cu"]
    parts = [src.split(f"namespace ag_s{k} {{", 1)[1].split(f"}}  /* namespace ag_s{k} */", 1)[0] for k in range(3)]
    assert "namespace ag_s3 {" not in src
    assert ["_b256_t8_split(" in parts[0], "_split(" in parts[1], "_split(" in parts[2]] == [True, False, True]
    monkeypatch.setattr(tuning, "SEGMENT_SIZE_SHAPES", (tuning.SizeShape(split, 256, 8),))
    src = _render({"op": "sum", "type": "f32", "offset": "i32"})["q_segreduce_sum_f32.cu"]
    below, default = src.split("namespace ag_s1 {", 1)
    assert "_split(" not in below and "_split(" in default


def test_a_block_a_segment_prefetches_a_small_input_where_the_blocks_are_few():
    """Up to SEGMENT_SPAN_PREFETCH_BYTES of input and SEGMENT_SPAN_PREFETCH_BLOCKS blocks, the block
    kernels first ask L2 for the input's lines, each block an even share, after the wait (PDL) and
    before their segments' offsets; the lane-group kernels never do.  A shape picked only past that
    size keeps the test that never passes there (its block kernel of 512 threads compiled without it
    ran 8% slower at 2^24)."""
    src = _render({"op": "sum", "type": "f32", "offset": "i32"})["q_segreduce_sum_f32.cu"]
    small, large = _namespace(src, 0), _namespace(src, 1)
    elems = tuning.SEGMENT_SPAN_PREFETCH_BYTES // 4
    assert f"return n <= {elems} && gridDim.x <= {tuning.SEGMENT_SPAN_PREFETCH_BLOCKS};" in src
    assert 'asm volatile("prefetch.global.L2 [%0];" ::"l"(l == 0 ? (uintptr_t)in : (first + l) * 128));' in src
    assert (
        elems <= tuning.SEGMENT_SIZE_SHAPES[0].upto and "    if (prefetch)\n        ag_span_prefetch(in, n);" in large
    )
    kernels = small.split("static __global__")[1:]
    name = lambda k: re.match(r"\s*void (?:__launch_bounds__\([^)]*\) )?(\w+)\(", k).group(1)  # noqa: E731
    blocks = [k for k in kernels if re.search(r"_block\d+$", name(k))]
    lanes = [k for k in kernels if re.search(r"_lanes\d+$", name(k))]
    assert blocks and lanes
    for k in blocks:
        assert k.index("ag_follow_stream();") < k.index("ag_span_prefetch(in, n);") < k.index("ag_span_bounds(")
    assert not any("ag_span_prefetch" in k for k in lanes)


def _stream_heads(ns):
    """{kernel's suffix (_lanes8, _block32, _split, '' for the tiles' ...): its text before its loop}"""
    heads = {}
    for kernel in ns.split("static __global__")[1:]:
        suffix = re.match(r" void (?:__launch_bounds__\([^)]*\)\s+)?\w+_t\d+(\w*)\(", kernel).group(1)
        heads[suffix] = kernel.split("\n}\n", 1)[0].split("\n    for ", 1)[0]
    return heads


def test_the_span_kernels_let_the_next_kernel_in_only_past_a_size_or_where_their_blocks_are_few(monkeypatch):
    """Under PDL a lane-group kernel up to SEGMENT_SPAN_WAIT_N[0] elements, a block kernel up to
    [1], waits for the kernel before it without letting the next one in (ag_wait_stream): the next
    is scheduled as its blocks finish.  Past it, and where the blocks are few (a block kernel that
    prefetches, the block of one warp), it lets the next in at its start (ag_follow_stream), as the
    tiles' kernels always do.  A shape picked only past that size has no ag_wait_stream; one picked
    only up to it no test of n."""
    wait, block_wait = tuning.SEGMENT_SPAN_WAIT_N
    upto = tuning.SEGMENT_SIZE_SHAPES[0].upto
    assert 0 < wait < upto and 0 < block_wait < upto
    src = _render({"op": "sum", "type": "f32", "offset": "i32"})["q_segreduce_sum_f32.cu"]
    assert 'asm volatile("griddepcontrol.wait;" ::: "memory");' in src.split("void ag_wait_stream(void)", 1)[1][:200]
    small, large = _stream_heads(_namespace(src, 0)), _stream_heads(_namespace(src, 1))
    past = f"    if (n > {wait})\n        ag_follow_stream();\n    else\n        ag_wait_stream();"
    few = f"    if (prefetch || n > {block_wait})\n        ag_follow_stream();\n    else\n        ag_wait_stream();"
    lanes = [k for k in small if k.startswith("_lanes")]
    blocks = [k for k in small if k.startswith("_block") and k != "_block32"]
    assert lanes and blocks and "_block32" in small and "_split" not in small and "_split" in large
    for k in lanes:
        assert past in small[k], k
    for k in blocks:
        assert few in small[k] and "    if (prefetch)\n        ag_span_prefetch(in, n);" in small[k], k
    assert "ag_follow_stream();" in small["_block32"] and "ag_wait_stream" not in small["_block32"]
    for ns in (small, large):
        assert "ag_follow_stream();" in ns[""] and "ag_wait_stream" not in ns[""]  # the tiles
    assert "ag_wait_stream" not in _namespace(src, 1)
    assert all("ag_follow_stream();" in h for h in large.values())
    # waiting at every n a shape is picked for: no test of n
    monkeypatch.setattr(tuning, "SEGMENT_SPAN_WAIT_N", tuning.SpanWait(upto, upto))
    src = _render({"op": "sum", "type": "f32", "offset": "i32"})["q_segreduce_sum_f32.cu"]
    small = _stream_heads(_namespace(src, 0))
    assert "n > " not in "".join(small[k] for k in lanes) and "ag_follow_stream" not in small["_lanes8"]
    assert "    if (prefetch)\n        ag_follow_stream();\n    else\n        ag_wait_stream();" in small[blocks[0]]
    # never: no ag_wait_stream anywhere
    monkeypatch.setattr(tuning, "SEGMENT_SPAN_WAIT_N", tuning.SpanWait(0, 0))
    src = _render({"op": "sum", "type": "f32", "offset": "i32"})["q_segreduce_sum_f32.cu"]
    assert "ag_wait_stream" not in src


def test_a_shape_picked_at_several_sizes_keeps_what_its_smallest_needs(monkeypatch):
    """A shape's namespace leaves out the table entries, shifts and wait tests that hold only
    below the smallest n it is picked for: its first pick's lower bound, even where it is picked
    again past a larger one."""
    # 256 x 32 (the default) up to 2^16 and past 2^21; 256 x 8 between
    monkeypatch.setattr(
        tuning, "SEGMENT_SIZE_SHAPES", (tuning.SizeShape(1 << 16, 256, 32), tuning.SizeShape(1 << 21, 256, 8))
    )
    src = _render({"op": "sum", "type": "f32", "offset": "i32"})["q_segreduce_sum_f32.cu"]
    assert "namespace ag_s2 {" not in src
    both, between = _namespace(src, 0), _namespace(src, 1)
    assert "_t32_lanes1(" in both and "_t8_lanes1(" in between
    shifts = " : ".join(f"n <= {m} ? {sh}" for m, sh in tuning.SEGMENT_SPAN_SHIFTS)
    assert f"const size_t avg = (n / n_segments) << ({shifts} : 0);" in both
    later = " : ".join(f"n <= {m} ? {sh}" for m, sh in tuning.SEGMENT_SPAN_SHIFTS if m > 1 << 16)
    assert f"const size_t avg = (n / n_segments) << ({later} : 0);" in between
    # the block a warp holds only up to 2^16: kept where the shape is picked there, not between
    assert any(0 < e.max_n <= 1 << 16 for e in tuning.SEGMENT_SPAN_BLOCKS)
    assert "{1535, q_k_segreduce_sum_f32_oi32_b256_t32_block32, 32, 1, 65536, 0}," in both
    assert "{1535, " not in between and "_t32_block32(" in both
    # the block a warp up to 2^17 (and 1024 segments) holds past 2^16: in both
    assert "{767, q_k_segreduce_sum_f32_oi32_b256_t8_block32, 32, 1, 131072, 1024}," in between
    wait, block_wait = tuning.SEGMENT_SPAN_WAIT_N
    for ns in (both, between):
        assert f"if (n > {wait})" in ns and f"if (prefetch || n > {block_wait})" in ns
