"""Operators as contracts (the PyOpenCL scan generator's idea): an operator is data.

Every operator, builtin or user, is an `Operator`: the input element type, the accumulator
type, the result type, and four C function bodies:

    lift(x, i)     input element x at global index i -> accumulator     (default: x itself);
                   with several inputs, lift(x0, x1, ..., i): element i of each input array
    combine(a, b)  accumulator x accumulator -> accumulator, associative
    identity()     the accumulator e with combine(e, a) == combine(a, e) == a
    finalize(r)    accumulator -> result                                (default: r itself)

and a `commutative` flag.  Templates only ever read these fields; they never look at an
operator's name.  A non-commutative operator is folded in input order, x[0] (+) x[1] (+) ...
"""

from collections.abc import Callable
from dataclasses import dataclass

from . import ctext
from .ctypes_ import BUILTIN_TYPES, CType, struct_type


@dataclass(frozen=True)
class Operator:
    name: str
    in_type: CType
    acc_type: CType
    out_type: CType
    combine: str
    identity: str
    commutative: bool
    lift: str = "return x;"
    finalize: str = "return r;"
    summary: str = ""
    nccl_op: str = ""  # NCCL's own reduction of the same result (commutative builtins), or ""
    # several input arrays (CTypes, two or more), read element by element in step: the lift takes
    # x0, x1, ... and i; in_type is then the widest of them (what sizes the tiles' words)
    inputs: tuple = ()

    @property
    def in_types(self) -> tuple:
        """The input arrays' element types, one or several."""
        return self.inputs or (self.in_type,)

    @property
    def lift_params(self) -> str:
        """The lift's element parameters in C: `float x`, or `float x0, float x1` for several."""
        if not self.inputs:
            return f"{self.in_type.c} x"
        return ", ".join(f"{t.c} x{k}" for k, t in enumerate(self.inputs))

    @property
    def lift_args(self) -> str:
        """The lift's element parameters' names: `x`, or `x0, x1`."""
        return ", ".join(f"x{k}" for k in range(len(self.inputs))) if self.inputs else "x"

    @property
    def lift_reads_index(self) -> bool:
        """Whether the lift reads the element's index `i` (argmin's does): the name `i` in its code,
        not in a comment or a literal, not a member (`r.i`, `p->i`)."""
        return ctext.uses(self.lift, "i")

    @property
    def struct_types(self) -> list[CType]:
        """The distinct struct types among inputs, accumulator and result."""
        seen = []
        for t in (*self.in_types, self.acc_type, self.out_type):
            if t.kind == "struct" and t not in seen:
                seen.append(t)
        return seen

    @property
    def extra_types(self) -> list[CType]:
        """Types this operator brings along (pair structs, compensated accumulators)."""
        return [t for t in self.struct_types if t.definition]


def _ret(expr: str) -> str:
    return f"return {expr};"


Factory = Callable[[str, CType], Operator]  # a builtin operator of a type, named with the prefix


# ----------------------------------------------------------------------------------------------
# builtin operators: name -> (applies to, factory(prefix, type) -> Operator, one-line summary)


def _sum(prefix: str, t: CType) -> Operator:
    if t.is_integer:  # wraps modulo 2^bits, as the C unsigned types do; no signed overflow
        body = _ret(f"({t.c})(({t.wide})a + ({t.wide})b)")
    else:
        body = _ret("a + b")
    return Operator("sum", t, t, t, body, _ret(f"({t.c})0"), True, summary="sum", nccl_op="ncclSum")


def _prod(prefix: str, t: CType) -> Operator:
    if t.is_integer:
        body = _ret(f"({t.c})(({t.wide})a * ({t.wide})b)")
    else:
        body = _ret("a * b")
    return Operator("prod", t, t, t, body, _ret(f"({t.c})1"), True, summary="product", nccl_op="ncclProd")


def _minmax(which: str) -> Factory:
    def make(prefix: str, t: CType) -> Operator:
        if t.is_float:
            fn = {"min": "fmin", "max": "fmax"}[which] + ("f" if t.size == 4 else "")
            body = _ret(f"{fn}(a, b)")
        else:
            body = _ret("b < a ? b : a") if which == "min" else _ret("a < b ? b : a")
        ident = t.literal_max if which == "min" else t.literal_min
        # NCCL's min and max on floats need not treat NaN as fmin / fmax do: integers only
        nccl_op = "" if t.is_float else {"min": "ncclMin", "max": "ncclMax"}[which]
        summary = "minimum" if which == "min" else "maximum"
        return Operator(which, t, t, t, body, _ret(ident), True, summary=summary, nccl_op=nccl_op)

    return make


def _bitwise(which: str, sym: str, ident: str) -> Factory:
    def make(prefix: str, t: CType) -> Operator:
        return Operator(
            which, t, t, t, _ret(f"({t.c})(a {sym} b)"), _ret(ident.format(c=t.c)), True, summary=f"bitwise {which}"
        )

    return make


def arg_type(prefix: str, t: CType) -> CType:
    """The (value, index) pair that argmin/argmax return; public, declared in the header."""
    name = f"{prefix}_arg_{t.name}"
    definition = f"typedef struct {{ {t.c} value; int64_t index; }} {name};  /* index -1: empty input */"
    return struct_type(name, name, 16 if t.size <= 8 else t.size + 8, definition)


