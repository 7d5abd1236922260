"""Host time of one call of a loaded function, without a GPU: the wrappers' whole Python path
(reading the arrays, the checks, the stream, the workspace, the ctypes call) on arrays that show
`__cuda_array_interface__`, against a stub library (the spec's functions and the runtime glue
compiled by the host's C compiler, each returning at once) and a stub CUDA driver (one device;
every pointer device memory on device 0).  No kernel runs, so what is measured is the overhead a
call adds on the host.  The cases marked "torch stand-in" pass a stand-in for torch (a module
named torch with the few attributes the wrappers read, torch's names made Python attributes,
properties and methods): the path torch tensors take, with Python's cost of those attributes in
place of torch's own.

    python3 bench/python/overhead.py [--calls N] [--repeat K] [--cc CC]

Prints one line a case: the fastest and the median of K runs of N calls, in microseconds of this
process's CPU time a call (time.process_time: on a shared machine, the time other processes take
the cores is left out; the fastest run is the steadier figure).
"""

import argparse
import ctypes
import json
import statistics
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path

import assocgen
from assocgen import cuda, pybuild

SPEC = """\
prefix = "ov"

[[type]]
name = "affine"
size = 8
c = "typedef struct { float a, b; } affine;"

[[operator]]
name = "compose"
type = "affine"
identity = "{1.0f, 0.0f}"
commutative = false
combine_body = "affine r; r.a = b.a * a.a; r.b = fmaf(b.a, a.b, b.b); return r;"

[[reduce]]
op = "sum"
type = "f32"

[[scan]]
op = "compose"
kind = ["inclusive", "exclusive"]

[[segreduce]]
op = "sum"
type = "f32"

[[rows]]
op = "sum"
type = "f32"
kind = "inclusive"
"""

# the driver calls assocgen.cuda makes: one device, every pointer device memory on device 0
DRIVER = """\
#include <stddef.h>
#include <string.h>
int cuInit(unsigned f) { return 0; }
int cuDeviceGetCount(int *n) { *n = 1; return 0; }
int cuGetErrorName(int e, const char **s) { *s = "CUDA_ERROR_STUB"; return 0; }
int cuPointerGetAttribute(void *v, int attr, unsigned long long p) { *(int *)v = attr == 2 ? 2 : 0; return 0; }
int cuPointerGetAttributes(unsigned n, int *attr, void **v, unsigned long long p)
{
    for (unsigned i = 0; i < n; ++i)
        *(int *)v[i] = attr[i] == 2 ? 2 : 0;
    return 0;
}
"""

GLUE = """\
#include <stddef.h>
static int device;
const char *ag_py_error_name(int e) { return "cudaErrorStub"; }
int ag_py_get_device(int *d) { *d = device; return 0; }
int ag_py_set_device(int d) { device = d; return 0; }
int ag_py_malloc(void **p, size_t bytes) { static char pool[1 << 20]; *p = pool; return 0; }
int ag_py_free(void *p) { return 0; }
int ag_py_memset_async(void *p, size_t bytes, void *s) { return 0; }
int ag_py_stream_synchronize(void *s) { return 0; }
int ag_py_memcpy(void *dst, const void *src, size_t n) { return 0; }
int ag_py_stream_wait(void *c, void *p) { return 0; }
"""


def stub_source(description: dict) -> str:
    """The spec's public functions and their workspace sizes, each returning at once."""
    lines = [GLUE]
    for f in description["functions"]:
        ctype = {"size_t": "size_t", "int": "int"}
        params = ", ".join(f"{ctype.get(t, 'void *')} p{k}" for k, (t, _) in enumerate(f["params"]))
        lines.append(f"int {f['name']}({params}) {{ return 0; }}")
        work = ", ".join(f"size_t w{k}" for k in range(len(f["work"])))
        lines.append(f"size_t {f['name']}_workspace_bytes({work}) {{ return w0 > 4096 ? 1024 : 0; }}")
    return "\n".join(lines) + "\n"


def build_stub(folder: Path, cc: str) -> None:
    """A folder assocgen.load opens: the description and a stub libov.so; and the stub driver."""
    description = pybuild.describe(pybuild.read_spec(SPEC))
    (folder / pybuild.DESCRIPTION).write_text(json.dumps(description))
    (folder / "ov.h").write_text("/* stub */\n")
    for name, text in (("libov", stub_source(description)), ("libcuda_stub", DRIVER)):
        (folder / f"{name}.c").write_text(text)
        subprocess.run([cc, "-O2", "-shared", "-fPIC", folder / f"{name}.c", "-o", folder / f"{name}.so"], check=True)


class Cai:
    """An array of any library as the wrappers see it: __cuda_array_interface__ version 3."""

    def __init__(self, shape, typestr="<f4", ptr=1 << 20, strides=None):
        self.__cuda_array_interface__ = dict(
            shape=tuple(shape), typestr=typestr, data=(ptr, False), strides=strides, version=3, stream=None
        )


