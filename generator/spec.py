"""Reading and checking a spec: TOML tables (or command-line entries) into a Spec of instances.

A spec comes from a TOML file, from the command line, or both (command-line entries are added
to the file's).  Every problem is reported as one `SpecError` line that names the source, the
key and what is wrong; nothing is written until the whole spec has been checked.  Every key of
every table, its default and its limits: docs/spec.md.
"""

import hashlib
import json
import re
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn

from . import ctext, tuning
from .ctypes_ import BUILTIN_TYPES, CType, struct_type
from .model import Heads, Primitive, ScanKind
from .operators import BUILTIN_OPERATORS, INTEGERS, Operator, builtin, segmented
from .semirings import BUILTIN_SEMIRINGS, Semiring, builtin_semiring

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")  # matched whole (fullmatch): no trailing newline
# The longest name a user may give (a type, operator, semiring or instance name).  The longest file
# a spec produces is PREFIX_exsegscan_OP_TYPE_by_u64.cu.tmp (written, then renamed to .cu), so with
# a prefix of MAX_PREFIX: 32 + 23 + 2 x 64 + 7 = 190 bytes, within the file system's 255.
MAX_NAME = 64
MAX_PREFIX = 32
NAME_LIMIT = 255  # bytes a file name may have (ext4, XFS, APFS, NTFS)
MAX_INPUTS = 8  # input arrays an operator's lift may read
ONE_INPUT = "several inputs are for [[reduce]], [[scan]], [[segscan]] and [[segreduce]], one only for"


class SpecError(Exception):
    """One clear line: `source: key: problem`."""

    def __init__(self, source: str, key: str, problem: str):
        self.source, self.key, self.problem = source, key, problem
        super().__init__(f"{source}: {key}: {problem}" if key else f"{source}: {problem}")


class _Public:
    """An instance named by its public_name: the file it is written to, and the C functions the
    header declares for it (the function and its workspace size)."""

    public_name: str

    @property
    def file_stem(self) -> str:
        return self.public_name

    @property
    def symbols(self) -> tuple[str, str]:
        return (self.public_name, f"{self.public_name}_workspace_bytes")


@dataclass(frozen=True)
class Instance(_Public):
    """One kernel to generate: which primitive, what it computes and how it is shaped."""

    prefix: str
    primitive: Primitive
    op: Operator
    block: int
    items: int
    public_name: str
    heads: Heads = Heads.NONE
    index: CType | None = None  # the key type (heads = "keys") or the offset type (heads = "offsets")
    blocks_per_sm: int = 0  # resident blocks an SM to ask of the compiler (0: chosen here)
    sized: bool = False  # the shape left to the tuning module: other shapes may take other sizes of n
    # shapes by n from a tuning file (tunefile.apply), the last for every larger n; () where the
    # tuning module decides
    shapes: tuple[tuning.TunedShape, ...] = ()

    @property
    def kernel_name(self) -> str:
        # The internal name encodes every parameter; the public one stays short and stable.
        return (
            f"{self.prefix}_k_{self.primitive}_{self.op.name}_{self.op.in_type.name}{self.index_suffix}"
            f"_b{self.block}_t{self.items}"
        )

    @property
    def index_suffix(self) -> str:
        if self.index is None:
            return ""
        if self.heads == Heads.KEYS:
            return f"_by_{self.index.name}"
        if self.heads == Heads.OFFSETS:
            return f"_o{self.index.name}"
        return ""

    @property
    def per_element(self) -> bool:
        """A result for every element (the scans), not one a segment."""
        return self.primitive in (Primitive.SCAN, Primitive.EXSCAN, Primitive.SEGSCAN, Primitive.EXSEGSCAN)

    @property
    def exclusive(self) -> bool:
        return self.primitive in (Primitive.EXSCAN, Primitive.EXSEGSCAN)

    @property
    def family(self) -> str:
        """reduce, or scan: every other primitive is a scan over a (possibly derived) operator."""
        return "reduce" if self.primitive == Primitive.REDUCE else "scan"

    @property
    def extra_types(self) -> list[CType]:
        """Types the generator declares for this instance (a builtin operator's structs)."""
        return self.op.extra_types

    @property
    def tile_op(self) -> Operator:
        """The operator the scan family's tiles and look-back run: `op`, or its segmented form."""
        if not self.heads:
            return self.op
        return segmented(self.op, counted=self.primitive == Primitive.REDUCE_BY_KEY)


@dataclass(frozen=True)
class Transpose(_Public):
    """One transpose to generate: rows x cols matrices of `type`, batched, through a tile in
    shared memory; the shape (tuning.transpose_shape) is resolved from size, tile, rows, remedy."""

    prefix: str
    type: CType
    tile: int
    rows: int
    remedy: str
    public_name: str
    naive: bool = False
    op: Operator | None = None  # an Operator whose lift maps each element (in_type -> type), or None
    family = "transpose"

    @property
    def in_type(self) -> CType:
        return self.op.in_type if self.op else self.type

    @property
    def extra_types(self) -> list[CType]:
        return self.op.extra_types if self.op else []

    @property
    def shape(self) -> tuning.TransposeShape:
        remedy = "" if self.naive else self.remedy
        return tuning.transpose_shape(self.type.size, self.tile, self.rows, remedy, self.naive)

    @property
    def kernel_name(self) -> str:
        how = "naive" if self.naive else self.remedy
        what = f"{self.op.name}_{self.in_type.name}_to_{self.type.name}" if self.op else self.type.name
        return f"{self.prefix}_k_transpose_{what}_t{self.tile}_r{self.rows}_{how}"


@dataclass(frozen=True)
class Matmul(_Public):
    """One tiled matrix multiply to generate, over a semiring; the shape (tuning.matmul_shape) is
    resolved from the element sizes, the witness switch and the spec's block and thread keys."""

    prefix: str
    semiring: Semiring
    layout: str  # "nn", "nt", "tn", "tt": whether A, B are stored transposed
    witness: bool
    block: tuple[int, ...]  # (m, n, k), or () for the default
    thread: tuple[int, ...]  # (m, n), or ()
    public_name: str
    warp: tuple[int, ...] = ()  # (m, n), or ()
    pipeline: str | None = None  # "registers" or "async", or None for the default
    stages: int | None = None
    family = "matmul"
    extra_types: tuple[()] = ()

    @property
    def shape(self) -> tuning.MatmulShape:
        sr = self.semiring
        return _matmul_shape(sr, self.witness, self.block, self.thread, self.warp, self.pipeline, self.stages)

    @property
    def type(self) -> CType:
        return self.semiring.c_type

    @property
    def kernel_name(self) -> str:
        sh, sr = self.shape, self.semiring
        return (
            f"{self.prefix}_k_matmul_{sr.name}_{sr.a_type.name}_{self.layout}"
            f"_{sh.name}{'_witness' if self.witness else ''}"
        )


