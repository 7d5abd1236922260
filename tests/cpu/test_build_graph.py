"""build.ninja takes each spec's build edges from the .ninja file the generator writes beside the
spec: every spec the repository builds is included, each file is as the generator writes it now
(CI also checks this with git diff after ./setup.sh), its outputs are what the spec asks for, and
generation depends on every module and template of the generator."""

import re
import shlex
import subprocess
import sys

import pytest

from .util import REPO, public_names

NINJA = (REPO / "build.ninja").read_text()
FRAGMENTS = re.findall(r"^subninja (\S+)$", NINJA, re.M)


def _gen_edge(fragment: str):
    """(command, outputs, implicit inputs) of a fragment's generator edge."""
    text = (REPO / fragment).read_text().replace("$\n", " ")
    command = re.search(r"^  command = (.*) > /dev/null$", text, re.M).group(1)
    m = re.search(r"^build ([^:]+): assocgen_\w+_gen ([^|\n]*)\|([^\n]*)$", text, re.M)
    return command, m.group(1).split(), m.group(3).split()


def test_every_spec_is_built():
    assert sorted(FRAGMENTS) == [
        "bench/spec.ninja",
        "examples/apsp/spec.ninja",
        "examples/mat2/spec.ninja",
        "examples/minmax/spec.ninja",
        "examples/nccl/spec.ninja",
        "examples/recurrence/spec.ninja",
        "examples/softmax/spec.ninja",
        "examples/sum_f32/spec.ninja",
        "specs/default.ninja",
    ]
    flat = NINJA.replace("$\n", " ")
    reload = re.search(r"^build build\.ninja: reload \| ([^\n]*)$", flat, re.M).group(1)
    assert sorted(reload.split()) == sorted(FRAGMENTS), "build.ninja is not read again when an included file changes"


@pytest.mark.parametrize("fragment", FRAGMENTS)
def test_fragment_is_what_the_generator_writes(fragment):
    before = (REPO / fragment).read_bytes()
    command, outputs, _ = _gen_edge(fragment)
    argv = shlex.split(command.replace("$$", "$"))
    assert argv[:4] == ["python3", "-P", "-m", "assocgen"]
    r = subprocess.run([sys.executable, *argv[1:]], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    after = (REPO / fragment).read_bytes()
    assert after == before, f"{fragment} is stale: run ./setup.sh (ninja) and commit it"


@pytest.mark.parametrize("fragment", FRAGMENTS)
def test_fragment_outputs_match_the_spec(fragment):
    command, outputs, deps = _gen_edge(fragment)
    argv = shlex.split(command)
    spec, outdir = argv[4], argv[argv.index("-o") + 1]
    names = public_names(spec)
    sources = sorted(o for o in outputs if o.endswith(".cu"))
    assert sources == sorted(f"{outdir}/{name}.cu" for name in names)
    assert len([o for o in outputs if o.endswith(".h")]) == 1 and fragment in outputs
    text = (REPO / fragment).read_text().replace("$\n", " ")
    for src in sources:
        obj = src[:-3] + ".o"
        assert re.search(rf"^build {re.escape(obj)}: assocgen_\w+_nvcc {re.escape(src)} \|", text, re.M), (
            f"{src} is not compiled"
        )
        assert re.search(rf"^build \S+\.a: assocgen_\w+_ar [^\n]*{re.escape(obj)}", text, re.M), (
            f"{obj} is not archived"
        )


def test_the_bench_links_its_library():
    link = re.search(r"^build \$b/bench/bench: link ([^\n]*)$", NINJA, re.M).group(1).split()
    assert "$b/bench/libbench.a" in link


@pytest.mark.parametrize("fragment", FRAGMENTS)
def test_generation_depends_on_every_generator_file_and_template(fragment):
    _, _, deps = _gen_edge(fragment)
    want = sorted(
        str(p.relative_to(REPO)) for pattern in ("generator/*.py", "templates/**/*.j2") for p in REPO.glob(pattern)
    )
    missing = sorted(set(want) - set(deps))
    assert not missing, f"{fragment} lacks {missing}: outputs would not be regenerated when they change"
