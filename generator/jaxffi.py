"""A built library's functions for JAX, as XLA FFI custom calls (jax.ffi), so they trace under
jax.jit and run on XLA's stream, with XLA's scratch allocator for the workspace.

`render(description)` writes one C++ file of XLA FFI handlers (templates/python/jax_ffi.cc.j2),
one a public function, from the description a build writes beside its library (pybuild's, from
the header's model); `build` compiles it against the headers jaxlib ships into
lib<PREFIX>_jax.so, linked to the library.  `functions(module)` (`module.jax`) registers the
handlers with jax and returns one JAX function a public C function.  A call's sizes, output
shapes and checks come from pymodel's binding, as for the other wrappers; the handlers take the
sizes as attributes and check the buffers' bytes against them.

jax (and numpy) are imported only when these functions are used or built.
"""

import ctypes
import hashlib
import importlib.util
import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from . import __version__, alloc, emit, pymodel
from .arrays import Array, contiguous

TEMPLATE = "python/jax_ffi.cc.j2"
ALIGN = 256  # the workspace's alignment (the counters' 256 bytes)
FLAGS = ("-O3", "-std=c++17", "-Xcompiler", "-fPIC")
ATTR_TYPES = {"size_t": "uint64_t", "int": "bool"}
X64 = "jax.config.update('jax_enable_x64', True)"


def library_name(prefix: str) -> str:
    return f"lib{prefix}_jax.so"


def source_name(prefix: str) -> str:
    return f"{prefix}_jax.cc"


def symbol(fn: pymodel.Function) -> str:
    """The handler's exported symbol."""
    return f"ag_jax_{fn.name}"


def model(description: dict[str, Any]) -> list[pymodel.Function]:
    """The description's functions (pybuild.describe's), as the other wrappers read them."""
    types = {c: pymodel.elem(t) for c, t in description["types"].items()}
    return [pymodel.function(f, types) for f in description["functions"]]


def signature(fn: pymodel.Function) -> str:
    """The JAX call, e.g. `exscan_sum_f32(in, *, init=None) -> out`."""
    kws = [*(f"{h}=None" for h in fn.host), *(f"{f}=False, out=None" for f in fn.flags)]
    star = f", *, {', '.join(kws)}" if kws else ""
    return f"{fn.short}({', '.join(a.label for a in fn.inputs)}{star}) -> {', '.join(a.label for a in fn.outputs)}"


# ---- the handlers' C++ ----


def _bytes(ap: pymodel.ArrayParam) -> str:
    """The bytes an array holds, from the size attributes (JAX arrays are packed)."""
    terms = [
        f"({d})" if d.name and d.offset else str(d) for d in ap.dims if d.name or d.offset != 1
    ]  # a constant 1 adds nothing
    return " * ".join([*terms, f"sizeof({ap.elem.c})"])


def _argument(fn: pymodel.Function, ctype: str, name: str) -> str:
    """The C function's argument `name` (of C type `ctype`) in the handler."""
    arrays = {a.name: a for a in fn.arrays}
    if name in arrays:
        a = arrays[name]
        data = f"{name}->untyped_data()" if a.writes else f"{name}.untyped_data()"
        return f"({ctype}){data}"
    if name in fn.host:
        return f"{name}_given ? &{name}_value : nullptr"
    return {"d_work": "work"}.get(name, name)


def _handler(fn: pymodel.Function) -> dict[str, Any]:
    """One function's handler, as the template writes it."""
    attrs = [(ATTR_TYPES[t], n) for t, n in fn.params if t in ATTR_TYPES and n != "work_bytes"]
    attrs += [a for h in fn.host for a in (("ffi::Span<const uint8_t>", h), ("bool", f"{h}_given"))]
    checks = [
        dict(label=a.label, got=f"{a.name}{'->' if a.writes else '.'}size_bytes()", want=_bytes(a)) for a in fn.arrays
    ]
    init = next(iter(fn.host.items()), None)
    return dict(
        name=fn.name,
        symbol=symbol(fn),
        signature=signature(fn),
        args=[dict(param=a.name, label=a.label) for a in fn.inputs],
        rets=[dict(param=a.name, label=a.label) for a in fn.outputs],
        folded=fn.flags[0] if fn.flags else "",
        attrs=attrs,
        checks=checks,
        init=dict(name=init[0], type=init[1].c) if init else None,
        work=list(fn.work),
        attr_lines=_wrap([f"{t} {n}" for t, n in attrs], 4),
        call_lines=_wrap([_argument(fn, t, n) for t, n in fn.params], 8),
    )


