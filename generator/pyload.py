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
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import alloc, arrays, cuda, jaxffi, pybuild, pymodel
from .arrays import Array, read
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
        self._device_ok = False  # a call found a GPU (checked once: GPUs do not go away)
        self._one_device = True  # one GPU (or none seen yet): no device to switch to
        # (device, stream): (pointer, bytes, the library's array holding it or None: cudaMalloc's)
        self._work: dict[tuple[int, int], tuple[int, int, Any]] = {}
        # workspaces outgrown: kept until release(), since a call on another thread may have read
        # one's pointer just before it was replaced (at most the size of the one that replaced it)
        self._retired: list[tuple[int, int, int, Any]] = []  # (device, stream, pointer, holder)
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
        """The runtime calls of the library's glue (the library opened at the first)."""
        if self._runtime is None:
            self.lib()
        assert self._runtime is not None
        return self._runtime

    def device_for(self, device: int | None) -> int:
        """The device a call runs on: its arrays' (None: all empty: the current one)."""
        if device is not None:
            return device
        return 0 if self._one_device else self.runtime().get_device()

    def workspace(self, device: int, stream: int, nbytes: int, lib: str = "", current: bool = False) -> tuple[int, int]:
        """A zeroed workspace of at least `nbytes` for (device, stream): kept, grown when a call
        needs more; the kernels leave it zero.  `lib`: the arrays' library; where the call runs
        on its current stream (`current`: known to), its allocator makes the workspace
        (stream-ordered, and capturable in a CUDA graph); else cudaMalloc and cudaMemsetAsync."""
        if nbytes == 0:
            return 0, 0
        kept = self._work.get((device, stream))
        if kept is not None and kept[1] >= nbytes:
            return kept[0], kept[1]
        lib = alloc.stream_owner([lib], stream, device, current)
        with self._lock:
            ptr, size, keep = self._work.get((device, stream), (0, 0, None))
            if size >= nbytes:
                return ptr, size
            if ptr:  # outgrown: freed by release() (a call may hold its pointer still)
                self._retired.append((device, stream, ptr, keep))
            self._work.pop((device, stream), None)
            size = max(nbytes, 2 * size)
            keep = alloc.zeros(lib, device, size)
            ptr = alloc.pointer(keep) if keep is not None else self.runtime().malloc_zeroed(size, stream)
            self._work[(device, stream)] = (ptr, size, keep)
            return ptr, size

    def release(self) -> None:
        """Free the workspaces (after the calls on their streams are done); the next call makes one
        again.  Not while another thread calls this module's functions."""
        with self._lock:
            ours = [(d, s, p) for (d, s), (p, _, keep) in self._work.items() if keep is None]
            ours += [(d, s, p) for d, s, p, keep in self._retired if keep is None]
            self._work.clear()
            self._retired.clear()
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


@dataclass
class Plan:
    """What a call's shapes, strides and element types give, kept a Wrapper by those alone (the
    checks that read them passed): the sizes, the optional dimensions left out, and each output
    to allocate as (parameter, shape, dtype)."""

    sizes: dict[str, int]
    dropped: int
    new: list[tuple[pymodel.ArrayParam, tuple[int, ...], str]]
    align: list[int]  # each array's alignment, in the order bound


@dataclass(slots=True)
class Call:
    """A call's bound arguments, as a Binding gives them: the sizes, the arrays by C name, the
    device (None: every array empty)."""

    sizes: dict[str, int]
    arrays: dict[str, Array]
    device: int | None


@dataclass(slots=True)
class Quick:
    """A Plan as a call's fast path uses it, kept a Wrapper by the call's quick key (what
    generator/arrays.py's quick readers give of each array's element type, shape, strides and
    writability, and which outputs out= gives): the C arguments with the sizes in place, each
    array's argument and alignment, the outputs to allocate, those returned, the workspace's size."""

    args: list[Any]
    slots: tuple[int, ...]  # each array's C argument: those bound (the inputs, then out=), then those allocated
    align: tuple[int, ...]
    new: tuple[tuple[pymodel.ArrayParam, tuple[int, ...], str], ...]  # as the Plan's
    outs: tuple[int, ...]  # each output's place among the arrays bound, then those allocated
    nbytes: int


