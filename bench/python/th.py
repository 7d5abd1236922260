"""The PyTorch column: torch._higher_order_ops.associative_scan under torch.compile for the scans
(its combine written with pointwise ops only, as its default combine_mode asks: the 3x3 product as
nine sums of products, in int32, whose wrapping multiply gives uint32's bits), and plain torch ops
for the reduces (the sum of squares compiled, torch.argmax eager)."""

from collections.abc import Callable
from typing import Any

import torch
from torch._higher_order_ops.associative_scan import associative_scan


def compose(x: Any, y: Any) -> Any:
    return y[0] * x[0], y[0] * x[1] + y[1]


def mat3mul(x: Any, y: Any) -> Any:
    """x @ y for tuples of the nine entries (row-major)."""
    return tuple(
        x[3 * i] * y[j] + x[3 * i + 1] * y[3 + j] + x[3 * i + 2] * y[6 + j] for i in range(3) for j in range(3)
    )


def affine_scan(maps: torch.Tensor) -> torch.Tensor:
    dim = maps.dim() - 2
    a, b = associative_scan(compose, (maps[..., 0], maps[..., 1]), dim)
    return torch.stack((a, b), dim=-1)


def mat3_scan(m: torch.Tensor) -> torch.Tensor:
    entries = tuple(m[:, k] for k in range(9))
    return torch.stack(associative_scan(mat3mul, entries, 0), dim=-1)


def sumsq(x: torch.Tensor) -> torch.Tensor:
    return (x * x).sum()


COMPILED: dict[str, Callable[..., Any]] = {}


def compiled(name: str) -> Callable[..., Any]:
    """torch.compile of one of the functions above, made once."""
    if name not in COMPILED:
        COMPILED[name] = torch.compile(globals()[name], dynamic=False)
    return COMPILED[name]


def bind(name: str, *tensors: torch.Tensor) -> Callable[[], Any]:
    f = compiled(name)
    return lambda: f(*tensors)


def argmax(x: torch.Tensor) -> Callable[[], Any]:
    return lambda: torch.argmax(x)