def _wrap(items: list[str], indent: int, width: int = 110) -> str:
    """`items` joined by commas, in lines of up to `width` characters indented by `indent`."""
    lines = [""]
    for k, item in enumerate(items):
        text = item + ("," if k < len(items) - 1 else "")
        if lines[-1] and len(lines[-1]) + 1 + len(text) + indent > width:
            lines.append("")
        lines[-1] += (" " if lines[-1] else "") + text
    return ("\n" + " " * indent).join(lines)


def render(description: dict[str, Any]) -> str:
    """The C++ file of a built library's XLA FFI handlers."""
    env = emit.environment()
    functions = [_handler(fn) for fn in model(description)]
    return env.get_template(TEMPLATE).render(
        prefix=description["prefix"],
        header=description["header"],
        version=__version__,
        align=ALIGN,
        functions=functions,
        any_init=any(f["init"] for f in functions),
    )


# ---- building lib<PREFIX>_jax.so ----


def available() -> bool:
    """Whether jax is importable here (not imported)."""
    return importlib.util.find_spec("jax") is not None


def include_dir() -> Path | None:
    """jax.ffi.include_dir(), the XLA FFI headers jaxlib ships (jax imported); None without jax."""
    try:
        return Path(alloc.module("jax.ffi").include_dir())
    except ImportError:
        return None


def build(folder: Path, description: dict[str, Any], include: Path, nvcc: Callable[[list[str]], None]) -> Path:
    """lib<PREFIX>_jax.so in `folder` (beside lib<PREFIX>.so and its header): the handlers
    rendered, compiled against `include` and linked to the library, by `nvcc(args)` (which
    raises where nvcc fails); written in a temporary folder there and renamed into place."""
    prefix = description["prefix"]
    final = folder / library_name(prefix)
    tmp = Path(tempfile.mkdtemp(prefix=".jax.", dir=folder))
    try:
        source, obj, lib = tmp / source_name(prefix), tmp / f"{prefix}_jax.o", tmp / library_name(prefix)
        source.write_text(render(description))
        nvcc([*FLAGS, "-isystem", str(include), "-I", str(folder), "-c", str(source), "-o", str(obj)])
        link = ["-shared", str(obj), "-L", str(folder), f"-l{prefix}", "-Xlinker", "-rpath", "-Xlinker", "$ORIGIN"]
        nvcc([*link, "-o", str(lib)])
        os.replace(lib, final)
    finally:
        for f in tmp.iterdir():
            f.unlink()
        tmp.rmdir()
    return final


# ---- a call: its binding, outputs and attributes (no jax needed) ----


@dataclass(frozen=True)
class Plan:
    """One call as jax.ffi.ffi_call makes it: the outputs as XLA holds them (shape, dtype such as
    "f4"), the attributes (name: (numpy dtype or "bool", value)), whether out= is passed last,
    aliased to the first output (accumulate), and the outputs held as 32-bit words (a size_t
    without 64-bit JAX types: the low word is returned)."""

    results: tuple[tuple[tuple[int, ...], str], ...]
    attrs: dict[str, tuple[str, Any]]
    folded: bool
    low_words: tuple[bool, ...]


def abstract(name: str, shape: Sequence[int], kind: str, itemsize: int) -> Array:
    """An array as JAX holds it (packed, row-major), without an address."""
    shape = tuple(int(d) for d in shape)
    return Array(name, 0, shape, contiguous(shape, itemsize), kind, itemsize, None, "jax")


def plan(
    fn: pymodel.Function, inputs: Sequence[Array], out: Array | None, init: object, accumulate: bool, x64: bool
) -> Plan:
    """Bind and check a call's arrays (TypeError or ValueError naming the argument), and give its
    outputs and attributes."""
    _count(fn, len(inputs))
    _keywords(fn, out, init, accumulate)
    b = pymodel.Binding(fn)
    for ap, a in zip(fn.inputs, inputs, strict=True):
        b.bind(ap, a)
    if accumulate:
        assert out is not None
        b.bind(fn.outputs[0], out)
    for ap in fn.outputs:
        if ap.name not in b.arrays:
            dtype, trailing = alloc.out_dtype(b, ap)
            b.bind(ap, abstract(ap.label, b.shape_of(ap) + trailing, dtype[0], int(dtype[1:])))
    held = [_held(ap, b.arrays[ap.name], x64) for ap in fn.outputs]
    attrs: dict[str, tuple[str, Any]] = {
        n: ("uint64", b.sizes[n]) for t, n in fn.params if t == "size_t" and n != "work_bytes"
    }
    attrs.update({f: ("bool", bool(accumulate)) for f in fn.flags})
    for h, e in fn.host.items():  # never an empty array: the type's bytes (zeros for none) and whether given
        raw = init_bytes(h, e, init)
        attrs.update({h: ("uint8", raw or bytes(e.size)), f"{h}_given": ("bool", bool(raw))})
    return Plan(tuple((s, d) for s, d, _ in held), attrs, bool(accumulate), tuple(w for _, _, w in held))


