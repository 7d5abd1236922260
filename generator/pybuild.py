"""Building a spec into a shared library for Python: generate (emit.render), compile with nvcc
into lib<PREFIX>.so, and describe every public function beside it (<PREFIX>.json, from emit's
Signature: the header's model) for the wrappers (generator/pyload.py).  Builds are cached by a
key of everything that goes into them, and written atomically (a temporary folder, renamed).
"""

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import __version__, cuda, emit, jaxffi, probe, pymodel
from .ctypes_ import BUILTIN_TYPES, CType
from .exits import EXIT_FAILED, EXIT_OK, EXIT_SPEC, Parser, UsageError
from .spec import Instance, Kernel, Spec, SpecError, load, parse

NVCC_FLAGS = ("-O3", "-std=c++17", "-Xcompiler", "-fPIC")
DESCRIPTION = "assocgen.json"  # the description of a built library's functions

# the logical dimensions of a matrix multiply's arrays (the extents give them as stored)
MATMUL_DIMS = {"d_a": ("m", "k"), "d_b": ("k", "n"), "d_c": ("m", "n"), "d_witness": ("m", "n")}
# a transpose's arrays: batch x rows x cols in, batch x cols x rows out (batch may be left out)
TRANSPOSE = {
    "d_in": (("batch", "rows", "cols"), ("in_stride", "in_pitch", None)),
    "d_out": (("batch", "cols", "rows"), ("out_stride", "out_pitch", None)),
}
_SPAN = re.compile(r"^ag_span\((\w+), (\w+), (\w+)\)$")
SIZE_T = CType("u64", "size_t", 8, "uint")


class BuildError(Exception):
    """A build that failed: nvcc's first error lines, or no architecture to build for."""


# ---- the description (the wrappers' model) ----


def signature(inst: Kernel) -> emit.Signature:
    """A public function's C signature, as the header declares it."""
    sig: emit.Signature = emit.FAMILIES[inst.family][1](inst)["api_params"]
    return sig


def _layout(family: str, p: emit.Param) -> dict[str, Any] | None:
    """An array's dims and strides as the Python caller holds it; None for a host pointer (init)."""
    if family == "transpose":
        dims, strides = TRANSPOSE[p.name]
        return dict(dims=list(dims), strides=list(strides), optional=1)
    if not p.extent:
        return None
    m = _SPAN.match(p.extent)
    if not m:
        return dict(dims=[p.extent], strides=[None])
    x, ld, y = m.groups()
    logical = MATMUL_DIMS.get(p.name, (x, y)) if family == "matmul" else (x, y)
    steps = [ld, None] if logical == (x, y) else [None, ld]  # stored transposed: (y, x) in memory
    return dict(dims=list(logical), strides=steps)


def _pointee(p: emit.Param) -> str:
    return p.type.removeprefix("const ").removesuffix("*").strip()


def describe_function(inst: Kernel, prefix: str) -> dict[str, Any]:
    """One public function's description: its C parameters and how Python holds its arrays."""
    context = emit.FAMILIES[inst.family][1](inst)
    sig: emit.Signature = context["api_params"]
    arrays, host = [], {}
    for p in sig.params:
        if not p.type.endswith("*") or p.name == "d_work":
            continue
        layout = _layout(inst.family, p)
        if layout is None:
            host[p.name] = _pointee(p)
            continue
        writes = not p.type.startswith("const ")
        arrays.append(dict(name=p.name, c=_pointee(p), writes=writes, in_place=p.in_place, **layout))
    work = [w.split()[-1] for w in emit._work_params(inst).split(", ")]
    doc = str(context["doc"])
    return dict(
        name=inst.public_name,
        short=inst.public_name.removeprefix(prefix + "_"),
        family=inst.family,
        doc=doc,
        params=[[p.type, p.name] for p in sig.params],
        arrays=arrays,
        host=host,
        work=work,
    )


def _types(spec: Spec) -> dict[str, dict[str, Any]]:
    """Every element type a function's pointer may name, by C spelling."""
    types: list[CType] = [*BUILTIN_TYPES.values(), SIZE_T, *spec.user_types]
    for inst in spec.instances:
        types += inst.extra_types
        if isinstance(inst, Instance):
            types += [inst.op.acc_type, inst.op.out_type, *inst.op.in_types]
    return {t.c: dict(c=t.c, name=t.name, size=t.size, kind=t.kind) for t in types}


def describe(spec: Spec) -> dict[str, Any]:
    """The description written beside a library: its prefix, types and functions."""
    return dict(
        format=pymodel.FORMAT,
        assocgen=__version__,
        prefix=spec.prefix,
        digest=spec.digest,
        library=f"lib{spec.prefix}.so",
        header=f"{spec.prefix}.h",
        types=_types(spec),
        functions=[describe_function(inst, spec.prefix) for inst in spec.instances],
    )