def _matmul_shape(
    sr: Semiring,
    witness: bool,
    block: tuple[int, ...],
    thread: tuple[int, ...],
    warp: tuple[int, ...],
    pipeline: str | None,
    stages: int | None,
) -> tuning.MatmulShape:
    sizes = (sr.a_type.size, sr.b_type.size)
    structs = "struct" in (sr.a_type.kind, sr.b_type.kind)
    return tuning.matmul_shape(sr.c_type.size, witness, block, thread, warp, pipeline, stages, sizes, structs)


@dataclass(frozen=True)
class Axis(_Public):
    """An instance along the rows or down the columns of a rows x cols array with a row pitch, by
    an operator: Rows or Cols."""

    prefix: str
    op: Operator
    public_name: str
    kind: str = "reduce"
    family = ""

    @property
    def shape(self) -> tuning.RowsShape | tuning.ColsShape:
        raise NotImplementedError

    @property
    def extra_types(self) -> list[CType]:
        return self.op.extra_types

    @property
    def kernel_name(self) -> str:
        return f"{self.prefix}_k_{self.family}_{self.kind}_{self.op.name}_{self.op.in_type.name}_b{self.shape.block}"


@dataclass(frozen=True)
class Rows(Axis):
    """One reduce or scan along rows to generate: each row of a rows x cols array with a row pitch
    folded (kind "reduce") or scanned ("scan", "exscan") on its own by an operator; the shape
    (tuning.rows_shape) is resolved from the input's size."""

    family = "rows"

    @property
    def shape(self) -> tuning.RowsShape:
        return tuning.rows_shape(self.op.in_type.size)


@dataclass(frozen=True)
class Cols(Axis):
    """One reduce along columns to generate: one result a column of a rows x cols array with a row
    pitch, folding down the rows in order (tuning.cols_shape)."""

    family = "cols"

    @property
    def shape(self) -> tuning.ColsShape:
        return tuning.cols_shape(self.op.in_type.size, self.op.acc_type.size)


Kernel = Instance | Transpose | Matmul | Rows | Cols  # an instance of any family


@dataclass
class Spec:
    prefix: str
    source: str  # where the spec came from, for error messages only
    user_types: list[CType]
    user_operators: dict[str, Operator]
    instances: list[Kernel]
    digest: str = ""  # a hash of the spec's content: what generated files are stamped with
    user_code: list["UserCode"] = field(default_factory=list)  # the C the spec brings, by key
    nccl: bool = False  # reduces and scans also across the ranks of an NCCL communicator
    tuning: str = ""  # where the shapes came from when a tuning file gave some (tunefile.Tuning.summary)
    notes: list[str] = field(default_factory=list)  # what the spec asks for and does not get, and why


@dataclass(frozen=True)
class UserCode:
    """A piece of the spec's own C (a type's definition, an operator's function), with the key it
    came from, so a compiler's error in it can be reported against that key."""

    key: str  # e.g. "operator 'compose': combine"
    # "type", "identity", "combine", "lift", or a semiring's "sr_zero", "sr_add", "sr_mul", "sr_step", "sr_fast"
    kind: str
    text: str  # the C definition, or the function body as generated
    type: CType  # the type defined (type), or the accumulator (functions)
    in_type: CType | None = None  # a lift's input (a semiring's mul and step: A's)
    b_type: CType | None = None  # a semiring's mul and step: B's
    inputs: tuple[CType, ...] = ()  # CTypes: a lift's several inputs (x0, x1, ...)


# Names a user type must not take: C and C++ keywords, the standard and CUDA typedefs that the
# header and the sources see, and names reserved to the implementation (checked by _reserved).
C_KEYWORDS = set(
    """auto break case char const continue default do double else enum extern float for goto if
inline int long register restrict return short signed sizeof static struct switch typedef union unsigned void
volatile while bool true false alignas alignof static_assert thread_local nullptr constexpr typeof
typeof_unqual asm catch class const_cast delete dynamic_cast explicit export friend mutable namespace new
noexcept operator private protected public reinterpret_cast static_cast template this throw try typeid
typename using virtual wchar_t char8_t char16_t char32_t concept consteval constinit co_await co_return
co_yield decltype requires and or not xor bitand bitor compl and_eq or_eq not_eq xor_eq""".split()
)
STANDARD_TYPEDEFS = (
    set(
        """size_t ssize_t ptrdiff_t max_align_t nullptr_t intmax_t uintmax_t intptr_t uintptr_t
FILE va_list off_t time_t clock_t div_t ldiv_t lldiv_t float_t double_t fpos_t errno_t wint_t mbstate_t
half dim3 cudaError_t cudaStream_t cudaEvent_t cudaGraph_t cudaGraphExec_t
cudaLaunchConfig_t cudaLaunchAttribute""".split()
    )
    | {
        f"{kind}{bits}_t"
        for kind in ("int", "uint", "int_least", "uint_least", "int_fast", "uint_fast")
        for bits in (8, 16, 32, 64)
    }
    | {
        f"{base}{n}"
        for base in (
            "char",
            "uchar",
            "short",
            "ushort",
            "int",
            "uint",
            "long",
            "ulong",
            "longlong",
            "ulonglong",
            "float",
            "double",
        )
        for n in (1, 2, 3, 4)
    }
)
# Headers a prefix must not name: its PREFIX.h would shadow them for code compiled with -I on
# the output folder (the C standard's, POSIX's most used, and the CUDA Toolkit's)
SHADOWED_HEADERS = set(
    """assert complex ctype errno fenv float inttypes iso646 limits locale math setjmp signal
stdalign stdarg stdatomic stdbit stdbool stdckdint stddef stdint stdio stdlib stdnoreturn string tgmath threads
time uchar wchar wctype unistd pthread fcntl strings malloc alloca memory dirent dlfcn sched semaphore
cuda cuda_runtime cuda_runtime_api driver_types vector_types builtin_types host_defines device_types
surface_types texture_types channel_descriptor cuda_fp16 cuda_bf16 cuda_fp8 cuComplex math_constants
device_functions device_launch_parameters library_types nccl cublas cublas_v2 cufft curand cusparse nvrtc
crt sm_20_atomic_functions""".split()
)