PLANS = 256  # plans kept a function (dropped all at once past it: calls of ever new shapes)


class Wrapper:
    """One public C function as a Python callable: f(*inputs, out=None, init=None, accumulate=False,
    stream=None) returns its output (or a tuple of them).

    A call's checks that depend on its arrays' shapes, strides and element types run once a
    combination of them (a Plan); those of the addresses and devices run every call.  The
    workspace's size is asked of the C size function once a combination of sizes.  A call whose
    arrays read, by their quick readers, as an earlier call's did takes the fast path (a Quick:
    the Plan with the C arguments laid out); any other takes the full path, which raises the errors."""

    def __init__(self, module: Module, fn: pymodel.Function):
        self.module, self.fn = module, fn
        self.__name__ = fn.short
        self.__doc__ = f"{fn.signature()}\n\n{fn.name}: {fn.doc}"
        self._c: Any = None
        self._size: Any = None
        self._inputs, self._outputs = tuple(fn.inputs), tuple(fn.outputs)
        self._plans: dict[tuple[Any, ...], Plan] = {}
        self._work_bytes: dict[tuple[int, ...], int] = {}
        self._order = _order(fn)
        self._bound: dict[tuple[bool, ...] | None, tuple[list[pymodel.ArrayParam], list[str]]] = {}
        self._quicks: dict[tuple[Any, ...], Quick] = {}  # the fast path's, by the arrays' quick key
        self._at = {name: k for k, (_, name) in enumerate(self._order)}  # each C argument's place
        self._at_work, self._at_bytes, self._at_stream = (self._at.get(n, -1) for n in pymodel.WORKSPACE)
        self._at_flags = tuple(self._at[f] for f in fn.flags)
        self._at_host = tuple((self._at[h], h, e) for h, e in fn.host.items())
        self._all_given = (True,) * len(self._outputs)
        self._one_out = len(self._outputs) == 1

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
        """The fast path: where the arrays' quick key has a Quick, their pointers and devices are
        checked (their element types, shapes and strides were, by the call that kept it) and the C
        function called.  A key not seen yet: the full call (_call), which keeps it; and the full
        call where the fast path cannot make the call (an array its quick readers do not read, a
        check failed): it refuses the call with its error."""
        if not self.module._device_ok:
            self._find_device()
        if len(inputs) != len(self._inputs):
            return self._call(inputs, out, init, accumulate, stream)
        if out is None:
            objs, given = inputs, None
        elif self._one_out and not isinstance(out, (tuple, list)):
            objs, given = (*inputs, out), self._all_given
        else:
            objs, given = _every_out(inputs, out, len(self._outputs)), self._all_given
        host = self._host(out, init, accumulate) if init is not None or accumulate else None
        got, key, lib = _quick_read(objs, given, stream is None)
        if got is None:
            return self._call(inputs, out, init, accumulate, stream)
        if stream is not None:
            handle = stream_handle(stream)
        elif lib in alloc.ALLOCATES:  # on the first input's device, as _first_device reads it
            own = inputs and key[1][0] in alloc.ALLOCATES  # read by torch's or CuPy's reader: its .device's
            handle = alloc.current_stream_of(lib, got[0][2] if own else _first_device(inputs))
        else:
            handle = 0
        try:
            q = self._quicks.get(key)
        except TypeError:  # a CAI's field that is no tuple (a list): the full path reads it
            return self._call(inputs, out, init, accumulate, stream)
        if q is None:
            return self._call(inputs, out, init, accumulate, stream, key)
        placed = _placed(got, q)
        if placed is None:
            return self._call(inputs, out, init, accumulate, stream)
        args, device = placed
        if q.new:
            objs = (*objs, *self._quick_new(q, got, args, lib, device, handle, stream is None))
        if self.module._one_device:
            self._quick_run(
                q, args, got, 0 if device is None else device, handle, lib, stream is None, host, accumulate
            )
        else:
            run = self._quick_run
            self._on_device(device, lambda d: run(q, args, got, d, handle, lib, stream is None, host, accumulate))
        return objs[q.outs[0]] if self._one_out else tuple([objs[k] for k in q.outs])

    def _find_device(self) -> None:
        """One clear error without a GPU, before anything is read (checked once a module)."""
        m = self.module
        cuda.require_device(self.fn.name)
        m._device_ok, m._one_device = True, cuda.device_count() <= 1

    def _host(self, out: object, init: object, accumulate: bool) -> list[Any]:
        """init= and accumulate= refused as the full path would (before anything is read); the
        host values of init."""
        _keywords(self.fn, out, init, accumulate)
        return [host_value(self.fn, h, e, init) for _, h, e in self._at_host]

    def _call(
        self,
        inputs: tuple[object, ...],
        out: object,
        init: object,
        accumulate: bool,
        stream: object,
        key: tuple[Any, ...] | None = None,
    ) -> Any:
        """A call the full way: every array read (generator/arrays.py's readers) and its checks
        (a Plan's where one is kept); `key`: the arrays' quick key, kept once the call went
        through, for the fast path's next calls."""
        m, fn = self.module, self.fn
        if not m._device_ok:
            self._find_device()
        if len(inputs) != len(self._inputs):
            raise TypeError(f"{fn.short}() takes {len(fn.inputs)} arrays ({fn.signature()}), got {len(inputs)}")
        if init is not None or accumulate:
            _keywords(fn, out, init, accumulate)
            for h, e in fn.host.items():  # a bad init= refused before anything is read or made
                host_value(fn, h, e, init)
        objs: Sequence[object] = inputs
        given = None
        if out is not None:
            outs = _outs(fn, out)
            given = tuple([o is not None for o in outs])
            objs = [*inputs, *(o for o in outs if o is not None)]
        params, labels = self._params(given)
        lib = ""
        for obj in objs:
            lib = alloc.library_of(obj)
            if lib:
                break
        current = stream is None  # on the library's current stream: its allocator may make the workspace
        if not current:
            handle = stream_handle(stream)
        else:
            handle = alloc.current_stream([lib], _first_device(inputs)) if lib in alloc.ALLOCATES else 0
        arrays = [read(obj, label, handle, current) for obj, label in zip(objs, labels, strict=True)]
        plan = self._plans.get(_key(params, arrays))
        if plan is None:
            call, plan = self._first(params, arrays, lib, handle, current)
        else:
            call = self._placed(plan, params, arrays)
            for ap, shape, dtype in plan.new:
                call.arrays[ap.name] = read(alloc.new(lib, ap, shape, dtype, call.device), ap.label, handle, current)
        self._launch(call, handle, init, accumulate, lib, current)
        if key is not None:
            self._keep_quick(key, plan, params)
        if len(self._outputs) == 1:
            return call.arrays[self._outputs[0].name].obj
        return tuple([call.arrays[ap.name].obj for ap in self._outputs])

    def _quick_new(
        self, q: Quick, got: list[Any], args: list[Any], lib: str, device: int | None, stream: int, current: bool
    ) -> list[object]:
        """The outputs not given, allocated: their pointers put in `args`, their streams (CAI v3)
        added to `got`."""
        made = []
        for (ap, shape, dtype), k in zip(q.new, q.slots[len(q.align) :], strict=True):
            obj = alloc.new(lib, ap, shape, dtype, device)
            if lib == "torch" or (lib == "cupy" and current):  # what `read` gives: no stream to wait for
                args[k] = alloc.pointer(obj) or None
            else:
                a = read(obj, ap.label, stream, current)
                args[k] = a.ptr or None
                got.append((a.ptr, None, a.device, a.stream))
            made.append(obj)
        return made

    def _quick_run(
        self,
        q: Quick,
        args: list[Any],
        got: list[Any],
        device: int,
        stream: int,
        lib: str,
        current: bool,
        host: list[Any] | None,
        accumulate: bool,
    ) -> None:
        """_run's work for a Quick: the producers' streams waited for, the workspace, the C call
        (`args`: the arrays' pointers in place)."""
        c = self._c or self._functions()[0]
        m = self.module
        for r in got:
            if r[3] is not None and not alloc.same_stream(r[3], stream):  # CAI v3: valid on another stream
                (m._runtime or m.runtime()).wait(stream, r[3])
        if q.nbytes:
            kept = m._work.get((device, stream))
            if kept is not None and kept[1] >= q.nbytes:
                args[self._at_work], args[self._at_bytes] = kept[0], kept[1]
            else:
                args[self._at_work], args[self._at_bytes] = m.workspace(device, stream, q.nbytes, lib, current)
        if self._at_stream >= 0:
            args[self._at_stream] = stream or None
        if host is not None:
            for (k, _, _), value in zip(self._at_host, host, strict=True):
                args[k] = value
        if accumulate:
            for k in self._at_flags:
                args[k] = 1
        rc = c(*args)
        if rc:
            (m._runtime or m.runtime()).check(self.fn.name, rc)

    def _keep_quick(self, key: tuple[Any, ...], plan: Plan, params: Sequence[pymodel.ArrayParam]) -> None:
        """A Quick of a call's Plan, kept by its arrays' quick key (`params`: the arrays bound)."""
        _, size = self._functions()
        sizes = tuple([plan.sizes[w] for w in self.fn.work])
        nbytes = self._work_bytes.get(sizes)
        if nbytes is None:
            nbytes = self._work_bytes[sizes] = size(*sizes)
        args = [
            plan.sizes[name] if source == "size" else 0 if source == "flag" or name == "work_bytes" else None
            for source, name in self._order
        ]
        names = [ap.name for ap in params] + [ap.name for ap, _, _ in plan.new]
        slots = tuple([self._at[name] for name in names])
        outs = tuple([names.index(ap.name) for ap in self._outputs])
        if len(self._quicks) >= PLANS:
            self._quicks.clear()
        self._quicks[key] = Quick(args, slots, tuple(plan.align), tuple(plan.new), outs, nbytes)

    def _params(self, given: tuple[bool, ...] | None) -> tuple[list[pymodel.ArrayParam], list[str]]:
        """The parameters a call binds, and their labels: the inputs, then the outputs `given`
        (None: none) by out=; kept a pattern."""
        found = self._bound.get(given)
        if found is None:
            outs = [ap for ap, g in zip(self._outputs, given or [False] * len(self._outputs), strict=True) if g]
            params = [*self._inputs, *outs]
            found = self._bound[given] = (params, [ap.label for ap in params])
        return found

    def _first(
        self, params: Sequence[pymodel.ArrayParam], arrays: list[Array], lib: str, stream: int, current: bool
    ) -> tuple[Call, Plan]:
        """The first call of its shapes, strides and types: every check, the outputs not given
        allocated and bound (their pitches are sizes), and the Plan kept for the next ones."""
        b = pymodel.Binding(self.fn, strict=True)
        for ap, a in zip(params, arrays, strict=True):
            b.bind(ap, a)
        key = _key(params, arrays)
        new = []
        for ap in self._outputs:
            if ap.name not in b.arrays:
                dtype, trailing = alloc.out_dtype(b, ap)
                shape = b.shape_of(ap) + trailing
                b.bind(ap, read(alloc.new(lib, ap, shape, dtype, b.device), ap.label, stream, current))
                new.append((ap, shape, dtype))
        align = [_alignment(ap, a) for ap, a in zip(params, arrays, strict=True)]
        if len(self._plans) >= PLANS:
            self._plans.clear()
        plan = self._plans[key] = Plan(dict(b.sizes), b.dropped, new, align)
        return Call(b.sizes, b.arrays, b.device), plan

    def _placed(self, plan: Plan, params: Sequence[pymodel.ArrayParam], arrays: list[Array]) -> Call:
        """A call of a plan's shapes, strides and types: the addresses' and devices' checks alone
        (the addresses change from call to call)."""
        device = None
        for a, align in zip(arrays, plan.align, strict=True):
            d = a.device
            if a.ptr % align or (d is None and a.ptr) or (d is not None and device is not None and d != device):
                self._refuse(params, arrays)
            if device is None:
                device = d
        return Call(plan.sizes, {ap.name: a for ap, a in zip(params, arrays, strict=True)}, device)

    def _refuse(self, params: Sequence[pymodel.ArrayParam], arrays: list[Array]) -> None:
        """Raise the error of the alignment or device check that failed (pymodel's message)."""
        b = pymodel.Binding(self.fn, strict=True)
        for ap, a in zip(params, arrays, strict=True):
            b._place(ap, a)
        raise AssertionError("an address or device refused, yet every check passed")  # not reached

    def _launch(self, b: Call, stream: int, init: object, accumulate: bool, lib: str, current: bool) -> None:
        """On the arrays' device: the C call."""
        self._on_device(b.device, lambda device: self._run(b, device, stream, init, accumulate, lib, current))

    def _on_device(self, device: int | None, run: Callable[[int], None]) -> None:
        """run(device) on the arrays' `device` (None: every array empty (NULL): the current one),
        switched to and back where there are several GPUs."""
        m = self.module
        if m._one_device:
            run(0 if device is None else device)
            return
        rt = m.runtime()
        on = m.device_for(device)
        before = rt.get_device()
        if before == on:
            run(on)
            return
        rt.set_device(on)
        try:
            run(on)
        finally:
            rt.set_device(before)

    def _run(self, b: Call, device: int, stream: int, init: object, accumulate: bool, lib: str, current: bool) -> None:
        """The producers' streams waited for, the workspace, the C call."""
        c, size = self._functions()
        m = self.module
        rt = m._runtime or m.runtime()
        for a in b.arrays.values():  # CAI v3: the stream an array's data is valid on, where it is another
            if a.stream is not None and not alloc.same_stream(a.stream, stream):
                rt.wait(stream, a.stream)
        sizes = tuple([b.sizes[w] for w in self.fn.work])
        nbytes = self._work_bytes.get(sizes)
        if nbytes is None:
            nbytes = self._work_bytes[sizes] = size(*sizes)
        work, work_bytes = m.workspace(device, stream, nbytes, lib, current) if nbytes else (0, 0)
        rc = c(*self._args(b, work, work_bytes, stream, init, accumulate))
        if rc:
            rt.check(self.fn.name, rc)

    def _args(
        self, b: Call | pymodel.Binding, work: int, work_bytes: int, stream: int, init: object, flag: bool
    ) -> list[Any]:
        """The C arguments in order."""
        fixed = {"d_work": work or None, "work_bytes": work_bytes, "stream": stream or None}
        args: list[Any] = []
        for source, name in self._order:
            if source == "size":
                args.append(b.sizes[name])
            elif source == "array":
                args.append(b.arrays[name].ptr or None)
            elif source == "fixed":
                args.append(fixed[name])
            elif source == "flag":
                args.append(int(flag))
            else:
                args.append(host_value(self.fn, name, self.fn.host[name], init))
        return args