def _arg(which: str) -> Factory:
    def make(prefix: str, t: CType) -> Operator:
        pair = arg_type(prefix, t)
        better = "b.value < a.value" if which == "min" else "a.value < b.value"
        # Ties go to the lower index; the identity's index -1 compares as the largest.
        combine = (
            f"if ({better} || (b.value == a.value && (uint64_t)b.index < (uint64_t)a.index)) return b;\n    return a;"
        )
        ident_value = t.literal_max if which == "min" else t.literal_min
        identity = f"{pair.c} r; r.value = {ident_value}; r.index = -1; return r;"
        lift = f"{pair.c} r; r.value = x; r.index = (int64_t)i; return r;"
        return Operator(
            f"arg{which}",
            t,
            pair,
            pair,
            combine,
            identity,
            True,
            lift=lift,
            summary=f"arg{which}: (value, lowest index of it)",
        )

    return make


def _ksum(prefix: str, t: CType) -> Operator:
    """Kahan-Babuska / Neumaier compensated sum: a running sum and its lost low-order part."""
    name = f"{prefix}_ksum_{t.name}"  # public: an exclusive scan's init has this type
    acc = struct_type(
        name, name, 2 * t.size, f"typedef struct {{ {t.c} sum; {t.c} err; }} {name};  /* value: sum + err */"
    )
    combine = (
        f"{name} r;\n"
        f"    r.sum = a.sum + b.sum;\n"
        f"    /* the low-order bits the addition dropped, recovered exactly (Neumaier) */\n"
        f"    {t.c} lost = fabs(a.sum) >= fabs(b.sum) ? (a.sum - r.sum) + b.sum : (b.sum - r.sum) + a.sum;\n"
        f"    r.err = (a.err + b.err) + lost;\n"
        f"    return r;"
    )
    identity = f"{name} r; r.sum = 0; r.err = 0; return r;"
    lift = f"{name} r; r.sum = x; r.err = 0; return r;"
    return Operator(
        "ksum",
        t,
        acc,
        t,
        combine,
        identity,
        True,
        lift=lift,
        finalize="return r.sum + r.err;",
        summary="compensated (Neumaier) sum",
    )


INTEGERS = tuple(n for n, t in BUILTIN_TYPES.items() if t.is_integer)
FLOATS = tuple(n for n, t in BUILTIN_TYPES.items() if t.is_float)
NUMERIC = INTEGERS + FLOATS

BUILTIN_OPERATORS: dict[str, tuple[tuple[str, ...], Factory]] = {
    "sum": (NUMERIC, _sum),
    "prod": (NUMERIC, _prod),
    "min": (NUMERIC, _minmax("min")),
    "max": (NUMERIC, _minmax("max")),
    "and": (INTEGERS, _bitwise("and", "&", "({c})~0")),
    "or": (INTEGERS, _bitwise("or", "|", "({c})0")),
    "xor": (INTEGERS, _bitwise("xor", "^", "({c})0")),
    "argmin": (NUMERIC, _arg("min")),
    "argmax": (NUMERIC, _arg("max")),
    "ksum": (FLOATS, _ksum),
}


def builtin(prefix: str, name: str, t: CType) -> Operator:
    return BUILTIN_OPERATORS[name][1](prefix, t)


# ----------------------------------------------------------------------------------------------
# derived operators: what the scan family runs


def segmented(op: Operator, counted: bool = False) -> Operator:
    """The segmented form of `op` (Blelloch; Schwartz): a value and a head flag,

        (a, fa) (+) (b, fb) = (fb ? b : a (+) b,  fa | fb)

    associative whenever `op` is, and never commutative.  A scan with it restarts at every head.
    `counted` adds the number of heads folded, which numbers the segments (reduce by key)."""
    acc = op.acc_type
    name = f"ag_seg{'c' if counted else ''}_{acc.name}"
    # 8-byte aligned whatever the value's own alignment (up to 8), so the size is known here
    size = ((acc.size + 3) // 4 * 4 + 4 + 7) // 8 * 8 + (8 if counted else 0)
    t = struct_type(
        name,
        name,
        size,
        f"/* a segment's fold so far; head: a segment starts inside{'; count: heads' if counted else ''} */\n"
        f"typedef struct __align__(8) {{ {acc.c} v; uint32_t head; {'uint64_t count; ' if counted else ''}}} {name};",
        public=False,
    )
    combine = (
        f"{name} r;\n"
        f"    r.v = b.head ? b.v : ag_op_combine(a.v, b.v);\n"
        f"    r.head = a.head | b.head;\n" + ("    r.count = a.count + b.count;\n" if counted else "") + "    return r;"
    )
    identity = (
        f"{name} r;\n    r.v = ag_op_identity();\n    r.head = 0;\n"
        + ("    r.count = 0;\n" if counted else "")
        + "    return r;"
    )
    lift = (
        f"{name} r;\n    r.v = ag_op_lift({op.lift_args}, i);\n    r.head = head;\n"
        + ("    r.count = head;\n" if counted else "")
        + "    return r;"
    )
    return Operator(
        f"seg_{op.name}",
        op.in_type,
        t,
        op.out_type,
        combine,
        identity,
        False,
        lift=lift,
        finalize="return ag_op_finalize(r.v);",
        summary=f"segmented {op.summary}",
        inputs=op.inputs,
    )