def _reserved(name: str) -> str:
    """Why `name` cannot name a user type, or ''."""
    if name in C_KEYWORDS:
        return "is a C or C++ keyword"
    if name in STANDARD_TYPEDEFS:
        return "is a type the standard or CUDA headers already define"
    if name.startswith("__") or re.match(r"_[A-Z]", name):
        return "is reserved to the compiler (it starts with '__' or '_' and a capital)"
    if name.lower().startswith("ag_"):
        return "starts with ag_, the prefix of the generated code's own names"
    return ""


Entries = list[tuple[str, Any]]  # (where, raw table) pairs of one kind of table; `where` names it in errors
Read = list[tuple["_Table", Kernel]]  # each instance a table asks for, with the table (for errors)


# ---------------------------------------------------------------------------------------------
# small checkers: each raises SpecError naming the key


class _Table:
    """A TOML table being read: remembers where it came from and which keys were used."""

    def __init__(self, source: str, where: str, data: object):
        if not isinstance(data, dict):
            raise SpecError(source, where, f"expected a table, got {_kind(data)}")
        self.source, self.where, self.data = source, where, data

    def key(self, k: str) -> str:
        return f"{self.where}.{k}" if self.where and k else (self.where or k)

    def fail(self, k: str, problem: str) -> NoReturn:
        raise SpecError(self.source, self.key(k), problem)

    def get(self, k: str, kind: str, default: Any = None, required: bool = False) -> Any:
        if k not in self.data:
            if required:
                self.fail(k, "missing (required)")
            return default
        v = self.data[k]
        ok = {
            "str": isinstance(v, str),
            "int": isinstance(v, int) and not isinstance(v, bool),
            "bool": isinstance(v, bool),
            "str|list": isinstance(v, str) or (isinstance(v, list) and v and all(isinstance(x, str) for x in v)),
        }[kind]
        if not ok:
            want = {
                "str": "a string",
                "int": "an integer",
                "bool": "true or false",
                "str|list": "a string or a non-empty list of strings",
            }[kind]
            self.fail(k, f"expected {want}, got {_kind(v)}")
        return v

    def ident(self, k: str, required: bool = True, limit: int = MAX_NAME) -> Any:
        v = self.get(k, "str", required=required)
        problem = "" if v is None else ident_problem(v, limit)
        if problem:
            self.fail(k, problem)
        return v

    def no_other_keys(self, allowed: Iterable[str]) -> None:
        for k in self.data:
            if k not in allowed:
                self.fail(k, f"unknown key (known: {', '.join(sorted(allowed))})")


def ident_problem(v: str, limit: int = MAX_NAME) -> str:
    """Why `v` cannot be a name (the whole string a C identifier of at most `limit` characters), or ''."""
    if not IDENT.fullmatch(v):
        return f"{v!r} is not a C identifier (letters, digits and '_', not starting with a digit)"
    if len(v) > limit:
        return f"{v[:20]}...: {len(v)} characters, more than {limit} (file names stay within {NAME_LIMIT} bytes)"
    return ""


def _kind(v: object) -> str:
    return {
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        str: "a string",
        list: "a list",
        dict: "a table",
    }.get(type(v), type(v).__name__)


def _check_block(t: _Table, k: str, v: int | None) -> int:
    if v is None:
        return tuning.DEFAULT_BLOCK
    if v < 32 or v > 1024 or v & (v - 1):
        t.fail(k, f"{v} is not a power of two between 32 and 1024")
    return v


# ---------------------------------------------------------------------------------------------


def _body(t: _Table, expr_key: str, body_key: str, params: str) -> str:
    """A C function body from `key` (an expression) or `key_body` (statements)."""
    expr, body = t.get(expr_key, "str"), t.get(body_key, "str")
    if expr is not None and body is not None:
        t.fail(body_key, f"give either {expr_key} or {body_key}, not both")
    if expr is None and body is None:
        t.fail(expr_key, f"missing: an expression of {params} ({expr_key}) or statements ({body_key})")
    if expr is not None:
        if not expr.strip():
            t.fail(expr_key, "is empty")
        return f"return {expr.strip()};"
    if not ctext.uses(body, "return"):
        t.fail(body_key, "has no return statement (outside comments)")
    return body.strip()


def _read_types(source: str, data: list[Any], types: dict[str, CType], code: list[UserCode]) -> list[CType]:
    out = []
    for n, raw in enumerate(data):
        t = _Table(source, f"type[{n}]", raw)
        t.no_other_keys({"name", "size", "c"})
        name = t.ident("name")
        if name in types:
            t.fail("name", f"type {name!r} is already defined")
        if _reserved(name):
            t.fail("name", f"{name!r} {_reserved(name)}: the header could not define it")
        size = t.get("size", "int", required=True)
        if size < 1 or size > 1024:
            t.fail("size", f"{size} bytes is outside 1..1024")
        c = t.get("c", "str", required=True)
        if not ctext.uses(c, name):
            t.fail("c", f"the C definition does not define {name!r}")
        ty = struct_type(name, name, size, c.strip())
        types[name] = ty
        out.append(ty)
        code.append(UserCode(f"type {name!r}: c", "type", c.strip(), ty))
    return out


OPERATOR_KEYS = {
    "name",
    "type",
    "identity",
    "commutative",
    "combine",
    "combine_body",
    "input",
    "inputs",
    "lift",
    "lift_body",
    "summary",
}


def _read_operators(source: str, data: list[Any], types: dict[str, CType], code: list[UserCode]) -> dict[str, Operator]:
    ops = {}
    for n, raw in enumerate(data):
        t = _Table(source, f"operator[{n}]", raw)
        t.no_other_keys(OPERATOR_KEYS)
        name = t.ident("name")
        if name in BUILTIN_OPERATORS or name in ops:
            t.fail("name", f"operator {name!r} is already defined")
        tname = t.get("type", "str", required=True)
        if tname not in types:
            t.fail("type", f"unknown type {tname!r} (known: {', '.join(types)})")
        acc = types[tname]
        ident = t.get("identity", "str", required=True).strip()
        if not ident:
            t.fail("identity", "is empty")
        commutative = t.get("commutative", "bool", required=True)
        combine = _body(t, "combine", "combine_body", "a and b")
        in_type, inputs, lift = _operator_inputs(t, types, acc)
        identity = f"{acc.c} r = {ident}; return r;"
        summary = _summary(t, name)
        ops[name] = Operator(
            name, in_type, acc, acc, combine, identity, commutative, lift=lift, summary=summary, inputs=inputs
        )
        where = f"operator {name!r}"
        code.append(UserCode(f"{where}: identity", "identity", identity, acc))
        code.append(
            UserCode(f"{where}: {'combine' if 'combine' in t.data else 'combine_body'}", "combine", combine, acc)
        )
        if "input" in t.data or inputs:
            code.append(
                UserCode(
                    f"{where}: {'lift' if 'lift' in t.data else 'lift_body'}", "lift", lift, acc, in_type, inputs=inputs
                )
            )
    return ops


