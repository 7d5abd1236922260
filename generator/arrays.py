"""GPU arrays of any library, read through the two protocols they share: `__cuda_array_interface__`
(versions 2 and 3: a dict) and `__dlpack__` with `__dlpack_device__` (a PyCapsule holding a
DLManagedTensor, read with ctypes).  No array library is imported here.

An array reads as its pointer, shape, strides in bytes, element kind and size, device and library;
`read(obj, name, stream)` raises TypeError or ValueError naming the argument where it cannot be
read as a CUDA array.  An empty array reads with the strides of a packed one (libraries give
an empty array's strides as they like: NumPy 2 gives 0).  A torch tensor and (on CuPy's current
stream) a CuPy array are read from their own attributes, without building the interface's dict
and without asking the driver the device of their pointer: their library says it.
"""

import ctypes
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any

from . import cuda

# DLPack's device types and type codes (dlpack.h)
DL_CPU, DL_CUDA, DL_CUDA_HOST, DL_CUDA_MANAGED = 1, 2, 3, 13
DL_KINDS = {0: "i", 1: "u", 2: "f", 4: "V", 5: "c", 6: "b"}  # kDLInt, kDLUInt, kDLFloat, kDLOpaqueHandle, ...
KINDS = ("i", "u", "f", "b", "c", "V")


@dataclass(slots=True)
class Array:
    """One array as the wrappers check it (strides in bytes; device None where unknown)."""

    name: str  # the argument's name, for messages
    ptr: int
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    kind: str  # numpy's kind letters: i, u, f, b, c, V (void: a structured dtype)
    itemsize: int
    device: int | None
    lib: str  # the array's library: torch, cupy, jax, numba, or "" (unknown)
    readonly: bool = False
    stream: int | None = None  # CAI v3: the stream its data is valid on (None: no sync needed)
    obj: Any = None
    keep: Any = None  # what must stay alive while the pointer is used (a DLPack capsule)

    @property
    def dtype(self) -> str:
        return f"{self.kind}{self.itemsize}"

    @property
    def size(self) -> int:
        count = 1
        for d in self.shape:
            count *= d
        return count


def library(obj: object) -> str:
    """The library an array comes from, by its type's module: torch, cupy, jax, numba or ""."""
    return _library(type(obj).__module__)


@cache
def _library(module_name: str) -> str:
    module = module_name.split(".")[0]
    return {"jaxlib": "jax"}.get(module, module if module in ("torch", "cupy", "jax", "numba") else "")


def read(obj: object, name: str, stream: int | None = None, current: bool = False) -> Array:
    """Read `obj` as a CUDA array: a torch tensor by its attributes, a CuPy array by its own where
    the call runs on CuPy's `current` stream; else its CAI if it has one, else DLPack (asked to
    make the data ready on `stream`, the stream the call will run on; None: the producer's
    default)."""
    kind = type(obj)
    reader = _READERS.get(kind)
    if reader is None:
        reader = _READERS[kind] = _reader(kind)
    return reader(obj, name, stream, current)


Reader = Callable[[Any, str, "int | None", bool], Array]


def _reader(kind: type) -> Reader:
    """How arrays of a type are read (kept a type: the type's library does not change)."""
    if issubclass(kind, Array):
        return lambda obj, name, stream, current: obj
    lib = _library(kind.__module__)
    torch = sys.modules.get("torch")
    if lib == "torch" and torch is not None and issubclass(kind, torch.Tensor):
        return _from_torch
    cupy = sys.modules.get("cupy")
    if lib == "cupy" and cupy is not None and issubclass(kind, cupy.ndarray):
        return _from_cupy
    return _from_protocols


