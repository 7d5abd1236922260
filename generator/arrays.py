"""GPU arrays of any library, read through the two protocols they share: `__cuda_array_interface__`
(versions 2 and 3: a dict) and `__dlpack__` with `__dlpack_device__` (a PyCapsule holding a
DLManagedTensor, read with ctypes).  No array library is imported here.

An array reads as its pointer, shape, strides in bytes, element kind and size, device and library;
`read(obj, name, stream)` raises TypeError or ValueError naming the argument where it cannot be
read as a CUDA array.
"""

import ctypes
import re
from dataclasses import dataclass
from functools import cache
from typing import Any

from . import cuda

# DLPack's device types and type codes (dlpack.h)
DL_CPU, DL_CUDA, DL_CUDA_HOST, DL_CUDA_MANAGED = 1, 2, 3, 13
DL_KINDS = {0: "i", 1: "u", 2: "f", 4: "V", 5: "c", 6: "b"}  # kDLInt, kDLUInt, kDLFloat, kDLOpaqueHandle, ...
KINDS = ("i", "u", "f", "b", "c", "V")


@dataclass(frozen=True)
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


def read(obj: object, name: str, stream: int | None = None) -> Array:
    """Read `obj` as a CUDA array: its CAI if it has one, else DLPack (asked to make the data ready
    on `stream`, the stream the call will run on; None: the producer's default)."""
    if isinstance(obj, Array):
        return obj
    try:
        cai = getattr(obj, "__cuda_array_interface__", None)
    except Exception:  # a library raises where the array is not on a GPU (torch: a CPU tensor)
        cai = None
    if isinstance(cai, dict):
        return _from_cai(obj, name, cai)
    if hasattr(obj, "__dlpack__") and hasattr(obj, "__dlpack_device__"):
        return _from_dlpack(obj, name, stream)
    raise TypeError(f"{name}: expected a CUDA array (__cuda_array_interface__ or __dlpack__), got {type(obj).__name__}")


# ---- __cuda_array_interface__ ----

_TYPESTR = re.compile(r"^([<>|=])([iufbcV])(\d+)$")


def _from_cai(obj: object, name: str, cai: dict[str, Any]) -> Array:
    if cai.get("version", 0) < 2 or cai.get("version", 0) > 3:
        raise TypeError(f"{name}: __cuda_array_interface__ version {cai.get('version')} (2 and 3 are read)")
    if cai.get("mask") is not None:
        raise ValueError(f"{name}: a masked array (__cuda_array_interface__ mask) is not accepted")
    element = _typestr(str(cai.get("typestr", "")))
    if element is None:
        raise TypeError(f"{name}: element type {cai.get('typestr')!r} is not a little-endian number or record")
    kind, itemsize = element
    shape = tuple(int(d) for d in cai["shape"])
    strides = cai.get("strides")
    strides = contiguous(shape, itemsize) if strides is None else tuple(int(s) for s in strides)
    ptr, readonly = cai["data"]
    stream = cai.get("stream")
    return Array(
        name,
        int(ptr or 0),
        shape,
        strides,
        kind,
        itemsize,
        device_of(obj, int(ptr or 0)),
        library(obj),
        bool(readonly),
        None if stream is None else int(stream),
        obj,
    )


@cache
def _typestr(typestr: str) -> tuple[str, int] | None:
    """(kind, itemsize) of a CAI typestr such as `<f4`; None for big-endian or unknown ones."""
    m = _TYPESTR.match(typestr)
    return None if not m or m.group(1) == ">" else (m.group(2), int(m.group(3)))


def contiguous(shape: tuple[int, ...], itemsize: int) -> tuple[int, ...]:
    """C-order strides in bytes."""
    strides, step = [], itemsize
    for d in reversed(shape):
        strides.append(step)
        step *= max(d, 1)
    return tuple(reversed(strides))


def device_of(obj: object, ptr: int) -> int | None:
    """The device an array's memory is on: its library's own word where it says (torch, cupy),
    else the driver's for the pointer (None where neither knows, as without a GPU)."""
    dev = getattr(obj, "device", None)
    lib = library(obj)
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
    if t.strides:
        strides = tuple(int(t.strides[k]) * itemsize for k in range(t.ndim))
    else:
        strides = contiguous(shape, itemsize)
    ptr = (t.data or 0) + t.byte_offset
    kind = DL_KINDS[code]
    return Array(
        name, ptr, shape, strides, kind, itemsize, int(t.device.device_id), library(obj), False, None, obj, capsule
    )
