"""Command line: `python3 -m generator [SPEC.toml] [options]`."""

import argparse
import sys
from pathlib import Path

from . import __version__, emit
from .spec import SpecError, load


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, no usage dump
        raise SpecError("command line", "", message)


def _parser():
    p = _Parser(prog="python3 -m generator",
                description="Generate specialized CUDA C kernels (reduces, scans, segmented scans and "
                            "reduces) and one C header from a spec.")
    p.add_argument("spec", nargs="?", help="TOML spec file (optional if --prefix and --reduce or --scan are given)")
    p.add_argument("-o", "--out", default="generated", help="folder for the .cu sources (default: generated)")
    p.add_argument("--header-dir", help="folder for the header (default: the --out folder)")
    p.add_argument("--prefix", help="symbol prefix (overrides the spec's)")
    p.add_argument("--reduce", action="append", default=[], metavar="OP:TYPE[:bBLOCK][:tITEMS]",
                   help="add a reduce instance, e.g. sum:f32:b256:t16 (repeatable)")
    p.add_argument("--scan", action="append", default=[], metavar="OP:TYPE[:bBLOCK][:tITEMS][:KIND]",
                   help="add a scan instance, KIND inclusive (default) or exclusive, e.g. sum:f32:exclusive"
                        " (repeatable)")
    p.add_argument("--list", action="store_true", help="print the instances and write nothing")
    p.add_argument("--version", action="version", version=f"assocgen {__version__}")
    return p


def main(argv=None):
    try:
        args = _parser().parse_args(argv)
        extra = [("reduce", text) for text in args.reduce] + [("scan", text) for text in args.scan]
        if args.spec is None and not extra:
            raise SpecError("command line", "", "give a spec file, or --prefix with one or more --reduce or --scan")
        spec = load(args.spec, extra, args.prefix)
        if args.list:
            for inst in spec.instances:
                print(f"{inst.public_name}\t{inst.kernel_name}")
            return 0
        header = f"{spec.prefix}.h"
        files = emit.render(spec, header)
        for path in emit.write(files, Path(args.out), args.header_dir and Path(args.header_dir), header):
            print(f"wrote {path}")
        return 0
    except SpecError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"error: {e.filename or ''}: {e.strerror}", file=sys.stderr)
        return 1