# ---- the spec, the key, the build ----


def is_text(spec: str | os.PathLike[str]) -> bool:
    """Whether `spec` is a spec's TOML text (a str holding a newline or `=`), not a path."""
    return isinstance(spec, str) and ("\n" in spec or "=" in spec)


def read_spec(spec: str | os.PathLike[str]) -> Spec:
    """A spec from a path or from its TOML text (text: anything holding a newline or `=`)."""
    text = str(spec)
    if not is_text(spec):
        return load(text)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise SpecError("<spec text>", "", f"not valid TOML: {e}") from None
    return parse(data, "<spec text>")


@dataclass(frozen=True)
class Target:
    """What a build is for: the architectures (90 for sm_90), nvcc, and its flags."""

    arch: tuple[int, ...]
    nvcc: str
    flags: tuple[str, ...] = NVCC_FLAGS

    def gencode(self) -> list[str]:
        """-gencode a real architecture each, and the newest's PTX for GPUs newer than all."""
        out = [f"-gencode=arch=compute_{a},code=sm_{a}" for a in self.arch]
        return out + [f"-gencode=arch=compute_{self.arch[-1]},code=compute_{self.arch[-1]}"]


def target(arch: list[int] | tuple[int, ...] | None, nvcc: str | None) -> Target:
    """The architectures given, or the GPUs present's (BuildError where there is none)."""
    if arch is None:
        try:
            arch = cuda.architectures()
        except cuda.CudaError as e:
            raise BuildError(f"{e}; give the architectures to build for (arch=[90], --arch 90)") from None
    archs = tuple(sorted({int(str(a).removeprefix("sm_").removeprefix("compute_")) for a in arch}))
    if not archs:
        raise BuildError("no architecture to build for")
    try:
        found = cuda.find_nvcc(nvcc)
        cuda.nvcc_version(found)  # it runs (a part of the key)
    except (FileNotFoundError, PermissionError, subprocess.SubprocessError) as e:
        raise BuildError(str(e)) from None
    return Target(archs, found)


def generator_digest() -> str:
    """A hash of the generator's own files (its modules and templates): a source tree's edits
    rebuild as a new version would."""
    h = hashlib.sha256()
    for f in emit.generator_files():
        h.update(Path(f).read_bytes())
    return h.hexdigest()


def cache_key(spec: Spec, t: Target) -> str:
    """The build's key: the spec's content, the generator, nvcc's version, the architectures and flags."""
    parts = [spec.digest, __version__, generator_digest(), cuda.nvcc_version(t.nvcc), t.arch, t.flags, pymodel.FORMAT]
    return hashlib.sha256(json.dumps(parts, default=str).encode()).hexdigest()[:20]


def cache_dir(given: str | os.PathLike[str] | None = None) -> Path:
    """The cache folder: the one given, else $ASSOCGEN_CACHE, else ~/.cache/assocgen."""
    if given is not None:
        return Path(given)
    env = os.environ.get("ASSOCGEN_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "assocgen"


def build_into(spec: Spec, t: Target, folder: Path) -> None:
    """Generate the spec into folder/src, compile it into folder/lib<PREFIX>.so, describe it."""
    src = folder / "src"
    src.mkdir(parents=True)
    files = emit.render(spec)
    for name, text in files.items():
        (src / name).write_text(text)
    (src / cuda.GLUE_NAME).write_text(cuda.RUNTIME_GLUE)
    sources = sorted(src.glob("*.cu"))
    objects = [s.with_suffix(".o") for s in sources]

    def compile_one(source: Path) -> None:
        _nvcc(t, [*t.flags, *t.gencode(), "-I", str(src), "-c", str(source), "-o", str(source.with_suffix(".o"))])

    with ThreadPoolExecutor(max_workers=max(1, os.cpu_count() or 1)) as pool:
        list(pool.map(compile_one, sources))
    lib = folder / f"lib{spec.prefix}.so"
    _nvcc(t, ["-shared", *t.gencode(), *map(str, objects), "-o", str(lib)])
    for o in objects:
        o.unlink()
    shutil.copy(src / f"{spec.prefix}.h", folder / f"{spec.prefix}.h")
    description = describe(spec)
    description["arch"] = list(t.arch)
    (folder / DESCRIPTION).write_text(json.dumps(description, indent=1, sort_keys=True) + "\n")


def _nvcc(t: Target, args: list[str]) -> None:
    r = subprocess.run([t.nvcc, *args], capture_output=True, text=True)
    if r.returncode != 0:
        lines = [line for line in (r.stderr or r.stdout).splitlines() if line.strip()]
        first = next((line for line in lines if "error" in line), lines[0] if lines else "no output")
        raise BuildError(f"nvcc failed ({r.returncode}): {first.strip()}")


def build_cached(spec: Spec, t: Target, cache: Path) -> Path:
    """The built folder for (spec, target) in the cache, built there first if it is not."""
    final = cache / f"{spec.prefix}-{cache_key(spec, t)}"
    if (final / DESCRIPTION).is_file():
        return final
    probe.check(spec)  # the spec's own C, its first error named by its key (SpecError)
    cache.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}.", dir=cache))
    try:
        build_into(spec, t, tmp / "b")
        try:
            os.rename(tmp / "b", final)
        except OSError:  # another process built it first: theirs is as good
            if not (final / DESCRIPTION).is_file():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return final


