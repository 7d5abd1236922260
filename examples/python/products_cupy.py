"""Ordered products of 3x3 uint32 matrices (wrapping) in CuPy: the whole product, the prefix
products, and the prefix products restarted at head flags, checked against NumPy.

Needs a GPU and CuPy; not run in CI (docs/python.md).
Run: python3 examples/python/products_cupy.py
"""

from pathlib import Path

import cupy
import numpy

import assocgen

m = assocgen.load(Path(__file__).with_name("products.toml"))


def product(ms: numpy.ndarray) -> numpy.ndarray:
    """ms[0] @ ms[1] @ ... in uint32 arithmetic (wrapping), ms (n, 3, 3)."""
    acc = numpy.eye(3, dtype=numpy.uint64)
    for x in ms:
        acc = (acc @ x.astype(numpy.uint64)) & 0xFFFFFFFF
    return acc.astype(numpy.uint32)


if __name__ == "__main__":
    n = 10_007
    rng = numpy.random.default_rng(1)
    host = rng.integers(0, 1 << 32, size=(n, 3, 3), dtype=numpy.uint32)
    flags = (rng.random(n) < 0.01).astype(numpy.uint8)
    x = cupy.asarray(host)  # (n, 3, 3) uint32: one mat3u a row

    total = m.reduce_mat3mul_mat3u(x)  # (1, 3, 3), on CuPy's current stream
    assert (total.get()[0] == product(host)).all()

    prefix = m.scan_mat3mul_mat3u(x)  # (n, 3, 3)
    assert (prefix.get()[100] == product(host[:101])).all()

    seg = m.segscan_mat3mul_mat3u(x, cupy.asarray(flags))
    start = max([0] + [i for i in range(1, 501) if flags[i]])
    assert (seg.get()[500] == product(host[start:501])).all()
    print("products: ok")
