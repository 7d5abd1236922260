"""A golden hash of what the generator writes for the GPU test runner's instance matrix (every
builtin pair, the user operators, block and tile sweeps of every primitive), in both forms: the
separate sources and the single header; for the GPU transpose test's spec (every unit path and
bank remedy); and for the GPU matrix multiply test's (every semiring, layout and shape).  A change
to generated code is always deliberate: the commit that makes it updates GOLDEN and says why; a
refactoring keeps it."""

import hashlib
from pathlib import Path

from assocgen import emit
from assocgen.spec import load, parse

from .util import gpu_runner

TRANSPOSE_SPEC = Path(__file__).resolve().parents[1] / "gpu" / "transpose" / "spec.toml"
MATMUL_SPEC = TRANSPOSE_SPEC.parents[1] / "matmul" / "spec.toml"

GOLDEN = {
    "sources": "13450fc7e23c99b028e61573de8681348e7a9c09213e9277736eafd2bc6b43e7",
    "single_header": "599ecb09e1795d3a917f4ac9e19c98ea98a1e561a6ea9edc47792c0dbfd2e47d",
    "transposes": "bb9d3fcf36976db63fd97ce39388af2c953e9ce9644af498cb2acd2f3054ca3b",
    "matmuls": "1627ecc967431e9342b1b1450404b22e7ae6be8e6e9c3b60cdf3f4908874ea31",
}


def _digest(files: dict) -> str:
    h = hashlib.sha256()
    for name in sorted(files):
        h.update(name.encode() + b"\0" + files[name].encode() + b"\0")
    return h.hexdigest()


def test_rendering_of_the_gpu_matrix_is_golden():
    run = gpu_runner()
    spec = parse(run.spec_dict(), "tests/gpu/run.py")
    assert len(spec.instances) > 300
    got = {
        "sources": _digest(emit.render(spec, f"{run.PREFIX}.h")),
        "single_header": _digest(emit.render(spec, f"{run.PREFIX}.h", single_header=True)),
        "transposes": _digest(emit.render(load(TRANSPOSE_SPEC), "tt.h")),
        "matmuls": _digest(emit.render(load(MATMUL_SPEC), "mt.h")),
    }
    assert got == GOLDEN, (
        "generated code changed: if on purpose, set GOLDEN in tests/cpu/test_golden.py to\n"
        f"{got}\nand say why in the commit"
    )
