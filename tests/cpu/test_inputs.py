"""Operators of several input arrays (an operator's `inputs`, a lift of x0, x1, ... and i) on the
CPU: what the header declares, the loads each input gets (16-byte words where its items are
whole words; beside a wider one, in runs of words where aligned, else element by element), the
forms they reach (reduce, scans, the segmented forms) and those they do not (across ranks), and
nvcc over the GPU test's spec (tests/gpu/inputs/spec.toml; the GPU test: tests/gpu/inputs/run.py)."""

import re
from pathlib import Path

import pytest

from assocgen import emit
from assocgen.spec import load, parse

from .util import nvcc_problems

SPEC = Path(__file__).resolve().parents[1] / "gpu" / "inputs" / "spec.toml"
DOT = {"name": "dot", "inputs": ["f32", "f32"], "type": "f32", "identity": "0.0f", "commutative": True}
DOT.update(combine="a + b", lift="x0 * x1")


def _render(**tables):
    spec = {"prefix": "q", "operator": [DOT, {**DOT, "name": "wsum", "inputs": ["f64", "u8", "f32"]}]}
    spec["operator"][1].update(type="f64", identity="0.0", lift="x1 ? x0 * x2 : 0.0")
    return emit.render(parse({**spec, **tables}, "s.toml"), "q.h")


def test_the_header_takes_one_pointer_an_input():
    h = _render(reduce=[{"op": ["dot", "wsum"]}], scan=[{"op": "dot", "kind": ["inclusive", "exclusive"]}])["q.h"]
    assert "cudaError_t q_reduce_dot_f32(const float *d_in0, const float *d_in1, size_t n, float *d_out," in h
    assert "cudaError_t q_reduce_wsum_f64(const double *d_in0, const uint8_t *d_in1, const float *d_in2, size_t n," in h
    assert (
        "q_exscan_dot_f32(const float *d_in0, const float *d_in1, size_t n, float *d_out,\n    const float *init," in h
    )
    assert "dot of (float, float) from d_in0 .. d_in1" in h  # the function's line
    assert "dot of (f32, f32) -> float" in h  # the summary


def test_inputs_of_one_size_load_as_words_together_and_narrower_ones_in_runs_of_words():
    files = _render(reduce=[{"op": ["dot", "wsum"]}])
    dot = files["q_reduce_dot_f32.cu"]
    assert "raw0[j] = src0[j * 256 + threadIdx.x];" in dot and "raw1[j] = src1[j * 256 + threadIdx.x];" in dot
    assert "(((uintptr_t)d_in0 | (uintptr_t)d_in1) & 15) == 0" in dot and "aligned16 == 2" not in dot
    wsum = files["q_reduce_wsum_f64.cu"]
    flat = " ".join(wsum.split())  # wrapped lines
    # runs of 4 elements a lane: two 16-byte words of the 8-byte input, a 4-byte word of the 1-byte
    # one and a 16-byte word of the 4-byte one (the masked sum: 1.015x CUB, 0.996x element by
    # element, h200-2026-12-01-inputs-protos.txt)
    assert "if (aligned16 == 2 && base + 2048 <= n) {" in wsum
    assert "const unsigned int *src1 = (const unsigned int *)(in1 + base);" in wsum
    assert (
        "raw0[p * 2 + q] = src0[r * 2 + q];" in wsum and "raw1[p] = src1[r];" in wsum and "raw2[p] = src2[r];" in wsum
    )
    assert (
        "ag_op_lift(x0[p * 4 + e], x1[p * 4 + e], x2[p * 4 + e], base + (size_t)(p * 256 + threadIdx.x) * 4 + e)"
        in flat
    )
    # a narrower pointer off its loads: the words of the widest, the narrower element by element
    assert re.search(r"x1\[j \* 2 \+ e\] = in1\[base \+ ", wsum) and re.search(r"x2\[j \* 2 \+ e\] = in2\[", wsum)
    assert (
        "(((uintptr_t)d_in0 & 15) == 0) + (((uintptr_t)d_in0 & 15) == 0 && ((uintptr_t)d_in1 & 3) == 0"
        " && ((uintptr_t)d_in2 & 15) == 0)" in flat
    )
    assert "ag_op_lift(in0[i], in1[i], in2[i], i)" in wsum  # the tail


def test_runs_need_whole_words_of_every_input_a_step():
    # 2 items of f64 a lane a step: one 16-byte word, less than a run of 4: element by element
    files = _render(reduce=[{"op": "wsum", "items": 2}])
    src = files["q_reduce_wsum_f64.cu"]
    assert "aligned16 == 2" not in src and "x1[e] = in1[base + " in " ".join(src.split())


