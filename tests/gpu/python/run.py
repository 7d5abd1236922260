"""The Python API on a GPU without an array library: assocgen.load builds spec.toml for the GPU
present, and each family's wrapper is called on device arrays made here (cudaMalloc through the
library's own runtime, shown through __cuda_array_interface__), against references computed in
Python, bit for bit (wrapping uint32 operators); then bad calls, each the right exception.

Run on a GPU machine: python3 tests/gpu/python/run.py [--cache DIR]; the last line is "N passed,
M failed", exit 0 when nothing failed.  PyTorch and CuPy are not needed (run_arrays.py beside it
calls the functions from them; device.sh runs both, and the examples).
"""

import argparse
import ctypes
import random
import struct
import sys
import tempfile
from pathlib import Path

import assocgen

M32 = 0xFFFFFFFF
failed: list[str] = []
passed: list[str] = []


class DeviceArray:
    """Device memory shown as a CUDA array: shape, typestr, strides in bytes (None: packed)."""

    def __init__(self, rt, shape, typestr="<u4", strides=None, data=b"", nbytes=None):
        self.rt, self.shape = rt, tuple(shape)
        size = int(typestr[2:])
        count = 1
        for d in self.shape:
            count *= d
        self.nbytes = nbytes if nbytes is not None else max(count * size, len(data))
        self.ptr = rt.malloc_zeroed(max(self.nbytes, 1), 0)
        if data:
            buf = ctypes.create_string_buffer(data, len(data))
            rt.copy(self.ptr, ctypes.addressof(buf), len(data))
        self.__cuda_array_interface__ = dict(
            shape=self.shape, typestr=typestr, data=(self.ptr, False), strides=strides, version=3, stream=None
        )

    def get(self) -> bytes:
        buf = ctypes.create_string_buffer(self.nbytes)
        self.rt.copy(ctypes.addressof(buf), self.ptr, self.nbytes)
        return buf.raw


def u32s(data: bytes) -> list[int]:
    return list(struct.unpack(f"<{len(data) // 4}I", data))


def pack(values) -> bytes:
    return struct.pack(f"<{len(values)}I", *[v & M32 for v in values])


def check(name: str, ok: bool) -> None:
    print(("ok   " if ok else "FAIL ") + name)
    (passed if ok else failed).append(name)


def compose(f, g):  # f then g: x -> g.a (f.a x + f.b) + g.b
    return ((g[0] * f[0]) & M32, (g[0] * f[1] + g[1]) & M32)


def test_reduce(m, rt) -> None:
    for n in (0, 1, 1000, (1 << 20) + 3):
        xs = [random.getrandbits(32) for _ in range(n)]
        out = DeviceArray(rt, (1,))
        m.reduce_sum_u32(DeviceArray(rt, (n,), data=pack(xs)), out=out)
        check(f"reduce_sum_u32 n={n}", u32s(out.get()) == [sum(xs) & M32])


def test_scans(m, rt) -> None:
    n = 100_003
    maps = [(random.getrandbits(32) | 1, random.getrandbits(32)) for _ in range(n)]
    x = DeviceArray(rt, (n, 2), data=pack([v for p in maps for v in p]))
    want, acc = [], (1, 0)
    for p in maps:
        acc = compose(acc, p)
        want.append(acc)
    out = DeviceArray(rt, (n, 2))
    m.scan_compose_affu(x, out=out)
    got = u32s(out.get())
    check("scan_compose_affu (n, 2) uint32", list(zip(got[::2], got[1::2], strict=True)) == want)
    init = (3, 5)
    ex = DeviceArray(rt, (n,), "|V8")  # the user type as an 8-byte record
    m.exscan_compose_affu(x, out=ex, init=pack(init))
    got = u32s(ex.get())
    ref, acc = [], init
    for p in maps:
        ref.append(acc)
        acc = compose(acc, p)
    check("exscan_compose_affu init= bytes, out a record array", list(zip(got[::2], got[1::2], strict=True)) == ref)
    m.scan_compose_affu(x, out=x)  # in place
    got = u32s(x.get())
    check("scan_compose_affu in place", list(zip(got[::2], got[1::2], strict=True)) == want)


def test_segreduce(m, rt) -> None:
    n, cuts = 5000, sorted(random.sample(range(1, 5000), 40))
    offsets = [0, *cuts, n]
    xs = [random.getrandbits(32) for _ in range(n)]
    out = DeviceArray(rt, (len(offsets) - 1,))
    m.segreduce_sum_u32(
        DeviceArray(rt, (n,), data=pack(xs)),
        DeviceArray(rt, (len(offsets),), "<i8", data=struct.pack(f"<{len(offsets)}q", *offsets)),
        out=out,
    )
    want = [sum(xs[a:b]) & M32 for a, b in zip(offsets, offsets[1:], strict=False)]
    check("segreduce_sum_u32 offsets int64", u32s(out.get()) == want)


