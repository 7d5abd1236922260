"""Every architecture CUDA 13 builds for (generator/tables.py ARCHS), and every built-in shape
fitting each one's limits (docs/design.md, "Architectures").

The table is checked against nvcc (its list of real architectures) and ptxas (the threads and
blocks an SM past which it ignores the occupancy that __launch_bounds__ asks, with a warning).
Every kernel shape of the tests' matrix, the benchmarks', the examples' and the default spec's
instances (each shape by size too) is then held against every architecture: threads a block,
the blocks an SM asked of each architecture's compiler (ptxas ignores, with a warning, an ask past
the SM's threads or blocks), and its static shared memory (the shape's own figures: staging,
tiles) against the 48 KiB a block may declare and what an SM holds.  The asks are the compiler's
register budget, not a promise: where shared memory holds fewer blocks (on sm_90 as elsewhere),
fewer run.  The shared memory the kernels truly take is checked from their cubins, for every
architecture, by tests/cpu/test_fat_build.py.
"""

import re
import subprocess
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from assocgen import emit, tuning
from assocgen import spec as specs
from assocgen.model import Primitive
from assocgen.tables import STATIC_SMEM_PER_BLOCK

from .util import NVCC, REPO, matrix_spec

SPECS = sorted(
    str(p.relative_to(REPO))
    for p in [*REPO.glob("bench/**/spec.toml"), *REPO.glob("examples/*/spec.toml"), *REPO.glob("tests/gpu/*/spec.toml")]
) + ["specs/default.toml"]
NONE = ((0, 0),)  # by_arch: no minimum asked, on any architecture