def _count(fn: pymodel.Function, given: int) -> None:
    if given != len(fn.inputs):
        raise TypeError(f"{fn.short}() takes {len(fn.inputs)} arrays ({signature(fn)}), got {given}")


def _keywords(fn: pymodel.Function, out: object, init: object, accumulate: bool) -> None:
    if init is not None and not fn.host:
        raise TypeError(f"{fn.short}: takes no init= ({signature(fn)})")
    if accumulate and not fn.flags:
        raise TypeError(f"{fn.short}: takes no accumulate= ({signature(fn)})")
    if out is not None and not accumulate:
        why = f"out= is the {fn.outputs[0].label} that accumulate=True folds into" if fn.flags else "it takes no out="
        raise TypeError(f"{fn.short}: a JAX function returns new arrays; {why}")
    if accumulate and out is None:
        raise TypeError(f"{fn.short}: accumulate=True folds into {fn.outputs[0].label}: pass it as out=")


def _held(ap: pymodel.ArrayParam, a: Array, x64: bool) -> tuple[tuple[int, ...], str, bool]:
    """An output's shape and dtype as XLA holds it; True where it is a size_t held as 32-bit words
    (JAX without 64-bit types)."""
    if a.itemsize != 8 or x64 or a.kind not in "iuf":
        return a.shape, a.dtype, False
    if ap.elem.c == "size_t":
        return (*a.shape, 2), "u4", True
    raise TypeError(f"{ap.label}: {ap.elem.c} needs JAX's 64-bit types: {X64}")


def init_bytes(name: str, e: pymodel.Elem, value: object) -> bytes:
    """An exclusive scan's init as its bytes: none (the identity), a number of a numeric type, or
    the bytes of the type (bytes, or anything with .tobytes())."""
    if value is None:
        return b""
    if e.kind != "struct" and getattr(value, "shape", None) == ():  # a numpy or JAX scalar: its number
        value = value.item()  # type: ignore[attr-defined]
    if hasattr(value, "tobytes") and not isinstance(value, (int, float)):
        value = value.tobytes()
    if isinstance(value, (bytes, bytearray, memoryview)):
        raw = bytes(value)
        if len(raw) != e.size:
            raise ValueError(f"{name}: {len(raw)} bytes for {e.c}, which has {e.size}")
        return raw
    if e.kind == "struct":
        raise TypeError(f"{name}: a {e.c} is given as its {e.size} bytes (bytes, or an array's .tobytes())")
    if not isinstance(value, (int, float)):
        raise TypeError(f"{name}: expected a number for {e.c}, got {type(value).__name__}")
    np = alloc.module("numpy")
    code = {"int": "i", "uint": "u", "float": "f"}[e.kind] + str(e.size)
    return bytes(np.array(value, dtype="<" + code).tobytes())


# ---- the JAX functions ----


class Built(Protocol):
    """What a loaded module gives (pyload.Module)."""

    folder: Path
    prefix: str
    description: dict[str, Any]

    def lib(self) -> ctypes.CDLL: ...


_TARGETS: dict[str, Path] = {}  # the FFI targets registered in this process: their handlers' library
_MODULES: dict[Path, "Functions"] = {}


def target_name(fn: pymodel.Function, library: Path) -> str:
    """The FFI target: the C name and the handlers' library (builds of one prefix may differ)."""
    return f"assocgen_{fn.name}_{hashlib.sha256(str(library.resolve()).encode()).hexdigest()[:10]}"