def _operator_inputs(t: _Table, types: dict[str, CType], acc: CType) -> tuple[CType, tuple[CType, ...], str]:
    """An operator's input: (the input type, the input types of several arrays or (), the lift's
    body): its own type and no lift, or `input` and a lift, or `inputs` and a lift of them all."""
    in_name = t.get("input", "str")
    in_names = t.get("inputs", "str|list")
    if in_name is not None and in_names is not None:
        t.fail("inputs", "give either input (one array) or inputs (several), not both")
    if in_names is not None:
        in_names = [in_names] if isinstance(in_names, str) else in_names
        if not 2 <= len(in_names) <= MAX_INPUTS:
            t.fail("inputs", f"lists {len(in_names)} type(s): several inputs are 2 to {MAX_INPUTS} (one: input = ...)")
        for tn in in_names:
            if tn not in types:
                t.fail("inputs", f"unknown type {tn!r} (known: {', '.join(types)})")
        inputs = tuple(types[tn] for tn in in_names)
        in_type = max(inputs, key=lambda ty: ty.size)  # the first of the widest: it sizes the words
        names = ", ".join(f"x{k}" for k in range(len(inputs)))
        return in_type, inputs, _body(t, "lift", "lift_body", f"{names} (element i of each input) and the index i")
    if in_name is not None:
        if in_name not in types:
            t.fail("input", f"unknown type {in_name!r} (known: {', '.join(types)})")
        return types[in_name], (), _body(t, "lift", "lift_body", "x and its index i")
    if t.get("lift", "str") is not None or t.get("lift_body", "str") is not None:
        t.fail("lift", 'needs input = "<type>" (the type of the array elements) or inputs = [...]')
    return acc, (), "return x;"


def _summary(t: _Table, name: str) -> str:
    """The one-line summary of an operator or semiring (its name by default), fit for a C comment."""
    summary = t.get("summary", "str", default=name)
    if re.search(r"/\*|\*/|[\x00-\x1f\x7f]", summary):
        t.fail("summary", f"{summary!r} would not fit in a C comment (no '/*', '*/' or control characters)")
    return summary


def _expand(t: _Table, k: str) -> list[str]:
    v = t.get(k, "str|list")
    v = [v] if isinstance(v, str) else v
    for x in v:
        if v.count(x) > 1:
            t.fail(k, f"{x!r} is listed twice")
    return v


TABLE_KEYS = {
    "reduce": {"op", "type", "block", "items", "name", "blocks_per_sm"},
    "scan": {"op", "type", "block", "items", "name", "blocks_per_sm", "kind"},
    "segscan": {"op", "type", "block", "items", "name", "blocks_per_sm", "kind", "heads", "key"},
    "segreduce": {"op", "type", "block", "items", "name", "blocks_per_sm", "by", "key", "offset"},
    "transpose": {"type", "op", "tile", "rows", "remedy", "naive", "name"},
    "matmul": {"semiring", "type", "layout", "witness", "block", "thread", "warp", "pipeline", "stages", "name"},
    "rows": {"op", "type", "name", "kind"},
    "cols": {"op", "type", "name"},
}


def _choice(t: _Table, k: str, allowed: Sequence[str], default: str) -> str:
    v = t.get(k, "str", default=default)
    if v not in allowed:
        t.fail(k, f"{v!r} is not one of: {', '.join(allowed)}")
    return v


def _index_type(t: _Table, k: str, types: dict[str, CType], default: str | None = None) -> CType:
    """A key or offset type: a builtin integer type."""
    v = t.get(k, "str", default=default, required=default is None)
    if v not in INTEGERS:
        t.fail(k, f"{v!r} is not an integer type (known: {', '.join(INTEGERS)})")
    return types[v]


def _primitives(table_kind: str, t: _Table, types: dict[str, CType]) -> list[tuple[Primitive, Heads, CType | None]]:
    """[(primitive, heads, index type)] that one table asks for."""
    if table_kind == "reduce":
        return [(Primitive.REDUCE, Heads.NONE, None)]
    kinds = _expand(t, "kind") if "kind" in t.data else [ScanKind.INCLUSIVE]
    for k in kinds:
        if k not in tuple(ScanKind):
            t.fail("kind", f'{k!r} is neither "inclusive" nor "exclusive"')
    exclusive = {k: k == ScanKind.EXCLUSIVE for k in kinds}
    if table_kind == "scan":
        return [(Primitive.EXSCAN if exclusive[k] else Primitive.SCAN, Heads.NONE, None) for k in kinds]
    if table_kind == "segscan":
        heads = Heads(_choice(t, "heads", (Heads.FLAGS, Heads.KEYS), Heads.FLAGS))
        if heads == Heads.FLAGS and "key" in t.data:
            t.fail("key", 'only with heads = "keys"')
        index = _index_type(t, "key", types) if heads == Heads.KEYS else None
        return [(Primitive.EXSEGSCAN if exclusive[k] else Primitive.SEGSCAN, heads, index) for k in kinds]
    by = _choice(t, "by", (Heads.OFFSETS, Heads.KEYS), Heads.OFFSETS)
    if by == Heads.OFFSETS:
        if "key" in t.data:
            t.fail("key", 'only with by = "keys"')
        return [(Primitive.SEGREDUCE, Heads.OFFSETS, _index_type(t, "offset", types, "i64"))]
    if "offset" in t.data:
        t.fail("offset", 'only with by = "offsets"')
    return [(Primitive.REDUCE_BY_KEY, Heads.KEYS, _index_type(t, "key", types))]


def _public_name(prefix: str, prim: Primitive, op: Operator, heads: Heads, index: CType | None) -> str:
    base = Primitive.REDUCE if prim == Primitive.REDUCE_BY_KEY else prim
    suffix = f"_by_{index.name}" if heads == Heads.KEYS and index else ""
    return f"{prefix}_{base}_{op.name}_{op.in_type.name}{suffix}"


