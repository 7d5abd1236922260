"""nvcc compiles every kernel of a broad matrix without an error or a warning: every builtin type
with every operator that applies to it, block sizes 32..1024 with several tiles, and the user
operators of the examples (non-commutative ones, user types, operators with another input type).
Also the scan family: every builtin pair inclusive and exclusive, segmented scans by flags and
keys, segmented reduces by offsets and keys, user operators in each, block/tile shapes.
About 500 files: several minutes with two nvcc processes."""

import subprocess
import time

import pytest

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


def test_matrix_covers_every_type_and_operator():
    spec = matrix_spec()
    assert sorted(OPS_FOR) == sorted(INTEGERS + FLOATS)
    pairs = {
        (op, t)
        for r in spec["reduce"]
        if "type" in r
        for op in ([r["op"]] if isinstance(r["op"], str) else r["op"])
        for t in ([r["type"]] if isinstance(r["type"], str) else r["type"])
    }
    for t in INTEGERS:
        for op in ("sum", "prod", "min", "max", "and", "or", "xor", "argmin", "argmax"):
            assert (op, t) in pairs
    for t in FLOATS:
        for op in ("sum", "prod", "min", "max", "argmin", "argmax", "ksum"):
            assert (op, t) in pairs
    user_ops = {o["name"] for ex in ("mat2", "minmax") for o in load_example(ex).get("operator", [])}
    assert user_ops >= {"mat2mul", "mat3mul", "welford", "minmax"}
    assert user_ops <= {r["op"] for r in spec["reduce"] if isinstance(r["op"], str)}
    shapes = {(r["op"], r.get("type"), r["block"], r["items"]) for r in spec["reduce"] if "items" in r}
    for block in BLOCKS:
        for items in (1, 4, 16):
            assert ("sum", "f32", block, items) in shapes and ("sum", "u8", block, items) in shapes
            assert ("welford", None, block, items) in shapes
        for items in (1, 4):
            assert ("mat2mul", None, block, items) in shapes


@pytest.mark.slow
def test_nvcc_compiles_the_matrix_without_warnings(tmp_path, nvcc):
    spec = write_spec(tmp_path / "matrix.toml", matrix_spec())
    out = tmp_path / "out"
    gen_ok(spec, "-o", out)
    names = public_names(spec)
    sources = sorted(out.glob("*.cu"))
    assert sorted(p.stem for p in sources) == sorted(names)
    assert len(sources) > 400

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
    # the scan family needs sm_80 (cp.async); what is sm_90's alone (the bulk store, PDL's wait)
    # sits behind __CUDA_ARCH__, so the same sources build for an A100
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
