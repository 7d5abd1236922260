"""Every TOML and C block of README.md and docs/*.md runs: specs generate, C compiles, whole programs link.

Conventions (docs/testing.md says them too):
- a ```toml block is a whole spec: `python -m assocgen SPEC -o DIR` must succeed without a note;
- a ```c block is a whole C file, compiled with gcc (util.GCC_C_FLAGS) against the header generated
  from the nearest ```toml block above it in the same file; one with `int main` is also linked
  against that spec's generated sources (nvcc -c each .cu, then nvcc to link);
- a line `<!-- docs-test: skip (why) -->` right before a block leaves it out (a fragment, an error
  example); keep them rare.
"""

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from .util import GCC_C_FLAGS, NVCC, REPO, gen_ok

DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\w*)\s*$")
SKIP = re.compile(r"^<!--\s*docs-test:\s*skip\b.*-->\s*$")
MAX_SKIPS = 3  # an opt-out is an exception: a few in all the pages
LINK_FLAGS = ["-arch=sm_90"]


@dataclass(frozen=True)
class Block:
    path: Path
    line: int  # 1-based line of the opening fence
    lang: str
    text: str
    skipped: bool
    spec: "Block | None" = None  # a C block's spec: the nearest TOML block above

    @property
    def id(self) -> str:
        return f"{self.path.relative_to(REPO)}:{self.line}:{self.lang}"


def blocks(path: Path) -> list[Block]:
    """The fenced blocks of a Markdown file, each C block tied to the nearest TOML block above."""
    out: list[Block] = []
    lines = path.read_text().splitlines()
    spec = None
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        end = i + 1
        while end < len(lines) and lines[end].rstrip() != "```":
            end += 1
        prev = next((lines[k] for k in range(i - 1, -1, -1) if lines[k].strip()), "")
        b = Block(path, i + 1, m.group(1), "\n".join(lines[i + 1 : end]) + "\n", bool(SKIP.match(prev.strip())))
        if b.lang == "toml" and not b.skipped:
            spec = b
        if b.lang == "c":
            b = Block(b.path, b.line, b.lang, b.text, b.skipped, spec)
        out.append(b)
        i = end + 1
    return out


ALL = [b for p in DOCS for b in blocks(p)]
TOML = [b for b in ALL if b.lang == "toml" and not b.skipped]
C = [b for b in ALL if b.lang == "c" and not b.skipped]

_generated: dict[Block, Path] = {}
_objects: dict[Block, list[Path]] = {}


def generate(spec: Block, tmp_root: Path) -> Path:
    """Generate a spec block once a session; returns its output folder."""
    if spec not in _generated:
        d = tmp_root / f"{spec.path.stem}-{spec.line}"
        d.mkdir(parents=True)
        (d / "spec.toml").write_text(spec.text)
        gen_ok(d / "spec.toml", "-o", d / "gen")
        _generated[spec] = d / "gen"
    return _generated[spec]


def run(cmd: list) -> None:
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"{' '.join(map(str, cmd))}\n{r.stdout}\n{r.stderr}"


@pytest.fixture(scope="session")
def docs_tmp(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("docs")


def test_found_blocks():
    """The pages exist and hold blocks; opt-outs stay rare; every C block has a spec above it."""
    assert (REPO / "docs").is_dir() and len(DOCS) > 1
    assert TOML and C
    skips = [b.id for b in ALL if b.skipped]
    assert len(skips) <= MAX_SKIPS, f"too many docs-test opt-outs: {skips}"
    assert [b.id for b in C if b.spec is None] == [], "C blocks with no ```toml block above them"
    assert any("int main" in b.text for b in C if b.path.name == "README.md"), "the README's example program"


@pytest.mark.parametrize("block", TOML, ids=[b.id for b in TOML])
def test_spec_generates(block: Block, docs_tmp: Path):
    generate(block, docs_tmp)


@pytest.mark.parametrize("block", C, ids=[b.id for b in C])
def test_c_compiles(block: Block, docs_tmp: Path, nvcc):
    assert block.spec is not None
    gen = generate(block.spec, docs_tmp)
    work = docs_tmp / f"c-{block.path.stem}-{block.line}"
    work.mkdir()
    (work / "snippet.c").write_text(block.text)
    run(["gcc", *GCC_C_FLAGS, f"-I{gen}", "-c", work / "snippet.c", "-o", work / "snippet.o"])
    if not re.search(r"\bint\s+main\s*\(", block.text):
        return
    if block.spec not in _objects:
        objs = []
        for cu in sorted(gen.glob("*.cu")):
            run([NVCC, "-O3", *LINK_FLAGS, f"-I{gen}", "-c", cu, "-o", cu.with_suffix(".o")])
            objs.append(cu.with_suffix(".o"))
        _objects[block.spec] = objs
    run([NVCC, *LINK_FLAGS, work / "snippet.o", *_objects[block.spec], "-o", work / "program"])