def _read_transposes(
    source: str, entries: Entries, prefix: str, types: dict[str, CType], user_ops: dict[str, Operator]
) -> Read:
    out: Read = []
    for where, raw in entries:
        t = _Table(source, where, raw)
        t.no_other_keys(TABLE_KEYS["transpose"])
        op = None
        if "op" in t.data:
            op_name = t.get("op", "str")
            if "type" in t.data:
                t.fail("type", "op gives the types (its input in, its type out): leave type out")
            if op_name not in user_ops:
                known = ", ".join(user_ops) or "none in this spec"
                t.fail("op", f"unknown operator {op_name!r}: a transpose maps through a [[operator]]'s lift ({known})")
            op = user_ops[op_name]
            if op.lift == "return x;" and op.in_type == op.acc_type:
                t.fail(
                    "op",
                    f"operator {op_name!r} has no lift (no input = ...): through it a transpose would move its"
                    f" elements unchanged; for that give type = {op.acc_type.name!r} instead of op",
                )
            if op.inputs:
                t.fail("op", f"operator {op_name!r} reads {len(op.inputs)} input arrays: {ONE_INPUT} [[transpose]]")
            type_names = [op.acc_type.name]
        else:
            type_names = _expand(t, "type") if "type" in t.data else t.fail("type", "missing (required)")
        tile, rows = t.get("tile", "int", default=0), t.get("rows", "int", default=0)
        remedy = t.get("remedy", "str", default="")
        naive = t.get("naive", "bool", default=False)
        if naive and op is not None:
            t.fail("naive", "the naive kernel moves bytes as they are: it takes no op")
        name = t.ident("name", required=False)
        if name is not None and len(type_names) != 1:
            t.fail("name", "a public name needs exactly one type")
        for tn in type_names:
            if tn not in types:
                t.fail("type", f"unknown type {tn!r} (known: {', '.join(types)})")
            try:
                shape = tuning.transpose_shape(types[tn].size, tile, rows, remedy, naive)
            except tuning.ShapeError as e:
                t.fail(e.key, f"{e.problem} (type {tn!r}, {types[tn].size} bytes)")
            public = f"{prefix}_transpose_{op.name if op else tn}"
            if name is not None:
                public = name if name.startswith(prefix + "_") else f"{prefix}_{name}"
            out.append((t, Transpose(prefix, types[tn], shape.tile, shape.rows, shape.remedy, public, naive, op)))
    return out


def _read_semirings(source: str, data: list[Any], types: dict[str, CType], code: list[UserCode]) -> dict[str, Semiring]:
    out = {}
    for n, raw in enumerate(data):
        t = _Table(source, f"semiring[{n}]", raw)
        t.no_other_keys(
            {"name", "type", "a", "b", "c", "zero", "add", "mul", "step", "selective", "summary", "fast", "fast_step"}
        )
        name = t.ident("name")
        if name in BUILTIN_SEMIRINGS or name in out:
            t.fail("name", f"semiring {name!r} is already defined")
        one = t.get("type", "str")
        picked = {}
        for k in ("a", "b", "c"):
            tn = t.get(k, "str", default=one)
            if tn is None:
                t.fail(k, "missing: give type (all three) or a, b and c")
            if tn not in types:
                t.fail(k if k in t.data else "type", f"unknown type {tn!r} (known: {', '.join(types)})")
            picked[k] = types[tn]
        zero = t.get("zero", "str", required=True).strip()
        if not zero:
            t.fail("zero", "is empty")
        add = f"return {_expr(t, 'add')};"
        mul = f"return {_expr(t, 'mul')};"
        step = f"return {_expr(t, 'step')};" if "step" in t.data else "return ag_sr_add(c, ag_sr_mul(a, b));"
        selective = t.get("selective", "bool", default=False)
        summary = _summary(t, name)
        C = picked["c"]
        fast = fast_step = ""
        if ("fast" in t.data) != ("fast_step" in t.data):
            t.fail("fast" if "fast" in t.data else "fast_step", "fast and fast_step go together")
        if "fast" in t.data:
            fast, fast_step = f"return {_expr(t, 'fast')};", f"return {_expr(t, 'fast_step')};"
        sr = Semiring(name, picked["a"], picked["b"], C, zero, add, mul, step, selective, summary, fast, fast_step)
        out[name] = sr
        where = f"semiring {name!r}"
        code.append(UserCode(f"{where}: zero", "sr_zero", f"{C.c} r = {zero}; return r;", C))
        code.append(UserCode(f"{where}: add", "sr_add", add, C))
        code.append(UserCode(f"{where}: mul", "sr_mul", mul, C, picked["a"], picked["b"]))
        if "step" in t.data:
            code.append(UserCode(f"{where}: step", "sr_step", step, C, picked["a"], picked["b"]))
        if fast:
            for k in ("a", "b") if picked["a"] != picked["b"] else ("a",):
                code.append(UserCode(f"{where}: fast", "sr_fast", fast, C, picked[k]))
            code.append(UserCode(f"{where}: fast_step", "sr_step", fast_step, C, picked["a"], picked["b"]))
    return out


def _expr(t: _Table, k: str) -> str:
    v = t.get(k, "str", required=True).strip()
    if not v:
        t.fail(k, "is empty")
    return v


LAYOUTS = ("nn", "nt", "tn", "tt")


def _read_matmuls(
    source: str, entries: Entries, prefix: str, types: dict[str, CType], semirings: dict[str, Semiring]
) -> Read:
    out: Read = []
    for where, raw in entries:
        t = _Table(source, where, raw)
        t.no_other_keys(TABLE_KEYS["matmul"])
        names = _expand(t, "semiring") if "semiring" in t.data else t.fail("semiring", "missing (required)")
        type_names = _expand(t, "type") if "type" in t.data else None
        layouts = _expand(t, "layout") if "layout" in t.data else ["nn"]
        for lay in layouts:
            if lay not in LAYOUTS:
                t.fail("layout", f"{lay!r} is not one of: {', '.join(LAYOUTS)} (A and B as stored: n, or t transposed)")
        witness = t.get("witness", "bool", default=False)
        block = tuple(_int_list(t, "block", 3))
        thread = tuple(_int_list(t, "thread", 2))
        warp = tuple(_int_list(t, "warp", 2))
        pipeline = t.get("pipeline", "str", default=None)
        stages = t.get("stages", "int", default=None)
        name = t.ident("name", required=False)
        combos = _semirings(t, names, type_names, semirings)
        if name is not None and len(combos) * len(layouts) != 1:
            t.fail("name", "a public name needs exactly one semiring, type and layout")
        for sr in combos:
            if witness and not sr.selective:
                t.fail("witness", f"semiring {sr.name!r}: a witness needs a selective add (min or max)")
            try:
                _matmul_shape(sr, witness, block, thread, warp, pipeline, stages)
            except tuning.ShapeError as e:
                t.fail(e.key, e.problem)
            for lay in layouts:
                public = f"{prefix}_matmul_{sr.name}" + (f"_{sr.c_type.name}" if sr.name in BUILTIN_SEMIRINGS else "")
                public += ("" if lay == "nn" else f"_{lay}") + ("_witness" if witness else "")
                if name is not None:
                    public = name if name.startswith(prefix + "_") else f"{prefix}_{name}"
                out.append((t, Matmul(prefix, sr, lay, witness, block, thread, public, warp, pipeline, stages)))
    return out


