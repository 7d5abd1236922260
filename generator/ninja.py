"""Ninja build edges for one spec (as CUTLASS's generator emits a manifest for CMake): the edge
that runs the generator (its outputs: the header, the sources and this file), an nvcc edge a
source, and an archive `lib<prefix>.a`, with a phony target `assocgen-<prefix>`.

The file is meant for `subninja` (or `include`: its rule names carry the prefix), and reads two
variables of the file that includes it: `nvcc` (the compiler) and `nvflags` (its flags, e.g.
-O3 -arch=sm_90, or for several GPUs in one library a -gencode an architecture: FAT_EXAMPLE
below).  A change to the spec or to the generator reruns the generator, which rewrites only the
files whose bytes change.
"""

import argparse
import shlex
from pathlib import Path

from . import __version__
from .emit import generator_files
from .spec import Spec

# nvflags' architectures for one library that runs on Turing to Hopper and, through sm_90's PTX, later GPUs
FAT_EXAMPLE = (
    "-gencode arch=compute_75,code=sm_75 -gencode arch=compute_80,code=sm_80 "
    "-gencode arch=compute_90,code=[sm_90,compute_90]"
)


def _path(p: str | Path, relative: bool = False) -> str:
    """A path as a build line spells it (as given on the command line, so that the including file
    names it the same way; the generator's own files relative to the current folder where they lie
    under it), with ninja's special characters escaped."""
    p = Path(p)
    if relative and p.is_absolute():
        try:
            p = p.relative_to(Path.cwd())
        except ValueError:
            pass
    return str(p).replace("$", "$$").replace(" ", "$ ").replace(":", "$:")


def _command(args: argparse.Namespace) -> str:
    """The command line that wrote the fragment, to write it again."""
    # -P: a folder named assocgen in the folder ninja runs in must not shadow the package
    argv = ["python3", "-P", "-m", "assocgen"]
    if args.spec:
        argv.append(args.spec)
    argv += ["-o", args.out]
    if args.header_dir:
        argv += ["--header-dir", args.header_dir]
    if args.prefix:
        argv += ["--prefix", args.prefix]
    for text in args.reduce:
        argv += ["--reduce", text]
    for text in args.scan:
        argv += ["--scan", text]
    if args.single_header:
        argv.append("--single-header")
    if args.no_compile_check:
        argv.append("--no-compile-check")
    if args.tuning:
        argv += ["--tuning", args.tuning]
    if args.gpu:
        argv += ["--gpu", args.gpu]
    if args.tuning_fallback:
        argv.append("--tuning-fallback")
    argv += ["--ninja", args.ninja]
    return " ".join(shlex.quote(str(a)) for a in argv).replace("$", "$$")


def fragment(spec: Spec, args: argparse.Namespace, targets: dict[Path, str], path: Path) -> str:
    p = spec.prefix
    header = next(t for t in targets if t.suffix == ".h")
    sources = sorted(t for t in targets if t.suffix == ".cu")
    outputs = [header, *sources, path]
    deps = [_path(f, relative=True) for f in generator_files()]
    if args.tuning and (args.tuning_fallback is False or Path(args.tuning).exists()):
        deps.append(_path(args.tuning))  # a new tuning regenerates
    lines = [
        f"# {path.name}: Ninja build edges for the kernels of {p}.h, written by assocgen {__version__}; do not",
        "# edit (the generator rewrites it when the spec or the generator changes).",
        "# Use: define `nvcc` and `nvflags` (e.g. -O3 -arch=sm_90; for several GPUs, a -gencode each:",
        f"# -O3 {FAT_EXAMPLE}), then `subninja " + path.as_posix() + "`;",
        f"# build `assocgen-{p}`" + (f" for lib{p}.a." if sources else f" for {header.name} (a single header)."),
        "",
        f"rule assocgen_{p}_gen",
        f"  command = {_command(args)} > /dev/null",
        f"  description = ASSOCGEN {(args.spec or p + '.h').replace('$', '$$')}",
        "  restat = 1",
        "  generator = 1",
        "",
        f"build {' '.join(_path(o) for o in outputs)}: assocgen_{p}_gen {_path(args.spec) if args.spec else ''} $",
        "  | " + " $\n    ".join(deps),
    ]
    if sources:
        objects = [s.with_suffix(".o") for s in sources]
        lib = sources[0].parent / f"lib{p}.a"
        lines += [
            "",
            f"rule assocgen_{p}_nvcc",
            f"  command = $nvcc $nvflags -I{shlex.quote(str(header.parent)).replace('$', '$$')} -c $in -o $out",
            "  description = NVCC $in",
            "",
            f"rule assocgen_{p}_ar",
            "  command = rm -f $out && ar crs $out $in",
            "  description = AR $out",
            "",
        ]
        lines += [
            f"build {_path(o)}: assocgen_{p}_nvcc {_path(s)} | {_path(header)}"
            for s, o in zip(sources, objects, strict=True)
        ]
        lines += [
            "",
            f"build {_path(lib)}: assocgen_{p}_ar $",
            "  " + " $\n  ".join(_path(o) for o in objects),
            f"build assocgen-{p}: phony {_path(lib)}",
        ]
    else:
        lines += ["", f"build assocgen-{p}: phony {_path(header)}"]
    return "\n".join(lines) + "\n"
