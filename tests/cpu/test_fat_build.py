"""One instance of every kernel shape, each source built once as a fat binary for every
architecture nvcc 13.0 builds for (generator/tables.py ARCHS: a -gencode each, and the newest's
PTX), with no warning from nvcc or ptxas, and with the static shared memory ptxas reports of every
kernel within what each architecture gives a block (docs/design.md, "Architectures").

The instances: a reduce both ways (striped; ordered, staged), blocks of 32 and 1024, a plain scan
(resident tile, bulk store, several shapes by n) and one of wide accumulators (registers), a
segmented scan by flags and by keys, a segmented reduce by offsets (tiles, spans, split) and by
keys, reduces along rows and down columns and a scan along rows, transposes (words, sub-words,
bytes, naive), and a matrix multiply through registers and through cp.async.

Every scan kernel shape's sm_75 build is test_scan_sm75.py's.  Two nvcc processes at once: 5
minutes on two busy cores (3 CPU-minutes, nvcc 13.0), hence `slow`.
"""

import re
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import pytest

from assocgen import emit, tuning
from assocgen.spec import load, parse

from .util import NVCC, REPO, WARNING, matrix_spec

# (source spec, instances): the matrix's (prefix fb) and the GPU tests' transposes and matmuls
MATRIX = [
    "reduce_sum_f32",
    "reduce_mat2mul_mat2u",
    "sum_f32_b32_t16",
    "sum_f32_b1024_t16",
    "scan_sum_f32",
    "exscan_mat2mul_mat2u",
    "segscan_sum_f32",
    "segscan_sum_i32_by_i32",
    "segreduce_sum_f32",
    "reduce_sum_i32_by_i32",
    "rows_reduce_sum_f32",
    "rows_scan_sum_f32",
    "cols_reduce_sum_f32",
]
OTHERS = {
    "tests/gpu/transpose/spec.toml": ["tt_transpose_f32", "tt_transpose_u8", "tt_transpose_rgb", "tt_f32_naive"],
    "tests/gpu/matmul/spec.toml": ["mt_matmul_plus_times_f32", "mt_pt_f32_async3_tn"],
}
FLAGS = ["-O3", "-std=c++17", "-Xcompiler", "-Wall,-Wextra", "-Xptxas", "-v"]


def _gencode(archs: list[str]) -> list[str]:
    """A -gencode an architecture, the newest with its PTX as well."""
    out = []
    for a in archs:
        code = f"[{a},compute_{a[3:]}]" if a == archs[-1] else a
        out += ["-gencode", f"arch=compute_{a[3:]},code={code}"]
    return out


ALL = sorted(tuning.ARCHS, key=lambda a: tuning.ARCHS[a].cuda_arch)


@pytest.fixture(scope="module")
def sources(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("fat")
    matrix = parse(matrix_spec("fb"), "tests/matrix.toml")
    specs = [replace(matrix, instances=[i for i in matrix.instances if i.public_name[3:] in MATRIX])]
    for path, names in OTHERS.items():
        spec = load(str(REPO / path))
        specs.append(replace(spec, instances=[i for i in spec.instances if i.public_name in names]))
    for spec in specs:
        for name, text in emit.render(spec, f"{spec.prefix}.h").items():
            (out / name).write_text(text)
    return out


def _cases() -> list:
    names = [f"fb_{n}" for n in MATRIX] + [n for names in OTHERS.values() for n in names]
    return [pytest.param(name, ALL, id=f"{name}-all") for name in names]


def _smem(ptxas: str) -> list[tuple[str, str, int]]:
    """(kernel, architecture, static shared memory bytes) of each entry function ptxas -v reports."""
    out, entry = [], None
    for line in ptxas.splitlines():
        m = re.search(r"Compiling entry function '(\w+)' for '(sm_\d+)'", line)
        if m:
            entry = (m[1], m[2])
        if "Used " in line and " registers" in line and entry:
            m = re.search(r"(\d+) bytes smem", line)  # absent: none
            out.append((*entry, int(m[1]) if m else 0))
            entry = None
    return out


def _build(sources: Path, name: str, archs: list[str]) -> subprocess.CompletedProcess:
    src = sources / f"{name}.cu"
    obj = src.with_suffix(f".{len(archs)}.o")
    cmd = [NVCC, *FLAGS, *_gencode(archs), f"-I{sources}", "-c", str(src), "-o", str(obj)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=1800)


@pytest.fixture(scope="module")
def builds(nvcc, sources, request) -> dict:
    """The selected cases' builds, two at a time (the CI machine's two cores)."""
    chosen = {item.callspec.id for item in request.session.items if hasattr(item, "callspec")}
    cases = [(p.values[0], tuple(p.values[1])) for p in _cases() if p.id in chosen]
    with ThreadPoolExecutor(2) as pool:
        done = list(pool.map(lambda c: _build(sources, *c), cases))
    return dict(zip(cases, done, strict=True))


@pytest.mark.slow
@pytest.mark.parametrize("name,archs", _cases())
def test_fat_build_has_no_warning(builds, name, archs):
    r = builds[(name, tuple(archs))]
    assert r.returncode == 0, r.stderr[-4000:]
    assert not WARNING.search(r.stdout + r.stderr), (r.stdout + r.stderr)[-4000:]
    report = _smem(r.stdout + r.stderr)
    assert {a for _, a, _ in report} == set(archs), "ptxas -v reported no kernel for some architecture"
    for kernel, arch, smem in report:
        limit = tuning.ARCHS[arch]
        assert smem + 1024 <= min(limit.smem_per_block, limit.smem_per_sm), (kernel, arch, smem)
