"""The argument checks on the GPU: every public signature of spec.toml called with arguments it
must refuse (return code, memory unchanged, no error left behind) and ones it must accept, then
the whole run again under compute-sanitizer memcheck.  Logs under $OUT (or build/args-test); the
driver's last line is `N passed, M failed`.

    python3 tests/gpu/args/run.py [--build-only] [--no-sanitizer] [--jobs N] [--ptx NN]
"""

import argparse
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import family_run  # noqa: E402 - tests/gpu, beside this folder


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-only", action="store_true")
    ap.add_argument("--no-sanitizer", action="store_true")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--ptx", type=int, default=0, help="build as compute_NN PTX only (JIT-compiled at load)")
    args = ap.parse_args()
    exe = family_run.build(HERE, "args", "ar.h", lambda spec: "", args.jobs, ptx=args.ptx)
    if args.build_only:
        print(f"built {exe}")
        return 0
    out = Path(os.environ.get("OUT", exe.parent))
    out.mkdir(parents=True, exist_ok=True)
    rc = subprocess.run([str(exe)]).returncode
    if not args.no_sanitizer:  # the whole run again, under memcheck
        rc = family_run.sanitize(exe, ["args"], out, args.jobs, ("memcheck",), lambda name: []) or rc
    return rc


if __name__ == "__main__":
    sys.exit(main())
