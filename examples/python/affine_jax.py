"""A drop-in for jax.lax.associative_scan on affine maps x -> a x + b (float32), through
assocgen's scan of affine_jax.toml: XLA FFI custom calls, so it traces under jax.jit and runs on
XLA's stream.  `affine_scan((a, b), reverse, axis)` gives what
`jax.lax.associative_scan(compose, (a, b), reverse, axis)` gives (up to rounding: the kernels
compose with fmaf), for a and b of one shape; a 1-D scan is one call, a scan along an axis of a
batch is a scan along rows.

Needs a GPU and jax with CUDA; not run in CI (docs/python.md).
Run: python3 examples/python/affine_jax.py
"""

import statistics
import time
from pathlib import Path

import jax
import jax.numpy as jnp

import assocgen

m = assocgen.load(Path(__file__).with_name("affine_jax.toml"))


def compose(f, g):
    """f then g, as jax.lax.associative_scan takes the operator: x -> g.a (f.a x + f.b) + g.b."""
    (a1, b1), (a2, b2) = f, g
    return a2 * a1, a2 * b1 + b2


def affine_scan(elems, reverse: bool = False, axis: int = 0):
    """jax.lax.associative_scan(compose, elems, reverse=reverse, axis=axis) for elems = (a, b)."""
    a, b = elems
    axis %= a.ndim
    maps = jnp.moveaxis(jnp.stack((a, b), axis=-1), axis, -2)  # (..., n, 2): one map a row of 2
    if reverse:
        maps = jnp.flip(maps, -2)
    if maps.ndim == 2:
        out = m.jax.scan_compose_affine(maps)
    else:  # a batch: each row scanned
        rows = maps.reshape(-1, *maps.shape[-2:])
        out = m.jax.rows_scan_compose_affine(rows).reshape(maps.shape)
    if reverse:
        out = jnp.flip(out, -2)
    out = jnp.moveaxis(out, -2, axis)
    return out[..., 0], out[..., 1]


def median_ms(f, *args, reps: int = 15) -> float:
    jax.block_until_ready(f(*args))
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        jax.block_until_ready(f(*args))
        times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times)


def compare(name: str, a, b, **kw) -> None:
    ours = jax.jit(lambda a, b: affine_scan((a, b), **kw))
    theirs = jax.jit(lambda a, b: jax.lax.associative_scan(compose, (a, b), **kw))
    (ga, gb), (wa, wb) = ours(a, b), theirs(a, b)
    err = max(
        float(jnp.max(jnp.abs(ga - wa) / (1 + jnp.abs(wa)))), float(jnp.max(jnp.abs(gb - wb) / (1 + jnp.abs(wb))))
    )
    print(
        f"{name}: max relative difference {err:.1e}; "
        f"assocgen {median_ms(ours, a, b):.3f} ms, jax.lax.associative_scan {median_ms(theirs, a, b):.3f} ms"
    )


if __name__ == "__main__":
    key_a, key_b = jax.random.split(jax.random.key(0))
    for shape, kw in [((1 << 24,), {}), ((64, 1 << 16), dict(axis=1)), ((1 << 12, 256), dict(axis=0, reverse=True))]:
        a = jax.random.uniform(key_a, shape, jnp.float32, 0.5, 1.0)
        b = jax.random.normal(key_b, shape, jnp.float32)
        compare(f"{shape} {kw or ''}".strip(), a, b, **kw)
