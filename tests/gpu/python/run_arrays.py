"""The Python API from PyTorch and CuPy on a GPU: assocgen.load builds arrays.toml for the GPU
present, and every family's function is called on torch tensors and CuPy arrays against NumPy
references (bit for bit for the wrapping uint32 operators, within float tolerance for the
float32 affine maps): odd sizes, n = 0 and 1, pitched and strided views, the user types as
trailing dimensions ((n, 2) float32 affine maps, (n, 3, 3) uint32 matrices); from PyTorch also
under torch.compile (assocgen.pytorch.register), inside a captured CUDA graph and on another
stream; then bad calls, each the right exception with its output left as it was (nothing
launched).  Last, the host time a call at 2^10 elements (printed, not checked).

Run on a GPU machine: python3 tests/gpu/python/run_arrays.py [--only torch,cupy] [--cache DIR]
The last line is "N passed, M failed"; exit 0 when nothing failed.  A library that cannot be
imported, or sees no GPU, is a failure (not a skip): this is the check of those libraries.
"""

import argparse
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path

import numpy as np

import assocgen

M32 = 0xFFFFFFFF
results = {"passed": 0, "failed": []}


def check(name: str, ok: bool, detail: str = "") -> None:
    print(("ok   " if ok else "FAIL ") + name + (f": {detail}" if detail and not ok else ""), flush=True)
    if ok:
        results["passed"] += 1
    else:
        results["failed"].append(name)


# ---- the two libraries, behind one small interface ----


class Torch:
    name = "torch"

    def __init__(self) -> None:
        import torch

        if not torch.cuda.is_available():
            raise RuntimeError(f"torch {torch.__version__} sees no CUDA device")
        self.t = torch

    def dev(self, a: np.ndarray):
        """A CUDA tensor holding `a` (unsigned types through their signed twins: torch copies
        those only as bytes)."""
        a = np.ascontiguousarray(a)
        if a.dtype.kind == "u" and a.dtype.itemsize > 1:
            bits = 8 * a.dtype.itemsize
            x = self.t.from_numpy(a.view(f"i{a.dtype.itemsize}")).cuda()
            return x.view(getattr(self.t, f"uint{bits}"))
        return self.t.from_numpy(a).cuda()

    def host(self, x) -> np.ndarray:
        unsigned = {self.t.uint16: 2, self.t.uint32: 4, self.t.uint64: 8}
        if x.dtype in unsigned:
            size = unsigned[x.dtype]
            return x.view(getattr(self.t, f"int{8 * size}")).cpu().numpy().view(f"u{size}")
        return x.cpu().numpy()

    def cpu(self, a: np.ndarray):
        return self.t.from_numpy(np.ascontiguousarray(a))

    def sync(self) -> None:
        self.t.cuda.synchronize()


class CuPy:
    name = "cupy"

    def __init__(self) -> None:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() == 0:
            raise RuntimeError("cupy sees no CUDA device")
        self.cp = cupy

    def dev(self, a: np.ndarray):
        return self.cp.asarray(np.ascontiguousarray(a))

    def host(self, x) -> np.ndarray:
        return self.cp.asnumpy(x)

    def cpu(self, a: np.ndarray):
        return np.ascontiguousarray(a)  # a NumPy array: DLPack says it is on the CPU

    def sync(self) -> None:
        self.cp.cuda.Device().synchronize()


# ---- references ----


def u32(rng, *shape) -> np.ndarray:
    return rng.integers(0, 1 << 32, size=shape, dtype=np.uint32)


def csum(x: np.ndarray) -> np.ndarray:
    """Prefix sums with a leading 0, exact (uint64: n * 2^32 fits)."""
    return np.concatenate([[0], np.cumsum(x.astype(np.uint64))]).astype(np.uint64)