def test_a_narrower_input_beside_one_element_a_word_loads_in_a_run_of_four():
    c16 = {"name": "c16", "size": 16, "c": "typedef struct { double re, im; } c16;"}
    op = {**DOT, "name": "scale", "inputs": ["c16", "u8"], "type": "f64", "identity": "0.0"}
    op.update(lift="x1 ? x0.re : x0.im")
    src = emit.render(parse({"prefix": "q", "type": [c16], "operator": [op], "reduce": [{"op": "scale"}]}, "s"), "q.h")
    src = src["q_reduce_scale_c16.cu"]
    # one run a step: no loop of one trip, no array of one
    assert "const int r = threadIdx.x;" in src and "unsigned int raw1;" in src and "raw1 = src1[r];" in src
    assert "raw0[q] = src0[r * 4 + q];" in src and "memcpy(x1, &raw1, sizeof x1);" in src
    assert "x1[j] = in1[base + (size_t)(j * 256 + threadIdx.x)];" in src and " * 1]" not in src
    assert "((uintptr_t)d_in0 & 15) == 0" in src


def test_an_ordered_fold_loads_each_input_whose_items_are_whole_words():
    files = _render(operator=[{**DOT, "commutative": False}], reduce=[{"op": "dot", "items": 8}])
    src = files["q_reduce_dot_f32.cu"]
    assert "ag_load_blocked(raw0, (const uint4 *)(in0 + tile * 256), 2, stage[warp], lane);" in src
    assert "ag_load_blocked(raw1, (const uint4 *)(in1 + tile * 256), 2, stage[warp], lane);" in src


def test_the_segmented_forms_pass_every_input_and_the_head():
    files = _render(
        segscan=[{"op": "dot"}, {"op": "dot", "heads": "keys", "key": "i32"}],
        segreduce=[{"op": "wsum"}, {"op": "dot", "by": "keys", "key": "u16"}],
    )
    seg = files["q_segscan_dot_f32.cu"]
    assert re.search(r"ag_seg_lift\(float x0, float x1, size_t i, unsigned int head\)", seg)
    assert "r.v = ag_op_lift(x0, x1, i);" in seg
    assert (
        "q_segreduce_wsum_f64(const double *d_in0, const uint8_t *d_in1, const float *d_in2, size_t n," in files["q.h"]
    )
    assert (
        "q_reduce_dot_f32_by_u16(const float *d_in0, const float *d_in1, const uint16_t *d_keys, size_t n,"
        in (files["q.h"])
    )
    # several inputs keep the tile in registers (the resident tile stages one input)
    assert "cp.async" not in seg


def test_not_across_ranks_and_the_header_says_so():
    spec = {"prefix": "q", "nccl": True, "operator": [DOT], "reduce": [{"op": ["dot"]}, {"op": "sum", "type": "f32"}]}
    files = emit.render(parse(spec, "s.toml"), "q.h")
    assert "q_reduce_sum_f32_nccl_all" in files["q.h"] and "q_reduce_dot_f32_nccl" not in files["q.h"]
    assert re.search(
        r"Not across ranks \(their operator reads several input arrays.*\n.*q_reduce_dot_f32\.", files["q.h"]
    )


def test_one_input_renders_as_before():
    """The single input keeps its names (d_in, in, x): the golden hash of the GPU matrix holds it
    byte for byte; here, one look at a reduce and a scan."""
    spec = parse({"prefix": "q", "reduce": [{"op": "sum", "type": "f32"}], "scan": [{"op": "sum", "type": "f32"}]}, "s")
    files = emit.render(spec, "q.h")
    assert "(const float *__restrict__ in, size_t n," in files["q_reduce_sum_f32.cu"]
    assert "raw[j] = src[j * 256 + threadIdx.x];" in files["q_reduce_sum_f32.cu"]
    assert "q_scan_sum_f32(const float *d_in, size_t n, float *d_out," in files["q.h"]


@pytest.mark.slow
def test_nvcc_compiles_the_gpu_tests_spec(tmp_path, nvcc):  # noqa: ARG001 - nvcc: present
    files = emit.render(load(SPEC), "mi.h")
    compiled, problems = nvcc_problems(files, tmp_path)
    assert compiled == 30 and not problems, "\n".join(problems)


def test_nvcc_compiles_the_gpu_tests_spec_as_one_header(tmp_path, nvcc):  # noqa: ARG001 - nvcc: present
    files = emit.render(load(SPEC), "mi.h", single_header=True)
    files["impl.cu"] = '#define MI_IMPLEMENTATION\n#include "mi.h"\n'
    compiled, problems = nvcc_problems(files, tmp_path)
    assert compiled == 1 and not problems, "\n".join(problems)
