"""A golden hash of what the generator writes for the GPU test runner's instance matrix (every
builtin pair, the user operators, block and tile sweeps of every primitive), in both forms: the
separate sources and the single header; for the GPU transpose test's spec (every unit path and
bank remedy); for the GPU matrix multiply test's (every semiring, layout and shape); and for the
NCCL test's (reduces and scans across ranks, both forms); and for the several-inputs test's
(operators of two and three input arrays in every family they reach).  A change
to generated code is always deliberate: the commit that makes it updates GOLDEN and says why; a
refactoring keeps it."""

import hashlib
from pathlib import Path

from assocgen import emit
from assocgen.spec import load, parse

from .util import gpu_runner

TRANSPOSE_SPEC = Path(__file__).resolve().parents[1] / "gpu" / "transpose" / "spec.toml"
MATMUL_SPEC = TRANSPOSE_SPEC.parents[1] / "matmul" / "spec.toml"
NCCL_SPEC = TRANSPOSE_SPEC.parents[1] / "nccl" / "spec.toml"
INPUTS_SPEC = TRANSPOSE_SPEC.parents[1] / "inputs" / "spec.toml"

GOLDEN = {
    "sources": "29824102da8d1b99d887d199c5f6dad8af85952eba3797f356759ca49fd39bec",
    "single_header": "b15da9d1ae5653a136fd3ed23d3a0727ec7861f027b8e4f7e0704f53216d3f3a",
    "transposes": "bb9d3fcf36976db63fd97ce39388af2c953e9ce9644af498cb2acd2f3054ca3b",
    "matmuls": "aa84309edc3a4936ab906c94cd44c2029d9a1f76bc3a5b9fc936e49f2d8a95d6",
    "nccl": "37fd77766c5a7f114ac96785ee9ef9f7b3fea5007ba51368519e1e11bd0673e5",
    "inputs": "3472f29cd13a873b75fb9201e843dd95deac3bd3c8ec8ee155670573ac77770e",
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
        "nccl": _digest(
            {**emit.render(load(NCCL_SPEC), "nt.h"), "single": emit.render(load(NCCL_SPEC), "nt.h", True)["nt.h"]}
        ),
        "inputs": _digest(emit.render(load(INPUTS_SPEC), "mi.h")),
    }
    assert got == GOLDEN, (
        "generated code changed: if on purpose, set GOLDEN in tests/cpu/test_golden.py to\n"
        f"{got}\nand say why in the commit"
    )
