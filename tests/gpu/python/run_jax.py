"""The JAX functions on a GPU: assocgen.load builds jax_spec.toml for the GPU present, `m.jax`
builds and registers its XLA FFI handlers, and every family is called under jax.jit against numpy
references, bit for bit (wrapping uint32 operators; one float32 sum within a tolerance): odd sizes,
n = 0 and 1, user types as trailing dimensions.  Then vmap, 64-bit JAX types, and bad calls, each
raising the right exception (argument checks in Python; the handler's own checks and a CUDA error
through the FFI's error).

Run on a GPU machine with jax[cuda] and numpy: python3 tests/gpu/python/run_jax.py [--cache DIR]
[-v]; the last line is "N passed, M failed"; exit 0 when nothing failed.
"""

import argparse
import sys
import tempfile
import traceback
from collections.abc import Callable
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

import assocgen

M32 = 0xFFFFFFFF
SIZES = (0, 1, 2, 1000, 4097, 100_003, (1 << 20) + 3)
SMALL_SIZES = (0, 1, 2, 1000, 100_003)  # for references in Python loops
INIT = np.array([3, 5], np.uint32)  # an exclusive scan's first map, x -> 3 x + 5
rng = np.random.default_rng(45)
passed: list[str] = []
failed: list[str] = []
verbose = False


def check(name: str, ok: bool, detail: str = "") -> None:
    (passed if ok else failed).append(name)
    if not ok or verbose:
        print(("ok   " if ok else "FAIL ") + name + (f": {detail}" if detail and not ok else ""), flush=True)


def same(name: str, got, want) -> None:
    """got (a JAX array) equals want (numpy) exactly: dtype, shape and every element."""
    g = np.asarray(got)
    if g.dtype != want.dtype or g.shape != want.shape:
        check(name, False, f"got {g.dtype}{g.shape}, want {want.dtype}{want.shape}")
        return
    bad = np.argwhere(g != want)
    detail = (
        ""
        if not len(bad)
        else f"{len(bad)} elements differ, first at {tuple(bad[0])}: {g[tuple(bad[0])]} != {want[tuple(bad[0])]}"
    )
    check(name, not len(bad), detail)


def u32(*shape: int) -> np.ndarray:
    return rng.integers(0, 1 << 32, size=shape, dtype=np.uint64).astype(np.uint32)


def maps(n: int, *lead: int) -> np.ndarray:
    """n affine maps (a odd, b) as (..., n, 2) uint32."""
    m = u32(*lead, n, 2)
    m[..., 0] |= 1
    return m


def compose(f, g):  # f then g: x -> g.a (f.a x + f.b) + g.b
    return ((g[0] * f[0]) & M32, (g[0] * f[1] + g[1]) & M32)


def fold_maps(m: np.ndarray, acc=(1, 0), inclusive=True) -> np.ndarray:
    """The scan of maps (n, 2) from `acc`, inclusive or exclusive, as (n, 2) uint32."""
    out, acc = [], (int(acc[0]), int(acc[1]))
    for a, b in m.tolist():
        if not inclusive:
            out.append(acc)
        acc = compose(acc, (a, b))
        if inclusive:
            out.append(acc)
    return np.array(out, dtype=np.uint32).reshape(len(out), 2)


def total(m: np.ndarray) -> np.ndarray:
    acc = (1, 0)
    for a, b in m.tolist():
        acc = compose(acc, (a, b))
    return np.array([acc], dtype=np.uint32)


def jit(f: Callable) -> Callable:
    return jax.jit(f)


# ---- the families ----