def test_rows_pitched(m, rt) -> None:
    rows, cols, pitch = 37, 1000, 1024
    xs = [random.getrandbits(32) for _ in range(rows * pitch)]
    x = DeviceArray(rt, (rows, cols), strides=(pitch * 4, 4), data=pack(xs))
    out = DeviceArray(rt, (rows, cols))
    m.rows_scan_sum_u32(x, out=out)
    got, ok = u32s(out.get()), True
    for r in range(rows):
        acc = 0
        for c in range(cols):
            acc = (acc + xs[r * pitch + c]) & M32
            ok = ok and got[r * cols + c] == acc
    check("rows_scan_sum_u32 pitched input", ok)


def test_transpose_matmul(m, rt) -> None:
    b, r, c = 3, 50, 70
    xs = [random.getrandbits(32) for _ in range(b * r * c)]
    out = DeviceArray(rt, (b, c, r))
    m.transpose_u32(DeviceArray(rt, (b, r, c), data=pack(xs)), out=out)
    got = u32s(out.get())
    want = [xs[k * r * c + i * c + j] for k in range(b) for j in range(c) for i in range(r)]
    check("transpose_u32 batched", got == want)
    mm, n, k = 33, 17, 65
    a = [random.randrange(100) for _ in range(mm * k)]
    bb = [random.randrange(100) for _ in range(k * n)]
    cc = DeviceArray(rt, (mm, n), "<i4")
    lda = 80  # A pitched: leading dimension 80 > k
    apad = [a[i * k + j] if j < k else 0 for i in range(mm) for j in range(lda)]
    A = DeviceArray(rt, (mm, k), "<i4", strides=(lda * 4, 4), data=pack(apad))
    m.matmul_plus_times_i32(A, DeviceArray(rt, (k, n), "<i4", data=pack(bb)), out=cc)
    want = [sum(a[i * k + t] * bb[t * n + j] for t in range(k)) for i in range(mm) for j in range(n)]
    check("matmul_plus_times_i32 lda from strides", u32s(cc.get()) == [w & M32 for w in want])


def test_bad_calls(m, rt) -> None:
    x = DeviceArray(rt, (10,))
    cases = [
        ("wrong dtype", TypeError, lambda: m.reduce_sum_u32(DeviceArray(rt, (10,), "<f4"), out=DeviceArray(rt, (1,)))),
        (
            "strided 1-D view",
            ValueError,
            lambda: m.reduce_sum_u32(DeviceArray(rt, (5,), strides=(8,), nbytes=40), out=x),
        ),
        ("host memory", ValueError, lambda: m.reduce_sum_u32(_host_array(), out=DeviceArray(rt, (1,)))),
        ("output inside the input", assocgen.CudaError, lambda: m.reduce_sum_u32(x, out=_view(x, 4, (1,)))),
    ]
    for name, error, call in cases:
        try:
            call()
            check(f"bad call ({name}) raises {error.__name__}", False)
        except error as e:
            check(f"bad call ({name}) raises {error.__name__}: {e}", True)


_keep: list[object] = []


def _host_array():
    buf = (ctypes.c_uint32 * 10)()
    _keep.append(buf)
    arr = type("Host", (), {})()
    arr.__cuda_array_interface__ = dict(shape=(10,), typestr="<u4", data=(ctypes.addressof(buf), False), version=3)
    return arr


def _view(base: DeviceArray, offset: int, shape):
    v = type("View", (), {})()
    v.__cuda_array_interface__ = dict(shape=shape, typestr="<u4", data=(base.ptr + offset, False), version=3)
    return v


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cache", help="the build cache (default: a temporary folder)")
    args = p.parse_args()
    random.seed(45)
    cache = args.cache or tempfile.mkdtemp(prefix="assocgen-pytest-")
    m = assocgen.load(Path(__file__).with_name("spec.toml"), cache_dir=cache)
    rt = m.runtime()
    for test in (test_reduce, test_scans, test_segreduce, test_rows_pitched, test_transpose_matmul, test_bad_calls):
        try:
            test(m, rt)
        except Exception as e:  # a check that could not run is a failure too
            check(f"{test.__name__}: {type(e).__name__}: {e}", False)
    print(f"{len(passed)} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