def functions(module: Built, build: Callable[[Path], Path]) -> "Functions":
    """The module's functions for JAX: lib<PREFIX>_jax.so opened (built by `build(folder)` first
    where it is not there) and its handlers registered with jax for CUDA, once a process."""
    folder = module.folder.resolve()
    if folder in _MODULES:
        return _MODULES[folder]
    path = folder / library_name(module.prefix)
    if not path.is_file():
        path = build(module.folder)
    module.lib()  # the kernels' library first: the handlers' library links to it
    lib = ctypes.CDLL(str(path))
    jax = alloc.module("jax")
    fs = Functions(module.prefix, lib)
    for fn in model(module.description):
        f = JaxFunction(fn, target_name(fn, path))
        if f.target not in _TARGETS:
            capsule = jax.ffi.pycapsule(getattr(lib, symbol(fn)))
            jax.ffi.register_ffi_target(f.target, capsule, platform="CUDA")
            _TARGETS[f.target] = path
        fs.add(f)
    _MODULES[folder] = fs
    return fs


class Functions:
    """A module's JAX functions: `m.jax.scan_sum_f32` and `m.jax.PREFIX_scan_sum_f32` alike."""

    def __init__(self, prefix: str, lib: ctypes.CDLL):
        self.prefix, self.lib = prefix, lib
        self.functions: dict[str, JaxFunction] = {}

    def add(self, f: "JaxFunction") -> None:
        self.functions[f.fn.short] = f
        if not hasattr(self, f.fn.short):
            setattr(self, f.fn.short, f)
        setattr(self, f.fn.name, f)

    def __repr__(self) -> str:
        return f"<assocgen JAX functions of {self.prefix}: {', '.join(self.functions)}>"


class JaxFunction:
    """One public C function as a JAX function (an XLA FFI custom call): f(*inputs, init=None)
    returns its output (or a tuple of them); a matrix multiply's accumulate=True, out=c folds into c."""

    def __init__(self, fn: pymodel.Function, target: str):
        self.fn, self.target = fn, target
        self.__name__ = fn.short
        self.__doc__ = f"{signature(fn)}\n\n{fn.name} as an XLA FFI custom call ({target}): {fn.doc}"

    def __repr__(self) -> str:
        return f"<assocgen JAX function {signature(self.fn)}>"

    def __call__(self, *inputs: object, init: object = None, accumulate: bool = False, out: object = None) -> Any:
        _count(self.fn, len(inputs))
        jax, jnp = alloc.module("jax"), alloc.module("jax.numpy")
        arrays = [jnp.asarray(x) for x in inputs]
        folded = None if out is None else jnp.asarray(out)
        labels = [a.label for a in self.fn.inputs]
        x64 = bool(jax.config.jax_enable_x64)
        given = None if folded is None else _abstract(self.fn.outputs[0].label, folded)
        p = plan(self.fn, [_abstract(n, x) for n, x in zip(labels, arrays, strict=True)], given, init, accumulate, x64)
        for label, x in zip(labels, arrays, strict=True):
            _on_a_gpu(jax, label, x)
        if folded is not None:
            _on_a_gpu(jax, self.fn.outputs[0].label, folded)
        call = jax.ffi.ffi_call(
            self.target,
            [jax.ShapeDtypeStruct(shape, jnp.dtype(dtype)) for shape, dtype in p.results],
            vmap_method="sequential",
            input_output_aliases={len(arrays): 0} if p.folded else None,
        )
        results = call(*arrays, *([folded] if p.folded else []), **_attributes(p))
        results = [r[..., 0] if low else r for r, low in zip(results, p.low_words, strict=True)]
        return results[0] if len(results) == 1 else tuple(results)


def _abstract(label: str, x: Any) -> Array:
    return abstract(label, x.shape, x.dtype.kind, x.dtype.itemsize)


def _on_a_gpu(jax: Any, label: str, x: Any) -> None:
    """A concrete JAX array must be on a CUDA device (a traced one is placed by jax.jit)."""
    tracer = getattr(getattr(jax, "core", None), "Tracer", None)
    if tracer is not None and isinstance(x, tracer):
        return
    try:
        platforms = sorted({d.platform for d in x.devices()})
    except Exception:  # an abstract value, whatever jax calls it: placed by jax.jit
        return
    if platforms != ["gpu"]:
        raise ValueError(f"{label}: a JAX array on {', '.join(platforms)}; the kernels need a CUDA device")


def _attributes(p: Plan) -> dict[str, Any]:
    """The plan's attributes as jax.ffi.ffi_call passes them (numpy scalars and arrays)."""
    np = alloc.module("numpy")
    out: dict[str, Any] = {}
    for name, (kind, value) in p.attrs.items():
        if kind == "bool":
            out[name] = bool(value)
        elif kind == "uint8":
            out[name] = np.frombuffer(value, dtype=np.uint8).copy()
        else:
            out[name] = np.uint64(value)
    return out