def test_reduce(j) -> None:
    for n in SIZES:
        x = u32(n)
        same(f"reduce_sum_u32 n={n}", jit(j.reduce_sum_u32)(x), np.array([np.add.reduce(x, dtype=np.uint32)]))
        same(f"reduce_max_u32 n={n}", jit(j.reduce_max_u32)(x), np.array([x.max() if n else 0], np.uint32))
        y = u32(n)
        want = np.array([np.add.reduce(x * y, dtype=np.uint32)])
        same(f"reduce_dotu_u32 n={n} (two inputs)", jit(j.reduce_dotu_u32)(x, y), want)
        f = rng.standard_normal(n).astype(np.float32)
        got, ref = float(np.asarray(jit(j.reduce_sum_f32)(f))[0]), float(np.sum(f, dtype=np.float64))
        check(f"reduce_sum_f32 n={n} within 1e-5 of the sum of |x|", abs(got - ref) <= 1e-5 * (np.abs(f).sum() + 1))
    for n in SMALL_SIZES:
        m = maps(n)
        same(f"reduce_compose_affu n={n} (n, 2) uint32", jit(j.reduce_compose_affu)(m), total(m))


def test_scans(j) -> None:
    for n in SMALL_SIZES:
        m = maps(n)
        same(f"scan_compose_affu n={n}", jit(j.scan_compose_affu)(m), fold_maps(m))
        same(f"exscan_compose_affu n={n}", jit(j.exscan_compose_affu)(m), fold_maps(m, inclusive=False))
        f = jit(lambda x: j.exscan_compose_affu(x, init=INIT))
        same(f"exscan_compose_affu n={n} init=(3, 5)", f(m), fold_maps(m, (3, 5), inclusive=False))
    for n in SIZES:
        x = u32(n)
        want = (np.cumsum(x, dtype=np.uint32) - x + np.uint32(7)).astype(np.uint32)
        same(f"exscan_sum_u32 n={n} init=7", jit(lambda v: j.exscan_sum_u32(v, init=7))(x), want)


def _segscan(x: np.ndarray, heads: np.ndarray) -> np.ndarray:
    out, acc = np.empty_like(x), 0
    for i, (v, h) in enumerate(zip(x.tolist(), heads.tolist(), strict=True)):
        acc = v if (h or i == 0) else (acc + v) & M32
        out[i] = acc
    return out


def test_segmented(j) -> None:
    for n in SMALL_SIZES:
        x = u32(n)
        flags = (rng.random(n) < 0.01).astype(np.uint8)
        same(f"segscan_sum_u32 n={n} (flags)", jit(j.segscan_sum_u32)(x, flags), _segscan(x, flags))
        keys = np.sort(rng.integers(-50, 50, n)).astype(np.int32)
        heads = np.r_[True, keys[1:] != keys[:-1]] if n else np.zeros(0, bool)
        same(f"segscan_sum_u32_by_i32 n={n}", jit(j.segscan_sum_u32_by_i32)(x, keys), _segscan(x, heads))
        cuts = np.sort(rng.integers(0, n + 1, 37)) if n else np.zeros(3, np.int64)
        offsets = np.r_[0, cuts, n].astype(np.int32)  # empty segments among them
        want = np.array(
            [np.add.reduce(x[a:b], dtype=np.uint32) for a, b in zip(offsets[:-1], offsets[1:], strict=True)], np.uint32
        )
        same(f"segreduce_sum_u32 n={n} (empty segments too)", jit(j.segreduce_sum_u32)(x, offsets), want)
        _by_key(j, x, keys, heads)


def _by_key(j, x: np.ndarray, keys: np.ndarray, heads: np.ndarray) -> None:
    n = len(x)
    starts = np.flatnonzero(heads)
    sums = np.array(
        [
            np.add.reduce(x[a:b], dtype=np.uint32)
            for a, b in zip(starts, np.append(starts[1:], n)[: len(starts)], strict=True)
        ],
        np.uint32,
    )
    out, unique, count = jit(j.reduce_sum_u32_by_i32)(x, keys)
    k = int(np.asarray(count)[0])
    check(
        f"reduce_sum_u32_by_i32 n={n} num_segments (uint32 without x64)",
        k == len(starts) and count.dtype == jnp.uint32,
        f"{k} != {len(starts)}",
    )
    same(f"reduce_sum_u32_by_i32 n={n} out[:num_segments]", np.asarray(out)[:k], sums[:k])
    same(f"reduce_sum_u32_by_i32 n={n} unique_keys[:num_segments]", np.asarray(unique)[:k], keys[starts][:k])


