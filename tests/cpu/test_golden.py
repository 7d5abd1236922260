"""A golden hash of what the generator writes for the GPU test runner's instance matrix (every
builtin pair, the user operators, block and tile sweeps of every primitive), in both forms: the
separate sources and the single header; for the GPU transpose test's spec (every unit path and
bank remedy); for the GPU matrix multiply test's (every semiring, layout and shape); and for the
NCCL test's (reduces and scans across ranks, both forms); and for the several-inputs test's
(operators of two and three input arrays in every family they reach); and for the tuning test's
(its spec shaped by the tuning file that tests/gpu/tune/run.py makes: three shapes by n each).  A change
to generated code is always deliberate: the commit that makes it updates GOLDEN and says why; a
refactoring keeps it."""

import hashlib
from pathlib import Path

from assocgen import emit, tunefile
from assocgen.spec import load, parse

from .util import gpu_runner

TRANSPOSE_SPEC = Path(__file__).resolve().parents[1] / "gpu" / "transpose" / "spec.toml"
MATMUL_SPEC = TRANSPOSE_SPEC.parents[1] / "matmul" / "spec.toml"
NCCL_SPEC = TRANSPOSE_SPEC.parents[1] / "nccl" / "spec.toml"
INPUTS_SPEC = TRANSPOSE_SPEC.parents[1] / "inputs" / "spec.toml"
TUNE_DIR = TRANSPOSE_SPEC.parents[1] / "tune"

GOLDEN = {
    "sources": "6f261dc64f9ba35f81b2bbeb8c4af0091ea662ab657e8a4cae9bf8ea5210e5c8",
    "single_header": "c3c159163868dd96ed8cc64e07af7526277f5b63b32b630da491cc915f7ad8fe",
    "transposes": "1c1408c2d1fe6af39693c2ccb61371d6164249494220aa25f4a198edc26c9d7e",
    "matmuls": "665f3eb4ebf604600b566da2af85dab241661c46e4fd47626f5583e06c2186bd",
    "nccl": "e74c9db9c0c712146c523c8b93769a171c13bbb8c439473fde5a86a3d9ce4573",
    "inputs": "d44749f1f202e178032598d2cd5672b8f3ce75faa8ae32bbd011225fb881100e",
    "tuned": "d01fb01a52dc1be1a35bc5f190c9b1d508a32c8d2922bd4be6a1870e01dd13f7",
}


def _digest(files: dict) -> str:
    h = hashlib.sha256()
    for name in sorted(files):
        h.update(name.encode() + b"\0" + files[name].encode() + b"\0")
    return h.hexdigest()


def _tuned():
    """The tuning test's spec with the tuning file its runner makes (tests/gpu/tune/run.py)."""
    import importlib.util
    import tempfile

    loader = importlib.util.spec_from_file_location("tune_run", TUNE_DIR / "run.py")
    run = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(run)
    spec = load(TUNE_DIR / "spec.toml")
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "tuning.toml"
        path.write_text(run.crafted(spec))
        return tunefile.apply(spec, tunefile.read(path))


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
        "tuned": _digest(emit.render(_tuned(), "tu.h")),
    }
    assert got == GOLDEN, (
        "generated code changed: if on purpose, set GOLDEN in tests/cpu/test_golden.py to\n"
        f"{got}\nand say why in the commit"
    )
