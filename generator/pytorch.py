"""A loaded module's functions as PyTorch custom operators (torch.library), so they trace under
torch.compile: each gets a schema, a CUDA implementation (the Wrapper: torch's current stream, the
workspace from torch's allocator) and a fake implementation that gives the outputs' shapes and
dtypes from the inputs' alone (pymodel's binding, on the fake tensors' shapes and strides).

`register(module)` imports torch; nothing else in assocgen does.  Functional forms only: outputs
are allocated (no out=, no accumulate=); an init of a user type is left to the plain wrapper.

Run on the H100 by tests/gpu/python/run_arrays.py (torch 2.11): under torch.compile, with
mode="reduce-overhead", and inside a captured CUDA graph.
"""

from pathlib import Path
from typing import Any

from . import alloc, pymodel
from .arrays import Array
from .pyload import Module, Wrapper

_REGISTERED: dict[str, tuple[Path, dict[str, Any]]] = {}  # namespace: (the build's folder, its ops)
SCHEMA_INIT = {"float": "float? init=None", "int": "int? init=None", "uint": "int? init=None"}


def register(module: Module, namespace: str | None = None) -> dict[str, Any]:
    """Define torch.ops.<namespace>.<function> for every function of `module` (namespace:
    assocgen_<prefix>); returns the ops by short name."""
    torch = alloc.module("torch")
    ns = namespace or f"assocgen_{module.prefix}"
    if ns in _REGISTERED:  # torch.library defines a name once a process
        folder, ops = _REGISTERED[ns]
        if folder != module.folder:
            raise ValueError(f"torch.ops.{ns} already holds {folder}'s functions: pass another namespace=")
        return ops
    ops = {}
    for w in module.functions.values():
        qualname = f"{ns}::{w.fn.short}"
        torch.library.define(qualname, schema(w.fn))
        torch.library.impl(qualname, "cuda", _cuda(w))
        torch.library.register_fake(qualname, _fake(w))
        ops[w.fn.short] = getattr(getattr(torch.ops, ns), w.fn.short)
    _REGISTERED[ns] = (module.folder, ops)
    return ops


def _arg(ap: pymodel.ArrayParam) -> str:
    return "input" if ap.label == "in" else ap.label  # `in` is a Python keyword


def schema(fn: pymodel.Function) -> str:
    """The operator's schema, e.g. `(Tensor input, float? init=None) -> Tensor`."""
    args = [f"Tensor {_arg(ap)}" for ap in fn.inputs]
    init = fn.host.get("init")
    if init is not None and init.kind in SCHEMA_INIT:
        args.append(SCHEMA_INIT[init.kind])
    outs = ["Tensor"] * len(fn.outputs)
    return f"({', '.join(args)}) -> {outs[0] if len(outs) == 1 else '(' + ', '.join(outs) + ')'}"


def _split(w: Wrapper, args: tuple[Any, ...]) -> tuple[tuple[Any, ...], Any]:
    """The dispatcher's positional arguments: the tensors, then init where the schema has it."""
    n = len(w.fn.inputs)
    return args[:n], args[n] if len(args) > n else None


def _cuda(w: Wrapper) -> Any:
    def impl(*args: Any) -> Any:
        tensors, init = _split(w, args)
        return w(*tensors, init=init)

    return impl


def _fake(w: Wrapper) -> Any:
    def fake(*args: Any) -> Any:
        tensors, _ = _split(w, args)
        torch = alloc.module("torch")
        b = pymodel.Binding(w.fn)
        for ap, t in zip(w.fn.inputs, tensors, strict=True):
            b.bind(ap, _array(t, ap.label))
        device = tensors[0].device
        outs = []
        for ap in w.fn.outputs:
            dtype, trailing = alloc.out_dtype(b, ap)
            kind = getattr(torch, alloc.TORCH_DTYPES[dtype])
            outs.append(torch.empty(b.shape_of(ap) + trailing, dtype=kind, device=device))
        return outs[0] if len(outs) == 1 else tuple(outs)

    return fake


def _array(t: Any, name: str) -> Array:
    """A (fake) tensor's shape, strides and dtype as an Array; no address (never launched)."""
    torch = alloc.module("torch")
    size = t.element_size()
    if t.dtype == torch.bool:
        kind = "b"
    elif t.dtype.is_floating_point:
        kind = "f"
    elif t.dtype.is_complex:
        kind = "c"
    else:
        kind = "i" if t.dtype.is_signed else "u"
    strides = tuple(s * size for s in t.stride())
    return Array(name, 0, tuple(t.shape), strides, kind, size, None, "torch")
