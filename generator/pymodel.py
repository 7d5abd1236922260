"""The Python wrappers' model of the public C functions, read from the description a build writes
beside the library (generator/pybuild.py writes it from emit's Signature, the header's model), and
the binding of a call's arrays to the C arguments: every array's element type, shape, strides,
device and alignment checked, the sizes, pitches and leading dimensions taken from them.

No CUDA and no array library here: the checks run on `arrays.Array` values, so they are tested
on the CPU with fake arrays.
"""

import re
from dataclasses import dataclass, field
from typing import Any

from .arrays import Array

FORMAT = 1  # the description's format (a part of the build cache's key)
WORKSPACE = ("d_work", "work_bytes", "stream")


@dataclass(frozen=True)
class Elem:
    """An element type: its C spelling, spec name, size in bytes and kind (int, uint, float, struct)."""

    c: str
    name: str
    size: int
    kind: str

    def accepts(self) -> str:
        """What the messages say an array of it may be."""
        if self.kind == "struct":
            return f"{self.c} ({self.size} bytes: trailing dimensions of that many bytes, or a {self.size}-byte record)"
        letter = {"int": "int", "uint": "uint", "float": "float"}[self.kind]
        return f"{self.c} ({letter}{self.size * 8})"


@dataclass(frozen=True)
class Dim:
    """An array dimension: size `name` + `offset` (name "": the constant offset)."""

    name: str
    offset: int = 0

    @staticmethod
    def parse(text: str) -> "Dim":
        text = text.strip()
        if text.isdigit():
            return Dim("", int(text))
        m = re.fullmatch(r"(\w+)\s*\+\s*(\d+)", text)
        return Dim(m.group(1), int(m.group(2))) if m else Dim(text)

    def __str__(self) -> str:
        return str(self.offset) if not self.name else f"{self.name} + {self.offset}" if self.offset else self.name


@dataclass(frozen=True)
class ArrayParam:
    """A public function's array: its layout as the Python caller holds it (`dims`, outermost
    first; `strides`: a size parameter giving the step of that dimension in elements, or None
    where the dimension must be packed), the first `optional` dimensions of which may be left out
    (taken as 1), and whether the call writes it."""

    name: str
    elem: Elem
    dims: tuple[Dim, ...]
    strides: tuple[str | None, ...]
    writes: bool
    optional: int = 0
    in_place: str | None = None

    @property
    def label(self) -> str:
        """The argument as the Python caller knows it: `in` for d_in, `out` for d_out."""
        return self.name.removeprefix("d_")


@dataclass(frozen=True)
class Function:
    """A public C function as the wrappers call it."""

    name: str  # the C name: PREFIX_...
    short: str  # without the prefix
    family: str
    doc: str
    params: tuple[tuple[str, str], ...]  # (C type, name) in the C order
    arrays: tuple[ArrayParam, ...]
    work: tuple[str, ...]  # the size function's parameters
    host: dict[str, Elem] = field(default_factory=dict)  # host pointers (init): their element type

    @property
    def inputs(self) -> list[ArrayParam]:
        return [a for a in self.arrays if not a.writes]

    @property
    def outputs(self) -> list[ArrayParam]:
        return [a for a in self.arrays if a.writes]

    @property
    def flags(self) -> list[str]:
        """int parameters (accumulate): keywords of the Python call."""
        return [n for t, n in self.params if t == "int"]

    def signature(self) -> str:
        """The Python call, e.g. `scan_sum_f32(in, *, out=None, stream=None) -> out`."""
        kws = ["out=None", *(f"{h}=None" for h in self.host), *(f"{f}=False" for f in self.flags), "stream=None"]
        outs = ", ".join(a.label for a in self.outputs)
        return f"{self.short}({', '.join(a.label for a in self.inputs)}, *, {', '.join(kws)}) -> {outs}"


def elem(data: dict[str, Any]) -> Elem:
    return Elem(data["c"], data["name"], int(data["size"]), data["kind"])


def function(data: dict[str, Any], types: dict[str, Elem]) -> Function:
    """A Function of its description (pybuild.describe's entry)."""
    arrays = tuple(
        ArrayParam(
            a["name"],
            types[a["c"]],
            tuple(Dim.parse(d) for d in a["dims"]),
            tuple(a["strides"]),
            bool(a["writes"]),
            int(a.get("optional", 0)),
            a.get("in_place"),
        )
        for a in data["arrays"]
    )
    host = {name: types[c] for name, c in data.get("host", {}).items()}
    params = tuple((p[0], p[1]) for p in data["params"])
    return Function(data["name"], data["short"], data["family"], data["doc"], params, arrays, tuple(data["work"]), host)


# ---- binding a call's arrays ----


