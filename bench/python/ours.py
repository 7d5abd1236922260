"""The two columns of this project: the Python call (assocgen.load on bench/python/spec.toml) and
the same C functions of the same built library called from C (cdriver.cu, compiled here against
the build's header and handed the functions' addresses)."""

import ctypes
import os
import statistics
import subprocess
from pathlib import Path
from typing import Any

from timing import REPS, NotAvailable, calls_for

HERE = Path(__file__).resolve().parent


def load() -> Any:
    """The spec's module, built (or found in the cache) for the GPU present."""
    import assocgen

    return assocgen.load(HERE / "spec.toml")


def build_driver(m: Any, out_dir: Path) -> ctypes.CDLL:
    """cdriver.cu compiled into a shared library beside the build (nvcc, the build's header)."""
    nvcc = os.environ.get("NVCC", "/usr/local/cuda/bin/nvcc")
    lib = out_dir / "libagb_cdriver.so"
    out_dir.mkdir(parents=True, exist_ok=True)
    cmd = [nvcc, "-O2", "-std=c++17", "-shared", "-Xcompiler", "-fPIC", f"-I{m.header.parent}"]
    r = subprocess.run([*cmd, str(HERE / "cdriver.cu"), "-o", str(lib)], capture_output=True, text=True)
    if r.returncode:
        raise NotAvailable(f"nvcc: {(r.stderr or r.stdout).strip().splitlines()[0]}")
    return ctypes.CDLL(str(lib))


def address(m: Any, name: str) -> int:
    """A C function of the loaded library, as an address."""
    return int(ctypes.cast(getattr(m.lib(), name), ctypes.c_void_p).value or 0)


class CDriver:
    """The C column: driver(function, [sizes/pointers...]) times the C function from C."""

    def __init__(self, m: Any, lib: ctypes.CDLL):
        self.m, self.lib = m, lib

    def time(self, entry: str, cname: str, args: list[int], stream: int, ms_hint: float) -> float:
        """Median milliseconds a call: `entry` of cdriver.cu on the C function `cname`, with the
        arrays' pointers and sizes `args` in the entry's order."""
        f = getattr(self.lib, entry)
        f.restype = ctypes.c_int
        us = (ctypes.c_float * REPS)()
        fn, size = address(self.m, cname), address(self.m, cname + "_workspace_bytes")
        argv = [ctypes.c_void_p(fn), ctypes.c_void_p(size), *(ctypes.c_size_t(a) for a in args)]
        k = calls_for(ms_hint)
        rc = f(*argv, ctypes.c_void_p(stream or None), ctypes.c_int(k), ctypes.c_int(REPS), us)
        if rc:
            self.lib.agb_error_name.restype = ctypes.c_char_p
            raise NotAvailable(f"{cname} from C: {self.lib.agb_error_name(rc).decode()} ({rc})")
        return statistics.median(us[i] for i in range(REPS)) / 1e3