def torch_standin() -> types.ModuleType:
    """A module named torch with what the wrappers read of torch, made plain attributes."""
    torch = types.ModuleType("torch")
    dtype = type("dtype", (), {"__str__": lambda self: "torch.float32", "itemsize": 4})
    torch.float32 = dtype()  # type: ignore[attr-defined]

    class Tensor:
        def __init__(self, shape, ptr=1 << 20):
            self.shape, self._ptr = tuple(shape), ptr
            self.device = types.SimpleNamespace(type="cuda", index=0)
            self.dtype = torch.float32  # type: ignore[attr-defined]

        def stride(self):
            out, step = [], 1
            for d in reversed(self.shape):
                out.append(step)
                step *= d
            return tuple(reversed(out))

        def data_ptr(self):
            return self._ptr

        def get_device(self):
            return self.device.index

        is_cuda = property(lambda self: self.device.type == "cuda")

        @property
        def __cuda_array_interface__(self):  # as torch's: built on each read
            strides = tuple(s * 4 for s in self.stride())
            return dict(shape=self.shape, typestr="<f4", data=(self._ptr, False), strides=strides, version=2)

    Tensor.__module__ = "torch"
    torch.Tensor = Tensor  # type: ignore[attr-defined]
    torch._C = types.SimpleNamespace(_cuda_getCurrentRawStream=lambda device: 0)  # type: ignore[attr-defined]
    stream = types.SimpleNamespace(cuda_stream=0)
    torch.cuda = types.SimpleNamespace(current_device=lambda: 0, current_stream=lambda device=None: stream)  # type: ignore[attr-defined]
    torch.device = lambda kind, index=None: (kind, index)  # type: ignore[attr-defined]
    torch.empty = lambda shape, dtype, device: Tensor(shape, 1 << 26)  # type: ignore[attr-defined]
    sys.modules["torch"] = torch
    return torch


def per_call(fn, calls: int, repeat: int) -> tuple[float, float]:
    """Microseconds a call: the fastest and the median of `repeat` runs of `calls` calls."""
    fn()
    times = []
    for _ in range(repeat):  # the median: the machine may be shared
        t = time.process_time()
        for _ in range(calls):
            fn()
        times.append((time.process_time() - t) / calls * 1e6)
    return min(times), statistics.median(times)


def cases(m: assocgen.Module) -> dict:
    n = 1 << 10
    x, out = Cai((n,)), Cai((1,), ptr=1 << 21)
    maps, maps_out = Cai((n, 2)), Cai((n, 2), ptr=1 << 22)
    seg = Cai((n,)), Cai((33,), "<i8", ptr=1 << 23), Cai((32,), ptr=1 << 24)
    rows = Cai((8, 128), strides=(1024, 4)), Cai((8, 128), ptr=1 << 25)
    return {
        "reduce_sum_f32 (n,) out=": lambda: m.reduce_sum_f32(x, out=out),
        "scan_compose_affine (n, 2) out=": lambda: m.scan_compose_affine(maps, out=maps_out),
        "exscan_compose_affine init=bytes": lambda: m.exscan_compose_affine(maps, out=maps_out, init=bytes(8)),
        "segreduce_sum_f32 in, offsets": lambda: m.segreduce_sum_f32(seg[0], seg[1], out=seg[2]),
        "rows_scan_sum_f32 pitched": lambda: m.rows_scan_sum_f32(rows[0], out=rows[1]),
        "reduce_sum_f32 stream=5": lambda: m.reduce_sum_f32(x, out=out, stream=5),
    }


def torch_cases(m: assocgen.Module) -> dict:
    torch = torch_standin()
    x, out, maps = torch.Tensor((1 << 10,)), torch.Tensor((1,), 1 << 21), torch.Tensor((1 << 10, 2), 1 << 22)
    return {
        "reduce_sum_f32 out= (torch stand-in)": lambda: m.reduce_sum_f32(x, out=out),
        "reduce_sum_f32 allocating (torch stand-in)": lambda: m.reduce_sum_f32(x),
        "scan_compose_affine allocating (torch stand-in)": lambda: m.scan_compose_affine(maps),
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--calls", type=int, default=20000)
    p.add_argument("--repeat", type=int, default=7)
    p.add_argument("--cc", default="cc", help="the C compiler for the stubs (default: cc)")
    args = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="assocgen-overhead-") as tmp:
        folder = Path(tmp)
        build_stub(folder, args.cc)
        driver = ctypes.CDLL(str(folder / "libcuda_stub.so"))
        cuda._driver.cache_clear()
        cuda._driver = lambda: driver  # type: ignore[assignment]  # the stub driver, for this process
        m = assocgen.Module(folder)
        python = sys.version.split()[0]
        print(f"host time a call (us), {args.repeat} runs of {args.calls} calls, stub library, Python {python}")
        print("    best  median  case")
        for name, fn in {**cases(m), **torch_cases(m)}.items():
            best, median = per_call(fn, args.calls, args.repeat)
            print(f"{best:8.2f} {median:7.2f}  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