def test_rows_cols(j) -> None:
    for rows, cols in ((0, 5), (1, 1), (3, 1000), (37, 4097), (1000, 3)):
        x = u32(rows, cols)
        same(
            f"rows_reduce_sum_u32 {rows}x{cols}",
            jit(j.rows_reduce_sum_u32)(x),
            np.add.reduce(x, axis=1, dtype=np.uint32),
        )
        same(f"rows_scan_sum_u32 {rows}x{cols}", jit(j.rows_scan_sum_u32)(x), np.cumsum(x, axis=1, dtype=np.uint32))
        same(
            f"cols_reduce_sum_u32 {rows}x{cols}",
            jit(j.cols_reduce_sum_u32)(x),
            np.add.reduce(x, axis=0, dtype=np.uint32),
        )
        if rows * cols <= 200_000:
            m = maps(cols, rows)
            want = np.concatenate([total(m[r]) for r in range(rows)]) if rows else np.zeros((0, 2), np.uint32)
            same(f"rows_reduce_compose_affu {rows}x{cols} (rows, cols, 2)", jit(j.rows_reduce_compose_affu)(m), want)


def test_transpose(j) -> None:
    for shape in ((0, 3), (1, 1), (50, 70), (3, 50, 70), (2, 1, 33)):
        x = u32(*shape)
        same(f"transpose_u32 {shape}", jit(j.transpose_u32)(x), np.swapaxes(x, -1, -2))
        m = maps(shape[-1], *shape[:-1])  # affu as a trailing 2
        same(f"transpose_affu {shape} (..., 2)", jit(j.transpose_affu)(m), np.swapaxes(m, -2, -3))


def test_matmul(j) -> None:
    for m, n, k in ((33, 17, 65), (1, 1, 1), (0, 4, 3), (4, 5, 0), (128, 130, 257)):
        a = rng.integers(-100, 100, (m, k)).astype(np.int32)
        b = rng.integers(-100, 100, (k, n)).astype(np.int32)
        want = (a.astype(np.int64) @ b.astype(np.int64)).astype(np.int32)
        same(f"matmul_plus_times_i32 {m}x{k} @ {k}x{n}", jit(j.matmul_plus_times_i32)(a, b), want)
        c = rng.integers(-100, 100, (m, n)).astype(np.int32)
        f = jit(lambda a, b, c: j.matmul_plus_times_i32(a, b, accumulate=True, out=c))
        cj = jnp.asarray(c)
        same(f"matmul_plus_times_i32 {m}x{k} @ {k}x{n} accumulate=True", f(a, b, cj), c + want)
        same(f"matmul accumulate leaves its out= array as it was ({m}x{n})", cj, c)


def test_eager_vmap_x64(j) -> None:
    x = u32(5, 999)
    same("eager reduce_sum_u32 (no jit)", j.reduce_sum_u32(x[0]), np.array([np.add.reduce(x[0], dtype=np.uint32)]))
    same(
        "vmap of reduce_sum_u32 (sequential)",
        jax.vmap(j.reduce_sum_u32)(x),
        np.add.reduce(x, axis=1, dtype=np.uint32)[:, None],
    )
    jax.config.update("jax_enable_x64", True)
    try:
        keys = np.repeat(np.arange(4, dtype=np.int32), 3)
        _, _, count = jit(j.reduce_sum_u32_by_i32)(u32(12), keys)
        same("reduce_sum_u32_by_i32 num_segments under jax_enable_x64", count, np.array([4], np.uint64))
    finally:
        jax.config.update("jax_enable_x64", False)


# ---- bad calls ----


def raises(name: str, error: type, call: Callable[[], object], words: str = "") -> None:
    try:
        r = call()
        jax.block_until_ready(r)
    except error as e:
        check(f"bad call ({name}) raises {error.__name__}", words in str(e), f"message {str(e)!r} lacks {words!r}")
        if verbose:
            print(f"     {type(e).__name__}: {str(e).splitlines()[0]}")
        return
    except Exception as e:  # the wrong exception
        check(f"bad call ({name}) raises {error.__name__}", False, f"raised {type(e).__name__}: {e}")
        return
    check(f"bad call ({name}) raises {error.__name__}", False, "nothing raised")