def _from_protocols(obj: object, name: str, stream: int | None, current: bool = False) -> Array:
    """An array through __cuda_array_interface__, else DLPack."""
    try:
        cai = getattr(obj, "__cuda_array_interface__", None)
    except Exception:  # a library raises where the array is not on a GPU (torch: a CPU tensor)
        cai = None
    if isinstance(cai, dict):
        return _from_cai(obj, name, cai)
    if hasattr(obj, "__dlpack__") and hasattr(obj, "__dlpack_device__"):
        return _from_dlpack(obj, name, stream)
    raise TypeError(f"{name}: expected a CUDA array (__cuda_array_interface__ or __dlpack__), got {type(obj).__name__}")


_READERS: dict[type, Reader] = {}


# ---- torch and CuPy arrays, by their own attributes ----

# torch dtypes by name: (kind, itemsize); bfloat16 and others no builtin type is: bytes ("V")
TORCH_KINDS = {
    "float16": ("f", 2),
    "float32": ("f", 4),
    "float64": ("f", 8),
    "int8": ("i", 1),
    "int16": ("i", 2),
    "int32": ("i", 4),
    "int64": ("i", 8),
    "uint8": ("u", 1),
    "uint16": ("u", 2),
    "uint32": ("u", 4),
    "uint64": ("u", 8),
    "bool": ("b", 1),
    "complex64": ("c", 8),
    "complex128": ("c", 16),
}


@cache
def _torch_kind(dtype: Any) -> tuple[str, int]:
    name = str(dtype).removeprefix("torch.")
    return TORCH_KINDS.get(name) or ("V", int(dtype.itemsize))


def _from_torch(t: Any, name: str, stream: int | None = None, current: bool = False) -> Array:
    """A torch tensor: its data_ptr, shape, strides (elements: made bytes), dtype and device."""
    dev = t.device
    if dev.type != "cuda":
        where = "the CPU" if dev.type == "cpu" else f"torch device {dev.type}"
        raise ValueError(f"{name}: the array is on {where}; the kernels need a CUDA array")
    kind, size = _torch_kind(t.dtype)
    shape = tuple(t.shape)
    strides = tuple([s * size for s in t.stride()]) if 0 not in shape else contiguous(shape, size)
    return Array(name, t.data_ptr(), shape, strides, kind, size, dev.index or 0, "torch", False, None, t)


def _from_cupy(x: Any, name: str, stream: int | None = None, current: bool = False) -> Array:
    """A CuPy array on CuPy's current stream (the call's: its CAI would name that stream, so there
    is nothing to wait for); on another stream, through its CAI (version 3: the stream named)."""
    if not current:
        return _from_protocols(x, name, stream)
    dtype = x.dtype
    kind, size = dtype.kind, dtype.itemsize
    if kind not in KINDS or dtype.byteorder == ">":
        raise TypeError(f"{name}: element type {dtype.str!r} is not a little-endian number or record")
    shape = x.shape
    strides = x.strides if 0 not in shape else contiguous(shape, size)
    return Array(name, x.data.ptr, shape, strides, kind, size, x.device.id, "cupy", False, None, x)


# ---- __cuda_array_interface__ ----

_TYPESTR = re.compile(r"^([<>|=])([iufbcV])(\d+)$")


def _from_cai(obj: object, name: str, cai: dict[str, Any]) -> Array:
    version = cai.get("version", 0)
    if version < 2 or version > 3:
        raise TypeError(f"{name}: __cuda_array_interface__ version {cai.get('version')} (2 and 3 are read)")
    if cai.get("mask") is not None:
        raise ValueError(f"{name}: a masked array (__cuda_array_interface__ mask) is not accepted")
    element = _typestr(str(cai.get("typestr", "")))
    if element is None:
        raise TypeError(f"{name}: element type {cai.get('typestr')!r} is not a little-endian number or record")
    kind, itemsize = element
    shape = tuple([int(d) for d in cai["shape"]])
    strides = cai.get("strides")
    if strides is None or 0 in shape:  # an empty array's strides: those of a packed one (NumPy says 0)
        strides = contiguous(shape, itemsize)
    else:
        strides = tuple([int(s) for s in strides])
    ptr, readonly = cai["data"]
    ptr = int(ptr or 0)
    stream = cai.get("stream")
    stream = None if stream is None else int(stream)
    lib = library(obj)
    return Array(name, ptr, shape, strides, kind, itemsize, device_of(obj, ptr, lib), lib, bool(readonly), stream, obj)


