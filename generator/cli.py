"""Command line: `assocgen [SPEC.toml] [options]`, or `python3 -m assocgen`; and
`assocgen tune SPEC [options]`, which measures shapes on this machine's GPU (generator/tune.py).

Exit codes (generator/exits.py): 0 done; 2 the spec or the command line is wrong (one `error:`
line, nothing written); 1 anything else (a missing dependency, a folder that cannot be written).
"""

from __future__ import annotations  # the guarded imports below may fail: main() reports it

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from . import __version__
from .exits import EXIT_FAILED, EXIT_OK, EXIT_SPEC, Parser, UsageError

# The generator's modules, guarded: without a package they need (jinja2), or on a Python older
# than 3.11 (tomllib, StrEnum), main() says so in one line instead of a traceback.
try:
    from . import emit, ninja, probe, pybuild, tune
    from .spec import Spec, SpecError, load
    from .tunefile import TuningError, apply, read
except ImportError as e:
    _MISSING: ImportError | None = e
else:
    _MISSING = None

DESCRIPTION = """\
Generate specialized CUDA C kernels and one C header from a spec (a TOML file, or --prefix with
--reduce / --scan), for builtin or your own associative operators.

families (a table each in the spec; docs/spec.md):
  reduce              [[reduce]]     one value of an array
  scan                [[scan]]       inclusive or exclusive prefix (kind)
  segmented scan      [[segscan]]    a scan restarted at head flags or at key changes (heads)
  segmented reduce    [[segreduce]]  one value a segment, segments given by offsets
  reduce by key       [[segreduce]]  by = "keys": one value a run of equal keys
  rows, cols          [[rows]] [[cols]]  a reduce or scan along each row, a reduce down each column
  transpose           [[transpose]]  batched out-of-place transposes, any element type
  matmul              [[matmul]]     C = C (+) A (x) B over a semiring (plus_times, min_plus,
                                     max_plus, max_min, min_max, or_and, or a [[semiring]])
  across GPUs         nccl = true    each reduce and scan also over the GPUs of an NCCL communicator
  tune                assocgen tune SPEC: measure the reduces' and scans' shapes on this GPU"""
EPILOG = """\
`assocgen tune SPEC` writes a tuning file for --tuning (assocgen tune -h).
exit codes: 0 done, 2 a mistake in the spec or the command line (nothing is written), 1 anything else."""