def build_jax(folder: Path, nvcc: str | None = None) -> Path:
    """lib<PREFIX>_jax.so beside a built library: its functions' XLA FFI handlers, compiled against
    the headers jaxlib ships (generator/jaxffi.py; jax is imported)."""
    include = jaxffi.include_dir()
    if include is None:
        raise BuildError("the JAX functions need jax: it is not importable (pip install jax)")
    try:
        t = Target((), cuda.find_nvcc(nvcc))
    except FileNotFoundError as e:
        raise BuildError(str(e)) from None
    description = json.loads((folder / DESCRIPTION).read_text())
    try:
        return jaxffi.build(folder, description, include, lambda args: _nvcc(t, args))
    except OSError as e:
        raise BuildError(
            f"{folder}: the JAX functions' library cannot be written there ({e}): assocgen build --jax"
        ) from None


def build_to(spec: Spec, t: Target, out: Path, jax: bool = False) -> list[Path]:
    """`assocgen build`: the library, its description and header (and with `jax`, the JAX
    functions' library) into `out` (built in a temporary folder beside it first: a failed build
    writes nothing)."""
    probe.check(spec)  # the spec's own C, its first error named by its key (SpecError)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        build_into(spec, t, tmp / "b")
        if jax:
            build_jax(tmp / "b", t.nvcc)
        out.mkdir(exist_ok=True)
        written = []
        extra = [jaxffi.library_name(spec.prefix)] if jax else []
        for name in (f"lib{spec.prefix}.so", f"{spec.prefix}.h", DESCRIPTION, *extra):
            os.replace(tmp / "b" / name, out / name)
            written.append(out / name)
        return written
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# ---- `assocgen build SPEC -o DIR` ----


def _parser() -> Parser:
    p = Parser(
        prog="assocgen build",
        description="Build a spec's kernels into a shared library for Python (assocgen.load(DIR) opens it): "
        f"lib<PREFIX>.so, <PREFIX>.h and {DESCRIPTION} in DIR.",
    )
    p.add_argument("spec", help="TOML spec file")
    p.add_argument("-o", "--out", required=True, help="folder to write the library into")
    p.add_argument(
        "--arch",
        action="append",
        type=_arch,
        help="an architecture to build for, e.g. 90 or sm_90 (repeatable; default: the GPUs present)",
    )
    p.add_argument("--nvcc", help="the nvcc to build with (default: $CUDA_HOME/bin/nvcc, PATH, /usr/local/cuda)")
    p.add_argument(
        "--jax",
        action=argparse.BooleanOptionalAction,
        help=f"also build the JAX functions' XLA FFI handlers, {jaxffi.library_name('<PREFIX>')} "
        "(default: when jax is importable)",
    )
    return p


def _arch(text: str) -> int:
    digits = text.removeprefix("sm_").removeprefix("compute_")
    if not digits.isdigit() or not 30 <= int(digits) < 1000:
        raise ValueError(text)
    return int(digits)


def main(argv: list[str]) -> int:
    """`assocgen build`: 0 built; 2 a mistake in the spec or the command line; 1 a failed build."""
    try:
        args = _parser().parse_args(argv)
        out = Path(args.out)
        if out.exists() and not out.is_dir():
            raise SpecError("command line", "-o", f"{out} is a file, not a folder")
        spec = load(args.spec)
        jax = jaxffi.available() if args.jax is None else args.jax
        for path in build_to(spec, target(args.arch, args.nvcc), out, jax):
            print(f"wrote {path}")
        return EXIT_OK
    except UsageError as e:
        print(f"error: command line: {e}", file=sys.stderr)
        return EXIT_SPEC
    except SpecError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_SPEC
    except (BuildError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_FAILED
