"""nvcc compiles every kernel of the instance matrix (tests/matrix.toml, which the GPU runner and the
golden test use too) without an error or a warning: every builtin type with every operator that
applies to it, inclusive and exclusive, block sizes 32..1024 with several tiles, the user operators
of the examples (non-commutative ones, user types, operators with another input type) in every
primitive, segmented scans by flags and keys, segmented reduces by offsets and keys, reduces and
scans along rows and down columns.  603 files: 14 minutes with two nvcc processes on two cores."""

import functools
import subprocess
import time

import pytest

from assocgen.spec import parse

from .util import (
    BLOCKS,
    FLOATS,
    INTEGERS,
    NVCC_FLAGS,
    OPS_FOR,
    WARNING,
    gen_ok,
    load_example,
    matrix_spec,
    nvcc_compile_all,
    public_names,
    write_spec,
)

MAIN = ("reduce", "scan", "exscan", "segscan", "exsegscan", "segreduce", "reduce_by_key")


@functools.cache
def _matrix() -> list:
    return parse(matrix_spec(), "tests/matrix.toml").instances


def test_matrix_covers_every_type_and_operator():
    assert sorted(OPS_FOR) == sorted(INTEGERS + FLOATS)
    got = {(str(i.primitive), i.op.name, i.op.in_type.name) for i in _matrix() if hasattr(i, "primitive")}
    for t, ops in OPS_FOR.items():
        for op in ops:
            for primitive in ("reduce", "scan", "exscan"):
                assert (primitive, op, t) in got
    user_ops = {o["name"] for ex in ("mat2", "minmax") for o in load_example(ex).get("operator", [])}
    assert user_ops >= {"mat2mul", "mat3mul", "welford", "minmax"}
    for primitive in MAIN:
        assert user_ops <= {op for p, op, _ in got if p == primitive}, primitive


def test_matrix_sweeps_blocks_and_tiles_of_every_primitive():
    shapes: dict = {}
    for i in _matrix():
        if hasattr(i, "primitive"):
            shapes.setdefault((str(i.primitive), i.op.name), set()).add((i.block, i.items))
    sweeps = {
        ("reduce", "sum"): (1, 4, 16),
        ("reduce", "welford"): (1, 4, 16),
        ("reduce", "mat2mul"): (1, 2, 4, 8),
        ("scan", "sum"): (1, 4, 16),
        ("exsegscan", "mat2mul"): (1, 8),
        ("segreduce", "sum"): (1, 8),
    }
    for key, items in sweeps.items():
        for block in BLOCKS:
            for t in items:
                assert (block, t) in shapes[key], (key, block, t)
    for key in (("exscan", "mat2mul"), ("segscan", "sum"), ("reduce_by_key", "mat2mul")):
        assert {b for b, _ in shapes[key]} >= {32, 128, 1024}, key


def test_matrix_has_keys_and_offsets_of_several_widths():
    index = {}
    for i in _matrix():
        if getattr(i, "index", None) is not None:
            index.setdefault(str(i.primitive), set()).add(i.index.name)
    assert index["segscan"] >= {"u8", "i32", "i64"}
    assert index["exsegscan"] >= {"u8", "i16", "i32", "i64"}
    assert index["segreduce"] >= {"i32", "u32", "i64", "u64"}
    assert index["reduce_by_key"] >= {"i16", "u16", "i32", "u32", "i64"}
    rows = [i for i in _matrix() if not hasattr(i, "primitive")]
    assert {type(i).__name__ for i in rows} == {"Rows", "Cols"}


@pytest.mark.slow
def test_nvcc_compiles_the_matrix_without_warnings(tmp_path, nvcc):
    spec = write_spec(tmp_path / "matrix.toml", matrix_spec())
    out = tmp_path / "out"
    gen_ok(spec, "-o", out)
    names = public_names(spec)
    sources = sorted(out.glob("*.cu"))
    assert sorted(p.stem for p in sources) == sorted(names)
    assert len(sources) > 550

    start = time.monotonic()
    results = nvcc_compile_all(sources, out)
    elapsed = time.monotonic() - start

    failed = {s.name: r for s, r in results.items() if r.returncode != 0}
    warned = {s.name: r for s, r in results.items() if r.returncode == 0 and WARNING.search(r.stdout + r.stderr)}
    report = []
    for title, group in (("failed", failed), ("warned", warned)):
        for name, r in sorted(group.items()):
            report.append(f"--- {title}: {name}\n{(r.stdout + r.stderr)[-3000:]}")
    assert not report, (
        f"nvcc {' '.join(NVCC_FLAGS)}: {len(failed)} failed, {len(warned)} with warnings "
        f"of {len(sources)}\n" + "\n".join(report[:10])
    )
    for s in sources:
        assert s.with_suffix(".o").stat().st_size > 0
    print(f"{len(sources)} kernels compiled in {elapsed:.0f} s")


@pytest.mark.slow
def test_nvcc_compiles_the_default_sources(nvcc):
    """The ready-made sources in generated/assoc/ (the default header's) build as they are committed."""
    from .util import REPO

    sources = sorted((REPO / "generated" / "assoc").glob("*.cu"))
    assert len(sources) >= 30
    results = nvcc_compile_all(sources, REPO / "include")
    bad = {
        s.name: r.stderr[-2000:] for s, r in results.items() if r.returncode != 0 or WARNING.search(r.stdout + r.stderr)
    }
    for s in sources:
        s.with_suffix(".o").unlink(missing_ok=True)
    assert not bad, bad


def test_scans_build_for_sm_80_without_warnings(tmp_path, nvcc):
    # what is sm_90's alone (the bulk store, PDL's wait) sits behind __CUDA_ARCH__, so the same
    # sources build for an A100 (sm_75: tests/cpu/test_scan_sm75.py)
    spec = write_spec(
        tmp_path / "spec.toml",
        {
            "prefix": "t",
            "scan": [{"op": "sum", "type": ["f32", "f64"], "kind": ["inclusive", "exclusive"]}],
            "segscan": [{"op": "sum", "type": "f32", "heads": "keys", "key": "i32"}],
            "segreduce": [{"op": "sum", "type": "f32"}],
        },
    )
    out = tmp_path / "out"
    gen_ok(spec, "-o", out)
    sources = sorted(out.glob("*.cu"))
    assert any("cp.async.bulk.global" in p.read_text() for p in sources)
    flags = [f if f != "-arch=sm_90" else "-arch=sm_80" for f in NVCC_FLAGS]
    for cu in sources:
        r = subprocess.run(
            [nvcc, *flags, f"-I{out}", "-c", str(cu), "-o", str(cu.with_suffix(".o"))],
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert r.returncode == 0 and not WARNING.search(r.stdout + r.stderr), f"{cu.name}:\n{r.stdout}{r.stderr}"