def _quick_read(
    objs: Sequence[object], given: tuple[bool, ...] | None, current: bool
) -> tuple[list[Any] | None, tuple[Any, ...], str]:
    """The arrays by their quick readers (generator/arrays.py): each one's (pointer, key, device,
    stream), the call's quick key (`given`, then each array's key), their library (the first's
    that has one); None where one is for the full path."""
    got, key, lib = [], [given], ""
    for obj in objs:
        kind = type(obj)
        found = arrays.quick(kind)
        r = found[1](obj, current)
        if r is None:
            return None, (), ""
        if not lib:
            lib = found[0]
        got.append(r)
        key.append(r[1])
    return got, tuple(key), lib


def _placed(got: list[Any], q: Quick) -> tuple[list[Any], int | None] | None:
    """Wrapper._placed's checks of pointers and devices, on quick reads: the C arguments with the
    arrays' pointers in place, and the arrays' device (None: all empty); None where a check fails
    (the full path raises its error)."""
    args = q.args.copy()
    device = None
    for r, k, a in zip(got, q.slots, q.align, strict=False):  # (slots: and those of the outputs to allocate)
        ptr, d = r[0], r[2]
        if ptr % a or (d is None and ptr) or (d is not None and device is not None and d != device):
            return None
        if device is None:
            device = d
        args[k] = ptr or None
    return args, device


