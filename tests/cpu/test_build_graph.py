"""build.ninja names every file the generator writes for each spec it builds, and compiles each
source: a spec that gains or loses an instance without build.ninja following fails here, not
in a confusing link error later."""

import re

import pytest

from .util import REPO, public_names

NINJA = (REPO / "build.ninja").read_text().replace("$\n", " ")


def _gen_statements():
    """(spec, outdir, declared outputs) of every `gen` build statement."""
    out = []
    for m in re.finditer(r"^build ([^:]+):\s+gen\s+(\S+)[^\n]*\n((?:  \w+ = [^\n]*\n)*)", NINJA, re.M):
        outputs = m.group(1).split()
        outdir = re.search(r"outdir = (\S+)", m.group(3)).group(1)
        out.append((m.group(2), outdir, outputs))
    return out


STATEMENTS = _gen_statements()


def test_every_spec_is_built():
    specs = {s for s, _, _ in STATEMENTS}
    assert {"specs/default.toml", "bench/spec.toml", "examples/sum_f32/spec.toml", "examples/minmax/spec.toml",
            "examples/mat2/spec.toml"} <= specs


@pytest.mark.parametrize("spec,outdir,outputs", STATEMENTS, ids=[s for s, _, _ in STATEMENTS])
def test_gen_outputs_match_the_spec(spec, outdir, outputs):
    names = public_names(spec)
    sources = sorted(o for o in outputs if o.endswith(".cu"))
    want = sorted(f"{outdir}/{name}.cu" for name in names)
    assert sources == want, f"build.ninja lists for {spec}:\n  extra {set(sources) - set(want)}\n  missing {set(want) - set(sources)}"
    headers = [o for o in outputs if o.endswith(".h")]
    assert len(headers) == 1


@pytest.mark.parametrize("spec,outdir,outputs", [s for s in STATEMENTS if s[0] == "bench/spec.toml"], ids=["bench"])
def test_bench_compiles_and_links_every_source(spec, outdir, outputs):
    for src in (o for o in outputs if o.endswith(".cu")):
        obj = src[:-3] + ".o"
        assert re.search(rf"^build {re.escape(obj)}: nvcc {re.escape(src)}$", NINJA, re.M), f"{src} is not compiled"
        link = re.search(r"^build \$b/bench/bench: link ([^\n]*)$", NINJA, re.M).group(1)
        assert obj in link.split(), f"{obj} is not linked into the bench"


def test_generation_depends_on_every_generator_file_and_template():
    deps = re.search(r"^build gendeps: phony ([^\n]*)$", NINJA, re.M).group(1).split()
    want = sorted(str(p.relative_to(REPO)) for pattern in ("generator/*.py", "templates/**/*.j2")
                  for p in REPO.glob(pattern))
    missing = sorted(set(want) - set(deps))
    assert not missing, f"build.ninja's gendeps lacks {missing}: outputs would not be regenerated when they change"