def seg_inclusive(x: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """A segmented inclusive sum modulo 2^32; `starts[i]`: a segment starts at i (and at 0)."""
    n = len(x)
    if n == 0:
        return x.copy()
    s = starts.copy()
    s[0] = True
    first = np.maximum.accumulate(np.where(s, np.arange(n), 0))
    c = csum(x)
    return ((c[1:] - c[first]) & M32).astype(np.uint32)


def maps(rng, *shape) -> np.ndarray:
    """Affine maps (a, b) as float32 pairs, a in [0.5, 0.99): their compositions stay bounded."""
    out = np.empty((*shape, 2), np.float32)
    out[..., 0] = rng.uniform(0.5, 0.99, size=shape)
    out[..., 1] = rng.uniform(-1, 1, size=shape)
    return out


def affine_prefix(ms: np.ndarray, init=(1.0, 0.0), exclusive: bool = False) -> np.ndarray:
    """The prefix compositions of maps in order (float64): x -> a x + b after what came before."""
    out = np.empty((len(ms), 2))
    acc_a, acc_b = init
    for i, (a, b) in enumerate(ms.astype(np.float64).tolist()):
        if exclusive:
            out[i] = (acc_a, acc_b)
        acc_a, acc_b = a * acc_a, a * acc_b + b
        if not exclusive:
            out[i] = (acc_a, acc_b)
    return out


def affine_total(ms: np.ndarray) -> np.ndarray:
    return affine_prefix(ms)[-1] if len(ms) else np.array([1.0, 0.0])


def close(got: np.ndarray, want: np.ndarray) -> bool:
    got = np.asarray(got, np.float64).reshape(np.shape(want))
    return bool(np.allclose(got, want, rtol=1e-4, atol=1e-4))


def mat_prefix(ms: np.ndarray, init=None, exclusive: bool = False, starts=None) -> np.ndarray:
    """Prefix products of 3x3 uint32 matrices, wrapping (uint64 products wrap modulo 2^64, a
    multiple of 2^32); `starts`: restart at these."""
    eye = np.eye(3, dtype=np.uint64)
    acc = eye if init is None else init.astype(np.uint64)
    out = np.empty_like(ms)
    for i in range(len(ms)):
        if starts is not None and starts[i]:
            acc = eye
        if exclusive:
            out[i] = acc
        acc = (acc @ ms[i].astype(np.uint64)) & M32
        if not exclusive:
            out[i] = acc
    return out


def same(got: np.ndarray, want: np.ndarray) -> bool:
    return got.shape == want.shape and bool((got == want).all())


# ---- the families ----


def t_reduce_scan_u32(L, m, rng) -> None:
    for n in (0, 1, 7, 1000, 65537, (1 << 20) + 3):
        x = u32(rng, n)
        c = csum(x)
        got = L.host(m.reduce_sum_u32(L.dev(x)))
        check(f"{L.name} reduce_sum_u32 n={n}", same(got, np.array([c[-1] & M32], np.uint32)))
        got = L.host(m.scan_sum_u32(L.dev(x)))
        check(f"{L.name} scan_sum_u32 n={n}", same(got, (c[1:] & M32).astype(np.uint32)))
        got = L.host(m.exscan_sum_u32(L.dev(x), init=5))
        check(f"{L.name} exscan_sum_u32 init=5 n={n}", same(got, ((c[:-1] + 5) & M32).astype(np.uint32)))
    x = u32(rng, 100_003)
    d = L.dev(x)
    m.scan_sum_u32(d, out=d)  # in place
    check(f"{L.name} scan_sum_u32 in place", same(L.host(d), (csum(x)[1:] & M32).astype(np.uint32)))


def t_several_inputs(L, m, rng) -> None:
    for n in (0, 1, 4099, 300_001):
        x, y = u32(rng, n), u32(rng, n)
        prod = ((x.astype(np.uint64) * y.astype(np.uint64)) & M32).astype(np.uint32)
        c = csum(prod)
        got = L.host(m.reduce_dotu_u32(L.dev(x), L.dev(y)))
        check(f"{L.name} reduce_dotu_u32 (two inputs) n={n}", same(got, np.array([c[-1] & M32], np.uint32)))
        got = L.host(m.scan_dotu_u32(L.dev(x), L.dev(y)))
        check(f"{L.name} scan_dotu_u32 (two inputs) n={n}", same(got, (c[1:] & M32).astype(np.uint32)))


def t_affine(L, m, rng) -> None:
    for n in (0, 1, 2, 1023, 100_003):
        x = maps(rng, n)
        got = L.host(m.scan_compose_affine(L.dev(x)))
        check(
            f"{L.name} scan_compose_affine (n, 2) float32 n={n}", got.shape == (n, 2) and close(got, affine_prefix(x))
        )
        init = np.array([2.0, 0.5], np.float32)
        got = L.host(m.exscan_compose_affine(L.dev(x), init=init.tobytes()))
        want = affine_prefix(x, (2.0, 0.5), exclusive=True)
        check(f"{L.name} exscan_compose_affine init=bytes n={n}", close(got, want))
        got = L.host(m.reduce_compose_affine(L.dev(x)))
        check(f"{L.name} reduce_compose_affine (ordered) n={n}", got.shape == (1, 2) and close(got, affine_total(x)))


def t_mat3(L, m, rng) -> None:
    for n in (0, 1, 10_007):
        x = u32(rng, n, 3, 3)
        want = mat_prefix(x)
        total = want[-1:] if n else np.eye(3, dtype=np.uint32)[None]
        check(f"{L.name} reduce_mat3mul_mat3u (n, 3, 3) n={n}", same(L.host(m.reduce_mat3mul_mat3u(L.dev(x))), total))
        flat = L.host(m.reduce_mat3mul_mat3u(L.dev(x.reshape(n, 9))))
        check(f"{L.name} reduce_mat3mul_mat3u (n, 9) n={n}", same(flat, total.reshape(1, 9)))
        check(f"{L.name} scan_mat3mul_mat3u n={n}", same(L.host(m.scan_mat3mul_mat3u(L.dev(x))), want))
        init = u32(rng, 3, 3)
        got = L.host(m.exscan_mat3mul_mat3u(L.dev(x), init=init.tobytes()))
        check(f"{L.name} exscan_mat3mul_mat3u init=bytes n={n}", same(got, mat_prefix(x, init, exclusive=True)))
        flags = (rng.random(n) < 0.01).astype(np.uint8)
        got = L.host(m.segscan_mat3mul_mat3u(L.dev(x), L.dev(flags)))
        check(f"{L.name} segscan_mat3mul_mat3u n={n}", same(got, mat_prefix(x, starts=flags != 0)))


def t_segscan(L, m, rng) -> None:
    for n in (0, 1, 5000, 1_000_003):
        x = u32(rng, n)
        flags = (rng.random(n) < 0.001).astype(np.uint8) * rng.integers(1, 256, n).astype(np.uint8)
        want = seg_inclusive(x, flags != 0)
        check(f"{L.name} segscan_sum_u32 flags n={n}", same(L.host(m.segscan_sum_u32(L.dev(x), L.dev(flags))), want))
        got = L.host(m.exsegscan_sum_u32(L.dev(x), L.dev(flags)))
        check(f"{L.name} exsegscan_sum_u32 flags n={n}", same(got, (want - x).astype(np.uint32)))
        keys = np.repeat(rng.integers(-5, 5, n), rng.integers(1, 40, n))[:n].astype(np.int32)
        starts = np.concatenate([[True], keys[1:] != keys[:-1]]) if n else np.zeros(0, bool)
        got = L.host(m.segscan_sum_u32_by_i32(L.dev(x), L.dev(keys)))
        check(f"{L.name} segscan_sum_u32_by_i32 n={n}", same(got, seg_inclusive(x, starts)))


def t_segreduce(L, m, rng) -> None:
    for n, k in ((0, 0), (1, 1), (5000, 40), (1_000_003, 1000)):
        x = u32(rng, n)
        offsets = np.array([0, *sorted(rng.integers(0, n + 1, k)), n], np.int64)  # empty segments too
        c = csum(x)
        want = ((c[offsets[1:]] - c[offsets[:-1]]) & M32).astype(np.uint32)
        got = L.host(m.segreduce_sum_u32(L.dev(x), L.dev(offsets)))
        check(f"{L.name} segreduce_sum_u32 n={n} segments={k + 1}", same(got, want))
    ms = maps(rng, 3000)
    offsets = np.array([0, *sorted(rng.integers(0, 3001, 30)), 3000], np.int64)
    want = np.array([affine_total(ms[a:b]) for a, b in zip(offsets[:-1], offsets[1:], strict=True)])
    got = L.host(m.segreduce_compose_affine(L.dev(ms), L.dev(offsets)))
    check(f"{L.name} segreduce_compose_affine (ordered, affine maps)", got.shape == (31, 2) and close(got, want))


def t_reduce_by_key(L, m, rng) -> None:
    for n in (0, 1, 5000, 1_000_003):
        x = u32(rng, n)
        keys = np.repeat(rng.integers(-100, 100, n), rng.integers(1, 50, n))[:n].astype(np.int32)
        out, unique, count = m.reduce_sum_u32_by_i32(L.dev(x), L.dev(keys))
        starts = np.flatnonzero(np.concatenate([[True], keys[1:] != keys[:-1]])) if n else np.zeros(0, np.int64)
        c = csum(x)
        want = ((c[np.append(starts[1:], n)] - c[starts]) & M32).astype(np.uint32) if n else x
        runs = int(L.host(count)[0])
        ok = runs == len(starts) and same(L.host(out)[:runs], want) and same(L.host(unique)[:runs], keys[starts])
        check(f"{L.name} reduce_sum_u32_by_i32 n={n} runs={len(starts)}", ok, f"num_segments {runs}")


def pitched(L, a: np.ndarray, pitch: int):
    """`a` (rows, cols, ...) as the first cols columns of a (rows, pitch, ...) device array."""
    base = np.zeros((a.shape[0], pitch, *a.shape[2:]), a.dtype)
    base[:, : a.shape[1]] = a
    return L.dev(base)[:, : a.shape[1]]


def t_rows_cols(L, m, rng) -> None:
    for rows, cols, pitch in ((37, 1000, 1024), (1, 1, 3), (0, 5, 8), (3, 100_003, 100_010)):
        x = u32(rng, rows, cols)
        c = np.cumsum(x.astype(np.uint64), axis=1) & M32
        d = pitched(L, x, pitch)
        got = L.host(m.rows_reduce_sum_u32(d))
        check(f"{L.name} rows_reduce_sum_u32 {rows}x{cols} pitch {pitch}", same(got, c[:, -1].astype(np.uint32)))
        out = pitched(L, np.zeros((rows, cols), np.uint32), pitch + 5)
        m.rows_scan_sum_u32(d, out=out)
        check(f"{L.name} rows_scan_sum_u32 {rows}x{cols} out pitched", same(L.host(out), c.astype(np.uint32)))
        got = L.host(m.rows_exscan_sum_u32(d))
        check(f"{L.name} rows_exscan_sum_u32 {rows}x{cols}", same(got, ((c - x) & M32).astype(np.uint32)))
        down = (np.sum(x.astype(np.uint64), axis=0) & M32).astype(np.uint32)
        check(f"{L.name} cols_reduce_sum_u32 {rows}x{cols} pitch {pitch}", same(L.host(m.cols_reduce_sum_u32(d)), down))
    ms = maps(rng, 16, 777)
    got = L.host(m.rows_scan_compose_affine(pitched(L, ms, 800)))
    want = np.stack([affine_prefix(row) for row in ms])
    check(f"{L.name} rows_scan_compose_affine (rows, cols, 2) pitched", got.shape == (16, 777, 2) and close(got, want))


def t_transpose(L, m, rng) -> None:
    x = u32(rng, 3, 50, 70)
    check(f"{L.name} transpose_u32 batched", same(L.host(m.transpose_u32(L.dev(x))), x.transpose(0, 2, 1)))
    y = u32(rng, 333, 1001)
    check(f"{L.name} transpose_u32 2-D odd", same(L.host(m.transpose_u32(L.dev(y))), y.T))
    base = u32(rng, 2, 40, 64)
    view = L.dev(base)[:, :, :33]  # pitched rows, a stride a matrix
    check(
        f"{L.name} transpose_u32 pitched view", same(L.host(m.transpose_u32(view)), base[:, :, :33].transpose(0, 2, 1))
    )
    z = u32(rng, 21, 13, 3, 3)
    check(f"{L.name} transpose_mat3u (r, c, 3, 3)", same(L.host(m.transpose_mat3u(L.dev(z))), z.transpose(1, 0, 2, 3)))
    e = np.zeros((0, 4), np.uint32)
    check(f"{L.name} transpose_u32 0x4", L.host(m.transpose_u32(L.dev(e))).shape == (4, 0))


def t_matmul(L, m, rng) -> None:
    for mm, n, k, lda in ((33, 17, 65, 80), (1, 1, 1, 1), (128, 96, 200, 200)):
        a = rng.integers(-100, 100, (mm, k)).astype(np.int32)
        b = rng.integers(-100, 100, (k, n)).astype(np.int32)
        da = pitched(L, a, lda)
        want = (a.astype(np.int64) @ b.astype(np.int64)).astype(np.int32)
        check(
            f"{L.name} matmul_plus_times_i32 {mm}x{n}x{k} lda={lda}",
            same(L.host(m.matmul_plus_times_i32(da, L.dev(b))), want),
        )
        c0 = rng.integers(-100, 100, (mm, n)).astype(np.int32)
        dc = L.dev(c0)
        m.matmul_plus_times_i32(da, L.dev(b), out=dc, accumulate=True)
        check(f"{L.name} matmul_plus_times_i32 accumulate {mm}x{n}x{k}", same(L.host(dc), c0 + want))
        mp = (a[:, :, None].astype(np.int64) + b[None, :, :]).min(axis=1).astype(np.int32)
        check(f"{L.name} matmul_min_plus_i32 {mm}x{n}x{k}", same(L.host(m.matmul_min_plus_i32(da, L.dev(b))), mp))


FAMILIES = [t_reduce_scan_u32, t_several_inputs, t_affine, t_mat3, t_segscan, t_segreduce, t_reduce_by_key]
FAMILIES += [t_rows_cols, t_transpose, t_matmul]


# ---- bad calls: the right exception, and nothing launched (the output is as it was) ----


def refused(L, name: str, error: type, call: Callable[[], object], out) -> None:
    """`call` raises `error` and leaves `out` (filled with 7s) unchanged."""
    before = L.host(out).copy()
    try:
        call()
    except error as e:
        L.sync()
        untouched = same(L.host(out), before)
        check(f"{L.name} bad call ({name}): {error.__name__}: {e}", untouched, "the output was written")
        return
    except Exception as e:
        check(f"{L.name} bad call ({name}) raises {error.__name__}", False, f"{type(e).__name__}: {e}")
        return
    check(f"{L.name} bad call ({name}) raises {error.__name__}", False, "no exception")


def t_bad_calls(L, m, rng) -> None:
    x = u32(rng, 1000)
    d = L.dev(x)
    out = L.dev(np.full(1, 7, np.uint32))
    refused(L, "wrong dtype", TypeError, lambda: m.reduce_sum_u32(L.dev(x.astype(np.float32)), out=out), out)
    refused(L, "a CPU array", ValueError, lambda: m.reduce_sum_u32(L.cpu(x), out=out), out)
    refused(L, "a strided 1-D view", ValueError, lambda: m.reduce_sum_u32(d[::2], out=out), out)
    refused(
        L, "an out of the wrong shape", ValueError, lambda: m.reduce_sum_u32(d, out=L.dev(np.zeros(2, np.uint32))), out
    )
    refused(L, "init= where there is none", TypeError, lambda: m.reduce_sum_u32(d, out=out, init=3), out)
    refused(L, "a wrong number of arrays", TypeError, lambda: m.reduce_sum_u32(d, d, out=out), out)
    keys = L.dev(np.zeros(999, np.int32))
    seg_out = L.dev(np.full(1000, 7, np.uint32))
    refused(L, "keys of another length", ValueError, lambda: m.segscan_sum_u32_by_i32(d, keys, out=seg_out), seg_out)
    ms = L.dev(np.zeros((1000, 4), np.float32))[:, :2]  # the maps 16 bytes apart: not packed
    scan_out = L.dev(np.full((1000, 2), 7, np.float32))
    refused(L, "a non-contiguous view of maps", ValueError, lambda: m.scan_compose_affine(ms, out=scan_out), scan_out)
    a, b = L.dev(np.ones((4, 6), np.int32)), L.dev(np.ones((3, 6), np.int32))
    c = L.dev(np.full((4, 3), 7, np.int32))
    refused(L, "a transposed view (layout nn)", ValueError, lambda: m.matmul_plus_times_i32(a, b.T, out=c), c)
    three = L.dev(np.zeros((10, 3), np.uint32))  # 12 bytes: not a mat3u
    refused(L, "a user type of the wrong size", TypeError, lambda: m.reduce_mat3mul_mat3u(three), out)
    refused(L, "init= of the wrong size", ValueError, lambda: m.exscan_sum_u32(d, init=b"abc"), out)
    if L.name == "cupy":
        refused(L, "a reversed view", ValueError, lambda: m.reduce_sum_u32(d[::-1], out=out), out)
    other_device(L, m, x, out)


def other_device(L, m, x: np.ndarray, out) -> None:
    """An input on another GPU than out= (two GPUs and more only)."""
    if L.name == "torch":
        count = L.t.cuda.device_count()
        make = (lambda: L.t.from_numpy(x.view(np.int32)).to("cuda:1").view(L.t.uint32)) if count > 1 else None
    else:
        count = L.cp.cuda.runtime.getDeviceCount()
        make = None
        if count > 1:

            def make():
                with L.cp.cuda.Device(1):
                    return L.cp.asarray(x)

    if make is None:
        print(f"skip {L.name} bad call (an array on another device): one GPU")
        return
    refused(L, "an array on another device", ValueError, lambda: m.reduce_sum_u32(make(), out=out), out)


# ---- PyTorch: torch.compile, CUDA graphs, streams ----


def t_torch_compile(L, m, rng) -> None:
    torch = L.t
    from assocgen import pytorch

    ops = pytorch.register(m)
    check("torch register: every function an operator", sorted(ops) == sorted(m.functions))

    def recurrence(x):
        return ops["scan_compose_affine"](x * 1.0)[..., 1] + 1.0

    compiled = torch.compile(recurrence, fullgraph=True)
    for n in (1000, 4097, 100_003):  # a second and third size: recompiled or traced with dynamic shapes
        x = L.dev(maps(rng, n))
        check(
            f"torch.compile scan_compose_affine n={n}", close(L.host(compiled(x)), affine_prefix(L.host(x))[:, 1] + 1)
        )
    u = u32(rng, 5000)
    keys = np.repeat(rng.integers(0, 9, 5000), 7)[:5000].astype(np.int32)

    def several(x, k):
        total = ops["reduce_sum_u32"](x)
        ex = ops["exscan_sum_u32"](x, 5)
        out, unique, count = ops["reduce_sum_u32_by_i32"](x, k)
        return total, ex, out, unique, count

    got = [L.host(g) for g in torch.compile(several, fullgraph=True)(L.dev(u), L.dev(keys))]
    want = [L.host(w) for w in several(L.dev(u), L.dev(keys))]
    runs = int(want[4][0])  # reduce by key: the first `runs` entries of its outputs are defined
    for k in (2, 3):
        got[k], want[k] = got[k][:runs], want[k][:runs]
    names = ("total", "exscan", "by key: sums", "by key: keys", "by key: count")
    bad = [
        f"{name} {g.dtype}{g.shape} vs eager {w.dtype}{w.shape}"
        for name, g, w in zip(names, got, want, strict=True)
        if not same(g, w)
    ]
    check("torch.compile reduce, exscan init=5, reduce by key (three outputs)", not bad, "; ".join(bad))
    check("torch ops: reduce_sum_u32 eager", same(want[0], np.array([int(csum(u)[-1]) & M32], np.uint32)))
    graphed = torch.compile(recurrence, mode="reduce-overhead")
    x = L.dev(maps(rng, 4097))
    for _ in range(3):
        y = graphed(x)
    check("torch.compile mode=reduce-overhead (CUDA graphs)", close(L.host(y), affine_prefix(L.host(x))[:, 1] + 1))


def t_torch_graph(L, m, rng) -> None:
    """Calls captured in a CUDA graph (torch.cuda.graph), replayed on new data."""
    torch = L.t
    n = 100_003
    x = L.dev(maps(rng, n))
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up outside the capture, as torch asks
        m.scan_compose_affine(x)
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        scanned = m.scan_compose_affine(x)
        total = m.reduce_compose_affine(x)
        ex = m.exscan_compose_affine(x, init=np.array([3.0, 1.0], np.float32).tobytes())
    for round_ in range(2):
        fresh = maps(rng, n)
        x.copy_(L.dev(fresh))
        g.replay()
        torch.cuda.synchronize()
        ok = close(L.host(scanned), affine_prefix(fresh)) and close(L.host(total), affine_total(fresh))
        ok = ok and close(L.host(ex), affine_prefix(fresh, (3.0, 1.0), exclusive=True))
        check(f"torch CUDA graph: scan, reduce, exscan captured, replay {round_ + 1}", ok)


def t_torch_streams(L, m, rng) -> None:
    torch = L.t
    x = maps(rng, 50_001)
    d = L.dev(x)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):  # the current stream is s
        y = m.scan_compose_affine(d)
    z = m.scan_compose_affine(d, stream=s)  # on s, given
    s.synchronize()
    want = affine_prefix(x)
    check("torch on a non-default current stream", close(L.host(y), want))
    check("torch stream= a torch.cuda.Stream", close(L.host(z), want))
    grad = torch.ones(10, device="cuda", requires_grad=True).view(5, 2)  # read as it is: no gradient
    check("torch a tensor that requires grad is read", close(L.host(m.reduce_compose_affine(grad).detach()), [1, 5]))