def _semirings(
    t: _Table, names: list[str], type_names: list[str] | None, semirings: dict[str, Semiring]
) -> list[Semiring]:
    """The semirings a [[matmul]]'s `semiring` and `type` keys name (lists expanded), each checked."""
    combos = []
    for sn in names:
        if sn in semirings:
            if type_names is not None:
                t.fail("type", f"semiring {sn!r} has its own types: leave type out")
            combos.append(semirings[sn])
        elif sn in BUILTIN_SEMIRINGS:
            if type_names is None:
                t.fail("type", f"missing: builtin semiring {sn!r} needs a type")
            allowed = BUILTIN_SEMIRINGS[sn][0]
            for tn in type_names:
                if tn not in allowed:
                    t.fail("type", f"semiring {sn!r} takes {', '.join(allowed)}, not {tn!r}")
                combos.append(builtin_semiring(sn, tn))
        else:
            known = list(BUILTIN_SEMIRINGS) + list(semirings)
            t.fail("semiring", f"unknown semiring {sn!r} (known: {', '.join(known)})")
    return combos


def _int_list(t: _Table, k: str, length: int) -> list[int]:
    if k not in t.data:
        return []
    v = t.data[k]
    if not (
        isinstance(v, list) and len(v) == length and all(isinstance(x, int) and not isinstance(x, bool) for x in v)
    ):
        t.fail(k, f"expected a list of {length} integers, got {v!r}")
    return v


def _operators(
    t: _Table,
    prefix: str,
    op_names: list[str],
    type_names: list[str] | None,
    types: dict[str, CType],
    user_ops: dict[str, Operator],
) -> list[Operator]:
    """The operators a table's `op` and `type` keys name (lists expanded), each checked."""
    combos = []
    for op_name in op_names:
        if op_name in user_ops:
            op = user_ops[op_name]
            for tn in type_names or [op.in_type.name]:
                if tn != op.in_type.name and op.inputs:
                    what = ", ".join(ty.name for ty in op.inputs)
                    t.fail(
                        "type",
                        f"operator {op_name!r} reads {what}; its instances are named by the widest,"
                        f" {op.in_type.name!r}: leave type out or give that, not {tn!r}",
                    )
                if tn != op.in_type.name:
                    t.fail("type", f"operator {op_name!r} reduces {op.in_type.name}, not {tn!r}")
            combos.append(op)
        elif op_name in BUILTIN_OPERATORS:
            allowed = BUILTIN_OPERATORS[op_name][0]
            if type_names is None:
                t.fail("type", f"missing: builtin operator {op_name!r} needs a type")
            for tn in type_names:
                if tn not in types:
                    t.fail("type", f"unknown type {tn!r} (known: {', '.join(types)})")
                if tn not in allowed:
                    t.fail("type", f"operator {op_name!r} does not apply to {tn!r} (it takes: {', '.join(allowed)})")
                combos.append(builtin(prefix, op_name, types[tn]))
        else:
            known = list(BUILTIN_OPERATORS) + list(user_ops)
            t.fail("op", f"unknown operator {op_name!r} (known: {', '.join(known)})")
    return combos


def _read_axis(
    kind: str, source: str, entries: Entries, prefix: str, types: dict[str, CType], user_ops: dict[str, Operator]
) -> Read:
    """[[rows]] or [[cols]]: a reduce along each row (or a scan: kind), or down each column"""
    out: Read = []
    for where, raw in entries:
        t = _Table(source, where, raw)
        t.no_other_keys(TABLE_KEYS[kind])
        op_names = _expand(t, "op") if "op" in t.data else t.fail("op", "missing (required)")
        type_names = _expand(t, "type") if "type" in t.data else None
        name = t.ident("name", required=False)
        combos = _operators(t, prefix, op_names, type_names, types, user_ops)
        for op in combos:
            if op.inputs:
                t.fail("op", f"operator {op.name!r} reads {len(op.inputs)} input arrays: {ONE_INPUT} [[{kind}]]")
        scans = {"reduce": "reduce", "inclusive": "scan", "exclusive": "exscan"}
        row_kinds = _expand(t, "kind") if "kind" in t.data else ["reduce"]
        for k in row_kinds:
            if k not in scans:
                t.fail("kind", f'{k!r} is none of "reduce", "inclusive", "exclusive"')
        if name is not None and len(combos) * len(row_kinds) != 1:
            t.fail("name", "a public name needs exactly one op, one type and one kind")
        for k in row_kinds:
            for op in combos:
                public = f"{prefix}_{kind}_{scans[k]}_{op.name}_{op.in_type.name}"
                if name is not None:
                    public = name if name.startswith(prefix + "_") else f"{prefix}_{name}"
                if kind == "rows":
                    out.append((t, Rows(prefix, op, public, scans[k])))
                else:
                    out.append((t, Cols(prefix, op, public)))
    return out