@cache
def _typestr(typestr: str) -> tuple[str, int] | None:
    """(kind, itemsize) of a CAI typestr such as `<f4`; None for big-endian or unknown ones."""
    m = _TYPESTR.match(typestr)
    return None if not m or m.group(1) == ">" else (m.group(2), int(m.group(3)))


@lru_cache(maxsize=1024)
def contiguous(shape: tuple[int, ...], itemsize: int) -> tuple[int, ...]:
    """C-order strides in bytes."""
    strides, step = [], itemsize
    for d in reversed(shape):
        strides.append(step)
        step *= max(d, 1)
    return tuple(reversed(strides))


def device_of(obj: object, ptr: int, lib: str | None = None) -> int | None:
    """The device an array's memory is on: its library's own word where it says (torch, cupy),
    else the driver's for the pointer (None where neither knows, as without a GPU)."""
    if lib is None:
        lib = library(obj)
    if lib not in ("torch", "cupy"):
        return cuda.pointer_device(ptr) if ptr else None
    dev = getattr(obj, "device", None)
    if lib == "torch" and getattr(dev, "type", "") == "cuda":
        return int(dev.index or 0)  # type: ignore[union-attr]
    if lib == "cupy" and hasattr(dev, "id"):
        return int(dev.id)  # type: ignore[union-attr]
    return cuda.pointer_device(ptr) if ptr else None


# ---- DLPack ----


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def _from_dlpack(obj: Any, name: str, stream: int | None) -> Array:
    dev_type, dev_id = obj.__dlpack_device__()
    if int(dev_type) not in (DL_CUDA, DL_CUDA_MANAGED):
        where = "the CPU" if int(dev_type) in (DL_CPU, DL_CUDA_HOST) else f"DLPack device type {int(dev_type)}"
        raise ValueError(f"{name}: the array is on {where}; the kernels need a CUDA array")
    # DLPack's stream numbers: 1 is the legacy default stream (0 is not allowed for CUDA)
    capsule = obj.__dlpack__() if stream is None else obj.__dlpack__(stream=stream or 1)
    t = DLManagedTensor.from_address(_capsule_pointer(capsule, b"dltensor")).dl_tensor
    return _dl_array(obj, name, capsule, t)


def _dl_array(obj: object, name: str, capsule: object, t: DLTensor) -> Array:
    """An Array of a DLTensor (`capsule` owns it: the producer's deleter runs when it is dropped,
    as for any capsule never consumed)."""
    code, bits, lanes = t.dtype.code, t.dtype.bits, t.dtype.lanes
    if lanes != 1 or bits % 8 or code not in DL_KINDS:
        raise TypeError(f"{name}: DLPack type (code {code}, {bits} bits, {lanes} lanes) is not a plain number")
    itemsize = bits // 8
    shape = tuple(int(t.shape[k]) for k in range(t.ndim))
    if t.strides and 0 not in shape:
        strides = tuple(int(t.strides[k]) * itemsize for k in range(t.ndim))
    else:
        strides = contiguous(shape, itemsize)
    ptr = (t.data or 0) + t.byte_offset
    kind = DL_KINDS[code]
    return Array(
        name, ptr, shape, strides, kind, itemsize, int(t.device.device_id), library(obj), False, None, obj, capsule
    )


# ---- the quick readers: what a repeated call reads of an array ----

# A quick read: (pointer, key, device, stream).  The key holds what the checks of shapes, strides
# and element types read (the reader's tag first: the same values mean the same to one reader
# alone), so a call whose keys were all seen before checks only the pointers and devices.
Quick = tuple[int, tuple[Any, ...], "int | None", "int | None"]
QuickReader = Callable[[Any, bool], "Quick | None"]