def test_the_table_is_nvccs_list(nvcc):
    r = subprocess.run([NVCC, "--list-gpu-code"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert sorted(r.stdout.split()) == sorted(tuning.ARCHS), "ARCHS must hold every real architecture nvcc lists"
    assert tuning.TARGET is tuning.ARCHS["sm_90"]


def _warns(tmp: Path, arch: str, threads: int, blocks: int) -> bool:
    ptx = tmp / f"k{threads}_{blocks}.ptx"
    if not ptx.exists():
        src = tmp / "k.cu"
        src.write_text(
            f'extern "C" __global__ void __launch_bounds__({threads}, {blocks})\n'
            "k(float *p) { p[threadIdx.x] += 1; }\n"
        )
        subprocess.run([NVCC, "-ptx", "-arch=compute_75", str(src), "-o", str(ptx)], check=True, timeout=120)
    r = subprocess.run([NVCC.replace("nvcc", "ptxas"), f"-arch={arch}", str(ptx), "-o", "/dev/null"],
                       capture_output=True, text=True, timeout=120)  # fmt: skip
    assert r.returncode == 0, r.stderr
    return "minnctapersm" in r.stderr


def test_ptxas_agrees_on_threads_and_blocks_an_sm(nvcc, tmp_path):
    for a in tuning.ARCHS.values():
        # blocks of 32 threads: the blocks an SM bind; blocks of 128: the threads
        assert not _warns(tmp_path, a.name, 32, a.blocks_per_sm), a
        assert _warns(tmp_path, a.name, 32, a.blocks_per_sm + 1), a
        assert not _warns(tmp_path, a.name, 128, a.threads_per_sm // 128), a
        assert _warns(tmp_path, a.name, 128, a.threads_per_sm // 128 + 1), a


def test_by_arch_runs_and_the_target():
    assert tuning.by_arch(lambda a: 3) == ((750, 3),)
    runs = tuning.by_arch(lambda a: a.threads_per_sm)
    assert runs[0][0] == 1100 and runs[-1] == (750, 1024) and tuning.at_target(runs) == 2048
    for a in tuning.ARCHS.values():  # the chain's reading: the first run at or below the architecture
        assert next(v for at, v in runs if a.cuda_arch >= at) == a.threads_per_sm
    assert all(STATIC_SMEM_PER_BLOCK <= a.smem_per_block <= a.smem_per_sm for a in tuning.ARCHS.values())


# ---- every built-in shape


def _instances() -> Iterator[tuple[str, specs.Kernel]]:
    for path in SPECS:
        for inst in specs.load(str(REPO / path)).instances:
            yield path, inst
    for inst in specs.parse(matrix_spec(), "tests/matrix.toml").instances:
        yield "tests/matrix.toml", inst


def _scan_kernels(inst: specs.Instance) -> Iterator[tuple[str, int, tuning.ByArch, int]]:
    sh = tuning.scan_shape(inst)
    yield "tile", sh.block, sh.min_blocks_by_arch, sh.stage * 16 * sh.warps
    if sh.seg_spans:
        sp = sh.seg_spans
        yield "spans", sp.block, sp.min_blocks_by_arch, 0
        yield "split", sp.split_block, NONE, 0
        for threads in sp.block_threads:
            yield "block", threads, NONE, 0


def _kernels(inst: specs.Kernel) -> Iterator[tuple[str, int, tuning.ByArch, int]]:
    """(kernel, threads a block, minimum blocks asked by architecture, static shared memory of the
    shape's own (staging, tiles; not the few words every kernel keeps)) of each kernel of `inst`."""
    if isinstance(inst, specs.Instance):
        for s in [inst] + [i for _, i in tuning.size_shapes(inst)]:
            if s.primitive == Primitive.REDUCE:
                sh = tuning.reduce_shape(s)
                yield f"{s.block}x{s.items}", sh.block, sh.min_blocks_by_arch, sh.stage * 16 * sh.warps
            else:
                yield from _scan_kernels(s)
    elif isinstance(inst, specs.Transpose):
        yield "tile", inst.shape.threads, NONE, inst.shape.smem_bytes
    elif isinstance(inst, specs.Matmul):
        yield "tile", inst.shape.threads, ((0, inst.shape.min_blocks),), inst.shape.smem_bytes
    elif isinstance(inst, specs.Cols):
        yield "cols", inst.shape.block, NONE, inst.shape.block * inst.shape.vec * inst.shape.acc_size
    else:
        yield "rows", inst.shape.block, NONE, 0
        if inst.kind != "reduce":  # long rows: the scan family's kernel (emit._line_scan)
            prim = Primitive.SCAN if inst.kind == "scan" else Primitive.EXSCAN
            line = specs.Instance(inst.prefix, prim, inst.op, tuning.DEFAULT_BLOCK, 1, "line")
            yield from _scan_kernels(replace(line, items=tuning.default_items(line)))


def _problems(where: str, threads: int, by_arch: tuning.ByArch, smem: int) -> Iterator[str]:
    if not 32 <= threads <= 1024 or threads % 32:
        yield f"{where}: {threads} threads a block"
    if smem > STATIC_SMEM_PER_BLOCK:
        yield f"{where}: {smem} bytes of static shared memory"
    for a in tuning.ARCHS.values():
        blocks = next(v for at, v in by_arch if a.cuda_arch >= at)
        if blocks * threads > a.threads_per_sm or blocks > a.blocks_per_sm:
            yield f"{where}: {blocks} blocks of {threads} threads asked of {a.name}'s SM"
        if smem + 1024 > min(a.smem_per_block, a.smem_per_sm):
            yield f"{where}: a block of {smem} bytes of shared memory does not fit {a.name}'s SM"
        if blocks and a.regs_per_sm // (blocks * threads) < 32:
            yield f"{where}: {blocks} blocks leave {a.name}'s threads fewer than 32 registers"


def test_every_builtin_shape_fits_every_architecture():
    seen, problems = set(), []
    for source, inst in _instances():
        for kernel, threads, by_arch, smem in _kernels(inst):
            key = (threads, by_arch, smem)
            if key not in seen:
                seen.add(key)
                problems += _problems(f"{source}: {inst.public_name} ({kernel})", threads, by_arch, smem)
    assert len(seen) > 50, "the instances' shapes were not all found"
    assert not problems, "\n".join(problems)


def test_minimum_blocks_differ_by_architecture_where_the_sm_does():
    """The default scan tile's ask: sm_90's unchanged; the same in an sm_80 build (its PTX runs on
    sm_90 too, and its SM holds as many threads); fewer where the SM holds fewer threads and less
    shared memory (sm_75, sm_86, sm_120)."""
    spec = specs.parse({"prefix": "q", "scan": [{"op": "sum", "type": "f32"}]}, "s.toml")
    (inst,) = spec.instances
    runs = tuning.scan_shape(inst).min_blocks_by_arch
    assert tuning.scan_shape(inst).min_blocks == tuning.at_target(runs) == tuning.at_arch(runs, 900)
    assert tuning.at_arch(runs, 800) == tuning.at_arch(runs, 900)
    assert max(tuning.at_arch(runs, a) for a in (750, 860, 1200)) < tuning.at_arch(runs, 900)
    assert re.fullmatch(r"sm_\d+", tuning.TARGET.name)


def test_shared_memory_of_later_sms_counts():
    """Blocks by shared memory follow the largest SM of the architecture or any later one."""
    arch = tuning.ARCHS
    assert tuning.smem_from(arch["sm_75"]) == tuning.smem_from(arch["sm_80"]) == arch["sm_90"].smem_per_sm
    assert tuning.smem_from(arch["sm_120"]) == arch["sm_120"].smem_per_sm
    assert all(tuning.smem_from(a) >= a.smem_per_sm for a in arch.values())


def test_tune_candidates_ask_the_tuned_gpus_full_sm():
    """`assocgen tune` on any GPU: its full-occupancy candidate is that GPU's SM's (ARCHS by the
    architecture the GPU reports), sm_90's where the table does not know it."""
    spec = specs.parse({"prefix": "q", "scan": [{"op": "sum", "type": "f32"}]}, "s.toml")
    (inst,) = spec.instances
    for arch, full in (("sm_90", 8), ("sm_86", 6), ("sm_75", 4)):
        asked = {c.blocks_per_sm for c in tuning.tune_candidates(inst, tuning.ARCHS[arch])}
        assert full in asked and not {b for b in asked if b > full}, (arch, asked)
    assert tuning.tune_candidates(inst) == tuning.tune_candidates(inst, tuning.TARGET)


def test_segmented_reduce_caps_registers_below_sm80():
    """PTX for sm_75 of a segmented reduce by offsets (its tiles and its group kernels) caps a
    thread's registers where sm_75's few blocks would leave a newer GPU's JIT more than sm_90's ask
    does: `__maxnreg__` in the chain's oldest branch, behind nvcc's version (12.4 has it), and the
    launch bounds everywhere else; no cap for the other scans, nor where sm_75 asks as much."""
    spec = specs.parse({"prefix": "q", "segreduce": [{"op": "sum", "type": "f32"}]}, "s.toml")
    (inst,) = spec.instances
    sh = tuning.scan_shape(inst)
    assert sh.seg_spans is not None
    for block, blocks, regs in (
        (sh.block, sh.min_blocks_by_arch, sh.max_regs_by_arch),
        (sh.seg_spans.block, sh.seg_spans.min_blocks_by_arch, sh.seg_spans.max_regs_by_arch),
    ):
        cap = tuning.at_arch(regs, 750)
        assert cap and all(tuning.at_arch(regs, a.cuda_arch) == 0 for a in tuning.ARCHS.values() if a.cuda_arch >= 800)
        assert cap >= 65536 // (block * tuning.at_arch(blocks, 900)) // 8 * 8
        assert cap < 65536 // (block * tuning.at_arch(blocks, 750))
        at, _, last = tuning.bounds(blocks, regs)[-1]
        assert at == 750 and last == cap
    scan = specs.parse({"prefix": "q", "scan": [{"op": "sum", "type": "f32"}]}, "s.toml").instances[0]
    assert not any(r for _, r in tuning.scan_shape(scan).max_regs_by_arch)
    cu = "".join(t for name, t in emit.render(spec, "q.h").items() if name.endswith(".cu"))
    first = cu.index("#define AG_SPAN_BOUNDS")
    chain = cu[cu.rindex("#if !defined(__CUDA_ARCH__)", 0, first) : cu.index("#endif", first) + len("#endif")]
    assert chain.count("__maxnreg__(") == 1
    assert "#elif __CUDACC_VER_MAJOR__ * 100 + __CUDACC_VER_MINOR__ < 1204" in chain
    assert re.search(r"#else\n#define AG_SPAN_BOUNDS __maxnreg__\(\d+\)\n#endif", chain)
    with pytest.raises(ValueError):
        tuning.bounds(((800, 6), (750, 4)), ((800, 40), (750, 0)))