def _every_out(inputs: tuple[object, ...], out: object, n: int) -> tuple[object, ...]:
    """The arrays of a call whose out= gives every output as a tuple (or list); (None,) where it
    does not (no quick reader reads None: the full path makes the call, or raises its error)."""
    if not isinstance(out, (tuple, list)) or len(out) != n or any(o is None for o in out):
        return (None,)
    return (*inputs, *out)


def _order(fn: pymodel.Function) -> tuple[tuple[str, str], ...]:
    """Where each C argument comes from, in order: a size, an array's address, the workspace or
    stream (fixed), the accumulate flag, or a host value (init)."""
    arrays = {a.name for a in fn.arrays}
    flags = set(fn.flags)

    def source(name: str) -> str:
        if name in arrays:
            return "array"
        if name in pymodel.WORKSPACE:
            return "fixed"
        return "flag" if name in flags else "host" if name in fn.host else "size"

    return tuple((source(name), name) for _, name in fn.params)


def _alignment(ap: pymodel.ArrayParam, a: Array) -> int:
    """What an address must be a multiple of: the element type's size (a struct's: the dtype it is
    held in; the C function checks its full alignment), as pymodel's check."""
    return max(ap.elem.size if ap.elem.kind != "struct" else a.itemsize, 1)


def _key(params: Sequence[pymodel.ArrayParam], arrays: list[Array]) -> tuple[Any, ...]:
    """What a call's checks of shapes, strides and types read: the parameters bound (which
    outputs are given) and each array's element type, shape, strides and writability."""
    return tuple(
        [(ap.name, a.kind, a.itemsize, a.shape, a.strides, a.readonly) for ap, a in zip(params, arrays, strict=True)]
    )


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
    """A host pointer's value (an exclusive scan's init) from None (the identity), a number for a
    numeric type, or bytes of the type's size: None, or what ctypes passes as its address."""
    if value is None:
        return None
    if isinstance(value, (bytes, bytearray, memoryview)):
        raw = bytes(value)
        if len(raw) != e.size:
            raise ValueError(f"{name}: {len(raw)} bytes for {e.c}, which has {e.size}")
        return ctypes.create_string_buffer(raw, e.size)  # passed as its address (ctypes.cast costs ~1 us)
    if e.kind == "struct":
        raise TypeError(f"{name}: a {e.c} is given as {e.size} bytes (bytes, or an array's .tobytes())")
    ctype = NUMERIC[(e.kind, e.size)]
    if not isinstance(value, (int, float)):
        raise TypeError(f"{name}: expected a number for {e.c}, got {type(value).__name__}")
    return ctypes.byref(ctype(value))


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
