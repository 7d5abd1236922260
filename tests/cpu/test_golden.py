"""A golden hash of what the generator writes for the GPU test runner's instance matrix (every
builtin pair, the user operators, block and tile sweeps of every primitive), in both forms: the
separate sources and the single header.  A change to generated code is always deliberate: the
commit that makes it updates GOLDEN and says why; a refactoring keeps it."""

import hashlib

from assocgen import emit
from assocgen.spec import parse

from .util import gpu_runner

GOLDEN = {
    "sources": "2fce46ba448785a5eab5c0a96baf1eb2c7455e365140b6ee4f84b24308d7495f",
    "single_header": "75c98e68a95b66dc33ac999554ec07a97f9933bc1e9c2661986ad8f2e2d830ab",
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