def quick(kind: type) -> tuple[str, QuickReader]:
    """How a call reads arrays of a type quickly: (library, reader).  The reader gives None where
    the array is for `read` (the full path) to read, or to refuse with its error: a reader raises
    nothing.  The device a torch or CuPy reader (key tag "torch", "cupy") gives is the array's own
    `.device`'s.  Kept a type."""
    found = _QUICK.get(kind)
    if found is None:
        found = _QUICK[kind] = _quick(kind)
    return found


def _quick(kind: type) -> tuple[str, QuickReader]:
    lib = _library(kind.__module__)
    reader = _reader(kind)
    if reader is _from_torch:
        flags = hasattr(kind, "is_cuda") and hasattr(kind, "get_device")  # torch's: no device object made
        return lib, _quick_torch_flags if flags else _quick_torch
    if reader is _from_cupy:  # x.data.device_id is x.device.id, without a Device made (CuPy's MemoryPointer)
        memory = getattr(getattr(sys.modules.get("cupy"), "cuda", None), "memory", None)
        return lib, _quick_cupy_ids if hasattr(getattr(memory, "MemoryPointer", None), "device_id") else _quick_cupy
    if reader is _from_protocols and lib not in ("torch", "cupy"):
        return lib, _quick_cai
    return lib, _quick_none


_QUICK: dict[type, tuple[str, QuickReader]] = {}


def _quick_none(obj: Any, current: bool) -> "Quick | None":
    return None  # arrays of the type: read by `read` alone


def _quick_torch(t: Any, current: bool) -> "Quick | None":
    try:
        dev = t.device
        if dev.type != "cuda":
            return None
        return t.data_ptr(), ("torch", t.dtype, t.shape, t.stride()), dev.index or 0, None
    except Exception:  # (a sparse tensor has no strides): `read` raises its error
        return None


def _quick_torch_flags(t: Any, current: bool) -> "Quick | None":
    try:
        if not t.is_cuda:
            return None
        return t.data_ptr(), ("torch", t.dtype, t.shape, t.stride()), t.get_device(), None
    except Exception:
        return None


def _quick_cupy(x: Any, current: bool) -> "Quick | None":
    """On CuPy's current stream by its attributes; else by its CAI (the stream it names)."""
    if current:
        try:
            return x.data.ptr, ("cupy", x.dtype, x.shape, x.strides), x.device.id, None
        except Exception:
            return None
    got = _cai_parts(x)
    if got is None:
        return None
    return got[0], got[1], device_of(x, got[0], "cupy"), got[2]


def _quick_cupy_ids(x: Any, current: bool) -> "Quick | None":
    if current:
        try:
            data = x.data
            return data.ptr, ("cupy", x.dtype, x.shape, x.strides), data.device_id, None
        except Exception:
            return None
    return _quick_cupy(x, current)


def _quick_cai(obj: Any, current: bool) -> "Quick | None":
    got = _cai_parts(obj)
    if got is None:
        return None
    ptr = got[0]
    return ptr, got[1], cuda.pointer_device(ptr) if ptr else None, got[2]


def _cai_parts(obj: Any) -> tuple[int, tuple[Any, ...], int | None] | None:
    """An array's CAI as (pointer, key, stream); None where `_from_cai` is to read it."""
    try:
        cai = obj.__cuda_array_interface__
        if not isinstance(cai, dict) or cai.get("version") not in (2, 3) or cai.get("mask") is not None:
            return None
        ptr, readonly = cai["data"]
        key = ("cai", cai["typestr"], cai["shape"], cai.get("strides"), bool(readonly))
        stream = cai.get("stream")
        return int(ptr or 0), key, None if stream is None else int(stream)
    except Exception:  # not a CAI dict (torch's CPU tensors raise): read the slow way
        return None