def t_cupy_streams(L, m, rng) -> None:
    cp = L.cp
    x = u32(rng, 70_001)
    d = L.dev(x)
    want = (csum(x)[1:] & M32).astype(np.uint32)
    with cp.cuda.Stream() as s:
        y = m.scan_sum_u32(d)
    s.synchronize()
    check("cupy on a non-default current stream", same(L.host(y), want))
    s2 = cp.cuda.Stream()
    z = m.scan_sum_u32(d, stream=s2)
    s2.synchronize()
    check("cupy stream= a cupy Stream", same(L.host(z), want))
    ms = L.dev(maps(rng, 4097))
    as_floats = L.host(m.scan_compose_affine(ms))
    as_halves = L.host(m.scan_compose_affine(ms.view(cp.uint16)))  # (n, 4) uint16: the same 8 bytes
    check("cupy affine maps as (n, 4) uint16, their bytes", same(as_halves.view(np.float32), as_floats))
    check(
        "cupy (n, 3) uint32 is no mat3u", _raises(TypeError, lambda: m.scan_mat3mul_mat3u(cp.zeros((5, 3), cp.uint32)))
    )


def _raises(error: type, call: Callable[[], object]) -> bool:
    try:
        call()
    except error:
        return True
    except Exception:
        return False
    return False