@dataclass
class Binding:
    """A call's sizes (size_t parameters by name), its arrays by C name, the device they are on,
    and how many optional leading dimensions the inputs left out."""

    fn: Function
    sizes: dict[str, int] = field(default_factory=dict)
    arrays: dict[str, Array] = field(default_factory=dict)
    device: int | None = None
    dropped: int = -1  # optional leading dimensions left out (-1: none seen yet)
    strict: bool = False  # every array's device must be known (a call; the CPU tests' fakes have none)

    def bind(self, ap: ArrayParam, a: Array) -> None:
        """Check array `a` for parameter `ap` and take the sizes and pitches it gives."""
        if ap.writes and a.readonly:
            raise ValueError(f"{ap.label}: a read-only array cannot be written")
        trailing = element_dims(ap, a)
        body = a.shape[: len(a.shape) - trailing]
        dropped = len(ap.dims) - len(body)
        if not 0 <= dropped <= ap.optional or (self.dropped >= 0 and dropped != self.dropped and ap.optional):
            raise ValueError(f"{ap.label}: expected {_rank(ap)} dimensions{_plus(trailing)}, got shape {a.shape}")
        if ap.optional:
            self.dropped = dropped
        shape = (1,) * dropped + body
        strides = (0,) * dropped + a.strides[: len(body)]
        for d, n in zip(ap.dims, shape, strict=True):
            self._size(ap, d, n, a.shape)
        self._strides(ap, a, shape, strides, trailing)
        self._place(ap, a)
        self.arrays[ap.name] = a

    def _size(self, ap: ArrayParam, d: Dim, n: int, shape: tuple[int, ...]) -> None:
        if not d.name:
            if n != d.offset:
                raise ValueError(f"{ap.label}: expected a dimension of {d.offset}, got shape {shape}")
            return
        value = n - d.offset
        if value < 0:
            raise ValueError(f"{ap.label}: expected at least {d.offset} elements, got shape {shape}")
        known = self.sizes.setdefault(d.name, value)
        if known != value:
            raise ValueError(f"{ap.label}: shape {shape} gives {d.name} = {value}, the arguments before it {known}")

    def _strides(
        self, ap: ArrayParam, a: Array, shape: tuple[int, ...], strides: tuple[int, ...], trailing: int
    ) -> None:
        """Packed dimensions one element apart; pitches whole elements, taken as size parameters."""
        size = ap.elem.size
        _packed_elements(ap, a, trailing)
        for k, (n, step, s) in enumerate(zip(shape, strides, ap.strides, strict=True)):
            if s is None and n > 1 and step != size:
                raise ValueError(
                    f"{ap.label}: dimension {k} must be packed (stride {size} bytes), got strides {a.strides}"
                )
        inner = next((n for n, s in zip(shape, ap.strides, strict=True) if s is None), 1)
        for k, (n, step, s) in enumerate(zip(shape, strides, ap.strides, strict=True)):
            if s is None:
                continue
            if n <= 1:  # any stride: the smallest the function accepts
                self.sizes[s] = inner
            elif step < 0 or step % size:
                raise ValueError(
                    f"{ap.label}: stride {step} of dimension {k} is not a whole number of {size}-byte elements"
                )
            elif step // size < inner:
                raise ValueError(
                    f"{ap.label}: {s} {step // size} (from the strides {a.strides}) is less than a row ({inner})"
                )
            else:
                self.sizes[s] = step // size

    def _place(self, ap: ArrayParam, a: Array) -> None:
        """Alignment for the element type, and every array on one device."""
        align = ap.elem.size if ap.elem.kind != "struct" else a.itemsize  # a struct's alignof: the C check's
        if align > 1 and a.ptr % align:
            raise ValueError(f"{ap.label}: address {a.ptr:#x} is not aligned for {ap.elem.c} ({align} bytes)")
        if a.device is None:
            if self.strict and a.ptr:  # (an empty array's NULL is fine)
                raise ValueError(f"{ap.label}: address {a.ptr:#x} is not in CUDA device memory")
            return
        if self.device is None:
            self.device = a.device
        elif a.device != self.device:
            raise ValueError(f"{ap.label}: on device {a.device}, the arguments before it on device {self.device}")

    def shape_of(self, ap: ArrayParam) -> tuple[int, ...]:
        """An output's shape from the sizes bound so far (less the dimensions the inputs left out)."""
        dims = ap.dims[max(self.dropped, 0) if ap.optional else 0 :]
        missing = [d.name for d in dims if d.name and d.name not in self.sizes]
        if missing:
            raise ValueError(f"{ap.label}: its size {missing[0]} is not given by the inputs: pass out=")
        return tuple(self.sizes.get(d.name, 0) + d.offset for d in dims)


def _rank(ap: ArrayParam) -> str:
    n = len(ap.dims)
    return f"{n - ap.optional} or {n}" if ap.optional else str(n)


def _plus(trailing: int) -> str:
    return f" (and {trailing} of the element)" if trailing else ""


def element_dims(ap: ArrayParam, a: Array) -> int:
    """How many trailing dimensions of `a` make up one element of ap's type (0 for a number or a
    record of the type's size); TypeError where a's type cannot be it."""
    e = ap.elem
    if e.kind != "struct":
        kinds = {"int": "i", "uint": "u", "float": "f"}[e.kind] + ("iu" if e.c == "size_t" else "")
        if a.kind not in kinds or a.itemsize != e.size:
            raise TypeError(f"{ap.label}: expected {e.accepts()}, got {a.dtype}")
        return 0
    if a.kind in ("b", "c") or e.size % a.itemsize:
        raise TypeError(f"{ap.label}: expected {e.accepts()}, got {a.dtype}")
    want, product, k = e.size // a.itemsize, 1, 0
    while product < want and k < len(a.shape):
        k += 1
        product *= a.shape[-k]
    if product != want:
        raise TypeError(
            f"{ap.label}: expected {e.accepts()}; shape {a.shape} of {a.dtype} has no trailing {e.size} bytes"
        )
    return k


def _packed_elements(ap: ArrayParam, a: Array, trailing: int) -> None:
    """An element's trailing dimensions must be packed in C order."""
    step = a.itemsize
    for k in range(1, trailing + 1):
        if a.shape[-k] > 1 and a.strides[-k] != step:
            raise ValueError(f"{ap.label}: the element's dimensions must be packed, got strides {a.strides}")
        step *= a.shape[-k]