def _read_instances(
    table_kind: str,
    source: str,
    entries: Entries,
    prefix: str,
    types: dict[str, CType],
    user_ops: dict[str, Operator],
) -> Read:
    """entries: (where, table) pairs of one kind of table; `where` names the table in errors."""
    if table_kind == "transpose":
        return _read_transposes(source, entries, prefix, types, user_ops)
    out: Read = []
    for where, raw in entries:
        t = _Table(source, where, raw)
        t.no_other_keys(TABLE_KEYS[table_kind])
        primitives = _primitives(table_kind, t, types)
        op_names = _expand(t, "op") if "op" in t.data else t.fail("op", "missing (required)")
        type_names = _expand(t, "type") if "type" in t.data else None
        block = _check_block(t, "block", t.get("block", "int"))
        items_raw = t.get("items", "int")
        per_sm = t.get("blocks_per_sm", "int", default=0)
        if per_sm and not 1 <= per_sm <= min(32, 2048 // block):
            t.fail("blocks_per_sm", f"{per_sm} is outside 1..{min(32, 2048 // block)} for blocks of {block} threads")
        name = t.ident("name", required=False)
        combos = _operators(t, prefix, op_names, type_names, types, user_ops)
        if name is not None and len(combos) * len(primitives) != 1:
            t.fail("name", "a public name needs exactly one op, one type and one kind")
        for prim, heads, index in primitives:
            for op in combos:
                inst = Instance(prefix, prim, op, block, 1, "", heads, index)
                if items_raw is None:
                    items = tuning.default_items(inst)
                    problem = tuning.items_problem(inst, items)
                    if problem:
                        t.fail("block", f"no tile fits blocks of {block} threads: {problem}")
                else:
                    items = items_raw
                    problem = tuning.items_problem(inst, items)
                    if problem:
                        t.fail("items", problem)
                public = _public_name(prefix, prim, op, heads, index)
                if name is not None:  # the prefix is added unless the name already has it
                    public = name if name.startswith(prefix + "_") else f"{prefix}_{name}"
                sized = items_raw is None and not per_sm and block == tuning.DEFAULT_BLOCK
                out.append((t, Instance(prefix, prim, op, block, items, public, heads, index, per_sm, sized)))
    return out


def parse(
    data: dict[str, Any], source: str, extra: Sequence[tuple[str, str]] = (), prefix_override: str | None = None
) -> Spec:
    """Check a spec already read into Python values; return the Spec or raise SpecError.
    `extra`: command-line entries, (table kind, text) pairs such as ("scan", "sum:f32:b256")."""
    top = _Table(source, "", data)
    top.no_other_keys({"prefix", "type", "operator", "semiring", "nccl", *TABLE_KEYS})
    prefix = _prefix(top, prefix_override)
    for k in ("type", "operator", "semiring", *TABLE_KEYS):
        if k in data and not (isinstance(data[k], list) and all(isinstance(x, dict) for x in data[k])):
            top.fail(k, f"expected an array of tables ([[{k}]]), got {_kind(data[k])}")

    nccl = top.get("nccl", "bool", default=False)
    types = dict(BUILTIN_TYPES)
    code: list[UserCode] = []
    user_types = _read_types(source, data.get("type", []), types, code)
    user_ops = _read_operators(source, data.get("operator", []), types, code)
    semirings = _read_semirings(source, data.get("semiring", []), types, code)
    instances = _read_tables(source, data, extra, prefix, types, user_ops, semirings)
    if not instances:
        raise SpecError(
            source,
            "reduce",
            "the spec asks for no kernel (add a [[reduce]], [[scan]], [[segscan]], [[segreduce]], "
            "[[transpose]], [[matmul]], [[rows]] or [[cols]] table, or --reduce / --scan)",
        )
    _check_names(source, user_types, instances, nccl)
    _check_user_code(source, prefix, code, user_types, instances, nccl)
    notes = _nccl_notes(top, nccl, instances)
    content = json.dumps([data, [list(e) for e in extra], prefix_override], sort_keys=True, default=str)
    digest = "sha256:" + hashlib.sha256(content.encode()).hexdigest()[:16]
    kernels = [inst for _, inst in instances]
    return Spec(prefix, source, user_types, user_ops, kernels, digest, code, nccl, notes=notes)


def _prefix(top: _Table, prefix_override: str | None) -> str:
    """The symbol prefix: the command line's (--prefix) or the spec's, checked."""
    if prefix_override is not None:
        if not IDENT.fullmatch(prefix_override):
            raise SpecError("command line", "--prefix", ident_problem(prefix_override))
        prefix = prefix_override
    else:
        prefix = top.get("prefix", "str", required=True)
        if not IDENT.fullmatch(prefix):
            top.fail("prefix", ident_problem(prefix))
    problem = ""
    if prefix.startswith("__") or len(prefix) > MAX_PREFIX:
        problem = f"{prefix[:40]!r} should not start with '__' and has at most {MAX_PREFIX} characters"
    elif prefix in C_KEYWORDS:
        problem = f"{prefix!r} is a C or C++ keyword"
    elif prefix.lower() in SHADOWED_HEADERS:
        problem = f"{prefix!r} would write {prefix}.h, which shadows the standard or CUDA header of that name"
    if problem:
        if prefix_override is not None:
            raise SpecError("command line", "--prefix", problem)
        top.fail("prefix", problem)
    return prefix


def _read_tables(
    source: str,
    data: dict[str, Any],
    extra: Sequence[tuple[str, str]],
    prefix: str,
    types: dict[str, CType],
    user_ops: dict[str, Operator],
    semirings: dict[str, Semiring],
) -> Read:
    """[(table, instance)] of every kernel table of the file, then of the command line."""
    instances: Read = []
    for kind in TABLE_KEYS:
        file_entries = [(f"{kind}[{n}]", raw) for n, raw in enumerate(data.get(kind, []))]
        if kind == "matmul":
            instances += _read_matmuls(source, file_entries, prefix, types, semirings)
        elif kind in ("rows", "cols"):
            instances += _read_axis(kind, source, file_entries, prefix, types, user_ops)
        else:
            instances += _read_instances(kind, source, file_entries, prefix, types, user_ops)
    for kind in CLI_KINDS:
        cli_entries = [(f"--{kind} {text}", parse_cli_entry(kind, text)) for k, text in extra if k == kind]
        instances += _read_instances(kind, "command line", cli_entries, prefix, types, user_ops)
    return instances


def _check_names(source: str, user_types: list[CType], instances: Read, nccl: bool) -> None:
    """Every name the header declares, and which table asked for it: no two may be the same."""
    owner = {ty.name: f"type[{n}]" for n, ty in enumerate(user_types)}
    for t, inst in instances:
        for ty in inst.extra_types:  # pair and accumulator structs of builtin operators
            if ty not in user_types and owner.get(ty.name, "generated") != "generated":
                raise SpecError(
                    source,
                    f"{owner[ty.name]}.name",
                    f"{ty.name!r} is also the type the generator declares for {t.where}",
                )
            owner.setdefault(ty.name, "generated")
        for symbol in _symbols(inst, nccl):
            if symbol in owner:
                if t.source == "command line" or owner[symbol].startswith("--"):
                    t.fail("", f"asks for {symbol}, which {owner[symbol]} already asks for: drop one of them")
                t.fail("name", f"{symbol} is generated twice (also by {owner[symbol]}); give one of them a name")
            owner[symbol] = t.where


NCCL_PRIMITIVES = (Primitive.REDUCE, Primitive.SCAN, Primitive.EXSCAN)  # what goes across ranks (nccl)


def not_across_ranks(inst: Instance) -> str:
    """Why a reduce or scan does not also go across the ranks of an NCCL communicator, or ''."""
    if inst.op.lift_reads_index:
        return f"operator {inst.op.name!r} has a lift that reads the index i, which a rank's part does not know"
    if inst.op.inputs:
        return f"operator {inst.op.name!r} reads {len(inst.op.inputs)} input arrays (across ranks, one array a rank)"
    return ""


def _symbols(inst: Kernel, nccl: bool) -> tuple[str, ...]:
    """The C functions the header declares for `inst` (with nccl, those across ranks too)."""
    if not (nccl and isinstance(inst, Instance) and inst.primitive in NCCL_PRIMITIVES and not not_across_ranks(inst)):
        return inst.symbols
    name = inst.public_name
    across = ("_nccl_all", "_nccl_root") if inst.primitive == Primitive.REDUCE else ("_nccl",)
    return (*inst.symbols, f"{name}_nccl_workspace_bytes", *(name + a for a in across))


def _nccl_notes(top: _Table, nccl: bool, instances: Read) -> list[str]:
    """nccl = true: a note for each reduce and scan that does not go across ranks; an error where none does."""
    if not nccl:
        return []
    kinds = [i for _, i in instances if isinstance(i, Instance) and i.primitive in NCCL_PRIMITIVES]
    left = [f"{i.public_name}: not across ranks (nccl): {not_across_ranks(i)}" for i in kinds if not_across_ranks(i)]
    if not kinds:
        top.fail("nccl", "true, but the spec has no [[reduce]] or [[scan]], the only instances that go across ranks")
    if len(left) == len(kinds):
        top.fail("nccl", "true, but no instance goes across ranks: " + "; ".join(left))
    return left


# Names the generated code declares for itself: a user's C may not use them (a macro would replace it,
# a declaration would clash); `assocgen_` names the probe's and the single header's own.
_INTERNAL = re.compile(r"(?i:ag_)|assocgen_")
# the header's macros, after PREFIX in capitals (templates/header.h.j2; _H: its include guard)
HEADER_MACROS = ("_H", "_IMPLEMENTATION", "_IMPLEMENTATION_DONE", "_ASSOCGEN_VERSION", "_SPEC_DIGEST", "_TUNING")


def _check_user_code(
    source: str, prefix: str, code: list[UserCode], user_types: list[CType], instances: Read, nccl: bool
) -> None:
    """No name of the user's C (and no user type's name) is one the generator declares: its own
    (`ag_`, `AG_`), the header's functions, types and macros."""
    declared = {ty.name for _, i in instances for ty in i.extra_types if ty not in user_types}
    declared |= {s for _, i in instances for s in _symbols(i, nccl)}
    macros = {prefix.upper() + m for m in HEADER_MACROS}
    for n, ty in enumerate(user_types):
        if ty.name in macros:
            raise SpecError(source, f"type[{n}].name", f"{ty.name!r} is a macro of the header")
    for t, inst in instances:
        if any(symbol in macros for symbol in _symbols(inst, nccl)):
            t.fail("name", f"{inst.public_name!r} is a macro of the header: give the function another name")
    for c in code:
        not_members = set(ctext.names(c.text))
        for name in dict.fromkeys(ctext.all_names(c.text)):
            if _INTERNAL.match(name):
                why = "starts with ag_ (any case) or assocgen_, the prefixes of the generated code's own names"
            elif name in macros:
                why = "is a macro of the header"
            elif c.kind == "type" and name in declared and name in not_members:
                why = "is a name the header declares (a function or a type of the generated code)"
            else:
                continue
            raise SpecError(source, c.key, f"{name!r} {why}: give it another name")


def load(path: str | None, extra: Sequence[tuple[str, str]] = (), prefix_override: str | None = None) -> Spec:
    """Read a TOML spec file (path may be None: command line only)."""
    if path is None:
        if prefix_override is None:
            raise SpecError("command line", "--prefix", "missing: give a spec file or --prefix")
        return parse({}, "command line", extra, prefix_override)
    source = str(path)
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except FileNotFoundError:
        raise SpecError(source, "", "no such file") from None
    except IsADirectoryError:
        raise SpecError(source, "", "is a directory, not a spec file") from None
    except PermissionError:
        raise SpecError(source, "", "cannot be read (permission denied)") from None
    except UnicodeDecodeError as e:
        raise SpecError(source, "", f"is not UTF-8 text ({e.reason})") from None
    except tomllib.TOMLDecodeError as e:
        raise SpecError(source, "", f"not valid TOML: {e}") from None
    return parse(data, source, extra, prefix_override)


CLI_KINDS = ("reduce", "scan")  # tables the command line can add to, as --reduce / --scan
CLI_FORMS = {
    "reduce": "OP:TYPE[:bBLOCK][:tITEMS], e.g. sum:f32:b256:t16",
    "scan": "OP:TYPE[:bBLOCK][:tITEMS][:inclusive|:exclusive], e.g. sum:f32:b256:exclusive",
}


def parse_cli_entry(kind: str, text: str) -> dict[str, Any]:
    """`--reduce OP:TYPE[:bBLOCK][:tITEMS]` -> a [[reduce]] table; `--scan` the same, with a kind."""
    where = f"--{kind} {text}"
    parts = text.split(":")
    if len(parts) < 2 or not parts[0] or not parts[1]:
        raise SpecError("command line", where, f"expected {CLI_FORMS[kind]}")
    table: dict[str, Any] = {"op": parts[0], "type": parts[1]}
    given: dict[str, str] = {}
    value: str | int
    for p in parts[2:]:
        if kind == "scan" and p in ("inclusive", "exclusive"):
            key, value = "kind", p
        else:
            m = re.fullmatch(r"([bt])(\d+)", p)
            if not m:
                what = "bBLOCK, tITEMS, inclusive nor exclusive" if kind == "scan" else "bBLOCK nor tITEMS"
                raise SpecError("command line", where, f"{p!r} is neither {what}")
            if m.group(2).startswith("0") and m.group(2) != "0":
                raise SpecError("command line", where, f"{p!r}: write the number without leading zeros")
            key, value = "block" if m.group(1) == "b" else "items", int(m.group(2))
        if key in given:
            raise SpecError("command line", where, f"{p!r} conflicts with {given[key]!r}: give the {key} once")
        given[key] = p
        table[key] = value
    return table