# ---- the host time a call (printed, not checked) ----


def overhead(L, m, rng) -> None:
    """Host microseconds a call at 2^10 elements: `calls` calls queued, timed on the host."""
    d = L.dev(u32(rng, 1 << 10))
    out = L.dev(np.zeros(1, np.uint32))
    ms = L.dev(maps(rng, 1 << 10))
    cases = {
        "reduce_sum_u32 out=": lambda: m.reduce_sum_u32(d, out=out),
        "reduce_sum_u32 allocating": lambda: m.reduce_sum_u32(d),
        "scan_compose_affine allocating": lambda: m.scan_compose_affine(ms),
    }
    for name, call in cases.items():
        call()
        L.sync()
        best = float("inf")
        for _ in range(5):
            t = time.perf_counter()
            for _ in range(2000):
                call()
            best = min(best, (time.perf_counter() - t) / 2000 * 1e6)
            L.sync()
        print(f"host time {L.name} {name} n=2^10: {best:.2f} us a call")


def run_lib(cls, m, seed: int) -> None:
    try:
        L = cls()
    except Exception as e:
        check(f"{cls.name}: import and a GPU", False, f"{type(e).__name__}: {e}")
        return
    tests = [*FAMILIES, t_bad_calls]
    tests += [t_torch_compile, t_torch_graph, t_torch_streams] if cls is Torch else [t_cupy_streams]
    for test in [*tests, overhead]:
        rng = np.random.default_rng(seed)
        try:
            test(L, m, rng)
        except Exception as e:  # a check that could not run is a failure too
            traceback.print_exc()
            check(f"{L.name} {test.__name__}: {type(e).__name__}: {e}", False)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--only", default="torch,cupy", help="the libraries, comma separated (default: torch,cupy)")
    p.add_argument("--cache", help="the build cache (default: a temporary folder)")
    p.add_argument("--seed", type=int, default=45)
    args = p.parse_args()
    cache = args.cache or tempfile.mkdtemp(prefix="assocgen-arrays-")
    t = time.time()
    m = assocgen.load(Path(__file__).with_name("arrays.toml"), cache_dir=cache)
    print(f"built {m.folder} in {time.time() - t:.0f} s", flush=True)
    libs = {"torch": Torch, "cupy": CuPy}
    for name in args.only.split(","):
        if name not in libs:
            p.error(f"--only: {name!r} is not one of {', '.join(libs)}")
        run_lib(libs[name], m, args.seed)
    for name in results["failed"]:
        print(f"failed: {name}")
    print(f"{results['passed']} passed, {len(results['failed'])} failed")
    return 1 if results["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