def _parser() -> Parser:
    p = Parser(
        prog="assocgen",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("spec", nargs="?", help="TOML spec file (optional if --prefix and --reduce or --scan are given)")
    p.add_argument("-o", "--out", default="generated", help="folder for the .cu sources (default: generated)")
    p.add_argument("--header-dir", help="folder for the header (default: the --out folder)")
    p.add_argument("--prefix", help="symbol prefix (overrides the spec's)")
    _instance_options(p)
    _output_options(p)
    _tuning_options(p)
    _print_options(p)
    p.add_argument("--version", action="version", version=f"assocgen {__version__}")
    return p


def _instance_options(p: Parser) -> None:
    """--reduce and --scan: instances given on the command line."""
    p.add_argument(
        "--reduce",
        action="append",
        default=[],
        metavar="OP:TYPE[:bBLOCK][:tITEMS]",
        help="add a reduce instance, e.g. sum:f32:b256:t16 (repeatable)",
    )
    p.add_argument(
        "--scan",
        action="append",
        default=[],
        metavar="OP:TYPE[:bBLOCK][:tITEMS][:KIND]",
        help="add a scan instance, KIND inclusive (default) or exclusive, e.g. sum:f32:exclusive (repeatable)",
    )


def _output_options(p: Parser) -> None:
    """How the outputs are written and checked."""
    p.add_argument(
        "--single-header",
        action="store_true",
        help="write one self-contained PREFIX.h: declarations, and every kernel behind "
        "#ifdef PREFIX_IMPLEMENTATION (define it in exactly one .cu file)",
    )
    p.add_argument(
        "--ninja",
        metavar="FILE",
        help="also write Ninja build edges for the spec to FILE (regenerate, compile, archive "
        "into libPREFIX.a); include it with `subninja FILE`",
    )
    p.add_argument(
        "--no-compile-check",
        action="store_true",
        help="do not compile the spec's C code (types, operators) with nvcc at generation",
    )


def _tuning_options(p: Parser) -> None:
    """--tuning and what goes with it."""
    p.add_argument(
        "--tuning",
        metavar="FILE",
        help="take the shapes measured by `assocgen tune` (a tuning file) for the instances it names",
    )
    p.add_argument(
        "--gpu",
        metavar="NAME",
        help="with --tuning: the GPU the build is for; a tuning measured on another is refused",
    )
    p.add_argument(
        "--tuning-fallback",
        action="store_true",
        help="with --tuning: where the file is missing, malformed or for another GPU or spec, say so "
        "in a note and generate with the built-in shapes (without it: an error, nothing written)",
    )


def _print_options(p: Parser) -> None:
    """Options that print something and write nothing."""
    p.add_argument("--list", action="store_true", help="print the public and kernel names; write nothing")
    p.add_argument("--list-files", action="store_true", help="print the paths it would write; write nothing")
    p.add_argument(
        "--print-deps",
        action="store_true",
        help="print the generator's own files (templates, modules) that outputs depend on",
    )
    p.add_argument(
        "--cmake-dir",
        action="store_true",
        help="print the folder of the CMake package (assocgen-config.cmake) and exit",
    )


def _tuned(spec: Spec, args: argparse.Namespace) -> tuple[Spec, str]:
    """The spec with a tuning file's shapes (--tuning), and a note where it fell back."""
    if args.tuning is None:
        if args.gpu or args.tuning_fallback:
            raise SpecError("command line", "--tuning", "missing: --gpu and --tuning-fallback go with --tuning FILE")
        return spec, ""
    try:
        return apply(spec, read(args.tuning), args.gpu or ""), ""
    except TuningError as e:
        if not args.tuning_fallback:
            raise SpecError("--tuning", "", f"{e} (or pass --tuning-fallback for the built-in shapes)") from None
        return spec, f"{e}; using the built-in shapes (--tuning-fallback)"


def main(argv: Sequence[str] | None = None) -> int:
    if sys.version_info < (3, 11):  # noqa: UP036 (run from a source tree, not installed)
        print("error: assocgen needs Python 3.11 or newer", file=sys.stderr)
        return EXIT_FAILED
    if _MISSING is not None:
        name = _MISSING.name or str(_MISSING)
        print(f"error: assocgen needs the Python package {name} (pip install {name})", file=sys.stderr)
        return EXIT_FAILED
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["tune"]:  # `assocgen tune SPEC`: measure shapes on this GPU (generator/tune.py)
        return tune.tune(argv[1:])
    if argv[:1] == ["build"]:  # `assocgen build SPEC -o DIR`: a shared library for Python (generator/pybuild.py)
        return pybuild.main(argv[1:])
    try:
        return _generate(_parse(argv))
    except SpecError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_SPEC
    except OSError as e:
        where = f"{e.filename}: " if e.filename else ""
        print(f"error: {where}{e.strerror or e}", file=sys.stderr)
        return EXIT_FAILED


def _parse(argv: list[str]) -> argparse.Namespace:
    try:
        return _parser().parse_args(argv)
    except UsageError as e:
        raise SpecError("command line", "", str(e)) from None


def _generate(args: argparse.Namespace) -> int:
    """Everything after the command line is read: print what is asked, or check and write."""
    if args.cmake_dir:
        print(emit.PACKAGE_DIR / "cmake")
        return EXIT_OK
    if args.print_deps:
        for dep in emit.generator_files():
            print(dep)
        return EXIT_OK
    spec, tuning_note = _tuned(_load(args), args)
    if args.list:
        for inst in spec.instances:
            print(f"{inst.public_name}\t{inst.kernel_name}")
        return EXIT_OK
    out = Path(args.out)
    targets = _targets(spec, args, out)
    if args.list_files:
        for path in targets:
            print(path)
        return EXIT_OK
    note = "" if args.no_compile_check else probe.check(spec)
    for wrote in emit.write(targets, out, spec.prefix + ".h"):
        print(wrote)
    for line in (*spec.notes, tuning_note, note):
        if line:
            print(f"note: {line}", file=sys.stderr)
    return EXIT_OK


def _load(args: argparse.Namespace) -> Spec:
    """The spec of the file and the command line's --prefix, --reduce and --scan."""
    extra = [("reduce", text) for text in args.reduce] + [("scan", text) for text in args.scan]
    if args.spec is None and not extra:
        raise SpecError("command line", "", "give a spec file, or --prefix with one or more --reduce or --scan")
    return load(args.spec, extra, args.prefix)


def _targets(spec: Spec, args: argparse.Namespace, out: Path) -> dict[Path, str]:
    """Every file to write, by path, with its text (the Ninja fragment too); folders checked."""
    header_dir = Path(args.header_dir) if args.header_dir else out
    files = emit.render(spec, single_header=args.single_header)
    targets = emit.targets(files, out, header_dir)
    if args.ninja is not None:
        path = Path(args.ninja)
        if not args.ninja or path.resolve() in {t.resolve() for t in targets}:
            what = "is empty" if not args.ninja else "is one of the files the generator writes"
            raise SpecError("command line", "--ninja", f"{args.ninja!r} {what}: give the fragment a path of its own")
        targets[path] = ninja.fragment(spec, args, targets, path)
    emit.check_folders(targets)
    return targets


def run() -> None:
    """The `assocgen` command."""
    sys.exit(main())
