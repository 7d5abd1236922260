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
import re
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
    "sources": "f4f1bc987e9bde539e27bb89b7af857aeb211f5444e4eea6098732a92ba3fb61",
    "single_header": "54c06eb4c7c7eee602b3caa903bc9b8fbe8f0346689f09c4923703047d31157a",
    "transposes": "cc4f7ea76ce1743399fc33ea90f699c8d7bb1a4c0a05c2f67c6a8ce595dfcb4d",
    "matmuls": "9394c7f3af806cceae62db94950c55f129edeb86a1ec11f21a0cd6993ed0e56a",
    "nccl": "46aeeef3220f3b99f5398d65e21580d338bc9eb591e967f446c34f35596ff4fa",
    "inputs": "2bd6a2d368e91b6ea4332143fd55987a439ba8adfac0e55fa99e41cc767c41ec",
    "tuned": "114cbf3b28571f1888cf302f51f6a1c504ba2737017452622180dfe168df5165",
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


def test_no_template_syntax_reaches_generated_code():
    """A `{{ }}` inside a string that Jinja prints as it is (a 24dcfc8 comment) must not pass."""
    run = gpu_runner()
    files = emit.render(parse(run.spec_dict(), "tests/gpu/run.py"), f"{run.PREFIX}.h")
    files.update(emit.render(load(NCCL_SPEC), "nt.h"))
    jinja = re.compile(r"\{\{ [\w.\"(]|\{%|%\}|\{#")  # not C's {{1, 0}} initializers
    for name, text in files.items():
        m = jinja.search(text)
        assert m is None, f"{name}: {text[max(0, m.start() - 60) : m.end() + 60]!r}"
