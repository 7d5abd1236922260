"""`assocgen.load(spec)`: the generated kernels as Python functions.

load builds the spec (generator/pybuild.py: cached) or opens a folder `assocgen build` wrote, and
returns a Module with one Wrapper a public C function, under its name without the prefix and its
full name.  A call reads its arrays (generator/arrays.py: __cuda_array_interface__ or DLPack),
binds and checks them (generator/pymodel.py), allocates the outputs with the input's library
unless out= is given, and calls the C function with ctypes on the library's current stream (or
stream=), with a zeroed workspace kept a device and stream.  No kernel logic is in Python.
"""

import ctypes
import json
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import alloc, cuda, jaxffi, pybuild, pymodel
from .arrays import read
from .cuda import CudaError, NoDeviceError
from .pybuild import BuildError

__all__ = ["load", "Module", "Wrapper", "BuildError", "CudaError", "NoDeviceError"]

C_TYPES: dict[str, Any] = {"size_t": ctypes.c_size_t, "int": ctypes.c_int, "cudaStream_t": ctypes.c_void_p}


def load(
    spec: str | os.PathLike[str],
    *,
    arch: Sequence[int] | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    nvcc: str | None = None,
) -> "Module":
    """The functions of a spec (a path, or the spec's TOML text), built for the GPUs present or
    for `arch` (e.g. [80, 90]) and cached; or of a folder `assocgen build` wrote."""
    if not pybuild.is_text(spec) and (Path(spec) / pybuild.DESCRIPTION).is_file():
        return Module(Path(spec))
    parsed = pybuild.read_spec(spec)
    t = pybuild.target(list(arch) if arch is not None else None, nvcc)
    return Module(pybuild.build_cached(parsed, t, pybuild.cache_dir(cache_dir)))


