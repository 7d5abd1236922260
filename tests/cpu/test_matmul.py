"""The matrix multiply over semirings on the CPU: spec errors (one line, naming the key), the shapes
the tuning module resolves, what the generated code holds (the semiring's functions, only those
used; the witness), a user semiring's C checked at generation, and nvcc over the GPU test's spec
(the GPU test: tests/gpu/matmul/run.py)."""

from pathlib import Path

import pytest

from assocgen import emit, tuning
from assocgen.spec import SpecError, load, parse

from .util import assert_one_error_line, nvcc_problems, run_gen

SPEC = Path(__file__).resolve().parents[1] / "gpu" / "matmul" / "spec.toml"
MAXTIMES = {"name": "maxtimes", "type": "f32", "zero": "0.0f", "add": "fmaxf(x, y)", "mul": "a * b"}


def _spec(*tables, semirings=()):
    return {"prefix": "t", "semiring": list(semirings), "matmul": list(tables)}


@pytest.mark.parametrize(
    "table,key,words",
    [
        ({}, "semiring", "missing"),
        ({"semiring": "tropical", "type": "f32"}, "semiring", "unknown semiring 'tropical'"),
        ({"semiring": "min_plus"}, "type", "needs a type"),
        ({"semiring": "or_and", "type": "f32"}, "type", "takes u8, u32"),
        ({"semiring": "plus_times", "type": "f32", "witness": True}, "witness", "selective add"),
        ({"semiring": "plus_times", "type": "f32", "layout": "nx"}, "layout", "not one of"),
        ({"semiring": "plus_times", "type": "f32", "block": [96, 128, 8]}, "block", "not a power of two"),
        ({"semiring": "plus_times", "type": "f32", "block": [128, 128]}, "block", "a list of 3 integers"),
        ({"semiring": "plus_times", "type": "f32", "thread": [16, 16]}, "thread", "more than 128"),
        ({"semiring": "plus_times", "type": ["f32", "i32"], "name": "x"}, "name", "exactly one"),
        ({"semiring": "maxtimes", "type": "f32"}, "type", "has its own types"),
        ({"semiring": "plus_times", "type": "f32", "warp": [32, 32]}, "warp", "is not 32 lanes"),
        ({"semiring": "plus_times", "type": "f32", "warp": [48, 64]}, "warp", "not a power of two"),
        ({"semiring": "plus_times", "type": "f32", "warp": [256, 8]}, "warp", "does not divide the block"),
        ({"semiring": "plus_times", "type": "f32", "warp": [32]}, "warp", "a list of 2 integers"),
        ({"semiring": "plus_times", "type": "f32", "pipeline": "tma"}, "pipeline", "not one of: registers, async"),
        ({"semiring": "plus_times", "type": "f32", "stages": 3}, "stages", 'pipeline = "async"'),
        ({"semiring": "plus_times", "type": "f32", "pipeline": "async", "stages": 1}, "stages", "not in 2..8"),
        ({"semiring": "plus_times", "type": "f32", "pipeline": "async", "stages": "3"}, "stages", "an integer"),
        ({"semiring": "or_and", "type": "u8", "pipeline": "async"}, "pipeline", "cp.async copies 4, 8 or 16 bytes"),
        ({"semiring": "plus_times", "type": "f32", "pipeline": "async", "stages": 3}, "block", "3 stages of the tiles"),
    ],
)
def test_spec_errors_name_the_key(table, key, words):
    with pytest.raises(SpecError) as e:
        parse(_spec(table, semirings=[MAXTIMES]), "s.toml")
    assert f"matmul[0].{key}" in str(e.value) and words in str(e.value), str(e.value)


def test_a_fast_step_goes_with_its_domain():
    with pytest.raises(SpecError) as e:
        parse(_spec({"semiring": "maxtimes"}, semirings=[{**MAXTIMES, "fast": "v >= 0.0f"}]), "s.toml")
    assert "semiring[0].fast" in str(e.value) and "go together" in str(e.value), str(e.value)


def test_the_integer_min_plus_takes_its_fast_step_on_tiles_without_the_zero():
    _, src, _ = _render({"semiring": "min_plus", "type": "i32"})
    assert "return v != INT32_MAX;" in src and "return __viaddmin_s32(a, b, c);" in src
    assert "int fast = __syncthreads_and(ag_fast_loads(ra, rb));" in src
    assert "acc[i][j] = ag_sr_fast_step(acc[i][j], x[i], y[j]);" in src
    assert "acc[i][j] = ag_sr_step(acc[i][j], x[i], y[j]);" in src  # tiles holding the zero
    _, src, _ = _render({"semiring": "min_plus", "type": "i32", "witness": True})
    assert "fast" not in src  # a witness compares every product
    _, src, _ = _render({"semiring": "min_plus", "type": "f32"})
    assert "fast" not in src and "__syncthreads_and" not in src


