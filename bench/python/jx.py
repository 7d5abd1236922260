"""The JAX column: jax.lax.associative_scan and jnp ops under jax.jit, on the same device memory
as PyTorch's inputs (DLPack, no copy).  JAX runs on its own stream, so its calls are timed by host
clocks (timing.host_ms).  Imported only when JAX is; XLA_PYTHON_CLIENT_PREALLOCATE=false is set
first (bench.py) so that JAX does not take most of the GPU's memory."""

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
from jax import lax


def compose(x: Any, y: Any) -> Any:
    """Affine maps in order: x then y, each (a, b)."""
    return y[0] * x[0], y[0] * x[1] + y[1]


def mat3mul(x: Any, y: Any) -> Any:
    """3x3 uint32 matrices (..., 3, 3) in order: x @ y, wrapping."""
    return (x[..., :, :, None] * y[..., None, :, :]).sum(axis=-2, dtype=jnp.uint32)


def seg_compose(x: Any, y: Any) -> Any:
    """Affine maps with segment heads (f, a, b): y's segment restarts at a head."""
    a, b = compose(x[1:], y[1:])
    return x[0] | y[0], jnp.where(y[0], y[1], a), jnp.where(y[0], y[2], b)


@jax.jit
def affine_scan(maps: Any) -> Any:
    a, b = lax.associative_scan(compose, (maps[..., 0], maps[..., 1]), axis=maps.ndim - 2)
    return jnp.stack((a, b), axis=-1)


@jax.jit
def mat3_scan(m: Any) -> Any:
    """m: (n, 9) int32 holding the uint32 bits (as PyTorch passes them)."""
    u = lax.bitcast_convert_type(m, jnp.uint32).reshape(-1, 3, 3)
    return lax.bitcast_convert_type(lax.associative_scan(mat3mul, u).reshape(-1, 9), jnp.int32)


@jax.jit
def sumsq(x: Any) -> Any:
    return jnp.sum(x * x)


@jax.jit
def argmax(x: Any) -> Any:
    return jnp.argmax(x)


@jax.jit
def segreduce(maps: Any, heads: Any, ends: Any) -> Any:
    """Each segment's fold: the scan restarted at each head, read at each segment's last element."""
    _, a, b = lax.associative_scan(seg_compose, (heads != 0, maps[:, 0], maps[:, 1]))
    return jnp.stack((a[ends], b[ends]), axis=-1)


def array(t: Any) -> Any:
    """A torch tensor as a JAX array on the same memory."""
    return jax.dlpack.from_dlpack(t)


def bind(fn: Callable[..., Any], *tensors: Any) -> Callable[[], Any]:
    """A call of fn on the tensors as JAX arrays."""
    args = [array(t) for t in tensors]
    return lambda: fn(*args)


def sync(out: Any) -> Any:
    return jax.block_until_ready(out)