class Module:
    """A built library's functions: `m.scan_sum_f32` and `m.PREFIX_scan_sum_f32` alike."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.description = json.loads((folder / pybuild.DESCRIPTION).read_text())
        if self.description.get("format") != pymodel.FORMAT:
            raise ValueError(f"{folder}: built by another assocgen (format {self.description.get('format')})")
        self.prefix: str = self.description["prefix"]
        self.library = folder / self.description["library"]
        self.header = folder / self.description["header"]
        self._lib: ctypes.CDLL | None = None
        self._runtime: cuda.Runtime | None = None
        self._lock = threading.Lock()
        # (device, stream): (pointer, bytes, the library's array holding it or None: cudaMalloc's)
        self._work: dict[tuple[int, int], tuple[int, int, Any]] = {}
        types = {c: pymodel.elem(t) for c, t in self.description["types"].items()}
        self.functions: dict[str, Wrapper] = {}
        for f in self.description["functions"]:
            w = Wrapper(self, pymodel.function(f, types))
            self.functions[w.fn.short] = w
            if not hasattr(self, w.fn.short):  # a name of the module's own (release, lib): the full name only
                setattr(self, w.fn.short, w)
            setattr(self, w.fn.name, w)

    def __repr__(self) -> str:
        return f"<assocgen module {self.prefix} from {self.folder}: {', '.join(self.functions)}>"

    def lib(self) -> ctypes.CDLL:
        """The shared library, opened at the first call."""
        if self._lib is None:
            self._lib = ctypes.CDLL(str(self.library))
            self._runtime = cuda.Runtime(self._lib)
        return self._lib

    @property
    def jax(self) -> jaxffi.Functions:
        """The functions for JAX, as XLA FFI custom calls that trace under jax.jit (generator/jaxffi.py):
        imports jax, and builds lib<PREFIX>_jax.so beside the library the first time."""
        return jaxffi.functions(self, pybuild.build_jax)

    def runtime(self) -> cuda.Runtime:
        self.lib()
        assert self._runtime is not None
        return self._runtime

    def workspace(self, device: int, stream: int, nbytes: int, lib: str = "") -> tuple[int, int]:
        """A zeroed workspace of at least `nbytes` for (device, stream): kept, grown when a call
        needs more; the kernels leave it zero.  `lib`: the arrays' library, when the call runs on
        its current stream: its allocator makes the workspace (stream-ordered, and capturable in
        a CUDA graph); else cudaMalloc and cudaMemsetAsync."""
        if nbytes == 0:
            return 0, 0
        with self._lock:
            ptr, size, keep = self._work.get((device, stream), (0, 0, None))
            if size >= nbytes:
                return ptr, size
            rt = self.runtime()
            if ptr and keep is None:  # ours: freed once the stream's calls that use it are done
                rt.synchronize(stream)
                rt.free(ptr)
            self._work.pop((device, stream), None)
            size = max(nbytes, 2 * size)
            keep = alloc.zeros(lib, device, size)
            ptr = alloc.pointer(keep) if keep is not None else rt.malloc_zeroed(size, stream)
            self._work[(device, stream)] = (ptr, size, keep)
            return ptr, size

    def release(self) -> None:
        """Free the workspaces (after the calls on their streams are done); the next call makes one again."""
        with self._lock:
            ours = [(d, s, p) for (d, s), (p, _, keep) in self._work.items() if keep is None]
            self._work.clear()
            if not ours:
                return
            rt = self.runtime()
            before = rt.get_device()
            for device, stream, ptr in ours:
                if device != rt.get_device():
                    rt.set_device(device)
                rt.synchronize(stream)
                rt.free(ptr)
            if rt.get_device() != before:
                rt.set_device(before)


class Wrapper:
    """One public C function as a Python callable: f(*inputs, out=None, init=None, accumulate=False,
    stream=None) returns its output (or a tuple of them)."""

    def __init__(self, module: Module, fn: pymodel.Function):
        self.module, self.fn = module, fn
        self.__name__ = fn.short
        self.__doc__ = f"{fn.signature()}\n\n{fn.name}: {fn.doc}"
        self._c: Any = None
        self._size: Any = None

    def __repr__(self) -> str:
        return f"<assocgen function {self.fn.signature()}>"

    def _functions(self) -> tuple[Any, Any]:
        """The C function and its size function, typed from the description."""
        if self._c is None:
            lib = self.module.lib()
            c = getattr(lib, self.fn.name)
            c.argtypes = [C_TYPES.get(t, ctypes.c_void_p) for t, _ in self.fn.params]
            c.restype = ctypes.c_int
            size = getattr(lib, self.fn.name + "_workspace_bytes")
            size.argtypes = [ctypes.c_size_t] * len(self.fn.work)
            size.restype = ctypes.c_size_t
            self._c, self._size = c, size
        return self._c, self._size

    def bind(
        self, *inputs: object, out: object = None, stream: int | None = None, strict: bool = False
    ) -> pymodel.Binding:
        """Read and check the arrays of a call (no GPU needed): the sizes, pitches, device
        (`strict`: every array's device known, as a call needs)."""
        fn = self.fn
        if len(inputs) != len(fn.inputs):
            raise TypeError(f"{fn.short}() takes {len(fn.inputs)} arrays ({fn.signature()}), got {len(inputs)}")
        b = pymodel.Binding(fn, strict=strict)
        for ap, obj in zip(fn.inputs, inputs, strict=True):
            b.bind(ap, read(obj, ap.label, stream))
        for ap, obj in zip(fn.outputs, _outs(fn, out), strict=True):
            if obj is not None:
                b.bind(ap, read(obj, ap.label, stream))
        return b

    def __call__(
        self,
        *inputs: object,
        out: object = None,
        init: object = None,
        accumulate: bool = False,
        stream: object = None,
    ) -> Any:
        cuda.require_device(self.fn.name)  # one clear error without a GPU, before anything is read
        _keywords(self.fn, out, init, accumulate)
        libs = [alloc.library_of(x) for x in (*inputs, *_given(out))]
        current = stream is None  # on the library's current stream: its allocator may make the workspace
        stream = alloc.current_stream(libs, _first_device(inputs)) if stream is None else stream_handle(stream)
        b = self.bind(*inputs, out=out, stream=stream, strict=True)
        for ap in self.fn.outputs:
            if ap.name not in b.arrays:
                b.bind(ap, read(alloc.empty(libs, b, ap), ap.label))
        self._launch(b, stream, init, accumulate, alloc.stream_owner(libs, stream, b.device, current))
        results = [b.arrays[ap.name].obj for ap in self.fn.outputs]
        return results[0] if len(results) == 1 else tuple(results)

    def _launch(self, b: pymodel.Binding, stream: int, init: object, accumulate: bool, lib: str) -> None:
        """On the arrays' device: the producers' streams waited for, the workspace, the C call."""
        c, size = self._functions()
        rt = self.module.runtime()
        before = rt.get_device()
        device = before if b.device is None else b.device  # None: every array empty (NULL)
        if before != device:
            rt.set_device(device)
        try:
            for a in b.arrays.values():  # CAI v3: the stream an array's data is valid on, where it is another
                if a.stream is not None and not alloc.same_stream(a.stream, stream):
                    rt.wait(stream, a.stream)
            nbytes = size(*(b.sizes[w] for w in self.fn.work))
            work, work_bytes = self.module.workspace(device, stream, nbytes, lib)
            rt.check(self.fn.name, c(*self._args(b, work, work_bytes, stream, init, accumulate)))
        finally:
            if before != device:
                rt.set_device(before)

    def _args(self, b: pymodel.Binding, work: int, work_bytes: int, stream: int, init: object, flag: bool) -> list[Any]:
        """The C arguments in order."""
        values: dict[str, Any] = dict(b.sizes, d_work=work or None, work_bytes=work_bytes, stream=stream or None)
        values.update({name: a.ptr or None for name, a in b.arrays.items()})
        values.update({f: int(flag) for f in self.fn.flags})
        values.update({h: host_value(self.fn, h, e, init) for h, e in self.fn.host.items()})
        return [values[name] for _, name in self.fn.params]


def stream_handle(stream: object) -> int:
    """A stream as its cudaStream_t: an integer, or a torch.cuda.Stream (cuda_stream) or a cupy
    Stream (ptr)."""
    for attr in ("cuda_stream", "ptr"):
        if hasattr(stream, attr):
            stream = getattr(stream, attr)
    if not isinstance(stream, int) or stream < 0:
        raise TypeError(f"stream: expected a stream handle (an int, torch or cupy stream), got {stream!r}")
    return stream


def _keywords(fn: pymodel.Function, out: object, init: object, accumulate: bool) -> None:
    """init= and accumulate= only where the function has them; accumulate reads out=."""
    if init is not None and not fn.host:
        raise TypeError(f"{fn.short}: takes no init= ({fn.signature()})")
    if accumulate and not fn.flags:
        raise TypeError(f"{fn.short}: takes no accumulate= ({fn.signature()})")
    if accumulate and out is None:
        raise TypeError(f"{fn.short}: accumulate=True folds into {fn.outputs[0].label}: pass it as out=")


def _outs(fn: pymodel.Function, out: object) -> list[object]:
    """out= as one array a function output (None where not given)."""
    n = len(fn.outputs)
    if out is None:
        return [None] * n
    if isinstance(out, (tuple, list)):
        if len(out) != n:
            raise TypeError(
                f"{fn.short}: out= takes {n} arrays ({', '.join(a.label for a in fn.outputs)}), got {len(out)}"
            )
        return list(out)
    if n != 1:
        raise TypeError(f"{fn.short}: out= takes a tuple of {n} arrays ({', '.join(a.label for a in fn.outputs)})")
    return [out]


def _given(out: object) -> list[object]:
    return [] if out is None else list(out) if isinstance(out, (tuple, list)) else [out]


def _first_device(inputs: Sequence[object]) -> int | None:
    for x in inputs:
        dev = getattr(x, "device", None)
        index = getattr(dev, "index", getattr(dev, "id", None))
        if isinstance(index, int):
            return index
    return None


def host_value(fn: pymodel.Function, name: str, e: pymodel.Elem, value: object) -> Any:
    """A host pointer's value (an exclusive scan's init): None (the identity), a number for a
    numeric type, or bytes of the type's size."""
    if value is None:
        return None
    if isinstance(value, (bytes, bytearray, memoryview)):
        raw = bytes(value)
        if len(raw) != e.size:
            raise ValueError(f"{name}: {len(raw)} bytes for {e.c}, which has {e.size}")
        return ctypes.cast(ctypes.create_string_buffer(raw, e.size), ctypes.c_void_p)
    if e.kind == "struct":
        raise TypeError(f"{name}: a {e.c} is given as {e.size} bytes (bytes, or an array's .tobytes())")
    ctype = NUMERIC[(e.kind, e.size)]
    if not isinstance(value, (int, float)):
        raise TypeError(f"{name}: expected a number for {e.c}, got {type(value).__name__}")
    return ctypes.cast(ctypes.pointer(ctype(value)), ctypes.c_void_p)


NUMERIC: dict[tuple[str, int], Any] = {
    ("int", 1): ctypes.c_int8,
    ("int", 2): ctypes.c_int16,
    ("int", 4): ctypes.c_int32,
    ("int", 8): ctypes.c_int64,
    ("uint", 1): ctypes.c_uint8,
    ("uint", 2): ctypes.c_uint16,
    ("uint", 4): ctypes.c_uint32,
    ("uint", 8): ctypes.c_uint64,
    ("float", 4): ctypes.c_float,
    ("float", 8): ctypes.c_double,
}