def test_a_user_fast_step():
    fast = {**MAXTIMES, "fast": "v >= 0.0f", "fast_step": "fmaxf(c, a * b)"}
    _, src, _ = _render({"semiring": "maxtimes"}, semirings=[fast])
    assert "return v >= 0.0f;" in src and "return fmaxf(c, a * b);" in src


def test_k_splits_in_slices_where_tiles_are_few_but_not_with_a_witness():
    _, src, header = _render({"semiring": "min_plus", "type": "f32"})
    assert "static size_t ag_slices(size_t m, size_t n, size_t k, size_t *kslice)" in src
    assert (
        "_fold(const float *__restrict__ part, size_t slices" in src and "v = ag_sr_add(v, part[z * m * n + e]);" in src
    )
    # the partial products past the workspace's header, whose counters other functions keep
    assert "return s > 1 ? ag_work_bytes(s * m * n * sizeof(float)) : 0;" in src
    assert "return bytes > 0 ? 271 + bytes : 0;" in src and "((uintptr_t)d_work + 271) / 16 * 16" in src
    assert "size_t t_matmul_min_plus_f32_workspace_bytes(size_t m, size_t n, size_t k);" in header
    _, src, _ = _render({"semiring": "min_plus", "type": "f32", "witness": True})
    assert "ag_slices" not in src and "_fold" not in src and "return 0;" in src


def test_tiles_load_in_words_where_the_element_allows():
    _, src, _ = _render({"semiring": "plus_times", "type": "f32"})
    assert (
        "const uint4 w = *(const uint4 *)pa[s];" in src
        and "words_a = ((uintptr_t)a | lda * sizeof(float)) % 16 == 0" in src
    )
    _, src, _ = _render({"semiring": "or_and", "type": "u8"})  # two bytes a thread a step: element by element
    assert "words_a" not in src and "ra[s] = *pa[s];" in src


def test_default_shapes():
    sh = tuning.matmul_shape(4)
    assert (sh.bm, sh.bn, sh.bk, sh.tm, sh.tn, sh.threads, sh.min_blocks) == (128, 128, 16, 8, 8, 256, 2)
    assert (sh.wm, sh.wn, sh.pipeline, sh.stages, sh.name) == (16, 128, "registers", 2, "b128x128x16_w16x128_t8x8")
    assert (tuning.matmul_shape(4, witness=True).tm, tuning.matmul_shape(8).bm) == (4, 64)


def _render(table, semirings=()):
    spec = parse(_spec(table, semirings=semirings), "s.toml")
    files = emit.render(spec, "t.h")
    return spec.instances[0], next(v for k, v in files.items() if k.endswith(".cu")), files["t.h"]


def test_a_fused_step_and_only_the_functions_used():
    inst, src, header = _render({"semiring": "min_plus", "type": "f32"})
    assert inst.public_name == "t_matmul_min_plus_f32"
    assert "const float s = a + b;\n    return fminf(c, s);" in src
    assert "acc[i][j] = ag_sr_step(acc[i][j], x[i], y[j]);" in src
    assert "ag_sr_mul" not in src  # the step does not call it
    assert "cudaError_t t_matmul_min_plus_f32(const float *d_a, size_t lda," in header and "MATRIX MULTIPLIES" in header


def test_a_witness_records_the_winning_k():
    inst, src, header = _render({"semiring": "min_plus", "type": "i32", "witness": True, "layout": "tt"})
    assert inst.public_name == "t_matmul_min_plus_i32_tt_witness"
    assert "win[i][j] = (int32_t)(k0 + kk);" in src and "ag_sr_step" not in src
    assert "int32_t *d_witness, size_t ldw," in header


def test_a_user_semirings_default_step_is_add_of_mul():
    _, src, _ = _render({"semiring": "maxtimes"}, semirings=[MAXTIMES])
    assert "return ag_sr_add(c, ag_sr_mul(a, b));" in src and "return fmaxf(x, y);" in src


