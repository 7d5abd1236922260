#!/usr/bin/env python3
"""Whether a change to generated code changes what the GPU runs, with no GPU: render a spec with
an earlier commit's generator and with this tree's, compile each source of both to a cubin for
one architecture (sm_90 unless --arch says another; nvcc -O3 -std=c++17 -cubin, the build's flags) and compare the cubins' code and constant
sections (.text.*, .nv.*) kernel by kernel.  The same bytes there mean the same machine code, so
the same speed: no before/after benchmark is needed for that source.

    python3 bench/trace/device_code.py SPEC.toml --base REV [--arch sm_80] [--only NAME,...] [--jobs N] [--keep DIR]

SPEC may also be `gpu-matrix` (tests/matrix.toml as the GPU runner expands it).  Prints one line a
source that differs (its sections, and how many bytes of each) and `N of M differ` last; exit 1
where any differs.  Needs git and nvcc, no GPU."""

import argparse
import os
import shutil
import struct
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NVCC = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
FLAGS = ["-O3", "-std=c++17", "-cubin"]


def sections(cubin: Path) -> dict[str, bytes]:
    """An ELF64 file's sections by name (a NOBITS section as its size alone)."""
    b = cubin.read_bytes()
    (shoff,) = struct.unpack_from("<Q", b, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", b, 0x3A)
    heads = [struct.unpack_from("<IIQQQQIIQQ", b, shoff + i * shentsize) for i in range(shnum)]
    names = heads[shstrndx][4]
    out = {}
    for h in heads:
        name = b[names + h[0] : b.index(b"\0", names + h[0])].decode()
        out[name] = str(h[5]).encode() if h[1] == 8 else b[h[4] : h[4] + h[5]]
    return out


def code(cubin: Path) -> dict[str, bytes]:
    return {k: v for k, v in sections(cubin).items() if k.startswith((".text", ".nv"))}


def render(python_path: str | None, spec: Path, out: Path) -> None:
    env = dict(os.environ)
    if python_path:
        env["PYTHONPATH"] = python_path
    cmd = [sys.executable, "-m", "assocgen", str(spec), "-o", str(out), "--no-compile-check"]
    subprocess.run(cmd, env=env, check=True, capture_output=True, cwd=out.parent)


def base_package(rev: str, tmp: Path) -> str:
    """A folder on which `import assocgen` finds REV's generator (its templates beside it)."""
    tree = tmp / "base-tree"
    tree.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", rev, "generator", "templates"], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    (tmp / "base-pkg").mkdir()
    (tmp / "base-pkg" / "assocgen").symlink_to(tree / "generator")
    return str(tmp / "base-pkg")


def compile_all(src: Path, names: list[str], jobs: int, arch: str) -> None:
    def one(name: str) -> None:
        cmd = [NVCC, *FLAGS, f"-arch={arch}", f"-I{src}", str(src / f"{name}.cu"), "-o", str(src / f"{name}.cubin")]
        subprocess.run(cmd, check=True, capture_output=True)

    with ThreadPoolExecutor(jobs) as pool:
        list(pool.map(one, names))


def spec_file(spec: str, tmp: Path) -> Path:
    if spec != "gpu-matrix":
        return Path(spec).resolve()
    sys.path.insert(0, str(ROOT))
    from tests.cpu.util import gpu_runner, toml_dumps

    path = tmp / "gpu-matrix.toml"
    path.write_text(toml_dumps(gpu_runner().spec_dict()))
    return path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("spec", help="a spec file, or gpu-matrix")
    ap.add_argument("--base", required=True, help="the commit whose generator renders the 'before'")
    ap.add_argument("--arch", default="sm_90", help="the architecture of the cubins (sm_90 unless given)")
    ap.add_argument("--only", help="compile only these sources (names without .cu, comma-separated)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--keep", type=Path, help="work in this folder and keep it")
    args = ap.parse_args()
    tmp = args.keep or Path(tempfile.mkdtemp(prefix="device-code-"))
    tmp.mkdir(parents=True, exist_ok=True)
    try:
        spec = spec_file(args.spec, tmp)
        before, after = tmp / "before", tmp / "after"
        render(base_package(args.base, tmp), spec, before)
        render(None, spec, after)
        names = sorted(p.stem for p in before.glob("*.cu") if (after / p.name).exists())
        if args.only:
            names = [n for n in names if n in args.only.split(",")]
        for d in (before, after):
            compile_all(d, names, args.jobs, args.arch)
        differ = 0
        for name in names:
            a, b = code(before / f"{name}.cubin"), code(after / f"{name}.cubin")
            changed = sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))
            if changed:
                differ += 1
                sizes = ", ".join(f"{k} ({len(a.get(k, b''))} -> {len(b.get(k, b''))} bytes)" for k in changed[:4])
                print(f"differs: {name}: {sizes}")
        print(f"{differ} of {len(names)} differ ({args.arch})")
        return 1 if differ else 0
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
