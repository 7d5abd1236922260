"""Command line: `assocgen [SPEC.toml] [options]`, or `python3 -m assocgen`; and
`assocgen tune SPEC [options]`, which measures shapes on this machine's GPU (generator/tune.py).

Exit codes: 0 done; 2 the spec or the command line is wrong (one `error:` line, nothing
written); 1 anything else (a missing dependency, a folder that cannot be written).
"""

import argparse
import sys
from pathlib import Path

from . import __version__

EXIT_OK, EXIT_FAILED, EXIT_SPEC = 0, 1, 2


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, no usage dump
        raise _UsageError(message)


def _parser():
    p = _Parser(
        prog="assocgen",
        description="Generate specialized CUDA C kernels (reduces, scans, segmented scans and "
        "reduces) and one C header from a spec.",
        epilog="`assocgen tune SPEC` measures shapes on this machine's GPU and writes a tuning file "
        "(assocgen tune -h). "
        "Exit codes: 0 done, 2 a mistake in the spec or the command line (nothing is written), 1 anything else.",
    )
    p.add_argument("spec", nargs="?", help="TOML spec file (optional if --prefix and --reduce or --scan are given)")
    p.add_argument("-o", "--out", default="generated", help="folder for the .cu sources (default: generated)")
    p.add_argument("--header-dir", help="folder for the header (default: the --out folder)")
    p.add_argument("--prefix", help="symbol prefix (overrides the spec's)")
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
    p.add_argument("--version", action="version", version=f"assocgen {__version__}")
    return p


def _tuned(spec, args):
    """The spec with a tuning file's shapes (--tuning), and a note where it fell back."""
    from .spec import SpecError
    from .tunefile import TuningError, apply, read

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


def main(argv=None) -> int:
    if sys.version_info < (3, 11):  # noqa: UP036 (run from a source tree, not installed)
        print("error: assocgen needs Python 3.11 or newer", file=sys.stderr)
        return EXIT_FAILED
    try:
        from . import emit, ninja, probe, tune  # noqa: F401
        from .spec import SpecError, load
    except ImportError as e:
        name = e.name or str(e)
        print(f"error: assocgen needs the Python package {name} (pip install {name})", file=sys.stderr)
        return EXIT_FAILED
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["tune"]:  # `assocgen tune SPEC`: measure shapes on this GPU (generator/tune.py)
        return tune.tune(argv[1:])
    try:
        try:
            args = _parser().parse_args(argv)
        except _UsageError as e:
            raise SpecError("command line", "", str(e)) from None
        if args.cmake_dir:
            print(emit.PACKAGE_DIR / "cmake")
            return EXIT_OK
        if args.print_deps:
            for path in emit.generator_files():
                print(path)
            return EXIT_OK
        extra = [("reduce", text) for text in args.reduce] + [("scan", text) for text in args.scan]
        if args.spec is None and not extra:
            raise SpecError("command line", "", "give a spec file, or --prefix with one or more --reduce or --scan")
        spec = load(args.spec, extra, args.prefix)
        spec, tuning_note = _tuned(spec, args)
        if args.list:
            for inst in spec.instances:
                print(f"{inst.public_name}\t{inst.kernel_name}")
            return EXIT_OK
        out = Path(args.out)
        header_dir = Path(args.header_dir) if args.header_dir else out
        files = emit.render(spec, single_header=args.single_header)
        targets = emit.targets(files, out, header_dir)
        if args.ninja is not None:
            path = Path(args.ninja)
            if not args.ninja or path.resolve() in {t.resolve() for t in targets}:
                what = "is empty" if not args.ninja else "is one of the files the generator writes"
                raise SpecError(
                    "command line", "--ninja", f"{args.ninja!r} {what}: give the fragment a path of its own"
                )
            targets[path] = ninja.fragment(spec, args, targets, path)
        emit.check_folders(targets)
        if args.list_files:
            for path in targets:
                print(path)
            return EXIT_OK
        note = "" if args.no_compile_check else probe.check(spec)
        for line in emit.write(targets, out, spec.prefix + ".h"):
            print(line)
        for line in (tuning_note, note):
            if line:
                print(f"note: {line}", file=sys.stderr)
        return EXIT_OK
    except SpecError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_SPEC
    except OSError as e:
        where = f"{e.filename}: " if e.filename else ""
        print(f"error: {where}{e.strerror or e}", file=sys.stderr)
        return EXIT_FAILED


def run():
    """The `assocgen` command."""
    sys.exit(main())