@pytest.mark.parametrize(
    "lines,key",
    [('mul = "a * * b"', "mul"), ('mul = "a * b"\nfast = "v >>> 0"\nfast_step = "c + a * b"', "fast")],
)
def test_a_user_semiring_that_does_not_compile_is_one_line(tmp_path, nvcc, lines, key):  # noqa: ARG001 - nvcc
    spec = tmp_path / "s.toml"
    spec.write_text(
        f'prefix = "t"\n[[semiring]]\nname = "bad"\ntype = "f32"\nzero = "0.0f"\nadd = "x + y"\n{lines}\n'
        '[[matmul]]\nsemiring = "bad"\n'
    )
    r = run_gen(spec, "-o", tmp_path / "out")
    assert_one_error_line(r)
    assert f"semiring 'bad': {key}" in r.stderr
    assert not (tmp_path / "out").exists()


def test_nvcc_compiles_the_gpu_tests_spec(tmp_path, nvcc):  # noqa: ARG001 - nvcc: present
    files = emit.render(load(SPEC), "mt.h")
    compiled, problems = nvcc_problems(files, tmp_path)
    assert compiled == len(load(SPEC).instances) and not problems, "\n".join(problems)


def test_warp_tiles_place_the_lanes():
    # warps as wide as the tile (the default): the lanes' rows go on from warp to warp
    _, src, _ = _render({"semiring": "plus_times", "type": "f32"})
    assert "const unsigned int r0 = threadIdx.x / 16 * 8, c0 = threadIdx.x % 16 * 4;" in src
    assert "y[j] = bs[kk][c0 + (j < 4 ? j : j + 60)];" in src and "lane" not in src
    # 32 x 64 warps: 4 rows of 8 lanes, two warps across; a thread's column halves 32 apart
    inst, src, header = _render({"semiring": "plus_times", "type": "f32", "warp": [32, 64]})
    assert inst.kernel_name == "t_k_matmul_plus_times_f32_nn_b128x128x16_w32x64_t8x8"
    assert "const unsigned int warp = threadIdx.x / 32, lane = threadIdx.x % 32;" in src
    assert "const unsigned int r0 = warp / 2 * 32 + lane / 8 * 8, c0 = warp % 2 * 64 + lane % 8 * 4;" in src
    assert "y[j] = bs[kk][c0 + (j < 4 ? j : j + 28)];" in src
    assert "warps of 32 x 64, 8 x 8 a thread" in header
    # one warp a block
    _, src, _ = _render({"semiring": "min_plus", "type": "f32", "block": [32, 32, 8], "thread": [4, 8]})
    assert "const unsigned int r0 = threadIdx.x / 4 * 4, c0 = threadIdx.x % 4 * 4;" in src and "warp =" not in src


def _built_for(src: str, cp_async: bool) -> str:
    """The source as the compiler sees it where AG_CP_ASYNC is (sm_80+) or is not (before sm_80):
    only the branches of `#if AG_CP_ASYNC` and `#if !AG_CP_ASYNC` kept that it takes"""
    out, keep = [], [True]
    for line in src.splitlines():
        if line in ("#if AG_CP_ASYNC", "#if !AG_CP_ASYNC"):
            keep.append(keep[-1] and (line == "#if AG_CP_ASYNC") == cp_async)
        elif line == "#else" and len(keep) > 1:
            keep[-1] = keep[-2] and not keep[-1]
        elif line == "#endif" and len(keep) > 1:
            keep.pop()
        elif keep[-1]:
            out.append(line)
    return "\n".join(out)


def test_the_async_pipeline_copies_straight_to_shared_memory():
    table = {"semiring": "plus_times", "type": "f32", "pipeline": "async", "stages": 4, "block": [128, 128, 8]}
    inst, whole, header = _render(table)
    assert inst.kernel_name.endswith("_b128x128x8_w16x128_t8x8_async4")
    assert "#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800\n#define AG_CP_ASYNC 1" in whole
    src = _built_for(whole, cp_async=True)
    assert "float as[4][AG_BK][AG_A_STRIDE];" in src and "ra[" not in src and "ag_store_a" not in src
    # A (m x k, along k) element by element into its k-major tile: 8 along k by 4 rows a warp
    assert "const unsigned int r = threadIdx.x / 8, c = threadIdx.x % 8;" in src
    assert "ag_copy_async4(&as[c][r + 32], from + lda * 32);" in src
    # B (k x n) in 16-byte words where whole and aligned, else element by element, zero past the edges
    assert "ag_copy_async16(&bs[r][c], from);" in src and "cp.async.cg.shared.global [%0], [%1], 16;" in src
    assert "bs[r][c + 3] = ag_sr_zero();" in src
    # 3 steps' copies in flight, a group a step; the barrier after the wait
    assert "cp.async.wait_group 2;" in src and "for (int s = 0; s < 3; ++s) {" in src
    wait = "ag_copy_async_wait();       /* this thread's copies of step s have landed */"
    assert wait + "\n            __syncthreads();" in src
    assert "if (s + 3 < steps)" in src and "cur = cur + 1 == 4 ? 0 : cur + 1;" in src
    assert "cp.async, 4 stages" in header


