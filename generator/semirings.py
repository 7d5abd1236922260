"""Semirings for the tiled matrix multiply: C = A (x) B over (add, mul), or C = C (+) A (x) B.

A semiring is data, like an operator (operators.py):

    zero           add's identity; it annihilates mul (mul(zero, b) = zero), so a tile's rows
                   and columns past the matrix's edge can hold it and change nothing
    add(x, y)      associative and commutative, over the type of C
    mul(a, b)      A's element times B's, into C's type
    step(c, a, b)  add(c, mul(a, b)) in one expression (an FMA, a fused add-and-min), optional
    selective      add returns one of its arguments (min, max): a witness can say which k won
    fast(v)        optional, with fast_step: where every element of a step's tiles of A and B
    fast_step      satisfies fast, fast_step(c, a, b) gives step's result with fewer instructions
                   (the integer min-plus: no saturation where no element is the zero, so
                   Hopper's fused add-and-min, __viaddmin_s32, is exact)

The builtins are the semirings the classic path problems run on: plus-times (the matrix
product), min-plus (shortest paths), max-plus (longest paths, Viterbi-like recurrences),
max-min (bottleneck paths), min-max, and or-and (reachability; over u32 words, 32 boolean
matrices a word, bitwise)."""

from dataclasses import dataclass

from .ctypes_ import BUILTIN_TYPES, CType


@dataclass(frozen=True)
class Semiring:
    name: str
    a_type: CType
    b_type: CType
    c_type: CType
    zero: str  # a C expression of C's type
    add: str  # a C function body of x and y
    mul: str  # a C function body of a and b
    step: str  # a C function body of c, a and b
    selective: bool = False
    summary: str = ""
    fast: str = ""  # a C function body of v (an element of A or of B): fast_step is exact
    fast_step: str = ""  # a C function body of c, a and b


def _ret(expr: str) -> str:
    return f"return {expr};"


FLOATS_AND_I32 = ("f32", "f64", "i32")


def _plus_times(t: CType) -> Semiring:
    if t.is_integer:
        add = _ret(f"({t.c})(({t.wide})x + ({t.wide})y)")
        mul = _ret(f"({t.c})(({t.wide})a * ({t.wide})b)")
        step = _ret(f"({t.c})(({t.wide})c + ({t.wide})a * ({t.wide})b)")
    else:
        add, mul, step = _ret("x + y"), _ret("a * b"), _ret("c + a * b")  # contracted to an FMA
    return Semiring("plus_times", t, t, t, f"({t.c})0", add, mul, step, False, "(+, x): the matrix product")


def _fminmax(which: str, t: CType) -> str:
    return ("fmin" if which == "min" else "fmax") + ("f" if t.size == 4 else "")


def _best(which: str, t: CType, x: str, y: str) -> str:
    if t.is_float:
        return f"{_fminmax(which, t)}({x}, {y})"
    return f"({y} < {x} ? {y} : {x})" if which == "min" else f"({x} < {y} ? {y} : {x})"


def _plus(t: CType, a: str, b: str) -> str:
    return f"({t.c})(({t.wide}){a} + ({t.wide}){b})" if t.is_integer else f"{a} + {b}"


def _tropical(best: str, t: CType) -> Semiring:
    """min-plus or max-plus: add is the minimum (maximum), mul the sum; zero +inf (-inf), or the
    integer's largest (smallest), which a sum with it saturates to"""
    if t.is_float:
        zero = t.literal_max if best == "min" else t.literal_min
        mul = _ret(_plus(t, "a", "b"))
    else:
        zero = t.literal_max if best == "min" else t.literal_min
        # the zero annihilates: a sum with it stays it (no wrap past the integer's range)
        mul = _ret(f"a == {zero} || b == {zero} ? {zero} : {_plus(t, 'a', 'b')}")
    add = _ret(_best(best, t, "x", "y"))
    step = mul.replace("return ", f"const {t.c} s = ") + "\n" + _ret(_best(best, t, "c", "s"))
    what = "shortest paths" if best == "min" else "longest paths"
    name = f"{best}_plus"
    fast = fast_step = ""
    if t.c == "int32_t":  # no element the zero: a wrapping sum, as the step's, fused with min (max)
        fast, fast_step = _ret(f"v != {zero}"), _ret(f"__viadd{best}_s32(a, b, c)")
    return Semiring(name, t, t, t, zero, add, mul, step, True, f"({best}, +): {what}", fast, fast_step)


def _bottleneck(outer: str, t: CType) -> Semiring:
    """max-min (bottleneck paths) or min-max: add the outer, mul the inner"""
    inner = "min" if outer == "max" else "max"
    zero = t.literal_min if outer == "max" else t.literal_max
    add, mul = _ret(_best(outer, t, "x", "y")), _ret(_best(inner, t, "a", "b"))
    step = _ret(_best(outer, t, "c", _best(inner, t, "a", "b")))
    what = "bottleneck paths" if outer == "max" else "minimax paths"
    return Semiring(f"{outer}_{inner}", t, t, t, zero, add, mul, step, True, f"({outer}, {inner}): {what}")


def _or_and(t: CType) -> Semiring:
    return Semiring(
        "or_and",
        t,
        t,
        t,
        f"({t.c})0",
        _ret(f"({t.c})(x | y)"),
        _ret(f"({t.c})(a & b)"),
        _ret(f"({t.c})(c | (a & b))"),
        False,
        "(or, and): reachability, bitwise (a u32 holds 32 boolean matrices)",
    )


BUILTIN_SEMIRINGS = {
    "plus_times": (FLOATS_AND_I32, _plus_times),
    "min_plus": (FLOATS_AND_I32, lambda t: _tropical("min", t)),
    "max_plus": (FLOATS_AND_I32, lambda t: _tropical("max", t)),
    "max_min": (FLOATS_AND_I32, lambda t: _bottleneck("max", t)),
    "min_max": (FLOATS_AND_I32, lambda t: _bottleneck("min", t)),
    "or_and": (("u8", "u32"), _or_and),
}


def builtin_semiring(name: str, type_name: str) -> Semiring:
    return BUILTIN_SEMIRINGS[name][1](BUILTIN_TYPES[type_name])
