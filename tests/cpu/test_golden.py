"""A golden hash of what the generator writes for the GPU test runner's instance matrix (every
builtin pair, the user operators, block and tile sweeps of every primitive), in both forms: the
separate sources and the single header.  A change to generated code is always deliberate: the
commit that makes it updates GOLDEN and says why; a refactoring keeps it."""

import hashlib

from assocgen import emit
from assocgen.spec import parse

from .util import gpu_runner

GOLDEN = {
    "sources": "db4d7c2329a4fb76b3253e46b3da3ac0273397ef9a49e9451d02987632235cab",
    "single_header": "e09d27c96725ce229aeb55bcb87d188494a1171a1a3d45d933bf67ed01da0786",
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
    }
    assert got == GOLDEN, (
        "generated code changed: if on purpose, set GOLDEN in tests/cpu/test_golden.py to\n"
        f"{got}\nand say why in the commit"
    )