def test_before_sm80_an_async_shape_goes_through_registers():
    # no cp.async before sm_80: the registers pipeline's kernel in two of the stages' tiles, with its
    # own runs (A in words of 4 along k, where the copies go element by element)
    table = {"semiring": "plus_times", "type": "f32", "pipeline": "async", "stages": 4, "block": [128, 128, 8]}
    _, whole, _ = _render(table)
    src = _built_for(whole, cp_async=False)
    assert "cp.async." not in src and "ag_copy" not in src and "memcpy(smem" not in src
    assert "float as[2][AG_BK][AG_A_STRIDE];" in src and "float ra[4];" in src
    assert "ag_load_a(ra, &pa, m - m0, k, words_a);" in src and "ag_store_b(bs[cur ^ 1], rb);" in src
    assert "const bool words_a = ((uintptr_t)a | lda * sizeof(float)) % 16 == 0;" in src
    # the same kernel through registers asked as such, but for the stages in its name and comments
    regs = _render({**table, "pipeline": "registers", "stages": 2})[1]
    for call in ("ag_load_a(", "ag_store_b(", "__syncthreads"):
        assert src.count(call) == regs.count(call)


def test_the_registers_pipeline_takes_runs_of_one_element():
    # a thread's one element a step (k 4 with 256 threads): loads element by element, no words
    table = {"semiring": "plus_times", "type": "f32", "block": [64, 64, 4], "thread": [4, 4]}
    _, src, _ = _render(table)
    assert "words_" not in src and "bool words" not in src and "ag_load_a(&ra, &pa, m - m0, k);" in src
    assert "float ra;" in src and "ag_store_a(as[0], &ra);" in src  # one element: not an array of one


def test_the_async_fast_step_checks_the_tiles_in_shared_memory():
    table = {"semiring": "min_plus", "type": "i32", "pipeline": "async", "stages": 3, "block": [128, 128, 8]}
    _, whole, _ = _render(table)
    src = _built_for(whole, cp_async=True)
    assert "__syncthreads_and(ag_fast_a_tile(as[cur]) && ag_fast_b_tile(bs[cur]))" in src
    assert "in &= ag_sr_fast_a(as[c + 8][r + 96]);" not in src  # k 8 a step: one slab
    assert "in &= ag_sr_fast_a(as[c][r + 96]);" in src and "ag_fast_loads" not in src
    # before sm_80, through registers: the loads checked as they arrive
    old = _built_for(whole, cp_async=False)
    assert "__syncthreads_and(ag_fast_loads(ra, rb))" in old and "ag_fast_a_tile" not in old


def test_the_async_pipeline_refuses_struct_elements():
    # a struct's alignment may be less than its size: cp.async of the element as one word could fault
    v4 = {"name": "v4", "size": 16, "c": "typedef struct { float x, y, z, w; } v4;"}
    sr = {
        "name": "v4dot",
        "a": "v4",
        "b": "v4",
        "c": "f32",
        "zero": "0.0f",
        "add": "x + y",
        "mul": "a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w",
    }
    spec = {"prefix": "t", "type": [v4], "semiring": [sr], "matmul": [{"semiring": "v4dot", "pipeline": "async"}]}
    with pytest.raises(SpecError) as e:
        parse(spec, "s.toml")
    assert "matmul[0].pipeline" in str(e.value) and "a struct need not be" in str(e.value), str(e.value)
    spec["matmul"] = [{"semiring": "v4dot", "block": [64, 64, 8], "thread": [4, 4]}]  # through registers: fine
    assert parse(spec, "s.toml").instances[0].shape.pipeline == "registers"


def test_the_kernel_start_is_a_compiler_fence_on_every_architecture():
    # sm_90's PDL wait carries a memory clobber; before sm_90 an empty asm with the same clobber, so
    # that the operands' loads compile as on sm_90 (without it f64 ran at 0.80 of sm_90's speed)
    _, src, _ = _render({"semiring": "plus_times", "type": "f64"})
    fence = '    asm volatile("griddepcontrol.launch_dependents;\\n\\tgriddepcontrol.wait;" ::: "memory");\n#else\n'
    assert fence + '    asm volatile("" ::: "memory");\n#endif' in src
