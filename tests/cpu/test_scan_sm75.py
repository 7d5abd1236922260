"""The scan family (scans, segmented scans and reduces, reduces by key, scans along rows) on sm_75,
which has no cp.async and no __reduce_or_sync: each use of them sits in the sm_80+ branch of a
helper whose other branch does without (tests/matrix.toml's sources, read), and one instance of each
scan kernel shape of the matrix builds as sm_75 code and compute_75 PTX with no warning (the GPU
test runs the whole matrix as compute_75 PTX: tests/gpu/run.py --ptx 75)."""

import os
import re
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from .util import NVCC, NVCC_FLAGS, WARNING, gpu_runner

SM80 = re.compile(r"__CUDA_ARCH__ >= (\d+)")
NEEDS_SM80 = re.compile(r'"cp\.async|__reduce_or_sync\(')  # an instruction or intrinsic of sm_80+


def _scan_family(inst) -> bool:
    return inst.family == "scan" or (inst.family == "rows" and inst.kind != "reduce")


def _matrix():
    from assocgen.spec import parse

    return parse(gpu_runner().spec_dict(), "tests/gpu/run.py")


def _unguarded(text: str) -> list[str]:
    """The lines that use what sm_80 brought outside an `#if ... __CUDA_ARCH__ >= 800` (or later)
    branch (its #else or no #if at all)."""
    stack: list[bool] = []  # one an #if: whether this branch is sm_80+ only
    bad = []
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("#if"):
            m = SM80.search(s)
            stack.append(bool(m and int(m.group(1)) >= 800))
        elif s.startswith(("#else", "#elif")):
            stack[-1] = False
        elif s.startswith("#endif"):
            stack.pop()
        elif NEEDS_SM80.search(line) and not any(stack):
            bad.append(line.strip())
    return bad


def test_scans_use_cp_async_and_reduce_or_only_behind_sm_80_guards():
    from assocgen import emit

    spec = _matrix()
    names = {f"{i.public_name}.cu" for i in spec.instances if _scan_family(i)}
    files = emit.render(spec, "t.h")
    sources = {n: t for n, t in files.items() if n in names}
    assert len(sources) == len(names) > 300
    assert any("cp.async.cg.shared.global" in t for t in sources.values())
    assert any("__reduce_or_sync(" in t for t in sources.values())
    bad = {n: u for n, t in sources.items() if (u := _unguarded(t))}
    assert not bad, list(bad.items())[:3]


def _shape_key(inst) -> tuple:
    """What picks the scan kernel's code paths: the primitive (inclusive and exclusive alike), the
    heads, and for each of its shapes by n whether the tile is resident, padded, stored by bulk
    copies, read in chunks of several words, staged at all, keys as words, spans of segments; the
    input's size by 16 and 4 bytes (which copies a partial tile takes)."""
    from assocgen import tuning

    size = inst.op.in_type.size
    if inst.family == "rows":
        return ("rows", size % 16 == 0, size % 4 == 0)
    shapes = {s for _, s in tuning.size_shapes(inst) or []} or {inst}
    paths = set()
    for sh in shapes:
        s = tuning.scan_shape(sh)
        paths.add((s.resident, s.pad, s.bulk_store, s.chunk > 1, s.stage > 0, s.words_keys > 0, s.seg_spans is None))
    return (str(inst.primitive).replace("ex", ""), str(inst.heads), size % 16 == 0, size % 4 == 0, *sorted(paths))


def scan_shape_instances() -> list[str]:
    """One instance (the first in the matrix) of each scan kernel shape (_shape_key)."""
    first: dict = {}
    for inst in _matrix().instances:
        if _scan_family(inst):
            first.setdefault(_shape_key(inst), inst.public_name)
    return sorted(first.values())


@pytest.mark.slow
def test_one_instance_of_each_scan_shape_builds_for_sm_75_without_warnings(tmp_path, nvcc):  # noqa: ARG001
    from assocgen import emit

    names = scan_shape_instances()
    spec = _matrix()
    spec.instances = [i for i in spec.instances if i.public_name in names]
    assert len(names) > 40
    files = emit.render(spec, "t.h")
    emit.write(emit.targets(files, tmp_path, tmp_path), tmp_path, "t.h")
    sources = [tmp_path / f"{n}.cu" for n in names]
    # sm_75 code (ptxas: no cp.async there) and compute_75 PTX, in one build
    flags = [f for f in NVCC_FLAGS if not f.startswith("-arch=")]
    flags += ["-gencode", "arch=compute_75,code=[sm_75,compute_75]", f"-I{tmp_path}", "-c"]

    def build(cu):
        cmd = [NVCC, *flags, str(cu), "-o", str(cu.with_suffix(".o"))]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=600)

    start = time.monotonic()
    with ThreadPoolExecutor(int(os.environ.get("NVCC_JOBS", 0)) or 2) as pool:
        results = dict(zip(sources, pool.map(build, sources), strict=True))
    elapsed = time.monotonic() - start
    bad = {}
    for cu, r in results.items():
        said = r.stdout + r.stderr
        if r.returncode or WARNING.search(said):
            bad[cu.name] = said[-2000:]
    assert not bad, f"{len(bad)} of {len(sources)}: " + "\n".join(f"--- {n}\n{t}" for n, t in list(bad.items())[:5])
    print(f"{len(sources)} scan shapes built for sm_75 in {elapsed:.0f} s")