def test_bad_calls(j) -> None:
    x = jnp.asarray(u32(10))
    cpu = jax.devices("cpu")[0]
    raises("wrong dtype", TypeError, lambda: j.reduce_sum_u32(x.astype(jnp.float32)), "in: expected uint32_t")
    raises("2-D for 1-D", ValueError, lambda: j.reduce_sum_u32(x.reshape(2, 5)), "in: expected 1 dimensions")
    raises("user type of 12 bytes", TypeError, lambda: j.scan_compose_affu(u32(10, 3)), "in: expected affu")
    raises("a CPU array", ValueError, lambda: j.reduce_sum_u32(jax.device_put(x, cpu)), "in: a JAX array on cpu")
    raises("lengths differ", ValueError, lambda: j.reduce_dotu_u32(x, x[:9]), "in1: shape (9,) gives n = 9")
    raises("init= where none", TypeError, lambda: j.reduce_sum_u32(x, init=1), "takes no init=")
    raises(
        "init of 4 bytes for affu", ValueError, lambda: j.exscan_compose_affu(u32(10, 2), init=b"abcd"), "init: 4 bytes"
    )
    raises(
        "accumulate without out=",
        TypeError,
        lambda: j.matmul_plus_times_i32(
            x.reshape(2, 5).astype(jnp.int32), x.reshape(5, 2).astype(jnp.int32), accumulate=True
        ),
        "pass it as out=",
    )
    raises("out= without accumulate", TypeError, lambda: j.reduce_sum_u32(x, out=x[:1]), "returns new arrays")
    raises("wrong number of arrays", TypeError, lambda: j.reduce_sum_u32(x, x), "takes 1 arrays")
    # the handlers' own checks, past the Python ones: the FFI target called with sizes that lie
    lie = jax.ffi.ffi_call(j.reduce_sum_u32.target, jax.ShapeDtypeStruct((1,), jnp.uint32))
    raises(
        "handler: sizes that do not match the buffers",
        Exception,
        lambda: jax.jit(lambda v: lie(v, n=np.uint64(11)))(x),
        "pjx_reduce_sum_u32: in holds 40 bytes, its sizes give 44",
    )
    a, b = jnp.zeros((4, 6), jnp.int32), jnp.zeros((6, 3), jnp.int32)
    mm = jax.ffi.ffi_call(j.matmul_plus_times_i32.target, jax.ShapeDtypeStruct((4, 3), jnp.int32))
    attrs = dict(
        lda=np.uint64(5),
        ldb=np.uint64(3),
        m=np.uint64(4),
        n=np.uint64(3),
        k=np.uint64(6),
        accumulate=False,
        ldc=np.uint64(3),
    )
    raises(
        "handler: a CUDA error by its name (lda < k)",
        Exception,
        lambda: jax.jit(lambda a, b: mm(a, b, **attrs))(a, b),
        "pjx_matmul_plus_times_i32: cudaErrorInvalidValue",
    )


def main() -> int:
    global verbose
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cache", help="the build cache (default: a temporary folder)")
    p.add_argument("-v", "--verbose", action="store_true", help="print every check, not only the failures")
    args = p.parse_args()
    verbose = args.verbose
    print(f"jax {jax.__version__}, devices {jax.devices()}", flush=True)
    cache = args.cache or tempfile.mkdtemp(prefix="assocgen-jax-")
    m = assocgen.load(Path(__file__).with_name("jax_spec.toml"), cache_dir=cache)
    j = m.jax
    print(f"{j!r} ({m.folder})", flush=True)
    tests = (
        test_reduce,
        test_scans,
        test_segmented,
        test_rows_cols,
        test_transpose,
        test_matmul,
        test_eager_vmap_x64,
        test_bad_calls,
    )
    for test in tests:
        try:
            test(j)
        except Exception as e:  # a check that could not run is a failure too
            check(f"{test.__name__} stopped: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}", False)
            traceback.print_exc()
    print(f"{len(passed)} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
