"""What the Python wrappers ask of an array's own library, imported only when its arrays are passed:
its current stream, and new arrays for the outputs (torch and cupy; JAX arrays cannot be written
in place: the plain functions take JAX outputs by out=, and `module.jax` has functions for
jax.jit, generator/jaxffi.py).
"""

import importlib
import sys
from collections.abc import Callable, Sequence
from typing import Any

from .arrays import library
from .pymodel import ArrayParam, Binding, element_dims

ALLOCATES = ("torch", "cupy")
LEGACY_STREAMS = (0, 1)  # 0: the legacy default stream; CAI and DLPack spell it 1


def library_of(obj: object) -> str:
    return library(obj)


def module(lib: str) -> Any:
    """An array library, imported now (never before its arrays are passed)."""
    found = sys.modules.get(lib)
    return found if found is not None else importlib.import_module(lib)


def current_stream(libs: Sequence[str], device: int | None) -> int:
    """The current stream of the first array's library on `device` (0, the legacy default
    stream, for a library that has none to ask)."""
    lib = next((x for x in libs if x), "")
    if lib == "torch":
        torch = module("torch")
        raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)  # what torch.compile's code calls
        if raw is not None:
            return int(raw(torch.cuda.current_device() if device is None else device))
        return int(torch.cuda.current_stream(device).cuda_stream)
    if lib == "cupy":
        cupy = module("cupy")
        if device is None:
            return int(cupy.cuda.get_current_stream().ptr)
        try:
            return int(cupy.cuda.get_current_stream(device).ptr)
        except TypeError:  # a CuPy whose get_current_stream takes no device
            with cupy.cuda.Device(device):
                return int(cupy.cuda.get_current_stream().ptr)
    return 0


def current_stream_of(lib: str, device: int | None) -> int:
    """current_stream([lib], device), with the library's functions looked up once (a call's fast path)."""
    found = _QUERIES.get(lib)
    if found is None or sys.modules.get(lib) is not found[0]:
        mod = module(lib)
        found = _QUERIES[lib] = (mod, _query(lib, mod))
    return found[1](device)


def _query(lib: str, mod: Any) -> Callable[[int | None], int]:
    """current_stream([lib], device) as a function of the device, made of `mod`'s functions."""
    raw = getattr(getattr(mod, "_C", None), "_cuda_getCurrentRawStream", None) if lib == "torch" else None
    if raw is not None:
        return lambda device: int(raw(mod.cuda.current_device() if device is None else device))
    if lib != "cupy":
        return lambda device: current_stream([lib], device)
    current = mod.cuda.get_current_stream

    def cupy_stream(device: int | None) -> int:
        if device is None:
            return int(current().ptr)
        try:
            return int(current(device).ptr)
        except TypeError:  # a CuPy whose get_current_stream takes no device
            return current_stream(["cupy"], device)

    return cupy_stream


_QUERIES: dict[str, tuple[Any, Callable[[int | None], int]]] = {}  # library: (its module, the query)


def same_stream(a: int, b: int) -> bool:
    return a == b or (a in LEGACY_STREAMS and b in LEGACY_STREAMS)


TORCH_DTYPES = {
    "f2": "float16",
    "f4": "float32",
    "f8": "float64",
    "i1": "int8",
    "i2": "int16",
    "i4": "int32",
    "i8": "int64",
    "u1": "uint8",
    "u2": "uint16",
    "u4": "uint32",
    "u8": "uint64",
    "b1": "bool",
}


def out_dtype(b: Binding, ap: ArrayParam) -> tuple[str, tuple[int, ...]]:
    """An output's element as (dtype like "f4", trailing dimensions): a number's own; a user type's
    as the input of the same type holds it, else bytes."""
    e = ap.elem
    if e.kind != "struct":
        return {"int": "i", "uint": "u", "float": "f"}[e.kind] + str(e.size), ()
    for src in b.fn.arrays:
        a = b.arrays.get(src.name)
        if a is not None and src.elem == e and not src.writes:
            k = element_dims(src, a)
            return a.dtype, a.shape[len(a.shape) - k :]
    return "u1", (e.size,)


def empty(libs: Sequence[str], b: Binding, ap: ArrayParam) -> object:
    """A new output array for `ap`, from the first input's library, on the call's device."""
    lib = next((x for x in libs if x), "")
    dtype, trailing = out_dtype(b, ap)
    return new(lib, ap, b.shape_of(ap) + trailing, dtype, b.device)


def new(lib: str, ap: ArrayParam, shape: tuple[int, ...], dtype: str, device: int | None) -> object:
    """An uninitialized array of `lib` for output `ap`: `shape` of `dtype` ("f4", "u1") on `device`."""
    if lib == "torch":
        torch = module("torch")
        return torch.empty(shape, dtype=getattr(torch, TORCH_DTYPES[dtype]), device=_torch_device(torch, device))
    if lib == "cupy":
        cupy = module("cupy")
        with cupy.cuda.Device(device):
            return cupy.empty(shape, dtype="V" + str(ap.elem.size) if dtype[0] == "V" else "<" + dtype)
    why = (
        "JAX arrays cannot be written in place" if lib == "jax" else f"assocgen allocates with {' or '.join(ALLOCATES)}"
    )
    raise TypeError(f"{ap.label}: {why}: pass out= a writable CUDA array")


_TORCH_DEVICES: dict[int | None, Any] = {}


def _torch_device(torch: Any, device: int | None) -> Any:
    """torch.device("cuda", device), made once a device."""
    found = _TORCH_DEVICES.get(device)
    if found is None:
        found = _TORCH_DEVICES[device] = torch.device("cuda") if device is None else torch.device("cuda", device)
    return found


def stream_owner(libs: Sequence[str], stream: int, device: int | None, current: bool) -> str:
    """The arrays' library where `stream` is its current stream (`current`: known to be), so its
    allocator may make the workspace, ordered on that stream; else ""."""
    lib = next((x for x in libs if x), "")
    if lib not in ALLOCATES or device is None:
        return ""
    return lib if current or same_stream(current_stream([lib], device), stream) else ""


def zeros(lib: str, device: int, nbytes: int) -> Any:
    """`nbytes` zeroed bytes from the library's allocator on its current stream (None: no library)."""
    if lib == "torch":
        torch = module("torch")
        return torch.zeros(nbytes, dtype=torch.uint8, device=f"cuda:{device}")
    if lib == "cupy":
        cupy = module("cupy")
        with cupy.cuda.Device(device):
            return cupy.zeros(nbytes, dtype="u1")
    return None


def pointer(a: Any) -> int:
    """The device address of a torch tensor or cupy array."""
    return int(a.data_ptr()) if hasattr(a, "data_ptr") else int(a.data.ptr)
