"""One hash a generated file (tests/cpu/golden.json) of what the generator writes for the instance
matrix (tests/matrix.toml: every builtin pair, the user operators, block and tile sweeps of every
primitive), in both forms: the separate sources and the single header; for the GPU transpose test's
spec (every unit path and bank remedy); for the GPU matrix multiply test's (every semiring, layout
and shape); for the NCCL test's (reduces and scans across ranks, both forms); for the several-inputs
test's (operators of two and three input arrays in every family they reach); and for the tuning
test's (its spec shaped by the tuning file that tests/gpu/tune/run.py makes: three shapes by n each).

A failure names the files that changed, appeared or went away.  A change to generated code is
always deliberate: the commit that makes it rewrites the manifest and says why; a refactoring keeps it.

    python3 -m tests.cpu.test_golden --update    # from the repository root: rewrite golden.json
"""

import argparse
import hashlib
import json
import re
import sys
from pathlib import Path

from assocgen import emit, tunefile
from assocgen.spec import Spec, load, parse

from .util import gpu_runner

MANIFEST = Path(__file__).resolve().with_name("golden.json")
GPU = Path(__file__).resolve().parents[1] / "gpu"
TRANSPOSE_SPEC = GPU / "transpose" / "spec.toml"
MATMUL_SPEC = GPU / "matmul" / "spec.toml"
NCCL_SPEC = GPU / "nccl" / "spec.toml"
INPUTS_SPEC = GPU / "inputs" / "spec.toml"
TUNE_DIR = GPU / "tune"
SHOWN = 12  # files named a list in a failure


def _tuned() -> Spec:
    """The tuning test's spec with the tuning file its runner makes (tests/gpu/tune/run.py)."""
    import importlib.util
    import tempfile

    loader = importlib.util.spec_from_file_location("tune_run", TUNE_DIR / "run.py")
    assert loader is not None and loader.loader is not None
    run = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(run)
    spec = load(TUNE_DIR / "spec.toml")
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "tuning.toml"
        path.write_text(run.crafted(spec))
        return tunefile.apply(spec, tunefile.read(path))


def generated() -> dict:
    """Every file the golden test covers, by group: {group: {file name: text}}."""
    run = gpu_runner()
    matrix = parse(run.spec_dict(), "tests/matrix.toml")
    nccl = load(NCCL_SPEC)
    return {
        "sources": emit.render(matrix, f"{run.PREFIX}.h"),
        "single_header": emit.render(matrix, f"{run.PREFIX}.h", single_header=True),
        "transposes": emit.render(load(TRANSPOSE_SPEC), "tt.h"),
        "matmuls": emit.render(load(MATMUL_SPEC), "mt.h"),
        "nccl": {**emit.render(nccl, "nt.h"), "single_header/nt.h": emit.render(nccl, "nt.h", True)["nt.h"]},
        "inputs": emit.render(load(INPUTS_SPEC), "mi.h"),
        "tuned": emit.render(_tuned(), "tu.h"),
    }


def hashes() -> dict:
    """{"group/file": sha256 of its text} for every file of `generated()`."""
    return {
        f"{group}/{name}": hashlib.sha256(text.encode()).hexdigest()
        for group, files in generated().items()
        for name, text in files.items()
    }


def manifest_text(got: dict) -> str:
    return json.dumps(got, indent=1, sort_keys=True) + "\n"


def _names(title: str, names: list) -> str:
    shown = ", ".join(names[:SHOWN]) + (f" and {len(names) - SHOWN} more" if len(names) > SHOWN else "")
    return f"{len(names)} {title}: {shown}"


def differences(want: dict, got: dict) -> list:
    """Lines naming the files that changed, appeared or went away (empty when none did)."""
    changed = sorted(k for k in got.keys() & want.keys() if got[k] != want[k])
    appeared = sorted(got.keys() - want.keys())
    gone = sorted(want.keys() - got.keys())
    return [_names(t, n) for t, n in (("changed", changed), ("appeared", appeared), ("went away", gone)) if n]


def test_rendering_of_the_matrices_is_golden():
    got = hashes()
    assert sum(k.startswith("sources/") for k in got) > 550
    want = json.loads(MANIFEST.read_text())
    lines = differences(want, got)
    assert not lines, (
        "generated code changed:\n  "
        + "\n  ".join(lines)
        + "\nif on purpose, run `python3 -m tests.cpu.test_golden --update` and say why in the commit"
    )


def test_the_manifest_is_written_as_update_writes_it():
    """Sorted keys, one a line: a moved hash is a one-line diff."""
    assert MANIFEST.read_text() == manifest_text(json.loads(MANIFEST.read_text()))


def test_no_template_syntax_reaches_generated_code():
    """A `{{ }}` inside a string that Jinja prints as it is (a 24dcfc8 comment) must not pass."""
    run = gpu_runner()
    files = emit.render(parse(run.spec_dict(), "tests/matrix.toml"), f"{run.PREFIX}.h")
    files.update(emit.render(load(NCCL_SPEC), "nt.h"))
    jinja = re.compile(r"\{\{ [\w.\"(]|\{%|%\}|\{#")  # not C's {{1, 0}} initializers
    for name, text in files.items():
        m = jinja.search(text)
        assert m is None, f"{name}: {text[max(0, m.start() - 60) : m.end() + 60]!r}"


def main() -> int:
    ap = argparse.ArgumentParser(description="Check or rewrite tests/cpu/golden.json (one hash a generated file).")
    ap.add_argument("--update", action="store_true", help="rewrite the manifest from what the generator writes now")
    args = ap.parse_args()
    got = hashes()
    if args.update:
        MANIFEST.write_text(manifest_text(got))
        print(f"wrote {len(got)} hashes to {MANIFEST}")
        return 0
    lines = differences(json.loads(MANIFEST.read_text()), got)
    print("\n".join(lines) or f"all {len(got)} files as in {MANIFEST.name}")
    return 1 if lines else 0


if __name__ == "__main__":
    sys.exit(main())
